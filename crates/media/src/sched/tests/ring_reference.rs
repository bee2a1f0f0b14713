//! The die queues as rings of entries with absolute times, every later entry moved when a
//! read is placed: the oracle the queues are checked against (same results, step by step).

#![allow(dead_code)]

use super::{
    wait, Entry, Kind, ReadPlacement, SchedulerConfig, Waits, EMPTY, FIRMWARE_AHEAD_OPS, QUEUE_CAP,
    WAIT_CAUSES,
};

/// The unfinished operations of every unit: rings of `QUEUE_CAP` entries in one flat array.
#[derive(Debug, Clone)]
pub(crate) struct UnitQueues {
    cfg: SchedulerConfig,
    entries: Vec<Entry>,
    /// Per unit: ring head and length.
    head: Vec<u8>,
    len: Vec<u8>,
    /// Per unit, bit `i` for the entry at position `i` from the head: in `[0]` set where a
    /// host read stops looking for its place (anything but a host read), in `[1]` where an
    /// internal read does (anything but a read). A read finds the end of the reads waiting
    /// ahead of it from these in one step instead of a scan of them (a garbage collector's
    /// victim puts dozens of reads on a die at once).
    read_stops: Vec<[u64; 2]>,
}

const MASK: usize = QUEUE_CAP - 1;
const _: () = assert!(QUEUE_CAP.is_power_of_two() && QUEUE_CAP <= 128);

impl UnitQueues {
    /// Units with a queue.
    pub fn unit_count(&self) -> usize {
        self.head.len()
    }

    /// The first queued operation of the first unit that has one (tests forge it).
    #[cfg(test)]
    pub(crate) fn first_queued_mut(&mut self) -> Option<&mut Entry> {
        let unit = (0..self.unit_count()).find(|&u| self.len[u] > 0)?;
        let head = self.head[unit] as usize;
        Some(&mut self.ring_mut(unit)[head])
    }

    pub fn new(units: usize, cfg: SchedulerConfig) -> UnitQueues {
        UnitQueues {
            cfg,
            entries: vec![EMPTY; units * QUEUE_CAP],
            head: vec![0; units],
            len: vec![0; units],
            read_stops: vec![[0; 2]; units],
        }
    }

    /// Set the mask bits of position `i` for an entry of `kind`.
    #[inline]
    fn mark(&mut self, unit: usize, i: usize, kind: Kind) {
        let bit = 1u64 << i;
        let (stops_host, stops_internal) = match kind {
            Kind::Read => (false, false),
            Kind::InternalRead => (true, false),
            Kind::Program | Kind::Erase | Kind::Suspending => (true, true),
        };
        let [host, internal] = &mut self.read_stops[unit];
        *host = (*host & !bit) | (u64::from(stops_host) << i);
        *internal = (*internal & !bit) | (u64::from(stops_internal) << i);
    }

    /// Open position `p` in the masks (later positions move up one); its bits are clear.
    #[inline]
    fn open_bit(&mut self, unit: usize, p: usize) {
        let low = (1u64 << p) - 1;
        for m in &mut self.read_stops[unit] {
            *m = (*m & low) | ((*m & !low) << 1);
        }
    }

    /// Close position `p` in the masks (later positions move down one).
    #[inline]
    fn close_bit(&mut self, unit: usize, p: usize) {
        let low = (1u64 << p) - 1;
        for m in &mut self.read_stops[unit] {
            *m = (*m & low) | ((*m >> 1) & !low);
        }
    }

    /// The unit's ring as an array: an index masked with [`MASK`] needs no bounds check,
    /// which the scans and shifts below do once per entry.
    #[inline]
    fn ring(&self, unit: usize) -> &[Entry; QUEUE_CAP] {
        let base = unit * QUEUE_CAP;
        self.entries[base..base + QUEUE_CAP]
            .try_into()
            .expect("a unit's ring is QUEUE_CAP entries")
    }

    #[inline]
    fn ring_mut(&mut self, unit: usize) -> &mut [Entry; QUEUE_CAP] {
        let base = unit * QUEUE_CAP;
        (&mut self.entries[base..base + QUEUE_CAP])
            .try_into()
            .expect("a unit's ring is QUEUE_CAP entries")
    }

