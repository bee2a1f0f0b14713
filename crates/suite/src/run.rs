//! Running a suite: on one device built from its description, a device the caller built, a
//! drive or system target, real storage, or every target as several identical drives on
//! threads of their own.

use flashlab_device::{DeviceConfig, Ssd};
use flashlab_engine::{SeedTree, SimTime};
use flashlab_system::{System, SystemConfig};

use crate::device::SuiteDevice;
use crate::error::{device_error, SuiteError};
use crate::measure::Measure;
use crate::options::SuiteOptions;
use crate::real::{RealError, RealTarget};
use crate::record::SuiteProgress;
use crate::session::{AfterStep, Session};
use crate::state_cache;
use crate::suite::{DeviceReport, RunsOn, SuiteKind, SuiteReport};
use crate::Unit;

/// Run `kind` on one device built from `config`. `progress` hears the name of each step as
/// it starts.
pub fn run_on_device(
    kind: SuiteKind,
    config: &DeviceConfig,
    options: &SuiteOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<DeviceReport, SuiteError> {
    run_on_device_with(kind, config, options, &mut |p| {
        if p.step_started {
            progress(p.step)
        }
    })
}

/// [`run_on_device`] with the whole [`SuiteProgress`]: step, round, simulated time, share done.
pub fn run_on_device_with(
    kind: SuiteKind,
    config: &DeviceConfig,
    options: &SuiteOptions,
    progress: &mut dyn FnMut(&SuiteProgress),
) -> Result<DeviceReport, SuiteError> {
    options.validate()?;
    if kind.targets() == RunsOn::Description {
        let mut s = Session::described(config, options, progress);
        s.set_axes(kind.axes());
        return run_session(kind, &mut s);
    }
    let seeds = SeedTree::new(options.seed).child("device");
    let device_seed = seeds.master_seed();
    let mut ssd = Ssd::new(config, seeds).map_err(|error| device_error(config, error))?;
    let fresh = state_cache::FreshDevice::Drive(Box::new(config.clone()));
    let run = DeviceRun {
        fresh: Some((fresh, device_seed)),
        ..DeviceRun::default()
    };
    run_on(kind, &mut ssd, &config.name, run, options, progress).map(|(report, _)| report)
}

/// How a suite runs on a device: where its clock stands, whether it was just built from its
/// description (so the precondition cache may stand in for its preconditioning), and what
/// hears each step's end.
#[derive(Default)]
pub struct DeviceRun<'a> {
    /// Device time of the first step (a loaded state's clock; 0 on a new device).
    pub start_ns: SimTime,
    fresh: Option<(state_cache::FreshDevice, u64)>,
    pub after_step: Option<AfterStep<'a>>,
}

impl<'a> DeviceRun<'a> {
    /// A run whose first step starts at `start_ns`.
    pub fn starting_at(start_ns: SimTime) -> Self {
        DeviceRun {
            start_ns,
            ..DeviceRun::default()
        }
    }

    /// `hook` hears the end of every recorded step, and of the preconditioning.
    pub fn with_after_step(mut self, hook: AfterStep<'a>) -> Self {
        self.after_step = Some(hook);
        self
    }

    /// The device was just built from `target` with the device seed `device_seed` (not
    /// loaded, not wrapped): its preconditioning may come from the precondition cache.
    pub fn fresh(mut self, target: &SuiteTarget, device_seed: u64) -> Self {
        self.fresh = Some((
            match target {
                SuiteTarget::Drive(c) => state_cache::FreshDevice::Drive(c.clone()),
                SuiteTarget::System(c) => state_cache::FreshDevice::System(Box::new(c.clone())),
            },
            device_seed,
        ));
        self
    }
}

