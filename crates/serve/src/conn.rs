//! One client connection: the handshake, then a reader thread that validates requests and
//! hands them to the simulation thread, and a writer thread that sends each reply when it is
//! due. A per-connection budget of requests and bytes in flight stops the reader (and so the
//! client, through the socket) when a client floods the server.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::io::{self, BufWriter, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering as AtomicOrdering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::pool::BufferPool;
use crate::proto::{self, Request};
use crate::sim::{Job, Op, Reply};
use crate::Log;

/// A connected socket, TCP or Unix.
#[derive(Debug)]
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    pub fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
        })
    }

    pub fn shutdown(&self) {
        // Already closed by the peer is fine: the point is that nothing more flows.
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(Shutdown::Both),
            Stream::Unix(s) => s.shutdown(Shutdown::Both),
        };
    }

    fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(t),
            Stream::Unix(s) => s.set_read_timeout(t),
        }
    }

    pub fn set_blocking(&self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => {
                s.set_nonblocking(false)?;
                // Replies are small and latency is what is measured.
                s.set_nodelay(true)
            }
            Stream::Unix(s) => s.set_nonblocking(false),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
        }
    }
}

/// What every connection needs to know about the export and its limits.
#[derive(Debug, Clone)]
pub struct Export {
    pub name: String,
    pub description: String,
    pub size_bytes: u64,
    pub min_block_bytes: u32,
    pub preferred_block_bytes: u32,
    pub max_request_bytes: u32,
    pub strict_alignment: bool,
    pub max_in_flight_requests: usize,
    pub max_in_flight_bytes: u64,
    pub handshake_timeout: Duration,
}

/// Counters shared by all connection threads.
#[derive(Debug, Default)]
pub struct ConnCounters {
    pub error_replies: AtomicU64,
    pub hard_disconnects: AtomicU64,
    pub late_replies: AtomicU64,
    pub max_late_ns: AtomicU64,
    pub replies: AtomicU64,
    /// Highest number of requests one connection had in flight.
    pub max_in_flight: AtomicU64,
}

/// Replies sent more than this after their due time count as late: the simulation or the
/// machine did not keep up with the time scale.
const LATE_TOLERANCE: Duration = Duration::from_millis(1);
/// Options one handshake may send before it is cut off.
const MAX_OPTIONS: u32 = 1024;
/// Largest option payload accepted (export names are at most 4096 bytes).
const MAX_OPTION_BYTES: u32 = 8192;
/// How often a waiting writer looks at the stop flag.
const STOP_POLL: Duration = Duration::from_millis(50);
/// Buffer for discarding a refused write's payload.
const DISCARD_BYTES: usize = 64 * 1024;

/// Requests and bytes a connection has in flight, with a blocking acquire.
#[derive(Debug)]
struct Budget {
    state: Mutex<(usize, u64)>,
    freed: Condvar,
    max_requests: usize,
    max_bytes: u64,
}

impl Budget {
    fn acquire(&self, bytes: u64) -> usize {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        // A single request always fits when nothing else is in flight.
        while s.0 >= self.max_requests || (s.0 > 0 && s.1 + bytes > self.max_bytes) {
            s = self.freed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        s.0 += 1;
        s.1 += bytes;
        s.0
    }

    fn release(&self, bytes: u64) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.0 = s.0.saturating_sub(1);
        s.1 = s.1.saturating_sub(bytes);
        self.freed.notify_all();
    }
}

/// How the handshake ended.
enum Negotiated {
    Transmission,
    /// The client aborted, or asked for an export that does not exist.
    Closed,
}

