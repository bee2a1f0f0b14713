//! The run loop: executes a parsed fio job file against a [`BlockDevice`] in simulated time
//! and collects fio-style results.
//!
//! The loop follows fio's semantics where they matter for the numbers:
//! - every job is expanded into `numjobs` clones, numbered from 1 in file order (clones
//!   included), which is the number fio puts in log file names;
//! - a `stonewall` job starts a new *phase*: it and everything after it wait until all earlier
//!   jobs have finished; `stonewall` and `new_group` start a new reporting group;
//! - each clone keeps up to `iodepth` I/Os in flight; the device's
//!   [`BlockDevice::queue_depth_limit`] caps how many it holds at once and the rest wait, in
//!   arrival order, in a host queue shared by all clones;
//! - `runtime` caps a clone's time (after `ramp_time`), `time_based` repeats the workload
//!   until then, statistics start after `ramp_time`;
//! - `rate`/`rate_iops` are per clone and per direction, paced linearly or as a Poisson
//!   process; when the device cannot keep up, I/Os start late and the shortfall is reported in
//!   the `"flashlab"` JSON object;
//! - `thinktime` pauses a clone, once its I/Os in flight have completed, when
//!   `thinktime_blocks` more I/Os have completed (fio's default
//!   `thinktime_blocks_type=complete`; `issue` counts issued ones) or `thinktime_iotime` has
//!   passed since the last pause; as in fio the check follows each I/O, after the reap of the
//!   completions that free the queue it filled; `fsync=N` sends a flush after every N writes;
//! - on a slice of a larger drive ([`RunOptions::scale`]), jobs are shrunk to the slice and
//!   results scaled back to the whole drive (`docs/scale.md`).
//!
//! The host's I/O stack (system call, block layer, driver, interrupt) costs each I/O its
//! job's engine's time ([`host`]), so fio's latencies include it as on a real host.
//!
//! Latency accounting: fio's submission latency (slat) ends when the device accepts the
//! command, after the host's submission path. An I/O that waits in the host queue because the device is full is counted as
//! *completion* latency (clat), not slat: slat is the device's own acceptance cost only. This
//! keeps slat comparable to fio on a real device, where the kernel block layer queues
//! requests beyond the hardware queue depth after fio's submission call has returned. A
//! simulated drive takes a command into its queue at once; the wait for its controller
//! (the command rate) is inside the drive, so it is clat too.

mod caution;
pub mod host;
mod rate;
mod replay;
mod run;
mod scale;
mod targets;
mod zbd;

#[cfg(test)]
mod tests;

use flashlab_engine::{DeviceError, IoKind, IoRequest, SimTime, NS_PER_S};
use flashlab_workload::JobError;

pub use caution::{blocks_per_plane_note, slice_cautions, SliceShape, FAITHFUL_BLOCKS_PER_PLANE};
pub use replay::{replay_trace, ReplayError, ReplayMode, ReplayOptions};
pub use run::{run_jobs, run_targets, sliced_file};
pub use scale::{die_cut_refusal, RegionSizes, SliceScale, TimedPhases};
pub use targets::Targets;

/// How a run is seeded and bounded.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOptions {
    /// The master seed: every random stream of the run derives from it.
    pub seed: u64,
    /// Shown in the `"flashlab"` JSON object (the caller knows which device it built).
    pub device_name: String,
    pub limits: RunLimits,
    /// The device is a slice of a larger drive: jobs are shrunk to fit it and results are
    /// scaled back to the whole drive (see `docs/scale.md`).
    pub scale: SliceScale,
    /// What a slice does to the time of time-based phases that write (see [`TimedPhases`]).
    pub timed_phases: TimedPhases,
    /// What a slice does to the jobs' byte quantities (see [`RegionSizes`]).
    pub region_sizes: RegionSizes,
    /// Whether the host's I/O stack costs each I/O its engine's time ([`host::HostModel`]).
    pub host: host::HostModel,
    /// Threads the run may use: with two or more the jobs' statistics (latency histograms,
    /// bandwidth and IOPS samples, logs) are kept on a second thread, fed in order, while
    /// the run loop and the device go on. The results are the same for every count.
    pub threads: usize,
    /// Jobs (by name) to run with the device's timing model off
    /// ([`flashlab_engine::BlockDevice::write_untimed`]):
    /// preconditioning whose state does not depend on timing, each alone in its phase,
    /// writing or trimming only, ended by its size rather than a time. Their I/Os reach the
    /// device in the order the timed job would issue them; they are left out of the jobs'
    /// results and listed under `"flashlab"."untimed_jobs"`.
    pub untimed_jobs: Vec<String>,
}

/// What [`RunOptions::new`] takes for [`RunOptions::threads`]: 1 until a program sets it
/// ([`set_default_threads`]), so a library caller runs on its own thread unless it asks.
static DEFAULT_THREADS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);

