//! The event queue: events ordered by `(time, sequence)`, so events at equal times come out in
//! the order they were scheduled (FIFO). This makes every run reproducible.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::SimTime;

struct Entry<E> {
    time_ns: SimTime,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.time_ns == other.time_ns && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.time_ns, self.seq).cmp(&(other.time_ns, other.seq))
    }
}

/// A min-queue of timed events with a bound on its length: a queue that keeps growing is a
/// model bug or a runaway workload, and the run must stop with a reason rather than eat memory.
pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<Entry<E>>>,
    next_seq: u64,
    now_ns: SimTime,
    max_len: usize,
}

/// Why the queue refused an event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueueError {
    #[error("event scheduled in the past: at {at_ns} ns while simulated time is {now_ns} ns")]
    InThePast { at_ns: SimTime, now_ns: SimTime },
    #[error(
        "event queue holds {max_len} events and keeps growing: the workload outruns the model"
    )]
    Overflow { max_len: usize },
}

impl<E> EventQueue<E> {
    /// A queue that refuses to hold more than `max_len` events.
    pub fn with_limit(max_len: usize) -> Self {
        Self {
            heap: BinaryHeap::with_capacity(max_len.min(1 << 16)),
            next_seq: 0,
            now_ns: 0,
            max_len,
        }
    }

    /// Time of the last event popped (the simulation clock).
    #[inline]
    pub fn now_ns(&self) -> SimTime {
        self.now_ns
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Schedule `event` at absolute time `at_ns`, which must not be before the clock.
    #[inline]
    pub fn schedule(&mut self, at_ns: SimTime, event: E) -> Result<(), QueueError> {
        if at_ns < self.now_ns {
            return Err(QueueError::InThePast {
                at_ns,
                now_ns: self.now_ns,
            });
        }
        if self.heap.len() >= self.max_len {
            return Err(QueueError::Overflow {
                max_len: self.max_len,
            });
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Reverse(Entry {
            time_ns: at_ns,
            seq,
            event,
        }));
        Ok(())
    }

    /// Time of the next event without removing it.
    #[inline]
    pub fn peek_time_ns(&self) -> Option<SimTime> {
        self.heap.peek().map(|Reverse(e)| e.time_ns)
    }

    /// Remove the earliest event and advance the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let Reverse(entry) = self.heap.pop()?;
        self.now_ns = entry.time_ns;
        Some((entry.time_ns, entry.event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::with_limit(16);
        q.schedule(10, 'a').unwrap();
        q.schedule(5, 'b').unwrap();
        q.schedule(10, 'c').unwrap();
        q.schedule(5, 'd').unwrap();
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
    }

    #[test]
    fn refuses_the_past_and_overflow() {
        let mut q = EventQueue::with_limit(2);
        q.schedule(10, ()).unwrap();
        q.pop();
        assert_eq!(
            q.schedule(9, ()),
            Err(QueueError::InThePast {
                at_ns: 9,
                now_ns: 10
            })
        );
        q.schedule(11, ()).unwrap();
        q.schedule(12, ()).unwrap();
        assert_eq!(q.schedule(13, ()), Err(QueueError::Overflow { max_len: 2 }));
    }

    proptest! {
        #[test]
        fn pops_sorted_by_time_then_sequence(times in proptest::collection::vec(0u64..50, 0..200)) {
            let mut q = EventQueue::with_limit(1000);
            for (i, t) in times.iter().enumerate() {
                q.schedule(*t, i).unwrap();
            }
            let mut last = (0u64, None::<usize>);
            while let Some((t, i)) = q.pop() {
                prop_assert!(t >= last.0);
                if t == last.0 {
                    if let Some(prev) = last.1 { prop_assert!(i > prev); }
                }
                prop_assert_eq!(times[i], t);
                last = (t, Some(i));
            }
        }
    }
}
