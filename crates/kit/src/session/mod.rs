//! One device's run of a suite: steps in sequence on one drive, simulated time continuing.
//!
//! `run_jobs` starts its clock at 0 on every call, while the drive's clocks keep the time
//! of the previous step. [`Continued`] adds the time already spent to every submission (and
//! takes it off every completion), so each step starts when the previous one ended.

use flashlab_device::{DeviceConfig, HealthLog, Ssd};
use flashlab_engine::{BlockDevice, Continued, DeviceError, IoRequest, SeedTree, SimTime};
use flashlab_ftl::{EraseSummary, Ftl, FtlCounters};
use flashlab_report::{render_json, RunResult};
use flashlab_runner::{RegionSizes, RunError, RunOptions, SliceScale, TimedPhases};
use flashlab_system::SystemCounters;
use flashlab_workload::{JobFile, JobSpec};

mod cache;
mod entry;
mod on_real;
mod progress;
mod readings;
mod untimed;

use crate::device::SuiteDevice;
use crate::measure::LocalAxis;
use crate::real::{RealError, RealTarget};
use crate::record::JobFigures;
use crate::{Measure, StepKind, StepRecord, SuiteError, SuiteOptions, SuiteProgress, SuiteShare};
use flashlab_cache::{self as state_cache, Cached, Chain, FreshDevice, LoadFailure, SessionPart};

/// What hears every recorded step's end, with the device and its clock there (and the end of
/// the preconditioning, as the step `precondition`): `--save-state-after`.
pub type AfterStep<'a> = &'a mut dyn FnMut(&str, &dyn SuiteDevice, SimTime);

/// The name [`AfterStep`] hears at the end of a suite's preconditioning (the part the
/// precondition cache keeps).
pub const PRECONDITION_STEP: &str = "precondition";

/// What the steps run on: a simulated drive, or real storage through the real fio; or, for
/// a suite that builds its drives from their description ([`Session::described`]), nothing
/// yet: its steps run in sessions on the drives it builds ([`Session::on_fresh_drive`]).
enum Drive<'a> {
    Sim(&'a mut dyn SuiteDevice),
    Real(&'a mut RealTarget),
    Described(&'a DeviceConfig),
}

/// The steps a suite stated it will run on a device, counted from `first` (steps started
/// before the plan). `round_runs` runs of repeated rounds are still ahead or under way,
/// counted at their most: while there are any, the share done is a floor and the time left a
/// ceiling.
#[derive(Debug, Clone, Copy)]
struct StepPlan {
    first: usize,
    steps: usize,
    round_runs: usize,
}

/// One device's run of a suite: the device, the options, the steps so far and the clock.
pub struct Session<'a> {
    drive: Drive<'a>,
    device: String,
    opts: &'a SuiteOptions,
    seeds: SeedTree,
    scale: SliceScale,
    /// What a slice does to the time of the next steps' time-based writing phases: the
    /// suites that measure a steady state keep it for their measured windows
    /// ([`Session::steady_job`]).
    timed_phases: TimedPhases,
    /// What a slice does to the next steps' byte quantities ([`Session::with_region_sizes`]).
    region_sizes: RegionSizes,
    /// Drive time at which the next step starts.
    now_ns: SimTime,
    pub steps: Vec<StepRecord>,
    /// Steps started so far (recorded or not): the number progress reports.
    started_steps: usize,
    /// False: steps run and are measured but leave no [`StepRecord`] (hundreds of short
    /// bursts whose figures the suite keeps in its results and charts).
    pub record_steps: bool,
    /// What progress reports beside the step: the round of a repeated step and how many
    /// there may be, and the share of the whole suite done at the start and at the end of
    /// the next steps, when the suite knows it (progress interpolates within a step).
    pub round: Option<(usize, Option<usize>)>,
    pub suite_span: Option<(f64, f64)>,
    /// The steps the suite planned on this device ([`Session::plan_steps`]): where no
    /// `suite_span` is set, the share of the suite done is the share of these steps.
    plan: Option<StepPlan>,
    /// Data content of every write (`--compressible`): fio's `buffer_compress_percentage`
    /// added to each step's `[global]` section (None: the job's own, random by default).
    compressible_percent: Option<u8>,
    progress: &'a mut dyn FnMut(&SuiteProgress),
    /// The precondition cache's key for the device as it stands, while every step so far
    /// is a cached checkpoint on a device built fresh ([`Session::checkpoint`]).
    cache: Option<Chain>,
    after_step: Option<AfterStep<'a>>,
    /// The suite's own axes ([`crate::Suite::axes`]): what the precondition cache names a
    /// local coordinate by when it reads an entry back.
    axes: &'static [&'static LocalAxis],
    /// On real storage: the suites that run there, as a refusal lists them.
    on_real: String,
}