/// Set the threads every run made from here on takes by default (`flashlab --threads`): the
/// runs a command makes through other crates (a suite's steps, a sweep's points) take it
/// without each caller passing it down. It changes no result.
pub fn set_default_threads(threads: usize) {
    DEFAULT_THREADS.store(threads.max(1), std::sync::atomic::Ordering::Relaxed);
}

/// The threads a run takes by default ([`set_default_threads`]).
pub fn default_threads() -> usize {
    DEFAULT_THREADS.load(std::sync::atomic::Ordering::Relaxed)
}

impl RunOptions {
    pub fn new(seed: u64, device_name: impl Into<String>) -> Self {
        Self {
            seed,
            device_name: device_name.into(),
            limits: RunLimits::default(),
            scale: SliceScale::FULL,
            timed_phases: TimedPhases::Compress,
            region_sizes: RegionSizes::Scale,
            host: host::HostModel::Engine,
            threads: default_threads(),
            untimed_jobs: Vec::new(),
        }
    }

    /// Use `threads` threads (at least one) for the run; the results are the same for any.
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// Put the host's I/O stack between the jobs and the device, or not.
    pub fn with_host(mut self, host: host::HostModel) -> Self {
        self.host = host;
        self
    }

    /// Run as if the device were the whole drive it is a slice of.
    pub fn with_scale(mut self, scale: SliceScale) -> Self {
        self.scale = scale;
        self
    }

    /// On a slice, keep (or compress) the time of time-based phases that write.
    pub fn with_timed_phases(mut self, timed: TimedPhases) -> Self {
        self.timed_phases = timed;
        self
    }

    /// On a slice, scale (or keep) the jobs' byte quantities.
    pub fn with_region_sizes(mut self, regions: RegionSizes) -> Self {
        self.region_sizes = regions;
        self
    }
}

/// The latest simulated time a run may reach (2^62 ns, about 146 years). The run loop
/// saturates the times it adds up, and the device adds its latencies to the time it is
/// given; work due later than this stops the run with [`RunError::TimeOverflow`] rather
/// than reaching the device at a saturated clock (where its additions overflowed and a run
/// of four 547-day startdelays, or a trace replayed at `--speed 1e-12`, never ended).
pub const MAX_SIM_TIME_NS: SimTime = 1 << 62;

/// Bounds that turn a runaway or broken model into an error instead of a hang.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLimits {
    /// Most events processed one after another without simulated time advancing.
    pub max_events_at_same_time: u64,
    /// Most events waiting in the event queue at once.
    pub max_queued_events: usize,
    /// A completion later than this after its submission means the I/O never completes.
    pub max_io_latency_ns: SimTime,
    /// The whole run may not go past this simulated time (`None`: no limit).
    pub max_sim_time_ns: Option<SimTime>,
    /// Call the progress callback every this many events (a power of two keeps it cheap).
    pub progress_every_events: u64,
}

impl Default for RunLimits {
    fn default() -> Self {
        Self {
            max_events_at_same_time: 1_000_000,
            max_queued_events: 1 << 24,
            max_io_latency_ns: 3_600 * NS_PER_S,
            max_sim_time_ns: None,
            progress_every_events: 1 << 16,
        }
    }
}

/// A snapshot for a progress display.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress<'a> {
    pub now_ns: SimTime,
    /// Estimated fraction of the whole run done, in [0, 1].
    pub fraction_done: f64,
    /// Phase (stonewall-separated set of jobs) now running, from 0.
    pub phase: usize,
    pub phases: usize,
    /// Names of the jobs of the running phase, comma-separated.
    pub jobs: &'a str,
}

/// `file:line`, or the place alone when it is no line of a file (line 0: a command-line
/// argument).
fn place(file: &str, line: usize) -> String {
    if line == 0 {
        file.to_string()
    } else {
        format!("{file}:{line}")
    }
}