fn handshake(stream: &mut Stream, export: &Export) -> io::Result<Negotiated> {
    let mut hello = [0u8; 18];
    hello[0..8].copy_from_slice(&proto::NBD_MAGIC.to_be_bytes());
    hello[8..16].copy_from_slice(&proto::IHAVEOPT.to_be_bytes());
    hello[16..18]
        .copy_from_slice(&(proto::FLAG_FIXED_NEWSTYLE | proto::FLAG_NO_ZEROES).to_be_bytes());
    stream.write_all(&hello)?;
    let client_flags = proto::read_u32(stream)?;
    if client_flags & !(proto::FLAG_C_FIXED_NEWSTYLE | proto::FLAG_C_NO_ZEROES) != 0 {
        return Err(protocol_error(format!(
            "unknown client flags {client_flags:#x}"
        )));
    }
    let no_zeroes = client_flags & proto::FLAG_C_NO_ZEROES != 0;
    for _ in 0..MAX_OPTIONS {
        let magic = proto::read_u64(stream)?;
        if magic != proto::IHAVEOPT {
            return Err(protocol_error(format!("bad option magic {magic:#x}")));
        }
        let option = proto::read_u32(stream)?;
        let len = proto::read_u32(stream)?;
        if len > MAX_OPTION_BYTES {
            return Err(protocol_error(format!(
                "option {option} carries {len} bytes (limit {MAX_OPTION_BYTES})"
            )));
        }
        let mut data = vec![0u8; len as usize];
        stream.read_exact(&mut data)?;
        match option {
            proto::OPT_EXPORT_NAME => {
                if !export.knows(&data) {
                    // This option cannot carry an error: the protocol says to disconnect.
                    return Ok(Negotiated::Closed);
                }
                let mut reply = Vec::with_capacity(10 + 124);
                reply.extend_from_slice(&export.size_bytes.to_be_bytes());
                reply.extend_from_slice(&proto::TRANSMISSION_FLAGS.to_be_bytes());
                if !no_zeroes {
                    reply.extend_from_slice(&[0u8; 124]);
                }
                stream.write_all(&reply)?;
                return Ok(Negotiated::Transmission);
            }
            proto::OPT_ABORT => {
                // The client may already have gone; its ACK is a courtesy.
                let _ = proto::write_option_reply(stream, option, proto::REP_ACK, &[]);
                return Ok(Negotiated::Closed);
            }
            proto::OPT_LIST => {
                if len != 0 {
                    proto::write_option_reply(
                        stream,
                        option,
                        proto::REP_ERR_INVALID,
                        b"NBD_OPT_LIST takes no data",
                    )?;
                    continue;
                }
                let mut entry = Vec::with_capacity(4 + export.name.len());
                entry.extend_from_slice(&(export.name.len() as u32).to_be_bytes());
                entry.extend_from_slice(export.name.as_bytes());
                proto::write_option_reply(stream, option, proto::REP_SERVER, &entry)?;
                proto::write_option_reply(stream, option, proto::REP_ACK, &[])?;
            }
            proto::OPT_INFO | proto::OPT_GO => {
                if info_reply(stream, option, &data, export)? && option == proto::OPT_GO {
                    return Ok(Negotiated::Transmission);
                }
            }
            _ => {
                proto::write_option_reply(
                    stream,
                    option,
                    proto::REP_ERR_UNSUP,
                    b"option not supported",
                )?;
            }
        }
    }
    Err(protocol_error(format!("more than {MAX_OPTIONS} options")))
}

