//! The event loop proper. One `JobClone` per fio job clone; one event queue; one host queue in
//! front of the device. Nothing here allocates per I/O: queues are sized up front.

use std::collections::VecDeque;

use flashlab_engine::{
    BlockDevice, DeviceError, EventQueue, IoKind, IoRequest, PrefetchStage, SeedTree, SimTime,
    WriteWindow, ZoneOp, NS_PER_S,
};
use flashlab_report::iolog::{IoLog, IoLogAction};
use flashlab_report::{
    Disabled, JobResult, JobStats, JobStatsConfig, LogConfig, PercentileKinds, RunResult, Unified,
    DEFAULT_PERCENTILES,
};
use flashlab_workload::{
    BlockSize, ExitWhat, GeneratedIo, IoGenerator, JobFile, JobSpec, RateProcess, ThinkBlocks,
};
use serde_json::{json, Value};

use crate::rate::RateState;
use crate::scale::ScalePlan;
use crate::targets::{OneDevice, Targets};
use crate::{kind_name, JobFailure, JobIoError, Progress, RunError, RunOptions, MAX_SIM_TIME_NS};

mod batch;
mod build;
mod flow;
mod issue;
mod lat_target;
mod life;
mod min_rate;
mod placement;
mod result;
mod sink;
mod steady;
mod verify;
mod watch;

use batch::{Batch, Gate};
use lat_target::{LatAction, LatTarget};
use life::Lifecycle;
use min_rate::MinRate;
use sink::Sink;
use steady::{Check, SteadyTracker};
use verify::{Next, Verify};

/// An I/O on the device, waiting for its completion event.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    clone: u32,
    kind: IoKind,
    issue_ns: SimTime,
    /// Issue time plus the device's acceptance cost (see the crate docs on slat).
    accepted_ns: SimTime,
    offset_bytes: u64,
    len_bytes: u64,
}

/// Events are small (8 bytes): an I/O's details stay in the runner's in-flight table, so the
/// event heap moves 24-byte entries instead of 64-byte ones on every push and pop.
#[derive(Debug, Clone, Copy)]
enum Event {
    /// The device finished the I/O in slot `slot` of the in-flight table.
    Complete { slot: u32 },
    /// A clone paused by its rate or its think time may issue again.
    Wake { clone: u32 },
    /// `ramp_time` is over: statistics start.
    RampEnd { clone: u32 },
    /// `runtime` is over: the clone stops issuing.
    Deadline { clone: u32 },
    /// `startdelay` is over: the clone begins.
    Start { clone: u32 },
    /// A steady-state detection takes its next sample.
    SteadyCheck { tracker: u32 },
    /// A thinking clone's reap is over (every completion at this instant counted): decide
    /// whether it thinks now.
    ThinkCheck { clone: u32 },
}

/// The smallest block a direction issues (fio's `min_bs`).
fn min_block_bytes(bs: &BlockSize) -> u64 {
    match bs {
        BlockSize::Fixed(s) => *s,
        BlockSize::Range { min, .. } => *min,
        BlockSize::Split(v) => v.iter().map(|e| e.0).min().unwrap_or(0),
    }
}

