//! The controller's write buffer: host data occupies it from arrival until the page program
//! carrying it completes. When full, a write waits (FIFO) for the earliest release.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Debug)]
pub(crate) struct WriteBuffer {
    capacity_bytes: u64,
    used_bytes: u64,
    /// Admitted but not yet carried by an emitted program operation.
    unassigned_bytes: u64,
    /// Admissions are FIFO: none before the previous one.
    floor_ns: u64,
    /// `(release time, bytes)` packed as `time << 64 | bytes` (same order as the pair, one
    /// compare instead of two); at most one entry per IU held, so capacity is preallocated.
    releases: BinaryHeap<Reverse<u128>>,
    max_entries: usize,
}

#[inline]
fn pack(release_ns: u64, bytes: u64) -> u128 {
    (u128::from(release_ns) << 64) | u128::from(bytes)
}

#[inline]
fn unpack(e: u128) -> (u64, u64) {
    ((e >> 64) as u64, e as u64)
}

/// Why data cannot be admitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BufferError {
    /// More bytes wait for a page than the buffer holds: nothing will ever free space.
    Deadlock { used_bytes: u64, need_bytes: u64 },
}

impl WriteBuffer {
    pub fn new(capacity_bytes: u64, iu_bytes: u64) -> Self {
        let max_entries = (capacity_bytes / iu_bytes) as usize + 16;
        Self {
            capacity_bytes,
            used_bytes: 0,
            unassigned_bytes: 0,
            floor_ns: 0,
            releases: BinaryHeap::with_capacity(max_entries),
            max_entries,
        }
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    pub fn used_bytes(&self) -> u64 {
        self.used_bytes
    }

    fn release_until(&mut self, t_ns: u64) {
        while let Some((r, b)) = self.releases.peek().map(|&Reverse(e)| unpack(e)) {
            if r > t_ns {
                break;
            }
            self.releases.pop();
            self.used_bytes -= b;
        }
    }

    /// Admit `bytes` no earlier than `now_ns`; returns when they are in the buffer.
    pub fn admit(&mut self, now_ns: u64, bytes: u64) -> Result<u64, BufferError> {
        debug_assert!(bytes <= self.capacity_bytes);
        let mut t = now_ns.max(self.floor_ns);
        self.release_until(t);
        while self.used_bytes + bytes > self.capacity_bytes {
            let Some((r, b)) = self.releases.pop().map(|Reverse(e)| unpack(e)) else {
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

    /// A program carrying up to `bytes` of host data completes at `done_ns`.
    pub fn programmed(&mut self, done_ns: u64, bytes: u64) {
        let b = bytes.min(self.unassigned_bytes);
        if b == 0 {
            return;
        }
        self.unassigned_bytes -= b;
        if self.releases.len() < self.max_entries {
            self.releases.push(Reverse(pack(done_ns, b)));
        } else {
            // Cannot happen while every entry holds at least one IU; merging into a later
            // release keeps the bound without losing bytes.
            let (r, old) = self
                .releases
                .pop()
                .map_or((done_ns, 0), |Reverse(e)| unpack(e));
            self.releases.push(Reverse(pack(r.max(done_ns), old + b)));
        }
    }

    /// Power loss without protection, or format: contents gone, space free from `at_ns`.
    pub fn clear(&mut self, at_ns: u64) {
        self.releases.clear();
        self.used_bytes = 0;
        self.unassigned_bytes = 0;
        self.floor_ns = at_ns;
    }

    pub fn memory_bytes(&self) -> usize {
        self.releases.capacity() * 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_buffer_waits_for_the_earliest_release() {
        let mut b = WriteBuffer::new(16384, 4096);
        assert_eq!(b.admit(0, 8192), Ok(0));
        assert_eq!(b.admit(10, 8192), Ok(10));
        b.programmed(500, 8192);
        b.programmed(300, 8192);
        // Full: the next write waits for the earlier release (300), not the first program.
        assert_eq!(b.admit(20, 4096), Ok(300));
        // FIFO: a later write never gets in before an earlier one.
        assert_eq!(b.admit(25, 4096), Ok(300));
        assert_eq!(b.admit(30, 8192), Ok(500));
        assert_eq!(b.used_bytes(), 16384);
    }

    #[test]
    fn data_never_assigned_to_a_program_is_a_deadlock() {
        let mut b = WriteBuffer::new(8192, 4096);
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
        let mut b = WriteBuffer::new(16384, 4096);
        b.admit(0, 4096).unwrap();
        b.programmed(100, 16384);
        b.admit(0, 12288).unwrap();
        assert_eq!(b.admit(0, 4096), Ok(100));
        assert_eq!(b.used_bytes(), 16384);
    }
}
