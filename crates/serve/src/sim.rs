//! The simulation thread: one device and one data store, fed by every connection in arrival
//! order. Real time enters only here, through [`TimeMap`]: a request arriving `r` ns after
//! the start is submitted at simulated `r / scale` ns, and its reply is due at real
//! `done × scale` ns. The device itself sees only simulated nanoseconds.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use flashlab_engine::{BlockDevice, DeviceError, IoRequest};

use crate::budget::Hold;
use crate::pool::BufferPool;
use crate::proto;
use crate::store::{Store, StoreError};

/// Maps real instants to simulated nanoseconds and back.
#[derive(Debug, Clone, Copy)]
pub struct TimeMap {
    start: Instant,
    /// Real seconds per simulated second.
    scale: f64,
}

/// Far enough in the future to mean "never" without overflowing `Instant` arithmetic.
const MAX_REAL_OFFSET_NS: f64 = 1e18;

impl TimeMap {
    pub fn new(start: Instant, scale: f64) -> TimeMap {
        TimeMap { start, scale }
    }

    pub fn sim_ns(&self, real: Instant) -> u64 {
        let real_ns = real.saturating_duration_since(self.start).as_nanos() as f64;
        (real_ns / self.scale) as u64
    }

    pub fn real(&self, sim_ns: u64) -> Instant {
        let real_ns = (sim_ns as f64 * self.scale).min(MAX_REAL_OFFSET_NS);
        self.start + Duration::from_nanos(real_ns as u64)
    }
}

/// What a request does to the data and to the device.
#[derive(Debug)]
pub enum Op {
    Read,
    Write(Vec<u8>),
    Flush,
    Trim,
    /// Zeroes that may stay unallocated (`no_hole == false`: the drive deallocates them)
    /// or must be written (`NBD_CMD_FLAG_NO_HOLE`).
    WriteZeroes {
        no_hole: bool,
    },
}

/// A validated request on its way to the simulation thread.
#[derive(Debug)]
pub struct Job {
    pub handle: u64,
    pub op: Op,
    pub offset: u64,
    pub len: u64,
    pub fua: bool,
    pub arrived: Instant,
    /// The request's share of the in-flight budgets, passed on to its reply.
    pub hold: Hold,
    pub reply_to: Sender<Reply>,
}

/// A reply waiting for its due time in a connection's writer.
#[derive(Debug)]
pub struct Reply {
    pub handle: u64,
    pub error: u32,
    /// Read data (only with `error == 0`).
    pub data: Option<Vec<u8>>,
    pub due: Instant,
    /// Budget held until the reply has been handed to the socket.
    pub hold: Hold,
}

/// What the simulation thread counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimStats {
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub trims: u64,
    pub write_zeroes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Writes refused because the memory budget was full.
    pub no_space_errors: u64,
    /// Requests the device or the backing file failed.
    pub io_errors: u64,
    /// Requests that waited for a free device queue slot.
    pub host_queued: u64,
    pub peak_store_bytes: u64,
    /// Sums of simulated latency (arrival to completion, host queueing included) of
    /// successful reads and writes: what a client should see, scaled, before overheads.
    pub read_latency_sum_ns: u64,
    pub write_latency_sum_ns: u64,
    /// Simulated time of the last submission.
    pub last_submit_ns: u64,
}

/// The one simulation thread's state.
pub struct Simulation<D> {
    device: D,
    store: Store,
    clock: TimeMap,
    /// Device-side bytes per request at most (larger zeroing is split into such pieces).
    max_piece_bytes: u64,
    block_bytes: u64,
    queue_limit: usize,
    /// Completion times of commands the device holds, to queue on the host beyond its depth.
    outstanding: BinaryHeap<Reverse<u64>>,
    last_submit_ns: u64,
    stats: SimStats,
    log: crate::Log,
    pool: Arc<BufferPool>,
    /// The device compresses: each write's data is measured for it.
    measure_data: bool,
}

impl<D: BlockDevice> Simulation<D> {
    pub fn new(
        device: D,
        store: Store,
        clock: TimeMap,
        max_piece_bytes: u64,
        in_flight_bound: usize,
        log: crate::Log,
        pool: Arc<BufferPool>,
    ) -> Simulation<D> {
        let block_bytes = device.logical_block_bytes().max(1);
        let queue_limit = (device.queue_depth_limit() as usize).clamp(1, in_flight_bound.max(1));
        Simulation {
            store,
            clock,
            max_piece_bytes: max_piece_bytes.max(block_bytes),
            block_bytes,
            queue_limit,
            outstanding: BinaryHeap::with_capacity(queue_limit + 1),
            last_submit_ns: 0,
            stats: SimStats::default(),
            measure_data: device.compresses_data(),
            device,
            log,
            pool,
        }
    }

