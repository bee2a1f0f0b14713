//! The event queue: events ordered by `(time, sequence)`, so events at equal times come out in
//! the order they were scheduled (FIFO). This makes every run reproducible.

use crate::SimTime;

#[derive(Clone, Copy)]
struct Entry<E> {
    time_ns: SimTime,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    /// Strictly earlier in `(time, sequence)` order; sequences are unique, so this is a total
    /// order and the pop order does not depend on the heap's layout.
    #[inline(always)]
    fn before(&self, other: &Self) -> bool {
        self.time_ns < other.time_ns || (self.time_ns == other.time_ns && self.seq < other.seq)
    }

    #[inline(always)]
    fn time_ns(&self) -> SimTime {
        self.time_ns
    }
}

/// A min-queue of timed events with a bound on its length: a queue that keeps growing is a
/// model bug or a runaway workload, and the run must stop with a reason rather than eat memory.
///
/// A 4-ary min-heap in a `Vec`. A popped root stays in place until the next call: a
/// simulation loop usually schedules one event for each it pops (a completion starts the next
/// I/O), and filling the vacated root with the new event is one sift-down, where removing the
/// root and inserting apart are a sift-down and a sift-up.
pub struct EventQueue<E> {
    heap: Vec<Entry<E>>,
    /// `heap[0]` was popped and is only awaiting replacement or removal.
    root_popped: bool,
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

impl<E: Copy> EventQueue<E> {
    /// A queue that refuses to hold more than `max_len` events.
    pub fn with_limit(max_len: usize) -> Self {
        Self {
            heap: Vec::with_capacity(max_len.min(1 << 16)),
            root_popped: false,
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
        self.heap.len() - usize::from(self.root_popped)
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
        if self.len() >= self.max_len {
            return Err(QueueError::Overflow {
                max_len: self.max_len,
            });
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let entry = Entry {
            time_ns: at_ns,
            seq,
            event,
        };
        if self.root_popped {
            self.root_popped = false;
            self.sift_down_from_root(entry);
        } else {
            self.heap.push(entry);
            self.sift_up(self.heap.len() - 1);
        }
        Ok(())
    }

    /// Time of the next event without removing it.
    #[inline]
    pub fn peek_time_ns(&self) -> Option<SimTime> {
        if !self.root_popped {
            return self.heap.first().map(|e| e.time_ns());
        }
        // The root is gone: the next event is the earliest of its children.
        (self.heap.len() > 1).then(|| self.heap[earliest_child(&self.heap, 1)].time_ns())
    }

    /// Remove the earliest event and advance the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        if self.root_popped {
            self.remove_root();
        }
        let top = *self.heap.first()?;
        self.root_popped = true;
        self.now_ns = top.time_ns();
        Some((self.now_ns, top.event))
    }

    /// Drop the popped root: the last entry takes its place.
    fn remove_root(&mut self) {
        self.root_popped = false;
        let last = self.heap.pop().expect("a popped root is in the heap");
        if !self.heap.is_empty() {
            self.sift_down_from_root(last);
        }
    }

    /// Put `entry` at the root, whose current occupant is discarded, and restore the order.
    #[inline]
    fn sift_down_from_root(&mut self, entry: Entry<E>) {
        let heap = &mut self.heap[..];
        let n = heap.len();
        let mut hole = 0;
        loop {
            let first = ARITY * hole + 1;
            if first >= n {
                break;
            }
            let child = earliest_child(heap, first);
            if !heap[child].before(&entry) {
                break;
            }
            heap[hole] = heap[child];
            hole = child;
        }
        heap[hole] = entry;
    }

    #[inline]
    fn sift_up(&mut self, mut hole: usize) {
        let heap = &mut self.heap[..];
        let entry = heap[hole];
        while hole > 0 {
            let parent = (hole - 1) / ARITY;
            if !entry.before(&heap[parent]) {
                break;
            }
            heap[hole] = heap[parent];
            hole = parent;
        }
        heap[hole] = entry;
    }
}

/// Children per node. A new event usually sinks to the bottom (it tends to be among the
/// latest), and a 4-ary heap of a few dozen entries is half as deep as a binary one: fewer
/// moves for a few more comparisons, each of which is cheap.
const ARITY: usize = 4;

/// The earliest of the children that start at `first` (which exists).
#[inline(always)]
fn earliest_child<E>(heap: &[Entry<E>], first: usize) -> usize {
    if let Some(c) = heap.get(first..first + ARITY) {
        // All four: a tournament of independent comparisons.
        let a = if c[1].before(&c[0]) { 1 } else { 0 };
        let b = if c[3].before(&c[2]) { 3 } else { 2 };
        first + if c[b].before(&c[a]) { b } else { a }
    } else {
        let mut child = first;
        for i in first + 1..heap.len() {
            if heap[i].before(&heap[child]) {
                child = i;
            }
        }
        child
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
        /// Pops, schedules and peeks interleaved (the popped root replaced by the next
        /// schedule) give the order of a sorted reference list.
        #[test]
        fn interleaved_operations_match_a_sorted_list(
            ops in proptest::collection::vec((0u8..4, 0u64..40), 0..300)
        ) {
            let mut q = EventQueue::with_limit(1000);
            let mut reference: Vec<(u64, u64)> = Vec::new(); // (time, sequence), unsorted
            let mut seq = 0u64;
            for (op, dt) in ops {
                if op < 2 {
                    let at = q.now_ns() + dt;
                    q.schedule(at, seq).unwrap();
                    reference.push((at, seq));
                    seq += 1;
                } else {
                    reference.sort_unstable();
                    prop_assert_eq!(q.peek_time_ns(), reference.first().map(|e| e.0));
                    if op == 3 {
                        let want = (!reference.is_empty()).then(|| reference.remove(0));
                        prop_assert_eq!(q.pop(), want);
                    }
                }
                prop_assert_eq!(q.len(), reference.len());
            }
        }
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
