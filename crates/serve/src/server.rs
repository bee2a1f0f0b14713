//! The listener: accepts connections up to a cap, runs each on its own threads, and owns the
//! simulation thread for the life of the server.

use std::collections::BTreeMap;
use std::io;
use std::net::TcpListener;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use flashlab_engine::BlockDevice;

use crate::budget::Budget;
use crate::conn::{self, ConnContext, ConnCounters, ConnState, Stream};
use crate::pool::BufferPool;
use crate::sim::{SimStats, Simulation, TimeMap};
use crate::store::{BackingError, FileStore, MemStore, Store};
use crate::wire::Export;
use crate::{Listen, ServeConfig, ServeError};

/// How often the accept loop looks at the stop flag when no client is connecting.
const ACCEPT_POLL: Duration = Duration::from_millis(10);

/// How long a new client waits at the cap for a closed connection's thread to end before it
/// is refused. A closed connection ends once the simulation has answered what it sent, which
/// takes longer on a loaded machine; without the wait, a burst of evictions there refuses
/// clients the design means to serve.
const ENDING_WAIT: Duration = Duration::from_secs(2);

enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener, PathBuf),
}

/// A bound server, ready to [`run`](Server::run).
pub struct Server<D> {
    listener: Listener,
    device: D,
    store: Store,
    config: ServeConfig,
    export: Export,
    address: String,
}

/// What a finished server hands back: the device (for its counters) and what happened.
pub struct Finished<D> {
    pub device: D,
    pub stats: ServeStats,
}

/// Counts of a server's life.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServeStats {
    pub sim: SimStats,
    pub connections: u64,
    /// New connections closed unserved: the cap was reached, as many closed connections as
    /// the cap were still ending, and none ended within `ENDING_WAIT`.
    pub refused_connections: u64,
    /// Connections closed to make room for a new client at the cap: the one that had gone
    /// longest without progress.
    pub evicted_connections: u64,
    /// Connections closed because their client read no reply for the stall timeout.
    pub stalled_connections: u64,
    /// Connections closed for a protocol violation or a socket error.
    pub hard_disconnects: u64,
    pub replies: u64,
    pub error_replies: u64,
    /// Replies sent more than 1 ms after their due time: the time scale was too small for
    /// this machine and load, and the measured latencies include that delay.
    pub late_replies: u64,
    pub max_late_ns: u64,
    /// Most requests one connection had in flight at once.
    pub max_in_flight: u64,
    /// Most request and reply payload bytes the server held at once (bounded by
    /// [`ServeConfig::max_buffer_bytes`](crate::ServeConfig::max_buffer_bytes)).
    pub peak_buffered_bytes: u64,
    pub max_buffer_bytes: u64,
    /// Sum over replies of real time from due to handed to the socket: the server's part of
    /// the transport overhead (the mean is in the summary).
    pub reply_delay_sum_ns: u64,
    pub real_elapsed_ns: u64,
    pub time_scale: f64,
}

impl ServeStats {
    /// Mean real time from a reply's due time to its hand-off to the socket.
    pub fn reply_overhead_mean_ns(&self) -> u64 {
        self.reply_delay_sum_ns
            .checked_div(self.replies)
            .unwrap_or(0)
    }

    /// A few human lines for the end of a session.
    pub fn summary(&self) -> String {
        let s = &self.sim;
        let mut t = format!(
            "served {} connection(s) for {:.1} s real ({:.3} s simulated at time scale {}): {} reads ({} bytes), {} writes ({} bytes), {} flushes, {} trims, {} write-zeroes\n",
            self.connections,
            self.real_elapsed_ns as f64 * 1e-9,
            s.last_submit_ns as f64 * 1e-9,
            self.time_scale,
            s.reads,
            s.bytes_read,
            s.writes,
            s.bytes_written,
            s.flushes,
            s.trims,
            s.write_zeroes,
        );
        let mean_us = |sum: u64, n: u64| {
            if n == 0 {
                0.0
            } else {
                sum as f64 / n as f64 * 1e-3
            }
        };
        t.push_str(&format!(
            "simulated mean latency: read {:.1} us, write {:.1} us (clients see these × {} plus transport)\n",
            mean_us(s.read_latency_sum_ns, s.reads),
            mean_us(s.write_latency_sum_ns, s.writes),
            self.time_scale,
        ));
        t.push_str(&format!(
            "replies {} (errors {}: out of memory {}, I/O {}), late replies {} (worst {:.3} ms), connections refused {}, closed for protocol errors {}, peak data memory {} bytes\n",
            self.replies,
            self.error_replies,
            s.no_space_errors,
            s.io_errors,
            self.late_replies,
            self.max_late_ns as f64 * 1e-6,
            self.refused_connections,
            self.hard_disconnects,
            s.peak_store_bytes,
        ));
        t.push_str(&format!(
            "transport overhead (reply handed to the socket after its due time): mean {:.1} us; connections closed for a new client {}, for unread replies {}; peak buffered payload {} of {} bytes\n",
            self.reply_overhead_mean_ns() as f64 * 1e-3,
            self.evicted_connections,
            self.stalled_connections,
            self.peak_buffered_bytes,
            self.max_buffer_bytes,
        ));
        t
    }
}