/// Run `kind` on a simulated drive or system; the suites that build their own drives refuse.
fn run_on<'a>(
    kind: SuiteKind,
    dev: &'a mut dyn SuiteDevice,
    name: &str,
    run: DeviceRun<'a>,
    options: &'a SuiteOptions,
    progress: &'a mut dyn FnMut(&SuiteProgress),
) -> Result<(DeviceReport, SimTime), SuiteError> {
    if kind.targets() == RunsOn::Description {
        return Err(SuiteError::NoFtl {
            device: name.to_string(),
            suite: kind.name(),
            one_ssd: false,
        });
    }
    let mut s = Session::new(dev, name, options, progress);
    s.set_axes(kind.axes());
    s.start_at(run.start_ns);
    if let Some((fresh, device_seed)) = run.fresh {
        s.fresh_device(fresh, device_seed);
    }
    if let Some(hook) = run.after_step {
        s.after_each_step(hook);
    }
    let report = run_session(kind, &mut s)?;
    Ok((report, s.now_ns()))
}

/// Run `kind` on a session set up for it, and gather the device's report.
fn run_session(kind: SuiteKind, s: &mut Session) -> Result<DeviceReport, SuiteError> {
    let outcome = kind.run(s)?;
    let scale = s.scale();
    Ok(DeviceReport {
        device: s.device().to_string(),
        scale_note: (!scale.is_full()).then(|| scale.summary()),
        steps: std::mem::take(&mut s.steps),
        steady: outcome.steady,
        results: outcome.results,
        charts: outcome.charts,
    })
}

/// Run `kind` on a device built by the caller (a drive wrapped to watch what reaches it, a
/// system of one's own). Suites that build their drives from a description
/// ([`RunsOn::Description`]) are refused with [`SuiteError::NoFtl`].
pub fn run_on_suite_device(
    kind: SuiteKind,
    dev: &mut dyn SuiteDevice,
    name: &str,
    options: &SuiteOptions,
    progress: &mut dyn FnMut(&SuiteProgress),
) -> Result<DeviceReport, SuiteError> {
    options.validate()?;
    run_on(kind, dev, name, DeviceRun::default(), options, progress).map(|(report, _)| report)
}

/// [`run_on_suite_device`] on a device whose clock already stands at `start_ns` (a drive or
/// system loaded from a saved state): the first step starts there. Returns the report and
/// the latest device time the suite reached, where a saved state's next run starts.
pub fn run_on_suite_device_at(
    kind: SuiteKind,
    dev: &mut dyn SuiteDevice,
    name: &str,
    start_ns: SimTime,
    options: &SuiteOptions,
    progress: &mut dyn FnMut(&SuiteProgress),
) -> Result<(DeviceReport, SimTime), SuiteError> {
    let run = DeviceRun {
        start_ns,
        ..DeviceRun::default()
    };
    run_on_suite_device_as(kind, dev, name, run, options, progress)
}

/// [`run_on_suite_device_at`] as `run` says: the clock, whether the device is fresh, and
/// what hears each step's end.
pub fn run_on_suite_device_as<'a>(
    kind: SuiteKind,
    dev: &'a mut dyn SuiteDevice,
    name: &str,
    run: DeviceRun<'a>,
    options: &'a SuiteOptions,
    progress: &'a mut dyn FnMut(&SuiteProgress),
) -> Result<(DeviceReport, SimTime), SuiteError> {
    options.validate()?;
    run_on(kind, dev, name, run, options, progress)
}

/// What a suite runs on: a single drive or a storage system (RAID sets, cache tiers, links).
#[derive(Debug, Clone, PartialEq)]
pub enum SuiteTarget {
    /// Boxed: a drive's description is several times a system's.
    Drive(Box<DeviceConfig>),
    System(SystemConfig),
}

impl SuiteTarget {
    pub fn name(&self) -> &str {
        match self {
            SuiteTarget::Drive(c) => &c.name,
            SuiteTarget::System(c) => &c.name,
        }
    }
}

/// Run `kind` on a drive or a system. On a system, op-sweep, endurance and raid-scaling (which
/// rebuild a drive from its description) are refused with [`SuiteError::NoFtl`], and so are
/// wsat and recovery unless the system is one SSD.
pub fn run_on_target_with(
    kind: SuiteKind,
    target: &SuiteTarget,
    options: &SuiteOptions,
    progress: &mut dyn FnMut(&SuiteProgress),
) -> Result<DeviceReport, SuiteError> {
    let cfg = match target {
        SuiteTarget::Drive(config) => return run_on_device_with(kind, config, options, progress),
        SuiteTarget::System(cfg) => cfg,
    };
    options.validate()?;
    let seeds = SeedTree::new(options.seed).child("device");
    let device_seed = seeds.master_seed();
    let mut system = System::build(cfg, seeds).map_err(|error| SuiteError::System {
        device: cfg.name.clone(),
        error: Box::new(error),
    })?;
    let run = DeviceRun::default().fresh(target, device_seed);
    run_on(kind, &mut system, &cfg.name, run, options, progress).map(|(report, _)| report)
}