/// Answer NBD_OPT_INFO or NBD_OPT_GO; true when the export was described and acknowledged.
fn info_reply(stream: &mut Stream, option: u32, data: &[u8], export: &Export) -> io::Result<bool> {
    let parsed = (|| {
        let name_len = proto::be32(data.get(0..4)?) as usize;
        let name = data.get(4..4 + name_len)?;
        let count = proto::be16(data.get(4 + name_len..6 + name_len)?) as usize;
        let rest = data.get(6 + name_len..)?;
        if rest.len() != 2 * count {
            return None;
        }
        let infos: Vec<u16> = rest.chunks(2).map(proto::be16).collect();
        Some((name, infos))
    })();
    let Some((name, infos)) = parsed else {
        proto::write_option_reply(
            stream,
            option,
            proto::REP_ERR_INVALID,
            b"malformed NBD_OPT_INFO/NBD_OPT_GO data",
        )?;
        return Ok(false);
    };
    if !export.knows(name) {
        let msg = format!(
            "no export named '{}'; this server has '{}' (or the default, '')",
            String::from_utf8_lossy(name),
            export.name
        );
        proto::write_option_reply(stream, option, proto::REP_ERR_UNKNOWN, msg.as_bytes())?;
        return Ok(false);
    }
    let mut info = Vec::with_capacity(16);
    info.extend_from_slice(&proto::INFO_EXPORT.to_be_bytes());
    info.extend_from_slice(&export.size_bytes.to_be_bytes());
    info.extend_from_slice(&proto::TRANSMISSION_FLAGS.to_be_bytes());
    proto::write_option_reply(stream, option, proto::REP_INFO, &info)?;
    // Block sizes are always sent: clients that know them align their requests, which is
    // what a drive needs; the server still accepts unaligned requests unless strict.
    let mut sizes = Vec::with_capacity(14);
    sizes.extend_from_slice(&proto::INFO_BLOCK_SIZE.to_be_bytes());
    sizes.extend_from_slice(&export.min_block_bytes.to_be_bytes());
    sizes.extend_from_slice(&export.preferred_block_bytes.to_be_bytes());
    sizes.extend_from_slice(&export.max_request_bytes.to_be_bytes());
    proto::write_option_reply(stream, option, proto::REP_INFO, &sizes)?;
    for kind in infos {
        let text = match kind {
            proto::INFO_NAME => &export.name,
            proto::INFO_DESCRIPTION => &export.description,
            _ => continue,
        };
        let mut v = Vec::with_capacity(2 + text.len());
        v.extend_from_slice(&kind.to_be_bytes());
        v.extend_from_slice(text.as_bytes());
        proto::write_option_reply(stream, option, proto::REP_INFO, &v)?;
    }
    proto::write_option_reply(stream, option, proto::REP_ACK, &[])?;
    Ok(true)
}

impl Export {
    /// The empty name is the default export; the device's name is the other spelling.
    fn knows(&self, name: &[u8]) -> bool {
        name.is_empty() || name == self.name.as_bytes()
    }
}

