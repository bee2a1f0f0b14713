//! A device brought to a state before a run: what a sweep plan's `[precondition]` needs of
//! whoever preconditions. The suite crate's `precondition` suite is one
//! (`flashlab_suite::SuitePreconditioner`, with its precondition cache); the CLI and the
//! Python package hand it to a sweep, so the sweep crate needs no suite crate.

use flashlab_engine::SimTime;

use crate::Device;

/// Preconditions devices built fresh, with options written as `(name, value)` text.
pub trait Preconditioner: Sync {
    /// Checks `options`: an error names the option at fault and what is valid.
    fn check(&self, options: &[(String, String)]) -> Result<(), String>;

    /// Preconditions `device`, just built by [`Device::build`] from `name`, `overrides`
    /// and `seed`, with `options` (checked by [`Preconditioner::check`]).
    fn precondition(
        &self,
        device: &mut Device,
        name: &str,
        overrides: &[(String, String)],
        seed: u64,
        options: &[(String, String)],
    ) -> Result<Preconditioned, PreconditionError>;
}

/// A device preconditioned.
#[derive(Debug, Clone, PartialEq)]
pub struct Preconditioned {
    /// The device time the preconditioning ended at: where the next run starts.
    pub end_ns: SimTime,
    /// What it did, for the run's record (a JSON object).
    pub record: serde_json::Value,
}

/// Why preconditioning failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreconditionError {
    /// The input was wrong (exit 2) rather than the run failing (exit 1).
    pub bad_input: bool,
    pub message: String,
}

impl std::fmt::Display for PreconditionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PreconditionError {}
