//! The controller's read buffer and sequential read-ahead (timing only: the FTL holds the
//! data versions).
//!
//! Controllers move what they read from NAND through DRAM; a following read of the same
//! codewords (eight 512 B reads of one 4 KiB IU) is served from there without another
//! array read. A stream detector recognises a host read that starts right after the
//! previous read of a stream (a run of consecutive commands, as in US 11,853,219 claims 4-5)
//! and reads the next data ahead, so a sequential reader finds it in DRAM or on its way there
//! (Memblaze reports 4 KiB QD1 sequential reads at 57 µs without read-ahead, 6 µs with it:
//! memblaze.com/en/about-company/news/790.html).
//!
//! The buffer holds ECC codewords (the unit a read moves over the channel) keyed by their
//! logical address, each with the time its data is in DRAM, in a set-associative table sized
//! once: nothing is allocated per I/O.

/// Streams the detector follows at once (fio jobs reading side by side each get one).
pub const STREAMS: usize = 4;

/// Reads in a row a stream needs before it is read ahead: the first continuation may be
/// chance (random reads over a 1 GiB span land right after one of four streams once in 65,536
/// reads), two in a row almost never are.
pub const MIN_RUN: u32 = 3;

/// Ways of a set: a codeword may sit in any of the 8 entries of its set.
const WAYS: usize = 8;

/// A free entry.
const FREE: u64 = u64::MAX;

/// Where a codeword the buffer does not hold goes ([`ReadBuffer::probe`]): valid until the
/// buffer next changes.
#[derive(Debug, Clone, Copy)]
pub struct Slot(usize);

/// Codewords recently read from NAND (or being read ahead): a set-associative table, each set
/// replacing its entries in the order they were filled (FIFO per set, close to FIFO overall).
/// A lookup reads one set: no probe chains to walk or repair.
#[derive(Debug, Clone)]
pub struct ReadBuffer {
    /// Per set, the codeword index of each way (`FREE` when empty) and when its data is in
    /// DRAM (a set's ways side by side: one bounds check per set, not per way).
    units: Vec<[u64; WAYS]>,
    ready_ns: Vec<[u64; WAYS]>,
    /// Next way each set replaces.
    next_way: Vec<u8>,
    sets: u64,
    live: usize,
}

flashlab_engine::impl_state!(ReadBuffer {
    units, ready_ns, next_way, live
} skip { sets } fixed { units, ready_ns, next_way } check ReadBuffer::check_loaded);

impl ReadBuffer {
    /// A buffer of `capacity_units` codewords, rounded down to whole sets of 8 (0: no buffer).
    pub fn new(capacity_units: usize) -> ReadBuffer {
        let sets = if capacity_units == 0 {
            0
        } else {
            (capacity_units / WAYS).max(1)
        };
        ReadBuffer {
            units: vec![[FREE; WAYS]; sets],
            ready_ns: vec![[0; WAYS]; sets],
            next_way: vec![0; sets],
            sets: sets as u64,
            live: 0,
        }
    }

    /// A loaded buffer is one its fills could have left: every codeword in the set it
    /// hashes to, none twice, ready before 2^62 ns; each set's next way a way of the set;
    /// `live` the count of codewords held.
    fn check_loaded(&self) -> Result<(), String> {
        let limit = flashlab_engine::state::MAX_STATE_TIME_NS;
        let mut live = 0usize;
        for (set, (ways, ready)) in self.units.iter().zip(&self.ready_ns).enumerate() {
            if usize::from(self.next_way[set]) >= WAYS {
                return Err(format!(
                    "the read buffer's set {set} replaces way {} next (valid: 0 to {})",
                    self.next_way[set],
                    WAYS - 1
                ));
            }
            for (way, (&unit, &ready_ns)) in ways.iter().zip(ready).enumerate() {
                if unit == FREE {
                    continue;
                }
                live += 1;
                if self.set_of(unit) != set || ways[..way].contains(&unit) || ready_ns > limit {
                    return Err(format!(
                        "the read buffer's set {set} holds codeword {unit} ready at {ready_ns} ns (valid: a codeword of that set, once, ready before 2^62 ns)"
                    ));
                }
            }
        }
        if live != self.live {
            return Err(format!(
                "the read buffer counts {} codewords and holds {live}",
                self.live
            ));
        }
        Ok(())
    }