fn bind_unix(path: &PathBuf) -> Result<UnixListener, ServeError> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(ServeError::NotASocket { path: path.clone() });
        }
        if UnixStream::connect(path).is_ok() {
            return Err(ServeError::SocketInUse { path: path.clone() });
        }
        // A socket nobody listens on is left over from a server that was killed.
        std::fs::remove_file(path).map_err(|error| ServeError::Bind {
            address: path.display().to_string(),
            error,
        })?;
    }
    UnixListener::bind(path).map_err(|error| ServeError::Bind {
        address: path.display().to_string(),
        error,
    })
}

impl<D: BlockDevice> Server<D> {
    /// Check the configuration, open the data store and bind the listening socket.
    pub fn bind(device: D, config: ServeConfig) -> Result<Server<D>, ServeError> {
        config.validate()?;
        let size_bytes = device.capacity_bytes();
        let store = match &config.backing {
            Some(path) => Store::File(FileStore::open(path, size_bytes).map_err(|e| {
                let path = path.clone();
                match e {
                    BackingError::Io(error) => ServeError::Backing { path, error },
                    BackingError::Unusable(problem) => ServeError::BadBacking { path, problem },
                    BackingError::Locked => ServeError::BackingInUse { path },
                }
            })?),
            None => Store::Memory(MemStore::new(config.max_memory_bytes)),
        };
        let (listener, address) = match &config.listen {
            Listen::Tcp(addr) => {
                let l = TcpListener::bind(addr).map_err(|error| ServeError::Bind {
                    address: addr.to_string(),
                    error,
                })?;
                let local = l.local_addr().map_err(|error| ServeError::Bind {
                    address: addr.to_string(),
                    error,
                })?;
                (Listener::Tcp(l), format!("nbd://{local}"))
            }
            Listen::Unix(path) => {
                let l = bind_unix(path)?;
                (
                    Listener::Unix(l, path.clone()),
                    format!("nbd+unix:///?socket={}", path.display()),
                )
            }
        };
        let nonblocking = match &listener {
            Listener::Tcp(l) => l.set_nonblocking(true),
            Listener::Unix(l, _) => l.set_nonblocking(true),
        };
        nonblocking.map_err(|error| ServeError::Bind {
            address: address.clone(),
            error,
        })?;
        let min_block =
            u32::try_from(device.logical_block_bytes().clamp(1, 64 * 1024)).unwrap_or(512);
        let export = Export {
            name: config.export_name.clone(),
            description: config.description.clone(),
            size_bytes,
            min_block_bytes: min_block,
            preferred_block_bytes: min_block.max(4096),
            max_request_bytes: config.max_request_bytes,
            strict_alignment: config.strict_alignment,
            max_in_flight_requests: config.max_in_flight_requests,
            max_in_flight_bytes: config.max_in_flight_bytes,
            handshake_timeout: config.handshake_timeout,
        };
        Ok(Server {
            listener,
            device,
            store,
            config,
            export,
            address,
        })
    }

    /// The NBD URI clients connect to (`nbd://127.0.0.1:10809`, `nbd+unix:///?socket=…`).
    pub fn address(&self) -> &str {
        &self.address
    }

    pub fn size_bytes(&self) -> u64 {
        self.export.size_bytes
    }