/// An I/O waiting for a free device slot.
#[derive(Debug, Clone, Copy)]
struct Queued {
    clone: u32,
    req: IoRequest,
    issue_ns: SimTime,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Think {
    Running,
    /// fio reaps completions after the I/O that filled the queue and only then checks its
    /// think time: the completions of this instant are being counted (a ThinkCheck is due).
    Reaping,
    /// Thinking is due: wait until every I/O in flight has completed (fio's quiesce).
    Draining,
    /// Thinking until the pending Wake.
    Sleeping,
}

/// When a clone runs and measures.
struct Window {
    start_ns: SimTime,
    /// `start + ramp + runtime`; `SimTime::MAX` without a runtime.
    deadline_ns: SimTime,
    measuring: bool,
    measure_start_ns: SimTime,
    end_ns: SimTime,
}

/// The I/Os a clone drew from its generator and has not issued yet.
struct DrawAhead {
    /// Drawn from the generator but held back by the rate limit.
    held: Option<GeneratedIo>,
    /// The generator's next I/O, drawn ahead so that the device can be told of it
    /// (`BlockDevice::prefetch`) before it is due.
    next: Option<GeneratedIo>,
    /// The one after it, drawn ahead too by a clone that hints two I/Os ahead
    /// ([`PrefetchStage`]); only ever set while `next` is.
    after_next: Option<GeneratedIo>,
    /// The generator has returned None (it is not asked again). The generator's state, not
    /// the clone's: the clone is exhausted once it has also issued what it drew ahead. Kept
    /// apart from `next` because the generator fills that `Option` in place, which an
    /// enum of both would have to copy on every I/O.
    generator_done: bool,
}

/// A clone's think time (fio's `thinktime` and its `thinktime_blocks`, `thinktime_iotime`).
struct Thinking {
    state: Think,
    /// The job thinks (`thinktime` > 0).
    on: bool,
    /// Data I/Os issued and completed, fio's `io_issues` and `io_blocks` that
    /// `thinktime_blocks` is compared with.
    issued: u64,
    completed: u64,
    /// The count (of the kind `thinktime_blocks_type` names) when the clone last thought.
    last_blocks: u64,
    /// When the clone last finished thinking (its start before the first time), for
    /// `thinktime_iotime`.
    last_ns: SimTime,
    /// The last data I/O filled the queue: check think time once the reap after it is over.
    after_reap: bool,
    /// Direction of the last data I/O, whose rate `rate_ignore_thinktime` moves on.
    ddir: usize,
}

/// A clone's flushes: the writes counted towards the next `fsync`/`fdatasync`, and the
/// flush due.
struct FlushState {
    writes_since_fsync: u32,
    writes_since_fdatasync: u32,
    /// A flush is due before the next data I/O.
    pending: bool,
    /// `end_fsync`'s flush has been queued.
    end_sent: bool,
    /// Flushes completed.
    done: u64,
}

/// One running clone of a job.
struct JobClone<'a> {
    spec: &'a JobSpec,
    /// The target (namespace) the job's filename names.
    target: usize,
    /// Index of the job in the file (and in the scale plan).
    spec_index: usize,
    job_index: u32,
    groupid: u32,
    phase: usize,
    generator: IoGenerator,
    stats: Option<Sink>,
    result: Option<JobResult>,
    /// What the result takes besides the statistics, kept from the clone's finish until
    /// the statistics thread has the result.
    extras: Option<ResultExtras>,
    iodepth: u32,
    /// fio's `iodepth_low`: after the queue filled, no I/O is issued until it has drained to
    /// this many (`iodepth` itself: kept full).
    iodepth_low: u32,
    /// The queue filled and is draining to `iodepth_low`.
    draining_to_low: bool,
    /// fio's submission and completion batches, when the job sets any that matter.
    batch: Option<Batch>,
    in_flight: u32,
    /// When the clone runs and measures.
    window: Window,
    /// What the clone drew from its generator and has not issued yet.
    draw: DrawAhead,
    /// Waiting, running, ending or finished.
    life: Lifecycle,
    /// The I/O the device refused, which failed the clone.
    io_error: Option<JobIoError>,
    /// Time of the one Wake event that counts; older Wake events are stale and ignored.
    wake_at: Option<SimTime>,
    /// fio's think time.
    think: Thinking,
    /// fio's `fsync`, `fdatasync` and `end_fsync` flushes.
    flush: FlushState,
    rate: RateState,
    /// No rate limit, fsync, FUA, think time or overlap guard: an issued I/O needs none of
    /// their bookkeeping (decided once, not per I/O).
    plain: bool,
    /// With `serialize_overlap`: the byte ranges `[start, end)` of the clone's I/Os in flight
    /// (at most `iodepth`, allocated once).
    overlap_guard: Option<Vec<(u64, u64)>>,
    /// The host's I/O stack as this clone's engine has it.
    host: crate::host::Host,
    /// `plain`, and no batches and no verify: the issue loop needs none of their tests
    /// ([`Runner::issue_simple`]).
    simple: bool,
    /// A rate-limited job mixing reads and writes: the direction of each I/O is chosen when
    /// it is drawn ([`rate_direction`]).
    choose_ddir: bool,
    /// The job's `compressible_percent`, for its writes (other requests carry no data); kept
    /// here so the per-I/O path does not reach into the spec.
    write_compressible_percent: u8,
    issued_bytes: u64,
    /// Data I/Os and bytes completed since the start, ramp included, per direction (kept
    /// for a watched clone: steady-state samples, latency windows, minimum rates, the overlap
    /// guard).
    done_ios: [u64; 3],
    done_bytes: [u64; 3],
    /// The steady-state detection judging this clone, if its job asked for one.
    steady: Option<u32>,
    /// fio's latency-target search, if the job asked for one (it sets `iodepth`).
    lat_target: Option<LatTarget>,
    /// fio's minimum rates, if the job sets any.
    min_rate: Option<MinRate>,
    /// Completions need a look beyond the statistics (a steady-state detection,
    /// `lat_target` or `min_rate`): one flag on the per-I/O path instead of a test of each.
    watched: bool,
    /// The I/Os issued, when the job writes an iolog (`write_iolog`).
    iolog: Option<IoLog>,
    measured_bytes: [u64; 3],
    measured_ios: [u64; 3],
    /// `wait_for=`: the clones of the waited-for job in this clone's phase (earlier phases
    /// are over when it starts).
    waitees: Vec<usize>,
    /// fio's verify phase, for a job reading back what it writes.
    verify: Option<Box<Verify>>,
    /// The placement identifiers of the clone's writes (`fdp=1`), if any.
    data_placement: Option<placement::DataPlacement>,
    /// The clone's part in fio's flow control (`flow=` above 0), if any.
    flow: Option<flow::FlowMember>,
    /// What the clone gave the device without the timing model, when its job ran so.
    untimed: Option<UntimedDone>,
}

/// A job run without the timing model: its I/Os and bytes (on the device run, a slice's
/// before scaling back).
#[derive(Debug, Clone, Copy)]
struct UntimedDone {
    ios: u64,
    bytes: u64,
}