    /// Serve jobs until every sender is gone; give back the device and the counts.
    pub fn run(mut self, jobs: Receiver<Job>) -> (D, Store, SimStats) {
        while let Ok(job) = jobs.recv() {
            let reply_to = job.reply_to.clone();
            let reply = self.process(job);
            // A closed connection no longer wants its reply.
            let _ = reply_to.send(reply);
        }
        self.stats.last_submit_ns = self.last_submit_ns;
        (self.device, self.store, self.stats)
    }

    /// The simulated submission time of a request arriving now: monotone, and after a free
    /// device queue slot.
    fn submit_time(&mut self, arrived: Instant) -> u64 {
        let mut t = self.clock.sim_ns(arrived).max(self.last_submit_ns);
        while self.outstanding.peek().is_some_and(|&Reverse(d)| d <= t) {
            self.outstanding.pop();
        }
        if self.outstanding.len() >= self.queue_limit {
            if let Some(Reverse(d)) = self.outstanding.pop() {
                t = t.max(d);
                self.stats.host_queued += 1;
            }
        }
        self.last_submit_ns = t;
        t
    }

    fn align_out(&self, offset: u64, len: u64) -> (u64, u64) {
        let b = self.block_bytes;
        let start = offset / b * b;
        let end = (offset + len).div_ceil(b) * b;
        let end = end.min(self.device.capacity_bytes() / b * b).max(start);
        (start, end - start)
    }

    fn align_in(&self, offset: u64, len: u64) -> (u64, u64) {
        let b = self.block_bytes;
        let start = offset.div_ceil(b) * b;
        let end = (offset + len) / b * b;
        (start, end.saturating_sub(start))
    }

    fn submit(&mut self, now_ns: u64, req: IoRequest) -> Result<u64, DeviceError> {
        if req.len_bytes == 0 && req.kind != flashlab_engine::IoKind::Flush {
            return Ok(now_ns);
        }
        let c = self.device.submit(now_ns, &req)?;
        Ok(c.done_ns)
    }

    /// Device timing of a request whose data part succeeded.
    fn time(&mut self, now_ns: u64, job: &Job) -> Result<u64, DeviceError> {
        match &job.op {
            Op::Read => {
                let (o, n) = self.align_out(job.offset, job.len);
                self.submit(now_ns, IoRequest::read(o, n))
            }
            Op::Write(data) => {
                let (o, n) = self.align_out(job.offset, job.len);
                let mut req = IoRequest::write(o, n);
                req.fua = job.fua;
                if self.measure_data {
                    req.compressible_percent =
                        flashlab_engine::compress::compressible_percent(data);
                }
                self.submit(now_ns, req)
            }
            Op::Flush => self.submit(now_ns, IoRequest::flush()),
            // A trim deallocates only what it covers entirely, so it is narrowed, not widened.
            Op::Trim | Op::WriteZeroes { no_hole: false } => {
                let (o, n) = self.align_in(job.offset, job.len);
                self.submit(now_ns, IoRequest::trim(o, n))
            }
            Op::WriteZeroes { no_hole: true } => {
                let (mut o, n) = self.align_out(job.offset, job.len);
                let end = o + n;
                let mut done = now_ns;
                while o < end {
                    let piece = (end - o).min(self.max_piece_bytes);
                    // Zeros written out.
                    let mut req = IoRequest::write(o, piece).with_compressible_percent(100);
                    req.fua = job.fua;
                    done = done.max(self.submit(now_ns, req)?);
                    o += piece;
                }
                Ok(done)
            }
        }
    }

    fn process(&mut self, job: Job) -> Reply {
        let mut reply = self.serve(&job);
        reply.hold = job.hold;
        if let Op::Write(buf) = job.op {
            self.pool.give(buf);
        }
        reply
    }

