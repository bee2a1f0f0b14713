//! Why a suite could not run.

use flashlab_device::{ConfigError, DeviceConfig};
use flashlab_runner::RunError;
use flashlab_system::SystemError;
use flashlab_workload::ParseError;

use crate::real::RealError;

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
    /// A suite option given by name that no suite has, that this suite does not read, or
    /// whose value does not parse: the whole message, naming the option and what is valid.
    #[error("{0}")]
    Argument(String),
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
    /// Another process held a precondition cache entry's lock (it was filling the entry)
    /// for longer than a session waits.
    #[error("device '{device}': another flashlab process has held the lock of state cache entry {path} for over {waited_s} s (it is preconditioning the same drive, or stopped while it did): wait for it to end, or run with --no-state-cache")]
    StateCacheBusy {
        device: String,
        path: String,
        waited_s: u64,
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
    /// The slice cannot keep the suite's figures (what it writes is a fixed amount, not a
    /// share of the drive, and too large a part of the slice); `scale` is the smallest
    /// `sim.scale` that keeps them (1: the whole drive).
    #[error("device '{device}': no capacity cut: {why}; the smallest slice that keeps the figures is sim.scale={scale}")]
    SliceCut {
        device: String,
        why: String,
        scale: f64,
    },
    /// A drive refused for its slice (die or capacity cut) did not load at the slice that
    /// keeps its figures.
    #[error("device '{device}': {why}, but the slice that keeps the figures (sim.scale={scale}) does not load: {error}")]
    Rescaled {
        device: String,
        why: String,
        scale: f64,
        error: String,
    },
}

impl SuiteError {
    /// True when the input (suite name, option, device) is at fault: the CLI exits with 2.
    pub fn is_bad_input(&self) -> bool {
        match self {
            SuiteError::UnknownSuite { .. }
            | SuiteError::BadOption { .. }
            | SuiteError::OptionValue { .. }
            | SuiteError::Argument(_)
            | SuiteError::Device { .. }
            | SuiteError::Job { .. }
            | SuiteError::System { .. }
            | SuiteError::NoFtl { .. } => true,
            SuiteError::Run { error, .. } => error.is_bad_input(),
            SuiteError::Real { error, .. } => error.is_bad_input(),
            SuiteError::SliceCut { .. } | SuiteError::Rescaled { .. } => true,
            SuiteError::Refused { .. }
            | SuiteError::StateCache { .. }
            | SuiteError::StateCacheBusy { .. } => false,
        }
    }
}

pub fn device_error(config: &DeviceConfig, error: ConfigError) -> SuiteError {
    SuiteError::Device {
        device: config.name.clone(),
        error: Box::new(error),
    }
}
