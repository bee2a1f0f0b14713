//! A suite's options as a table, read from their definitions (the clap arguments of
//! [`crate::SuiteOptionArgs`] and each suite's `augment_args`): `flashlab suite NAME --help`,
//! the reference page docs/suite-options.md and the Python package's `suite_options` are
//! made from it, so none of them can name an option, a default or a meaning the command
//! does not have.

use crate::args::{options_of, with_suite_options};
use crate::registry::Registry;
use crate::suite::SuiteKind;

/// Which suites read an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionScope {
    /// Every suite takes it (`--seed`, `--qd`, ...).
    Every,
    /// This suite alone reads it.
    Own,
    /// Several suites read it, this one among them.
    Shared,
}

/// One option of a suite, as its definition says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionRow {
    /// The long name, without `--`.
    pub long: String,
    /// The form of its value (`TIME`, `LIST`), or `None` for a flag.
    pub value: Option<String>,
    /// Its default as the command line spells it, if it has one.
    pub default: Option<String>,
    /// Its help text, without the list of suites that read it.
    pub help: String,
    pub scope: OptionScope,
}

/// The options `kind` reads, in the order `flashlab suite --help` lists them: those every
/// suite takes, then its own, then those it shares with other suites.
pub fn option_table(reg: &Registry, kind: SuiteKind) -> Vec<OptionRow> {
    let reads = options_of(reg, kind);
    let read_by = reg.suite_options();
    let cmd = with_suite_options(reg, clap::Command::new("suite"));
    let mut rows: Vec<OptionRow> = cmd
        .get_arguments()
        .filter_map(|arg| {
            let long = arg.get_long()?;
            if !reads.iter().any(|r| r == long) {
                return None;
            }
            let scope = match read_by.iter().find(|(o, _)| o == long) {
                None => OptionScope::Every,
                Some((_, suites)) if suites.len() > 1 => OptionScope::Shared,
                Some(_) => OptionScope::Own,
            };
            Some(OptionRow {
                long: long.to_string(),
                value: value_form(arg),
                default: default_text(arg),
                help: help_without_suites(
                    reg,
                    &arg.get_help().map(|h| h.to_string()).unwrap_or_default(),
                ),
                scope,
            })
        })
        .collect();
    let rank = |s: OptionScope| match s {
        OptionScope::Every => 0,
        OptionScope::Own => 1,
        OptionScope::Shared => 2,
    };
    rows.sort_by_key(|r| rank(r.scope));
    rows
}

/// `TIME`, `LIST`, `a|b` for a closed set of values, or `None` for a flag.
fn value_form(arg: &clap::Arg) -> Option<String> {
    if !arg.get_action().takes_values() {
        return None;
    }
    let values: Vec<String> = arg
        .get_possible_values()
        .iter()
        .map(|v| v.get_name().to_string())
        .collect();
    if !values.is_empty() {
        return Some(values.join("|"));
    }
    let name = arg
        .get_value_names()
        .and_then(|names| names.first().map(|n| n.to_string()))
        .unwrap_or_else(|| arg.get_id().as_str().to_uppercase());
    Some(name)
}

fn default_text(arg: &clap::Arg) -> Option<String> {
    let values: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    (!values.is_empty()).then(|| values.join(","))
}

/// An option's help without the suites it names first (`qos, randread-qd-sweep: queue
/// depths ...`): in one suite's table that list says nothing.
pub fn help_without_suites(reg: &Registry, help: &str) -> String {
    let help = help.trim();
    match help.split_once(": ") {
        Some((suites, rest))
            if !suites.is_empty() && suites.split(',').all(|s| reg.suite(s.trim()).is_ok()) =>
        {
            let mut rest = rest.to_string();
            if let Some(first) = rest.get(..1) {
                rest.replace_range(..1, &first.to_uppercase());
            }
            rest
        }
        _ => help.to_string(),
    }
}

/// The reference page of every suite's options (docs/suite-options.md), in Markdown: the
/// options every suite takes once, then each suite's own and shared ones.
pub fn option_reference(reg: &Registry) -> String {
    let mut out = String::from(
        "# Suite options\n\n\
         Generated from the suites' option definitions, as `flashlab suite NAME --help` \
         prints them; a test fails when this page and the definitions differ\n\
         (`FLASHLAB_UPDATE_DOCS=1 cargo test --workspace --locked --test suite option_reference` \
         rewrites it). What each suite measures is in [suites.md](suites.md).\n",
    );
    let Some(&first) = reg.suites.first() else {
        return out;
    };
    out.push_str("\n## Options every suite takes\n\n");
    let every: Vec<OptionRow> = option_table(reg, first)
        .into_iter()
        .filter(|r| r.scope == OptionScope::Every)
        .collect();
    push_table(&mut out, &every);
    for &kind in reg.suites {
        out.push_str(&format!("\n## `{}`\n\n{}\n", kind.name(), kind.summary()));
        if !kind.reads_runtime() {
            out.push_str("\nIt runs to a length of its own and refuses `--runtime`.\n");
        }
        let rows: Vec<OptionRow> = option_table(reg, kind)
            .into_iter()
            .filter(|r| r.scope != OptionScope::Every)
            .collect();
        if rows.is_empty() {
            out.push_str("\nNo options beyond those every suite takes.\n");
        } else {
            out.push('\n');
            push_table(&mut out, &rows);
        }
    }
    out
}

fn push_table(out: &mut String, rows: &[OptionRow]) {
    out.push_str("| Option | Default | What it sets |\n|---|---|---|\n");
    for r in rows {
        let option = match &r.value {
            Some(v) => format!("`--{} {}`", r.long, v),
            None => format!("`--{}`", r.long),
        };
        let default = r
            .default
            .as_deref()
            .map(|d| format!("`{d}`"))
            .unwrap_or_default();
        let own = if r.scope == OptionScope::Shared {
            " (shared)"
        } else {
            ""
        };
        out.push_str(&format!(
            "| {}{own} | {} | {} |\n",
            cell(&option),
            cell(&default),
            cell(&r.help.replace('\n', " "))
        ));
    }
}

/// A table cell: a `|` in the text would end it.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_keeps_its_bars() {
        assert_eq!(cell("a|b"), "a\\|b");
    }
}
