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
//!
//! Each job runs through `flashlab_runner::run_jobs`, so every step has an ordinary fio
//! result. Simulated time keeps running from one step to the next (`docs/suites.md`).

mod client;
mod client_options;
mod html;
mod options;
mod output;
mod pts;
mod session;
pub mod steady;
mod suites;

use flashlab_device::{ConfigError, DeviceConfig, Ssd};
use flashlab_engine::SeedTree;
use flashlab_runner::RunError;
use flashlab_workload::ParseError;

pub use client_options::{parse_size, parse_time, ClientOptions, DesktopProfile, DriveState};
pub use flashlab_report::chart::{Axis, Chart, Series, Unit};
pub use html::render_html;
pub use options::{RoundLength, SuiteOptions};
pub use output::{render_csv, render_json, render_table, write_outdir};
pub use steady::{check_window, steady_state, SteadyRule, SteadyVerdict, WindowCheck};

/// The built-in suites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuiteKind {
    Precondition,
    FourCorners,
    Qos,
    PtsIops,
    PtsThroughput,
    PtsLatency,
    TransferSweep,
    Desktop,
}

impl SuiteKind {
    pub const ALL: [SuiteKind; 8] = [
        SuiteKind::Precondition,
        SuiteKind::FourCorners,
        SuiteKind::Qos,
        SuiteKind::PtsIops,
        SuiteKind::PtsThroughput,
        SuiteKind::PtsLatency,
        SuiteKind::TransferSweep,
        SuiteKind::Desktop,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SuiteKind::Precondition => "precondition",
            SuiteKind::FourCorners => "four-corners",
            SuiteKind::Qos => "qos",
            SuiteKind::PtsIops => "pts-iops",
            SuiteKind::PtsThroughput => "pts-throughput",
            SuiteKind::PtsLatency => "pts-latency",
            SuiteKind::TransferSweep => "transfer-sweep",
            SuiteKind::Desktop => "desktop",
        }
    }

    pub fn summary(self) -> &'static str {
        match self {
            SuiteKind::Precondition => {
                "purge, sequential fill x2, 4 KiB random-write rounds to SNIA steady state"
            }
            SuiteKind::FourCorners => {
                "128 KiB sequential read/write, 4 KiB random read/write, each preconditioned"
            }
            SuiteKind::Qos => "4 KiB read/write mix across queue depths: IOPS, read latency tail",
            SuiteKind::PtsIops => {
                "SNIA PTS IOPS: 7 R/W mixes x 8 block sizes, rounds to steady state"
            }
            SuiteKind::PtsThroughput => {
                "SNIA PTS throughput: 128 KiB and 1024 KiB sequential read/write at steady state"
            }
            SuiteKind::PtsLatency => {
                "SNIA PTS latency: QD1 mean, max, p99.999 for 3 mixes x 3 block sizes"
            }
            SuiteKind::TransferSweep => {
                "ATTO-style sequential read/write across transfer sizes (512 B to 64 MiB)"
            }
            SuiteKind::Desktop => {
                "CrystalDiskMark 8 test sets on a 1 GiB test file, best of N runs"
            }
        }
    }

    /// The suite called `name`, or an error listing the valid names.
    pub fn from_name(name: &str) -> Result<SuiteKind, SuiteError> {
        SuiteKind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| SuiteError::UnknownSuite {
                name: name.to_string(),
                valid: suite_names(),
            })
    }
}

/// The valid suite names, comma-separated.
pub fn suite_names() -> String {
    SuiteKind::ALL
        .iter()
        .map(|k| k.name())
        .collect::<Vec<_>>()
        .join(", ")
}

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
    #[error("device '{device}', step '{step}': the device refused a command: {error}")]
    Refused {
        device: String,
        step: String,
        error: flashlab_engine::DeviceError,
    },
}

impl SuiteError {
    /// True when the input (suite name, option, device) is at fault: the CLI exits with 2.
    pub fn is_bad_input(&self) -> bool {
        match self {
            SuiteError::UnknownSuite { .. }
            | SuiteError::BadOption { .. }
            | SuiteError::Device { .. }
            | SuiteError::Job { .. } => true,
            SuiteError::Run { error, .. } => error.is_bad_input(),
            SuiteError::Refused { .. } => false,
        }
    }
}

/// One measured figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Measure {
    /// Stable key, e.g. `seq_read_bw_bytes_per_s` (units last, as in the JSON).
    pub name: String,
    pub unit: Unit,
    pub value: f64,
}

/// What a step did.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRecord {
    /// Unique within the device's run, e.g. `round-03`.
    pub name: String,
    /// `None` for a purge; else the fio job text that ran.
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

/// Run `kind` on one device built from `config`. `progress` hears the name of each step as
/// it starts.
pub fn run_on_device(
    kind: SuiteKind,
    config: &DeviceConfig,
    options: &SuiteOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<DeviceReport, SuiteError> {
    options.validate()?;
    let seeds = SeedTree::new(options.seed);
    let mut ssd = Ssd::new(config, seeds.child("device")).map_err(|error| SuiteError::Device {
        device: config.name.clone(),
        error: Box::new(error),
    })?;
    suites::run(kind, &mut ssd, &config.name, options, progress)
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
    options.validate()?;
    let outcomes: Vec<Result<DeviceReport, SuiteError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = configs
            .iter()
            .enumerate()
            .map(|(i, config)| {
                scope.spawn(move || run_on_device(kind, config, options, &mut |s| progress(i, s)))
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
    let devices = outcomes.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok(SuiteReport {
        suite: kind,
        options: options.clone(),
        devices,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suite_names_round_trip_and_unknown_lists_them() {
        for k in SuiteKind::ALL {
            assert_eq!(SuiteKind::from_name(k.name()).unwrap(), k);
        }
        let e = SuiteKind::from_name("four_corners").unwrap_err();
        assert!(e.is_bad_input());
        let msg = e.to_string();
        assert!(msg.contains("precondition, four-corners, qos"), "{msg}");
    }
}
