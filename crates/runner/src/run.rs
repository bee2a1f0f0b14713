//! The event loop proper. One `JobClone` per fio job clone; one event queue; one host queue in
//! front of the device. Nothing here allocates per I/O: queues are sized up front.

use std::collections::VecDeque;

use flashlab_engine::{
    BlockDevice, DeviceError, EventQueue, IoKind, IoRequest, SeedTree, SimTime, NS_PER_S,
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
mod lat_target;
mod min_rate;
mod result;
mod steady;
mod verify;

use batch::{Batch, Gate};
use lat_target::{LatAction, LatTarget};
use min_rate::MinRate;
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
    stats: Option<JobStats>,
    result: Option<JobResult>,
    iodepth: u32,
    /// fio's `iodepth_low`: after the queue filled, no I/O is issued until it has drained to
    /// this many (`iodepth` itself: kept full).
    iodepth_low: u32,
    /// The queue filled and is draining to `iodepth_low`.
    draining_to_low: bool,
    /// fio's submission and completion batches, when the job sets any that matter.
    batch: Option<Batch>,
    in_flight: u32,
    start_ns: SimTime,
    /// `start + ramp + runtime`; `SimTime::MAX` without a runtime.
    deadline_ns: SimTime,
    measuring: bool,
    measure_start_ns: SimTime,
    end_ns: SimTime,
    /// Drawn from the generator but held back by the rate limit.
    pending: Option<GeneratedIo>,
    /// The generator's next I/O, drawn one step ahead so that the device can be told of it
    /// (`BlockDevice::prefetch`) before it is due.
    lookahead: Option<GeneratedIo>,
    /// The generator has returned None (it is not asked again).
    generator_done: bool,
    exhausted: bool,
    stopped: bool,
    /// Stopped at an I/O the device refused (`io_error`): no more I/O is issued.
    failed: bool,
    io_error: Option<JobIoError>,
    finished: bool,
    /// Time of the one Wake event that counts; older Wake events are stale and ignored.
    wake_at: Option<SimTime>,
    think: Think,
    /// The job thinks (`thinktime` > 0).
    thinks: bool,
    /// Data I/Os issued and completed, fio's `io_issues` and `io_blocks` that
    /// `thinktime_blocks` is compared with.
    think_issued: u64,
    think_completed: u64,
    /// The count (of the kind `thinktime_blocks_type` names) when the clone last thought.
    think_last_blocks: u64,
    /// When the clone last finished thinking (its start before the first time), for
    /// `thinktime_iotime`.
    think_last_ns: SimTime,
    /// The last data I/O filled the queue: check think time once the reap after it is over.
    think_after_reap: bool,
    /// Direction of the last data I/O, whose rate `rate_ignore_thinktime` moves on.
    think_ddir: usize,
    writes_since_flush: u32,
    writes_since_datasync: u32,
    flush_pending: bool,
    /// `end_fsync`'s flush has been queued.
    end_flush_sent: bool,
    rate: RateState,
    /// No rate limit, fsync, FUA or think time: an issued I/O needs none of their
    /// bookkeeping (decided once, not per I/O).
    plain: bool,
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
    /// for a watched clone: steady-state samples, latency windows, minimum rates).
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
    flushes: u64,
    /// `wait_for=`: the clones of the waited-for job in this clone's phase (earlier phases
    /// are over when it starts).
    waitees: Vec<usize>,
    /// Not started yet because a waitee is still running.
    waiting: bool,
    /// fio's verify phase, for a job reading back what it writes.
    verify: Option<Box<Verify>>,
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
        let time_us = now.saturating_sub(self.start_ns) / 1_000;
        if let Some(l) = self.iolog.as_mut() {
            l.add(time_us, action, req.offset_bytes, req.len_bytes);
        }
    }

    /// Statistics start (again) at `now`: the end of `ramp_time`, or fio's reset for the
    /// final window of a latency-target search.
    fn start_measuring(&mut self, now: SimTime) {
        self.measuring = true;
        self.measure_start_ns = now;
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
        self.exhausted = true;
        if self.spec.end_fsync && !self.end_flush_sent {
            self.end_flush_sent = true;
            self.flush_pending = true;
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
        }
    }

    /// The generator's next I/O (the one drawn ahead, if any). The sequence is the
    /// generator's own: drawing ahead changes only when it is asked.
    #[inline]
    fn next_generated(&mut self) -> Option<GeneratedIo> {
        if let Some(io) = self.lookahead.take() {
            return Some(io);
        }
        if self.generator_done {
            return None;
        }
        let io = self.generator.next_io();
        self.generator_done = io.is_none();
        io
    }

    /// Draw the next I/O ahead of time, if not drawn yet; returns it.
    #[inline]
    fn draw_ahead(&mut self) -> Option<&GeneratedIo> {
        if self.lookahead.is_none() && !self.generator_done {
            self.lookahead = self.generator.next_io();
            self.generator_done = self.lookahead.is_none();
        }
        self.lookahead.as_ref()
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
    /// Simulated time at which each phase started.
    phase_start_ns: Vec<SimTime>,
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
    runner.run(progress)?;
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
    runner.run(progress)?;
    runner.into_checked_result()
}

