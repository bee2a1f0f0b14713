//! A channel's reservations. Transfers are short and their wishes arrive out of time order
//! (a read's transfer waits for its die's queue, which may run far ahead of the others), so a
//! single busy-until time would let one late read block the channel for every die on it
//! until then. The channel instead keeps its reserved intervals and books each transfer into
//! the earliest gap that fits. At most [`MAX_INTERVALS`] are kept: beyond that the two
//! earliest merge (their gap is given up), so memory and work per booking stay bounded.

/// Reserved intervals kept per channel.
pub const MAX_INTERVALS: usize = 32;

#[derive(Debug, Clone)]
pub(crate) struct Channel {
    /// Disjoint `[start, end)` intervals, sorted.
    busy: Vec<(u64, u64)>,
}

impl Channel {
    pub fn new() -> Channel {
        Channel {
            busy: Vec::with_capacity(MAX_INTERVALS + 1),
        }
    }

    /// Book `dur_ns` at the earliest time from `earliest_ns` on when the channel is free for
    /// that long; returns the start.
    #[inline]
    pub fn book(&mut self, earliest_ns: u64, dur_ns: u64) -> u64 {
        let mut t = earliest_ns;
        let mut i = self.busy.partition_point(|&(_, e)| e <= t);
        while i < self.busy.len() {
            let (s, e) = self.busy[i];
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

    /// No booking will ask for a time before `now_ns` any more: forget what ended by then.
    pub fn forget_before(&mut self, now_ns: u64) {
        // Called on every command; usually nothing has ended since the last call.
        if self.busy.first().is_none_or(|&(_, e)| e > now_ns) {
            return;
        }
        let n = self.busy.partition_point(|&(_, e)| e <= now_ns);
        if n > 0 {
            self.busy.drain(..n);
        }
    }

    /// End of the last booking (0 if none is remembered).
    pub fn free_ns(&self) -> u64 {
        self.busy.last().map_or(0, |&(_, e)| e)
    }

    /// Power cycle: nothing before `at_ns` is usable.
    pub fn reset(&mut self, at_ns: u64) {
        self.busy.clear();
        self.busy.push((0, at_ns));
    }

    pub fn memory_bytes(&self) -> usize {
        self.busy.capacity() * 16
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
        assert_eq!(c.busy, vec![(0, 50), (100, 170), (1_000, 1_210)]);
        c.forget_before(500);
        assert_eq!(c.busy, vec![(1_000, 1_210)]);
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
            assert!(c.busy.len() <= MAX_INTERVALS);
        }
        booked.sort();
        assert!(booked.windows(2).all(|w| w[0].1 <= w[1].0), "overlap");
    }
}
