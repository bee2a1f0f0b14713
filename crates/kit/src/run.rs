//! Running a suite: on one device built from its description, a device the caller built, a
//! drive or system target, real storage, or every target as several identical drives on
//! threads of their own.

use flashlab_device::{DeviceConfig, Ssd};
use flashlab_engine::{SeedTree, SimTime};
use flashlab_system::System;

use crate::device::{SuiteDevice, SuiteTarget};
use crate::error::{device_error, SuiteError};
use crate::measure::Measure;
use crate::options::SuiteOptions;
use crate::real::{RealError, RealTarget};
use crate::record::SuiteProgress;
use crate::registry::Registry;
use crate::rescale::{keeping_figures, NamedTargets};
use crate::session::{AfterStep, Session};
use crate::suite::{DeviceReport, RunsOn, SuiteKind, SuiteReport};
use crate::Unit;
use flashlab_cache as state_cache;

/// Where [`run`] runs a suite.
pub enum On<'a> {
    /// Drives and systems as named, each as `drives` identical drives on threads of their
    /// own; a drive whose slice would change a figure is loaded again larger
    /// ([`crate::rescale`]), and `targets` then holds it.
    Named {
        targets: &'a mut NamedTargets,
        drives: usize,
    },
    /// Drives and systems, each as `drives` identical drives on threads of their own.
    Targets {
        targets: &'a [SuiteTarget],
        drives: usize,
    },
    /// A device the caller built (a drive wrapped to watch what reaches it, a system of
    /// one's own, a loaded state), as `run` says; suites that build their drives from a
    /// description ([`RunsOn::Description`]) are refused with [`SuiteError::NoFtl`].
    Device {
        dev: &'a mut dyn SuiteDevice,
        name: &'a str,
        run: DeviceRun<'a>,
    },
    /// Real storage through fio (`docs/real.md`): only the suites made of fio jobs, purges
    /// and idle time ([`RunsOn::Any`]) run there.
    Real(&'a mut RealTarget),
}

/// A suite's run: its report, and the latest device time it reached (on [`On::Device`],
/// where a saved state's next run starts; 0 elsewhere).
#[derive(Debug)]
pub struct Ran {
    pub report: SuiteReport,
    pub end_ns: SimTime,
}

impl Ran {
    /// A run on one device ([`On::Device`], [`On::Real`]): its report and end time.
    pub fn into_device(self) -> Option<(DeviceReport, SimTime)> {
        let mut devices = self.report.devices.into_iter();
        match (devices.next(), devices.next()) {
            (Some(device), None) => Some((device, self.end_ns)),
            _ => None,
        }
    }
}

/// Run the registered suite `kind` as `on` says, with `options`. `progress(device, p)`
/// hears each device's steps, rounds and share done (device in report order; with several
/// identical drives, drive `d` from 1 of target `t` is `t * drives + d - 1`); it may be
/// called from any of the threads the devices run on. Results do not depend on the threads'
/// timing; the first error in device order wins.
pub fn run(
    reg: &Registry,
    kind: SuiteKind,
    on: On<'_>,
    options: &SuiteOptions,
    progress: &(dyn Fn(usize, &SuiteProgress) + Sync),
) -> Result<Ran, SuiteError> {
    let one = |device: DeviceReport| SuiteReport {
        suite: kind,
        options: options.clone(),
        devices: vec![device],
    };
    match on {
        On::Named { targets, drives } => {
            let run_drives = |targets: &[SuiteTarget]| {
                run_suite_drives_with(kind, targets, drives, options, progress)
            };
            let report = keeping_figures(targets, drives, kind, &run_drives)?;
            Ok(Ran { report, end_ns: 0 })
        }
        On::Targets { targets, drives } => {
            let report = run_suite_drives_with(kind, targets, drives, options, progress)?;
            Ok(Ran { report, end_ns: 0 })
        }
        On::Device { dev, name, run } => {
            let (device, end_ns) = on_device(kind, dev, name, run, options, progress)?;
            Ok(Ran {
                report: one(device),
                end_ns,
            })
        }
        On::Real(target) => {
            let device = run_on_real_target(reg, kind, target, options, &mut |p| progress(0, p))?;
            Ok(Ran {
                report: one(device),
                end_ns: 0,
            })
        }
    }
}

