//! A simulated drive served to real programs over the NBD protocol (fixed newstyle
//! handshake, simple replies), so an unmodified `fio --ioengine=nbd`, `qemu-io` or `nbdcopy`
//! can use it.
//!
//! ```text
//!  client ─► connection reader ─┐  (validates, bounds in-flight requests and bytes)
//!  client ─► connection reader ─┼─► simulation thread: data store + one BlockDevice
//!                               │     submit at real arrival ÷ time scale (simulated ns)
//!  client ◄─ connection writer ◄┘     reply due at simulated completion × time scale
//! ```
//! Data is kept, so reads return what was written: sparse in memory under a byte budget, or
//! in a sparse backing file. Timing comes from the device: every request is submitted at the
//! simulated time of its real arrival, and its reply is held back until real time reaches
//! its simulated completion. The wall clock lives only in this crate; the device sees
//! simulated nanoseconds, in arrival order, from one thread.
//!
//! ```no_run
//! use std::sync::atomic::AtomicBool;
//! use flashlab_serve::{Listen, ServeConfig, Server};
//! let drive = flashlab_device::load_device_config("tiny-test-1gb", &[]).unwrap();
//! let ssd = flashlab_device::Ssd::new(&drive, flashlab_engine::SeedTree::new(1)).unwrap();
//! let mut config = ServeConfig::new(Listen::Unix("/tmp/drive.sock".into()));
//! config.time_scale = 10.0; // the drive runs ten times slower than real time
//! let server = Server::bind(ssd, config).unwrap();
//! println!("serving on {}", server.address());
//! let stop = AtomicBool::new(false);
//! let finished = server.run(&stop).unwrap();
//! println!("{}", finished.stats.summary());
//! ```

mod budget;
mod conn;
mod pool;
pub mod proto;
mod server;
mod sim;
pub mod store;
pub mod wire;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use server::{Finished, ServeStats, Server};
pub use sim::{SimStats, TimeMap};

/// Where the server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

/// The NBD port.
pub const DEFAULT_PORT: u16 = 10809;
/// Default data budget of the in-memory store.
pub const DEFAULT_MAX_MEMORY_BYTES: u64 = 1 << 30;
/// Largest READ or WRITE accepted (advertised as the maximum block size).
pub const DEFAULT_MAX_REQUEST_BYTES: u32 = 32 << 20;
/// Default bound on request and reply payload the server holds at once, all connections
/// together.
pub const DEFAULT_MAX_BUFFER_BYTES: u64 = 256 << 20;

/// How the server runs. [`ServeConfig::new`] gives the defaults.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub listen: Listen,
    /// Accept a TCP address that is not loopback (anyone who can reach it can write data).
    pub allow_any_address: bool,
    /// Real seconds per simulated second: 10 runs the drive ten times slower than real time,
    /// which gives the machine room to keep up.
    pub time_scale: f64,
    /// Keep the data in this sparse file instead of memory.
    pub backing: Option<PathBuf>,
    /// Data budget of the in-memory store; a write that would exceed it gets ENOSPC.
    pub max_memory_bytes: u64,
    /// Refuse requests not aligned to the device's logical block (EINVAL) instead of
    /// serving their bytes exactly and timing them as the enclosing blocks.
    pub strict_alignment: bool,
    pub max_connections: usize,
    /// Requests one connection may have in flight; beyond it the server stops reading.
    pub max_in_flight_requests: usize,
    /// Payload bytes one connection may have in flight.
    pub max_in_flight_bytes: u64,
    /// Payload bytes all connections together may have in flight (WRITE data received, READ
    /// data not yet handed to the socket); beyond it the server stops reading requests.
    pub max_buffer_bytes: u64,
    pub max_request_bytes: u32,
    /// A client must finish its whole handshake within this long.
    pub handshake_timeout: Duration,
    /// A client that takes none of its reply bytes for this long is disconnected (its
    /// buffered replies count against the server's budget).
    pub reply_stall_timeout: Duration,
    /// A request's header and payload must arrive within this long of its first byte, or
    /// the connection is closed.
    pub request_timeout: Duration,
    /// The export's name (the empty default name is accepted too) and description.
    pub export_name: String,
    pub description: String,
    pub log: Log,
}

impl ServeConfig {
    pub fn new(listen: Listen) -> ServeConfig {
        ServeConfig {
            listen,
            allow_any_address: false,
            time_scale: 1.0,
            backing: None,
            max_memory_bytes: DEFAULT_MAX_MEMORY_BYTES,
            strict_alignment: false,
            max_connections: 16,
            max_in_flight_requests: 256,
            max_in_flight_bytes: 64 << 20,
            max_buffer_bytes: DEFAULT_MAX_BUFFER_BYTES,
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            handshake_timeout: Duration::from_secs(10),
            reply_stall_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(10),
            export_name: "flashlab".into(),
            description: String::new(),
            log: Log::none(),
        }
    }

