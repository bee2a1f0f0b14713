//! Trace replay: the requests of a block trace, issued to a [`BlockDevice`] in simulated time,
//! with results in the same fio-shaped [`RunResult`] as a job file's run.
//!
//! - **Open loop** honours the trace's timestamps: request `i` is issued at
//!   `(t_i - t_0) / speed`, whatever is still outstanding. The device's
//!   [`BlockDevice::queue_depth_limit`] is respected by a host queue in front of it; a request
//!   that waits there is *late* (counted, with its lag). Timestamps that go backwards are
//!   issued at the latest time so far (the device only moves forward) and counted.
//! - **Closed loop** ignores timestamps and keeps `qd` requests outstanding, in trace order.
//!
//! Latency accounting follows [`crate::run_jobs`]: a request's clock starts when the trace
//! issues it, so time in the host queue is completion latency, and slat is the device's own
//! acceptance cost.
//!
//! On a slice of a larger drive (fewer dies), the slice gets each die's share of the load:
//! open-loop arrival gaps are stretched by the die factor and the closed-loop depth divided
//! by it; runtimes come back divided by the factor, so bandwidth and IOPS are the whole
//! drive's, and latencies are the simulated requests' own.

use std::collections::VecDeque;
use std::io::BufRead;

use flashlab_engine::{BlockDevice, DeviceError, EventQueue, IoKind, IoRequest, SimTime};
use flashlab_report::{
    JobStats, JobStatsConfig, LogConfig, RunResult, ScaleBack, DEFAULT_PERCENTILES,
};
use flashlab_workload::trace::{Remap, RemapError, Remapper, TraceError, TraceReader, TraceRecord};
use serde_json::{json, Map, Value};

use crate::{kind_name, JobIoError, Progress, RunError, RunLimits, SliceScale, MAX_SIM_TIME_NS};

/// How the trace's requests are paced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ReplayMode {
    /// Issue each request at its timestamp divided by `speed` (2.0: twice as fast).
    Open { speed: f64 },
    /// Keep `qd` requests outstanding, ignoring timestamps.
    Closed { qd: u32 },
}

/// How a replay is labelled, fitted and bounded.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayOptions {
    pub seed: u64,
    pub device_name: String,
    /// The job name in the results (the trace file's name).
    pub trace_name: String,
    /// Shown in the `"flashlab"` object.
    pub trace_format: String,
    pub mode: ReplayMode,
    pub remap: Remap,
    /// Highest end offset in the trace (needed by [`Remap::Scale`]).
    pub trace_end_bytes: u64,
    /// Requests in the trace, when known: progress is shown against it.
    pub expected_requests: Option<u64>,
    pub limits: RunLimits,
    /// Most requests waiting in the open-loop host queue: beyond it the device has fallen
    /// hopelessly behind the trace, and the replay stops instead of growing without bound.
    pub max_host_queue: usize,
    pub scale: SliceScale,
}

impl ReplayOptions {
    pub fn new(seed: u64, device_name: impl Into<String>, trace_name: impl Into<String>) -> Self {
        Self {
            seed,
            device_name: device_name.into(),
            trace_name: trace_name.into(),
            trace_format: String::new(),
            mode: ReplayMode::Open { speed: 1.0 },
            remap: Remap::Wrap,
            trace_end_bytes: 0,
            expected_requests: None,
            limits: RunLimits::default(),
            max_host_queue: 1 << 20,
            scale: SliceScale::FULL,
        }
    }
}

/// Why a replay could not complete.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error("{file}: {error}")]
    Remap { file: String, error: RemapError },
    #[error("--speed {speed}: expected a finite number above 0 (1 = the trace's own pace)")]
    BadSpeed { speed: f64 },
    #[error("--qd 0: closed-loop replay needs at least one request outstanding")]
    BadQd,
    #[error("--qd {qd}: closed-loop replay keeps at most {limit} requests outstanding (the host-queue limit); valid: 1 to {limit}")]
    QdTooLarge { qd: u32, limit: usize },
    #[error("{file}: the trace holds no request to replay (lines read: {lines}, skipped as malformed: {skipped}, other volumes: {filtered})")]
    Empty {
        file: String,
        lines: u64,
        skipped: u64,
        filtered: u64,
    },
    #[error("at {time_ns} ns: {queued} requests wait for the device in open-loop replay (limit {limit}): the device cannot keep up with the trace at this speed; lower --speed or use --mode closed")]
    HostQueueFull {
        time_ns: SimTime,
        queued: usize,
        limit: usize,
    },
    #[error("scale: capacity factor {capacity_factor} and die factor {die_factor} must both be finite and at least 1")]
    BadScale {
        capacity_factor: f64,
        die_factor: f64,
    },
    #[error(transparent)]
    Run(#[from] RunError),
}

