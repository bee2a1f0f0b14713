//! A channel's reservations. Transfers are short and their wishes arrive out of time order
//! (a read's transfer waits for its die's queue, which may run far ahead of the others), so a
//! single busy-until time would let one late read block the channel for every die on it
//! until then. The channel instead keeps its reserved intervals and books each transfer into
//! the earliest gap that fits. At most [`MAX_INTERVALS`] are kept: beyond that the two
//! earliest merge (their gap is given up), so memory and work per booking stay bounded.

/// Reserved intervals kept per channel.
pub const MAX_INTERVALS: usize = 32;

/// Slots of the window the intervals slide through (see [`Channel`]).
const SLOTS: usize = 4 * MAX_INTERVALS;

/// The intervals are one contiguous run `buf[head..head + len]` sliding right through a
/// fixed array: the list is almost always full, and most bookings land at its end or near
/// its start, where the merge of the two earliest intervals also happens. Dropping or merging
/// at the front just moves `head`, and an insertion shifts the shorter side; the run is moved
/// back to the start only when it reaches the end of the array (every ~`3 × MAX_INTERVALS`
/// front removals). A vector moved its whole tail twice per full booking (insert, then remove
/// the merged interval).
#[derive(Debug, Clone)]
pub(crate) struct Channel {
    /// Disjoint `[start, end)` intervals, sorted.
    buf: [(u64, u64); SLOTS],
    head: usize,
    len: usize,
}

impl Channel {
    pub fn new() -> Channel {
        Channel {
            buf: [(0, 0); SLOTS],
            head: 0,
            len: 0,
        }
    }

    #[inline(always)]
    fn busy(&self) -> &[(u64, u64)] {
        &self.buf[self.head..self.head + self.len]
    }

    #[inline(always)]
    fn busy_mut(&mut self) -> &mut [(u64, u64)] {
        &mut self.buf[self.head..self.head + self.len]
    }

    /// Index of the first interval ending after `t` (`len` if none).
    #[inline]
    fn first_ending_after(&self, t: u64) -> usize {
        let busy = self.busy();
        // Most bookings start after every reservation, or before the earliest one ends.
        match busy {
            [] => 0,
            [.., last] if last.1 <= t => busy.len(),
            [first, ..] if first.1 > t => 0,
            _ => busy.partition_point(|&(_, e)| e <= t),
        }
    }

    /// Insert `v` as the `i`-th interval, moving the shorter side.
    #[inline]
    fn insert(&mut self, i: usize, v: (u64, u64)) {
        debug_assert!(i <= self.len && self.len <= MAX_INTERVALS);
        if self.head > 0 && i < self.len - i {
            self.head -= 1;
            let h = self.head;
            for k in h..h + i {
                self.buf[k] = self.buf[k + 1];
            }
        } else {
            if self.head + self.len == SLOTS {
                self.buf.copy_within(self.head..SLOTS, 0);
                self.head = 0;
            }
            let h = self.head;
            for k in (h + i..h + self.len).rev() {
                self.buf[k + 1] = self.buf[k];
            }
        }
        self.len += 1;
        self.buf[self.head + i] = v;
    }

    /// Remove the `i`-th interval, moving the shorter side.
    #[inline]
    fn remove(&mut self, i: usize) {
        debug_assert!(i < self.len);
        let h = self.head;
        if i < self.len - 1 - i {
            for k in (h..h + i).rev() {
                self.buf[k + 1] = self.buf[k];
            }
            self.head += 1;
        } else {
            for k in h + i..h + self.len - 1 {
                self.buf[k] = self.buf[k + 1];
            }
        }
        self.len -= 1;
    }

    /// Book `dur_ns` at the earliest time from `earliest_ns` on when the channel is free for
    /// that long; returns the start.
    #[inline(always)]
    pub fn book(&mut self, earliest_ns: u64, dur_ns: u64) -> u64 {
        let mut t = earliest_ns;
        let mut i = self.first_ending_after(t);
        let busy = self.busy();
        while i < busy.len() {
            let (s, e) = busy[i];
            if t + dur_ns <= s {
                break;
            }
            t = t.max(e);
            i += 1;
        }
        let end = t + dur_ns;
        // Join neighbours closer than this transfer's length: back-to-back transfers stay one
        // interval, and gaps too short for transfers of this size are not kept to be skipped
        // over by every later booking.
        let joins_prev = i > 0 && t - busy[i - 1].1 < dur_ns;
        let joins_next = i < busy.len() && busy[i].0 - end < dur_ns;
        match (joins_prev, joins_next) {
            (true, true) => {
                let busy = self.busy_mut();
                busy[i - 1].1 = busy[i].1;
                self.remove(i);
            }
            (true, false) => self.busy_mut()[i - 1].1 = end,
            (false, true) => self.busy_mut()[i].0 = t,
            (false, false) => {
                self.insert(i, (t, end));
                if self.len > MAX_INTERVALS {
                    // The two earliest merge: their gap is given up.
                    let busy = self.busy_mut();
                    busy[0].1 = busy[1].1;
                    self.remove(1);
                }
            }
        }
        t
    }