impl JobClone<'_> {
    /// Note an issued request in the job's iolog.
    #[cold]
    #[inline(never)]
    fn log_io(&mut self, req: &IoRequest, now: SimTime) {
        let action = match req.kind {
            IoKind::Read => IoLogAction::Read,
            IoKind::Write => IoLogAction::Write,
            IoKind::Trim => IoLogAction::Trim,
            IoKind::Flush => IoLogAction::Sync,
        };
        let time_us = now.saturating_sub(self.window.start_ns) / 1_000;
        if let Some(l) = self.iolog.as_mut() {
            l.add(time_us, action, req.offset_bytes, req.len_bytes);
        }
    }

    /// Statistics start (again) at `now`: the end of `ramp_time`, or fio's reset for the
    /// final window of a latency-target search.
    fn start_measuring(&mut self, now: SimTime) {
        self.window.measuring = true;
        self.window.measure_start_ns = now;
        self.measured_bytes = [0; 3];
        self.measured_ios = [0; 3];
        self.stats
            .as_mut()
            .expect("stats live until finish")
            .start_measuring(now);
    }

    /// Whether the clone stops issuing for now at the queue-depth gate: `blocked` (ended,
    /// not running, or the queue full) marks a full queue for draining down to
    /// `iodepth_low`, and a draining queue waits until it is there.
    #[inline(always)]
    fn held_by_depth(&mut self, blocked: bool) -> bool {
        if blocked {
            if self.in_flight >= self.iodepth && self.iodepth_low < self.iodepth {
                self.draining_to_low = true;
            }
            return true;
        }
        if self.draining_to_low {
            if self.in_flight > self.iodepth_low {
                return true;
            }
            self.draining_to_low = false;
        }
        false
    }

    /// The generator has nothing more: whether the job's closing fsync is still to go
    /// (`end_fsync`), which the caller then issues.
    #[inline(always)]
    fn exhaust(&mut self) -> bool {
        self.life.exhaust();
        if self.spec.sync.end_fsync && !self.flush.end_sent {
            self.flush.end_sent = true;
            self.flush.pending = true;
            return true;
        }
        false
    }

    /// The device request for `io`, with `fua`, carrying the job's compressible share when
    /// it writes.
    #[inline(always)]
    fn request(&self, io: &GeneratedIo, fua: bool) -> IoRequest {
        IoRequest {
            kind: io.kind,
            offset_bytes: io.offset_bytes,
            len_bytes: io.len_bytes,
            fua,
            compressible_percent: if io.kind == IoKind::Write {
                self.write_compressible_percent
            } else {
                0
            },
            placement: None,
        }
    }

    /// `req` with the placement identifier of the clone's next write, when it writes with
    /// one (`fdp=1`).
    #[inline(always)]
    fn place(&mut self, mut req: IoRequest) -> IoRequest {
        if req.kind == IoKind::Write {
            if let Some(p) = self.data_placement.as_mut() {
                req.placement = Some(p.next_id());
            }
        }
        req
    }

    /// The generator's next I/O (the one drawn ahead, if any). The sequence is the
    /// generator's own: drawing ahead changes only when it is asked.
    #[inline]
    fn next_generated(&mut self) -> Option<GeneratedIo> {
        if let Some(io) = self.draw.next.take() {
            self.draw.next = self.draw.after_next.take();
            return Some(io);
        }
        if self.draw.generator_done {
            return None;
        }
        let io = self.generator.next_io();
        self.draw.generator_done = io.is_none();
        io
    }

    /// Draw the next I/O ahead of time, if not drawn yet; returns it.
    #[inline]
    fn draw_ahead(&mut self) -> Option<&GeneratedIo> {
        if self.draw.next.is_none() && !self.draw.generator_done {
            self.draw.next = self.generator.next_io();
            self.draw.generator_done = self.draw.next.is_none();
        }
        self.draw.next.as_ref()
    }

    /// Draw the next two I/Os ahead of time, those not drawn yet; returns them.
    #[inline]
    fn draw_two_ahead(&mut self) -> (Option<GeneratedIo>, Option<GeneratedIo>) {
        self.draw_ahead();
        if self.draw.next.is_some() && self.draw.after_next.is_none() && !self.draw.generator_done {
            self.draw.after_next = self.generator.next_io();
            self.draw.generator_done = self.draw.after_next.is_none();
        }
        (self.draw.next, self.draw.after_next)
    }
}

const DDIR_NAMES: [&str; 3] = ["read", "write", "trim"];

/// The direction a rate-limited mixed job issues at `now` when its mix drew `drawn`, as
/// fio's `rate_ddir`: the drawn direction if it is due (or unlimited); else the other one
/// if the mix has it and it is due; else whichever is due first (the drawn one on a tie).
/// The clone then waits for the chosen direction's time, if it is not due yet.
fn rate_direction(
    rate: &RateState,
    start_ns: SimTime,
    now: SimTime,
    drawn: IoKind,
    read_in_mix: bool,
    write_in_mix: bool,
) -> IoKind {
    let due = |kind: IoKind| {
        let d = kind.ddir();
        if rate.limited(d) {
            rate.planned_ns(d, start_ns)
        } else {
            0
        }
    };
    let (other, other_in_mix) = match drawn {
        IoKind::Read => (IoKind::Write, write_in_mix),
        _ => (IoKind::Read, read_in_mix),
    };
    let mine = due(drawn);
    if mine <= now || !other_in_mix {
        return drawn;
    }
    if due(other) < mine {
        other
    } else {
        drawn
    }
}

struct Runner<'a, 'd, T: Targets + ?Sized> {
    file: &'a JobFile,
    device: &'d mut T,
    options: &'a RunOptions,
    plan: &'a ScalePlan,
    queue: EventQueue<Event>,
    /// I/Os on the device, by slot; `free_slots[..free_len]` is a stack of the unused ones.
    /// Sized up front for the most I/Os the device can hold at once (its queue depth, and no
    /// more than the clones' depths plus a flush each): fixed slices, no growth checks.
    in_flight: Box<[InFlight]>,
    free_slots: Box<[u32]>,
    free_len: usize,
    host_queue: VecDeque<Queued>,
    device_in_flight: u32,
    device_limit: u32,
    clones: Vec<JobClone<'a>>,
    /// Clone index range of each phase.
    phases: Vec<(usize, usize)>,
    phase_names: Vec<String>,
    /// Whether each phase is a job run without the timing model (`RunOptions::untimed_jobs`).
    untimed: Vec<bool>,
    /// The end of the last untimed job: the device is busy with its work until then, so the
    /// gap before it is not idle time.
    untimed_until_ns: SimTime,
    /// Simulated time at which each phase started.
    phase_start_ns: Vec<SimTime>,
    /// The device's write totals at each phase's start, and at the run's end last (None
    /// for a device that does not count them).
    phase_writes: Vec<Option<flashlab_engine::WriteTotals>>,
    current_phase: usize,
    phase_left: usize,
    all_done: bool,
    /// Steady-state detections (fio's `steadystate`), each judging a clone or a group.
    trackers: Vec<SteadyTracker>,
    /// A job with `exitall` and `exit_what=all` ended: later jobs start stopped.
    exit_all: bool,
    /// Stopping the jobs an `exitall` names.
    exiting: bool,
    /// Some clone of the run has `wait_for=`.
    has_waiters: bool,
    /// Waiting clones whose waitees are all done, to be started.
    ready: Vec<usize>,
    /// fio's zone state of each target a `zonemode=zbd` job writes, and each clone's part
    /// (None for other clones; empty when no job is zoned).
    zbd_devices: Vec<crate::zbd::ZbdDevice>,
    zbd_jobs: Vec<Option<crate::zbd::ZbdJob>>,
    /// fio's flow control groups (empty when no job sets `flow`), and the clones a group
    /// has just freed, to issue for after the event at hand.
    flows: Vec<flow::FlowGroup>,
    flow_retry: Vec<u32>,
}

/// What a finished clone's result takes besides its statistics: the latency-target search's
/// depth and settings, the I/O error that stopped it, its zone resets.
#[derive(Debug, Clone, Copy, Default)]
struct ResultExtras {
    latency_target: Option<(u32, u64, u64, f64)>,
    errno: Option<i32>,
    zone_resets: Option<u64>,
}

