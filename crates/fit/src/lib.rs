//! `flashlab fit`: from measurements of a drive to a drive description.
//!
//! [`plan`] writes the measurement plan (plain fio job files and a manifest), [`simrun`]
//! runs it on a simulated drive through the path `flashlab run` takes and writes what fio
//! would, [`measure`] reads a plan directory's outputs (fio's JSON and logs, from real fio
//! or the simulator alike) into figures, [`fit`] infers the drive's parameters from them
//! (closed forms first, then the simulator as forward model), [`preset`] writes the
//! description with the provenance of every key, and [`report`] shows measured against
//! fitted with each job's error and the error on jobs the fit did not use.

pub mod files;
pub mod fit;
pub mod measure;
pub mod params;
pub mod plan;
pub mod preset;
pub mod published;
pub mod report;
pub mod simrun;

pub use fit::{fit, FitOptions, Fitted};
pub use measure::{read_outputs, Figures};
pub use params::Params;
pub use plan::{Plan, PlanJob};

/// Why a plan, a run or a fit failed: bad input (exit 2) names the file or option and what
/// was expected; anything else is a failure of the work itself.
#[derive(Debug, Clone, PartialEq)]
pub struct FitError {
    pub bad_input: bool,
    pub message: String,
}

impl FitError {
    /// Bad input at `place` (a file, an option).
    pub fn bad(place: impl std::fmt::Display, message: impl std::fmt::Display) -> Self {
        Self {
            bad_input: true,
            message: format!("{place}: {message}"),
        }
    }

    /// The work failed (a simulation, a write).
    pub fn failed(message: impl std::fmt::Display) -> Self {
        Self {
            bad_input: false,
            message: message.to_string(),
        }
    }
}

impl std::fmt::Display for FitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FitError {}
