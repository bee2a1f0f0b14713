//! One client connection: the handshake (under one deadline), then a reader thread that
//! validates requests and hands them to the simulation thread, and a writer thread that sends
//! each reply when it is due. A request holds bytes of its connection's budget and of the
//! server's until its reply has gone to the socket, so a client that floods the server or
//! stops reading its replies is stopped by its own socket, and the payload the server buffers
//! stays under the server's budget.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::io::{self, BufWriter, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering as AtomicOrdering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::budget::{Budget, Hold, STOP_POLL};
use crate::pool::BufferPool;
use crate::proto;
use crate::sim::{Job, Op, Reply};
use crate::wire::{self, Export, Incoming, Negotiated};
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

    fn set_write_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_write_timeout(t),
            Stream::Unix(s) => s.set_write_timeout(t),
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
    /// Sum over replies of how long after its due time each reply was handed to the socket:
    /// the server's part of the transport overhead.
    pub reply_delay_sum_ns: AtomicU64,
    /// Connections closed because their client read no reply for the stall timeout.
    pub stalled_disconnects: AtomicU64,
}

/// Replies sent more than this after their due time count as late: the simulation or the
/// machine did not keep up with the time scale.
const LATE_TOLERANCE: Duration = Duration::from_millis(1);
/// How often a reply write blocked on a client that does not read looks again.
const WRITE_POLL: Duration = Duration::from_millis(200);
/// While other requests wait for the server's budget, a client that has taken no reply bytes
/// for this long is disconnected (it holds budget others need) rather than after the full
/// stall timeout.
const STALL_UNDER_PRESSURE: Duration = Duration::from_secs(1);
/// A reply due sooner than this is waited for by spinning: a sleeping thread wakes tens of
/// microseconds late (timer slack and scheduling), which is the size of a fast drive's
/// latency.
const SPIN_BEFORE_DUE: Duration = Duration::from_micros(60);

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

/// What the accept loop sees of a connection, to choose one to close when a new client
/// needs its slot.
#[derive(Debug)]
pub struct ConnState {
    base: Instant,
    /// Set once the handshake has ended and requests flow.
    transmission: AtomicBool,
    /// Nanoseconds after `base` of the last request read or reply sent.
    last_active_ns: AtomicU64,
    /// One more than the nanoseconds after `base` when the request being received began
    /// (its first header byte); 0 between requests.
    receiving_since_ns: AtomicU64,
    pub budget: Arc<Budget>,
}

impl ConnState {
    pub fn new(budget: Budget) -> ConnState {
        ConnState {
            base: Instant::now(),
            transmission: AtomicBool::new(false),
            last_active_ns: AtomicU64::new(0),
            receiving_since_ns: AtomicU64::new(0),
            budget: Arc::new(budget),
        }
    }

    fn touch(&self) {
        let ns = self.base.elapsed().as_nanos() as u64;
        self.last_active_ns.store(ns, AtomicOrdering::Relaxed);
    }

    fn begin_request(&self) {
        let ns = self.base.elapsed().as_nanos() as u64;
        self.receiving_since_ns
            .store(ns + 1, AtomicOrdering::Relaxed);
    }

    fn end_request(&self) {
        self.receiving_since_ns.store(0, AtomicOrdering::Relaxed);
    }

    /// How long the request being received (header or WRITE payload) has been arriving;
    /// `None` between requests.
    pub fn receiving_for(&self, now: Instant) -> Option<Duration> {
        let since = self.receiving_since_ns.load(AtomicOrdering::Relaxed);
        if since == 0 {
            return None;
        }
        Some(now.saturating_duration_since(self.base + Duration::from_nanos(since - 1)))
    }

    pub fn in_handshake(&self) -> bool {
        !self.transmission.load(AtomicOrdering::Relaxed)
    }

