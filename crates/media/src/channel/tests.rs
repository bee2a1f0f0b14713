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
    assert_eq!(
        c.intervals(),
        vec![(0, 50, 0), (100, 170, 0), (1_000, 1_210, 0)]
    );
    c.forget_before(500);
    assert_eq!(c.intervals(), vec![(1_000, 1_210, 0)]);
    c.reset(2_000);
    assert_eq!(c.book(10, 5), 2_000);
}

#[test]
fn interval_count_stays_bounded_and_no_time_is_booked_twice() {
    for merge in [ChannelMerge::Earliest, ChannelMerge::Latest] {
        let mut c = Channel::with_merge(merge);
        let mut booked = Vec::new();
        for i in 0..1_000u64 {
            // Scattered wishes, most leaving gaps.
            let at = (i * 7_919) % 50_000;
            let s = c.book(at, 3);
            assert!(s >= at);
            booked.push((s, s + 3));
            assert!(c.len <= MAX_INTERVALS);
        }
        // Transfers overlap only inside merged intervals, which hand out no more than the
        // free time they hold: every kept interval has its bookings' time and no more.
        let list = c.intervals();
        for &(start, end, idle) in &list {
            let inside: u64 = booked
                .iter()
                .filter(|&&(s, e)| s >= start && e <= end)
                .map(|&(s, e)| e - s)
                .sum();
            assert_eq!(
                inside + idle,
                end - start,
                "{merge:?} ({start}, {end}, {idle})"
            );
        }
        let outside = booked
            .iter()
            .filter(|&&(s, e)| !list.iter().any(|iv| s >= iv.0 && e <= iv.1))
            .count();
        assert_eq!(outside, 0, "{merge:?}");
        assert!(list.iter().any(|iv| iv.2 > 0), "{merge:?}: nothing merged");
    }
}

#[test]
fn merging_the_latest_keeps_the_near_future_exact() {
    // Transfers booked far ahead with wide gaps, then a run of them packed close together
    // further out: 7 more than the list holds.
    let far: Vec<u64> = (0..MAX_INTERVALS as u64 - 1)
        .map(|i| 1_000 + i * 1_000)
        .chain((0..8).map(|i| 100_000 + i * 20))
        .collect();
    let mut earliest = Channel::with_merge(ChannelMerge::Earliest);
    let mut latest = Channel::with_merge(ChannelMerge::Latest);
    for &at in &far {
        earliest.book(at, 10);
        latest.book(at, 10);
    }
    // The earliest merge makes the first bookings one interval (1,000 to 8,010, 80 ns
    // busy in eight transfers): one wished for at 1,500 still starts then, in its free time...
    assert_eq!(earliest.at(0), (1_000, 8_010, 6_930));
    assert_eq!(earliest.book(1_500, 10), 1_500);
    // ...but where that time lay is forgotten: one wished for at 1,000, when the first
    // transfer is, starts at once as well.
    assert_eq!(earliest.book(1_000, 10), 1_000);
    // The latest merge makes the far end one interval, its free time kept: the near future
    // is exact, and a wish inside the far interval takes a share of its free time.
    assert_eq!(latest.book(1_000, 10), 1_010);
    assert_eq!(latest.book(1_500, 10), 1_500);
    let (start, end, idle) = latest.at(latest.len - 1);
    assert!(idle > 0 && end == 100_150, "({start}, {end}, {idle})");
    assert_eq!(latest.book(start + 5, 10), start + 5);
    assert!(latest.len <= MAX_INTERVALS);
}

#[test]
fn a_merged_interval_hands_out_its_free_time_once() {
    // Bookings a tR apart far ahead, as a victim's reads on one die make them: the list
    // fills and merges, and the merged intervals keep the gaps as free time.
    let mut c = Channel::with_merge(ChannelMerge::Earliest);
    for k in 0..200u64 {
        c.book(10_000 + k * 110, 3);
    }
    assert!(c.len <= MAX_INTERVALS);
    let (start, end, idle) = c.at(0);
    assert_eq!(idle, end - start - 3 * ((end - start) / 110 + 1));
    // Wished for inside it: starts at once while the free time lasts...
    let mut t = start;
    let mut at_once = 0;
    while c.book(t, 3) == t {
        at_once += 1;
        t += 1;
    }
    assert_eq!(at_once, idle / 3);
    // ...then waits for its end, as a busy interval would make it.
    assert!(c.book(start, 3) >= end);
}

