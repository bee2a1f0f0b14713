//! The registry the kit reads ([`REGISTRY`]: the suites and the options of theirs every
//! JSON report records), and the kit's functions that look across suites, bound to it.

use serde_json::{Map, Value};

use flashlab_kit::{
    LocalAxis, On, Ran, Registry, SuiteError, SuiteKind, SuiteOptions, SuiteProgress, SuiteReport,
};

use crate::suites::basic::QosOptions;
use crate::suites::client::{DesktopOptions, TransferSweepOptions};
use crate::suites::SUITES;

/// The registry the kit reads: [`SUITES`], and the options of theirs every JSON report
/// records.
pub static REGISTRY: Registry = Registry {
    suites: SUITES,
    report_options,
};

/// The `"options"` of every JSON report: qos's and the client benchmarks' own options beside
/// those every suite takes (their defaults for the other suites), where readers of the JSON
/// find them.
fn report_options(o: &SuiteOptions, shared: Map<String, Value>) -> Map<String, Value> {
    let qos = o.own::<QosOptions>();
    let sweep = o.own::<TransferSweepOptions>();
    let desktop = o.own::<DesktopOptions>();
    let after = |key: &str| -> Vec<(&'static str, Value)> {
        match key {
            "jobs" => vec![
                ("rwmixread", qos.rwmixread.into()),
                ("depths", qos.depths.clone().into()),
            ],
            "runtime_ns" => vec![
                ("min_bs", sweep.min_bs_bytes.into()),
                ("max_bs", sweep.max_bs_bytes.into()),
            ],
            "size" => vec![
                ("runs", desktop.runs.into()),
                ("interval_ns", desktop.interval_ns.into()),
            ],
            _ => Vec::new(),
        }
    };
    let mut out = Map::new();
    for (key, value) in shared {
        let then = after(&key);
        out.insert(key, value);
        out.extend(then.into_iter().map(|(k, v)| (k.to_string(), v)));
    }
    out
}

/// Run `kind` as `on` says ([`flashlab_kit::run`] with this registry).
pub fn run(
    kind: SuiteKind,
    on: On<'_>,
    options: &SuiteOptions,
    progress: &(dyn Fn(usize, &SuiteProgress) + Sync),
) -> Result<Ran, SuiteError> {
    flashlab_kit::run(&REGISTRY, kind, on, options, progress)
}

/// The suite called `name`, or an error listing the valid names.
pub fn suite(name: &str) -> Result<SuiteKind, SuiteError> {
    REGISTRY.suite(name)
}

/// The valid suite names, comma-separated.
pub fn suite_names() -> String {
    REGISTRY.names()
}

/// The axis of some suite's own called `name` ([`Suite::axes`]).
pub fn local_axis(name: &str) -> Option<&'static LocalAxis> {
    REGISTRY.local_axis(name)
}

/// The long names of the options a suite adds itself ([`Suite::augment_args`]).
pub fn own_options(k: SuiteKind) -> Vec<String> {
    flashlab_kit::registry::own_options(k)
}

/// Every option some suite reads, with the suites that read it, in registry order.
pub fn suite_options() -> Vec<(String, Vec<&'static str>)> {
    REGISTRY.suite_options()
}

/// `cmd` with every suite's options ([`flashlab_kit::args::with_suite_options`]).
pub fn with_suite_options(cmd: clap::Command) -> clap::Command {
    flashlab_kit::args::with_suite_options(&REGISTRY, cmd)
}

/// Refuse options given that `kind` does not read
/// ([`flashlab_kit::args::check_options_given`]).
pub fn check_options_given(
    kind: SuiteKind,
    given: impl Fn(&str) -> bool,
) -> Result<(), SuiteError> {
    flashlab_kit::args::check_options_given(&REGISTRY, kind, given)
}

/// The long names of the options `kind` reads ([`flashlab_kit::args::options_of`]).
pub fn options_of(kind: SuiteKind) -> Vec<String> {
    flashlab_kit::args::options_of(&REGISTRY, kind)
}

/// The suite `name` and its options from `(option, value)` pairs
/// ([`flashlab_kit::args::options_from_pairs`]).
pub fn options_from_pairs(
    name: &str,
    pairs: &[(String, String)],
) -> Result<(SuiteKind, SuiteOptions), SuiteError> {
    flashlab_kit::args::options_from_pairs(&REGISTRY, name, pairs)
}

/// The report as JSON ([`flashlab_kit::output::render_json`]).
pub fn render_json(report: &SuiteReport) -> String {
    flashlab_kit::output::render_json(report, &REGISTRY)
}

/// The options `kind` reads, from their definitions ([`flashlab_kit::option_table`]).
pub fn option_table(kind: SuiteKind) -> Vec<flashlab_kit::OptionRow> {
    flashlab_kit::option_table(&REGISTRY, kind)
}

/// docs/suite-options.md, from the options' definitions ([`flashlab_kit::option_reference`]).
pub fn option_reference() -> String {
    flashlab_kit::option_reference(&REGISTRY)
}

/// An option's help without the suites it names first
/// ([`flashlab_kit::option_table::help_without_suites`]).
pub fn help_without_suites(help: &str) -> String {
    flashlab_kit::option_table::help_without_suites(&REGISTRY, help)
}