    pub fn capacity_units(&self) -> usize {
        self.units.len() * WAYS
    }

    pub fn is_enabled(&self) -> bool {
        self.sets > 0
    }

    /// The set of `unit`.
    #[inline]
    fn set_of(&self, unit: u64) -> usize {
        // Fibonacci hashing spreads consecutive codewords; the multiply-high maps the hash
        // onto the sets without a divide.
        let h = unit.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((u128::from(h) * u128::from(self.sets)) >> 64) as usize
    }

    /// (set, way) holding `unit`, if buffered.
    #[inline]
    fn find(&self, unit: u64) -> Option<(usize, usize)> {
        if self.live == 0 {
            return None;
        }
        let set = self.set_of(unit);
        let way = self.units[set].iter().position(|&u| u == unit)?;
        Some((set, way))
    }

    /// When the data of codeword `unit` is in DRAM, if it is buffered.
    #[inline]
    pub fn ready_ns(&self, unit: u64) -> Option<u64> {
        self.find(unit).map(|(set, way)| self.ready_ns[set][way])
    }

    /// When the data of codeword `unit` is in DRAM if it is buffered, else where it goes:
    /// a look-up and the insertion after a miss walk the set once between them.
    #[inline]
    pub fn probe(&self, unit: u64) -> Result<u64, Slot> {
        let set = self.set_of(unit);
        match self.units[set].iter().position(|&u| u == unit) {
            Some(way) => Ok(self.ready_ns[set][way]),
            None => Err(Slot(set)),
        }
    }

    /// Codeword `unit`, which [`Self::probe`] just did not find, is in DRAM at `ready_ns`.
    #[inline]
    pub fn fill(&mut self, Slot(set): Slot, unit: u64, ready_ns: u64) {
        debug_assert!(self.is_enabled() && self.set_of(unit) == set);
        debug_assert!(
            !self.units[set].contains(&unit),
            "filled a buffered codeword"
        );
        self.place(set, unit, ready_ns);
    }

    /// Put `unit` into the lowest free way of `set`, else the way the set replaces next.
    #[inline(always)]
    fn place(&mut self, set: usize, unit: u64, ready_ns: u64) {
        // A full buffer (the steady state of a read workload) has no free way to look for.
        if self.live < self.units.len() * WAYS {
            if let Some(way) = self.units[set].iter().position(|&u| u == FREE) {
                self.units[set][way] = unit;
                self.ready_ns[set][way] = ready_ns;
                self.live += 1;
                return;
            }
        }
        // Replacing an entry leaves the count of live ones as it was.
        let way = self.next_way[set] as usize % WAYS;
        self.next_way[set] = ((way + 1) % WAYS) as u8;
        self.units[set][way] = unit;
        self.ready_ns[set][way] = ready_ns;
    }

    /// Latest ready time of codewords `[first, end)` if all are buffered.
    #[inline]
    pub fn all_ready_ns(&self, first: u64, end: u64) -> Option<u64> {
        let mut ready = 0;
        for u in first..end {
            ready = ready.max(self.ready_ns(u)?);
        }
        Some(ready)
    }

    /// Codeword `unit` is in DRAM at `ready_ns` (an entry already there keeps the earlier
    /// time: its data arrives first).
    pub fn insert(&mut self, unit: u64, ready_ns: u64) {
        if !self.is_enabled() {
            return;
        }
        let set = self.set_of(unit);
        match self.units[set].iter().position(|&u| u == unit) {
            Some(way) => {
                let ready = &mut self.ready_ns[set][way];
                *ready = (*ready).min(ready_ns);
            }
            None => self.place(set, unit, ready_ns),
        }
    }

    /// Drop codeword `unit` if buffered.
    pub fn remove(&mut self, unit: u64) {
        if let Some((set, way)) = self.find(unit) {
            self.units[set][way] = FREE;
            self.live -= 1;
        }
    }