/// The plain sorted-vector form of the same booking rule, to check the ring against.
struct Reference {
    /// (start, end, free time inside).
    busy: Vec<(u64, u64, u64)>,
    merge: ChannelMerge,
}

impl Reference {
    fn book(&mut self, earliest_ns: u64, dur_ns: u64) -> u64 {
        let mut t = earliest_ns;
        let mut i = self.busy.partition_point(|&(_, e, _)| e <= t);
        while i < self.busy.len() && t + dur_ns > self.busy[i].0 {
            let (s, e, idle) = self.busy[i];
            if idle > 0 && idle >= dur_ns && t.max(s) + dur_ns <= e {
                self.busy[i].2 -= dur_ns;
                return t.max(s);
            }
            t = t.max(e);
            i += 1;
        }
        let end = t + dur_ns;
        let joins_prev = i > 0 && t - self.busy[i - 1].1 < dur_ns;
        let joins_next = i < self.busy.len() && self.busy[i].0 - end < dur_ns;
        match (joins_prev, joins_next) {
            (true, true) => {
                self.busy[i - 1].1 = self.busy[i].1;
                self.busy[i - 1].2 += self.busy[i].2;
                self.busy.remove(i);
            }
            (true, false) => self.busy[i - 1].1 = end,
            (false, true) => self.busy[i].0 = t,
            (false, false) => {
                self.busy.insert(i, (t, end, 0));
                if self.busy.len() > MAX_INTERVALS {
                    let k = match self.merge {
                        ChannelMerge::Earliest => 0,
                        ChannelMerge::Latest => self.busy.len() - 2,
                    };
                    let next = self.busy.remove(k + 1);
                    let gap = next.0 - self.busy[k].1;
                    self.busy[k].1 = next.1;
                    self.busy[k].2 += next.2 + gap;
                }
            }
        }
        t
    }

    fn forget_before(&mut self, now_ns: u64) {
        let n = self.busy.partition_point(|&(_, e, _)| e <= now_ns);
        self.busy.drain(..n);
    }
}

#[test]
fn a_full_list_merges_as_a_sorted_vector_does_wherever_the_ring_wraps() {
    // A full list with uneven gaps (at `a` and at a later pair), laid out from every head
    // that makes the list wrap past the ring's last slot.
    for (head, merge) in (SLOTS - MAX_INTERVALS - 2..SLOTS)
        .flat_map(|h| [(h, ChannelMerge::Earliest), (h, ChannelMerge::Latest)])
    {
        for a in 0..MAX_INTERVALS - 1 {
            let b = (a + 1 + head % 5).min(MAX_INTERVALS - 1);
            let mut ring = Channel::with_merge(merge);
            ring.head = head;
            (ring.buf[0].1, ring.buf[head].1) = (0, u64::MAX);
            let mut reference = Reference {
                busy: Vec::new(),
                merge,
            };
            let mut at = 1_000;
            for k in 0..=MAX_INTERVALS {
                assert_eq!(ring.book(at, 10), reference.book(at, 10));
                at += if k == a || k == b { 50 } else { 100 };
            }
            assert_eq!(
                ring.intervals(),
                reference.busy,
                "{merge:?} head {head}, pairs {a} {b}"
            );
            assert_eq!(ring.len, MAX_INTERVALS);
        }
    }
}