    /// The configuration errors, before anything is bound.
    pub fn validate(&self) -> Result<(), ServeError> {
        if let Listen::Tcp(addr) = &self.listen {
            if !addr.ip().is_loopback() && !self.allow_any_address {
                return Err(ServeError::NotLoopback { address: *addr });
            }
        }
        if !(self.time_scale.is_finite() && self.time_scale >= 1e-3 && self.time_scale <= 1e6) {
            return Err(ServeError::TimeScale {
                value: self.time_scale,
            });
        }
        let limit = |name: &'static str, ok: bool, value: String, valid: &'static str| {
            if ok {
                Ok(())
            } else {
                Err(ServeError::Limit { name, value, valid })
            }
        };
        limit(
            "max connections",
            (1..=1024).contains(&self.max_connections),
            self.max_connections.to_string(),
            "1 to 1024",
        )?;
        limit(
            "max in-flight requests",
            (1..=4096).contains(&self.max_in_flight_requests),
            self.max_in_flight_requests.to_string(),
            "1 to 4096",
        )?;
        limit(
            "max request bytes",
            (4096..=(1 << 30)).contains(&self.max_request_bytes),
            self.max_request_bytes.to_string(),
            "4 KiB to 1 GiB",
        )?;
        limit(
            "max in-flight bytes",
            self.max_in_flight_bytes >= u64::from(self.max_request_bytes),
            self.max_in_flight_bytes.to_string(),
            "at least the largest request",
        )?;
        limit(
            "max buffer memory",
            self.max_buffer_bytes >= self.max_in_flight_bytes,
            self.max_buffer_bytes.to_string(),
            "at least one connection's in-flight bytes (64 MiB by default)",
        )?;
        Ok(())
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{address} is not a loopback address: anyone who can reach it could read and overwrite the served data (use 127.0.0.1 or ::1, a Unix socket, or --listen-any to accept it anyway)")]
    NotLoopback { address: SocketAddr },
    #[error("time scale {}: expected a number from 0.001 to 1000000 (real seconds per simulated second; 10 runs the drive ten times slower than real time)", flashlab_engine::input::excerpt(&value.to_string()))]
    TimeScale { value: f64 },
    #[error("{name} {value}: expected {valid}")]
    Limit {
        name: &'static str,
        value: String,
        valid: &'static str,
    },
    #[error("cannot listen on {address}: {error}")]
    Bind {
        address: String,
        error: std::io::Error,
    },
    #[error("{path}: a server is already listening on this socket")]
    SocketInUse { path: PathBuf },
    #[error("{path} exists and is not a socket; refusing to replace it")]
    NotASocket { path: PathBuf },
    #[error("backing file {path}: {error}")]
    Backing {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("backing file {path}: {problem}")]
    BadBacking { path: PathBuf, problem: String },
    #[error("backing file {path} is in use by another server (two servers writing one file would corrupt each other's data)")]
    BackingInUse { path: PathBuf },
    #[error("starting a server thread: {0}")]
    Thread(std::io::Error),
}

impl ServeError {
    /// The user asked for something impossible (as opposed to the system failing).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            ServeError::NotLoopback { .. }
                | ServeError::TimeScale { .. }
                | ServeError::Limit { .. }
                | ServeError::NotASocket { .. }
                | ServeError::BadBacking { .. }
                | ServeError::BackingInUse { .. }
                | ServeError::SocketInUse { .. }
        ) || match self {
            // A socket path longer than a socket address holds (std says so without an OS
            // error number).
            ServeError::Bind { error, .. } if error.kind() == std::io::ErrorKind::InvalidInput => {
                true
            }
            // A path or address the user named that cannot be used (missing directory, no
            // permission, address taken), as opposed to the system running out of something.
            ServeError::Bind { error, .. } | ServeError::Backing { error, .. } => matches!(
                error.raw_os_error(),
                Some(
                    libc::ENOENT
                        | libc::EACCES
                        | libc::EPERM
                        | libc::ENOTDIR
                        | libc::EISDIR
                        | libc::EROFS
                        | libc::ENAMETOOLONG
                        | libc::ELOOP
                        | libc::EINVAL
                        | libc::EADDRINUSE
                        | libc::EADDRNOTAVAIL
                        | libc::ENXIO
                )
            ),
            _ => false,
        }
    }
}

/// Where the server reports what happens to connections (closed for a protocol violation,
/// a failed request). The library never prints by itself.
#[derive(Clone, Default)]
pub struct Log(Option<Arc<LogFn>>);

type LogFn = dyn Fn(&str) + Send + Sync;

impl Log {
    pub fn none() -> Log {
        Log(None)
    }

    pub fn new(f: impl Fn(&str) + Send + Sync + 'static) -> Log {
        Log(Some(Arc::new(f)))
    }

    pub fn emit(&self, msg: &str) {
        if let Some(f) = &self.0 {
            f(msg);
        }
    }
}

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Log(on)"
        } else {
            "Log(off)"
        })
    }
}

static SIGNALLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn on_stop_signal(_: libc::c_int) {
    // Only an atomic store: the one thing a signal handler may safely do here.
    SIGNALLED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Install SIGINT and SIGTERM handlers that set the returned flag, so that a server run
/// with it stops cleanly (closing connections, removing its socket, reporting).
pub fn stop_on_signals() -> &'static std::sync::atomic::AtomicBool {
    let handler = on_stop_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only stores to a static atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
    &SIGNALLED
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_refuses_public_addresses_bad_scales_and_limits() {
        let public: SocketAddr = "0.0.0.0:10809".parse().unwrap();
        let mut c = ServeConfig::new(Listen::Tcp(public));
        let e = c.validate().unwrap_err();
        assert!(
            e.is_bad_input() && e.to_string().contains("--listen-any"),
            "{e}"
        );
        c.allow_any_address = true;
        c.validate().unwrap();
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e7] {
            c.time_scale = bad;
            assert!(
                matches!(c.validate(), Err(ServeError::TimeScale { .. })),
                "{bad}"
            );
        }
        c.time_scale = 2.5;
        c.max_connections = 0;
        assert!(matches!(c.validate(), Err(ServeError::Limit { .. })));
        let v6: SocketAddr = "[::1]:1".parse().unwrap();
        ServeConfig::new(Listen::Tcp(v6)).validate().unwrap();
    }
}
