//! Errors that suggest the fix: the nearest valid name to a mistyped device or suite ("did
//! you mean") and command-line errors in flashlab's own form (`flashlab: error: --OPTION VALUE:
//! why; expected FORM`).

use anyhow::anyhow;
use clap::error::{ContextKind, ContextValue, ErrorKind};

fn did_you_mean(name: &str, valid: &[&str]) -> String {
    flashlab_engine::input::did_you_mean(name, valid.iter().copied())
}

/// An unknown `--device` with the nearest preset and both kinds of preset listed: drives,
/// and the storage systems `run`, `suite` and `serve` take. Other errors pass unchanged.
pub fn device_error(e: flashlab_device::ConfigError) -> anyhow::Error {
    match &e {
        flashlab_device::ConfigError::UnknownDevice { name, .. } => {
            anyhow!(flashlab_system::unknown_device_message(name))
        }
        _ => e.into(),
    }
}

/// An unknown suite name with the nearest suite.
pub fn suite_error(name: &str, e: flashlab_suite::SuiteError) -> anyhow::Error {
    if !matches!(e, flashlab_suite::SuiteError::UnknownSuite { .. }) {
        return e.into();
    }
    let names: Vec<&str> = flashlab_suite::SUITES.iter().map(|k| k.name()).collect();
    anyhow!(
        "unknown suite '{name}'{}; valid suites: {}",
        did_you_mean(name, &names),
        names.join(", ")
    )
}

/// A command-line error of clap's in flashlab's form: one line naming the option, the value
/// and what it takes (the option's help), for exit code 2.
pub fn clap_error(e: &clap::Error, cmd: &clap::Command) -> String {
    let text = |k| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => Some(v.join(", ")),
        _ => None,
    };
    let arg = text(ContextKind::InvalidArg);
    let value = text(ContextKind::InvalidValue);
    if let (ErrorKind::UnknownArgument, Some(given)) = (e.kind(), arg.as_ref()) {
        // clap's tip (`a similar argument exists`) in the form every other suggestion takes.
        let hint = match text(ContextKind::SuggestedArg) {
            Some(near) => format!(" (did you mean {near}?)"),
            None => String::new(),
        };
        return format!("unknown option '{given}'{hint} (`--help` lists the options)");
    }
    match (e.kind(), arg, value) {
        (ErrorKind::ValueValidation | ErrorKind::InvalidValue, Some(arg), Some(value)) => {
            // `--depths <DEPTHS>`: the option's name is its first word.
            let option = arg.split_whitespace().next().unwrap_or(&arg).to_string();
            let why = match e.kind() {
                ErrorKind::InvalidValue => "not one of its values".to_string(),
                _ => parse_reason(e),
            };
            let expected = match e.get(ContextKind::ValidValue) {
                Some(ContextValue::Strings(values)) => {
                    let names: Vec<&str> = values.iter().map(String::as_str).collect();
                    format!(
                        "one of {}{}",
                        names.join(", "),
                        did_you_mean(&value, &names)
                    )
                }
                _ => option_help(cmd, &option).unwrap_or_default(),
            };
            let tail = if expected.is_empty() {
                String::new()
            } else {
                format!("; expected {expected}")
            };
            format!("{option} '{value}': {why}{tail}")
        }
        _ => {
            // clap's own words, on one line, without its "error: " and "--help" trailer.
            let rendered = e.render().to_string();
            let lines: Vec<&str> = rendered
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
                .collect();
            // A line ending in `:` introduces the next one.
            let mut joined = String::new();
            for l in lines {
                if !joined.is_empty() {
                    joined.push_str(if joined.ends_with(':') { " " } else { "; " });
                }
                joined.push_str(l);
            }
            let joined = joined
                .strip_prefix("error: ")
                .unwrap_or(&joined)
                .to_string();
            format!("{joined} (`--help` lists the options)")
        }
    }
}

/// Why a value did not parse, in words: Rust's number-parse messages are terse.
fn parse_reason(e: &clap::Error) -> String {
    let source = std::error::Error::source(e)
        .map(|s| s.to_string())
        .unwrap_or_default();
    match source.as_str() {
        "invalid digit found in string" => "not a whole number".into(),
        "cannot parse integer from empty string" => "empty".into(),
        "number too large to fit in target type" => "too large".into(),
        "invalid float literal" => "not a number".into(),
        "" => "invalid".into(),
        other => other.to_string(),
    }
}

/// The help of `option` (`--depths`) in the subcommand the command line names, else in any:
/// its first sentence, lower-cased, without a `suite:` prefix of the suites that read it.
fn option_help(cmd: &clap::Command, option: &str) -> Option<String> {
    let long = option.strip_prefix("--")?;
    let given: Vec<String> = std::env::args().skip(1).collect();
    let sub = given
        .iter()
        .find_map(|a| cmd.get_subcommands().find(|s| s.get_name() == a));
    let mut args = sub
        .into_iter()
        .chain(cmd.get_subcommands())
        .flat_map(|s| s.get_arguments());
    let found = args
        .find(|a| a.get_long() == Some(long))?
        .get_help()?
        .to_string();
    let first = found
        .split(". ")
        .next()
        .unwrap_or(&found)
        .trim_end_matches('.');
    // `qos: queue depths`: the suites that read it are no part of the form.
    let is_suite = |s: &str| flashlab_suite::suite(s.trim()).is_ok();
    let first = match first.split_once(": ") {
        Some((suites, rest)) if suites.split(',').all(is_suite) => rest,
        _ => first,
    };
    let mut c = first.chars();
    Some(match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    })
}

#[cfg(test)]
mod tests {
    use flashlab_engine::input::nearest;

    #[test]
    fn nearest_names() {
        let valid = ["four-corners", "qos", "samsung-pm981a-256gb"];
        assert_eq!(nearest("four-corner", valid), Some("four-corners"));
        assert_eq!(
            nearest("samsung-pm981a-265gb", valid),
            Some("samsung-pm981a-256gb")
        );
        assert_eq!(
            nearest("samsung-pm981", valid),
            Some("samsung-pm981a-256gb")
        );
        assert_eq!(nearest("zzzzzzzz", valid), None);
        assert_eq!(nearest(&"x".repeat(10_000), valid), None);
    }
}