#[test]
fn every_list_length_position_and_head_books_and_forgets_as_a_sorted_vector_does() {
    // Lists shorter and longer than `SHORT_LIST` (searched from the end, or by halving),
    // insertions at every position of a ring whose run wraps or not (moved one interval
    // at a time, or as one block), forgetting down to an empty list and booking again.
    for merge in [ChannelMerge::Earliest, ChannelMerge::Latest] {
        for head in 0..SLOTS {
            for n in [
                1,
                SHORT_LIST - 1,
                SHORT_LIST,
                SHORT_LIST + 1,
                MAX_INTERVALS + 2,
            ] {
                let mut ring = Channel::with_merge(merge);
                ring.head = head;
                (ring.buf[0].1, ring.buf[head].1) = (0, u64::MAX);
                let mut reference = Reference {
                    busy: Vec::new(),
                    merge,
                };
                // Evens first, in order (appended), then odds, each landing mid-list.
                let order = (0..n as u64).step_by(2).chain((1..n as u64).step_by(2));
                for k in order.chain([n as u64 / 2]) {
                    let wish = 1_000 + k * (100 + k);
                    let fit = ring.fit(wish, 10);
                    assert_eq!(ring.book(wish, 10), fit);
                    assert_eq!(fit, reference.book(wish, 10));
                    assert_eq!(
                        ring.intervals(),
                        reference.busy,
                        "{merge:?} head {head} n {n} k {k}"
                    );
                }
                let mut now = 0;
                while !reference.busy.is_empty() {
                    now += 700;
                    ring.forget_before(now);
                    reference.forget_before(now);
                    assert_eq!(ring.intervals(), reference.busy);
                }
                ring.forget_before(u64::MAX - 1);
                assert_eq!(ring.book(now, 10), reference.book(now, 10));
                assert_eq!(ring.intervals(), reference.busy);
            }
        }
    }
}

proptest::proptest! {
    #[test]
    fn the_ring_books_as_a_sorted_vector_does(
        ops in proptest::collection::vec((0u64..8, 0u64..100_000, 0u64..300), 1..600),
        which in 0usize..2,
    ) {
        let merge = [ChannelMerge::Earliest, ChannelMerge::Latest][which];
        let mut ring = Channel::with_merge(merge);
        let mut reference = Reference { busy: Vec::new(), merge };
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
                    reference.busy = vec![(0, now + at, 0)];
                }
                _ => {
                    // Half near the present (dense, joining), half scattered (gaps).
                    let wish = now + if at % 2 == 0 { at % 1_000 } else { at };
                    let fit = ring.fit(wish, dur);
                    proptest::prop_assert_eq!(ring.book(wish, dur), fit);
                    proptest::prop_assert_eq!(fit, reference.book(wish, dur));
                }
            }
            proptest::prop_assert_eq!(ring.intervals(), reference.busy.clone());
            proptest::prop_assert_eq!(ring.free_ns(), reference.busy.last().map_or(0, |i| i.1));
        }
    }

    #[test]
    fn a_full_flash_channel_books_in_lanes_as_a_sorted_vector_does(
        ops in proptest::collection::vec((0u64..16, 0u64..20_000, 0u64..40), 200..1_500),
    ) {
        // Wishes spread over a window ahead of the present, as dies queueing work far
        // ahead make them: the list stays full and every booking merges.
        let mut ring = Channel::with_merge(ChannelMerge::Latest);
        let mut reference = Reference { busy: Vec::new(), merge: ChannelMerge::Latest };
        let mut now = 0;
        for (what, at, dur) in ops {
            if what == 0 {
                now += at / 64;
                ring.forget_before(now);
                reference.forget_before(now);
            } else {
                // Two lanes, as a flash channel's reads (far ahead) and programs (near the
                // present) book: each lane's finger is tried first, and must never change
                // the gap found.
                let lane = (what & 1) as usize;
                let wish = now + if lane == 1 { at % 2_000 } else { at };
                proptest::prop_assert_eq!(
                    ring.book_in_lane(wish, dur, lane),
                    reference.book(wish, dur)
                );
            }
            proptest::prop_assert_eq!(ring.intervals(), reference.busy.clone());
        }
    }
}
