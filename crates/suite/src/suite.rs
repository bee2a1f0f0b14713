//! What a suite is: a name, a summary, what it runs on, the options it reads, its grids, and a
//! `run` over a [`Session`]. Every suite is a unit struct implementing [`Suite`], listed once
//! in [`crate::SUITES`]; the CLI, the real-storage check, the JSON report's options and the
//! renderings all read it from there.

use crate::grids::GridSpec;
use crate::session::Session;
use crate::{Chart, Measure, SteadyReport, SuiteError, SuiteOptions};

/// What a suite can run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Targets {
    /// fio jobs, purges and idle time only: a simulated drive, a system, or real storage
    /// through fio.
    Any,
    /// A simulated drive or system (the suite reads the device's counters); suites that read
    /// an FTL check for one when they start ([`Session::require_ftl`]).
    Simulated,
    /// A drive's description: the suite builds its drives (or systems of it) itself, or uses
    /// what only a single drive has (namespaces, power meter), so a system is refused.
    Description,
}

/// What a suite hands back for one device: its steady-state report (when it has one), its
/// results and the charts the report draws. The steps are the session's.
pub struct Outcome {
    pub steady: Option<SteadyReport>,
    pub results: Vec<Measure>,
    pub charts: Vec<Chart>,
}

/// A built-in suite.
pub trait Suite: Sync {
    /// The name `flashlab suite NAME` takes.
    fn name(&self) -> &'static str;
    /// One line on what it runs and measures.
    fn summary(&self) -> &'static str;
    /// What it runs on.
    fn targets(&self) -> Targets;
    /// The `flashlab suite` options it reads beyond those every suite takes (long names,
    /// without `--`); the CLI refuses any other suite's option.
    fn options(&self) -> &'static [&'static str] {
        &[]
    }
    /// Its own group of options in the JSON report: the group's key and value.
    fn options_json(&self, _o: &SuiteOptions) -> Option<(&'static str, serde_json::Value)> {
        None
    }
    /// Lines the HTML report's options paragraph adds for it.
    fn options_text(&self, _o: &SuiteOptions) -> Vec<String> {
        Vec::new()
    }
    /// The families of results laid out as grids, in order.
    fn grids(&self) -> &'static [GridSpec] {
        &[]
    }
    /// The presets it runs on when no device is named (none: the default drive).
    fn default_devices(&self) -> &'static [&'static str] {
        &[]
    }
    /// The result its steady-state rounds track, as the JSON report names it.
    fn tracked(&self) -> &'static str {
        "write_iops"
    }
    /// Run on the session's device (for [`Targets::Description`], on the drives it builds
    /// from [`Session::config`]).
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError>;
}

/// A suite as the report and the callers hold it.
pub type SuiteKind = &'static dyn Suite;

impl std::fmt::Debug for dyn Suite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Suites are the same when their names are: a name is listed once.
impl PartialEq for dyn Suite {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

/// The suite called `name`, or an error listing the valid names.
pub fn suite(name: &str) -> Result<SuiteKind, SuiteError> {
    crate::SUITES
        .iter()
        .copied()
        .find(|k| k.name() == name)
        .ok_or_else(|| SuiteError::UnknownSuite {
            name: name.to_string(),
            valid: suite_names(),
        })
}

/// The valid suite names, comma-separated.
pub fn suite_names() -> String {
    crate::SUITES
        .iter()
        .map(|k| k.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every option some suite reads, with the suites that read it, in registry order.
pub fn suite_options() -> Vec<(&'static str, Vec<&'static str>)> {
    let mut out: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    for k in crate::SUITES {
        for &o in k.options() {
            match out.iter_mut().find(|(name, _)| *name == o) {
                Some((_, suites)) => suites.push(k.name()),
                None => out.push((o, vec![k.name()])),
            }
        }
    }
    out
}