    /// Serve until `stop` is set; then close every connection, finish the simulation and
    /// hand back the device. The simulation runs on the calling thread (the device need not
    /// be `Send`); connections are accepted on a scoped thread.
    pub fn run(self, stop: &AtomicBool) -> Result<Finished<D>, ServeError> {
        let Server {
            listener,
            device,
            store,
            config,
            export,
            address: _,
        } = self;
        let start = Instant::now();
        let clock = TimeMap::new(start, config.time_scale);
        let (job_tx, job_rx) = mpsc::channel();
        let in_flight_bound = config.max_connections * config.max_in_flight_requests;
        let pool = Arc::new(BufferPool::default());
        let sim = Simulation::new(
            device,
            store,
            clock,
            u64::from(config.max_request_bytes),
            in_flight_bound,
            config.log.clone(),
            Arc::clone(&pool),
        );
        let counters = Arc::new(ConnCounters::default());
        let server_budget = Arc::new(Budget::new(usize::MAX, config.max_buffer_bytes));
        let (accepted, (device, _store, sim_stats)) = std::thread::scope(|scope| {
            let acceptor = std::thread::Builder::new()
                .name("nbd-accept".into())
                .spawn_scoped(scope, || {
                    let shared = Shared {
                        export: Arc::new(export),
                        jobs: job_tx,
                        counters: Arc::clone(&counters),
                        pool: Arc::clone(&pool),
                        server_budget: Arc::clone(&server_budget),
                    };
                    accept_loop(&listener, &config, shared, stop)
                })
                .map_err(ServeError::Thread)?;
            // Ends when the acceptor and every connection have dropped their job senders.
            let sim_result = sim.run(job_rx);
            let accepted = acceptor.join().map_err(|_| {
                ServeError::Thread(io::Error::other("the connection thread panicked"))
            })?;
            Ok::<_, ServeError>((accepted, sim_result))
        })?;
        if let Listener::Unix(_, path) = &listener {
            let _ = std::fs::remove_file(path);
        }
        let c = &*counters;
        let stats = ServeStats {
            sim: sim_stats,
            connections: accepted.connections,
            refused_connections: accepted.refused,
            evicted_connections: accepted.evicted,
            stalled_connections: c.stalled_disconnects.load(Ordering::Relaxed),
            peak_buffered_bytes: server_budget.peak_bytes(),
            max_buffer_bytes: config.max_buffer_bytes,
            reply_delay_sum_ns: c.reply_delay_sum_ns.load(Ordering::Relaxed),
            hard_disconnects: c.hard_disconnects.load(Ordering::Relaxed),
            replies: c.replies.load(Ordering::Relaxed),
            error_replies: c.error_replies.load(Ordering::Relaxed),
            late_replies: c.late_replies.load(Ordering::Relaxed),
            max_late_ns: c.max_late_ns.load(Ordering::Relaxed),
            max_in_flight: c.max_in_flight.load(Ordering::Relaxed),
            real_elapsed_ns: start.elapsed().as_nanos() as u64,
            time_scale: config.time_scale,
        };
        Ok(Finished { device, stats })
    }
}

/// What every connection is handed.
struct Shared {
    export: Arc<Export>,
    jobs: mpsc::Sender<crate::sim::Job>,
    counters: Arc<ConnCounters>,
    pool: Arc<BufferPool>,
    server_budget: Arc<Budget>,
}

/// Counts of the accept loop.
#[derive(Debug, Default)]
struct Accepted {
    connections: u64,
    refused: u64,
    evicted: u64,
}

/// A connection the accept loop keeps track of.
struct Slot {
    stream: Stream,
    state: Arc<ConnState>,
    /// Closed to make room; its thread may still be finishing.
    evicted: bool,
}

type Slots = Arc<Mutex<BTreeMap<u64, Slot>>>;

/// At the connection cap, the connection to close for a new client: the one that has gone
/// longest without progress, whatever it is waiting in. A connection in its handshake
/// counts from its start; one receiving a request, from that request's first byte (a
/// header or WRITE payload half sent); any other, from the last request it sent or reply it
/// took (idle, or not reading its replies). A client that keeps sending and reading, or a
/// fresh one in its first round trips, has moved more recently than a slow one, so a new
/// client is never refused because other connections are slow.
fn eviction_candidate(slots: &BTreeMap<u64, Slot>, now: Instant) -> Option<(u64, String)> {
    slots
        .iter()
        .filter(|(_, s)| !s.evicted)
        .map(|(&id, s)| (id, s.state.stillness(now)))
        // Ids grow with acceptance: among equals the oldest goes.
        .max_by_key(|&(id, (still, _))| (still, std::cmp::Reverse(id)))
        .map(|(id, (still, what))| (id, format!("{what} for {:.2} s", still.as_secs_f64())))
}