    #[inline]
    fn get(&self, unit: usize, i: usize) -> Entry {
        self.ring(unit)[(self.head[unit] as usize + i) & MASK]
    }

    /// Store `e` at position `i` and mark its kind.
    #[inline]
    fn set(&mut self, unit: usize, i: usize, e: Entry) {
        let head = self.head[unit] as usize;
        self.ring_mut(unit)[(head + i) & MASK] = e;
        self.mark(unit, i, e.kind);
    }

    /// End of the unit's last reservation (0 if none is kept).
    pub fn free_ns(&self, unit: usize) -> u64 {
        match self.len[unit] as usize {
            0 => 0,
            n => self.get(unit, n - 1).end_ns,
        }
    }

    /// Forget operations that ended by `now_ns` (nothing will be placed before it any more).
    #[inline]
    fn forget_before(&mut self, unit: usize, now_ns: u64) {
        let (n, head) = (self.len[unit] as usize, self.head[unit] as usize);
        let ring = self.ring(unit);
        let mut k = 0;
        while k < n && ring[(head + k) & MASK].end_ns <= now_ns {
            k += 1;
        }
        if k > 0 {
            self.head[unit] = ((head + k) & MASK) as u8;
            self.len[unit] -= k as u8;
            for m in &mut self.read_stops[unit] {
                *m = m.checked_shr(k as u32).unwrap_or(0);
            }
        }
    }

    /// Room for `need` more entries: neighbours merge while the ring is too full.
    fn make_room(&mut self, unit: usize, need: usize) {
        // Where the scan for a pair that follows on at once starts: after such a pair
        // merges, the pairs above the merged entry are ones the scan passed (the merged
        // entry ends as the later of its pair did), so the next scan goes on from it.
        let mut top = QUEUE_CAP;
        while self.len[unit] as usize + need > QUEUE_CAP {
            let (i, joined) = self.merge_point(unit, top);
            top = if joined { i - 1 } else { QUEUE_CAP };
            // The pair merges into the earlier entry, in place.
            let head = self.head[unit] as usize;
            let ring = self.ring_mut(unit);
            let b = ring[(head + i) & MASK];
            let a = &mut ring[(head + i - 1) & MASK];
            let kind_changed = a.kind != b.kind;
            a.end_ns = b.end_ns;
            a.kind = b.kind;
            a.suspends = a.suspends.max(b.suspends);
            a.ops += b.ops;
            a.quantum_ns = a.quantum_ns.max(b.quantum_ns);
            // `slack_ns` stays: the idle time before the run, its later operations
            // followed on.
            if kind_changed {
                self.mark(unit, i - 1, b.kind);
            }
            self.remove(unit, i);
        }
    }

    /// The later of the pair that merges next: the latest pair of the same kind with no idle
    /// time between them, else the latest pair of the same kind, never the running entry
    /// (index 0), else the last two. A merged entry is split by its average operation time
    /// (`split_running`): a pair with idle time between them would make each operation as
    /// long as the idle time over the count (tens of ms on a die booked 100 ms ahead), and a
    /// read that found one running would wait for all of it.
    ///
    /// On a die booked far ahead the pair is found about ten entries from the tail, past
    /// programs with idle time between them; the scan tests times first, and looks for a
    /// pair of the same kind alone only when no pair follows on at once, which is rare.
    ///
    /// Pairs whose later entry is above `top` are known not to follow on at once. Returns
    /// the position and whether its pair follows on at once.
    #[inline]
    fn merge_point(&self, unit: usize, top: usize) -> (usize, bool) {
        let (ring, head) = (self.ring(unit), self.head[unit] as usize);
        let n = self.len[unit] as usize;
        let mut i = top.min(n - 1);
        let mut start_ns = ring[(head + i) & MASK].start_ns;
        while i > 1 {
            let earlier = &ring[(head + i - 1) & MASK];
            if earlier.end_ns == start_ns && earlier.kind == ring[(head + i) & MASK].kind {
                return (i, true);
            }
            start_ns = earlier.start_ns;
            i -= 1;
        }
        let mut i = n - 1;
        while i > 1 {
            if ring[(head + i - 1) & MASK].kind == ring[(head + i) & MASK].kind {
                return (i, false);
            }
            i -= 1;
        }
        (n - 1, false)
    }

