//! A channel's reservations. Transfers are short and their wishes arrive out of time order
//! (a read's transfer waits for its die's queue, which may run far ahead of the others), so a
//! single busy-until time would let one late read block the channel for every die on it
//! until then. The channel instead keeps its reserved intervals and books each transfer into
//! the earliest gap that fits. At most [`MAX_INTERVALS`] are kept: beyond that two
//! neighbours merge (which two, see [`ChannelMerge`]), so memory and work per booking stay
//! bounded. A merged interval keeps the gap between its parts as free time: a transfer wished
//! for inside it goes there at once while that time lasts. What is forgotten is only where in
//! the interval the free time lay, never how much there is: merged away as busy time, the
//! gaps would make a channel 4% busy look booked solid for 10-20 ms whenever garbage
//! collection queues a victim's reads far ahead on its dies (their transfers book at the end
//! of each array read, one tR apart), and every host read on that channel would wait out the
//! block.
//! The device books its host link and controller data path the same way: read data is ready
//! out of submission order there too.

/// Reserved intervals kept per channel.
pub const MAX_INTERVALS: usize = 32;

/// Slots of the ring the intervals live in (see [`Channel`]); a power of two above
/// `MAX_INTERVALS + 1`, so an index masked by `SLOTS - 1` needs no bounds check.
const SLOTS: usize = 2 * MAX_INTERVALS;
const MASK: usize = SLOTS - 1;
const _: () = assert!(SLOTS.is_power_of_two() && SLOTS > MAX_INTERVALS + 1);

/// Lists up to this long are searched from their end, one interval at a time; longer ones
/// by halving (a read workload counts the same instructions with 12 and 16, more with 8).
const SHORT_LIST: usize = 12;

/// A reserved interval: `(start_ns, end_ns, idle_ns)`. `idle_ns` is the free time inside it,
/// the gaps between neighbours that merged into it (0 for an interval busy throughout).
type Interval = (u64, u64, u64);

/// Which two reservations merge when a channel holds more than [`MAX_INTERVALS`]. Merged
/// intervals keep their free time, so the choice decides only where a channel forgets the
/// position of its free time, and both choices cost a booking no more than an append.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ChannelMerge {
    /// The two earliest: for resources whose bookings arrive close to time order (the host
    /// link, the controller's data path). A channel whose dies queue work far ahead (reads
    /// book their transfer when their array work ends) would blur its near future, where the
    /// transfers wished for now (a host read's data, a program's) have to fit.
    #[default]
    Earliest,
    /// The two latest, for flash channels: the near future, where transfers wished for now
    /// have to fit, stays exact, and the far future (reads booked behind long die queues) is
    /// kept as one interval with its free time, where later wishes for that time take their
    /// share.
    Latest,
}

/// The intervals are one contiguous run of a ring, `head..head + len` (indices modulo
/// `SLOTS`): the list is almost always full, and most bookings land at its end or near its
/// start, where the merge of the two earliest intervals also happens. Dropping or merging at
/// the front just moves `head`, and an insertion shifts the shorter side (a vector would move
/// its whole tail twice per full booking: insert, then remove the merged interval).
#[derive(Debug, Clone)]
pub struct Channel {
    /// Disjoint `[start, end)` intervals, sorted from `head`, each with the free time inside it.
    buf: [Interval; SLOTS],
    head: usize,
    len: usize,
    merge: ChannelMerge,
    /// Per lane (see [`Self::book_in_lane`]), where its last search found the first interval
    /// ending after the wish. A flash channel's reads wish for the end of their die's queue
    /// and its programs for about now: on a full list of the write benchmark nine in ten
    /// reads and two in three programs find the same index as their lane's previous
    /// booking, so a check of that index replaces most halving searches (~5 probes, their
    /// branches unpredictable).
    fingers: [u8; LANES],
}

// The merge policy is configuration; every interval and search aid is state.
flashlab_engine::impl_state!(Channel {
    buf, head, len, fingers
} skip { merge } check Channel::check_loaded);

/// Neighbouring intervals `a` then `b` as one, the gap between them kept as free time.
#[inline(always)]
fn joined(a: Interval, b: Interval) -> Interval {
    (a.0, b.1, a.2 + b.2 + (b.0 - a.1))
}

