//! What requests may hold: the byte and request budgets of a connection and of the server,
//! and one request's share of them.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How often a waiting thread looks at the stop flag.
pub(crate) const STOP_POLL: Duration = Duration::from_millis(50);

/// Requests and bytes in flight, with a blocking acquire: one per connection, and one for the
/// whole server whose byte limit is the stated bound on buffered payload.
#[derive(Debug)]
pub struct Budget {
    state: Mutex<BudgetState>,
    freed: Condvar,
    max_requests: usize,
    max_bytes: u64,
}

#[derive(Debug, Default)]
struct BudgetState {
    requests: usize,
    bytes: u64,
    peak_bytes: u64,
    /// Threads waiting for room.
    waiters: usize,
}

impl Budget {
    pub fn new(max_requests: usize, max_bytes: u64) -> Budget {
        Budget {
            state: Mutex::new(BudgetState::default()),
            freed: Condvar::new(),
            max_requests: max_requests.max(1),
            max_bytes,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BudgetState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wait until `bytes` more fit (a single request always fits when nothing else is in
    /// flight); the requests now in flight, or `None` once `stop` is set.
    fn acquire(&self, bytes: u64, stop: &AtomicBool) -> Option<usize> {
        let mut s = self.lock();
        let full = |s: &BudgetState| {
            s.requests >= self.max_requests || (s.requests > 0 && s.bytes + bytes > self.max_bytes)
        };
        if full(&s) {
            s.waiters += 1;
            while full(&s) {
                if stop.load(AtomicOrdering::Relaxed) {
                    s.waiters -= 1;
                    return None;
                }
                s = self
                    .freed
                    .wait_timeout(s, STOP_POLL)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
            s.waiters -= 1;
        }
        s.requests += 1;
        s.bytes += bytes;
        s.peak_bytes = s.peak_bytes.max(s.bytes);
        Some(s.requests)
    }

    /// Wait until `bytes` more fit for a request that already holds `own` bytes (it may
    /// always grow when it is the only holder), without counting another request; a timed-out
    /// error at `until`, an error once `stop` is set.
    fn acquire_more(
        &self,
        bytes: u64,
        own: u64,
        stop: &AtomicBool,
        until: Instant,
    ) -> io::Result<()> {
        let mut s = self.lock();
        let full = |s: &BudgetState| s.bytes > own && s.bytes + bytes > self.max_bytes;
        if full(&s) {
            s.waiters += 1;
            while full(&s) {
                let now = Instant::now();
                if stop.load(AtomicOrdering::Relaxed) || now >= until {
                    s.waiters -= 1;
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "request payload not received in time (waiting for buffer budget)",
                    ));
                }
                s = self
                    .freed
                    .wait_timeout(s, STOP_POLL.min(until - now))
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
            s.waiters -= 1;
        }
        s.bytes += bytes;
        s.peak_bytes = s.peak_bytes.max(s.bytes);
        Ok(())
    }

    fn release_bytes(&self, bytes: u64) {
        let mut s = self.lock();
        s.bytes = s.bytes.saturating_sub(bytes);
        self.freed.notify_all();
    }

    fn release(&self, bytes: u64) {
        let mut s = self.lock();
        s.requests = s.requests.saturating_sub(1);
        s.bytes = s.bytes.saturating_sub(bytes);
        self.freed.notify_all();
    }

    /// Some request is waiting for room.
    pub(crate) fn has_waiters(&self) -> bool {
        self.lock().waiters > 0
    }

    pub fn requests(&self) -> usize {
        self.lock().requests
    }

    /// Most bytes ever held at once.
    pub fn peak_bytes(&self) -> u64 {
        self.lock().peak_bytes
    }
}

/// One request's share of its connection's and the server's budgets, given back when the
/// request's reply has been handed to the socket (or dropped with a closed connection).
#[derive(Debug)]
pub struct Hold {
    budgets: Option<(Arc<Budget>, Arc<Budget>)>,
    bytes: u64,
}

impl Hold {
    /// A hold on no budget (requests made outside a connection, as in unit tests).
    pub fn none() -> Hold {
        Hold {
            budgets: None,
            bytes: 0,
        }
    }

    /// Take `bytes` of the connection's budget, then of the server's; `None` when stopping.
    pub(crate) fn take(
        conn: &Arc<Budget>,
        server: &Arc<Budget>,
        bytes: u64,
        stop: &AtomicBool,
    ) -> Option<(Hold, usize)> {
        let in_flight = conn.acquire(bytes, stop)?;
        if server.acquire(bytes, stop).is_none() {
            conn.release(bytes);
            return None;
        }
        Some((
            Hold {
                budgets: Some((Arc::clone(conn), Arc::clone(server))),
                bytes,
            },
            in_flight,
        ))
    }
}

impl Hold {
    /// Take `bytes` more for payload just received, of the connection's budget and the
    /// server's: a WRITE holds budget only for the bytes it has, so a client that sends a
    /// header and trickles its payload holds no buffer it has not sent.
    pub(crate) fn grow(&mut self, bytes: u64, stop: &AtomicBool, until: Instant) -> io::Result<()> {
        let Some((conn, server)) = &self.budgets else {
            return Ok(());
        };
        conn.acquire_more(bytes, self.bytes, stop, until)?;
        if let Err(e) = server.acquire_more(bytes, self.bytes, stop, until) {
            conn.release_bytes(bytes);
            return Err(e);
        }
        self.bytes += bytes;
        Ok(())
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        if let Some((conn, server)) = &self.budgets {
            server.release(self.bytes);
            conn.release(self.bytes);
        }
    }
}