/// Accept connections until `stop`; then close them all and wait for their threads.
fn accept_loop(
    listener: &Listener,
    config: &ServeConfig,
    shared: Shared,
    stop: &AtomicBool,
) -> Accepted {
    let conn_stop = Arc::new(AtomicBool::new(false));
    let slots: Slots = Arc::default();
    let mut threads: Vec<JoinHandle<()>> = Vec::new();
    let mut next_id = 0u64;
    let mut counts = Accepted::default();
    let log = &config.log;

    while !stop.load(Ordering::Relaxed) {
        let (stream, peer) = match accept(listener) {
            Ok(x) => x,
            Err(e) => {
                if e.kind() != io::ErrorKind::WouldBlock {
                    // Out of descriptors and the like: keep serving the connections we have.
                    log.emit(&format!("accepting a connection failed: {e}"));
                }
                std::thread::sleep(ACCEPT_POLL);
                threads.retain(|t| !t.is_finished());
                continue;
            }
        };
        let give_up = Instant::now() + ENDING_WAIT;
        let admitted = loop {
            if make_room(&slots, config, &peer, &mut counts) {
                break true;
            }
            if Instant::now() >= give_up || stop.load(Ordering::Relaxed) {
                break false;
            }
            std::thread::sleep(ACCEPT_POLL);
        };
        if !admitted {
            counts.refused += 1;
            log.emit(&format!(
                "{peer}: refused, {} connections already open and busy (the limit)",
                config.max_connections
            ));
            stream.shutdown();
            continue;
        }
        let registered = stream.set_blocking().and_then(|()| stream.try_clone());
        let clone = match registered {
            Ok(c) => c,
            Err(e) => {
                log.emit(&format!("{peer}: cannot set up the connection: {e}"));
                continue;
            }
        };
        next_id += 1;
        let id = next_id;
        let state = Arc::new(ConnState::new(Budget::new(
            config.max_in_flight_requests,
            config.max_in_flight_bytes,
        )));
        lock(&slots).insert(
            id,
            Slot {
                stream: clone,
                state: Arc::clone(&state),
                evicted: false,
            },
        );
        counts.connections += 1;
        let ctx = ConnContext {
            export: Arc::clone(&shared.export),
            jobs: shared.jobs.clone(),
            counters: Arc::clone(&shared.counters),
            stop: Arc::clone(&conn_stop),
            log: log.clone(),
            pool: Arc::clone(&shared.pool),
            state,
            server_budget: Arc::clone(&shared.server_budget),
            reply_stall_timeout: config.reply_stall_timeout,
            request_timeout: config.request_timeout,
        };
        let guard = ConnGuard {
            id,
            slots: Arc::clone(&slots),
        };
        let spawned = std::thread::Builder::new()
            .name("nbd-conn".into())
            .spawn(move || {
                let _guard = guard;
                conn::serve(stream, peer, ctx);
            });
        match spawned {
            Ok(t) => threads.push(t),
            // The guard went down with the closure: the slot is free again.
            Err(e) => log.emit(&format!("cannot start a connection thread: {e}")),
        }
    }

    conn_stop.store(true, Ordering::Relaxed);
    for s in lock(&slots).values() {
        s.stream.shutdown();
    }
    drop(shared);
    for t in threads {
        let _ = t.join();
    }
    counts
}

/// The next connection and its peer's name, or why none was accepted (`WouldBlock`: none
/// is waiting).
fn accept(listener: &Listener) -> io::Result<(Stream, String)> {
    match listener {
        Listener::Tcp(l) => l.accept().map(|(s, a)| (Stream::Tcp(s), a.to_string())),
        Listener::Unix(l, path) => l
            .accept()
            .map(|(s, _)| (Stream::Unix(s), path.display().to_string())),
    }
}

/// Whether a connection from `peer` may open: below the cap, or once the connection making
/// the least use of its slot is closed to make room (counted in `counts`); refused only
/// while as many closed connections as the cap are still ending (the accept loop waits up
/// to `ENDING_WAIT` for one to end before it refuses).
fn make_room(slots: &Slots, config: &ServeConfig, peer: &str, counts: &mut Accepted) -> bool {
    let log = &config.log;
    let mut map = lock(slots);
    let live = map.values().filter(|s| !s.evicted).count();
    // Closed connections whose threads are still ending count too, up to as many
    // again as the cap, so evicting cannot pile up threads without bound.
    live < config.max_connections
        || (map.len() < 2 * config.max_connections
            && match eviction_candidate(&map, Instant::now()) {
                Some((id, why)) => {
                    if let Some(victim) = map.get_mut(&id) {
                        victim.evicted = true;
                        victim.stream.shutdown();
                    }
                    counts.evicted += 1;
                    log.emit(&format!(
                        "{peer}: closed connection {id} ({why}) to make room at the limit of {} connections",
                        config.max_connections
                    ));
                    true
                }
                None => false,
            })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A connection thread that panicked leaves the map consistent (single inserts/removes).
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Frees a connection's slot however its thread ends.
struct ConnGuard {
    id: u64,
    slots: Slots,
}

impl Drop for ConnGuard {
    fn drop(&mut self) {
        lock(&self.slots).remove(&self.id);
    }
}