/// Whether a transfer of `dur_ns` wished for at `t` goes inside `iv`'s free time: it starts at
/// once (or at `iv`'s start) and ends within `iv`. Where in a merged interval its free time
/// lay is forgotten, so the transfer takes it where it is wanted; the channel's capacity is
/// kept, never handed out twice.
#[inline(always)]
fn fits_inside(t: u64, dur_ns: u64, iv: Interval) -> bool {
    iv.2 > 0 && iv.2 >= dur_ns && t.max(iv.0) + dur_ns <= iv.1
}

/// Lanes of bookings a channel remembers a search position for.
pub const LANES: usize = 2;
/// A finger never below a list's length: no index to try first.
const NO_FINGER: usize = usize::MAX;

impl Default for Channel {
    fn default() -> Self {
        Channel::new()
    }
}

impl Channel {
    /// A loaded channel's bookings are possible: a ring position and length in range,
    /// intervals sorted and disjoint, within the time a run reaches, each free time within
    /// its interval, and an empty list's head slot ending at `u64::MAX`, as
    /// [`Channel::forget_before`] relies on.
    fn check_loaded(&self) -> Result<(), String> {
        let limit = flashlab_engine::state::MAX_STATE_TIME_NS;
        if self.head >= SLOTS || self.len > MAX_INTERVALS {
            return Err(format!(
                "a channel's bookings at ring slot {} with length {} (at most {} slots, {MAX_INTERVALS} bookings)",
                self.head, self.len, SLOTS
            ));
        }
        if self.len == 0 && self.buf[self.head].1 != u64::MAX {
            return Err("an empty channel's head slot does not end at the end of time".into());
        }
        let mut prev_end = 0u64;
        for i in 0..self.len {
            let (start, end, idle) = self.at(i);
            if start < prev_end || end < start || end > limit || idle > end - start {
                return Err(format!(
                    "a channel booking [{start}, {end}) ns with {idle} ns free is not after the one before, within itself and before 2^62 ns"
                ));
            }
            prev_end = end;
        }
        Ok(())
    }

    pub fn new() -> Channel {
        Channel::with_merge(ChannelMerge::Earliest)
    }

    /// A channel that merges reservations over the limit by `merge`.
    pub fn with_merge(merge: ChannelMerge) -> Channel {
        let mut buf = [(0, 0, 0); SLOTS];
        // Empty: the head slot's end is past any time, so `forget_before` needs one compare.
        buf[0].1 = u64::MAX;
        Channel {
            buf,
            head: 0,
            len: 0,
            merge,
            fingers: [0; LANES],
        }
    }

    /// The `k`-th interval.
    #[inline(always)]
    fn at(&self, k: usize) -> Interval {
        self.buf[(self.head + k) & MASK]
    }

    #[inline(always)]
    fn at_mut(&mut self, k: usize) -> &mut Interval {
        &mut self.buf[(self.head + k) & MASK]
    }