    /// Drop codewords `[first, end)` (written or trimmed): a later read fetches them anew.
    /// Inlined for every write's empty-buffer check (a write workload reads nothing).
    #[inline]
    pub fn invalidate(&mut self, first: u64, end: u64) {
        if self.live > 0 {
            self.invalidate_held(first, end);
        }
    }

    /// [`Self::invalidate`] with codewords held.
    #[inline(never)]
    fn invalidate_held(&mut self, first: u64, end: u64) {
        if end - first > self.capacity_units() as u64 {
            // A range wider than the buffer: look at what it holds instead.
            for u in self.units.iter_mut().flatten() {
                if (first..end).contains(u) {
                    *u = FREE;
                    self.live -= 1;
                }
            }
        } else {
            for u in first..end {
                self.remove(u);
            }
        }
    }

    /// Forget everything (power cycle, format).
    pub fn clear(&mut self) {
        self.units.fill([FREE; WAYS]);
        self.next_way.fill(0);
        self.live = 0;
    }

    pub fn memory_bytes(&self) -> usize {
        self.units.capacity() * WAYS * 16 + self.next_way.capacity()
    }
}

#[derive(Debug, Clone, Copy)]
struct Stream {
    /// Byte the next sequential read of the stream starts at (`NO_STREAM` while unused: no
    /// read starts there, so a look-up compares this field alone).
    next_byte: u64,
    /// Data up to here has been read ahead.
    ahead_byte: u64,
    /// Consecutive reads seen.
    run: u32,
}

flashlab_engine::impl_state!(Stream {
    next_byte,
    ahead_byte,
    run
});

/// `Stream::next_byte` of a stream not yet seen.
const NO_STREAM: u64 = u64::MAX;

impl Stream {
    const UNUSED: Stream = Stream {
        next_byte: NO_STREAM,
        ahead_byte: 0,
        run: 0,
    };
}

/// [`ReadAhead::order`] of fresh streams: stream 0 is replaced first, then 1, 2, 3.
const FIRST_ORDER: u32 = u32::from_le_bytes([0, 1, 2, 3]);
const _: () = assert!(
    STREAMS == 4,
    "the use order packs one byte per stream in a u32"
);

/// Sequential-stream detector deciding what to read ahead.
#[derive(Debug, Clone)]
pub struct ReadAhead {
    window_bytes: u64,
    streams: [Stream; STREAMS],
    /// Stream indices from least to most recently used, one per byte (least in the low
    /// byte). Every random read replaces the least recently used stream and makes it the
    /// most recent: one rotate, where comparing use stamps would take a scan of every stream.
    order: u32,
}

flashlab_engine::impl_state!(ReadAhead {
    streams, order
} skip { window_bytes } check ReadAhead::check_loaded);

impl ReadAhead {
    /// Read-ahead of `window_bytes` past each sequential read (0: off).
    pub fn new(window_bytes: u64) -> ReadAhead {
        ReadAhead {
            window_bytes,
            streams: [Stream::UNUSED; STREAMS],
            order: FIRST_ORDER,
        }
    }

    /// A host read of `[offset, end)`; returns the byte range to read ahead, if any, ending
    /// at most at `limit_bytes`. Read-ahead runs in batches of at least half the window, so
    /// NAND pages are read whole rather than one codeword per small command. A read of a
    /// whole window or more is its own read-ahead: it already keeps the dies busy, and
    /// splitting the next one's pages between a read-ahead batch and the command itself
    /// would break up the multi-plane reads the command's pages form on die-level-read NAND.
    #[inline]
    pub fn observe(&mut self, offset: u64, end: u64, limit_bytes: u64) -> Option<(u64, u64)> {
        if self.window_bytes == 0 {
            return None;
        }
        match self.streams.iter().position(|s| s.next_byte == offset) {
            Some(i) => self.continue_stream(i, offset, end, limit_bytes),
            None => {
                // A read no stream expects (every random read) starts a stream in place of
                // the least recently used one, which becomes the most recent.
                let i = (self.order & 0xff) as usize;
                self.order = self.order.rotate_right(8);
                self.streams[i % STREAMS] = Stream {
                    next_byte: end,
                    ahead_byte: end,
                    run: 1,
                };
                None
            }
        }
    }