    /// Drop the entry at position `i`, moving the entries before it back one slot or those
    /// after it forward one, whichever are fewer.
    fn remove(&mut self, unit: usize, i: usize) {
        let (n, head) = (self.len[unit] as usize, self.head[unit] as usize);
        debug_assert!(i < n);
        let ring = self.ring_mut(unit);
        if i < n - 1 - i {
            move_up(ring, head, head + i);
            self.head[unit] = ((head + 1) & MASK) as u8;
        } else {
            move_down(ring, head + i + 1, head + n);
        }
        self.close_bit(unit, i);
        self.len[unit] -= 1;
    }

    /// Insert `e` at position `p`, moving the entries before it forward one slot or those
    /// after it back one, whichever are fewer (room was made). A read with priority lands
    /// near the front of a ring booked far ahead, so this is usually a few entries, not a
    /// whole ring.
    fn insert(&mut self, unit: usize, p: usize, e: Entry) {
        let n = self.len[unit] as usize;
        debug_assert!(n < QUEUE_CAP && p <= n);
        let head = self.head[unit] as usize;
        let ring = self.ring_mut(unit);
        if p < n - p {
            // Slots `head .. head + p` move down one; counted from one ring further on, so
            // the slot before the head is never below zero.
            move_down(ring, head + QUEUE_CAP, head + QUEUE_CAP + p);
            let new_head = head.wrapping_sub(1) & MASK;
            ring[(new_head + p) & MASK] = e;
            self.head[unit] = new_head as u8;
        } else {
            move_up(ring, head + p, head + n);
            ring[(head + p) & MASK] = e;
        }
        self.len[unit] += 1;
        self.open_bit(unit, p);
        self.mark(unit, p, e.kind);
    }

    /// Entries from `from` on start no earlier than the end of the one before them.
    fn push_back_from(&mut self, unit: usize, from: usize) {
        let (n, head) = (self.len[unit] as usize, self.head[unit] as usize);
        let from = from.max(1);
        if from >= n {
            return;
        }
        let ring = self.ring_mut(unit);
        let prev_end = ring[(head + from - 1) & MASK].end_ns;
        // The positions as one run of slots, or two where the ring wraps.
        let (a, b) = ((head + from) & MASK, head + n);
        let b = if head + from >= QUEUE_CAP {
            b - QUEUE_CAP
        } else {
            b
        };
        let (before, from_a) = ring.split_at_mut(a);
        let first = &mut from_a[..b.min(QUEUE_CAP) - a];
        if let Some(prev_end) = push_back_run(first, prev_end) {
            push_back_run(&mut before[..b.saturating_sub(QUEUE_CAP)], prev_end);
        }
    }

    /// A program or erase of `dur_ns`, first come first served from `earliest_ns`; returns
    /// its start.
    pub fn push(
        &mut self,
        unit: usize,
        kind: Kind,
        earliest_ns: u64,
        dur_ns: u64,
        floor_ns: u64,
    ) -> u64 {
        // The end of the unit's previous work (a ring keeps its last entry until the next
        // operation on the unit forgets it); a unit that never worked is idle.
        let prev_end = (self.len[unit] > 0).then(|| self.free_ns(unit));
        self.forget_before(unit, floor_ns);
        let start = earliest_ns.max(self.free_ns(unit));
        let mut slack = prev_end.map_or(u64::from(u32::MAX), |end| start.saturating_sub(end));
        // Queued straight behind a program or erase, it belongs to the same burst of writes
        // (a flush gives a die several pages at once: a TLC word line's pages, a stripe's):
        // the burst shares the idle time before it.
        if slack == 0 {
            if let Some(last) = self.len[unit]
                .checked_sub(1)
                .map(|i| self.get(unit, i as usize))
            {
                if last.end_ns == start
                    && last.kind != Kind::Read
                    && last.kind != Kind::InternalRead
                {
                    slack = u64::from(last.slack_ns);
                }
            }
        }
        self.make_room(unit, 1);
        let n = self.len[unit] as usize;
        let quantum = dur_ns / u64::from(self.cfg.max_suspends_per_op.max(1));
        self.set(
            unit,
            n,
            Entry {
                start_ns: start,
                end_ns: start + dur_ns,
                kind,
                suspends: 0,
                ops: 1,
                quantum_ns: quantum.min(u64::from(u32::MAX)) as u32,
                slack_ns: slack.min(u64::from(u32::MAX)) as u32,
            },
        );
        self.len[unit] += 1;
        start
    }

