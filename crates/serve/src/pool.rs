//! Payload buffers recycled between the connection threads and the simulation thread, so a
//! steady stream of requests does not allocate per request.

use std::sync::Mutex;

/// Buffers kept for reuse at most.
const KEEP_BUFFERS: usize = 128;
/// Larger buffers are freed rather than kept: the pool holds at most 32 MiB.
const KEEP_MAX_BYTES: usize = 256 * 1024;

#[derive(Debug, Default)]
pub struct BufferPool {
    free: Mutex<Vec<Vec<u8>>>,
}

impl BufferPool {
    /// A zero-filled buffer of `len` bytes.
    pub fn take(&self, len: usize) -> Vec<u8> {
        let mut v = self
            .free
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop()
            .unwrap_or_default();
        v.clear();
        v.resize(len, 0);
        v
    }

    pub fn give(&self, v: Vec<u8>) {
        if v.capacity() > KEEP_MAX_BYTES {
            return;
        }
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        if free.len() < KEEP_BUFFERS {
            free.push(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_back_zeroed_and_large_ones_are_not_kept() {
        let pool = BufferPool::default();
        let mut a = pool.take(4096);
        a.fill(7);
        let ptr = a.as_ptr();
        pool.give(a);
        let b = pool.take(100);
        assert_eq!(b.as_ptr(), ptr, "the buffer was reused");
        assert!(b.iter().all(|&x| x == 0) && b.len() == 100);
        pool.give(vec![0u8; KEEP_MAX_BYTES + 1]);
        assert!(pool.free.lock().unwrap().is_empty());
    }
}