    /// Stream `i` goes on with the read `[offset, end)`: what to read ahead, if anything.
    #[inline(never)]
    fn continue_stream(
        &mut self,
        i: usize,
        offset: u64,
        end: u64,
        limit_bytes: u64,
    ) -> Option<(u64, u64)> {
        self.touch(i);
        let s = &mut self.streams[i];
        s.run = s.run.saturating_add(1);
        s.next_byte = end;
        let from = s.ahead_byte.max(end);
        let to = (end + self.window_bytes).min(limit_bytes);
        if s.run < MIN_RUN
            || end - offset >= self.window_bytes
            || to <= from
            || (from - end) * 2 > self.window_bytes
        {
            return None;
        }
        s.ahead_byte = to;
        Some((from, to))
    }

    /// Stream `i` is now the most recently used: its byte leaves the order and goes on top.
    fn touch(&mut self, i: usize) {
        let mut bytes = self.order.to_le_bytes();
        let at = bytes.iter().position(|&b| usize::from(b) == i).unwrap_or(0);
        bytes.copy_within(at + 1.., at);
        bytes[STREAMS - 1] = i as u8;
        self.order = u32::from_le_bytes(bytes);
    }

    /// A loaded detector's use order names each stream once, and a stream not yet seen
    /// holds nothing.
    fn check_loaded(&self) -> Result<(), String> {
        let bytes = self.order.to_le_bytes();
        if (0..STREAMS).any(|i| !bytes.contains(&(i as u8))) {
            return Err(format!(
                "the read-ahead's stream order is {bytes:?} (valid: each of the streams 0 to {} once)",
                STREAMS - 1
            ));
        }
        for (i, s) in self.streams.iter().enumerate() {
            if s.next_byte == NO_STREAM && (s.ahead_byte != 0 || s.run != 0) {
                return Err(format!(
                    "the read-ahead's stream {i} is unused yet has read {} bytes ahead after {} reads (valid: none)",
                    s.ahead_byte, s.run
                ));
            }
        }
        Ok(())
    }