    fn suspendable(&self, e: &Entry) -> bool {
        let allowed = match e.kind {
            Kind::Program => self.cfg.program_suspend,
            Kind::Erase => self.cfg.erase_suspend,
            Kind::Read | Kind::InternalRead | Kind::Suspending => false,
        };
        allowed && e.suspends < self.cfg.max_suspends_per_op
    }

    /// Whether one more suspension of `e` for a read of `dur_ns` fits its die's slack (see
    /// [`SchedulerConfig::suspend_budget`]): every suspension so far and this one each add
    /// a read and the resume overhead to the operation (firmware budgets a write's
    /// suspensions by the time left before the die's next write is due: US 10,579,269).
    /// The idle time before the operation stands for that time (a die paced by its writes
    /// has as much slack after an operation as before it), shared by a burst of operations
    /// queued back to back.
    fn within_budget(&self, e: &Entry, dur_ns: u64) -> bool {
        !self.cfg.suspend_budget
            || (u64::from(e.suspends) + 1) * (dur_ns + self.cfg.resume_overhead_ns)
                <= u64::from(e.slack_ns)
    }

    /// If the entry at `i` runs at `t_ns` and holds several merged operations, keep only the
    /// ones done or in progress at `t_ns` in it and move the rest to an entry of their own:
    /// a read waits for the operation in progress, not for the whole run (room was made).
    fn split_running(&mut self, unit: usize, i: usize, t_ns: u64) {
        if i >= self.len[unit] as usize {
            return;
        }
        let e = self.get(unit, i);
        if e.ops < 2 || e.start_ns > t_ns || t_ns >= e.end_ns {
            return;
        }
        let each_ns = ((e.end_ns - e.start_ns) / e.ops as u64).max(1);
        let k = ((t_ns - e.start_ns) / each_ns + 1).min(e.ops as u64) as u32;
        // A merged entry keeps the most suspensions of its operations; past the first, the
        // one in progress is a fresh one, never suspended (else a program merged behind a
        // resumed one inherited its used-up suspensions and a read waited for all of it).
        let suspends = if k > 1 { 0 } else { e.suspends };
        // Past the first, the operation in progress followed the one before it at once.
        let slack_ns = if k > 1 { 0 } else { e.slack_ns };
        if k == e.ops {
            self.set(
                unit,
                i,
                Entry {
                    suspends,
                    slack_ns,
                    ..e
                },
            );
            return;
        }
        let cut = e.start_ns + k as u64 * each_ns;
        self.set(
            unit,
            i,
            Entry {
                end_ns: cut,
                ops: k,
                suspends,
                slack_ns,
                ..e
            },
        );
        self.insert(
            unit,
            i + 1,
            Entry {
                start_ns: cut,
                suspends: 0,
                ops: e.ops - k,
                slack_ns: 0,
                ..e
            },
        );
    }