    /// No booking will ask for a time before `now_ns` any more: forget what ended by then.
    #[inline]
    pub fn forget_before(&mut self, now_ns: u64) {
        // Called on every command; usually nothing has ended since the last call.
        while self.len > 0 && self.buf[self.head].1 <= now_ns {
            self.head += 1;
            self.len -= 1;
        }
    }

    /// End of the last booking (0 if none is remembered).
    pub fn free_ns(&self) -> u64 {
        self.busy().last().map_or(0, |&(_, e)| e)
    }

    /// Power cycle: nothing before `at_ns` is usable.
    pub fn reset(&mut self, at_ns: u64) {
        self.head = 0;
        self.len = 1;
        self.buf[0] = (0, at_ns);
    }

    pub fn memory_bytes(&self) -> usize {
        SLOTS * 16
    }

    #[cfg(test)]
    fn intervals(&self) -> Vec<(u64, u64)> {
        self.busy().to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn books_the_earliest_gap_that_fits() {
        let mut c = Channel::new();
        assert_eq!(c.book(100, 10), 100);
        // A late wish leaves a gap before it...
        assert_eq!(c.book(1_000, 10), 1_000);
        // ...which an earlier wish uses, instead of queueing behind the late one.
        assert_eq!(c.book(105, 10), 110);
        assert_eq!(c.book(0, 50), 0);
        assert_eq!(c.book(95, 50), 120);
        // Too long for the gap left before 1000: goes after it.
        assert_eq!(c.book(900, 200), 1_010);
        assert_eq!(c.free_ns(), 1_210);
        assert_eq!(c.intervals(), vec![(0, 50), (100, 170), (1_000, 1_210)]);
        c.forget_before(500);
        assert_eq!(c.intervals(), vec![(1_000, 1_210)]);
        c.reset(2_000);
        assert_eq!(c.book(10, 5), 2_000);
    }

    #[test]
    fn interval_count_stays_bounded_and_bookings_never_overlap() {
        let mut c = Channel::new();
        let mut booked = Vec::new();
        for i in 0..1_000u64 {
            // Scattered wishes, most leaving gaps.
            let at = (i * 7_919) % 50_000;
            let s = c.book(at, 3);
            assert!(s >= at);
            booked.push((s, s + 3));
            assert!(c.len <= MAX_INTERVALS);
        }
        booked.sort();
        assert!(booked.windows(2).all(|w| w[0].1 <= w[1].0), "overlap");
    }

    /// The plain sorted-vector form of the same booking rule, to check the ring against.
    struct Reference {
        busy: Vec<(u64, u64)>,
    }

    impl Reference {
        fn book(&mut self, earliest_ns: u64, dur_ns: u64) -> u64 {
            let mut t = earliest_ns;
            let mut i = self.busy.partition_point(|&(_, e)| e <= t);
            while i < self.busy.len() && t + dur_ns > self.busy[i].0 {
                t = t.max(self.busy[i].1);
                i += 1;
            }
            let end = t + dur_ns;
            let joins_prev = i > 0 && t - self.busy[i - 1].1 < dur_ns;
            let joins_next = i < self.busy.len() && self.busy[i].0 - end < dur_ns;
            match (joins_prev, joins_next) {
                (true, true) => {
                    self.busy[i - 1].1 = self.busy[i].1;
                    self.busy.remove(i);
                }
                (true, false) => self.busy[i - 1].1 = end,
                (false, true) => self.busy[i].0 = t,
                (false, false) => {
                    self.busy.insert(i, (t, end));
                    if self.busy.len() > MAX_INTERVALS {
                        self.busy[0].1 = self.busy[1].1;
                        self.busy.remove(1);
                    }
                }
            }
            t
        }

        fn forget_before(&mut self, now_ns: u64) {
            let n = self.busy.partition_point(|&(_, e)| e <= now_ns);
            self.busy.drain(..n);
        }
    }

    proptest::proptest! {
        #[test]
        fn the_ring_books_as_a_sorted_vector_does(
            ops in proptest::collection::vec((0u64..8, 0u64..100_000, 1u64..300), 1..600)
        ) {
            let mut ring = Channel::new();
            let mut reference = Reference { busy: Vec::new() };
            let mut now = 0;
            for (what, at, dur) in ops {
                match what {
                    0 => {
                        now += at / 256;
                        ring.forget_before(now);
                        reference.forget_before(now);
                    }
                    1 if at % 97 == 0 => {
                        ring.reset(now + at);
                        reference.busy = vec![(0, now + at)];
                    }
                    _ => {
                        // Half near the present (dense, joining), half scattered (gaps).
                        let wish = now + if at % 2 == 0 { at % 1_000 } else { at };
                        proptest::prop_assert_eq!(ring.book(wish, dur), reference.book(wish, dur));
                    }
                }
                proptest::prop_assert_eq!(ring.intervals(), reference.busy.clone());
                proptest::prop_assert_eq!(ring.free_ns(), reference.busy.last().map_or(0, |i| i.1));
            }
        }
    }
}
