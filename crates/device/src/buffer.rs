//! The controller's write buffer: host data occupies it from arrival until the page program
//! carrying it completes. When full, a write waits (FIFO) for the earliest release.

/// No node: the end of a list.
const NIL: u32 = u32::MAX;

#[derive(Debug)]
pub(crate) struct WriteBuffer {
    /// What the buffer can hold: its nodes are allocated for this much.
    allocated_bytes: u64,
    /// What it holds at most now (at most `allocated_bytes`; see [`Self::set_limit`]).
    limit_bytes: u64,
    iu_shift: u32,
    used_bytes: u64,
    /// Admitted but not yet carried by an emitted program operation.
    unassigned_bytes: u64,
    /// Admissions are FIFO: none before the previous one.
    floor_ns: u64,
    /// Pending releases go in ascending order of (time, size) ([`Slot::key`]). A NAND unit
    /// completes its programs in order, so each unit keeps its own list sorted (appended at
    /// the tail; a walk only when a completion comes out of order) and a tournament tree
    /// over the units' first releases gives the earliest: a few compares per release
    /// instead of a heap's sift over every pending one.
    /// At most one node per IU held, so they are preallocated; unused ones form a list.
    nodes: Vec<Node>,
    free: u32,
    len: usize,
    /// Per unit (padded to a power of two): its first and last node.
    units: Vec<UnitList>,
    /// `tree[units.len() + u]` is unit `u`'s first release, `tree[i]` the earlier of
    /// `tree[2i]` and `tree[2i + 1]`: `tree[1]` is the earliest of all.
    tree: Vec<Slot>,
}

// Occupancy and the pending releases; capacity and IU size are configuration.
flashlab_engine::impl_state!(WriteBuffer {
    used_bytes, unassigned_bytes, floor_ns, nodes, free, len, units, tree
} skip { allocated_bytes, limit_bytes, iu_shift } check WriteBuffer::check_loaded);

/// A release of `ius` IUs at `release_ns` (all sizes are whole IUs: the host's data is
/// admitted in IUs and programs carry whole IUs).
#[derive(Debug, Clone, Copy)]
struct Node {
    release_ns: u64,
    ius: u32,
    next: u32,
}

flashlab_engine::impl_state!(Node {
    release_ns,
    ius,
    next
});