impl ReplayError {
    /// True when the input (trace, options) is at fault: the CLI exits with 2.
    pub fn is_bad_input(&self) -> bool {
        match self {
            ReplayError::Trace(_)
            | ReplayError::Remap { .. }
            | ReplayError::BadSpeed { .. }
            | ReplayError::BadQd
            | ReplayError::QdTooLarge { .. }
            | ReplayError::Empty { .. }
            | ReplayError::BadScale { .. } => true,
            ReplayError::Run(e) => e.is_bad_input(),
            ReplayError::HostQueueFull { .. } => false,
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Event {
    /// The next trace request is due.
    Arrive,
    Complete {
        kind: IoKind,
        issue_ns: SimTime,
        accepted_ns: SimTime,
        offset_bytes: u64,
        len_bytes: u64,
    },
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    req: IoRequest,
    issue_ns: SimTime,
}

/// What the replay saw, for the `"flashlab"` object.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    issued: u64,
    late: u64,
    lag_sum_ns: u128,
    lag_max_ns: SimTime,
    /// Open loop: requests whose timestamp went back before an earlier request's.
    reordered: u64,
    first_trace_ns: Option<u64>,
    last_trace_ns: u64,
    max_host_queue: usize,
}

struct Replayer<'a, 'd, R: BufRead> {
    reader: &'a mut TraceReader<R>,
    remapper: Remapper,
    device: &'d mut dyn BlockDevice,
    options: &'a ReplayOptions,
    queue: EventQueue<Event>,
    host_queue: VecDeque<Pending>,
    device_in_flight: u32,
    device_limit: u32,
    in_flight: u32,
    /// Closed loop: requests kept outstanding.
    qd: u32,
    /// Open loop: simulated ns per trace ns (die factor / speed).
    time_factor: f64,
    /// Open loop: the request due at the pending Arrive event.
    next: Option<Pending>,
    last_arrival_ns: SimTime,
    /// Open loop: the trace time of the previous request.
    prev_trace_ns: u64,
    exhausted: bool,
    /// The write the device refused as an I/O error: the replay stopped there.
    io_error: Option<JobIoError>,
    stats: JobStats,
    tally: Tally,
}

/// Replay every request `reader` yields against `device`. `progress` is called every
/// `options.limits.progress_every_events` events and once at the end.
///
/// The result holds one job named after the trace; its `"flashlab"` object has the seed, the
/// device name and a `"replay"` member (mode, requests, late requests and their lag, remapped
/// and clamped requests, lines skipped); callers add the device's counters.
pub fn replay_trace<R: BufRead>(
    reader: &mut TraceReader<R>,
    device: &mut dyn BlockDevice,
    options: &ReplayOptions,
    progress: &mut dyn FnMut(&Progress),
) -> Result<RunResult, ReplayError> {
    let scale = options.scale;
    let valid = |f: f64| f.is_finite() && f >= 1.0;
    if !valid(scale.capacity_factor) || !valid(scale.die_factor) {
        return Err(ReplayError::BadScale {
            capacity_factor: scale.capacity_factor,
            die_factor: scale.die_factor,
        });
    }
    let (qd, time_factor) = match options.mode {
        ReplayMode::Open { speed } => {
            if !(speed.is_finite() && speed > 0.0) {
                return Err(ReplayError::BadSpeed { speed });
            }
            (0, scale.die_factor / speed)
        }
        ReplayMode::Closed { qd } => {
            if qd == 0 {
                return Err(ReplayError::BadQd);
            }
            if qd as usize > options.max_host_queue {
                return Err(ReplayError::QdTooLarge {
                    qd,
                    limit: options.max_host_queue,
                });
            }
            (((qd as f64 / scale.die_factor).round() as u32).max(1), 1.0)
        }
    };
    let remapper = Remapper::new(
        options.remap,
        device.capacity_bytes(),
        device.logical_block_bytes(),
        options.trace_end_bytes,
    )
    .map_err(|error| ReplayError::Remap {
        file: reader.file().to_string(),
        error,
    })?;
    let device_limit = device.queue_depth_limit().max(1);
    let mut stats = JobStats::new(JobStatsConfig {
        jobname: options.trace_name.clone(),
        groupid: 0,
        job_index: 1,
        job_options: Vec::new(),
        percentile_list: DEFAULT_PERCENTILES.to_vec(),
        percentile_precision: 2,
        percentiles: Default::default(),
        logs: LogConfig::default(),
        description: None,
    });
    stats.set_iodepth(if qd > 0 {
        qd
    } else {
        device_limit.min(1 << 16)
    });
    // Grown as requests wait, never sized by an option up front.
    let host_capacity = (qd as usize).clamp(1, 1024);
    let mut r = Replayer {
        reader,
        remapper,
        device,
        options,
        queue: EventQueue::with_limit(options.limits.max_queued_events),
        host_queue: VecDeque::with_capacity(host_capacity),
        device_in_flight: 0,
        device_limit,
        in_flight: 0,
        qd,
        time_factor,
        next: None,
        last_arrival_ns: 0,
        prev_trace_ns: 0,
        exhausted: false,
        io_error: None,
        stats,
        tally: Tally::default(),
    };
    r.start()?;
    if r.tally.issued == 0 && r.next.is_none() {
        let c = r.reader.counts();
        return Err(ReplayError::Empty {
            file: r.reader.file().to_string(),
            lines: c.lines,
            skipped: c.skipped_bad_lines,
            filtered: c.filtered,
        });
    }
    r.run(progress)?;
    let io_error = r.io_error.take();
    let mut result = r.into_result();
    match io_error {
        None => Ok(result),
        // As `run_jobs`: the trace's job stopped at the refused I/O, with fio's error.
        Some(e) => {
            result.jobs[0].set_error(e.errno());
            if let Value::Object(o) = &mut result.flashlab {
                o.insert("io_errors".into(), json!([e.to_json()]));
            }
            Err(RunError::Io {
                errors: vec![e],
                result: Box::new(result),
            }
            .into())
        }
    }
}

impl<R: BufRead> Replayer<'_, '_, R> {
    /// The next request of the trace, fitted to the device.
    fn read(&mut self) -> Result<Option<(TraceRecord, IoRequest)>, ReplayError> {
        if self.exhausted {
            return Ok(None);
        }
        let Some(rec) = self.reader.next_record()? else {
            self.exhausted = true;
            return Ok(None);
        };
        let (offset_bytes, len_bytes) =
            self.remapper
                .map(&rec)
                .map_err(|error| ReplayError::Remap {
                    file: self.reader.file().to_string(),
                    error,
                })?;
        let req = IoRequest {
            kind: rec.kind,
            offset_bytes,
            len_bytes,
            fua: false,
            // Block traces carry no data: as fio's default buffers, incompressible.
            compressible_percent: 0,
            placement: None,
        };
        let t = &mut self.tally;
        if t.first_trace_ns.is_none() {
            t.first_trace_ns = Some(rec.time_ns);
        }
        t.last_trace_ns = t.last_trace_ns.max(rec.time_ns);
        Ok(Some((rec, req)))
    }

    /// Open loop: read the next request and schedule its arrival.
    fn schedule_next_arrival(&mut self) -> Result<(), ReplayError> {
        let Some((rec, req)) = self.read()? else {
            self.next = None;
            return Ok(());
        };
        let first = self.tally.first_trace_ns.unwrap_or(rec.time_ns);
        let rel_ns = rec.time_ns.saturating_sub(first);
        if rec.time_ns < self.prev_trace_ns {
            self.tally.reordered += 1;
        }
        self.prev_trace_ns = rec.time_ns;
        let at = ((rel_ns as f64 * self.time_factor).round() as SimTime).max(self.last_arrival_ns);
        self.last_arrival_ns = at;
        self.next = Some(Pending { req, issue_ns: at });
        self.queue
            .schedule(at, Event::Arrive)
            .map_err(RunError::from)?;
        Ok(())
    }

    fn start(&mut self) -> Result<(), ReplayError> {
        if self.qd == 0 {
            return self.schedule_next_arrival();
        }
        for _ in 0..self.qd {
            let Some((_, req)) = self.read()? else { break };
            self.issue(req, 0)?;
        }
        Ok(())
    }

    fn run(&mut self, progress: &mut dyn FnMut(&Progress)) -> Result<(), ReplayError> {
        let limits = &self.options.limits;
        let progress_mask = limits.progress_every_events.next_power_of_two().max(1) - 1;
        let mut events: u64 = 0;
        let mut same_time_events: u64 = 0;
        let mut last_ns: SimTime = 0;
        loop {
            if self.device_in_flight == 0 && self.host_queue.is_empty() {
                if let Some(next) = self.queue.peek_time_ns() {
                    if next > self.queue.now_ns() && next <= MAX_SIM_TIME_NS {
                        self.device.idle(self.queue.now_ns(), next);
                    }
                }
            }
            let Some((now, event)) = self.queue.pop() else {
                break;
            };
            // An arrival admits one more request of the trace: a burst of them at one
            // timestamp is the trace's own work, bounded by the trace and the host queue
            // (`max_host_queue`), not a model going round without time advancing. Only the
            // other events count against the limit.
            let admits = matches!(event, Event::Arrive);
            if now == last_ns {
                same_time_events += u64::from(!admits);
                if same_time_events > limits.max_events_at_same_time {
                    return Err(RunError::NoProgress {
                        time_ns: now,
                        events: same_time_events,
                    }
                    .into());
                }
            } else {
                last_ns = now;
                same_time_events = 0;
                if now > MAX_SIM_TIME_NS {
                    return Err(RunError::TimeOverflow { time_ns: now }.into());
                }
                if let Some(limit_ns) = limits.max_sim_time_ns {
                    if now > limit_ns {
                        return Err(RunError::TimeLimit { limit_ns }.into());
                    }
                }
            }
            self.handle(now, event)?;
            events += 1;
            if events & progress_mask == 0 {
                self.report_progress(now, progress);
            }
        }
        if self.in_flight > 0 || !self.host_queue.is_empty() || self.next.is_some() {
            return Err(RunError::Stuck {
                time_ns: self.queue.now_ns(),
            }
            .into());
        }
        let now = self.queue.now_ns();
        progress(&Progress {
            now_ns: now,
            fraction_done: 1.0,
            phase: 0,
            phases: 1,
            jobs: &self.options.trace_name,
        });
        Ok(())
    }

    fn report_progress(&self, now: SimTime, progress: &mut dyn FnMut(&Progress)) {
        let fraction_done = match self.options.expected_requests {
            Some(total) if total > 0 => (self.tally.issued as f64 / total as f64).min(1.0),
            _ => 0.0,
        };
        progress(&Progress {
            now_ns: now,
            fraction_done,
            phase: 0,
            phases: 1,
            jobs: &self.options.trace_name,
        });
    }

    fn handle(&mut self, now: SimTime, event: Event) -> Result<(), ReplayError> {
        match event {
            Event::Arrive => {
                let p = self.next.take().expect("an Arrive event has its request");
                if self.io_error.is_some() {
                    return Ok(()); // the replay stopped at a refused I/O
                }
                self.issue(p.req, p.issue_ns)?;
                self.schedule_next_arrival()?;
            }
            Event::Complete {
                kind,
                issue_ns,
                accepted_ns,
                offset_bytes,
                len_bytes,
            } => {
                self.device_in_flight -= 1;
                self.in_flight -= 1;
                if kind == IoKind::Flush {
                    self.stats.record_sync(issue_ns, now);
                } else {
                    self.stats.record(
                        kind.ddir(),
                        issue_ns,
                        accepted_ns,
                        now,
                        len_bytes,
                        offset_bytes,
                    );
                }
                self.drain_host_queue(now)?;
                if self.qd > 0 && self.in_flight < self.qd {
                    if let Some((_, req)) = self.read()? {
                        self.issue(req, now)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Hand a request issued at `issue_ns` (now) to the device, or to the host queue when
    /// the device is full.
    fn issue(&mut self, req: IoRequest, issue_ns: SimTime) -> Result<(), ReplayError> {
        self.in_flight += 1;
        self.tally.issued += 1;
        self.stats.record_depth(self.in_flight);
        if self.device_in_flight < self.device_limit {
            return self.submit(req, issue_ns, issue_ns);
        }
        if self.host_queue.len() >= self.options.max_host_queue {
            return Err(ReplayError::HostQueueFull {
                time_ns: issue_ns,
                queued: self.host_queue.len(),
                limit: self.options.max_host_queue,
            });
        }
        self.host_queue.push_back(Pending { req, issue_ns });
        self.tally.max_host_queue = self.tally.max_host_queue.max(self.host_queue.len());
        Ok(())
    }

    fn drain_host_queue(&mut self, now: SimTime) -> Result<(), ReplayError> {
        while self.device_in_flight < self.device_limit {
            let Some(p) = self.host_queue.pop_front() else {
                break;
            };
            self.submit(p.req, p.issue_ns, now)?;
        }
        Ok(())
    }

    fn submit(
        &mut self,
        req: IoRequest,
        issue_ns: SimTime,
        now: SimTime,
    ) -> Result<(), ReplayError> {
        if now > issue_ns {
            let lag = now - issue_ns;
            self.tally.late += 1;
            self.tally.lag_sum_ns += u128::from(lag);
            self.tally.lag_max_ns = self.tally.lag_max_ns.max(lag);
        }
        let job = || self.options.trace_name.clone();
        let completion = match self.device.submit(now, &req) {
            Ok(c) => c,
            Err(
                error @ (DeviceError::ReadOnly { .. }
                | DeviceError::Uncorrectable { .. }
                | DeviceError::Zone { .. }),
            ) => {
                self.stop_at(now, &req, error);
                return Ok(());
            }
            Err(error) => {
                return Err(RunError::Device {
                    job: job(),
                    time_ns: now,
                    kind: kind_name(req.kind),
                    offset_bytes: req.offset_bytes,
                    error,
                }
                .into())
            }
        };
        let bad = |why: &'static str| RunError::BadCompletion {
            job: job(),
            time_ns: now,
            kind: kind_name(req.kind),
            done_ns: completion.done_ns,
            why,
        };
        if completion.accepted_ns < now || completion.done_ns < completion.accepted_ns {
            return Err(bad("before the request was submitted or accepted").into());
        }
        if completion.done_ns - now > self.options.limits.max_io_latency_ns {
            return Err(bad("later than the I/O latency limit: the I/O never completes").into());
        }
        self.device_in_flight += 1;
        self.queue
            .schedule(
                completion.done_ns,
                Event::Complete {
                    kind: req.kind,
                    issue_ns,
                    accepted_ns: issue_ns + (completion.accepted_ns - now),
                    offset_bytes: req.offset_bytes,
                    len_bytes: req.len_bytes,
                },
            )
            .map_err(RunError::from)?;
        Ok(())
    }

    /// The device refused `req` as an I/O error: as fio stops a job, the replay reads no more
    /// of the trace and drops what waits in the host queue; what is in flight completes.
    #[cold]
    fn stop_at(&mut self, now: SimTime, req: &IoRequest, error: DeviceError) {
        self.in_flight -= 1;
        if self.io_error.is_none() {
            self.io_error = Some(JobIoError::new(
                self.options.trace_name.clone(),
                now,
                req,
                error,
            ));
        }
        self.exhausted = true;
        self.in_flight -= self.host_queue.len() as u32;
        self.host_queue.clear();
    }

    fn into_result(self) -> RunResult {
        let end_ns = self.queue.now_ns();
        let mut job = self.stats.finish(end_ns);
        let die_factor = self.options.scale.die_factor;
        // Open loop stretched the clock by the die factor; closed loop ran fewer requests at
        // once. Either way the slice's time is `die_factor` times the drive's.
        let back = ScaleBack {
            time_factor: 1.0 / die_factor,
            count_factor: 1.0,
        };
        let full_end_ns = (end_ns as f64 * back.time_factor).round() as SimTime;
        job.scale_back(&back, end_ns, full_end_ns);

        let c = self.reader.counts();
        let t = &self.tally;
        let trace_span_ns = t.first_trace_ns.map_or(0, |f| t.last_trace_ns - f);
        let mut replay = Map::new();
        replay.insert("trace".into(), json!(self.reader.file()));
        replay.insert("format".into(), json!(self.options.trace_format));
        match self.options.mode {
            ReplayMode::Open { speed } => {
                replay.insert("mode".into(), json!("open"));
                replay.insert("speed".into(), json!(speed));
            }
            ReplayMode::Closed { qd } => {
                replay.insert("mode".into(), json!("closed"));
                replay.insert("qd".into(), json!(qd));
                if self.qd != qd {
                    replay.insert("qd_simulated".into(), json!(self.qd));
                }
            }
        }
        replay.insert("requests".into(), json!(t.issued));
        replay.insert("late_requests".into(), json!(t.late));
        replay.insert(
            "mean_lag_ns".into(),
            json!(if t.late > 0 {
                (t.lag_sum_ns / u128::from(t.late)) as u64
            } else {
                0
            }),
        );
        replay.insert("max_lag_ns".into(), json!(t.lag_max_ns));
        replay.insert("max_host_queue".into(), json!(t.max_host_queue));
        replay.insert("reordered".into(), json!(t.reordered));
        replay.insert("trace_span_ns".into(), json!(trace_span_ns));
        replay.insert("replay_span_ns".into(), json!(full_end_ns));
        replay.insert(
            "remap".into(),
            json!({
                "mode": self.options.remap.name(),
                "moved": self.remapper.moved,
                "clamped": self.remapper.clamped,
            }),
        );
        replay.insert(
            "lines".into(),
            json!({
                "read": c.lines,
                "skipped_bad": c.skipped_bad_lines,
                "first_bad": c.first_bad_line,
                "other_volumes": c.filtered,
                "zero_length": c.zero_length,
            }),
        );
        let mut flashlab = Map::new();
        flashlab.insert("seed".into(), json!(self.options.seed));
        flashlab.insert("device".into(), json!(self.options.device_name));
        flashlab.insert("replay".into(), Value::Object(replay));
        if !self.options.scale.is_full() {
            flashlab.insert(
                "scale".into(),
                json!({
                    "capacity_factor": self.options.scale.capacity_factor,
                    "die_factor": die_factor,
                    "note": "trace replayed on a slice: arrival gaps stretched (open loop) or depth divided (closed loop) by the die factor; runtimes scaled back",
                }),
            );
        }
        RunResult::new(Vec::new(), vec![job], Value::Object(flashlab))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use flashlab_engine::{Completion, DeviceError};
    use flashlab_workload::trace::{TraceFormat, TraceOptions};

    use super::*;

    /// One request at a time (queue limit `qd_limit`), each taking `service_ns` after the
    /// previous one ends: queueing follows from arithmetic.
    struct Serial {
        service_ns: SimTime,
        free_ns: SimTime,
        qd_limit: u32,
        last_submit_ns: SimTime,
        submits: Vec<(SimTime, IoRequest)>,
        /// Refuse writes as a read-only drive once this many requests were accepted.
        read_only_after: Option<usize>,
    }

    impl Serial {
        fn new(service_ns: SimTime, qd_limit: u32) -> Self {
            Self {
                service_ns,
                free_ns: 0,
                qd_limit,
                last_submit_ns: 0,
                submits: Vec::new(),
                read_only_after: None,
            }
        }
    }

    impl BlockDevice for Serial {
        fn capacity_bytes(&self) -> u64 {
            1 << 30
        }
        fn logical_block_bytes(&self) -> u64 {
            4096
        }
        fn queue_depth_limit(&self) -> u32 {
            self.qd_limit
        }
        fn prefetch(&self, _req: &IoRequest, _stage: flashlab_engine::PrefetchStage) {}
        fn submit(&mut self, now_ns: SimTime, req: &IoRequest) -> Result<Completion, DeviceError> {
            assert!(now_ns >= self.last_submit_ns, "submissions go forward");
            self.last_submit_ns = now_ns;
            assert!(req.offset_bytes + req.len_bytes <= 1 << 30);
            assert_eq!(req.offset_bytes % 4096, 0);
            if req.kind == IoKind::Write && self.read_only_after == Some(self.submits.len()) {
                return Err(DeviceError::ReadOnly {
                    reason: "worn out".into(),
                });
            }
            self.submits.push((now_ns, *req));
            let done = self.free_ns.max(now_ns) + self.service_ns;
            self.free_ns = done;
            Ok(Completion {
                accepted_ns: now_ns,
                done_ns: done,
            })
        }
    }

    /// `n` 4 KiB reads `gap_us` apart in DiskSim ASCII (ns times).
    fn trace(n: u64, gap_us: u64) -> String {
        (0..n)
            .map(|i| format!("{} 0 {} 8 1\n", 5_000 + i * gap_us * 1_000, i * 8))
            .collect()
    }

    fn replay(
        text: &str,
        dev: &mut Serial,
        mode: ReplayMode,
        tweak: impl FnOnce(&mut ReplayOptions),
    ) -> Result<RunResult, ReplayError> {
        let mut reader = TraceReader::new(
            Cursor::new(text.to_string()),
            "t.trace",
            TraceOptions::new(TraceFormat::Disksim),
        )
        .unwrap();
        let mut o = ReplayOptions::new(1, "serial", "t.trace");
        o.mode = mode;
        tweak(&mut o);
        replay_trace(&mut reader, dev, &o, &mut |_| {})
    }

    fn replay_json(run: &RunResult) -> &Value {
        &run.flashlab["replay"]
    }

    /// A write the device refuses as read-only stops the replay there, as fio stops a job:
    /// what was in flight completes, the result carries errno 30 and comes with the error.
    #[test]
    fn a_refused_write_stops_the_replay_with_its_results() {
        // DiskSim flags 0: writes, 1 ms apart.
        let writes: String = (0..10)
            .map(|i| format!("{} 0 {} 8 0\n", 5_000 + i * 1_000_000, i * 8))
            .collect();
        for mode in [
            ReplayMode::Open { speed: 1.0 },
            ReplayMode::Closed { qd: 2 },
        ] {
            let mut dev = Serial::new(100_000, 4);
            dev.read_only_after = Some(4);
            let err = replay(&writes, &mut dev, mode, |_| {}).unwrap_err();
            let ReplayError::Run(RunError::Io { errors, result }) = &err else {
                panic!("{err}");
            };
            assert_eq!(dev.submits.len(), 4, "{mode:?}");
            assert_eq!(errors[0].errno(), 30);
            assert_eq!(result.jobs[0].error(), 30);
            assert_eq!(result.jobs[0].total_ios(1), 4, "{mode:?}");
            assert_eq!(result.flashlab["io_errors"][0]["kind"], "write");
            assert!(!err.is_bad_input());
        }
    }

    #[test]
    fn open_loop_keeps_the_trace_pace_when_the_device_keeps_up() {
        let mut dev = Serial::new(100_000, 1);
        let run = replay(
            &trace(10, 1_000),
            &mut dev,
            ReplayMode::Open { speed: 1.0 },
            |_| {},
        )
        .unwrap();
        let times: Vec<SimTime> = dev.submits.iter().map(|s| s.0).collect();
        assert_eq!(times, (0..10).map(|i| i * 1_000_000).collect::<Vec<_>>());
        let job = &run.jobs[0];
        assert_eq!(job.total_ios(0), 10);
        assert_eq!(job.clat_ns(0).unwrap().max, 100_000);
        assert_eq!(replay_json(&run)["late_requests"], 0);
        // Ends with the last completion: 9 ms + 100 µs.
        assert_eq!(job.end_ns(), 9_100_000);
        assert_eq!(replay_json(&run)["trace_span_ns"], 9_000_000);
    }

    #[test]
    fn open_loop_faster_than_the_device_queues_on_the_host_and_reports_late_requests() {
        // 10 µs apart against a 100 µs device holding one request: each waits longer.
        let mut dev = Serial::new(100_000, 1);
        let run = replay(
            &trace(10, 10),
            &mut dev,
            ReplayMode::Open { speed: 1.0 },
            |_| {},
        )
        .unwrap();
        let r = replay_json(&run);
        assert_eq!(r["late_requests"], 9);
        // The last arrives at 90 µs and starts at 900 µs.
        assert_eq!(r["max_lag_ns"], 810_000);
        assert_eq!(run.jobs[0].lat_ns(0).unwrap().max, 910_000);
        // The same trace at 1/100 of the pace never waits.
        let mut dev = Serial::new(100_000, 1);
        let slow = replay(
            &trace(10, 10),
            &mut dev,
            ReplayMode::Open { speed: 0.01 },
            |_| {},
        )
        .unwrap();
        assert_eq!(replay_json(&slow)["late_requests"], 0);
        assert_eq!(dev.submits[9].0, 9_000_000);
    }

    #[test]
    fn closed_loop_ignores_timestamps_and_keeps_the_depth() {
        let mut dev = Serial::new(100_000, 64);
        let run = replay(
            &trace(12, 1_000_000),
            &mut dev,
            ReplayMode::Closed { qd: 4 },
            |_| {},
        )
        .unwrap();
        let job = &run.jobs[0];
        assert_eq!(job.total_ios(0), 12);
        // Four outstanding on a serial device: all 12 take 1.2 ms, each waits 4 services.
        assert_eq!(job.end_ns(), 1_200_000);
        assert_eq!(job.clat_ns(0).unwrap().max, 400_000);
        assert_eq!(dev.submits.iter().filter(|s| s.0 == 0).count(), 4);
    }

    #[test]
    fn a_device_far_behind_stops_the_replay_with_a_reason() {
        let mut dev = Serial::new(1_000_000, 1);
        let e = replay(
            &trace(50, 1),
            &mut dev,
            ReplayMode::Open { speed: 1.0 },
            |o| {
                o.max_host_queue = 8;
            },
        )
        .unwrap_err();
        assert!(
            matches!(e, ReplayError::HostQueueFull { limit: 8, .. }),
            "{e}"
        );
        assert!(!e.is_bad_input());
        assert!(e.to_string().contains("cannot keep up"), "{e}");
    }

    #[test]
    fn bad_options_and_empty_traces_are_bad_input() {
        let mut dev = Serial::new(1_000, 1);
        for mode in [
            ReplayMode::Open { speed: 0.0 },
            ReplayMode::Open { speed: f64::NAN },
            ReplayMode::Closed { qd: 0 },
        ] {
            let e = replay(&trace(2, 1), &mut dev, mode, |_| {}).unwrap_err();
            assert!(e.is_bad_input(), "{e}");
        }
        let e = replay(
            "# nothing\n",
            &mut dev,
            ReplayMode::Closed { qd: 1 },
            |_| {},
        )
        .unwrap_err();
        assert!(matches!(e, ReplayError::Empty { lines: 1, .. }), "{e}");
        // Past the end of a 1 GiB device with --remap error: the line is named.
        let e = replay(
            "0 0 8 8 1\n1 0 4194304 8 1\n",
            &mut dev,
            ReplayMode::Closed { qd: 1 },
            |o| {
                o.remap = Remap::Error;
            },
        )
        .unwrap_err();
        assert!(e.is_bad_input() && e.to_string().contains("line 2:"), "{e}");
    }

    #[test]
    fn wrap_fits_the_trace_and_backward_timestamps_are_counted() {
        let mut dev = Serial::new(1_000, 64);
        // Sector 4 Gi = byte 2 TiB wraps onto a 1 GiB device; the second line goes back in time.
        let text = "2000 0 4294967296 8 0\n1000 0 0 8 1\n3000 0 16 8 1\n";
        let run = replay(text, &mut dev, ReplayMode::Open { speed: 1.0 }, |_| {}).unwrap();
        let r = replay_json(&run);
        assert_eq!(r["reordered"], 1);
        assert_eq!(r["remap"]["moved"], 1);
        assert_eq!(dev.submits[0].1.offset_bytes, 0);
        assert_eq!(
            dev.submits.iter().map(|s| s.0).collect::<Vec<_>>(),
            vec![0, 0, 1_000]
        );
    }

    #[test]
    fn a_slice_stretches_arrivals_and_scales_rates_back() {
        let full = {
            let mut dev = Serial::new(10_000, 1);
            replay(
                &trace(10, 1_000),
                &mut dev,
                ReplayMode::Open { speed: 1.0 },
                |_| {},
            )
            .unwrap()
        };
        let mut dev = Serial::new(10_000, 1);
        let slice = replay(
            &trace(10, 1_000),
            &mut dev,
            ReplayMode::Open { speed: 1.0 },
            |o| {
                o.scale = SliceScale::new(2.0, 4.0);
            },
        )
        .unwrap();
        // Arrivals 4 ms apart on the slice; the drive's clock is back to 1 ms.
        assert_eq!(dev.submits[1].0, 4_000_000);
        assert_eq!(slice.jobs[0].runtime_ms(0), full.jobs[0].runtime_ms(0));
        assert_eq!(slice.jobs[0].total_ios(0), 10);
        assert_eq!(slice.flashlab["scale"]["die_factor"], 4.0);
    }

    /// `n` 4 KiB reads all at one timestamp.
    fn burst(n: u64) -> String {
        (0..n).map(|i| format!("5000 0 {} 8 1\n", i * 8)).collect()
    }

    /// A burst of requests at one timestamp is the trace's work, not a model without
    /// progress: it replays whole however far it goes past the same-time event limit.
    #[test]
    fn a_burst_at_one_timestamp_is_progress() {
        let mut dev = Serial::new(1_000, 32);
        let run = replay(
            &burst(3_000),
            &mut dev,
            ReplayMode::Open { speed: 1.0 },
            |o| {
                o.limits.max_events_at_same_time = 1_000;
            },
        )
        .unwrap();
        assert_eq!(replay_json(&run)["requests"], 3_000);
        assert_eq!(dev.submits.len(), 3_000);
        // A huge --speed makes every request of an ordinary trace a burst too.
        let mut dev = Serial::new(1_000, 32);
        let run = replay(
            &trace(3_000, 10),
            &mut dev,
            ReplayMode::Open { speed: 1e12 },
            |o| {
                o.limits.max_events_at_same_time = 1_000;
            },
        )
        .unwrap();
        assert_eq!(replay_json(&run)["requests"], 3_000);
    }

    /// What stops a burst too large for the host is the host-queue limit, with its own
    /// message.
    #[test]
    fn a_burst_beyond_the_host_queue_stops_at_that_limit() {
        let mut dev = Serial::new(1_000, 32);
        let e = replay(
            &burst(3_000),
            &mut dev,
            ReplayMode::Open { speed: 1.0 },
            |o| {
                o.limits.max_events_at_same_time = 100;
                o.max_host_queue = 2_000;
            },
        )
        .unwrap_err();
        assert!(
            matches!(e, ReplayError::HostQueueFull { limit: 2_000, .. }),
            "{e}"
        );
    }

    /// A device that completes everything at once never lets time advance: still caught.
    #[test]
    fn a_device_completing_without_time_passing_is_still_no_progress() {
        let mut dev = Serial::new(0, 32);
        let e = replay(
            &trace(3_000, 0),
            &mut dev,
            ReplayMode::Closed { qd: 4 },
            |o| {
                o.limits.max_events_at_same_time = 1_000;
            },
        )
        .unwrap_err();
        assert!(
            matches!(e, ReplayError::Run(RunError::NoProgress { .. })),
            "{e}"
        );
    }

    /// The closed-loop depth is bounded before anything is sized by it.
    #[test]
    fn a_closed_loop_depth_beyond_the_host_queue_is_refused() {
        let mut dev = Serial::new(1_000, 32);
        let e = replay(
            &trace(10, 1),
            &mut dev,
            ReplayMode::Closed { qd: u32::MAX },
            |_| {},
        )
        .unwrap_err();
        assert!(e.is_bad_input(), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains("--qd 4294967295") && msg.contains("1048576"),
            "{msg}"
        );
        assert!(!msg.contains("open-loop"), "{msg}");
    }
}