fn protocol_error(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// A reply in the writer's queue, ordered by due time, then by arrival.
struct Pending {
    seq: u64,
    reply: Reply,
}

impl PartialEq for Pending {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pending {
    // Reversed: BinaryHeap is a max-heap and the earliest due reply must come out first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.reply.due, o.seq).cmp(&(self.reply.due, self.seq))
    }
}

/// Everything a connection thread shares with the server.
pub struct ConnContext {
    pub export: Arc<Export>,
    pub jobs: Sender<Job>,
    pub counters: Arc<ConnCounters>,
    pub stop: Arc<AtomicBool>,
    pub log: Log,
    pub pool: Arc<BufferPool>,
}

/// Serve one connection to its end; runs on its own thread.
pub fn serve(stream: Stream, peer: String, ctx: ConnContext) {
    if let Err(e) = serve_inner(stream, &peer, &ctx) {
        ctx.counters
            .hard_disconnects
            .fetch_add(1, AtomicOrdering::Relaxed);
        ctx.log.emit(&format!("{peer}: connection closed: {e}"));
    }
}

fn serve_inner(mut stream: Stream, peer: &str, ctx: &ConnContext) -> io::Result<()> {
    let export = &ctx.export;
    // A client that connects and then says nothing must not hold a connection slot forever.
    stream.set_read_timeout(Some(export.handshake_timeout))?;
    match handshake(&mut stream, export)? {
        Negotiated::Closed => {
            stream.shutdown();
            return Ok(());
        }
        Negotiated::Transmission => {}
    }
    stream.set_read_timeout(None)?;
    let budget = Arc::new(Budget {
        state: Mutex::new((0, 0)),
        freed: Condvar::new(),
        max_requests: export.max_in_flight_requests.max(1),
        max_bytes: export.max_in_flight_bytes,
    });
    let (reply_tx, reply_rx) = mpsc::channel();
    let writer_stream = stream.try_clone()?;
    let writer = {
        let budget = Arc::clone(&budget);
        let counters = Arc::clone(&ctx.counters);
        let stop = Arc::clone(&ctx.stop);
        let log = ctx.log.clone();
        let pool = Arc::clone(&ctx.pool);
        let peer = peer.to_string();
        let writer = Writer {
            budget,
            counters,
            stop,
            log,
            pool,
            peer,
        };
        std::thread::Builder::new()
            .name("nbd-writer".into())
            .spawn(move || writer.run(writer_stream, reply_rx))?
    };
    let result = read_requests(&mut stream, ctx, &budget, &reply_tx);
    if result.is_err() {
        // A broken client gets a hard disconnect: pending replies are dropped.
        stream.shutdown();
    }
    drop(reply_tx);
    // The writer ends once the simulation thread has answered everything this connection
    // sent; it closes the socket.
    let _ = writer.join();
    result
}

/// Read and validate requests until the client disconnects.
fn read_requests(
    stream: &mut Stream,
    ctx: &ConnContext,
    budget: &Budget,
    replies: &Sender<Reply>,
) -> io::Result<()> {
    let export = &ctx.export;
    let mut head = [0u8; proto::REQUEST_BYTES];
    loop {
        match stream.read_exact(&mut head) {
            Ok(()) => {}
            // The client went away between requests: nothing is owed to anyone.
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
        let arrived_header = Instant::now();
        let Some(req) = Request::decode(&head) else {
            return Err(protocol_error(format!(
                "bad request magic {:#x}",
                proto::be32(&head[0..4])
            )));
        };
        if req.kind == proto::CMD_DISC {
            return Ok(());
        }
        let payload = if req.kind == proto::CMD_WRITE {
            req.len
        } else {
            0
        };
        if let Some(error) = check(&req, export) {
            // Refused writes still carry their payload, which is skipped to stay in step.
            discard(stream, payload)?;
            budget.acquire(0);
            let reply = Reply {
                handle: req.handle,
                error,
                data: None,
                due: arrived_header,
                budget_bytes: 0,
            };
            if replies.send(reply).is_err() {
                return Ok(());
            }
            continue;
        }
        let budget_bytes = if matches!(req.kind, proto::CMD_READ | proto::CMD_WRITE) {
            u64::from(req.len)
        } else {
            0
        };
        let in_flight = budget.acquire(budget_bytes) as u64;
        ctx.counters
            .max_in_flight
            .fetch_max(in_flight, AtomicOrdering::Relaxed);
        let fua = req.flags & proto::CMD_FLAG_FUA != 0;
        let op = match req.kind {
            proto::CMD_READ => Op::Read,
            proto::CMD_WRITE => {
                let mut data = ctx.pool.take(req.len as usize);
                stream.read_exact(&mut data)?;
                Op::Write(data)
            }
            proto::CMD_FLUSH => Op::Flush,
            proto::CMD_TRIM => Op::Trim,
            _ => Op::WriteZeroes {
                no_hole: req.flags & proto::CMD_FLAG_NO_HOLE != 0,
            },
        };
        // A write has arrived once its data has.
        let arrived = if payload > 0 {
            Instant::now()
        } else {
            arrived_header
        };
        let job = Job {
            handle: req.handle,
            op,
            offset: req.offset,
            len: u64::from(req.len),
            fua,
            arrived,
            budget_bytes,
            reply_to: replies.clone(),
        };
        if ctx.jobs.send(job).is_err() {
            return Err(io::Error::other("the server is shutting down"));
        }
    }
}

/// The error a request gets without reaching the device, if any.
fn check(req: &Request, export: &Export) -> Option<u32> {
    let known = matches!(
        req.kind,
        proto::CMD_READ
            | proto::CMD_WRITE
            | proto::CMD_FLUSH
            | proto::CMD_TRIM
            | proto::CMD_WRITE_ZEROES
    );
    if !known || req.flags & !(proto::CMD_FLAG_FUA | proto::CMD_FLAG_NO_HOLE) != 0 {
        return Some(proto::EINVAL);
    }
    if req.kind == proto::CMD_FLUSH {
        return None;
    }
    if req.len == 0 {
        return Some(proto::EINVAL);
    }
    let carries_data = matches!(req.kind, proto::CMD_READ | proto::CMD_WRITE);
    if carries_data && req.len > export.max_request_bytes {
        return Some(proto::EINVAL);
    }
    if req
        .offset
        .checked_add(u64::from(req.len))
        .is_none_or(|end| end > export.size_bytes)
    {
        // The protocol asks for ENOSPC on writes past the end and EINVAL otherwise.
        return Some(if req.kind == proto::CMD_WRITE {
            proto::ENOSPC
        } else {
            proto::EINVAL
        });
    }
    let b = u64::from(export.min_block_bytes.max(1));
    if export.strict_alignment
        && (!req.offset.is_multiple_of(b) || !u64::from(req.len).is_multiple_of(b))
    {
        return Some(proto::EINVAL);
    }
    None
}

fn discard(stream: &mut Stream, mut len: u32) -> io::Result<()> {
    let mut sink = [0u8; DISCARD_BYTES];
    while len > 0 {
        let n = (len as usize).min(DISCARD_BYTES);
        stream.read_exact(&mut sink[..n])?;
        len -= n as u32;
    }
    Ok(())
}

/// Send replies when they are due, until the reader and the simulation are done with this
/// connection. After a send error the socket is closed and the rest are dropped (their
/// budget still released, so the reader never waits forever).
struct Writer {
    budget: Arc<Budget>,
    counters: Arc<ConnCounters>,
    stop: Arc<AtomicBool>,
    log: Log,
    pool: Arc<BufferPool>,
    peer: String,
}

impl Writer {
    fn run(self, stream: Stream, rx: Receiver<Reply>) {
        let Writer {
            budget,
            counters,
            stop,
            log,
            pool,
            peer,
        } = self;
        let mut out = BufWriter::with_capacity(64 * 1024, stream);
        let mut queue: BinaryHeap<Pending> = BinaryHeap::new();
        let mut seq = 0u64;
        let mut broken = false;
        let mut open = true;
        while open || !queue.is_empty() {
            let now = Instant::now();
            let next_due = queue.peek().map(|p| p.reply.due);
            let received = match next_due {
                Some(due) if due <= now => None,
                _ if !open => {
                    // Only queued replies remain: sleep until the next, or until stopped.
                    let wait = next_due.map_or(STOP_POLL, |d| (d - now).min(STOP_POLL));
                    std::thread::sleep(wait);
                    None
                }
                _ => {
                    let wait = next_due.map_or(STOP_POLL, |d| (d - now).min(STOP_POLL));
                    match rx.recv_timeout(wait) {
                        Ok(r) => Some(r),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => {
                            open = false;
                            None
                        }
                    }
                }
            };
            if let Some(reply) = received {
                seq += 1;
                queue.push(Pending { seq, reply });
                // Take whatever else is already waiting before sleeping again.
                while let Ok(reply) = rx.try_recv() {
                    seq += 1;
                    queue.push(Pending { seq, reply });
                }
            }
            let stopping = stop.load(AtomicOrdering::Relaxed);
            let mut sent_any = false;
            let now = Instant::now();
            while queue
                .peek()
                .is_some_and(|p| p.reply.due <= now || stopping || broken)
            {
                let Some(Pending { reply, .. }) = queue.pop() else {
                    break;
                };
                budget.release(reply.budget_bytes);
                if broken {
                    continue;
                }
                let late = now.saturating_duration_since(reply.due);
                if late > LATE_TOLERANCE && !stopping {
                    counters.late_replies.fetch_add(1, AtomicOrdering::Relaxed);
                    counters
                        .max_late_ns
                        .fetch_max(late.as_nanos() as u64, AtomicOrdering::Relaxed);
                }
                if reply.error != 0 {
                    counters.error_replies.fetch_add(1, AtomicOrdering::Relaxed);
                }
                let head = proto::encode_reply(reply.error, reply.handle);
                let r = out.write_all(&head).and_then(|()| match &reply.data {
                    Some(d) if reply.error == 0 => out.write_all(d),
                    _ => Ok(()),
                });
                counters.replies.fetch_add(1, AtomicOrdering::Relaxed);
                if let Some(d) = reply.data {
                    pool.give(d);
                }
                sent_any = true;
                if let Err(e) = r {
                    log.emit(&format!("{peer}: sending a reply failed ({e}); closing"));
                    broken = true;
                    out.get_ref().shutdown();
                }
            }
            if sent_any && !broken {
                if let Err(e) = out.flush() {
                    log.emit(&format!("{peer}: sending replies failed ({e}); closing"));
                    broken = true;
                    out.get_ref().shutdown();
                }
            }
        }
        let _ = out.flush();
        out.get_ref().shutdown();
    }
}