impl ResultExtras {
    fn apply(&self, result: &mut JobResult) {
        if let Some((depth, target_ns, window_us, percentile)) = self.latency_target {
            result.set_latency_target(depth, target_ns, window_us, percentile);
        }
        if let Some(e) = self.errno {
            result.set_error(e);
        }
        if let Some(resets) = self.zone_resets {
            result.set_zone_resets(resets);
        }
    }
}

/// Run every job of `file` against `device`. `progress` is called every
/// `options.limits.progress_every_events` events and once at the end.
///
/// The returned [`RunResult`]'s `"flashlab"` object holds the seed, the device name and, for
/// rate-limited clones, the target and achieved rates; callers add the device's counters.
///
/// When `options.scale` says the device is a slice of a larger drive, every job is shrunk to
/// the slice, the results are scaled back to the whole drive, and the `"flashlab"` object
/// gets a `"scale"` member saying so (see [`crate::SliceScale`]).
pub fn run_jobs(
    file: &JobFile,
    device: &mut dyn BlockDevice,
    options: &RunOptions,
    progress: &mut dyn FnMut(&Progress),
) -> Result<RunResult, RunError> {
    let plan = plan(file, options)?;
    let mut one = OneDevice(device);
    let mut runner = Runner::new(plan.file(file), &mut one, options, &plan)?;
    runner.run_all(progress)?;
    runner.into_checked_result()
}

/// [`run_jobs`] against several targets (the namespaces of a drive): each job goes to the
/// target its `filename=` names, with offsets and capacity of that target. A filename no
/// target answers to is a [`RunError::Target`] naming the job and the valid names.
pub fn run_targets(
    file: &JobFile,
    targets: &mut dyn Targets,
    options: &RunOptions,
    progress: &mut dyn FnMut(&Progress),
) -> Result<RunResult, RunError> {
    let plan = plan(file, options)?;
    let mut runner = Runner::new(plan.file(file), targets, options, &plan)?;
    runner.run_all(progress)?;
    runner.into_checked_result()
}

/// `file` as a run with `options` runs it: on a slice, its byte quantities and counts divided
/// by the capacity factor ([`crate::SliceScale`]); unchanged at full scale. For a caller that
/// generates a job's I/Os itself (the suites' untimed steps) and must give the FTL what the
/// run would. Refused as the run would refuse it.
pub fn sliced_file(file: &JobFile, options: &RunOptions) -> Result<JobFile, RunError> {
    let plan = plan(file, options)?;
    Ok(plan.file(file).clone())
}

fn plan(file: &JobFile, options: &RunOptions) -> Result<ScalePlan, RunError> {
    if !options.scale.is_valid() {
        return Err(RunError::BadScale {
            capacity_factor: options.scale.capacity_factor,
            die_factor: options.scale.die_factor,
        });
    }
    if let Some(why) = crate::scale::die_cut_refusal(file, options.scale) {
        return Err(RunError::DieCut { why });
    }
    Ok(ScalePlan::new(
        file,
        options.scale,
        options.timed_phases,
        options.region_sizes,
    ))
}

/// What tests inspect of each clone after a run.
#[cfg(test)]
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CloneSummary {
    pub job_index: u32,
    pub groupid: u32,
    pub phase: usize,
    pub start_ns: SimTime,
    pub measure_start_ns: SimTime,
    pub end_ns: SimTime,
    pub measured_ios: [u64; 3],
    pub measured_bytes: [u64; 3],
    pub flushes: u64,
    pub late_ios: u64,
}

/// [`run_jobs`] that also returns each clone's summary.
#[cfg(test)]
pub(crate) fn run_with_summaries(
    file: &JobFile,
    device: &mut dyn BlockDevice,
    options: &RunOptions,
) -> Result<(RunResult, Vec<CloneSummary>), RunError> {
    let plan = plan(file, options)?;
    let mut one = OneDevice(device);
    let mut runner = Runner::new(plan.file(file), &mut one, options, &plan)?;
    runner.run_all(&mut |_| {})?;
    let summaries = runner.summaries();
    Ok((runner.into_result(), summaries))
}

impl<'a, 'd, T: Targets + ?Sized> Runner<'a, 'd, T> {
    /// [`Runner::run`], with the clones' statistics kept on a thread of their own when the
    /// options allow two threads or more (`sink`): the same calls in the same order, so the
    /// same results.
    fn run_all(&mut self, progress: &mut dyn FnMut(&Progress)) -> Result<(), RunError> {
        if self.options.threads < 2 || self.clones.is_empty() {
            return self.run(progress);
        }
        let (out, mut consumer) = sink::pipe(self.clones.len());
        for (i, c) in self.clones.iter_mut().enumerate() {
            if let Some(s) = c.stats.as_mut() {
                consumer.keep(i, s.take_here(i as u32, &out));
            }
        }
        std::thread::scope(|scope| {
            let worker = std::thread::Builder::new()
                .name("flashlab-stats".into())
                .spawn_scoped(scope, move || consumer.run())
                .expect("a thread for the statistics");
            let ran = self.run(progress);
            sink::close(&out);
            let results = match worker.join() {
                Ok(r) => r,
                Err(panic) => std::panic::resume_unwind(panic),
            };
            for (c, result) in self.clones.iter_mut().zip(results) {
                if let Some(mut result) = result {
                    if let Some(extras) = c.extras.take() {
                        extras.apply(&mut result);
                    }
                    c.result = Some(result);
                }
            }
            ran
        })
    }

