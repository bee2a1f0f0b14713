//! Built-in test suites: a sequence of fio-style jobs run on one device instance (state carries
//! over, so a preconditioned drive stays preconditioned) and a rule for what to measure. The
//! suites are data plus a little logic, the same for every device:
//!
//! - `precondition`: purge, write the drive sequentially twice, then rounds of 4 KiB random
//!   writes until the SNIA PTS steady-state rule holds ([`steady`]);
//! - `four-corners`: 128 KiB sequential read and write and 4 KiB random read after a
//!   sequential fill, 4 KiB random write at steady state;
//! - `qos`: a read/write mix across queue depths after preconditioning, with read latency
//!   percentiles;
//! - `pts-iops`, `pts-throughput`, `pts-latency`: the SNIA PTS Enterprise IOPS, throughput and
//!   latency tests (module `pts`);
//! - `transfer-sweep` (ATTO-style sequential transfer sizes) and `desktop` (CrystalDiskMark's
//!   test sets), the client benchmarks people run on their own drives.
//! - `wsat`, `recovery`, `op-sweep`, `endurance`: write saturation from fresh to steady,
//!   recovery of a dirty drive during idle time, extra spare area against IOPS and wear, and
//!   wear rate and projected endurance of a workload (one module each).
//!
//! - `raid-scaling`, `sustained-write`, `cache-passes`: storage systems (docs/reviews.md §4, §5):
//!   RAID levels against member count, throughput over a long sequential write, and first
//!   against second pass over a cached hard disk (one module each).
//!
//! - `app-profiles`: SQL, Oracle and VDI workloads (`jobs/profiles/*.fio`) at rising load on
//!   a preconditioned device, IOPS against average latency up to the peak.
//!
//! Every suite runs on a single drive or on a whole system ([`SuiteTarget`]); those that read
//! FTL internals need a drive.
//!
//! Each job runs through `flashlab_runner::run_jobs`, so every step has an ordinary fio
//! result. Simulated time keeps running from one step to the next (`docs/suites.md`).

mod app_profiles;
mod basic;
mod cache_passes;
mod charts;
mod client;
mod client_options;
mod endurance;
mod file_scan;
mod format;
mod grids;
mod html;
mod lengths;
mod measure;
mod oltp;
mod opsweep;
mod options;
mod output;
mod pts;
mod raid_scaling;
mod real;
mod recovery;
mod session;
mod showdown;
mod state_cache;
pub mod steady;
mod steps;
mod suite;
mod sustained;
mod tenants;
mod wsat;

use flashlab_device::{ConfigError, DeviceConfig, Ssd};
use flashlab_engine::{SeedTree, SimTime};
use flashlab_runner::RunError;
use flashlab_system::{System, SystemConfig, SystemError};
use flashlab_workload::ParseError;

pub use app_profiles::{
    app_profile, app_profile_names, past_peak, split_load, AppProfile, AppProfileOptions,
    ProfileGroup, APP_PROFILES,
};
pub use cache_passes::CachePassesOptions;
pub use oltp::{
    run_workload as run_oltp_workload, OltpOptions, OltpPoint, CLEANER_BATCH, DIRTY_PAGES_PER_TXN,
    LOG_WRITE_BYTES, READS_PER_TXN,
};
pub use raid_scaling::{LinkChoice, RaidScalingOptions};
pub use session::{AfterStep, SuiteDevice, PRECONDITION_STEP};
pub use state_cache::{StateCache, DEFAULT_MAX_CACHE_BYTES};
pub use sustained::SustainedOptions;

pub use basic::QosOptions;
pub use client_options::{
    ClientOptions, DesktopOptions, DesktopProfile, DriveState, TransferSweepOptions,
};
pub use endurance::{EnduranceOptions, EnduranceWorkload};
pub use flashlab_report::chart::{Axis, Chart, Series, Unit};
pub use grids::{grid_titles, GridSpec};
pub use html::render_html;
pub use lengths::{parse_size, parse_time, RoundLength};
pub use measure::{Coord, Dim, Measure, Phase};
pub use opsweep::OpSweepOptions;
pub use options::{OwnOptions, OwnOptionsSet, PreconditionKind, PreconditionOptions, SuiteOptions};
pub use output::{render_csv, render_json, render_table, render_tidy_csv, write_outdir};
pub use real::{RealError, RealOptions, RealTarget, TargetKind, DEFAULT_MAX_IDLE_NS};
pub use recovery::{RecoveryOptions, RecoveryVariant};
pub use session::Session;
pub use steady::{check_window, steady_state, SteadyRule, SteadyVerdict, WindowCheck};
pub use suite::{suite, suite_names, suite_options, Outcome, Suite, SuiteKind, Targets};
pub use tenants::TenantOptions;
pub use wsat::WsatOptions;