    fn serve(&mut self, job: &Job) -> Reply {
        let mut reply = Reply {
            handle: job.handle,
            error: 0,
            data: None,
            due: job.arrived,
            hold: Hold::none(),
        };
        let data_result = match &job.op {
            Op::Read => {
                self.stats.reads += 1;
                let mut buf = self.pool.take(job.len as usize);
                let r = self.store.read(job.offset, &mut buf);
                reply.data = Some(buf);
                r
            }
            Op::Write(data) => {
                self.stats.writes += 1;
                self.store.write(job.offset, data)
            }
            Op::Flush => {
                self.stats.flushes += 1;
                self.store.flush()
            }
            Op::Trim => {
                self.stats.trims += 1;
                self.store.zero(job.offset, job.len)
            }
            Op::WriteZeroes { .. } => {
                self.stats.write_zeroes += 1;
                self.store.zero(job.offset, job.len)
            }
        };
        if let Err(e) = data_result {
            if let Some(buf) = reply.data.take() {
                self.pool.give(buf);
            }
            reply.error = match e {
                StoreError::NoSpace { .. } => {
                    self.stats.no_space_errors += 1;
                    proto::ENOSPC
                }
                StoreError::Io(_) => {
                    self.stats.io_errors += 1;
                    proto::EIO
                }
            };
            self.log.emit(&format!(
                "request at byte {} of {} bytes failed: {e}",
                job.offset, job.len
            ));
            return reply;
        }
        if job.fua && matches!(job.op, Op::Write(_) | Op::WriteZeroes { .. }) {
            if let Err(e) = self.store.flush() {
                self.stats.io_errors += 1;
                reply.error = proto::EIO;
                self.log
                    .emit(&format!("flushing the backing file failed: {e}"));
                return reply;
            }
        }
        self.stats.peak_store_bytes = self.stats.peak_store_bytes.max(self.store.memory_bytes());
        let arrived_ns = self.clock.sim_ns(job.arrived);
        let now_ns = self.submit_time(job.arrived);
        match self.time(now_ns, job) {
            Ok(done_ns) => {
                self.outstanding.push(Reverse(done_ns));
                let latency_ns = done_ns.saturating_sub(arrived_ns);
                match &job.op {
                    Op::Read => {
                        self.stats.bytes_read += job.len;
                        self.stats.read_latency_sum_ns += latency_ns;
                    }
                    Op::Write(_) => {
                        self.stats.bytes_written += job.len;
                        self.stats.write_latency_sum_ns += latency_ns;
                    }
                    _ => {}
                }
                reply.due = self.clock.real(done_ns);
            }
            Err(e) => {
                self.stats.io_errors += 1;
                // NBD's answer to a write on a read-only export; anything else is an I/O error.
                reply.error = match e {
                    DeviceError::ReadOnly { .. } => proto::EPERM,
                    _ => proto::EIO,
                };
                if let Some(buf) = reply.data.take() {
                    self.pool.give(buf);
                }
                self.log.emit(&format!(
                    "the simulated device failed a request at byte {}: {e}",
                    job.offset
                ));
            }
        }
        reply
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemStore;
    use flashlab_engine::{Completion, IoKind};
    use std::sync::mpsc;

    /// A device whose every command takes a fixed time after submission, with a queue depth.
    struct Fixed {
        latency_ns: u64,
        depth: u32,
        seen: Vec<(u64, IoKind, u64, u64)>,
        /// Compresses what it is written; the data content of each write it saw.
        compresses: bool,
        data: Vec<u8>,
    }

    impl BlockDevice for Fixed {
        fn capacity_bytes(&self) -> u64 {
            1 << 30
        }
        fn logical_block_bytes(&self) -> u64 {
            512
        }
        fn queue_depth_limit(&self) -> u32 {
            self.depth
        }
        fn compresses_data(&self) -> bool {
            self.compresses
        }
        fn prefetch(&self, _req: &IoRequest, _stage: flashlab_engine::PrefetchStage) {}
        fn submit(&mut self, now_ns: u64, req: &IoRequest) -> Result<Completion, DeviceError> {
            self.seen
                .push((now_ns, req.kind, req.offset_bytes, req.len_bytes));
            if req.kind == IoKind::Write {
                self.data.push(req.compressible_percent);
            }
            Ok(Completion {
                accepted_ns: now_ns,
                done_ns: now_ns + self.latency_ns,
            })
        }
    }

    fn sim(depth: u32, scale: f64, start: Instant) -> Simulation<Fixed> {
        sim_of(depth, scale, start, false)
    }

    fn sim_of(depth: u32, scale: f64, start: Instant, compresses: bool) -> Simulation<Fixed> {
        let dev = Fixed {
            latency_ns: 1_000,
            depth,
            seen: Vec::new(),
            compresses,
            data: Vec::new(),
        };
        Simulation::new(
            dev,
            Store::Memory(MemStore::new(1 << 20)),
            TimeMap::new(start, scale),
            32 << 20,
            64,
            crate::Log::none(),
            Arc::default(),
        )
    }

    fn job(op: Op, offset: u64, len: u64, arrived: Instant, tx: &Sender<Reply>) -> Job {
        Job {
            handle: offset,
            op,
            offset,
            len,
            fua: false,
            arrived,
            hold: Hold::none(),
            reply_to: tx.clone(),
        }
    }

    #[test]
    fn time_map_scales_both_ways() {
        let start = Instant::now();
        let m = TimeMap::new(start, 10.0);
        assert_eq!(m.sim_ns(start + Duration::from_micros(50)), 5_000);
        assert_eq!(m.real(5_000), start + Duration::from_micros(50));
        // Before the start maps to 0, not a wrap.
        assert_eq!(
            TimeMap::new(start + Duration::from_secs(1), 1.0).sim_ns(start),
            0
        );
    }

    #[test]
    fn reply_is_due_at_scaled_completion_and_reads_see_earlier_writes() {
        let start = Instant::now();
        let mut s = sim(32, 4.0, start);
        let (tx, _rx) = mpsc::channel();
        let at = start + Duration::from_micros(40); // 10 µs simulated
        let w = s.process(job(Op::Write(vec![9u8; 1000]), 100, 1000, at, &tx));
        assert_eq!(w.error, 0);
        // Submitted at 10 µs, done at 11 µs simulated, due 44 µs after the start.
        assert_eq!(w.due, start + Duration::from_micros(44));
        // Misaligned bytes are served exactly; the device sees whole 512-byte blocks.
        assert_eq!(s.device.seen[0], (10_000, IoKind::Write, 0, 1536));
        let r = s.process(job(Op::Read, 100, 1000, at, &tx));
        assert_eq!(r.data.as_deref(), Some(&[9u8; 1000][..]));
        // Arrival times that go backwards are submitted at the last submission time.
        let early = s.process(job(Op::Read, 0, 512, start, &tx));
        assert_eq!(s.device.seen[2].0, 10_000);
        assert_eq!(early.due, start + Duration::from_micros(44));
    }

    #[test]
    fn a_compressing_device_is_told_how_compressible_each_write_is() {
        let start = Instant::now();
        let (tx, _rx) = mpsc::channel();
        let mut x = 1u64;
        let random: Vec<u8> = (0..4096)
            .map(|_| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                (x >> 56) as u8
            })
            .collect();
        for compresses in [true, false] {
            let mut s = sim_of(32, 1.0, start, compresses);
            s.process(job(Op::Write(vec![0u8; 4096]), 0, 4096, start, &tx));
            s.process(job(Op::Write(random.clone()), 4096, 4096, start, &tx));
            let zeros = s.device.data[0];
            if compresses {
                assert!(zeros >= 99, "{zeros}");
                assert_eq!(s.device.data[1], 0);
            } else {
                // Nothing measured for a drive that would not use it.
                assert_eq!(s.device.data, [0, 0]);
            }
        }
    }

    #[test]
    fn requests_beyond_the_device_queue_depth_wait_for_a_completion() {
        let start = Instant::now();
        let mut s = sim(2, 1.0, start);
        let (tx, _rx) = mpsc::channel();
        for i in 0..3 {
            s.process(job(Op::Read, i * 512, 512, start, &tx));
        }
        let times: Vec<u64> = s.device.seen.iter().map(|x| x.0).collect();
        assert_eq!(times, vec![0, 0, 1_000]);
        assert_eq!(s.stats.host_queued, 1);
    }

    #[test]
    fn trims_are_narrowed_and_memory_exhaustion_is_enospc_without_device_work() {
        let start = Instant::now();
        let mut s = sim(32, 1.0, start);
        let (tx, _rx) = mpsc::channel();
        s.process(job(Op::Trim, 100, 2000, start, &tx));
        assert_eq!(s.device.seen[0], (0, IoKind::Trim, 512, 1536));
        let big = vec![1u8; 2 << 20];
        let r = s.process(job(Op::Write(big), 0, 2 << 20, start, &tx));
        assert_eq!(r.error, proto::ENOSPC);
        assert_eq!(s.device.seen.len(), 1);
        assert_eq!(s.stats.no_space_errors, 1);
    }
}