    fn run(&mut self, progress: &mut dyn FnMut(&Progress)) -> Result<(), RunError> {
        if self.phases.is_empty() {
            self.all_done = true;
            return Ok(());
        }
        self.start_phase(0, 0)?;
        self.advance_phases(0)?;
        let limits = &self.options.limits;
        let progress_mask = limits.progress_every_events.next_power_of_two().max(1) - 1;
        let mut events: u64 = 0;
        let mut same_time_events: u64 = 0;
        let mut last_ns: SimTime = 0;
        while !self.all_done {
            // Nothing on the device or waiting for it, and the next event is later: the device
            // may use the gap for background work.
            if self.device_in_flight == 0
                && self.host_queue.is_empty()
                && self.queue.now_ns() >= self.untimed_until_ns
            {
                if let Some(next) = self.queue.peek_time_ns() {
                    if next > self.queue.now_ns() && next <= MAX_SIM_TIME_NS {
                        self.device.idle(self.queue.now_ns(), next);
                    }
                }
            }
            let Some((now, event)) = self.queue.pop() else {
                return Err(self.flow_stuck().unwrap_or(RunError::Stuck {
                    time_ns: self.queue.now_ns(),
                }));
            };
            if now == last_ns {
                same_time_events += 1;
                if same_time_events > limits.max_events_at_same_time {
                    return Err(RunError::NoProgress {
                        time_ns: now,
                        events: same_time_events,
                    });
                }
            } else {
                last_ns = now;
                same_time_events = 0;
                if now > MAX_SIM_TIME_NS {
                    return Err(RunError::TimeOverflow { time_ns: now });
                }
                if let Some(limit_ns) = limits.max_sim_time_ns {
                    if now > limit_ns {
                        return Err(RunError::TimeLimit { limit_ns });
                    }
                }
            }
            self.handle(now, event)?;
            if !self.ready.is_empty() {
                self.start_ready(now)?;
            }
            if !self.flow_retry.is_empty() {
                self.retry_flows(now)?;
            }
            if self.phase_left == 0 {
                self.advance_phases(now)?;
            }
            events += 1;
            if events & progress_mask == 0 {
                self.report_progress(now, progress);
            }
        }
        let now = self.queue.now_ns();
        progress(&Progress {
            now_ns: now,
            fraction_done: 1.0,
            phase: self.phases.len() - 1,
            phases: self.phases.len(),
            jobs: &self.phase_names[self.phases.len() - 1],
        });
        Ok(())
    }

    fn report_progress(&self, now: SimTime, progress: &mut dyn FnMut(&Progress)) {
        let (lo, hi) = self.phases[self.current_phase];
        let mut sum = 0.0;
        for c in &self.clones[lo..hi] {
            sum += clone_fraction(c, now);
        }
        let within = if hi > lo { sum / (hi - lo) as f64 } else { 1.0 };
        progress(&Progress {
            now_ns: now,
            fraction_done: ((self.current_phase as f64 + within) / self.phases.len() as f64)
                .clamp(0.0, 1.0),
            phase: self.current_phase,
            phases: self.phases.len(),
            jobs: &self.phase_names[self.current_phase],
        });
    }

    /// Start the next phases while the current one is over (a phase may end at once if its
    /// jobs have nothing to do).
    fn advance_phases(&mut self, now: SimTime) -> Result<(), RunError> {
        while self.phase_left == 0 && !self.all_done {
            if self.current_phase + 1 >= self.phases.len() {
                self.all_done = true;
                self.phase_writes[self.phases.len()] = self.device.write_totals();
            } else {
                self.start_phase(self.current_phase + 1, now)?;
            }
        }
        Ok(())
    }

    fn start_phase(&mut self, phase: usize, now: SimTime) -> Result<(), RunError> {
        self.current_phase = phase;
        self.phase_start_ns[phase] = now;
        self.phase_writes[phase] = self.device.write_totals();
        let (lo, hi) = self.phases[phase];
        self.phase_left = hi - lo;
        if self.exit_all {
            // fio's exit_what=all: the jobs left end as they start, having done nothing.
            for c in &mut self.clones[lo..hi] {
                c.life.stop();
            }
        }
        if self.untimed[phase] && !self.exit_all {
            return self.run_untimed(lo, now);
        }
        if let Some(window) = self.write_window(lo, hi) {
            self.device.write_window(window);
        }
        for i in lo..hi {
            if self.clones[i].life.waiting() {
                continue;
            }
            let delay_ns = self.clones[i].spec.time.startdelay_ns;
            if delay_ns > 0 {
                self.queue.schedule(
                    now.saturating_add(delay_ns),
                    Event::Start { clone: i as u32 },
                )?;
            } else {
                self.start_clone(i, now)?;
            }
        }
        // Issue only once every clone of the phase has started, so that clones listed later
        // are not disadvantaged by a device already filled by earlier ones at the same time.
        for i in lo..hi {
            if self.clones[i].spec.time.startdelay_ns == 0 && !self.clones[i].life.waiting() {
                self.try_issue(i, now)?;
                self.check_finished(i, now);
            }
        }
        Ok(())
    }

    /// How long the writers among clones `lo..hi` (a phase) run, as scaled to the device:
    /// the shortest time-based writer's ramp and runtime, or what the writers bounded by
    /// bytes write together; `None` for a phase that does not write.
    fn write_window(&self, lo: usize, hi: usize) -> Option<WriteWindow> {
        let writers = self.clones[lo..hi]
            .iter()
            .filter(|c| c.spec.io.rw.directions()[1]);
        let timed = writers
            .clone()
            .filter_map(|c| {
                let t = &c.spec.time;
                t.time_based
                    .then_some(t.runtime_ns)
                    .flatten()
                    .map(|run| t.ramp_time_ns.saturating_add(run))
            })
            .min();
        match timed {
            Some(ns) => Some(WriteWindow::Time(ns)),
            None => writers
                .map(|c| c.generator.total_bytes().unwrap_or(u64::MAX))
                .reduce(u64::saturating_add)
                .map(WriteWindow::Bytes),
        }
    }