/// The built-in suites, in the order the CLI lists them: the one list the CLI, the options
/// check, the real-storage check, the JSON report and the renderings read. A suite is a module
/// with a unit struct implementing [`Suite`], declared above and listed here.
pub static SUITES: &[SuiteKind] = &[
    &basic::Precondition,
    &basic::FourCorners,
    &basic::Qos,
    &pts::PtsIops,
    &pts::PtsThroughput,
    &pts::PtsLatency,
    &client::TransferSweep,
    &client::Desktop,
    &client::CompressionSweep,
    &wsat::Wsat,
    &recovery::Recovery,
    &opsweep::OpSweep,
    &endurance::Endurance,
    &raid_scaling::RaidScaling,
    &sustained::SustainedWrite,
    &cache_passes::CachePasses,
    &tenants::WritePressure,
    &tenants::NoisyNeighbor,
    &tenants::Power,
    &app_profiles::AppProfiles,
    &oltp::Oltp,
];

/// Why a suite could not run. Source errors are boxed: they are large and errors are rare.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error("unknown suite '{name}'; valid suites: {valid}")]
    UnknownSuite { name: String, valid: String },
    #[error("option {option} = '{value}': {valid}")]
    BadOption {
        option: &'static str,
        value: String,
        valid: String,
    },
    /// A command-line value that does not parse as its option's kind (`--run-minutes 0`).
    #[error("{option} {value}: {expected}")]
    OptionValue {
        option: &'static str,
        value: String,
        expected: String,
    },
    #[error("device '{device}': {error}")]
    Device {
        device: String,
        error: Box<ConfigError>,
    },
    /// A job the suite generated did not parse: the options that shaped it are at fault.
    #[error("device '{device}', step '{step}': {error}")]
    Job {
        device: String,
        step: String,
        error: Box<ParseError>,
    },
    #[error("device '{device}', step '{step}': {error}")]
    Run {
        device: String,
        step: String,
        error: Box<RunError>,
    },
    /// A real target could not be used, or fio failed on it.
    #[error("target '{device}', step '{step}': {error}")]
    Real {
        device: String,
        step: String,
        error: Box<RealError>,
    },
    #[error("device '{device}', step '{step}': the device refused a command: {error}")]
    Refused {
        device: String,
        step: String,
        error: flashlab_engine::DeviceError,
    },
    /// A precondition cache entry that checked whole failed while it loaded into the device
    /// (the file changed meanwhile): the device is half loaded and the suite cannot go on.
    #[error("device '{device}': state cache entry {path} failed while loading ({error}); the device it was loading into cannot be used: remove the entry and run again")]
    StateCache {
        device: String,
        path: String,
        error: String,
    },
    #[error("system '{device}': {error}")]
    System {
        device: String,
        error: Box<SystemError>,
    },
    /// The suite reads a drive's FTL (or rebuilds the drive from its description), and the
    /// target is a system whose root is not one SSD. `one_ssd`: a system that is one SSD
    /// would do (wsat, recovery); the suites that rebuild the drive or use its namespaces or
    /// power meter refuse every system, so their message must not offer one.
    #[error(
        "suite {suite} on '{device}': {suite} {}",
        if *one_ssd {
            "reads a single drive's FTL internals; give it a drive preset or file, not a system (or a system that is one SSD)"
        } else {
            "needs a drive of its own (it rebuilds the drive from its description, or uses its namespaces or power meter); give it a drive preset or file, not a system (a system of one SSD is refused too)"
        }
    )]
    NoFtl {
        device: String,
        suite: &'static str,
        one_ssd: bool,
    },
}

impl SuiteError {
    /// True when the input (suite name, option, device) is at fault: the CLI exits with 2.
    pub fn is_bad_input(&self) -> bool {
        match self {
            SuiteError::UnknownSuite { .. }
            | SuiteError::BadOption { .. }
            | SuiteError::OptionValue { .. }
            | SuiteError::Device { .. }
            | SuiteError::Job { .. }
            | SuiteError::System { .. }
            | SuiteError::NoFtl { .. } => true,
            SuiteError::Run { error, .. } => error.is_bad_input(),
            SuiteError::Real { error, .. } => error.is_bad_input(),
            SuiteError::Refused { .. } | SuiteError::StateCache { .. } => false,
        }
    }
}

/// What kind of step ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    /// A secure erase.
    Purge,
    /// An fio job.
    Job,
    /// The host left the drive idle.
    Idle,
    /// A workload the suite drives itself, one I/O at a time (no fio job describes it).
    Driven,
}

impl StepKind {
    pub fn name(self) -> &'static str {
        match self {
            StepKind::Purge => "purge",
            StepKind::Job => "job",
            StepKind::Idle => "idle",
            StepKind::Driven => "driven",
        }
    }
}

