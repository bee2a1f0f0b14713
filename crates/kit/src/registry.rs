//! The suites a build knows, as the kit reads them: `flashlab-suite` holds the one
//! [`Registry`] and hands it to the kit's functions that look across suites (the options
//! every suite is offered and the check of which reads what, the suites that run on real
//! storage, the options every JSON report records).

use serde_json::{Map, Value};

use crate::error::SuiteError;
use crate::measure::LocalAxis;
use crate::options::SuiteOptions;
use crate::suite::{RunsOn, SuiteKind};

/// Every suite, in the order the CLI lists them, and what every report records of them.
pub struct Registry {
    pub suites: &'static [SuiteKind],
    /// The `"options"` object of every JSON report, from the kit's (`shared`: those every
    /// suite takes and several share, in their order): the registry places among them the
    /// suites' own options every report records (their defaults for the other suites).
    pub report_options: fn(o: &SuiteOptions, shared: Map<String, Value>) -> Map<String, Value>,
}

impl Registry {
    /// The suite called `name`, or an error listing the valid names.
    pub fn suite(&self, name: &str) -> Result<SuiteKind, SuiteError> {
        self.suites
            .iter()
            .copied()
            .find(|k| k.name() == name)
            .ok_or_else(|| SuiteError::UnknownSuite {
                name: name.to_string(),
                valid: self.names(),
            })
    }

    /// The valid suite names, comma-separated.
    pub fn names(&self) -> String {
        self.suites
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The names of the suites that run on real storage ([`RunsOn::Any`]), as a sentence
    /// lists them (`a, b or c`).
    pub fn on_real_storage(&self) -> String {
        let names: Vec<&str> = self
            .suites
            .iter()
            .filter(|k| k.targets() == RunsOn::Any)
            .map(|k| k.name())
            .collect();
        match names.split_last() {
            None => "none".to_string(),
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        }
    }

    /// The axis of some suite's own called `name` ([`crate::Suite::axes`]).
    pub fn local_axis(&self, name: &str) -> Option<&'static LocalAxis> {
        self.suites
            .iter()
            .flat_map(|k| k.axes())
            .copied()
            .find(|a| a.name == name)
    }

    /// Every option some suite reads, with the suites that read it, in registry order.
    pub fn suite_options(&self) -> Vec<(String, Vec<&'static str>)> {
        let mut out: Vec<(String, Vec<&'static str>)> = Vec::new();
        for &k in self.suites {
            let shared = k.options().iter().map(|o| o.to_string());
            for o in own_options(k).into_iter().chain(shared) {
                match out.iter_mut().find(|(name, _)| *name == o) {
                    Some((_, suites)) => suites.push(k.name()),
                    None => out.push((o, vec![k.name()])),
                }
            }
        }
        out
    }
}

/// The long names of the options a suite adds itself ([`crate::Suite::augment_args`]).
pub fn own_options(k: SuiteKind) -> Vec<String> {
    k.augment_args(clap::Command::new(k.name()))
        .get_arguments()
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect()
}