    /// How long the connection has gone without progress, and what it is waiting in: its
    /// handshake (from its start), a request half received (from its first byte), or
    /// otherwise since it last sent a request or took a reply.
    pub fn stillness(&self, now: Instant) -> (Duration, &'static str) {
        if self.in_handshake() {
            return (now.saturating_duration_since(self.base), "in its handshake");
        }
        if let Some(t) = self.receiving_for(now) {
            return (t, "a request half sent");
        }
        let last =
            self.base + Duration::from_nanos(self.last_active_ns.load(AtomicOrdering::Relaxed));
        let what = if self.budget.requests() > 0 {
            "replies not taken"
        } else {
            "idle"
        };
        (now.saturating_duration_since(last), what)
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
    pub state: Arc<ConnState>,
    /// The server-wide budget of payload bytes in flight.
    pub server_budget: Arc<Budget>,
    /// A client that takes no reply bytes for this long is disconnected.
    pub reply_stall_timeout: Duration,
    /// A request's header and payload must arrive within this long of its first byte.
    pub request_timeout: Duration,
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

/// A stream whose reads and writes all end by one instant.
struct Deadline<'a> {
    stream: &'a mut Stream,
    until: Instant,
    what: &'static str,
}

impl Deadline<'_> {
    fn remaining(&self) -> io::Result<Duration> {
        let left = self.until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("{} not finished in time", self.what),
            ));
        }
        Ok(left)
    }
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.remaining()?;
        self.stream.set_read_timeout(Some(left))?;
        self.stream.read(buf).map_err(|e| timed_out(e, self.what))
    }
}

impl Write for Deadline<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let left = self.remaining()?;
        self.stream.set_write_timeout(Some(left))?;
        self.stream.write(buf).map_err(|e| timed_out(e, self.what))
    }
    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}

/// A socket timeout (EAGAIN on Linux) said in words.
fn timed_out(e: io::Error, what: &str) -> io::Error {
    if matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    ) {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!("{what} not finished in time"),
        )
    } else {
        e
    }
}

fn serve_inner(mut stream: Stream, peer: &str, ctx: &ConnContext) -> io::Result<()> {
    let export = &ctx.export;
    // One deadline for the whole handshake: a client that trickles bytes must not hold a
    // connection slot longer than a client that says nothing.
    let negotiated = {
        let mut io = Deadline {
            until: Instant::now() + export.handshake_timeout,
            stream: &mut stream,
            what: "handshake",
        };
        wire::handshake(&mut io, export)?
    };
    match negotiated {
        Negotiated::Closed => {
            stream.shutdown();
            return Ok(());
        }
        Negotiated::Transmission => {}
    }
    // Reads between requests wait without a deadline (an idle client holds no budget and
    // gives its slot up at the cap); RequestStream sets one once a request begins.
    stream.set_read_timeout(None)?;
    // Reply writes wake this often to judge a client that is not reading (ReplySocket).
    stream.set_write_timeout(Some(WRITE_POLL))?;
    ctx.state.touch();
    ctx.state.transmission.store(true, AtomicOrdering::Relaxed);
    let (reply_tx, reply_rx) = mpsc::channel();
    let writer_stream = stream.try_clone()?;
    let writer = {
        let writer = Writer {
            server_budget: Arc::clone(&ctx.server_budget),
            stall: ctx.reply_stall_timeout,
            counters: Arc::clone(&ctx.counters),
            stop: Arc::clone(&ctx.stop),
            log: ctx.log.clone(),
            pool: Arc::clone(&ctx.pool),
            state: Arc::clone(&ctx.state),
            peer: peer.to_string(),
        };
        std::thread::Builder::new()
            .name("nbd-writer".into())
            .spawn(move || writer.run(writer_stream, reply_rx))?
    };
    let result = read_requests(&mut stream, ctx, &reply_tx);
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
    replies: &Sender<Reply>,
) -> io::Result<()> {
    let export = &ctx.export;
    let stopped = || io::Error::other("the server is shutting down");
    let mut input = RequestStream {
        stream,
        ctx,
        until: None,
        timeout_set: None,
    };
    loop {
        input.end_request();
        let incoming = wire::next_request(&mut input, export)?;
        let arrived_header = Instant::now();
        ctx.state.touch();
        let req = match incoming {
            Incoming::Done => return Ok(()),
            Incoming::Refused(req, error) => {
                let (hold, _) = Hold::take(&ctx.state.budget, &ctx.server_budget, 0, &ctx.stop)
                    .ok_or_else(stopped)?;
                let reply = Reply {
                    handle: req.handle,
                    error,
                    data: None,
                    due: arrived_header,
                    hold,
                };
                if replies.send(reply).is_err() {
                    return Ok(());
                }
                continue;
            }
            Incoming::Serve(req) => req,
        };
        // A WRITE's payload takes its budget as it arrives (Hold::grow).
        let budget_bytes = if req.kind == proto::CMD_READ {
            u64::from(req.len)
        } else {
            0
        };
        let (mut hold, in_flight) = Hold::take(
            &ctx.state.budget,
            &ctx.server_budget,
            budget_bytes,
            &ctx.stop,
        )
        .ok_or_else(stopped)?;
        ctx.counters
            .max_in_flight
            .fetch_max(in_flight as u64, AtomicOrdering::Relaxed);
        let fua = req.flags & proto::CMD_FLAG_FUA != 0;
        let op = match req.kind {
            proto::CMD_READ => Op::Read,
            proto::CMD_WRITE => Op::Write(input.payload(req.len as usize, &mut hold)?),
            proto::CMD_FLUSH => Op::Flush,
            proto::CMD_TRIM => Op::Trim,
            _ => Op::WriteZeroes {
                no_hole: req.flags & proto::CMD_FLAG_NO_HOLE != 0,
            },
        };
        // A write has arrived once its data has.
        let arrived = if req.kind == proto::CMD_WRITE {
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
            hold,
            reply_to: replies.clone(),
        };
        if ctx.jobs.send(job).is_err() {
            return Err(stopped());
        }
    }
}