fn plan(file: &JobFile, options: &RunOptions) -> Result<ScalePlan, RunError> {
    if !options.scale.is_valid() {
        return Err(RunError::BadScale {
            capacity_factor: options.scale.capacity_factor,
            die_factor: options.scale.die_factor,
        });
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
    runner.run(&mut |_| {})?;
    let summaries = runner.summaries();
    Ok((runner.into_result(), summaries))
}

impl<'a, 'd, T: Targets + ?Sized> Runner<'a, 'd, T> {
    fn new(
        file: &'a JobFile,
        device: &'d mut T,
        options: &'a RunOptions,
        plan: &'a ScalePlan,
    ) -> Result<Self, RunError> {
        let block_bytes = device.logical_block_bytes();
        let job_seeds = SeedTree::new(options.seed).child("job");
        let mut clones = Vec::new();
        let mut phases: Vec<(usize, usize)> = Vec::new();
        let mut phase_names: Vec<String> = Vec::new();
        let mut groupid = 0u32;
        let mut group_members = 0u32;
        for (spec_index, spec) in file.jobs.iter().enumerate() {
            if spec.time_based && spec.runtime_ns.is_none() {
                return Err(RunError::Unbounded {
                    file: job_place(file, spec),
                    line: job_line(spec),
                    job: spec.name.clone(),
                });
            }
            // fio: stonewall and new_group open a new reporting group unless the current
            // one is still empty; stonewall also waits for every earlier job.
            if (spec.stonewall || spec.new_group) && group_members > 0 {
                groupid += 1;
                group_members = 0;
            }
            // fio 3.33 refuses a group_reporting job whose lat_percentiles differs from the
            // job before it in its group ("lat_percentiles in job: b differs from group"):
            // one group reports one kind of latency percentiles.
            if spec.group_reporting && group_members > 0 {
                let prev = &file.jobs[spec_index - 1];
                if prev.lat_percentiles != spec.lat_percentiles {
                    return Err(RunError::ReportGroup {
                        file: job_place(file, spec),
                        line: job_line(spec),
                        job: spec.name.clone(),
                        why: format!(
                            "lat_percentiles={} differs from job '{}' before it in its reporting group (group_reporting): fio refuses such a group; give both the same lat_percentiles, or start a new group (new_group or stonewall)",
                            u8::from(spec.lat_percentiles),
                            prev.name
                        ),
                    });
                }
            }
            if phases.is_empty() || (spec.stonewall && !clones.is_empty()) {
                phases.push((clones.len(), clones.len()));
                phase_names.push(String::new());
            }
            let names = phase_names.last_mut().expect("a phase was pushed above");
            if !names.is_empty() {
                names.push_str(", ");
            }
            names.push_str(&spec.name);
            let target =
                device
                    .resolve(spec.filename.as_deref())
                    .map_err(|valid| RunError::Target {
                        file: job_place(file, spec),
                        line: job_line(spec),
                        job: spec.name.clone(),
                        filename: spec.filename.clone().unwrap_or_default(),
                        valid,
                    })?;
            let capacity_bytes = device.capacity_bytes(target);
            for clone_index in 0..spec.numjobs.max(1) {
                let job_index = clones.len() as u32 + 1;
                let seeds = job_seeds.index(job_index as u64);
                let generator =
                    IoGenerator::new(spec, clone_index, capacity_bytes, block_bytes, seeds)
                        .map_err(|error| RunError::Job {
                            file: job_place(file, spec),
                            line: job_line(spec),
                            job: spec.name.clone(),
                            error,
                        })?;
                let verify = Verify::new(spec, &generator)
                    .map_err(|why| RunError::Verify {
                        file: job_place(file, spec),
                        line: job_line(spec),
                        job: spec.name.clone(),
                        why: format!("verify with {why} is not simulated"),
                    })?
                    .map(Box::new);
                let mut stats = JobStats::new(stats_config(spec, groupid, job_index));
                stats.set_iodepth(spec.iodepth.max(1));
                stats.set_presentation(
                    usize::from(spec.significant_figures.clamp(1, 10)),
                    spec.unit_base_bits,
                );
                stats.set_unified(match spec.unified_rw_reporting {
                    0 => Unified::None,
                    1 => Unified::Mixed,
                    _ => Unified::Both,
                });
                stats.set_disabled(Disabled {
                    lat: spec.disable_lat,
                    clat: spec.disable_clat,
                    slat: spec.disable_slat,
                    bw: spec.disable_bw,
                });
                let batch = Batch::new(spec);
                if batch.is_some() {
                    stats.set_batched();
                }
                let rate = RateState::new(spec, seeds);
                let plain = !rate.active
                    && spec.fsync_every == 0
                    && spec.fdatasync_every == 0
                    && !spec.write_fua
                    && spec.thinktime_ns == 0;
                let choose_ddir = rate.active && generator.mixes_directions();
                let simple = plain && batch.is_none() && verify.is_none();
                clones.push(JobClone {
                    spec,
                    target,
                    spec_index,
                    job_index,
                    groupid,
                    phase: phases.len() - 1,
                    generator,
                    stats: Some(stats),
                    result: None,
                    iodepth: spec.iodepth.max(1),
                    // fio's fixup_options: 0 (like unset or above iodepth) keeps the queue full.
                    iodepth_low: spec
                        .iodepth_low
                        .filter(|&low| low > 0)
                        .unwrap_or(spec.iodepth)
                        .min(spec.iodepth),
                    draining_to_low: false,
                    batch,
                    in_flight: 0,
                    start_ns: 0,
                    deadline_ns: SimTime::MAX,
                    measuring: false,
                    measure_start_ns: 0,
                    end_ns: 0,
                    pending: None,
                    lookahead: None,
                    generator_done: false,
                    exhausted: false,
                    stopped: false,
                    failed: false,
                    io_error: None,
                    finished: false,
                    wake_at: None,
                    think: Think::Running,
                    thinks: spec.thinktime_ns > 0,
                    think_issued: 0,
                    think_completed: 0,
                    think_last_blocks: 0,
                    think_last_ns: 0,
                    think_after_reap: false,
                    think_ddir: 0,
                    writes_since_flush: 0,
                    writes_since_datasync: 0,
                    flush_pending: false,
                    // A verifying job flushes at the end of each loop's writes instead.
                    end_flush_sent: verify.is_some(),
                    rate,
                    plain,
                    simple,
                    choose_ddir,
                    write_compressible_percent: spec.compressible_percent,
                    issued_bytes: 0,
                    done_ios: [0; 3],
                    done_bytes: [0; 3],
                    steady: None,
                    lat_target: None,
                    min_rate: None,
                    watched: false,
                    iolog: spec.write_iolog.as_ref().map(|path| {
                        let default_name = format!("{}.{clone_index}.0", spec.name);
                        IoLog::new(path, spec.filename.as_deref().unwrap_or(&default_name))
                    }),
                    measured_bytes: [0; 3],
                    measured_ios: [0; 3],
                    flushes: 0,
                    waitees: Vec::new(),
                    waiting: false,
                    verify,
                });
                group_members += 1;
            }
            phases.last_mut().expect("a phase was pushed above").1 = clones.len();
        }
        // fio's wait_for: a job starts only once every clone of the named earlier job has
        // exited (`waitee_running`); the parser has checked that such a job comes first.
        let mut has_waiters = false;
        for w in 0..clones.len() {
            let Some(name) = clones[w].spec.wait_for.as_deref() else {
                continue;
            };
            let phase = clones[w].phase;
            let waitees: Vec<usize> = (0..w)
                .filter(|&j| clones[j].phase == phase && clones[j].spec.name == name)
                .filter(|&j| clones[j].spec_index != clones[w].spec_index)
                .collect();
            has_waiters |= !waitees.is_empty();
            clones[w].waiting = !waitees.is_empty();
            clones[w].waitees = waitees;
        }
        // Every I/O a clone holds is in at most one of: the device, the host queue; a flush
        // adds one. Sizing the host queue for all of them means it never reallocates.
        let trackers = steady_trackers(file, &mut clones, plan)?;
        check_iologs(file, &clones, plan)?;
        let host_capacity: usize = clones.iter().map(|c| c.iodepth as usize + 1).sum();
        let device_limit = device.queue_depth_limit().max(1);
        let slots = host_capacity.min(device_limit as usize);
        let phase_count = phases.len();
        Ok(Self {
            file,
            device,
            options,
            plan,
            queue: EventQueue::with_limit(options.limits.max_queued_events),
            in_flight: vec![
                InFlight {
                    clone: 0,
                    kind: IoKind::Read,
                    issue_ns: 0,
                    accepted_ns: 0,
                    offset_bytes: 0,
                    len_bytes: 0,
                };
                slots
            ]
            .into_boxed_slice(),
            free_slots: (0..slots as u32).rev().collect(),
            free_len: slots,
            host_queue: VecDeque::with_capacity(host_capacity),
            device_in_flight: 0,
            device_limit,
            clones,
            phases,
            phase_start_ns: vec![0; phase_count],
            phase_names,
            current_phase: 0,
            phase_left: 0,
            all_done: false,
            trackers,
            exit_all: false,
            exiting: false,
            has_waiters,
            ready: Vec::new(),
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
            if self.device_in_flight == 0 && self.host_queue.is_empty() {
                if let Some(next) = self.queue.peek_time_ns() {
                    if next > self.queue.now_ns() && next <= MAX_SIM_TIME_NS {
                        self.device.idle(self.queue.now_ns(), next);
                    }
                }
            }
            let Some((now, event)) = self.queue.pop() else {
                return Err(RunError::Stuck {
                    time_ns: self.queue.now_ns(),
                });
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
            } else {
                self.start_phase(self.current_phase + 1, now)?;
            }
        }
        Ok(())
    }

    fn start_phase(&mut self, phase: usize, now: SimTime) -> Result<(), RunError> {
        self.current_phase = phase;
        self.phase_start_ns[phase] = now;
        let (lo, hi) = self.phases[phase];
        self.phase_left = hi - lo;
        if self.exit_all {
            // fio's exit_what=all: the jobs left end as they start, having done nothing.
            for c in &mut self.clones[lo..hi] {
                c.stopped = true;
            }
        }
        for i in lo..hi {
            if self.clones[i].waiting {
                continue;
            }
            let delay_ns = self.clones[i].spec.startdelay_ns;
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
            if self.clones[i].spec.startdelay_ns == 0 && !self.clones[i].waiting {
                self.try_issue(i, now)?;
                self.check_finished(i, now);
            }
        }
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
        c.start_ns = now;
        c.think_last_ns = now;
        if let Some(v) = c.verify.as_mut() {
            v.start(now);
        }
        c.rate.poisson_next_ns = [now; 3];
        c.lat_target = LatTarget::new(c.spec, now);
        c.min_rate = MinRate::new(c.spec, now, self.plan.jobs[c.spec_index].time_factor);
        c.watched = c.lat_target.is_some()
            || c.min_rate.is_some()
            || c.steady.is_some()
            || c.spec.max_latency_ns != [0; 3];
        if let Some(lt) = &c.lat_target {
            c.iodepth = lt.depth;
        }
        let ramp_ns = c.spec.ramp_time_ns;
        if c.stopped {
            // Stopped by another job's exitall before it started: it ends as it starts.
            c.deadline_ns = now;
        } else if let Some(runtime_ns) = c.spec.runtime_ns {
            c.deadline_ns = now.saturating_add(ramp_ns).saturating_add(runtime_ns);
            self.queue
                .schedule(c.deadline_ns, Event::Deadline { clone: i as u32 })?;
        }
        if ramp_ns > 0 {
            self.queue.schedule(
                now.saturating_add(ramp_ns),
                Event::RampEnd { clone: i as u32 },
            )?;
        } else {
            c.measuring = true;
            c.measure_start_ns = now;
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
            let ending =
                (c.exhausted && c.pending.is_none() && !c.flush_pending) || c.stopped || c.failed;
            b.completed(
                c.in_flight,
                ending,
                c.stats.as_mut().filter(|_| c.measuring),
            );
        }
        if c.thinks && kind != IoKind::Flush {
            c.think_completed += 1;
            // fio's reap after the I/O that filled the queue waits for one
            // completion, or down to `iodepth_low`; the check follows it (with
            // batches, where the reap ends: `issue_more`).
            if c.think_after_reap
                && c.batch.is_none()
                && c.in_flight <= c.iodepth_low.min(c.iodepth.saturating_sub(1))
            {
                c.think_after_reap = false;
                if c.think == Think::Running {
                    c.think = Think::Reaping;
                    self.queue.schedule(now, Event::ThinkCheck { clone })?;
                }
            }
        }
        let c = &mut self.clones[i];
        if kind == IoKind::Flush {
            c.flushes += 1;
            if c.measuring && now <= c.deadline_ns {
                c.stats
                    .as_mut()
                    .expect("stats live until finish")
                    .record_sync(issue_ns, now);
            }
        } else if c.measuring && now <= c.deadline_ns {
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
        if c.think == Think::Draining && c.in_flight == 0 && !c.stopped {
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
                if c.think == Think::Sleeping {
                    c.think = Think::Running;
                    c.think_last_ns = now;
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
                if !c.finished {
                    c.start_measuring(now);
                }
                // fio 3.33 zeroes its issued and completed counts when the ramp ends but
                // not the count at the last pause: the next pause waits until the new count
                // passes the old one by `thinktime_blocks` (about as many I/Os as the ramp
                // did go by without a pause, as fio 3.33 measures).
                c.think_issued = 0;
                c.think_completed = 0;
            }
            Event::Deadline { clone } => {
                let i = clone as usize;
                let c = &mut self.clones[i];
                if !c.finished {
                    c.stopped = true;
                    self.stop_issuing(i, now);
                }
            }
            Event::SteadyCheck { tracker } => self.steady_check(tracker as usize, now)?,
            Event::ThinkCheck { clone } => {
                let i = clone as usize;
                let c = &mut self.clones[i];
                if c.think != Think::Reaping {
                    return Ok(());
                }
                c.think = Think::Running;
                if c.finished {
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
        if c.stopped || c.failed {
            return Ok(());
        }
        let s = c.spec;
        let mut due = false;
        if s.thinktime_iotime_ns > 0 {
            due = now.saturating_sub(c.think_last_ns) >= s.thinktime_iotime_ns;
            // fio skips the count when only the time was asked for: the default of one
            // block would think after every I/O.
            if !due && !s.thinktime_blocks_set {
                return Ok(());
            }
        }
        let count = match s.thinktime_blocks_type {
            ThinkBlocks::Complete => c.think_completed,
            ThinkBlocks::Issue => c.think_issued,
        };
        due |= count >= c.think_last_blocks + u64::from(s.thinktime_blocks.max(1));
        if !due {
            return Ok(());
        }
        // The count taken before the quiesce: completions while draining count towards
        // the next pause, as in fio.
        c.think_last_blocks = count;
        c.think = Think::Draining;
        if c.in_flight == 0 {
            self.start_thinking(i, now)?;
        }
        Ok(())
    }

    /// Every I/O of a clone due to think has completed: it sleeps for `thinktime`.
    fn start_thinking(&mut self, i: usize, now: SimTime) -> Result<(), RunError> {
        let c = &mut self.clones[i];
        c.think = Think::Sleeping;
        let think_ns = c.spec.thinktime_ns;
        if c.spec.rate_ignore_thinktime {
            let ddir = c.think_ddir;
            let min_bs = min_block_bytes(&c.spec.bs[ddir]);
            c.rate.skip_think(ddir, think_ns, min_bs);
        }
        let until = now.saturating_add(think_ns);
        c.wake_at = Some(until);
        self.queue
            .schedule(until, Event::Wake { clone: i as u32 })?;
        Ok(())
    }

    /// What a watched clone (steady state, latency target, minimum rates) notes and does
    /// after an I/O completed.
    #[cold]
    #[inline(never)]
    fn watch_completion(&mut self, i: usize, now: SimTime, io: InFlight) {
        if io.kind != IoKind::Flush {
            let c = &mut self.clones[i];
            let ddir = io.kind.ddir();
            c.done_ios[ddir] += 1;
            c.done_bytes[ddir] += io.len_bytes;
        }
        // fio checks max_latency only on the total latency it measures.
        let spec = self.clones[i].spec;
        if spec.max_latency_ns != [0; 3] && !spec.disable_lat && io.kind != IoKind::Flush {
            self.max_latency_completed(i, now, io);
        }
        if self.clones[i].lat_target.is_some() {
            self.lat_target_completed(i, now, io);
        }
        if self.clones[i].min_rate.is_some() && io.kind != IoKind::Flush {
            self.min_rate_completed(i, now, io.kind.ddir());
        }
    }

    /// fio's `max_latency` after one of clone `i`'s I/Os completed: a measured I/O whose
    /// total latency exceeds its direction's limit stops the job with ETIMEDOUT, as
    /// `account_io_completion` does (the I/O itself is counted).
    #[cold]
    #[inline(never)]
    fn max_latency_completed(&mut self, i: usize, now: SimTime, io: InFlight) {
        let c = &mut self.clones[i];
        let max_ns = c.spec.max_latency_ns[io.kind.ddir()];
        let latency_ns = now - io.issue_ns;
        let counted = c.measuring && now <= c.deadline_ns;
        if max_ns == 0 || latency_ns <= max_ns || !counted || c.finished || c.failed {
            return;
        }
        if c.io_error.is_none() {
            c.io_error = Some(JobIoError::failed(
                c.spec.name.clone(),
                now,
                io.kind,
                io.offset_bytes,
                JobFailure::MaxLatency { latency_ns, max_ns },
            ));
        }
        c.failed = true;
        self.stop_issuing(i, now);
    }

    /// fio's latency-target search after one of clone `i`'s I/Os completed: the depth it
    /// may use next, a drain before a new window, or the end of the job.
    #[cold]
    #[inline(never)]
    fn lat_target_completed(&mut self, i: usize, now: SimTime, io: InFlight) {
        let InFlight {
            kind,
            issue_ns,
            offset_bytes,
            ..
        } = io;
        let c = &mut self.clones[i];
        let Some(lt) = c.lat_target.as_mut() else {
            return;
        };
        if c.finished || c.stopped || c.failed {
            return;
        }
        let action = if kind == IoKind::Flush {
            LatAction::Continue
        } else {
            let counted = c.measuring && now <= c.deadline_ns;
            lt.completed(now, now - issue_ns, counted, c.done_ios.iter().sum())
        };
        match action {
            LatAction::Continue | LatAction::Drain => {}
            LatAction::Done => {
                c.deadline_ns = c.deadline_ns.min(now);
                c.stopped = true;
                self.stop_issuing(i, now);
                return;
            }
            LatAction::Fatal => {
                let target_ns = lt.target_ns();
                if c.io_error.is_none() {
                    c.io_error = Some(JobIoError::failed(
                        c.spec.name.clone(),
                        now,
                        kind,
                        offset_bytes,
                        JobFailure::LatencyTarget {
                            latency_ns: now - issue_ns,
                            target_ns,
                        },
                    ));
                }
                c.failed = true;
                self.stop_issuing(i, now);
                return;
            }
        }
        let c = &mut self.clones[i];
        let lt = c.lat_target.as_mut().expect("checked above");
        if !lt.quiescing {
            c.iodepth = lt.depth;
        } else if c.in_flight == 0 {
            let reset = lt.drained(now, c.done_ios.iter().sum());
            c.iodepth = lt.depth;
            // The depth is found: fio restarts the statistics for the final window.
            if reset && c.measuring {
                c.start_measuring(now);
            }
        } else {
            // Nothing more is issued until the I/Os in flight have completed.
            c.iodepth = 0;
        }
    }

    /// fio's minimum rates after one of clone `i`'s I/Os of direction `ddir` completed: a
    /// cycle below a minimum stops the job with an I/O error.
    #[cold]
    #[inline(never)]
    fn min_rate_completed(&mut self, i: usize, now: SimTime, ddir: usize) {
        let c = &mut self.clones[i];
        if c.finished || c.stopped || c.failed {
            return;
        }
        let Some(m) = c.min_rate.as_mut() else {
            return;
        };
        let measuring = c.measuring && now <= c.deadline_ns;
        let Some(short) = m.check(ddir, now, c.done_bytes[ddir], c.done_ios[ddir], measuring)
        else {
            return;
        };
        // The figures of the drive the slice stands for.
        let rate_factor = self.plan.jobs[c.spec_index].back.rate_factor();
        let c = &mut self.clones[i];
        if c.io_error.is_none() {
            c.io_error = Some(JobIoError::failed(
                c.spec.name.clone(),
                now,
                [IoKind::Read, IoKind::Write, IoKind::Trim][ddir],
                0,
                JobFailure::RateMin {
                    bandwidth: short.bandwidth,
                    rate: short.rate * rate_factor,
                    min: (short.min as f64 * rate_factor).round() as u64,
                },
            ));
        }
        c.failed = true;
        self.stop_issuing(i, now);
    }

    /// A steady-state sample: judge the window, and stop the tracker's clones when it is
    /// steady (their runtime ends now, as fio's termination ends the job).
    #[cold]
    fn steady_check(&mut self, t: usize, now: SimTime) -> Result<(), RunError> {
        let tracker = &self.trackers[t];
        let members = &tracker.members;
        if members.iter().all(|&i| self.clones[i].finished) {
            self.trackers[t].done = true;
            return Ok(());
        }
        let total = |v: &[u64; 3]| v.iter().sum::<u64>();
        let ios = members
            .iter()
            .map(|&i| total(&self.clones[i].done_ios))
            .sum();
        let bytes = members
            .iter()
            .map(|&i| total(&self.clones[i].done_bytes))
            .sum();
        match self.trackers[t].check(now, ios, bytes) {
            Check::Again => {
                let at = now.saturating_add(self.trackers[t].interval_ns);
                self.queue
                    .schedule(at, Event::SteadyCheck { tracker: t as u32 })?;
            }
            Check::Attained => {
                for k in 0..self.trackers[t].members.len() {
                    let i = self.trackers[t].members[k];
                    let c = &mut self.clones[i];
                    if !c.finished {
                        c.deadline_ns = c.deadline_ns.min(now);
                        c.stopped = true;
                        self.stop_issuing(i, now);
                    }
                }
            }
            Check::Over => {}
        }
        Ok(())
    }

    /// Issue as many I/Os as the clone's depth, rate and think time allow.
    fn try_issue(&mut self, i: usize, now: SimTime) -> Result<(), RunError> {
        self.issue_more(i, now)
    }

    /// [`Runner::try_issue`], inlined where a completion frees a slot: that is once per I/O.
    #[inline(always)]
    fn issue_more(&mut self, i: usize, now: SimTime) -> Result<(), RunError> {
        if self.clones[i].simple {
            return self.issue_simple(i, now);
        }
        let result = self.issue_while_allowed(i, now);
        let c = &mut self.clones[i];
        if let Some(b) = c.batch.as_mut() {
            // fio hands the engine what it queued before it waits.
            b.flush(c.stats.as_mut().filter(|_| c.measuring));
        }
        result
    }

    /// [`Runner::issue_while_allowed`] for a `simple` clone, the common case: with no rate
    /// limit, think time, fsync, FUA, batches or verify, nothing is held back (`pending`
    /// stays empty), the clone never thinks, and each I/O is the generator's next.
    #[inline(always)]
    fn issue_simple(&mut self, i: usize, now: SimTime) -> Result<(), RunError> {
        loop {
            let c = &mut self.clones[i];
            debug_assert!(c.think == Think::Running && c.pending.is_none());
            let blocked = c.finished || c.stopped || c.failed || c.in_flight >= c.iodepth;
            if c.held_by_depth(blocked) {
                return Ok(());
            }
            if c.flush_pending {
                c.flush_pending = false;
                self.issue(i, IoRequest::flush(), now)?;
                continue;
            }
            if c.exhausted {
                return Ok(());
            }
            let Some(io) = c.next_generated() else {
                if c.exhaust() {
                    continue;
                }
                return Ok(());
            };
            c.issued_bytes += io.len_bytes;
            let req = c.request(&io, false);
            self.prefetch_next(i);
            self.issue(i, req, now)?;
        }
    }

    /// Tell the device where clone `i`'s next I/O will go (a hint: it may start loading
    /// that I/O's map entry).
    #[inline(always)]
    fn prefetch_next(&mut self, i: usize) {
        let c = &mut self.clones[i];
        let target = c.target;
        if let Some(next) = c.draw_ahead() {
            let next = *next;
            let req = c.request(&next, false);
            self.device.prefetch(target, &req);
        }
    }

    #[inline(always)]
    fn issue_while_allowed(&mut self, i: usize, now: SimTime) -> Result<(), RunError> {
        loop {
            let c = &mut self.clones[i];
            if let Some(b) = c.batch.as_mut() {
                if c.finished || c.stopped || c.failed || c.think != Think::Running {
                    return Ok(());
                }
                let stats = c.stats.as_mut().filter(|_| c.measuring);
                match b.gate(c.in_flight, c.iodepth, c.iodepth_low, stats) {
                    Gate::Wait => return Ok(()),
                    Gate::Reaped if c.think_after_reap => {
                        // fio checks think time once the reap after the I/O that filled
                        // the queue is over.
                        c.think_after_reap = false;
                        c.think = Think::Reaping;
                        self.queue
                            .schedule(now, Event::ThinkCheck { clone: i as u32 })?;
                        return Ok(());
                    }
                    Gate::Issue | Gate::Reaped => {}
                }
            } else if c.held_by_depth(
                c.finished
                    || c.stopped
                    || c.failed
                    || c.think != Think::Running
                    || c.in_flight >= c.iodepth,
            ) {
                return Ok(());
            }
            if c.flush_pending {
                c.flush_pending = false;
                self.issue(i, IoRequest::flush(), now)?;
                continue;
            }
            let io = match c.pending.take() {
                Some(io) => io,
                None => {
                    if c.exhausted {
                        return Ok(());
                    }
                    let drawn = if c.verify.is_some() {
                        match c.next_verifying(now) {
                            Next::Io(io) => Some(io),
                            Next::Wait => return Ok(()),
                            Next::Flush => {
                                c.flush_pending = true;
                                continue;
                            }
                            Next::Done => None,
                        }
                    } else if c.choose_ddir {
                        // fio's rate_ddir: the direction the mix draws gives way to the other
                        // one while it is ahead of its rate and the other is not (or is due
                        // sooner).
                        let (rate, start) = (&c.rate, c.start_ns);
                        let other_share = |k| c.generator.mix_percent(k) > 0;
                        let write_in_mix = other_share(IoKind::Write);
                        let read_in_mix = other_share(IoKind::Read);
                        c.generator.next_io_choosing(|kind| {
                            rate_direction(rate, start, now, kind, read_in_mix, write_in_mix)
                        })
                    } else {
                        c.next_generated()
                    };
                    match drawn {
                        Some(io) => io,
                        None if c.exhaust() => continue,
                        None => return Ok(()),
                    }
                }
            };
            let mut fua = false;
            if !c.plain {
                let ddir = io.kind.ddir();
                if c.rate.active && c.rate.limited(ddir) {
                    let planned = c.rate.planned_ns(ddir, c.start_ns);
                    if planned > now {
                        c.pending = Some(io);
                        if c.wake_at != Some(planned) {
                            c.wake_at = Some(planned);
                            self.queue
                                .schedule(planned, Event::Wake { clone: i as u32 })?;
                        }
                        return Ok(());
                    }
                    c.rate.note_issue(ddir, io.len_bytes, c.start_ns, now);
                }
                fua = io.kind == IoKind::Write && c.spec.write_fua;
                if io.kind == IoKind::Write && c.spec.fsync_every > 0 {
                    c.writes_since_flush += 1;
                    if c.writes_since_flush >= c.spec.fsync_every {
                        c.writes_since_flush = 0;
                        c.flush_pending = true;
                    }
                }
                if io.kind == IoKind::Write && c.spec.fdatasync_every > 0 {
                    c.writes_since_datasync += 1;
                    if c.writes_since_datasync >= c.spec.fdatasync_every {
                        c.writes_since_datasync = 0;
                        c.flush_pending = true;
                    }
                }
                if c.thinks {
                    c.think_issued += 1;
                    c.think_ddir = ddir;
                }
            }
            c.issued_bytes += io.len_bytes;
            let req = c.request(&io, fua);
            // A clone choosing directions at issue time draws nothing ahead (the prefetch
            // is only a hint to the device).
            if !c.choose_ddir {
                self.prefetch_next(i);
            }
            self.issue(i, req, now)?;
            let c = &mut self.clones[i];
            if c.thinks {
                // fio checks after each I/O, once the queue it filled has been reaped.
                let depth = c
                    .batch
                    .as_ref()
                    .map_or(c.in_flight, |b| b.depth(c.in_flight));
                if depth >= c.iodepth {
                    c.think_after_reap = true;
                } else {
                    self.check_thinktime(i, now)?;
                }
            }
        }
    }

    /// Hand a request to the device, or to the host queue when the device is full.
    #[inline(always)]
    fn issue(&mut self, i: usize, req: IoRequest, now: SimTime) -> Result<(), RunError> {
        let c = &mut self.clones[i];
        c.in_flight += 1;
        if c.iolog.is_some() {
            c.log_io(&req, now);
        }
        if let Some(b) = c.batch.as_mut() {
            b.queued(c.in_flight, c.stats.as_mut().filter(|_| c.measuring));
        } else if c.measuring {
            c.stats
                .as_mut()
                .expect("stats live until finish")
                .record_depth(c.in_flight);
        }
        if self.device_in_flight < self.device_limit {
            self.submit(i, req, now, now)
        } else {
            self.host_queue.push_back(Queued {
                clone: i as u32,
                req,
                issue_ns: now,
            });
            Ok(())
        }
    }

    #[inline]
    fn drain_host_queue(&mut self, now: SimTime) -> Result<(), RunError> {
        while self.device_in_flight < self.device_limit {
            let Some(q) = self.host_queue.pop_front() else {
                break;
            };
            self.submit(q.clone as usize, q.req, q.issue_ns, now)?;
        }
        Ok(())
    }

    #[inline(always)]
    fn submit(
        &mut self,
        i: usize,
        req: IoRequest,
        issue_ns: SimTime,
        now: SimTime,
    ) -> Result<(), RunError> {
        let completion = match self.device.submit_to(self.clones[i].target, now, &req) {
            Ok(c) => c,
            // The job stops with fio's error, as fio stops a job on an I/O error.
            Err(error @ (DeviceError::ReadOnly { .. } | DeviceError::Uncorrectable { .. })) => {
                self.fail_clone(i, now, &req, error);
                return Ok(());
            }
            Err(error) => {
                return Err(RunError::Device {
                    job: self.clones[i].spec.name.clone(),
                    time_ns: now,
                    kind: kind_name(req.kind),
                    offset_bytes: req.offset_bytes,
                    error,
                })
            }
        };
        if completion.accepted_ns < now || completion.done_ns < completion.accepted_ns {
            return Err(self.bad_completion(
                i,
                now,
                req.kind,
                completion.done_ns,
                "before the request was submitted or accepted",
            ));
        }
        if completion.done_ns - now > self.options.limits.max_io_latency_ns {
            return Err(self.bad_completion(
                i,
                now,
                req.kind,
                completion.done_ns,
                "later than the I/O latency limit: the I/O never completes",
            ));
        }
        self.device_in_flight += 1;
        let io = InFlight {
            clone: i as u32,
            kind: req.kind,
            issue_ns,
            accepted_ns: issue_ns + (completion.accepted_ns - now),
            offset_bytes: req.offset_bytes,
            len_bytes: req.len_bytes,
        };
        // The device holds fewer than `device_limit` I/Os and every clone fewer than its
        // depth plus a flush, so a slot is free.
        self.free_len -= 1;
        let slot = self.free_slots[self.free_len];
        self.in_flight[slot as usize] = io;
        self.queue
            .schedule(completion.done_ns, Event::Complete { slot })?;
        Ok(())
    }

    /// Built only on the error path, so the per-I/O path does not prepare its fields.
    #[cold]
    fn bad_completion(
        &self,
        i: usize,
        now: SimTime,
        kind: IoKind,
        done_ns: SimTime,
        why: &'static str,
    ) -> RunError {
        RunError::BadCompletion {
            job: self.clones[i].spec.name.clone(),
            time_ns: now,
            kind: kind_name(kind),
            done_ns,
            why,
        }
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
            c.io_error = Some(JobIoError::new(c.spec.name.clone(), now, req, error));
        }
        c.failed = true;
        self.stop_issuing(i, now);
    }

    /// Clone `i` (stopped or failed) issues nothing more: what it held back is dropped, and
    /// so are its I/Os still in the host queue, which never reached the device; it finishes
    /// once those in flight complete.
    fn stop_issuing(&mut self, i: usize, now: SimTime) {
        let c = &mut self.clones[i];
        c.pending = None;
        c.flush_pending = false;
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
        if c.finished || c.in_flight > 0 {
            return;
        }
        self.finish_if_done(i, now);
    }

    #[inline(never)]
    fn finish_if_done(&mut self, i: usize, now: SimTime) {
        let c = &mut self.clones[i];
        let out_of_work = c.exhausted && c.pending.is_none() && !c.flush_pending;
        let stopping = c.stopped || c.failed;
        // A think-time check still due belongs to the job's last I/O (fio may pause there).
        if !stopping && (!out_of_work || c.think == Think::Reaping) {
            return;
        }
        c.finished = true;
        c.wake_at = None;
        c.end_ns = if c.stopped { c.deadline_ns } else { now };
        if !c.measuring {
            // Finished within ramp_time: an empty measured interval.
            c.measuring = true;
            c.measure_start_ns = c.end_ns;
            c.stats
                .as_mut()
                .expect("stats live until finish")
                .start_measuring(c.end_ns);
        }
        if let Some(l) = c.iolog.as_mut() {
            l.end_us = c.end_ns.saturating_sub(c.start_ns) / 1_000;
        }
        let mut stats = c.stats.take().expect("a clone finishes once");
        if let Some(v) = c.verify.as_mut() {
            stats.set_phase_runtimes_us(v.runtimes_us(c.end_ns));
        }
        let mut result = stats.finish(c.end_ns);
        if let Some(lt) = &c.lat_target {
            let s = c.spec;
            result.set_latency_target(
                lt.depth,
                s.latency_target_ns,
                s.latency_window_ns / 1_000,
                s.latency_percentile,
            );
        }
        if let Some(e) = &c.io_error {
            result.set_error(e.errno());
        }
        c.result = Some(result);
        debug_assert_eq!(c.phase, self.current_phase);
        self.phase_left -= 1;
        let (spec, failed) = (c.spec, c.failed);
        if self.has_waiters {
            self.release_waiters();
        }
        if (spec.exitall || (spec.exitall_on_error && failed)) && !self.exiting {
            self.exit_others(i, now);
        }
    }

    /// A clone finished: the waiting clones of the phase whose waitees are all done become
    /// ready to start.
    #[cold]
    fn release_waiters(&mut self) {
        let (lo, hi) = self.phases[self.current_phase];
        for w in lo..hi {
            let c = &self.clones[w];
            if c.waiting && !c.finished && c.waitees.iter().all(|&j| self.clones[j].finished) {
                self.clones[w].waiting = false;
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
            if c.finished {
                continue;
            }
            let at = now.max(phase_start.saturating_add(c.spec.startdelay_ns));
            self.queue.schedule(at, Event::Start { clone: w as u32 })?;
        }
        Ok(())
    }

    /// fio's `exitall`: clone `i` ended, so the jobs its `exit_what` names stop now (their
    /// runtime ends here, as fio terminates them); `all` also keeps every later job from
    /// running.
    #[cold]
    fn exit_others(&mut self, i: usize, now: SimTime) {
        let (groupid, what) = (self.clones[i].groupid, self.clones[i].spec.exit_what);
        if what == ExitWhat::All {
            self.exit_all = true;
        }
        let (lo, hi) = self.phases[self.current_phase];
        // The clones stopped here finish inside this loop; their own exitall has nothing
        // left to stop (and recursing clone by clone would nest as deep as there are clones).
        self.exiting = true;
        for j in lo..hi {
            let c = &mut self.clones[j];
            if c.finished || (what == ExitWhat::Group && c.groupid != groupid) {
                continue;
            }
            c.deadline_ns = c.deadline_ns.min(now);
            c.stopped = true;
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
                start_ns: c.start_ns,
                measure_start_ns: c.measure_start_ns,
                end_ns: c.end_ns,
                measured_ios: c.measured_ios,
                measured_bytes: c.measured_bytes,
                flushes: c.flushes,
                late_ios: c.rate.late_ios,
            })
            .collect()
    }
}

/// Every clone writing an iolog writes its own file, and only a drive simulated whole: a
/// slice's offsets and times are not the drive's.
fn check_iologs(file: &JobFile, clones: &[JobClone], plan: &ScalePlan) -> Result<(), RunError> {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for c in clones {
        let Some(path) = c.spec.write_iolog.as_deref() else {
            continue;
        };
        let bad = |why: String| RunError::Iolog {
            file: job_place(file, c.spec),
            line: job_line(c.spec),
            job: c.spec.name.clone(),
            why,
        };
        if !plan.scale.is_full() {
            return Err(bad(format!(
                "write_iolog={path} records I/Os, but the drive runs as a slice (its offsets and times are not the drive's); valid: the drive at full scale (--set sim.scale=1)"
            )));
        }
        if let Some((_, other)) = seen.iter().find(|(p, _)| *p == path) {
            return Err(bad(format!(
                "write_iolog={path} is also written by job '{other}' (or another clone of this job: numjobs); valid: a file of its own for each job, and numjobs=1"
            )));
        }
        seen.push((path, &c.spec.name));
    }
    Ok(())
}

/// Where a job was defined, for messages: its own origin (a command-line argument, a file of
/// a command line) or the job file's path, with `job_line` as the line (0 with an origin).
fn job_place(file: &JobFile, spec: &JobSpec) -> String {
    spec.origin.clone().unwrap_or_else(|| file.path.clone())
}

fn job_line(spec: &JobSpec) -> usize {
    if spec.origin.is_some() {
        0
    } else {
        spec.line
    }
}

/// Most one-second samples the steady-state windows of a run keep (16 bytes each).
const MAX_STEADY_SAMPLES: u64 = 1 << 22;

/// The steady-state detections the jobs ask for: one per clone, or one per reporting group
/// for clones that report as a group (fio requires their options to agree).
fn steady_trackers(
    file: &JobFile,
    clones: &mut [JobClone],
    plan: &ScalePlan,
) -> Result<Vec<SteadyTracker>, RunError> {
    let mut trackers: Vec<SteadyTracker> = Vec::new();
    let mut window_samples = 0u64;
    // The reporting group being gathered: its id, its first clone, and its tracker if the
    // detection is on.
    let mut group: Option<(u32, usize, Option<usize>)> = None;
    for i in 0..clones.len() {
        let c = &clones[i];
        let ss = c.spec.steadystate;
        let bad = |why: String| RunError::SteadyState {
            file: job_place(file, c.spec),
            line: job_line(c.spec),
            job: c.spec.name.clone(),
            why,
        };
        let in_group = c.spec.group_reporting;
        match group {
            Some((gid, first, tracker)) if in_group && gid == c.groupid => {
                let first = &clones[first].spec;
                if first.steadystate != ss {
                    return Err(bad(format!(
                        "steadystate options must be the same for every job of a reporting group (group {gid} has those of job '{}')",
                        first.name
                    )));
                }
                if let Some(t) = tracker {
                    trackers[t].members.push(i);
                    clones[i].steady = Some(t as u32);
                }
                continue;
            }
            _ => group = None,
        }
        let tracker = if ss.enabled() {
            window_samples += u64::from(ss.duration_s);
            if window_samples > MAX_STEADY_SAMPLES {
                return Err(bad(format!(
                    "the steady-state windows of the run's clones hold more than {MAX_STEADY_SAMPLES} one-second samples ({} MiB); valid: a shorter steadystate_duration, fewer clones, or group_reporting (one window per group)",
                    (MAX_STEADY_SAMPLES * 16) >> 20
                )));
            }
            let scale = &plan.jobs[c.spec_index];
            let tracker =
                SteadyTracker::new(ss, vec![i], scale.time_factor, scale.back.count_factor)
                    .map_err(bad)?;
            clones[i].steady = Some(trackers.len() as u32);
            trackers.push(tracker);
            Some(trackers.len() - 1)
        } else {
            None
        };
        if in_group {
            group = Some((clones[i].groupid, i, tracker));
        }
    }
    Ok(trackers)
}

fn stats_config(spec: &JobSpec, groupid: u32, job_index: u32) -> JobStatsConfig {
    JobStatsConfig {
        jobname: spec.name.clone(),
        groupid,
        job_index,
        job_options: spec.options_as_written.clone(),
        percentile_list: if spec.percentile_list.is_empty() {
            DEFAULT_PERCENTILES.to_vec()
        } else {
            spec.percentile_list.clone()
        },
        percentile_precision: spec.percentile_precision,
        // fio's fixup_options: a latency not measured has no percentiles.
        percentiles: PercentileKinds {
            clat: spec.clat_percentiles && !spec.disable_clat,
            lat: spec.lat_percentiles && !spec.disable_lat,
            slat: spec.slat_percentiles && !spec.disable_slat,
        },
        logs: LogConfig {
            bw_prefix: spec.write_bw_log.clone(),
            lat_prefix: spec.write_lat_log.clone(),
            iops_prefix: spec.write_iops_log.clone(),
            log_avg_msec: spec.log_avg_msec,
            hist_prefix: spec.write_hist_log.clone(),
            log_hist_msec: spec.log_hist_msec,
            log_hist_coarseness: spec.log_hist_coarseness,
            bw_avg_ms: spec.bw_avg_ms,
            iops_avg_ms: spec.iops_avg_ms,
            log_offset: spec.log_offset,
            log_max_value: spec.log_max_value,
            shared_logs: !spec.per_job_logs,
        },
        description: spec.description.clone(),
    }
}

/// How far a clone is, by time when it has a runtime and by bytes when it has a budget.
fn clone_fraction(c: &JobClone, now: SimTime) -> f64 {
    if c.finished {
        return 1.0;
    }
    let by_time = if c.deadline_ns != SimTime::MAX && c.deadline_ns > c.start_ns {
        (now.saturating_sub(c.start_ns)) as f64 / (c.deadline_ns - c.start_ns) as f64
    } else {
        0.0
    };
    let by_bytes = match c.generator.total_bytes() {
        Some(total) if total > 0 && !c.spec.time_based => c.issued_bytes as f64 / total as f64,
        _ => 0.0,
    };
    by_time.max(by_bytes).min(1.0)
}
