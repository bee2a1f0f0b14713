//! What a session records of a device's run: each step, the steady-state rounds, and where
//! the suite is for a progress display.

use flashlab_device::HealthLog;

use crate::measure::Measure;
use crate::steady::SteadyVerdict;

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
    /// The fio JSON of the job (with the device's counters in `"flashlab"`), as `--outdir`
    /// writes it; the program reads the typed fields instead.
    pub fio_json: Option<String>,
    /// The drive's health log at the step's end (a job or driven step on a simulated drive;
    /// a system's are its drives', in its counters).
    pub health: Option<HealthLog>,
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