/// Why a run could not complete.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The job cannot run on this device (the message names the job already).
    #[error("{}: {error}", place(file, *line))]
    Job {
        file: String,
        line: usize,
        job: String,
        error: JobError,
    },
    /// The job's `filename=` names no target of the device.
    #[error("{}: job '{job}': filename={filename:?} names no namespace of the device: {valid}", place(file, *line))]
    Target {
        file: String,
        line: usize,
        job: String,
        filename: String,
        valid: String,
    },
    /// The job's data placement options do not fit the drive (no FDP, an index out of
    /// range).
    #[error("{}: job '{job}': {why}", place(file, *line))]
    Placement {
        file: String,
        line: usize,
        job: String,
        why: String,
    },
    /// fio's steady-state options cannot be judged as given.
    #[error("{}: job '{job}': {why}", place(file, *line))]
    SteadyState {
        file: String,
        line: usize,
        job: String,
        why: String,
    },
    /// The job's `write_iolog` cannot be written as asked.
    #[error("{}: job '{job}': {why}", place(file, *line))]
    Iolog {
        file: String,
        line: usize,
        job: String,
        why: String,
    },
    /// The job's verify workload is one flashlab does not reproduce as fio runs it.
    #[error("{}: job '{job}': {why}", place(file, *line))]
    Verify {
        file: String,
        line: usize,
        job: String,
        why: String,
    },
    /// A job joins a reporting group in a way fio refuses.
    #[error("{}: job '{job}': {why}", place(file, *line))]
    ReportGroup {
        file: String,
        line: usize,
        job: String,
        why: String,
    },
    /// fio refuses the job's zoned options on this device (`zonemode=zbd`).
    #[error("{}: job '{job}': {why}", place(file, *line))]
    Zbd {
        file: String,
        line: usize,
        job: String,
        why: String,
    },
    /// fio's flow control holds the job back for good.
    #[error("{}: job '{job}': {why}", place(file, *line))]
    Flow {
        file: String,
        line: usize,
        job: String,
        why: String,
    },
    /// A job named to run without timing cannot: why (the job's options, or the device).
    #[error("{}: job '{job}' cannot run without the timing model (--untimed): {why}", place(file, *line))]
    Untimed {
        file: String,
        line: usize,
        job: String,
        why: String,
    },
    #[error("{}: job '{job}': time_based needs a runtime (e.g. runtime=60s), or the job never ends", place(file, *line))]
    Unbounded {
        file: String,
        line: usize,
        job: String,
    },
    #[error(
        "job '{job}' at {time_ns} ns: the device refused a {kind} at byte {offset_bytes}: {error}"
    )]
    Device {
        job: String,
        time_ns: SimTime,
        kind: &'static str,
        offset_bytes: u64,
        error: DeviceError,
    },
    /// Jobs stopped at an I/O the device refused as an I/O error (a drive gone read-only):
    /// as fio does, each such job ended there with its `error` set and the others ran on.
    /// `result` holds what the run measured.
    #[error("{}", io_errors_text(errors))]
    Io {
        errors: Vec<JobIoError>,
        result: Box<flashlab_report::RunResult>,
    },
    #[error("job '{job}' at {time_ns} ns: the device answered a {kind} with a completion at {done_ns} ns, {why}")]
    BadCompletion {
        job: String,
        time_ns: SimTime,
        kind: &'static str,
        done_ns: SimTime,
        why: &'static str,
    },
    #[error("simulated time stopped at {time_ns} ns: {events} events in a row without time advancing (the model makes no progress)")]
    NoProgress { time_ns: SimTime, events: u64 },
    #[error("at {time_ns} ns jobs are still running but nothing is scheduled (the run loop lost track of them)")]
    Stuck { time_ns: SimTime },
    #[error("the run passed the simulated time limit of {limit_ns} ns")]
    TimeLimit { limit_ns: SimTime },
    /// Work was due past [`MAX_SIM_TIME_NS`]: the job's durations add up to more simulated
    /// time than the model's u64 nanosecond clock can carry on from.
    #[error("work was due at {time_ns} ns, past the {} ns (about 146 years) of simulated time a run can reach: the job's runtime, startdelay, ramp_time, thinktime or rate (or replay's --speed or --time-unit) add up to more; lower them", MAX_SIM_TIME_NS)]
    TimeOverflow { time_ns: SimTime },
    #[error("scale: capacity factor {capacity_factor} and die factor {die_factor} must both be finite and at least 1")]
    BadScale {
        capacity_factor: f64,
        die_factor: f64,
    },
    /// The slice cuts dies, and a job's queue cannot be shared among the dies left
    /// ([`die_cut_refusal`]).
    #[error("the slice simulates fewer dies than the drive has, and {why}: a die cut would change its figures; simulate a slice that keeps every die (a larger sim.scale, within sim.max_memory)")]
    DieCut { why: String },
    #[error("event queue: {0}")]
    Queue(#[from] flashlab_engine::queue::QueueError),
}

/// The I/O a job stopped at, and why the device refused it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("job '{job}' at {time_ns} ns: {}", what(self))]
pub struct JobIoError {
    pub job: String,
    pub time_ns: SimTime,
    pub kind: &'static str,
    pub offset_bytes: u64,
    pub error: JobFailure,
}

/// Why a job stopped at an I/O.
#[derive(Debug, Clone, PartialEq)]
pub enum JobFailure {
    /// The device refused the request (a drive gone read-only, data it cannot read back).
    Device(DeviceError),
    /// fio's latency-target mode: an I/O at queue depth 1 took longer than the target, so
    /// no depth meets it (fio's "max latency exceeded", ETIMEDOUT).
    LatencyTarget { latency_ns: u64, target_ns: u64 },
    /// fio's `max_latency`: a measured I/O's total latency exceeded it (ETIMEDOUT).
    MaxLatency { latency_ns: u64, max_ns: u64 },
    /// fio's `rate_min` (`bandwidth`, bytes/s) or `rate_iops_min`: a `rate_cycle` of the
    /// direction fell below it (fio's EIO from `check_min_rate`).
    RateMin {
        bandwidth: bool,
        rate: f64,
        min: u64,
    },
}