    /// Index of the first interval ending after `t` (`len` if none), given that the last one
    /// does. `finger`: where a search of the same lane ended last (see [`Channel`]), tried
    /// first on long lists.
    #[inline(always)]
    fn first_ending_after(&self, t: u64, finger: usize) -> usize {
        let h = self.head;
        if self.len <= SHORT_LIST {
            // A flash channel under random reads holds a few transfers (3 to 8), and a
            // read's lands among the last ones (its array read ends after those of one to
            // four reads booked before it).
            let mut i = self.len - 1;
            while i > 0 && self.buf[(h + i - 1) & MASK].1 > t {
                i -= 1;
            }
            return i;
        }
        // Ends are sorted, so `finger` is the answer exactly when the interval before it ends
        // by `t` and it ends after (a stale finger fails the test and the search runs).
        if finger < self.len
            && self.buf[(h + finger) & MASK].1 > t
            && (finger == 0 || self.buf[(h + finger - 1) & MASK].1 <= t)
        {
            return finger;
        }
        // Most bookings that do not start after every reservation start before the earliest
        // one ends.
        if self.buf[h & MASK].1 > t {
            return 0;
        }
        // Invariant: interval `lo` ends by `t`, interval `hi` ends after it.
        let (mut lo, mut hi) = (0, self.len - 1);
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if self.buf[(h + mid) & MASK].1 <= t {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        hi
    }

    /// Insert `v` as the `i`-th interval, moving the shorter side.
    #[inline(always)]
    fn insert(&mut self, i: usize, v: Interval) {
        debug_assert!(i <= self.len && self.len <= MAX_INTERVALS);
        if i < self.len - i {
            self.head = self.head.wrapping_sub(1) & MASK;
            let h = self.head;
            if i > 2 && h + i < SLOTS {
                // One block move (a call) beats element steps beyond a few.
                self.buf.copy_within(h + 1..h + 1 + i, h);
            } else {
                for k in 0..i {
                    *self.at_mut(k) = self.at(k + 1);
                }
            }
        } else {
            let (p, n) = ((self.head + i) & MASK, self.len - i);
            if n > 2 && p + n < SLOTS {
                self.buf.copy_within(p..p + n, p + 1);
            } else {
                for k in (i..self.len).rev() {
                    *self.at_mut(k + 1) = self.at(k);
                }
            }
        }
        self.len += 1;
        *self.at_mut(i) = v;
    }

    /// Remove the `i`-th interval, moving the shorter side.
    #[inline(always)]
    fn remove(&mut self, i: usize) {
        debug_assert!(i < self.len);
        if i < self.len - 1 - i {
            for k in (0..i).rev() {
                *self.at_mut(k + 1) = self.at(k);
            }
            self.head = (self.head + 1) & MASK;
        } else {
            for k in i..self.len - 1 {
                *self.at_mut(k) = self.at(k + 1);
            }
        }
        self.len -= 1;
    }

    /// The start `book(earliest_ns, dur_ns)` would return, without booking (to find a time
    /// two resources are both free: fit each in turn until they agree, then book both).
    pub fn fit(&self, earliest_ns: u64, dur_ns: u64) -> u64 {
        let len = self.len;
        if len == 0 || self.at(len - 1).1 <= earliest_ns {
            return earliest_ns;
        }
        let mut t = earliest_ns;
        let mut i = self.first_ending_after(t, NO_FINGER);
        while i < len {
            let (s, e, idle) = self.at(i);
            if t + dur_ns <= s {
                break;
            }
            if fits_inside(t, dur_ns, (s, e, idle)) {
                return t.max(s);
            }
            t = t.max(e);
            i += 1;
        }
        t
    }

    /// Book `dur_ns` at the earliest time from `earliest_ns` on when the channel is free for
    /// that long; returns the start.
    #[inline(always)]
    pub fn book(&mut self, earliest_ns: u64, dur_ns: u64) -> u64 {
        // No lane: the host link's bookings land wherever their reads' data is ready, and
        // the finger's upkeep cost a read workload more than it saved.
        self.book_from(earliest_ns, dur_ns, LANES)
    }

    /// [`Self::book`] for a caller whose bookings come in `lane`s (below [`LANES`]), each
    /// landing where the lane's last one did more often than not: the search tries that
    /// place first. The lane changes how the gap is found, never which gap it is.
    #[inline(always)]
    pub fn book_in_lane(&mut self, earliest_ns: u64, dur_ns: u64, lane: usize) -> u64 {
        debug_assert!(lane < LANES);
        self.book_from(earliest_ns, dur_ns, lane)
    }

    /// [`Self::book`] in `lane`, or without a finger when `lane` is [`LANES`] (inlined with
    /// a constant lane, so the unused path compiles away).
    #[inline(always)]
    fn book_from(&mut self, earliest_ns: u64, dur_ns: u64, lane: usize) -> u64 {
        let len = self.len;
        let h = self.head;
        let at = |buf: &[Interval; SLOTS], k: usize| buf[h.wrapping_add(k) & MASK];
        // With no interval, `last` is a stale slot, never read as one.
        let last = at(&self.buf, len.wrapping_sub(1));
        if len == 0 || last.1 <= earliest_ns {
            // After every reservation (the usual case): join the last one or append.
            let t = earliest_ns;
            if len > 0 && t - last.1 < dur_ns {
                self.buf[(h + len - 1) & MASK].1 = t + dur_ns;
            } else if self.merge == ChannelMerge::Latest && len == MAX_INTERVALS {
                // Appended and merged with the last at once.
                let last = &mut self.buf[(h + len - 1) & MASK];
                last.2 += t - last.1;
                last.1 = t + dur_ns;
            } else {
                self.buf[(h + len) & MASK] = (t, t + dur_ns, 0);
                self.len = len + 1;
                self.merge_front_if_full();
            }
            return t;
        }
        let mut t = earliest_ns;
        let finger = match self.fingers.get(lane) {
            Some(&f) => usize::from(f),
            None => NO_FINGER,
        };
        let mut i = self.first_ending_after(t, finger);
        if let Some(f) = self.fingers.get_mut(lane) {
            // At most `MAX_INTERVALS`: fits a byte.
            *f = i as u8;
        }
        while i < len {
            let (s, e, idle) = at(&self.buf, i);
            if t + dur_ns <= s {
                break;
            }
            if fits_inside(t, dur_ns, (s, e, idle)) {
                // Inside a merged interval's free time: the list's shape and gaps stay.
                self.buf[(h + i) & MASK].2 = idle - dur_ns;
                return t.max(s);
            }
            t = t.max(e);
            i += 1;
        }
        let end = t + dur_ns;
        // Join neighbours closer than this transfer's length: back-to-back transfers stay one
        // interval, and gaps too short for transfers of this size are not kept to be skipped
        // over by every later booking.
        let joins_prev = i > 0 && t - at(&self.buf, i - 1).1 < dur_ns;
        let joins_next = i < len && at(&self.buf, i).0 - end < dur_ns;
        match (joins_prev, joins_next) {
            (true, true) => {
                let next = at(&self.buf, i);
                let prev = &mut self.buf[(h + i - 1) & MASK];
                prev.1 = next.1;
                prev.2 += next.2;
                self.remove(i);
            }
            (true, false) => self.buf[(h + i - 1) & MASK].1 = end,
            (false, true) => self.buf[(h + i) & MASK].0 = t,
            (false, false) => {
                self.insert(i, (t, end, 0));
                self.merge_front_if_full();
            }
        }
        t
    }

    /// Over the limit: two neighbouring intervals merge (their gap kept as free time), chosen by
    /// the channel's [`ChannelMerge`].
    #[inline(always)]
    fn merge_front_if_full(&mut self) {
        if self.len <= MAX_INTERVALS {
            return;
        }
        match self.merge {
            ChannelMerge::Earliest => {
                let merged = joined(self.at(0), self.at(1));
                self.head = (self.head + 1) & MASK;
                self.len -= 1;
                *self.at_mut(0) = merged;
            }
            ChannelMerge::Latest => {
                let n = self.len;
                *self.at_mut(n - 2) = joined(self.at(n - 2), self.at(n - 1));
                self.len = n - 1;
            }
        }
    }

    /// No booking will ask for a time before `now_ns` any more: forget what ended by then.
    #[inline]
    pub fn forget_before(&mut self, now_ns: u64) {
        // Called on every command; usually nothing has ended since the last call: look
        // before writing anything back. An empty list's head slot ends at `u64::MAX`.
        debug_assert!(self.len > 0 || self.buf[self.head].1 == u64::MAX);
        if self.buf[self.head & MASK].1 > now_ns {
            return;
        }
        let (mut h, mut len) = (self.head, self.len);
        loop {
            h = (h + 1) & MASK;
            len -= 1;
            if len == 0 || self.buf[h].1 > now_ns {
                break;
            }
        }
        if len == 0 {
            self.buf[h].1 = u64::MAX;
        }
        (self.head, self.len) = (h, len);
    }

    /// End of the last booking (0 if none is remembered).
    pub fn free_ns(&self) -> u64 {
        match self.len {
            0 => 0,
            n => self.at(n - 1).1,
        }
    }

    /// Power cycle: nothing before `at_ns` is usable.
    pub fn reset(&mut self, at_ns: u64) {
        self.head = 0;
        self.len = 1;
        self.buf[0] = (0, at_ns, 0);
    }

    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of_val(&self.buf)
    }

    #[cfg(test)]
    fn intervals(&self) -> Vec<Interval> {
        (0..self.len).map(|k| self.at(k)).collect()
    }
}

#[cfg(test)]
mod tests;