    /// Clone `i`, alone in its phase, run without the timing model: every I/O its generator
    /// gives goes to the device at once ([`flashlab_engine::BlockDevice::write_untimed`]),
    /// and the clone finishes when the device says the last one completes.
    fn run_untimed(&mut self, i: usize, now: SimTime) -> Result<(), RunError> {
        self.start_clone(i, now)?;
        let c = &mut self.clones[i];
        let (target, job) = (c.target, c.spec);
        let mut done = UntimedDone { ios: 0, bytes: 0 };
        let mut next = || {
            let io = c.next_generated()?;
            done.ios += 1;
            done.bytes += io.len_bytes;
            Some((io.kind, io.offset_bytes, io.len_bytes))
        };
        let end = match self.device.write_untimed(target, now, &mut next) {
            Ok(end) => end.max(now),
            Err(flashlab_engine::UntimedError::Refused(why)) => {
                return Err(RunError::Untimed {
                    file: build::job_place(self.file, job),
                    line: build::job_line(job),
                    job: job.id.name.clone(),
                    why: format!("the device refuses: {why}"),
                })
            }
            Err(flashlab_engine::UntimedError::Device(flashlab_engine::RefusedIo {
                error,
                kind,
                offset_bytes,
            })) => {
                return Err(RunError::Device {
                    job: job.id.name.clone(),
                    time_ns: now,
                    kind: if kind == IoKind::Trim {
                        "trim"
                    } else {
                        "write"
                    },
                    offset_bytes,
                    error,
                })
            }
        };
        let c = &mut self.clones[i];
        c.untimed = Some(done);
        c.wake_at = Some(end);
        self.untimed_until_ns = end;
        self.queue.schedule(end, Event::Wake { clone: i as u32 })?;
        Ok(())
    }

    fn start_clone(&mut self, i: usize, now: SimTime) -> Result<(), RunError> {
        if let Some(t) = self.clones[i].steady {
            let tracker = &mut self.trackers[t as usize];
            if tracker.origin_ns.is_none() {
                tracker.origin_ns = Some(now);
                let at = now.saturating_add(tracker.interval_ns);
                self.queue.schedule(at, Event::SteadyCheck { tracker: t })?;
            }
        }
        let c = &mut self.clones[i];
        c.window.start_ns = now;
        c.think.last_ns = now;
        if let Some(v) = c.verify.as_mut() {
            v.start(now);
        }
        c.rate.poisson_next_ns = [now; 3];
        c.lat_target = LatTarget::new(c.spec, now);
        c.min_rate = MinRate::new(c.spec, now, self.plan.jobs[c.spec_index].time_factor);
        c.watched = c.lat_target.is_some()
            || c.min_rate.is_some()
            || c.steady.is_some()
            || c.spec.latency.max_latency_ns != [0; 3]
            || c.overlap_guard.is_some();
        if let Some(lt) = &c.lat_target {
            c.iodepth = lt.depth;
        }
        let ramp_ns = c.spec.time.ramp_time_ns;
        if c.life.stopped() {
            // Stopped by another job's exitall before it started: it ends as it starts.
            c.window.deadline_ns = now;
        } else if let Some(runtime_ns) = c.spec.time.runtime_ns {
            c.window.deadline_ns = now.saturating_add(ramp_ns).saturating_add(runtime_ns);
            self.queue
                .schedule(c.window.deadline_ns, Event::Deadline { clone: i as u32 })?;
        }
        if ramp_ns > 0 {
            self.queue.schedule(
                now.saturating_add(ramp_ns),
                Event::RampEnd { clone: i as u32 },
            )?;
        } else {
            c.window.measuring = true;
            c.window.measure_start_ns = now;
            c.stats
                .as_mut()
                .expect("stats live until finish")
                .start_measuring(now);
        }
        Ok(())
    }

    /// One event. Completions, one per I/O, are tested for first and handled inline; the
    /// other events go to [`Runner::handle_other`].
    #[inline(always)]
    fn handle(&mut self, now: SimTime, event: Event) -> Result<(), RunError> {
        if let Event::Complete { slot } = event {
            self.complete(slot, now)
        } else {
            self.handle_other(now, event)
        }
    }

    /// The device finished the I/O in slot `slot` of the in-flight table.
    #[inline(always)]
    fn complete(&mut self, slot: u32, now: SimTime) -> Result<(), RunError> {
        let io = self.in_flight[slot as usize];
        let InFlight {
            clone,
            kind,
            issue_ns,
            accepted_ns,
            offset_bytes,
            len_bytes,
        } = io;
        self.free_slots[self.free_len] = slot;
        self.free_len += 1;
        let i = clone as usize;
        self.device_in_flight -= 1;
        let c = &mut self.clones[i];
        c.in_flight -= 1;
        if let Some(b) = c.batch.as_mut() {
            let ending = (c.life.exhausted() && c.draw.held.is_none() && !c.flush.pending)
                || c.life.ending();
            b.completed(
                c.in_flight,
                ending,
                c.stats.as_mut().filter(|_| c.window.measuring),
            );
        }
        if c.think.on && kind != IoKind::Flush {
            c.think.completed += 1;
            // fio's reap after the I/O that filled the queue waits for one
            // completion, or down to `iodepth_low`; the check follows it (with
            // batches, where the reap ends: `issue_more`).
            if c.think.after_reap
                && c.batch.is_none()
                && c.in_flight <= c.iodepth_low.min(c.iodepth.saturating_sub(1))
            {
                c.think.after_reap = false;
                if c.think.state == Think::Running {
                    c.think.state = Think::Reaping;
                    self.queue.schedule(now, Event::ThinkCheck { clone })?;
                }
            }
        }
        let c = &mut self.clones[i];
        if kind == IoKind::Flush {
            c.flush.done += 1;
            if c.window.measuring && now <= c.window.deadline_ns {
                c.stats
                    .as_mut()
                    .expect("stats live until finish")
                    .record_sync(issue_ns, now);
            }
        } else if c.window.measuring && now <= c.window.deadline_ns {
            let ddir = kind.ddir();
            c.measured_bytes[ddir] += len_bytes;
            c.measured_ios[ddir] += 1;
            c.stats.as_mut().expect("stats live until finish").record(
                ddir,
                issue_ns,
                accepted_ns,
                now,
                len_bytes,
                offset_bytes,
            );
        }
        if c.watched {
            self.watch_completion(i, now, io);
        }
        self.drain_host_queue(now)?;
        let c = &mut self.clones[i];
        if c.think.state == Think::Draining && c.in_flight == 0 && !c.life.stopped() {
            self.start_thinking(i, now)?;
        }
        self.issue_more(i, now)?;
        self.check_finished(i, now);
        Ok(())
    }