    /// Forget every stream (power cycle, format).
    pub fn clear(&mut self) {
        self.streams = [Stream::UNUSED; STREAMS];
        self.order = FIRST_ORDER;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A forgery: what the refusal must say, and the edit.
    type Forge<'a, T> = (&'a str, &'a dyn Fn(&mut T));

    /// A forged read buffer is refused at load: a codeword outside the set it hashes to or
    /// held twice, a count that disagrees, a next way past the set, a table of another
    /// size, a time past 2^62 ns. A real one loads and runs.
    #[test]
    fn forged_read_buffers_are_refused_at_load() {
        use flashlab_engine::state::reload_into;
        let mut b = ReadBuffer::new(64);
        for u in 0..40u64 {
            b.insert(u * 3, 1000 + u);
        }
        let mut ok = ReadBuffer::new(64);
        reload_into(&b, &mut ok).unwrap();
        assert_eq!(ok.ready_ns(3), Some(1001));
        for u in 0..200 {
            ok.insert(u, u);
            ok.invalidate(u / 2, u);
        }
        let (set, way) = b.find(3).unwrap();
        let other = (0..1000).find(|&u| b.set_of(u) != set).unwrap();
        let cases: [Forge<ReadBuffer>; 6] = [
            ("holds codeword", &|f| f.units[set][way] = other),
            ("holds codeword", &|f| {
                let w = (way + 1) % WAYS;
                f.units[set][w] = 3;
            }),
            ("counts 41 codewords", &|f| f.live += 1),
            ("replaces way 8", &|f| f.next_way[0] = 8),
            ("ready at", &|f| f.ready_ns[set][way] = u64::MAX),
            (
                "units holds 7 entries where this configuration has 8",
                &|f| {
                    f.units.pop();
                },
            ),
        ];
        for (want, forge) in cases {
            let mut forged = b.clone();
            forge(&mut forged);
            let e = reload_into(&forged, &mut ReadBuffer::new(64))
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
    }

    /// A forged read-ahead detector is refused: a use order that names a stream twice (the
    /// order is a permutation the rotations keep), an unused stream that holds data.
    #[test]
    fn forged_read_ahead_is_refused_at_load() {
        use flashlab_engine::state::reload_into;
        let mut r = ReadAhead::new(1 << 20);
        for i in 0..10u64 {
            r.observe(i * 4096, (i + 1) * 4096, 1 << 30);
        }
        let mut ok = ReadAhead::new(1 << 20);
        reload_into(&r, &mut ok).unwrap();
        for i in 10..40u64 {
            let read = (i * 4096, (i + 1) * 4096, 1 << 30);
            assert_eq!(
                ok.observe(read.0, read.1, read.2),
                r.observe(read.0, read.1, read.2)
            );
        }
        let cases: [Forge<ReadAhead>; 3] = [
            ("stream order", &|f| {
                f.order = u32::from_le_bytes([0, 0, 1, 2])
            }),
            ("stream order", &|f| {
                f.order = u32::from_le_bytes([0, 1, 2, 9])
            }),
            ("stream 3 is unused", &|f| {
                f.streams[3] = Stream {
                    next_byte: NO_STREAM,
                    ahead_byte: 4096,
                    run: 2,
                }
            }),
        ];
        for (want, forge) in cases {
            let mut forged = ReadAhead::new(1 << 20);
            forged.streams = r.streams;
            forged.order = r.order;
            forge(&mut forged);
            let e = reload_into(&forged, &mut ReadAhead::new(1 << 20))
                .unwrap_err()
                .to_string();
            assert!(e.contains("read-ahead") && e.contains(want), "{want}: {e}");
        }
    }

    #[test]
    fn hits_after_insert_and_misses_after_invalidate() {
        let mut b = ReadBuffer::new(8);
        b.insert(5, 100);
        b.insert(6, 120);
        assert_eq!(b.ready_ns(5), Some(100));
        assert_eq!(b.all_ready_ns(5, 7), Some(120));
        assert_eq!(b.all_ready_ns(5, 8), None);
        b.invalidate(6, 7);
        assert_eq!(b.ready_ns(6), None);
        assert_eq!(b.ready_ns(5), Some(100));
        b.clear();
        assert_eq!(b.ready_ns(5), None);
    }

    #[test]
    fn holds_the_newest_codewords_and_no_more() {
        let mut b = ReadBuffer::new(64);
        assert_eq!(b.capacity_units(), 64);
        for u in 0..10_000u64 {
            b.insert(u * 7, u);
            if u % 3 == 0 {
                b.remove(u * 7);
            }
        }
        let found: Vec<u64> = (0..10_000u64)
            .filter(|u| b.ready_ns(u * 7).is_some())
            .collect();
        assert!(found.len() <= 64 && found.len() > 32, "{}", found.len());
        assert!(
            found.iter().all(|u| u % 3 != 0),
            "removed entries stay gone"
        );
        // What is left is recent: a set keeps its last 8 insertions.
        assert!(found.iter().all(|&u| u >= 10_000 - 64 * 8), "{found:?}");
        assert_eq!(b.live, found.len());
        // A wide invalidation scans the table.
        b.invalidate(0, 1_000_000);
        assert_eq!(b.live, 0);
        assert!((0..10_000u64).all(|u| b.ready_ns(u * 7).is_none()));
    }

    #[test]
    fn probe_then_fill_inserts_as_insert_does() {
        // The same codewords through insert and through probe + fill give the same table,
        // replacement order included (a set of 8 ways: 20 codewords of one set evict).
        let mut a = ReadBuffer::new(16);
        let mut b = ReadBuffer::new(16);
        let mut t = 0;
        let same_set: Vec<u64> = (0..200u64).filter(|&u| a.set_of(u) == 0).take(20).collect();
        assert_eq!(same_set.len(), 20);
        for u in same_set {
            t += 10;
            a.insert(u, t);
            match b.probe(u) {
                Ok(_) => panic!("{u} not inserted yet"),
                Err(slot) => b.fill(slot, u, t),
            }
            if u % 3 == 0 {
                a.remove(u);
                b.remove(u);
            }
            assert_eq!(a.units, b.units);
            assert_eq!(a.live, b.live);
        }
        let kept: Vec<u64> = a.units[0].iter().copied().filter(|&u| u != FREE).collect();
        assert!(!kept.is_empty());
        for u in kept {
            assert_eq!(b.probe(u).ok(), a.ready_ns(u));
        }
    }

    #[test]
    fn earlier_ready_time_wins() {
        let mut b = ReadBuffer::new(4);
        b.insert(1, 500);
        b.insert(1, 300);
        b.insert(1, 900);
        assert_eq!(b.ready_ns(1), Some(300));
    }

    #[test]
    fn disabled_buffer_never_hits() {
        let mut b = ReadBuffer::new(0);
        b.insert(1, 1);
        assert_eq!(b.ready_ns(1), None);
        b.invalidate(0, 10);
    }

    #[test]
    fn read_ahead_starts_on_third_sequential_read_in_batches() {
        let mut r = ReadAhead::new(64 << 10);
        assert_eq!(r.observe(0, 4096, u64::MAX), None);
        assert_eq!(r.observe(4096, 8192, u64::MAX), None);
        assert_eq!(
            r.observe(8192, 12288, u64::MAX),
            Some((12288, 12288 + (64 << 10)))
        );
        // Within half a window of what is read ahead: nothing new.
        assert_eq!(r.observe(12288, 16384, u64::MAX), None);
        let mut at = 16384;
        let mut got = None;
        while got.is_none() {
            got = r.observe(at, at + 4096, u64::MAX);
            at += 4096;
        }
        let (from, to) = got.unwrap();
        assert_eq!(from, 12288 + (64 << 10));
        assert_eq!(to, at + (64 << 10));
        // A random read starts no stream's read-ahead, and the limit clamps.
        assert_eq!(r.observe(1 << 30, (1 << 30) + 4096, u64::MAX), None);
        let mut r = ReadAhead::new(64 << 10);
        r.observe(0, 4096, 12_000);
        r.observe(4096, 8192, 12_000);
        assert_eq!(r.observe(8192, 10_000, 12_000), Some((10_000, 12_000)));
    }

    #[test]
    fn read_ahead_off_and_interleaved_streams() {
        let mut off = ReadAhead::new(0);
        off.observe(0, 4096, u64::MAX);
        off.observe(4096, 8192, u64::MAX);
        assert_eq!(off.observe(8192, 12288, u64::MAX), None);
        // Two streams read in turn each keep their run.
        let mut r = ReadAhead::new(8192);
        let m = 1 << 20;
        r.observe(0, 512, u64::MAX);
        r.observe(m, m + 512, u64::MAX);
        r.observe(512, 1024, u64::MAX);
        r.observe(m + 512, m + 1024, u64::MAX);
        assert!(r.observe(1024, 1536, u64::MAX).is_some());
        assert!(r.observe(m + 1024, m + 1536, u64::MAX).is_some());
    }

    #[test]
    fn a_new_stream_replaces_the_least_recently_used() {
        let mut r = ReadAhead::new(8192);
        let m = 1 << 20;
        // Streams at 0, m, 2m, 3m; the one at 0 goes on, so the one at m is the oldest.
        for k in 0..4 {
            r.observe(k * m, k * m + 512, u64::MAX);
        }
        r.observe(512, 1024, u64::MAX);
        r.observe(9 * m, 9 * m + 512, u64::MAX);
        // The stream at 0 survived: its third read is read ahead.
        assert!(r.observe(1024, 1536, u64::MAX).is_some());
        // The one at m was replaced: its next read starts over.
        assert_eq!(r.observe(m + 512, m + 1024, u64::MAX), None);
        assert_eq!(r.observe(m + 1024, m + 1536, u64::MAX), None);
        // The new stream at m took the place of the one at 2m, the oldest then; 9m stays.
        r.observe(9 * m + 512, 9 * m + 1024, u64::MAX);
        assert!(r.observe(9 * m + 1024, 9 * m + 1536, u64::MAX).is_some());
        assert_eq!(r.observe(2 * m + 512, 2 * m + 1024, u64::MAX), None);
    }
}