fn what(e: &JobIoError) -> String {
    match &e.error {
        JobFailure::Device(d) => format!(
            "the device refused a {} at byte {}: {d}",
            e.kind, e.offset_bytes
        ),
        JobFailure::LatencyTarget {
            latency_ns,
            target_ns,
        } => format!(
            "a {} at byte {} took {latency_ns} ns at queue depth 1, over the latency target of {target_ns} ns: no queue depth meets it (fio's max latency exceeded)",
            e.kind, e.offset_bytes
        ),
        JobFailure::MaxLatency { latency_ns, max_ns } => format!(
            "a {} at byte {} took {latency_ns} ns, over max_latency of {max_ns} ns (fio's max latency exceeded)",
            e.kind, e.offset_bytes
        ),
        JobFailure::RateMin {
            bandwidth: true,
            rate,
            min,
        } => format!(
            "rate_min={min} B/s not met: {} B/s of {}s over a rate_cycle",
            rate.round(),
            e.kind
        ),
        JobFailure::RateMin {
            bandwidth: false,
            rate,
            min,
        } => format!(
            "rate_iops_min={min} not met: {:.1} IOPS of {}s over a rate_cycle",
            rate, e.kind
        ),
    }
}

/// fio's name of a request kind, as errors name it.
pub(crate) fn kind_name(kind: IoKind) -> &'static str {
    match kind {
        IoKind::Read => "read",
        IoKind::Write => "write",
        IoKind::Trim => "trim",
        IoKind::Flush => "flush",
    }
}

impl JobIoError {
    /// `job`'s request `req`, refused at `time_ns` with `error`.
    pub(crate) fn new(job: String, time_ns: SimTime, req: &IoRequest, error: DeviceError) -> Self {
        Self::failed(
            job,
            time_ns,
            req.kind,
            req.offset_bytes,
            JobFailure::Device(error),
        )
    }

    pub(crate) fn failed(
        job: String,
        time_ns: SimTime,
        kind: IoKind,
        offset_bytes: u64,
        error: JobFailure,
    ) -> Self {
        JobIoError {
            job,
            time_ns,
            kind: kind_name(kind),
            offset_bytes,
            error,
        }
    }

    /// The entry of the run JSON's `flashlab.io_errors` list.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "job": self.job,
            "time_ns": self.time_ns,
            "kind": self.kind,
            "offset_bytes": self.offset_bytes,
            "errno": self.errno(),
            "error": match &self.error {
                JobFailure::Device(d) => d.to_string(),
                JobFailure::LatencyTarget { .. }
                | JobFailure::MaxLatency { .. }
                | JobFailure::RateMin { .. } => what(self),
            },
        })
    }

    /// fio's `error` for the job: an errno (30, EROFS, for a read-only drive; 5, EIO, for
    /// data the drive could not read back or a write a zoned drive refuses (109,
    /// ETOOMANYREFS, for its open and active zone limits); 110, ETIMEDOUT, for a latency target no queue
    /// depth meets or an I/O over max_latency).
    pub fn errno(&self) -> i32 {
        match self.error {
            JobFailure::Device(DeviceError::ReadOnly { .. }) => 30,
            // A zoned drive's status, as Linux turns it into an errno.
            JobFailure::Device(DeviceError::Zone { errno, .. }) => errno,
            JobFailure::Device(_) | JobFailure::RateMin { .. } => 5,
            JobFailure::LatencyTarget { .. } | JobFailure::MaxLatency { .. } => 110,
        }
    }
}

fn io_errors_text(errors: &[JobIoError]) -> String {
    let first = errors.first().map_or(String::new(), ToString::to_string);
    match errors.len() {
        0 | 1 => first,
        n => format!("{first} (and {} more jobs stopped by I/O errors)", n - 1),
    }
}

impl RunError {
    /// True when the job file (not the model) is at fault: the CLI exits with 2.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            RunError::Job { .. }
                | RunError::Target { .. }
                | RunError::Placement { .. }
                | RunError::Unbounded { .. }
                | RunError::SteadyState { .. }
                | RunError::Iolog { .. }
                | RunError::Verify { .. }
                | RunError::ReportGroup { .. }
                | RunError::Zbd { .. }
                | RunError::Flow { .. }
                | RunError::Untimed { .. }
                | RunError::BadScale { .. }
                | RunError::DieCut { .. }
                | RunError::TimeOverflow { .. }
        )
    }
}