    /// Every event but a completion.
    #[inline(never)]
    fn handle_other(&mut self, now: SimTime, event: Event) -> Result<(), RunError> {
        match event {
            Event::Complete { .. } => unreachable!("completions are handled by complete"),
            Event::Wake { clone } => {
                let i = clone as usize;
                let c = &mut self.clones[i];
                if c.wake_at != Some(now) {
                    return Ok(()); // superseded
                }
                c.wake_at = None;
                if c.think.state == Think::Sleeping {
                    c.think.state = Think::Running;
                    c.think.last_ns = now;
                }
                if let Some(m) = c
                    .flow
                    .as_mut()
                    .filter(|m| m.state == flow::FlowState::Sleeping)
                {
                    m.state = flow::FlowState::Running;
                }
                self.try_issue(i, now)?;
                self.check_finished(i, now);
            }
            Event::Start { clone } => {
                let i = clone as usize;
                self.start_clone(i, now)?;
                self.try_issue(i, now)?;
                self.check_finished(i, now);
            }
            Event::RampEnd { clone } => {
                let c = &mut self.clones[clone as usize];
                if !c.life.finished() {
                    c.start_measuring(now);
                }
                // fio 3.33 zeroes its issued and completed counts when the ramp ends but
                // not the count at the last pause: the next pause waits until the new count
                // passes the old one by `thinktime_blocks` (about as many I/Os as the ramp
                // did go by without a pause, as fio 3.33 measures).
                c.think.issued = 0;
                c.think.completed = 0;
            }
            Event::Deadline { clone } => {
                let i = clone as usize;
                let c = &mut self.clones[i];
                if !c.life.finished() {
                    c.life.stop();
                    self.stop_issuing(i, now);
                }
            }
            Event::SteadyCheck { tracker } => self.steady_check(tracker as usize, now)?,
            Event::ThinkCheck { clone } => {
                let i = clone as usize;
                let c = &mut self.clones[i];
                if c.think.state != Think::Reaping {
                    return Ok(());
                }
                c.think.state = Think::Running;
                if c.life.finished() {
                    return Ok(());
                }
                self.check_thinktime(i, now)?;
                self.issue_more(i, now)?;
                self.check_finished(i, now);
            }
        }
        Ok(())
    }

    /// fio's think-time check, made after each data I/O (after the reap that follows it when
    /// the I/O filled the queue): think once `thinktime_blocks` more I/Os have completed (or
    /// been issued) since the last pause, or `thinktime_iotime` has passed since it ended.
    /// Thinking waits for the I/Os in flight first.
    fn check_thinktime(&mut self, i: usize, now: SimTime) -> Result<(), RunError> {
        let c = &mut self.clones[i];
        if c.life.ending() {
            return Ok(());
        }
        let s = c.spec;
        let mut due = false;
        if s.rate.thinktime_iotime_ns > 0 {
            due = now.saturating_sub(c.think.last_ns) >= s.rate.thinktime_iotime_ns;
            // fio skips the count when only the time was asked for: the default of one
            // block would think after every I/O.
            if !due && !s.rate.thinktime_blocks_set {
                return Ok(());
            }
        }
        let count = match s.rate.thinktime_blocks_type {
            ThinkBlocks::Complete => c.think.completed,
            ThinkBlocks::Issue => c.think.issued,
        };
        due |= count >= c.think.last_blocks + u64::from(s.rate.thinktime_blocks.max(1));
        if !due {
            return Ok(());
        }
        // The count taken before the quiesce: completions while draining count towards
        // the next pause, as in fio.
        c.think.last_blocks = count;
        c.think.state = Think::Draining;
        if c.in_flight == 0 {
            self.start_thinking(i, now)?;
        }
        Ok(())
    }

    /// Every I/O of a clone due to think has completed: it sleeps for `thinktime`.
    fn start_thinking(&mut self, i: usize, now: SimTime) -> Result<(), RunError> {
        let c = &mut self.clones[i];
        c.think.state = Think::Sleeping;
        let think_ns = c.spec.rate.thinktime_ns;
        if c.spec.rate.rate_ignore_thinktime {
            let ddir = c.think.ddir;
            let min_bs = min_block_bytes(&c.spec.block.bs[ddir]);
            c.rate.skip_think(ddir, think_ns, min_bs);
        }
        let until = now.saturating_add(think_ns);
        c.wake_at = Some(until);
        self.queue
            .schedule(until, Event::Wake { clone: i as u32 })?;
        Ok(())
    }

    /// The device refused clone `i`'s request as an I/O error: as fio does (without
    /// `continue_on_error`), the job stops there, its I/Os in flight complete, and its result
    /// carries the error; the other jobs run on.
    #[cold]
    #[inline(never)]
    fn fail_clone(&mut self, i: usize, now: SimTime, req: &IoRequest, error: DeviceError) {
        let c = &mut self.clones[i];
        // The refused request never reached the device.
        c.in_flight -= 1;
        if c.io_error.is_none() {
            c.io_error = Some(JobIoError::new(c.spec.id.name.clone(), now, req, error));
        }
        c.life.fail();
        self.stop_issuing(i, now);
    }

    /// Clone `i` (stopped or failed) issues nothing more: what it held back is dropped, and
    /// so are its I/Os still in the host queue, which never reached the device; it finishes
    /// once those in flight complete.
    fn stop_issuing(&mut self, i: usize, now: SimTime) {
        let c = &mut self.clones[i];
        c.draw.held = None;
        c.flush.pending = false;
        let clone = i as u32;
        let mut dropped = 0;
        self.host_queue.retain(|q| {
            let keep = q.clone != clone;
            dropped += u32::from(!keep);
            keep
        });
        self.clones[i].in_flight -= dropped;
        self.check_finished(i, now);
    }

    /// A clone with I/Os in flight is not finished: that test is inlined at every call, the
    /// rest (rarely reached) is not.
    #[inline(always)]
    fn check_finished(&mut self, i: usize, now: SimTime) {
        let c = &self.clones[i];
        if c.life.finished() || c.in_flight > 0 {
            return;
        }
        self.finish_if_done(i, now);
    }