/// Payload read at a time, its budget taken after each piece arrives: a connection holds at
/// most this much memory beyond its budget.
pub const PAYLOAD_PIECE_BYTES: usize = 128 * 1024;

/// The request side of a connection's socket after the handshake: waits without a deadline
/// for a request's first byte, then the whole request (header and payload) must arrive by
/// the request timeout. While others wait for the server's budget, a request that has
/// brought no byte for [`STALL_UNDER_PRESSURE`] ends the connection.
struct RequestStream<'a> {
    stream: &'a mut Stream,
    ctx: &'a ConnContext,
    /// The deadline of the request being received.
    until: Option<Instant>,
    /// The socket's read timeout as last set (a syscall saved when it does not change).
    timeout_set: Option<Option<Duration>>,
}

impl RequestStream<'_> {
    fn end_request(&mut self) {
        self.until = None;
        self.ctx.state.end_request();
    }

    fn set_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        if self.timeout_set != Some(t) {
            self.stream.set_read_timeout(t)?;
            self.timeout_set = Some(t);
        }
        Ok(())
    }

    /// A WRITE's payload of `len` bytes, read in pieces, each piece's budget taken as it
    /// arrives; the buffer grows with the bytes received.
    fn payload(&mut self, len: usize, hold: &mut Hold) -> io::Result<Vec<u8>> {
        let mut data = self.ctx.pool.take(len.min(PAYLOAD_PIECE_BYTES));
        data.clear();
        while data.len() < len {
            let got = data.len();
            let piece = (len - got).min(PAYLOAD_PIECE_BYTES);
            data.resize(got + piece, 0);
            let mut filled = 0;
            while filled < piece {
                match self.read(&mut data[got + filled..got + piece]) {
                    Ok(0) => {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "the client closed the connection inside a WRITE's payload",
                        ))
                    }
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            let until = self
                .until
                .unwrap_or_else(|| Instant::now() + self.ctx.request_timeout);
            hold.grow(piece as u64, &self.ctx.stop, until)?;
        }
        Ok(data)
    }
}