/// Run `kind` on real storage through fio (`docs/real.md`). Only the suites that measure
/// what fio reports can run there: the others need a simulated drive's internal counters.
pub fn run_on_real_target(
    kind: SuiteKind,
    target: &mut RealTarget,
    options: &SuiteOptions,
    progress: &mut dyn FnMut(&SuiteProgress),
) -> Result<DeviceReport, SuiteError> {
    options.validate()?;
    let name = target.name();
    // The suites made only of fio jobs, purges and idle time; the others read a simulated
    // drive's internals or build simulated drives and systems of their own.
    if kind.targets() != RunsOn::Any {
        return Err(SuiteError::Real {
            device: name,
            step: "start".into(),
            error: Box::new(RealError::Unsupported { suite: kind.name() }),
        });
    }
    let mut session = Session::real(target, options, progress);
    let mut report = run_session(kind, &mut session)?;
    drop(session);
    report.scale_note = Some(target.summary());
    Ok(report)
}

/// Run `kind` on every device, each on its own thread; results come back in device order and
/// do not depend on the threads' timing. The first error (in device order) wins.
/// `progress(device_index, step)` may be called from any of the threads.
pub fn run_suite(
    kind: SuiteKind,
    configs: &[DeviceConfig],
    options: &SuiteOptions,
    progress: &(dyn Fn(usize, &str) + Sync),
) -> Result<SuiteReport, SuiteError> {
    run_suite_with(kind, configs, options, &|i, p: &SuiteProgress| {
        if p.step_started {
            progress(i, p.step)
        }
    })
}

/// [`run_suite`] with the whole [`SuiteProgress`] of each device.
pub fn run_suite_with(
    kind: SuiteKind,
    configs: &[DeviceConfig],
    options: &SuiteOptions,
    progress: &(dyn Fn(usize, &SuiteProgress) + Sync),
) -> Result<SuiteReport, SuiteError> {
    let targets: Vec<SuiteTarget> = configs
        .iter()
        .map(|c| SuiteTarget::Drive(Box::new(c.clone())))
        .collect();
    run_suite_targets_with(kind, &targets, options, progress)
}

/// [`run_suite_with`] on drives and systems alike.
pub fn run_suite_targets_with(
    kind: SuiteKind,
    targets: &[SuiteTarget],
    options: &SuiteOptions,
    progress: &(dyn Fn(usize, &SuiteProgress) + Sync),
) -> Result<SuiteReport, SuiteError> {
    run_suite_drives_with(kind, targets, 1, options, progress)
}

/// Most identical drives per target: each runs on its own thread and holds its own model.
pub const MAX_DRIVES: usize = 256;

/// The seed drive `drive` (from 1) of a target runs with when a suite seeded `suite_seed`
/// runs several identical drives. Drive 1 keeps the suite seed, so it measures exactly what a
/// single-drive run does; drive `i > 1` takes the child `drive-i` of the suite seed's
/// [`SeedTree`]. A drive's seed does not depend on how many drives run.
pub fn drive_seed(suite_seed: u64, drive: usize) -> u64 {
    if drive <= 1 {
        suite_seed
    } else {
        SeedTree::new(suite_seed)
            .child(&format!("drive-{drive}"))
            .master_seed()
    }
}

/// The name of drive `drive` (from 1) of `device` among several identical ones.
pub fn drive_name(device: &str, drive: usize) -> String {
    format!("{device}#{drive}")
}

/// The name of the aggregate of `device`'s identical drives.
pub fn aggregate_name(device: &str) -> String {
    format!("{device}#all")
}