/// What a step did.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRecord {
    /// Unique within the device's run, e.g. `round-03`.
    pub name: String,
    pub kind: StepKind,
    /// `None` for a purge or idle time; else the fio job text that ran.
    pub job_text: Option<String>,
    /// The fio JSON of the job (with the device's counters in `"flashlab"`).
    pub fio_json: Option<String>,
    /// Simulated time (ns since the suite started) at which the step ended.
    pub end_ns: u64,
    pub measures: Vec<Measure>,
}

/// The rounds of random writes and their steady-state verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct SteadyReport {
    /// The tracked value of every round (write IOPS), round 1 first.
    pub rounds_iops: Vec<f64>,
    pub verdict: SteadyVerdict,
}

/// One device's run of a suite.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceReport {
    pub device: String,
    /// How a slice stands for the whole drive, when the device is simulated as one.
    pub scale_note: Option<String>,
    pub steps: Vec<StepRecord>,
    pub steady: Option<SteadyReport>,
    /// The suite's results, in a fixed order.
    pub results: Vec<Measure>,
    /// What the report draws, in a fixed order.
    pub charts: Vec<Chart>,
}

/// A suite run on one or more devices, in device order.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteReport {
    pub suite: SuiteKind,
    pub options: SuiteOptions,
    pub devices: Vec<DeviceReport>,
}

/// Where a suite is, for a progress display. Reported when a step starts
/// (`step_started`) and then every so many simulated events while it runs; results never
/// depend on it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SuiteProgress<'a> {
    pub device: &'a str,
    pub step: &'a str,
    /// Steps started so far on this device, this one included.
    pub step_number: usize,
    /// True on the report that announces the step.
    pub step_started: bool,
    /// Round (from 1) of a repeated step, and the most rounds there may be.
    pub round: Option<usize>,
    pub max_rounds: Option<usize>,
    /// The drive's simulated time since the suite started on it.
    pub sim_ns: u64,
    /// Share of the step done, 0 to 1 (the runner's estimate).
    pub step_fraction: f64,
    /// Share of the whole suite done, when the suite knows its length or planned its steps.
    pub suite_fraction: Option<f64>,
    /// What `suite_fraction` measures.
    pub suite_basis: SuiteShare,
}

/// What a [`SuiteProgress::suite_fraction`] is the share of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuiteShare {
    /// The suite's own measure of its work (bytes written, passes, points).
    Work,
    /// The steps the suite planned, each counted alike; with `rounds_at_most`, repeated
    /// rounds count at their most (steady state may come sooner), so the share is a floor.
    Steps { rounds_at_most: bool },
}

fn device_error(config: &DeviceConfig, error: ConfigError) -> SuiteError {
    SuiteError::Device {
        device: config.name.clone(),
        error: Box::new(error),
    }
}

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
    if kind.targets() == Targets::Description {
        let mut s = Session::described(config, options, progress);
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
    if kind.targets() == Targets::Description {
        return Err(SuiteError::NoFtl {
            device: name.to_string(),
            suite: kind.name(),
            one_ssd: false,
        });
    }
    let mut s = Session::new(dev, name, options, progress);
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
/// ([`Targets::Description`]) are refused with [`SuiteError::NoFtl`].
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
    if kind.targets() != Targets::Any {
        return Err(SuiteError::Real {
            device: name,
            step: "start".into(),
            error: Box::new(RealError::Unsupported { suite: kind.name() }),
        });
    }
    let mut session = session::Session::real(target, options, progress);
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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn zero_or_too_many_drives_are_a_bad_option() {
        for n in [0, MAX_DRIVES + 1] {
            let e = run_suite_drives_with(
                suite("qos").unwrap(),
                &[],
                n,
                &SuiteOptions::default(),
                &|_, _| {},
            )
            .unwrap_err();
            assert!(e.is_bad_input());
            assert!(e.to_string().contains("drives"), "{e}");
        }
    }

    #[test]
    fn suite_names_round_trip_and_unknown_lists_them() {
        for &k in SUITES {
            assert_eq!(suite(k.name()).unwrap(), k);
            assert!(!k.summary().is_empty(), "{}", k.name());
        }
        let e = suite("four_corners").unwrap_err();
        assert!(e.is_bad_input());
        let msg = e.to_string();
        assert!(
            msg.contains(
                "precondition, four-corners, qos, pts-iops, pts-throughput, pts-latency, \
                 transfer-sweep, desktop, compression-sweep, wsat, recovery, op-sweep, endurance, raid-scaling, \
                 sustained-write, cache-passes, write-pressure, noisy-neighbor, power, app-profiles, \
                 oltp"
            ),
            "{msg}"
        );
    }
}