impl Read for RequestStream<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut last_byte = Instant::now();
        loop {
            let wait = match self.until {
                None => None,
                Some(until) => {
                    let now = Instant::now();
                    if now >= until {
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!(
                                "a request not received whole within {:.1} s of its first byte",
                                self.ctx.request_timeout.as_secs_f64()
                            ),
                        ));
                    }
                    if now.duration_since(last_byte) >= STALL_UNDER_PRESSURE
                        && self.ctx.server_budget.has_waiters()
                    {
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            "a request stalled while others waited for the server's buffer budget",
                        ));
                    }
                    Some((until - now).min(WRITE_POLL))
                }
            };
            self.set_timeout(wait)?;
            match self.stream.read(buf) {
                Ok(n) => {
                    if n > 0 && self.until.is_none() {
                        self.until = Some(Instant::now() + self.ctx.request_timeout);
                        self.ctx.state.begin_request();
                    }
                    return Ok(n);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    if self.ctx.stop.load(AtomicOrdering::Relaxed) {
                        return Err(io::Error::other("the server is shutting down"));
                    }
                    if self.until.is_none() {
                        last_byte = Instant::now();
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// Ask the kernel to wake this thread's timed sleeps on time: the default timer slack lets
/// a sleep end up to 50 µs late, which a client would see as drive latency.
pub fn tight_timers() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer and changes only this thread's slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// Wait for the next reply until `due`: block on the channel while it is far, spin for the
/// last few microseconds.
fn wait_for(rx: &Receiver<Reply>, due: Option<Instant>) -> Result<Option<Reply>, RecvTimeoutError> {
    let now = Instant::now();
    match due {
        Some(due) if due <= now + SPIN_BEFORE_DUE => {
            while Instant::now() < due {
                match rx.try_recv() {
                    Ok(r) => return Ok(Some(r)),
                    Err(mpsc::TryRecvError::Empty) => std::hint::spin_loop(),
                    Err(mpsc::TryRecvError::Disconnected) => {
                        return Err(RecvTimeoutError::Disconnected)
                    }
                }
            }
            Ok(None)
        }
        _ => {
            // Wake early enough to spin the rest of the way.
            let wait = due.map_or(STOP_POLL, |d| {
                (d - now).saturating_sub(SPIN_BEFORE_DUE / 2).min(STOP_POLL)
            });
            match rx.recv_timeout(wait) {
                Ok(r) => Ok(Some(r)),
                Err(RecvTimeoutError::Timeout) => Ok(None),
                Err(e) => Err(e),
            }
        }
    }
}

/// Send replies when they are due, until the reader and the simulation are done with this
/// connection. After a send error (or a client that stops reading for the stall timeout)
/// the socket is closed and the rest are dropped, their budget released with them.
struct Writer {
    server_budget: Arc<Budget>,
    stall: Duration,
    counters: Arc<ConnCounters>,
    stop: Arc<AtomicBool>,
    log: Log,
    pool: Arc<BufferPool>,
    state: Arc<ConnState>,
    peer: String,
}

impl Writer {
    fn run(self, stream: Stream, rx: Receiver<Reply>) {
        tight_timers();
        let Writer {
            server_budget,
            stall,
            counters,
            stop,
            log,
            pool,
            state,
            peer,
        } = self;
        let socket = ReplySocket {
            stream,
            server_budget,
            stall,
        };
        let mut out = BufWriter::with_capacity(64 * 1024, socket);
        let mut queue: BinaryHeap<Pending> = BinaryHeap::new();
        // Replies written to the buffer but not yet flushed keep their budget.
        let mut unflushed: Vec<Reply> = Vec::new();
        let mut seq = 0u64;
        let mut broken = false;
        let mut open = true;
        let fail = |out: &BufWriter<ReplySocket>, e: io::Error, broken: &mut bool| {
            if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::TimedOut {
                counters
                    .stalled_disconnects
                    .fetch_add(1, AtomicOrdering::Relaxed);
                log.emit(&format!("{peer}: {e}; closing"));
            } else {
                log.emit(&format!("{peer}: sending replies failed ({e}); closing"));
            }
            *broken = true;
            out.get_ref().stream.shutdown();
        };
        while open || !queue.is_empty() {
            let next_due = queue.peek().map(|p| p.reply.due);
            let received = if next_due.is_some_and(|d| d <= Instant::now()) {
                None
            } else if !open {
                // Only queued replies remain: wait for the next, or until stopped.
                sleep_towards(next_due);
                None
            } else {
                match wait_for(&rx, next_due) {
                    Ok(r) => r,
                    Err(_) => {
                        open = false;
                        None
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
            let now = Instant::now();
            while queue
                .peek()
                .is_some_and(|p| p.reply.due <= now || stopping || broken)
            {
                let Some(Pending { reply, .. }) = queue.pop() else {
                    break;
                };
                if broken {
                    continue;
                }
                let r = write_reply(&mut out, &reply, &counters);
                unflushed.push(reply);
                if let Err(e) = r {
                    fail(&out, e, &mut broken);
                }
            }
            if unflushed.is_empty() {
                continue;
            }
            if !broken {
                if let Err(e) = out.flush() {
                    fail(&out, e, &mut broken);
                }
            }
            let sent = Instant::now();
            state.touch();
            let timed = !stopping && !broken;
            for reply in unflushed.drain(..) {
                settle(reply, sent, timed, &counters, &pool);
            }
        }
        let _ = out.flush();
        out.get_ref().stream.shutdown();
    }
}

/// Write one reply's header, and its data when it succeeded, counting it.
fn write_reply(
    out: &mut BufWriter<ReplySocket>,
    reply: &Reply,
    counters: &ConnCounters,
) -> io::Result<()> {
    if reply.error != 0 {
        counters.error_replies.fetch_add(1, AtomicOrdering::Relaxed);
    }
    let head = proto::encode_reply(reply.error, reply.handle);
    let r = out.write_all(&head).and_then(|()| match &reply.data {
        Some(d) if reply.error == 0 => out.write_all(d),
        _ => Ok(()),
    });
    counters.replies.fetch_add(1, AtomicOrdering::Relaxed);
    r
}

/// A reply flushed at `sent`: its lateness counted when `timed` (not while stopping or
/// after a send error), its buffer back to the pool; dropping it gives its budget back.
fn settle(
    mut reply: Reply,
    sent: Instant,
    timed: bool,
    counters: &ConnCounters,
    pool: &BufferPool,
) {
    let late = sent.saturating_duration_since(reply.due);
    let late_ns = late.as_nanos() as u64;
    if timed {
        counters
            .reply_delay_sum_ns
            .fetch_add(late_ns, AtomicOrdering::Relaxed);
        if late > LATE_TOLERANCE {
            counters.late_replies.fetch_add(1, AtomicOrdering::Relaxed);
            counters
                .max_late_ns
                .fetch_max(late_ns, AtomicOrdering::Relaxed);
        }
    }
    if let Some(d) = reply.data.take() {
        pool.give(d);
    }
}

/// The reply side of a socket: a write blocked on a client that takes no bytes fails after
/// the stall timeout, or after [`STALL_UNDER_PRESSURE`] while others wait for the budget.
struct ReplySocket {
    stream: Stream,
    server_budget: Arc<Budget>,
    stall: Duration,
}

impl Write for ReplySocket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let start = Instant::now();
        loop {
            match self.stream.write(buf) {
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    let blocked = start.elapsed();
                    let pressed =
                        blocked >= STALL_UNDER_PRESSURE && self.server_budget.has_waiters();
                    if blocked >= self.stall || pressed {
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!(
                                "the client took no reply bytes for {:.1} s{}",
                                blocked.as_secs_f64(),
                                if pressed {
                                    " while others waited for the server's buffer budget"
                                } else {
                                    ""
                                }
                            ),
                        ));
                    }
                }
                r => return r,
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}

/// Wait part of the way to `due`: sleep while it is far (at most one stop-poll period),
/// spin once it is near.
fn sleep_towards(due: Option<Instant>) {
    let now = Instant::now();
    match due {
        Some(d) if d <= now => {}
        Some(d) if d <= now + SPIN_BEFORE_DUE => std::hint::spin_loop(),
        Some(d) => std::thread::sleep((d - now).saturating_sub(SPIN_BEFORE_DUE / 2).min(STOP_POLL)),
        None => std::thread::sleep(STOP_POLL),
    }
}