impl Default for Node {
    fn default() -> Self {
        Node {
            release_ns: 0,
            ius: 0,
            next: NIL,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct UnitList {
    head: u32,
    tail: u32,
}

flashlab_engine::impl_state!(UnitList { head, tail });

impl Default for UnitList {
    fn default() -> Self {
        UnitList {
            head: NIL,
            tail: NIL,
        }
    }
}

/// A unit's first release (`EMPTY` if none).
#[derive(Debug, Clone, Copy)]
struct Slot {
    release_ns: u64,
    ius: u32,
    unit: u32,
}

flashlab_engine::impl_state!(Slot {
    release_ns,
    ius,
    unit
});

impl Default for Slot {
    fn default() -> Self {
        Slot::EMPTY
    }
}

/// The order of releases: by time, then size (the smaller first).
#[inline(always)]
fn key(release_ns: u64, ius: u32) -> u128 {
    (u128::from(release_ns) << 64) | u128::from(ius)
}

impl Slot {
    /// After every real release: no release at `u64::MAX` holds `u32::MAX` IUs.
    const EMPTY: Slot = Slot {
        release_ns: u64::MAX,
        ius: u32::MAX,
        unit: 0,
    };

    #[inline(always)]
    fn key(&self) -> u128 {
        key(self.release_ns, self.ius)
    }
}

impl Node {
    #[inline(always)]
    fn key(&self) -> u128 {
        key(self.release_ns, self.ius)
    }
}

/// Why data cannot be admitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BufferError {
    /// More bytes wait for a page than the buffer holds: nothing will ever free space.
    Deadlock { used_bytes: u64, need_bytes: u64 },
}

impl WriteBuffer {
    /// A buffer of `capacity_bytes` in IUs of `iu_bytes` (a power of two), fed by programs
    /// on `units` NAND units (see [`Self::programmed`]).
    pub fn new(capacity_bytes: u64, iu_bytes: u64, units: usize) -> Self {
        debug_assert!(iu_bytes.is_power_of_two());
        let max_entries = (capacity_bytes / iu_bytes) as usize + 16;
        let units = units.max(1).next_power_of_two();
        let mut b = Self {
            allocated_bytes: capacity_bytes,
            limit_bytes: capacity_bytes,
            iu_shift: iu_bytes.trailing_zeros(),
            used_bytes: 0,
            unassigned_bytes: 0,
            floor_ns: 0,
            nodes: vec![
                Node {
                    release_ns: 0,
                    ius: 0,
                    next: NIL
                };
                max_entries
            ],
            free: NIL,
            len: 0,
            units: vec![
                UnitList {
                    head: NIL,
                    tail: NIL
                };
                units
            ],
            tree: vec![Slot::EMPTY; 2 * units],
        };
        b.clear(0);
        b
    }

    /// What the buffer holds at most now.
    pub fn capacity_bytes(&self) -> u64 {
        self.limit_bytes
    }

    /// Hold at most `bytes` (whole IUs, at least one, at most the capacity it was built
    /// with) from now on; data already held above it stays until its programs complete.
    pub fn set_limit(&mut self, bytes: u64) {
        let iu = 1u64 << self.iu_shift;
        self.limit_bytes = (bytes / iu * iu).clamp(iu, self.allocated_bytes);
    }

    pub fn used_bytes(&self) -> u64 {
        self.used_bytes
    }

    /// Unit `u`'s first release is now `w`: replay its matches up to the root.
    #[inline(always)]
    fn update(&mut self, u: usize, mut w: Slot) {
        let mut i = self.units.len() + u;
        self.tree[i] = w;
        while i > 1 {
            let s = self.tree[i ^ 1];
            if s.key() < w.key() {
                w = s;
            }
            i >>= 1;
            self.tree[i] = w;
        }
    }

    /// Remove the earliest release (there is one): (its time, its bytes).
    #[inline(always)]
    fn pop_min(&mut self) -> (u64, u64) {
        let Slot {
            release_ns,
            ius,
            unit,
        } = self.tree[1];
        let u = unit as usize;
        let n = self.units[u].head;
        let next = self.nodes[n as usize].next;
        self.nodes[n as usize].next = self.free;
        self.free = n;
        self.len -= 1;
        // An empty list is told by its head: its tail is left as it was.
        self.units[u].head = next;
        let first = if next == NIL {
            Slot::EMPTY
        } else {
            let f = self.nodes[next as usize];
            Slot {
                release_ns: f.release_ns,
                ius: f.ius,
                unit,
            }
        };
        self.update(u, first);
        (release_ns, u64::from(ius) << self.iu_shift)
    }

    /// Add a release to unit `u`'s list, in order (a node is free).
    #[inline(always)]
    fn insert(&mut self, u: usize, release_ns: u64, ius: u32) {
        let n = self.free;
        self.free = self.nodes[n as usize].next;
        self.len += 1;
        let node = Node {
            release_ns,
            ius,
            next: NIL,
        };
        self.nodes[n as usize] = node;
        let UnitList { head, tail } = self.units[u];
        if head == NIL {
            self.units[u] = UnitList { head: n, tail: n };
            self.update(
                u,
                Slot {
                    release_ns,
                    ius,
                    unit: u as u32,
                },
            );
        } else if self.nodes[tail as usize].key() <= node.key() {
            self.nodes[tail as usize].next = n;
            self.units[u].tail = n;
        } else {
            self.insert_out_of_order(u, n);
        }
    }

    /// [`Self::insert`] of node `n` before the tail of unit `u`'s list.
    #[cold]
    #[inline(never)]
    fn insert_out_of_order(&mut self, u: usize, n: u32) {
        let node = self.nodes[n as usize];
        let h = self.units[u].head;
        if node.key() < self.nodes[h as usize].key() {
            self.nodes[n as usize].next = h;
            self.units[u].head = n;
            self.update(
                u,
                Slot {
                    release_ns: node.release_ns,
                    ius: node.ius,
                    unit: u as u32,
                },
            );
            return;
        }
        let mut p = h;
        loop {
            let q = self.nodes[p as usize].next;
            if self.nodes[q as usize].key() > node.key() {
                self.nodes[n as usize].next = q;
                self.nodes[p as usize].next = n;
                return;
            }
            p = q;
        }
    }

    fn release_until(&mut self, t_ns: u64) {
        // Real releases hold fewer than `u32::MAX` IUs: one compare takes every release at
        // or before `t_ns` and never `EMPTY`.
        let last = key(t_ns, u32::MAX - 1);
        while self.tree[1].key() <= last {
            let (_, b) = self.pop_min();
            self.used_bytes -= b;
        }
    }

    /// Take back the space of every program done by `t_ns`.
    pub fn release_through(&mut self, t_ns: u64) {
        self.release_until(t_ns);
    }

    /// Admit `bytes` no earlier than `now_ns`; returns when they are in the buffer.
    pub fn admit(&mut self, now_ns: u64, bytes: u64) -> Result<u64, BufferError> {
        debug_assert!(bytes <= self.limit_bytes);
        let mut t = now_ns.max(self.floor_ns);
        self.release_until(t);
        while self.used_bytes + bytes > self.limit_bytes {
            if self.len == 0 {
                return Err(BufferError::Deadlock {
                    used_bytes: self.used_bytes,
                    need_bytes: bytes,
                });
            }
            let (r, b) = self.pop_min();
            t = t.max(r);
            self.used_bytes -= b;
        }
        self.used_bytes += bytes;
        self.unassigned_bytes += bytes;
        self.floor_ns = t;
        Ok(t)
    }

    /// A program on NAND unit `unit` carrying up to `bytes` of host data completes at
    /// `done_ns`.
    #[inline]
    pub fn programmed(&mut self, unit: usize, done_ns: u64, bytes: u64) {
        let b = bytes.min(self.unassigned_bytes);
        if b == 0 {
            return;
        }
        debug_assert_eq!(b & ((1 << self.iu_shift) - 1), 0);
        self.unassigned_bytes -= b;
        // At most the buffer's IUs, far below `u32::MAX`.
        let ius = (b >> self.iu_shift) as u32;
        // Any unit gives the same releases (only their cost depends on it): the mask keeps a
        // stray index in range.
        let u = unit & (self.units.len() - 1);
        if self.len < self.nodes.len() {
            self.insert(u, done_ns, ius);
        } else {
            // Cannot happen while every entry holds at least one IU; merging into a later
            // release keeps the bound without losing bytes.
            let (r, old) = self.pop_min();
            self.insert(u, r.max(done_ns), ((old + b) >> self.iu_shift) as u32);
        }
    }

    /// Power loss without protection, or format: contents gone, space free from `at_ns`.
    pub fn clear(&mut self, at_ns: u64) {
        let n = self.nodes.len() as u32;
        for (i, node) in self.nodes.iter_mut().enumerate() {
            node.next = if i as u32 + 1 < n { i as u32 + 1 } else { NIL };
        }
        self.free = if n > 0 { 0 } else { NIL };
        self.len = 0;
        for u in &mut self.units {
            u.head = NIL;
        }
        // With every slot empty any winners make a valid tree.
        self.tree.fill(Slot::EMPTY);
        self.used_bytes = 0;
        self.unassigned_bytes = 0;
        self.floor_ns = at_ns;
    }

    /// A loaded buffer is one the drive could have made: as many nodes as the configured
    /// buffer holds IUs (plus the spare 16); units a power of two and a tree over them; the
    /// free list and every unit's list walked to their ends over distinct nodes (so a forged
    /// cycle is never followed), together every node once; each unit's releases in order,
    /// before 2^62 ns and of at least one IU, its tail the last node; the tree's leaves the
    /// units' first releases and each inner slot the earlier of its two; and the bytes held
    /// are the unassigned ones plus the pending releases', within the capacity.
    pub(crate) fn check_loaded(&self) -> Result<(), String> {
        let limit = flashlab_engine::state::MAX_STATE_TIME_NS;
        let n = self.nodes.len();
        let want = (self.allocated_bytes >> self.iu_shift) as usize + 16;
        let units = self.units.len();
        if n != want || !units.is_power_of_two() || self.tree.len() != 2 * units {
            return Err(format!(
                "the write buffer has {n} nodes (the drive's has {want}), {units} unit lists and a tree of {} slots",
                self.tree.len()
            ));
        }
        if self.unassigned_bytes > self.used_bytes
            || self.used_bytes > self.allocated_bytes
            || self.floor_ns > limit
        {
            return Err(format!(
                "the write buffer holds {} bytes ({} unassigned) of {}, admitting from {} ns",
                self.used_bytes, self.unassigned_bytes, self.allocated_bytes, self.floor_ns
            ));
        }
        let mut seen = vec![false; n];
        let mut take = |i: u32| -> Result<Node, String> {
            match seen.get_mut(i as usize) {
                Some(s) if !*s => {
                    *s = true;
                    Ok(self.nodes[i as usize])
                }
                _ => Err(format!(
                    "the write buffer's node {i} is past its {n} nodes or on two lists"
                )),
            }
        };
        let mut free = 0usize;
        let mut at = self.free;
        while at != NIL {
            at = take(at)?.next;
            free += 1;
        }
        let mut pending = 0usize;
        let mut pending_ius = 0u128;
        for (u, list) in self.units.iter().enumerate() {
            let mut first = Slot::EMPTY;
            let (mut at, mut last, mut prev) = (list.head, NIL, 0u128);
            while at != NIL {
                let node = take(at)?;
                if node.ius == 0 || node.release_ns > limit || node.key() < prev {
                    return Err(format!(
                        "the write buffer's unit {u} releases {} IUs at {} ns out of order or past 2^62 ns",
                        node.ius, node.release_ns
                    ));
                }
                if last == NIL {
                    first = Slot {
                        release_ns: node.release_ns,
                        ius: node.ius,
                        unit: u as u32,
                    };
                }
                prev = node.key();
                pending += 1;
                pending_ius += u128::from(node.ius);
                last = at;
                at = node.next;
            }
            if last != NIL && list.tail != last {
                return Err(format!(
                    "the write buffer's unit {u} has a tail off its list"
                ));
            }
            let leaf = self.tree[units + u];
            if leaf.key() != first.key()
                || (first.key() != Slot::EMPTY.key() && leaf.unit != u as u32)
            {
                return Err(format!(
                    "the write buffer's tree does not hold unit {u}'s first release"
                ));
            }
        }
        for i in 1..units {
            let (a, b, w) = (self.tree[2 * i], self.tree[2 * i + 1], self.tree[i]);
            let won = if b.key() < a.key() { b } else { a };
            if w.key() != won.key() || (w.unit != a.unit && w.unit != b.unit) {
                return Err(format!(
                    "the write buffer's tree slot {i} is not the earlier of its two"
                ));
            }
        }
        let held = u128::from(self.unassigned_bytes) + (pending_ius << self.iu_shift);
        if free + pending != n || pending != self.len || held != u128::from(self.used_bytes) {
            return Err(format!(
                "the write buffer's lists hold {pending} releases and {free} free nodes of {n}, it counts {}; they hold {held} bytes, it counts {}",
                self.len, self.used_bytes
            ));
        }
        Ok(())
    }

    pub fn memory_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.units.capacity() * std::mem::size_of::<UnitList>()
            + self.tree.capacity() * std::mem::size_of::<Slot>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `b` saved and loaded into a fresh buffer of the same configuration, after `forge`
    /// rewrote the saved copy's fields (the checksum is the writer's, so valid).
    fn reload(b: &WriteBuffer, forge: impl Fn(&mut WriteBuffer)) -> Result<(), String> {
        use flashlab_engine::state::{State, StateHeader, StateReader, StateWriter};
        let mut forged = WriteBuffer::new(b.allocated_bytes, 1 << b.iu_shift, b.units.len());
        forged.used_bytes = b.used_bytes;
        forged.unassigned_bytes = b.unassigned_bytes;
        forged.floor_ns = b.floor_ns;
        forged.nodes.clone_from(&b.nodes);
        forged.free = b.free;
        forged.len = b.len;
        forged.units.clone_from(&b.units);
        forged.tree.clone_from(&b.tree);
        forge(&mut forged);
        let header = StateHeader {
            kind: "drive".into(),
            config_hash: 1,
            device_seed: 2,
            clock_ns: 3,
        };
        let mut bytes = Vec::new();
        let mut w = StateWriter::new(&mut bytes, &header);
        w.section("drive", |w| forged.save(w));
        w.finish().unwrap();
        let mut fresh = WriteBuffer::new(b.allocated_bytes, 1 << b.iu_shift, b.units.len());
        let (mut r, _) = StateReader::new(&bytes[..], bytes.len() as u64).unwrap();
        r.section("drive", |r| fresh.load(r))
            .map_err(|e| e.to_string())?;
        // What loads must run: admissions that wait on every pending release.
        for i in 0..64 {
            fresh.admit(1 << 40, 4096).map_err(|e| format!("{e:?}"))?;
            fresh.programmed(i % 4, (1 << 40) + i as u64, 4096);
        }
        Ok(())
    }

    /// A forged state with a valid checksum loaded any write buffer: a free list past the
    /// nodes or in a cycle, a count that disagrees with the lists, a tree that does not
    /// hold a unit's first release, fewer nodes than the buffer holds. Each is refused at
    /// load, and a real buffer loads and runs.
    #[test]
    fn forged_write_buffers_are_refused_at_load() {
        let mut b = WriteBuffer::new(64 * 4096, 4096, 4);
        for i in 0..10u64 {
            b.admit(i * 1000, 8192).unwrap();
            b.programmed(i as usize % 4, 50_000 + i * 777, 8192);
        }
        reload(&b, |_| {}).unwrap();
        type Forge<'a> = &'a dyn Fn(&mut WriteBuffer);
        let cases: [(&str, Forge); 8] = [
            ("past its", &|f| f.free = f.nodes.len() as u32 + 3),
            ("on two lists", &|f| {
                let n = f.free;
                f.nodes[n as usize].next = n;
            }),
            ("it counts", &|f| f.len += 1),
            ("it counts", &|f| f.used_bytes += 4096),
            ("first release", &|f| f.tree[5].release_ns += 1),
            ("earlier of its two", &|f| f.tree[1] = Slot::EMPTY),
            ("nodes (the drive's", &|f| {
                f.nodes.pop();
            }),
            ("unit lists", &|f| f.units.push(UnitList::default())),
        ];
        for (want, forge) in cases {
            let e = reload(&b, forge).unwrap_err();
            assert!(e.contains(want), "{want}: {e}");
        }
    }

    #[test]
    fn full_buffer_waits_for_the_earliest_release() {
        let mut b = WriteBuffer::new(16384, 4096, 2);
        assert_eq!(b.admit(0, 8192), Ok(0));
        assert_eq!(b.admit(10, 8192), Ok(10));
        b.programmed(0, 500, 8192);
        b.programmed(0, 300, 8192);
        // Full: the next write waits for the earlier release (300), not the first program.
        assert_eq!(b.admit(20, 4096), Ok(300));
        // FIFO: a later write never gets in before an earlier one.
        assert_eq!(b.admit(25, 4096), Ok(300));
        assert_eq!(b.admit(30, 8192), Ok(500));
        assert_eq!(b.used_bytes(), 16384);
    }

    #[test]
    fn a_lowered_limit_holds_less_and_keeps_what_is_held() {
        let mut b = WriteBuffer::new(16384, 4096, 2);
        assert_eq!(b.admit(0, 16384), Ok(0));
        b.programmed(0, 100, 8192);
        b.programmed(1, 200, 8192);
        // Lowered below what it holds: nothing is dropped, the next write waits until all
        // but the new limit's worth is released.
        b.set_limit(8192);
        assert_eq!(b.capacity_bytes(), 8192);
        assert_eq!(b.used_bytes(), 16384);
        assert_eq!(b.admit(10, 8192), Ok(200));
        // Whole IUs, never above what it was built for.
        b.set_limit(1 << 20);
        assert_eq!(b.capacity_bytes(), 16384);
        b.set_limit(5000);
        assert_eq!(b.capacity_bytes(), 4096);
    }

    #[test]
    fn data_never_assigned_to_a_program_is_a_deadlock() {
        let mut b = WriteBuffer::new(8192, 4096, 2);
        b.admit(0, 8192).unwrap();
        assert_eq!(
            b.admit(1, 4096),
            Err(BufferError::Deadlock {
                used_bytes: 8192,
                need_bytes: 4096
            })
        );
        b.clear(5);
        assert_eq!(b.admit(1, 4096), Ok(5));
    }

    #[test]
    fn padding_beyond_host_data_releases_nothing_extra() {
        let mut b = WriteBuffer::new(16384, 4096, 2);
        b.admit(0, 4096).unwrap();
        b.programmed(1, 100, 16384);
        b.admit(0, 12288).unwrap();
        assert_eq!(b.admit(0, 4096), Ok(100));
        assert_eq!(b.used_bytes(), 16384);
    }

    /// The buffer with one binary heap of all pending releases: the reference for the order
    /// of releases, ties included.
    struct HeapBuffer {
        capacity_bytes: u64,
        used_bytes: u64,
        unassigned_bytes: u64,
        floor_ns: u64,
        releases: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u64)>>,
        max_entries: usize,
    }

    impl HeapBuffer {
        fn admit(&mut self, now_ns: u64, bytes: u64) -> Result<u64, BufferError> {
            let mut t = now_ns.max(self.floor_ns);
            while let Some(&std::cmp::Reverse((r, b))) = self.releases.peek() {
                if r > t {
                    break;
                }
                self.releases.pop();
                self.used_bytes -= b;
            }
            while self.used_bytes + bytes > self.capacity_bytes {
                let Some(std::cmp::Reverse((r, b))) = self.releases.pop() else {
                    return Err(BufferError::Deadlock {
                        used_bytes: self.used_bytes,
                        need_bytes: bytes,
                    });
                };
                t = t.max(r);
                self.used_bytes -= b;
            }
            self.used_bytes += bytes;
            self.unassigned_bytes += bytes;
            self.floor_ns = t;
            Ok(t)
        }

        fn programmed(&mut self, done_ns: u64, bytes: u64) {
            let b = bytes.min(self.unassigned_bytes);
            if b == 0 {
                return;
            }
            self.unassigned_bytes -= b;
            if self.releases.len() < self.max_entries {
                self.releases.push(std::cmp::Reverse((done_ns, b)));
            } else {
                let (r, old) = self.releases.pop().map_or((done_ns, 0), |e| e.0);
                self.releases
                    .push(std::cmp::Reverse((r.max(done_ns), old + b)));
            }
        }
    }

    proptest::proptest! {
        /// Admission times and the bytes held after every step are the heap's, whatever
        /// the units' completions: in order per unit or not, tied in time (with other sizes
        /// or the same), before the last admission, or on a unit index out of range.
        #[test]
        fn releases_go_as_from_one_heap(
            units in 1usize..6,
            steps in proptest::collection::vec(
                (0u8..8, 0u64..40, 1u64..5, 0usize..8, 0u64..30),
                0..200,
            ),
        ) {
            let (cap, iu) = (16 * 4096, 4096);
            let mut a = WriteBuffer::new(cap, iu, units);
            let mut b = HeapBuffer {
                capacity_bytes: cap,
                used_bytes: 0,
                unassigned_bytes: 0,
                floor_ns: 0,
                releases: Default::default(),
                max_entries: (cap / iu) as usize + 16,
            };
            // Per unit, the last completion: most programs complete after it, as on a die.
            let mut last = [0u64; 8];
            let mut now = 0;
            for (what, dt, n, unit, late) in steps {
                now += dt;
                match what {
                    0..=2 => {
                        let got = a.admit(now, n * iu);
                        proptest::prop_assert_eq!(&got, &b.admit(now, n * iu));
                        if got.is_err() {
                            a.clear(now);
                            b.releases.clear();
                            (b.used_bytes, b.unassigned_bytes, b.floor_ns) = (0, 0, now);
                        }
                    }
                    3..=6 => {
                        let u = unit % 8;
                        // Mostly in order per unit; `late` below 5 goes before the last.
                        let done = if late < 5 {
                            now + late
                        } else {
                            last[u].max(now) + late - 5
                        };
                        last[u] = last[u].max(done);
                        a.programmed(u, done, n * iu);
                        b.programmed(done, n * iu);
                    }
                    _ => {
                        a.clear(now);
                        b.releases.clear();
                        (b.used_bytes, b.unassigned_bytes, b.floor_ns) = (0, 0, now);
                    }
                }
                proptest::prop_assert_eq!(a.used_bytes(), b.used_bytes);
                proptest::prop_assert_eq!(a.unassigned_bytes, b.unassigned_bytes);
                proptest::prop_assert_eq!(a.len, b.releases.len());
            }
        }
    }
}