impl<'a> Session<'a> {
    /// A session at time 0 with no steps yet: what every constructor shares.
    fn starting(
        drive: Drive<'a>,
        device: String,
        scale: SliceScale,
        opts: &'a SuiteOptions,
        progress: &'a mut dyn FnMut(&SuiteProgress),
    ) -> Self {
        Self {
            compressible_percent: opts.compressible_percent,
            drive,
            device,
            opts,
            seeds: SeedTree::new(opts.seed).child("suite"),
            scale,
            timed_phases: TimedPhases::Compress,
            region_sizes: RegionSizes::Scale,
            now_ns: 0,
            steps: Vec::new(),
            started_steps: 0,
            record_steps: true,
            round: None,
            suite_span: None,
            plan: None,
            progress,
            cache: None,
            after_step: None,
            axes: &[],
            on_real: String::new(),
        }
    }

    /// The suite's own axes, for the precondition cache; sessions it opens on drives of its
    /// own take them too.
    pub fn set_axes(&mut self, axes: &'static [&'static LocalAxis]) {
        self.axes = axes;
    }

    pub fn new(
        ssd: &'a mut dyn SuiteDevice,
        device: &str,
        opts: &'a SuiteOptions,
        progress: &'a mut dyn FnMut(&SuiteProgress),
    ) -> Self {
        let scale = ssd.slice_scale();
        let mut s = Self::starting(Drive::Sim(ssd), device.to_string(), scale, opts, progress);
        s.keep_drive_time();
        s
    }

    /// A session on real storage: jobs run through fio, time is wall-clock time.
    /// `on_real` lists the suites that run there, for the refusal of a step that cannot.
    pub fn real(
        target: &'a mut RealTarget,
        opts: &'a SuiteOptions,
        progress: &'a mut dyn FnMut(&SuiteProgress),
        on_real: String,
    ) -> Self {
        let device = target.name();
        let mut s = Self::starting(
            Drive::Real(target),
            device,
            SliceScale::new(1.0, 1.0),
            opts,
            progress,
        );
        s.on_real = on_real;
        s
    }

    /// A session for a suite that builds its own drives from `config`
    /// ([`crate::RunsOn::Description`]): the figures come from the sessions it runs on them
    /// ([`Session::on_fresh_drive`], [`Session::on_fresh_devices`]).
    pub fn described(
        config: &'a DeviceConfig,
        opts: &'a SuiteOptions,
        progress: &'a mut dyn FnMut(&SuiteProgress),
    ) -> Self {
        Self::starting(
            Drive::Described(config),
            config.name.clone(),
            SliceScale::FULL,
            opts,
            progress,
        )
    }

    /// Start the first step at device time `now_ns` instead of 0: the device's clocks
    /// already stand there (a loaded state).
    pub fn start_at(&mut self, now_ns: SimTime) {
        self.now_ns = now_ns;
    }

    /// `hook` hears the end of every recorded step ([`AfterStep`]).
    pub fn after_each_step(&mut self, hook: AfterStep<'a>) {
        self.after_step = Some(hook);
    }

    /// The options the suite runs with.
    pub fn opts(&self) -> &'a SuiteOptions {
        self.opts
    }

    /// The name the report gives the device.
    pub fn device(&self) -> &str {
        &self.device
    }

    /// The description of the drive, for a suite that builds its own drives from it.
    pub fn config(&self) -> Option<&'a DeviceConfig> {
        match self.drive {
            Drive::Described(c) => Some(c),
            _ => None,
        }
    }

    /// The description of the drive, or an error for a session on a device: `suite` builds
    /// its drives from the description.
    pub fn require_config(&self, suite: &'static str) -> Result<&'a DeviceConfig, SuiteError> {
        self.config().ok_or_else(|| SuiteError::NoFtl {
            device: self.device.clone(),
            suite,
            one_ssd: false,
        })
    }

    /// Run `steps` in a session of their own on `dev` (a drive or system built by other
    /// means than from a description, so without the precondition cache), reporting
    /// progress through this one's. Its recorded steps join this session's, and
    /// the first slice among the devices gives the report its scale note.
    pub fn on_device<R>(
        &mut self,
        dev: &mut dyn SuiteDevice,
        steps: impl FnOnce(&mut Session) -> Result<R, SuiteError>,
    ) -> Result<R, SuiteError> {
        let mut sub = Session::new(dev, &self.device, self.opts, &mut *self.progress);
        sub.axes = self.axes;
        let out = steps(&mut sub)?;
        let (mut sub_steps, scale) = (std::mem::take(&mut sub.steps), sub.scale);
        self.adopt(&mut sub_steps, scale);
        Ok(out)
    }

    /// Run the next jobs as on a slice of `scale` (a system whose members are all one slice
    /// of their drive is that slice of the system of whole drives).
    pub fn set_scale(&mut self, scale: SliceScale) {
        self.scale = scale;
    }

    /// A sub-session's recorded steps join this session's, and the first slice among the
    /// devices gives the report its scale note.
    pub fn adopt(&mut self, steps: &mut Vec<StepRecord>, scale: SliceScale) {
        if self.scale.is_full() {
            self.scale = scale;
        }
        self.steps.append(steps);
    }

    /// Run `steps` on a drive built fresh from `config` with `seeds`: the precondition cache
    /// applies to it as to the suite's own drive (a suite that builds its drive from a
    /// changed description, or one per power state, keeps its preconditioning too).
    pub fn on_fresh_drive<R: Send>(
        &mut self,
        config: &DeviceConfig,
        seeds: SeedTree,
        steps: &(dyn Fn(&mut Session) -> Result<R, SuiteError> + Sync),
    ) -> Result<R, SuiteError> {
        let build = |_| {
            let ssd = Ssd::new(config, seeds).map_err(|e| crate::error::device_error(config, e))?;
            Ok((
                ssd,
                FreshDevice::Drive(Box::new(config.clone())),
                seeds.master_seed(),
            ))
        };
        let mut ran = self.on_fresh_devices(1, 1, &[], &build, &|_, s| steps(s))?;
        Ok(ran.remove(0))
    }

    /// Run `count` independent devices, device `i` built by `build(i)` (fresh from its
    /// description, so the precondition cache applies) and run by `steps(i, session)`, on up
    /// to `threads` threads (`0`: as many as the machine has). Every device runs alone and
    /// its results are merged in index order, so the outcome is the sequential one whatever
    /// the threads' timing; the first error in index order wins. The current thread takes
    /// part and reports progress; the others run silently. On several threads the devices
    /// start in `start_order` (a permutation of the indices; empty: index order): the
    /// longest first keeps the threads busy to the end, where a long device started last
    /// runs alone.
    pub fn on_fresh_devices<D, R>(
        &mut self,
        count: usize,
        threads: usize,
        start_order: &[usize],
        build: &(dyn Fn(usize) -> Result<(D, FreshDevice, u64), SuiteError> + Sync),
        steps: &(dyn Fn(usize, &mut Session) -> Result<R, SuiteError> + Sync),
    ) -> Result<Vec<R>, SuiteError>
    where
        D: SuiteDevice,
        R: Send,
    {
        type Done<R> = Result<(R, Vec<StepRecord>, SliceScale), SuiteError>;
        let (device, opts, axes) = (self.device.as_str(), self.opts, self.axes);
        let run_one = |i: usize, progress: &mut dyn FnMut(&SuiteProgress)| -> Done<R> {
            let (mut dev, fresh, seed) = build(i)?;
            let mut sub = Session::new(&mut dev, device, opts, progress);
            sub.axes = axes;
            sub.fresh_device(fresh, seed);
            let out = steps(i, &mut sub)?;
            Ok((out, std::mem::take(&mut sub.steps), sub.scale))
        };
        let threads = match threads {
            0 => std::thread::available_parallelism().map_or(1, usize::from),
            n => n,
        }
        .min(count)
        .max(1);
        let done: Vec<Done<R>> = if threads == 1 {
            let mut done = Vec::with_capacity(count);
            for i in 0..count {
                let d = run_one(i, &mut *self.progress);
                let failed = d.is_err();
                done.push(d);
                if failed {
                    break;
                }
            }
            done
        } else {
            use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
            debug_assert!(start_order.is_empty() || start_order.len() == count);
            let next = AtomicUsize::new(0);
            // The lowest index that failed: a device above it is not started, every device
            // below it runs, so the first error in index order is the same on any threads.
            let failed_at = AtomicUsize::new(usize::MAX);
            let slots: Vec<std::sync::Mutex<Option<Done<R>>>> =
                (0..count).map(|_| std::sync::Mutex::new(None)).collect();
            let work = |progress: &mut dyn FnMut(&SuiteProgress)| loop {
                let k = next.fetch_add(1, Relaxed);
                if k >= count {
                    break;
                }
                let i = start_order.get(k).copied().unwrap_or(k);
                if i > failed_at.load(Relaxed) {
                    continue;
                }
                let d = run_one(i, progress);
                if d.is_err() {
                    failed_at.fetch_min(i, Relaxed);
                }
                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(d);
            };
            let progress = &mut *self.progress;
            std::thread::scope(|scope| {
                let handles: Vec<_> = (1..threads)
                    .map(|_| scope.spawn(|| work(&mut |_| {})))
                    .collect();
                work(progress);
                for h in handles {
                    if let Err(payload) = h.join() {
                        // A panic is a bug in the model: carry it on unchanged.
                        std::panic::resume_unwind(payload);
                    }
                }
            });
            // Devices after the first failed one may not have run; every one before it did.
            slots
                .into_iter()
                .map_while(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
                .collect()
        };
        let mut out = Vec::with_capacity(count);
        for d in done {
            let (r, mut steps, scale) = d?;
            self.adopt(&mut steps, scale);
            out.push(r);
        }
        Ok(out)
    }

    /// The error of a step asked of a session that has no device ([`Session::described`]).
    pub fn no_device(&self, step: &str) -> SuiteError {
        SuiteError::NoFtl {
            device: self.device.clone(),
            suite: if step.is_empty() {
                "a step"
            } else {
                "a step without its drive"
            },
            one_ssd: false,
        }
    }

    pub fn record(
        &mut self,
        step: &str,
        kind: StepKind,
        text: Option<String>,
        json: Option<String>,
        measures: Vec<Measure>,
        figures: Option<JobFigures>,
    ) {
        if self.record_steps {
            // A step with a fio JSON carries the device's counters at its end: the health
            // log among them is kept typed.
            let health = match (&json, &self.drive) {
                (Some(_), Drive::Sim(dev)) => dev.health_log(),
                _ => None,
            };
            self.steps.push(StepRecord {
                name: step.to_string(),
                kind,
                job_text: text,
                fio_json: json,
                figures,
                health,
                end_ns: self.now_ns,
                measures,
            });
            self.step_ended(step);
        }
    }

    /// Tell the [`AfterStep`] hook that `step` ended.
    pub fn step_ended(&mut self, step: &str) {
        if let (Some(hook), Drive::Sim(dev)) = (&mut self.after_step, &self.drive) {
            hook(step, &**dev, self.now_ns);
        }
    }

    /// The host leaves the drive idle for `drive_ns` of the whole drive's time (scaled to the
    /// slice, see [`Session::drive_ns`]): background GC, folding and wear levelling run.
    /// What they get done is the measure (how much of a cache folds in a pause): work that
    /// grows with the capacity, which the slice has `1/f` of, gets `1/f` of the time.
    pub fn idle(&mut self, step: &str, drive_ns: u64) {
        let slice_ns =
            (drive_ns as f64 * self.scale.die_factor / self.scale.capacity_factor).round() as u64;
        self.idle_for(step, drive_ns, slice_ns);
    }

    /// The host leaves the drive idle for `drive_ns` so that the work the last writes left
    /// behind finishes before a measurement, for as long on a slice as on the drive. That
    /// work is bounded per (die, plane) unit, not by the capacity: the garbage collection
    /// the pacing queue holds back (at most the foreground reserve's gain per unit) and idle
    /// GC up to `gc.background_free_blocks` per unit. A slice keeps every unit's share of it
    /// whole, so a pause cut to `1/f` would leave the slice's first measurement waiting for
    /// work the drive finished in the pause. Work that grows with the capacity (a fold of
    /// the SLC cache) finishes sooner on the slice, as it would within the drive's pause.
    pub fn settle(&mut self, step: &str, drive_ns: u64) {
        self.idle_for(step, drive_ns, drive_ns);
    }

    fn idle_for(&mut self, step: &str, drive_ns: u64, slice_ns: u64) {
        self.announce(step);
        let ssd = match &mut self.drive {
            Drive::Sim(ssd) => ssd,
            Drive::Real(t) => {
                let (slept_ns, note) = t.idle(drive_ns);
                if let Some(note) = note {
                    t.notes.push(format!("{step}: {note}"));
                }
                return self.real_step_done(step, StepKind::Idle, slept_ns);
            }
            // No device yet: nothing runs while the clock moves on.
            Drive::Described(_) => {
                self.now_ns = self.now_ns.saturating_add(drive_ns);
                return;
            }
        };
        let until = self.now_ns.saturating_add(slice_ns);
        ssd.idle(self.now_ns, until);
        self.now_ns = until;
        self.record(step, StepKind::Idle, None, None, Vec::new(), None);
    }

    /// A random stream of its own for `name` (derived from the suite's seed).
    pub fn stream(&self, name: &str) -> flashlab_engine::RngStream {
        self.seeds.child(name).stream()
    }

    /// Run `body` on the simulated drive as the next step, with the drive's clock at 0 where
    /// the drive is now: for workloads no fio job describes. `body` returns its result and
    /// its last submission time; the next step starts when the drive has answered everything
    /// it was given.
    pub fn drive_step<R>(
        &mut self,
        step: &str,
        body: impl FnOnce(&mut dyn BlockDevice) -> Result<(R, SimTime), DeviceError>,
    ) -> Result<R, SuiteError> {
        self.announce(step);
        let ssd = match &mut self.drive {
            Drive::Sim(ssd) => ssd,
            Drive::Real(_) => {
                return Err(SuiteError::Real {
                    device: self.device.clone(),
                    step: step.to_string(),
                    error: Box::new(crate::RealError::Unsupported {
                        suite: "a driven step",
                        on_real: self.on_real.clone(),
                    }),
                })
            }
            Drive::Described(_) => return Err(self.no_device(step)),
        };
        let mut dev = Continued::new(&mut **ssd, self.now_ns);
        let (r, _) = body(&mut dev).map_err(|error| SuiteError::Refused {
            device: self.device.clone(),
            step: step.to_string(),
            error,
        })?;
        self.now_ns = dev.horizon_ns();
        // No fio job ran: the step's JSON (fio's schema, no jobs) carries the drive's
        // counters at its end, as a job step's does, for the health log and --outdir.
        let json = serde_json::json!({
            "fio version": "flashlab driven step",
            "jobs": [],
            "flashlab": {
                "suite_step": step,
                "suite_step_end_ns": self.now_ns,
                "device_counters": self.counters_json(),
            },
        });
        let text = serde_json::to_string_pretty(&json).unwrap_or_default();
        self.record(step, StepKind::Driven, None, Some(text), Vec::new(), None);
        Ok(r)
    }

    /// Secure erase: every block erased, nothing mapped. The next step starts once the drive
    /// accepts commands again.
    pub fn purge(&mut self, step: &str) -> Result<(), SuiteError> {
        self.announce(step);
        let ssd = match &mut self.drive {
            Drive::Sim(ssd) => ssd,
            Drive::Real(t) => {
                let start = std::time::Instant::now();
                let note = t.purge();
                t.notes.push(format!("{step}: {note}"));
                self.real_step_done(step, StepKind::Purge, crate::real::elapsed_ns(start));
                return Ok(());
            }
            Drive::Described(_) => return Err(self.no_device(step)),
        };
        ssd.purge_at(self.now_ns);
        // The drive takes no command before the erase is done, so the completion of a flush
        // submitted now tells when that is.
        let c = ssd
            .submit(self.now_ns, &IoRequest::flush())
            .map_err(|error| SuiteError::Refused {
                device: self.device.clone(),
                step: step.to_string(),
                error,
            })?;
        self.now_ns = self.now_ns.max(c.done_ns);
        self.record(step, StepKind::Purge, None, None, Vec::new(), None);
        Ok(())
    }

    /// Run `steps` as windows measured on a drive already in its steady state: on a slice
    /// their time-based phases keep the drive's time even when they write
    /// ([`TimedPhases::KeepTime`]), so each window is as long, and has as many latency
    /// samples, as on the drive.
    pub fn steady<R>(&mut self, steps: impl FnOnce(&mut Self) -> R) -> R {
        let before = std::mem::replace(&mut self.timed_phases, TimedPhases::KeepTime);
        self.keep_drive_time();
        let out = steps(self);
        self.timed_phases = before;
        self.keep_drive_time();
        out
    }

    /// The drive's write buffer as its jobs need it (`Ssd::keep_drive_time`): whole where
    /// they keep the drive's time or its byte quantities (a fixed test region rewritten
    /// through it), its capacity share where a slice compresses them.
    fn keep_drive_time(&mut self) {
        let keep =
            self.timed_phases == TimedPhases::KeepTime || self.region_sizes == RegionSizes::Keep;
        if let Drive::Sim(dev) = &mut self.drive {
            if let Some(ssd) = dev.as_ssd_mut() {
                ssd.keep_drive_time(keep);
            }
        }
    }

    /// Run `steps` with the jobs' byte quantities scaled or kept on a slice
    /// ([`RegionSizes`]).
    pub fn with_region_sizes<R>(
        &mut self,
        regions: RegionSizes,
        steps: impl FnOnce(&mut Self) -> R,
    ) -> R {
        let before = std::mem::replace(&mut self.region_sizes, regions);
        self.keep_drive_time();
        let out = steps(self);
        self.region_sizes = before;
        self.keep_drive_time();
        out
    }

    /// [`Session::job`] as a window on the steady drive ([`Session::steady`]).
    pub fn steady_job(
        &mut self,
        step: &str,
        text: &str,
        measure: &dyn Fn(&RunResult) -> Vec<Measure>,
    ) -> Result<RunResult, SuiteError> {
        self.steady(|s| s.job(step, text, measure))
    }

    /// Run one fio job file (text) as the next step; `measure` picks the step's figures.
    pub fn job(
        &mut self,
        step: &str,
        text: &str,
        measure: &dyn Fn(&RunResult) -> Vec<Measure>,
    ) -> Result<RunResult, SuiteError> {
        // A job step on a device the cache key describes leaves it where the key and the
        // step's inputs describe it: the chain goes on (restored once the step ran whole), so
        // a checkpoint after measured steps is cached too.
        let chain = self.cache.take();
        self.announce(step);
        let with_data;
        let text = match self.compressible_percent {
            Some(percent) => {
                with_data = with_compressible_data(text, percent);
                with_data.as_str()
            }
            None => text,
        };
        if let Drive::Real(t) = &mut self.drive {
            let start = std::time::Instant::now();
            let outcome = t.run_job(step, text);
            return self.real_job_done(step, text, start, outcome, measure);
        }
        let (file, options) = self.plan_job(step, text)?;
        // The suite's share at the start and at the end of this step.
        let (from, basis) = self.suite_share(0.0);
        let to = self.suite_share(1.0).0;
        let Drive::Sim(ssd) = &mut self.drive else {
            return Err(self.no_device(step));
        };
        let (device, number, offset_ns) = (&self.device, self.started_steps, self.now_ns);
        let round = self.round;
        let progress = &mut *self.progress;
        let ran = flashlab_host::run_on(&mut **ssd, offset_ns, &file, &options, &mut |p| {
            progress(&SuiteProgress {
                device,
                step,
                step_number: number,
                step_started: false,
                round: round.map(|r| r.0),
                max_rounds: round.and_then(|r| r.1),
                sim_ns: offset_ns + p.now_ns,
                step_fraction: p.fraction_done,
                suite_fraction: from.zip(to).map(|(a, b)| a + (b - a) * p.fraction_done),
                suite_basis: basis,
            })
        });
        // The run's own clock can pass the drive's last completion (the host's completion
        // path comes after it): the next step starts after both.
        let horizon_ns = ran.horizon_ns.max(offset_ns + ran.run_end_ns);
        let result = ran.result;
        // A step whose job the drive stopped with an I/O error (worn out, read-only) is kept
        // as far as it ran, with the drive's counters, before the error is reported.
        let (result, io_errors) = match result {
            Err(RunError::Io { errors, result }) => (Ok(*result), Some(errors)),
            other => (other, None),
        };
        let run = self.end_job(step, result, horizon_ns)?;
        let measures = if self.record_steps {
            measure(&run)
        } else {
            Vec::new()
        };
        self.record_job(step, (text, file.jobs.first()), &run, measures);
        if io_errors.is_none() {
            self.cache = chain.map(|c| c.then(&self.job_step_key(step, text)));
        }
        match io_errors {
            None => Ok(run),
            Some(errors) => Err(SuiteError::Run {
                device: self.device.clone(),
                step: step.to_string(),
                error: Box::new(RunError::Io {
                    errors,
                    result: Box::new(run),
                }),
            }),
        }
    }

    /// Every input of a job step that the chain does not already hold: its name, text,
    /// seed and the session's settings the run options take. With the chain's device, seed
    /// and earlier steps, these decide the drive's state after the step and its record.
    pub fn job_step_key(&self, step: &str, text: &str) -> String {
        format!(
            "job '{step}' seed {} recorded {} timed phases {:?} region sizes {:?}:\n{text}",
            self.seeds.child(step).master_seed(),
            self.record_steps,
            self.timed_phases,
            self.region_sizes
        )
    }

    /// A job step's parsed file and run options. Every step draws fresh random offsets: the
    /// same seed in every round would rewrite the same sequence of blocks.
    pub fn plan_job(&self, step: &str, text: &str) -> Result<(JobFile, RunOptions), SuiteError> {
        let file = flashlab_workload::parse_str(text, &format!("{step}.fio"), &|_| None).map_err(
            |error| SuiteError::Job {
                device: self.device.clone(),
                step: step.to_string(),
                error: Box::new(error),
            },
        )?;
        let seed = self.seeds.child(step).master_seed();
        let options = RunOptions::new(seed, self.device.clone())
            .with_scale(self.scale)
            .with_timed_phases(self.timed_phases)
            .with_region_sizes(self.region_sizes);
        Ok((file, options))
    }

    /// A simulated job step ended with the drive at `horizon_ns`: the next step starts there,
    /// and the result carries the drive's counters and the step's place in the suite.
    pub fn end_job(
        &mut self,
        step: &str,
        result: Result<RunResult, RunError>,
        horizon_ns: SimTime,
    ) -> Result<RunResult, SuiteError> {
        let mut run = result.map_err(|error| SuiteError::Run {
            device: self.device.clone(),
            step: step.to_string(),
            error: Box::new(error),
        })?;
        self.now_ns = horizon_ns;
        if let serde_json::Value::Object(extra) = &mut run.flashlab {
            extra.insert("device_counters".into(), self.counters_json());
            extra.insert("suite_step".into(), step.into());
            extra.insert("suite_step_end_ns".into(), self.now_ns.into());
        }
        Ok(run)
    }

    /// Keep a job step's record (text, fio JSON, measures, the figures of its first job
    /// `spec`) when steps are recorded.
    pub fn record_job(
        &mut self,
        step: &str,
        (text, spec): (&str, Option<&JobSpec>),
        run: &RunResult,
        measures: Vec<Measure>,
    ) {
        if self.record_steps {
            let json = render_json(run, false);
            let figures = spec.and_then(|spec| JobFigures::of(spec, run));
            self.record(
                step,
                StepKind::Job,
                Some(text.to_string()),
                Some(json),
                measures,
                figures,
            );
        }
    }

    /// [`Session::job`] whose jobs may pick a namespace with `filename=` (`ns1`, `ns2`, …);
    /// `after` sees the drive right after the step (its power meter, its counters).
    pub fn job_on_namespaces(
        &mut self,
        step: &str,
        text: &str,
        measure: &dyn Fn(&RunResult, &Ssd, SimTime, SimTime) -> Vec<Measure>,
    ) -> Result<(RunResult, Vec<Measure>), SuiteError> {
        self.announce(step);
        let (file, options) = self.plan_job(step, text)?;
        let start_ns = self.now_ns;
        let no_drive = SuiteError::NoFtl {
            device: self.device.clone(),
            suite: "a suite with namespaces",
            one_ssd: false,
        };
        let ssd = match &mut self.drive {
            Drive::Sim(dev) => dev.as_ssd_mut().ok_or(no_drive)?,
            Drive::Real(_) | Drive::Described(_) => return Err(no_drive),
        };
        let mut namespaces = flashlab_device::DriveTargets::new(ssd);
        let ran =
            flashlab_host::run_on_targets(&mut namespaces, start_ns, &file, &options, &mut |_| {});
        let run = self.end_job(step, ran.result, ran.horizon_ns)?;
        let end_ns = self.now_ns;
        // The drive is the one checked above.
        let ssd = match &mut self.drive {
            Drive::Sim(dev) => dev.as_ssd_mut(),
            Drive::Real(_) | Drive::Described(_) => None,
        };
        let Some(ssd) = ssd else {
            return Err(SuiteError::NoFtl {
                device: self.device.clone(),
                suite: "a suite with namespaces",
                one_ssd: false,
            });
        };
        let measures = measure(&run, ssd, start_ns, end_ns);
        self.record_job(step, (text, file.jobs.first()), &run, measures.clone());
        Ok((run, measures))
    }
}

/// Job text whose writes carry data a compressor shrinks by `percent` (fio's
/// `buffer_compress_percentage`, which fio reads as random data at 0), set in `[global]`.
pub fn with_compressible_data(text: &str, percent: u8) -> String {
    let option = if percent == 0 {
        "refill_buffers=1\n".to_string()
    } else {
        format!("buffer_compress_percentage={percent}\n")
    };
    match text.find("[global]\n") {
        Some(at) => {
            let end = at + "[global]\n".len();
            format!("{}{option}{}", &text[..end], &text[end..])
        }
        None => format!("[global]\n{option}\n{text}"),
    }
}

/// Write amplification between two snapshots of the FTL's counters: IUs programmed per IU
/// the host wrote in between (0 when the host wrote nothing). Only as good as its window: see
/// [`wa_over_reclaims`] for a figure that does not depend on where GC cycles fall.
pub fn wa_between(before: &FtlCounters, after: &FtlCounters) -> f64 {
    let host = after.host_write_ius.saturating_sub(before.host_write_ius);
    if host == 0 {
        return 0.0;
    }
    after.nand_write_ius.saturating_sub(before.nand_write_ius) as f64 / host as f64
}

/// Whole GC cycles a write-amplification window must span (see [`wa_over_reclaims`]).
pub const WA_RECLAIM_CYCLES: u64 = 8;

/// Write amplification ending at `end`, over a window long enough to span whole reclaim
/// cycles: of the candidate starts `starts` (snapshots of the same drive, earliest first, all
/// under the workload being measured), the latest that leaves at least `min_reclaims` blocks
/// erased before `end`; the earliest when none does.
///
/// The FTL reclaims in bursts: the host stream fills an open block on every unit, then the
/// units need fresh blocks and victims are picked, their copies counted as they are picked
/// (the media programs them a little later). A window shorter than a cycle can fall between
/// two bursts and show no copies at all (WA 1.0 from a drive in steady state), or catch one
/// and show far more than the drive's rate. Spanning [`WA_RECLAIM_CYCLES`] cycles of one
/// victim per unit bounds the error of where the edges fall to a fraction of a cycle over
/// many: the ratio of NAND to host writes a drive's own counters give over a long window.
pub fn wa_over_reclaims(starts: &[FtlCounters], end: &FtlCounters, min_reclaims: u64) -> f64 {
    let start = starts
        .iter()
        .rev()
        .find(|s| end.erases.saturating_sub(s.erases) >= min_reclaims)
        .or(starts.first());
    start.map_or(0.0, |s| wa_between(s, end))
}

#[cfg(test)]
mod tests {
    use super::{wa_between, wa_over_reclaims, with_compressible_data};
    use flashlab_ftl::FtlCounters;

    fn at(host_write_ius: u64, nand_write_ius: u64, erases: u64) -> FtlCounters {
        FtlCounters {
            host_write_ius,
            nand_write_ius,
            erases,
            ..Default::default()
        }
    }

    #[test]
    fn wa_windows_reach_back_over_whole_reclaim_cycles() {
        // Steady at WA 4 from 1000 host IUs on; the last window falls between two bursts.
        let starts = [at(0, 0, 0), at(1000, 1000, 10), at(2000, 5000, 50)];
        let end = at(2100, 5100, 50);
        assert_eq!(wa_between(&starts[2], &end), 1.0);
        // 40 reclaims needed: back to the second start (3 + 1 = 4100 / 1100 IUs).
        let wa = wa_over_reclaims(&starts, &end, 40);
        assert!((wa - 4100.0 / 1100.0).abs() < 1e-12, "{wa}");
        // A window that holds enough reclaims is taken as it is.
        assert_eq!(wa_over_reclaims(&starts, &at(3000, 9000, 90), 40), 4.0);
        // None holds enough: the earliest start.
        assert_eq!(wa_over_reclaims(&starts, &end, 1000), 5100.0 / 2100.0);
        assert_eq!(wa_over_reclaims(&[], &end, 1), 0.0);
    }

    #[test]
    fn the_data_content_goes_into_the_global_section() {
        let text = "[global]\ndirect=1\n\n[w]\nrw=write\n";
        let with = with_compressible_data(text, 60);
        assert_eq!(
            with,
            "[global]\nbuffer_compress_percentage=60\ndirect=1\n\n[w]\nrw=write\n"
        );
        let file = flashlab_workload::parse_str(&with, "w.fio", &|_| None).unwrap();
        assert_eq!(file.jobs[0].buffers.compressible_percent, 60);
        // Without a [global] section one is added; 0 is random data, fresh per write.
        let with = with_compressible_data("[w]\nrw=write\n", 0);
        let file = flashlab_workload::parse_str(&with, "w.fio", &|_| None).unwrap();
        assert_eq!(file.jobs[0].buffers.compressible_percent, 0);
        assert!(with.starts_with("[global]\nrefill_buffers=1\n"));
    }
}