    /// Place a read of `dur_ns` wanted from `earliest_ns` (`host`: for a host command, else
    /// internal).
    pub fn read(
        &mut self,
        unit: usize,
        earliest_ns: u64,
        dur_ns: u64,
        floor_ns: u64,
        host: bool,
    ) -> ReadPlacement {
        let kind = if host { Kind::Read } else { Kind::InternalRead };
        self.forget_before(unit, floor_ns);
        // Merging happens at the tail, before any position is taken: room for a split, the
        // read and a resumed operation.
        self.make_room(unit, 3);
        let n = self.len[unit] as usize;
        // Entries before `first` are over by `earliest_ns`: entries follow one another, so
        // their ends rise and a binary search finds it (a ring booked far ahead holds dozens
        // of entries the floor has not yet forgotten).
        let first = {
            let (ring, head) = (self.ring(unit), self.head[unit] as usize);
            let (mut lo, mut hi) = (0, n);
            while lo < hi {
                let mid = (lo + hi) / 2;
                if ring[(head + mid) & MASK].end_ns <= earliest_ns {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            lo
        };
        if self.cfg.read_priority {
            self.split_running(unit, first, earliest_ns);
        }
        let n = self.len[unit] as usize;
        let (ring, head) = (self.ring(unit), self.head[unit] as usize);
        let p = if self.cfg.read_priority {
            let mut p = first;
            // The operation running at `earliest_ns` keeps the die...
            if p < n && ring[(head + p) & MASK].start_ns <= earliest_ns {
                p += 1;
            }
            // ...and reads already waiting go first (a host read passes internal ones): the
            // first position from `p` that stops this read, else the end.
            let stops = self.read_stops[unit][usize::from(!host)];
            p + ((stops >> p).trailing_zeros() as usize).min(n - p)
        } else {
            // First come, first served among what the die was sent: past the running
            // operation and `FIRMWARE_AHEAD_OPS` more, the rest waits in the controller.
            let mut p = first;
            if p < n && ring[(head + p) & MASK].start_ns <= earliest_ns {
                p += 1;
            }
            let mut ahead = 0;
            while p < n && ahead < FIRMWARE_AHEAD_OPS {
                ahead += ring[(head + p) & MASK].ops;
                p += 1;
            }
            p
        };
        // Suspend the operation just ahead if it is running when the read arrives.
        if p > first {
            let cur = self.get(unit, p - 1);
            let running = cur.start_ns <= earliest_ns && earliest_ns < cur.end_ns;
            // A resumed operation first makes its quantum of progress.
            let progress_ns = if cur.suspends > 0 {
                cur.start_ns + u64::from(cur.quantum_ns)
            } else {
                cur.start_ns
            };
            let step_ns = match cur.kind {
                Kind::Erase => self.cfg.erase_suspend_step_ns,
                _ => self.cfg.program_suspend_step_ns,
            };
            let ready = earliest_ns.max(progress_ns);
            // The operation stops at the end of the step running (steps fall at multiples
            // of the step from the entry's start: a resumed operation restarts its step).
            let stop = match step_ns {
                0 => ready,
                g => cur.start_ns + (ready - cur.start_ns).div_ceil(g) * g,
            };
            let at = stop + self.cfg.suspend_latency_ns;
            if running
                && self.suspendable(&cur)
                && self.within_budget(&cur, dur_ns)
                && at < cur.end_ns
            {
                let rest = cur.end_ns - at;
                self.set(
                    unit,
                    p - 1,
                    Entry {
                        end_ns: at,
                        kind: Kind::Suspending,
                        ..cur
                    },
                );
                let read = Entry {
                    start_ns: at,
                    end_ns: at + dur_ns,
                    kind,
                    suspends: 0,
                    ops: 1,
                    quantum_ns: 0,
                    slack_ns: 0,
                };
                let resumed = Entry {
                    start_ns: read.end_ns,
                    end_ns: read.end_ns + rest + self.cfg.resume_overhead_ns,
                    kind: cur.kind,
                    suspends: cur.suspends + 1,
                    ops: 1,
                    quantum_ns: cur.quantum_ns,
                    slack_ns: cur.slack_ns,
                };
                self.insert(unit, p, read);
                self.insert(unit, p + 1, resumed);
                self.push_back_from(unit, p + 2);
                let mut waits = [0; WAIT_CAUSES.len()];
                if host {
                    waits[wait::SUSPEND_STEP] = stop - earliest_ns;
                    waits[wait::SUSPEND_LATENCY] = self.cfg.suspend_latency_ns;
                }
                return ReadPlacement {
                    start_ns: at,
                    suspended: Some(cur.kind),
                    waits,
                };
            }
        }
        let prev_end = if p > 0 {
            self.get(unit, p - 1).end_ns
        } else {
            0
        };
        let start = earliest_ns.max(prev_end);
        let waits = if host && start > earliest_ns {
            self.waits_before(unit, first, p, earliest_ns, start)
        } else {
            [0; WAIT_CAUSES.len()]
        };
        self.insert(
            unit,
            p,
            Entry {
                start_ns: start,
                end_ns: start + dur_ns,
                kind,
                suspends: 0,
                ops: 1,
                quantum_ns: 0,
                slack_ns: 0,
            },
        );
        self.push_back_from(unit, p + 1);
        ReadPlacement {
            start_ns: start,
            suspended: None,
            waits,
        }
    }

    /// A read placed at position `p` waited from `from_ns` to `to_ns`: split that time among
    /// the entries `first..p` ahead of it by how much of it each held the unit.
    fn waits_before(&self, unit: usize, first: usize, p: usize, from_ns: u64, to_ns: u64) -> Waits {
        let mut waits = [0; WAIT_CAUSES.len()];
        for i in first..p {
            let e = self.get(unit, i);
            let (a, b) = (e.start_ns.max(from_ns), e.end_ns.min(to_ns));
            if b > a {
                let cause = match e.kind {
                    Kind::Read => wait::HOST_READS,
                    Kind::InternalRead => wait::INTERNAL_READS,
                    Kind::Program => wait::PROGRAMS,
                    Kind::Erase => wait::ERASES,
                    Kind::Suspending => wait::SUSPENDING,
                };
                waits[cause] += b - a;
            }
        }
        waits
    }

    /// Power cycle: work in flight is dropped; every unit is busy until `at_ns` (an entry
    /// nothing can suspend or overtake).
    pub fn reset(&mut self, at_ns: u64) {
        self.head.fill(0);
        self.len.fill(1);
        // One entry that stops every read.
        self.read_stops.fill([1; 2]);
        for u in 0..self.len.len() {
            self.entries[u * QUEUE_CAP] = Entry {
                start_ns: 0,
                end_ns: at_ns,
                kind: Kind::Suspending,
                suspends: 0,
                ops: 1,
                quantum_ns: 0,
                slack_ns: 0,
            };
        }
    }

    pub fn memory_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Entry>()
            + self.head.capacity() * 2
            + self.read_stops.capacity() * 16
    }

    #[cfg(test)]
    pub(crate) fn entries_of(&self, unit: usize) -> Vec<Entry> {
        (0..self.len[unit] as usize)
            .map(|i| self.get(unit, i))
            .collect()
    }
}

/// Move each of `run` to start no earlier than the end of the one before it (`prev_end_ns`
/// for the first); returns the end of the last, or `None` if one needed no move (those after
/// it need none either).
#[inline]
fn push_back_run(run: &mut [Entry], mut prev_end_ns: u64) -> Option<u64> {
    for e in run {
        if e.start_ns >= prev_end_ns {
            return None;
        }
        e.end_ns += prev_end_ns - e.start_ns;
        e.start_ns = prev_end_ns;
        prev_end_ns = e.end_ns;
    }
    Some(prev_end_ns)
}

/// Move the ring's slots `a .. b` (counted on from slot 0, at most one ring further on) up one
/// slot, as block moves: the part past the ring's end first, then the slot that wraps, then
/// the rest.
#[inline]
fn move_up(ring: &mut [Entry; QUEUE_CAP], a: usize, b: usize) {
    debug_assert!(a <= b && b - a < QUEUE_CAP && a < 2 * QUEUE_CAP);
    if a >= b {
        return;
    }
    if b < QUEUE_CAP {
        ring.copy_within(a..b, a + 1);
    } else if a >= QUEUE_CAP {
        ring.copy_within(a - QUEUE_CAP..b - QUEUE_CAP, a - QUEUE_CAP + 1);
    } else {
        ring.copy_within(0..b - QUEUE_CAP, 1);
        ring[0] = ring[QUEUE_CAP - 1];
        ring.copy_within(a..QUEUE_CAP - 1, a + 1);
    }
}

/// Move the ring's slots `a .. b` (counted on from slot 0, `a` at least 1 and below two
/// rings) down one slot, as block moves: the part before the ring's end first, then the
/// slot that wraps, then the rest.
#[inline]
fn move_down(ring: &mut [Entry; QUEUE_CAP], a: usize, b: usize) {
    debug_assert!(a >= 1 && a <= b && b - a < QUEUE_CAP && b <= 3 * QUEUE_CAP);
    if a >= b {
        return;
    }
    let (a, b) = if a > QUEUE_CAP {
        (a - QUEUE_CAP, b - QUEUE_CAP)
    } else {
        (a, b)
    };
    if b <= QUEUE_CAP {
        ring.copy_within(a..b, a - 1);
    } else if a == QUEUE_CAP {
        ring[QUEUE_CAP - 1] = ring[0];
        ring.copy_within(1..b - QUEUE_CAP, 0);
    } else {
        ring.copy_within(a..QUEUE_CAP, a - 1);
        ring[QUEUE_CAP - 1] = ring[0];
        ring.copy_within(1..b - QUEUE_CAP, 0);
    }
}
