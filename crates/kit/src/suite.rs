//! What a suite is: a name, a summary, what it runs on, its own command-line options (a
//! `clap::Args` type in its module) and the shared ones it reads, its grids, and a `run` over
//! a [`Session`]. Every suite is a unit struct implementing [`Suite`], listed once in the
//! suites' [`Registry`](crate::Registry); the CLI, the real-storage check, the JSON report's
//! options and the renderings all read it from there.

use crate::error::SuiteError;
use crate::grids::GridSpec;
use crate::measure::LocalAxis;
use crate::options::SuiteOptions;
use crate::record::{SteadyReport, StepRecord};
use crate::session::Session;
use crate::{Chart, Measure};
use flashlab_report::html::Figure;

/// What a suite can run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunsOn {
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

/// Figures a suite draws from its whole report, beside those every report has, and the ids of
/// its own charts they stand in for on the page (the JSON keeps those as they are).
#[derive(Default)]
pub struct SuiteFigures {
    pub figures: Vec<Figure>,
    pub replaces: Vec<&'static str>,
}

/// A built-in suite.
pub trait Suite: Sync {
    /// The name `flashlab suite NAME` takes.
    fn name(&self) -> &'static str;
    /// One line on what it runs and measures.
    fn summary(&self) -> &'static str;
    /// [`Suite::summary`] as a report of a run with `o` says it, where an option changes
    /// what it says (desktop's test file size).
    fn report_summary(&self, _o: &SuiteOptions) -> String {
        self.summary().to_string()
    }
    /// What it runs on.
    fn targets(&self) -> RunsOn;
    /// The options several suites share that it reads beyond those every suite takes (long
    /// names, without `--`); its own are those [`Suite::augment_args`] adds. The CLI refuses
    /// an option to a suite that neither lists nor adds it.
    fn options(&self) -> &'static [&'static str] {
        &[]
    }
    /// Adds its own options to the `flashlab suite` command: those of a `clap::Args` type in
    /// its module, read back by [`Suite::apply_args`]. Their long names must be unique among
    /// all suites' options.
    fn augment_args(&self, cmd: clap::Command) -> clap::Command {
        cmd
    }
    /// Sets its own options in `o` from the parsed `flashlab suite` command line (every
    /// suite's, so unset ones take their defaults): the value of its own
    /// [`crate::OwnOptions`] type, which its run reads back with [`SuiteOptions::own`]. The
    /// options every suite takes and those several share are already set in `o`. An error is
    /// bad input.
    fn apply_args(&self, _m: &clap::ArgMatches, _o: &mut SuiteOptions) -> Result<(), SuiteError> {
        Ok(())
    }
    /// The devices its own options name instead of `--device`, and the option that names them
    /// (raid-scaling's `--member`); `None`: `--device` or [`Suite::default_devices`].
    fn devices(&self, _o: &SuiteOptions) -> Option<(&'static str, Vec<String>)> {
        None
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
    /// The axes of its own its results lie on ([`crate::Coord::Local`]); the shared ones are
    /// [`crate::Coord`]'s other variants.
    fn axes(&self) -> &'static [&'static LocalAxis] {
        &[]
    }
    /// Figures of its own drawn from the whole report (four-corners' and desktop's grouped
    /// bars, drives side by side).
    fn figures(&self, _report: &SuiteReport) -> SuiteFigures {
        SuiteFigures::default()
    }
    /// The presets it runs on when no device is named (none: the default drive).
    fn default_devices(&self) -> &'static [&'static str] {
        &[]
    }
    /// Whether it reads `--runtime` (every suite takes it). A suite that runs to a length of
    /// its own (intervals, rounds, a share of the capacity, a time of its own options)
    /// says no, and the CLI refuses `--runtime` for it rather than ignore it.
    fn reads_runtime(&self) -> bool {
        true
    }
    /// Whether it sizes its drives' slice itself on `sim.scale = "auto"` (from an option of
    /// its own, or for the systems it builds). The others run a drive on the smallest slice
    /// that keeps their answer ([`crate::rescale::answer_keeping_scale`]).
    fn sizes_its_slice(&self) -> bool {
        false
    }
    /// What a capacity slice does to its figures that no slice size it runs on keeps, as
    /// measured once (the default drive whole and on its slice of 256 blocks per plane,
    /// docs/benchmarks-suites.md): said before a run on a slice, and kept in the device's
    /// scale note. `None` where the slice keeps its figures within a few per cent.
    fn slice_caution(&self) -> Option<&'static str> {
        None
    }
    /// The result its steady-state rounds track, as the JSON report names it.
    fn tracked(&self) -> &'static str {
        "write_iops"
    }
    /// Run on the session's device (for [`RunsOn::Description`], on the drives it builds
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

/// A suite's own options type, read from the parsed command line its
/// [`Suite::augment_args`] added to.
pub fn parse_args<T: clap::FromArgMatches>(m: &clap::ArgMatches) -> Result<T, SuiteError> {
    T::from_arg_matches(m).map_err(|e| SuiteError::OptionValue {
        option: "flashlab suite",
        value: String::new(),
        expected: e.to_string(),
    })
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