    #[inline(never)]
    fn finish_if_done(&mut self, i: usize, now: SimTime) {
        let c = &mut self.clones[i];
        let out_of_work = c.life.exhausted() && c.draw.held.is_none() && !c.flush.pending;
        let stopping = c.life.ending();
        // A think-time check still due belongs to the job's last I/O (fio may pause there).
        if !stopping && (!out_of_work || c.think.state == Think::Reaping) {
            return;
        }
        c.life.finish();
        c.wake_at = None;
        c.window.end_ns = if c.life.stopped() {
            c.window.deadline_ns
        } else {
            now
        };
        if !c.window.measuring {
            // Finished within ramp_time: an empty measured interval.
            c.window.measuring = true;
            c.window.measure_start_ns = c.window.end_ns;
            c.stats
                .as_mut()
                .expect("stats live until finish")
                .start_measuring(c.window.end_ns);
        }
        if let Some(l) = c.iolog.as_mut() {
            l.end_us = c.window.end_ns.saturating_sub(c.window.start_ns) / 1_000;
        }
        let mut stats = c.stats.take().expect("a clone finishes once");
        if let Some(v) = c.verify.as_mut() {
            stats.set_phase_runtimes_us(v.runtimes_us(c.window.end_ns));
        }
        let extras = self.result_extras(i);
        let c = &mut self.clones[i];
        match stats.finish(c.window.end_ns) {
            Some(mut result) => {
                extras.apply(&mut result);
                c.result = Some(result);
            }
            None => c.extras = Some(extras),
        }
        debug_assert_eq!(c.phase, self.current_phase);
        self.phase_left -= 1;
        let (spec, failed) = (c.spec, c.life.failed());
        if !self.flows.is_empty() {
            self.flow_exit(i);
        }
        if self.has_waiters {
            self.release_waiters();
        }
        if (spec.control.exitall || (spec.control.exitall_on_error && failed)) && !self.exiting {
            self.exit_others(i, now);
        }
    }

    /// What clone `i`'s result takes besides its statistics, as it finishes.
    fn result_extras(&self, i: usize) -> ResultExtras {
        let c = &self.clones[i];
        let mut extras = ResultExtras {
            latency_target: c.lat_target.as_ref().map(|lt| {
                let s = &c.spec.latency;
                (
                    lt.depth,
                    s.latency_target_ns,
                    s.latency_window_ns / 1_000,
                    s.latency_percentile,
                )
            }),
            errno: c.io_error.as_ref().map(JobIoError::errno),
            zone_resets: None,
        };
        // fio counts zone resets of a zbd job that writes or trims.
        if let Some(z) = self.zbd_jobs.get(i).and_then(Option::as_ref) {
            let [_, writes, trims] = c.spec.io.rw.directions();
            if writes || trims {
                extras.zone_resets = Some(z.resets);
            }
        }
        extras
    }

    /// A clone finished: the waiting clones of the phase whose waitees are all done become
    /// ready to start.
    #[cold]
    fn release_waiters(&mut self) {
        let (lo, hi) = self.phases[self.current_phase];
        for w in lo..hi {
            let c = &self.clones[w];
            if c.life.waiting()
                && !c.life.finished()
                && c.waitees.iter().all(|&j| self.clones[j].life.finished())
            {
                self.clones[w].life.release();
                self.ready.push(w);
            }
        }
    }

    /// Start the clones released by [`Self::release_waiters`]: now, or at their startdelay
    /// after the phase began if that is later.
    #[cold]
    fn start_ready(&mut self, now: SimTime) -> Result<(), RunError> {
        let phase_start = self.phase_start_ns[self.current_phase];
        for w in std::mem::take(&mut self.ready) {
            let c = &self.clones[w];
            if c.life.finished() {
                continue;
            }
            let at = now.max(phase_start.saturating_add(c.spec.time.startdelay_ns));
            self.queue.schedule(at, Event::Start { clone: w as u32 })?;
        }
        Ok(())
    }

    /// fio's `exitall`: clone `i` ended, so the jobs its `exit_what` names stop now (their
    /// runtime ends here, as fio terminates them); `all` also keeps every later job from
    /// running.
    #[cold]
    fn exit_others(&mut self, i: usize, now: SimTime) {
        let (groupid, what) = (
            self.clones[i].groupid,
            self.clones[i].spec.control.exit_what,
        );
        if what == ExitWhat::All {
            self.exit_all = true;
        }
        let (lo, hi) = self.phases[self.current_phase];
        // The clones stopped here finish inside this loop; their own exitall has nothing
        // left to stop (and recursing clone by clone would nest as deep as there are clones).
        self.exiting = true;
        for j in lo..hi {
            let c = &mut self.clones[j];
            if c.life.finished() || (what == ExitWhat::Group && c.groupid != groupid) {
                continue;
            }
            c.window.deadline_ns = c.window.deadline_ns.min(now);
            c.life.stop();
            self.stop_issuing(j, now);
        }
        self.exiting = false;
    }

    #[cfg(test)]
    fn summaries(&self) -> Vec<CloneSummary> {
        self.clones
            .iter()
            .map(|c| CloneSummary {
                job_index: c.job_index,
                groupid: c.groupid,
                phase: c.phase,
                start_ns: c.window.start_ns,
                measure_start_ns: c.window.measure_start_ns,
                end_ns: c.window.end_ns,
                measured_ios: c.measured_ios,
                measured_bytes: c.measured_bytes,
                flushes: c.flush.done,
                late_ios: c.rate.late_ios,
            })
            .collect()
    }
}

/// How far a clone is, by time when it has a runtime and by bytes when it has a budget.
fn clone_fraction(c: &JobClone, now: SimTime) -> f64 {
    if c.life.finished() {
        return 1.0;
    }
    let by_time =
        if c.window.deadline_ns != SimTime::MAX && c.window.deadline_ns > c.window.start_ns {
            (now.saturating_sub(c.window.start_ns)) as f64
                / (c.window.deadline_ns - c.window.start_ns) as f64
        } else {
            0.0
        };
    let by_bytes = match c.generator.total_bytes() {
        Some(total) if total > 0 && !c.spec.time.time_based => c.issued_bytes as f64 / total as f64,
        _ => 0.0,
    };
    by_time.max(by_bytes).min(1.0)
}