/// One report standing for several identical drives run side by side: IOPS and bandwidth
/// measures are summed (the drives serve at once), latency measures take the worst drive's
/// value (the slowest drive bounds a host striping over them). Measures of other units (counts,
/// ratios, sizes) and measures some drive lacks are left out.
pub fn aggregate_drives(device: &str, drives: &[DeviceReport]) -> DeviceReport {
    let mut results: Vec<Measure> = Vec::new();
    if let Some(first) = drives.first() {
        for m in &first.results {
            let values: Vec<f64> = drives
                .iter()
                .filter_map(|d| {
                    d.results
                        .iter()
                        .find(|o| o.is(m.family, &m.row, m.col) && o.unit == m.unit)
                })
                .map(|o| o.value)
                .collect();
            if values.len() != drives.len() {
                continue;
            }
            let value = match m.unit {
                Unit::Iops | Unit::BytesPerS => values.iter().sum(),
                Unit::Ns => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                _ => continue,
            };
            results.push(Measure { value, ..m.clone() });
        }
    }
    DeviceReport {
        device: aggregate_name(device),
        scale_note: Some(format!(
            "{} identical drives: IOPS and bandwidth summed, latency the worst drive's",
            drives.len()
        )),
        steps: Vec::new(),
        steady: None,
        results,
        charts: Vec::new(),
    }
}

/// [`run_suite_targets_with`] with every target run as `drives` identical drives, each on
/// its own thread and seeded by [`drive_seed`]. With more than one drive, a target's reports
/// are named `NAME#1` … `NAME#N` and followed by their aggregate `NAME#all`
/// ([`aggregate_drives`]); with one, the report is the single-drive run's, unchanged.
/// `progress` hears drive `d` (from 1) of target `t` as index `t * drives + d - 1`.
pub fn run_suite_drives_with(
    kind: SuiteKind,
    targets: &[SuiteTarget],
    drives: usize,
    options: &SuiteOptions,
    progress: &(dyn Fn(usize, &SuiteProgress) + Sync),
) -> Result<SuiteReport, SuiteError> {
    options.validate()?;
    if drives == 0 || drives > MAX_DRIVES {
        return Err(SuiteError::BadOption {
            option: "drives",
            value: drives.to_string(),
            valid: format!("identical drives per device, 1 to {MAX_DRIVES}"),
        });
    }
    let runs: Vec<(usize, SuiteOptions)> = (0..targets.len())
        .flat_map(|t| {
            (1..=drives).map(move |d| {
                let seed = drive_seed(options.seed, d);
                (
                    t,
                    SuiteOptions {
                        seed,
                        ..options.clone()
                    },
                )
            })
        })
        .collect();
    let outcomes: Vec<Result<DeviceReport, SuiteError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = runs
            .iter()
            .enumerate()
            .map(|(i, (t, drive_options))| {
                let target = &targets[*t];
                scope.spawn(move || {
                    run_on_target_with(kind, target, drive_options, &mut |p| progress(i, p))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(outcome) => outcome,
                // A panic is a bug in the model: carry it to the caller's thread unchanged.
                Err(payload) => std::panic::resume_unwind(payload),
            })
            .collect()
    });
    let reports = outcomes.into_iter().collect::<Result<Vec<_>, _>>()?;
    let devices = if drives == 1 {
        reports
    } else {
        let mut devices = Vec::with_capacity(targets.len() * (drives + 1));
        for (target, chunk) in targets.iter().zip(reports.chunks(drives)) {
            let mut named: Vec<DeviceReport> = chunk.to_vec();
            for (d, report) in named.iter_mut().enumerate() {
                report.device = drive_name(target.name(), d + 1);
                // The seed is what reproduces this drive alone.
                let drive_note = format!(
                    "drive {} of {drives}, seed {}",
                    d + 1,
                    drive_seed(options.seed, d + 1)
                );
                report.scale_note = Some(match report.scale_note.take() {
                    Some(note) => format!("{drive_note}; {note}"),
                    None => drive_note,
                });
            }
            let aggregate = aggregate_drives(target.name(), &named);
            devices.extend(named);
            devices.push(aggregate);
        }
        devices
    };
    Ok(SuiteReport {
        suite: kind,
        options: options.clone(),
        devices,
    })
}