/// [`On::Device`]: the device's session lives no longer than this call, so the caller's
/// hook is lent to it for that long.
fn on_device(
    kind: SuiteKind,
    dev: &mut dyn SuiteDevice,
    name: &str,
    run: DeviceRun<'_>,
    options: &SuiteOptions,
    progress: &(dyn Fn(usize, &SuiteProgress) + Sync),
) -> Result<(DeviceReport, SimTime), SuiteError> {
    let DeviceRun {
        start_ns,
        fresh,
        mut after_step,
    } = run;
    let run = DeviceRun {
        start_ns,
        fresh,
        after_step: after_step.as_mut().map(|h| &mut **h as AfterStep<'_>),
    };
    let mut tell = |p: &SuiteProgress| progress(0, p);
    run_on_suite_device_as(kind, dev, name, run, options, &mut tell)
}

/// Run `kind` on one device built from `config`; `progress` hears the whole
/// [`SuiteProgress`]: step, round, simulated time, share done.
fn run_on_device_with(
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

/// Run `kind` on a device the caller built, as `run` says: the clock, whether the device is
/// fresh, and what hears each step's end. Returns the report and the latest device time the
/// suite reached.
fn run_on_suite_device_as<'a>(
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

/// Run `kind` on a drive or a system. On a system, op-sweep, endurance and raid-scaling (which
/// rebuild a drive from its description) are refused with [`SuiteError::NoFtl`], and so are
/// wsat and recovery unless the system is one SSD.
fn run_on_target_with(
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
fn run_on_real_target(
    reg: &Registry,
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
            error: Box::new(RealError::Unsupported {
                suite: kind.name(),
                on_real: reg.on_real_storage(),
            }),
        });
    }
    let mut session = Session::real(target, options, progress, reg.on_real_storage());
    let mut report = run_session(kind, &mut session)?;
    drop(session);
    report.scale_note = Some(target.summary());
    Ok(report)
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

/// Drive `i`'s progress, under its own name among identical drives (`NAME#2`, as the report
/// names it) so that their lines on the display are told apart.
fn drive_progress(
    progress: &(dyn Fn(usize, &SuiteProgress) + Sync),
    i: usize,
    name: Option<&str>,
    p: &SuiteProgress,
) {
    match name {
        Some(device) => progress(i, &SuiteProgress { device, ..*p }),
        None => progress(i, p),
    }
}

/// Run `kind` on every target as `drives` identical drives, each on its own thread and seeded by [`drive_seed`]. With more than one drive, a target's reports
/// are named `NAME#1` … `NAME#N` and followed by their aggregate `NAME#all`
/// ([`aggregate_drives`]); with one, the report is the single-drive run's, unchanged.
/// `progress` hears drive `d` (from 1) of target `t` as index `t * drives + d - 1`.
pub(crate) fn run_suite_drives_with(
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
                let name = (drives > 1).then(|| drive_name(target.name(), i % drives + 1));
                scope.spawn(move || {
                    run_on_target_with(kind, target, drive_options, &mut |p| {
                        drive_progress(progress, i, name.as_deref(), p)
                    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use flashlab_engine::SeedTree;

    fn report(results: &[(&'static str, Unit, f64)]) -> DeviceReport {
        DeviceReport {
            device: "d".into(),
            scale_note: None,
            steps: Vec::new(),
            steady: None,
            results: results
                .iter()
                .map(|(name, unit, value)| Measure::new(name, *unit, *value))
                .collect(),
            charts: Vec::new(),
        }
    }

    #[test]
    fn aggregate_sums_throughput_takes_worst_latency_and_drops_the_rest() {
        let a = report(&[
            ("iops", Unit::Iops, 100.0),
            ("bw_bytes_per_s", Unit::BytesPerS, 1e6),
            ("lat_p99_ns", Unit::Ns, 500.0),
            ("waf", Unit::Ratio, 2.0),
            ("only_a_ns", Unit::Ns, 9.0),
        ]);
        let b = report(&[
            ("lat_p99_ns", Unit::Ns, 800.0),
            ("iops", Unit::Iops, 50.0),
            ("bw_bytes_per_s", Unit::BytesPerS, 3e6),
            ("waf", Unit::Ratio, 3.0),
        ]);
        let agg = aggregate_drives("dev", &[a, b]);
        assert_eq!(agg.device, "dev#all");
        let got: Vec<(&str, f64)> = agg.results.iter().map(|m| (m.family, m.value)).collect();
        assert_eq!(
            got,
            [
                ("iops", 150.0),
                ("bw_bytes_per_s", 4e6),
                ("lat_p99_ns", 800.0)
            ]
        );
    }

    #[test]
    fn drive_seeds_keep_drive_one_and_differ_per_drive() {
        assert_eq!(drive_seed(42, 1), 42);
        let seeds: Vec<u64> = (1..=8).map(|d| drive_seed(42, d)).collect();
        for (i, a) in seeds.iter().enumerate() {
            assert!(seeds[i + 1..].iter().all(|b| b != a), "{seeds:?}");
        }
        assert_eq!(
            drive_seed(42, 3),
            SeedTree::new(42).child("drive-3").master_seed()
        );
        assert_ne!(drive_seed(42, 3), drive_seed(43, 3));
    }
}
