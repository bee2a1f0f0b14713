//! The suite options as `flashlab suite NAME --option value` takes them, defined once: the
//! options every suite takes and those several share ([`SuiteOptionArgs`], a `clap::Args`
//! the CLI flattens into its command), each suite's own (`Suite::augment_args`), and the
//! check that refuses an option to a suite that does not read it. [`options_from_pairs`]
//! builds a suite's options from `(name, value)` pairs through the same definitions, for
//! callers without a command line (the Python package, sweep plans): the same names, the
//! same validation, the same messages.

use clap::parser::ValueSource;
use clap::{ArgAction, Args, FromArgMatches};

use crate::client_options::{ClientOptions, DesktopProfile};
use crate::error::SuiteError;
use crate::lengths::{parse_size, parse_time, RoundLength};
use crate::options::{PreconditionKind, PreconditionOptions, SuiteOptions};
use crate::registry::Registry;
use crate::suite::SuiteKind;

/// The options of `flashlab suite` that become [`SuiteOptions`]: those every suite takes,
/// then those several suites read. Each suite's own come from its `augment_args`.
#[derive(clap::Args, Debug)]
pub struct SuiteOptionArgs {
    /// Seed of every random choice of the run (offsets, data); the same seed gives the same
    /// output.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Queue depth of the measured jobs and preconditioning rounds (default 32; transfer-sweep
    /// 4; pts-latency and desktop set their own).
    #[arg(long)]
    qd: Option<u32>,
    /// Jobs (fio numjobs) of the measured jobs and preconditioning rounds (default 1).
    #[arg(long)]
    jobs: Option<u32>,
    /// Length of a random-write preconditioning round: a share of the capacity (25%), a
    /// size (4GiB) or a simulated time (60s).
    #[arg(long, default_value = "25%")]
    round: String,
    /// Rounds before giving up on steady state.
    #[arg(long, default_value_t = 25)]
    max_rounds: usize,
    /// Share of each random-write round and of each wsat interval (its end) written through
    /// the timing model and measured, a whole percentage (20%); the rest runs without timing
    /// where the drive allows, as the fills do. 100% times every round whole, as
    /// --timed-precondition does.
    #[arg(long, default_value = "20%", value_name = "PCT")]
    round_timed: String,
    /// Data content of every write: the share a compressor can remove, percent (0-100; fio's
    /// buffer_compress_percentage). Default: random data, as fio writes. Only a compressing
    /// drive (controller.compression_granule) runs differently.
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=100))]
    compressible: Option<u8>,
    /// Measured time of each time-based step (e.g. 5s); default: the step's own.
    #[arg(long)]
    runtime: Option<String>,
    /// Run every preconditioning write through the timing model: the sequential fills and
    /// the random-write rounds whole. By default a simulated drive whose state after writes
    /// does not depend on timing takes the fills and all but each round's measured end
    /// (--round-timed) at the speed of the FTL's mapping, without it
    /// (docs/explain-preconditioning.md: what the two paths give). Measured steps are always
    /// timed.
    #[arg(long)]
    timed_precondition: bool,
    #[command(flatten)]
    tests: SuiteTestArgs,
    #[command(flatten)]
    client: ClientArgs,
}

/// Options several suites share.
#[derive(clap::Args, Debug)]
struct SuiteTestArgs {
    /// wsat, sustained-write: one measured interval: a share of the capacity (4% = 1/25), a
    /// size (8GiB) or a simulated time (60s).
    #[arg(long, default_value = "4%")]
    interval: String,
    /// write-pressure: queue depth of the 4 KiB random reader; noisy-neighbor: quiet readers
    /// run at depths 1 to this.
    #[arg(long, default_value_t = 4)]
    read_qd: u32,
    /// app-profiles, write-pressure, noisy-neighbor, oltp: `pts` (purge, 2x sequential fill, random
    /// rounds to steady state) or `showdown` (purge, 64 KiB sequential surface fill,
    /// --seq-time of 64 KiB sequential writes, --random-time of 4 KiB random writes over
    /// --span).
    #[arg(long, default_value = "pts")]
    precondition: String,
    /// app-profiles, write-pressure, oltp (--precondition showdown): the tests' partition, the first
    /// PCT% of the LBAs; the rest keeps the surface fill's data; noisy-neighbor: 100 only (its
    /// namespaces divide the drive).
    #[arg(long, default_value = "100", value_name = "PCT")]
    span: String,
    /// --precondition showdown: simulated time of 64 KiB sequential writes after the surface
    /// fill (0: none); on a slice scaled with it (docs/scale.md).
    #[arg(long, default_value = "1h", value_name = "TIME")]
    seq_time: String,
    /// --precondition showdown: simulated time of 4 KiB random writes over --span.
    #[arg(long, default_value = "1h", value_name = "TIME")]
    random_time: String,
}

/// Options the client benchmarks share with cache-passes and raid-scaling.
#[derive(clap::Args, Debug)]
struct ClientArgs {
    /// transfer-sweep: test region (default 256MiB); desktop, compression-sweep, cache-passes:
    /// test file (default 1GiB).
    #[arg(long)]
    size: Option<String>,
    /// desktop, cache-passes: CrystalDiskMark test set, default or nvme.
    #[arg(long, default_value = "default")]
    profile: String,
    /// transfer-sweep, desktop, compression-sweep, raid-scaling: drive state first, fresh
    /// (purged) or full (purged and filled); raid-scaling also takes both.
    #[arg(long, default_value = "fresh")]
    state: String,
}

impl SuiteOptionArgs {
    /// The options these arguments give, before any suite's own are applied
    /// ([`Suite::apply_args`](crate::Suite::apply_args)); an error is bad input.
    pub fn options(&self) -> Result<SuiteOptions, SuiteError> {
        let round = RoundLength::parse(&self.round)?;
        let round_timed_percent = parse_whole_percent("--round-timed", &self.round_timed)?;
        // Only a time above zero is valid: name --runtime and say so, not --round's choices.
        let runtime_ns = match &self.runtime {
            None => None,
            Some(text) => match parse_time("--runtime", text) {
                Ok(ns) if ns > 0 => Some(ns),
                _ => {
                    return Err(SuiteError::OptionValue {
                        option: "--runtime",
                        value: format!("'{text}'"),
                        expected: "expected a time above 0 such as 500ms, 10s, 10 (seconds, as fio's runtime=) or 2min"
                            .into(),
                    })
                }
            },
        };
        let t = &self.tests;
        let c = &self.client;
        Ok(SuiteOptions {
            seed: self.seed,
            round,
            max_rounds: self.max_rounds,
            round_timed_percent,
            qd: self.qd,
            jobs: self.jobs,
            runtime_ns,
            client: ClientOptions {
                size_bytes: c
                    .size
                    .as_deref()
                    .map(|s| parse_size("--size", s))
                    .transpose()?,
                profile: DesktopProfile::from_name(&c.profile)?,
                states: ClientOptions::parse_states(&c.state)?,
            },
            compressible_percent: self.compressible,
            timed_precondition: self.timed_precondition,
            interval: RoundLength::parse_for("--interval", &t.interval)?,
            read_qd: t.read_qd,
            precondition: PreconditionOptions {
                kind: PreconditionKind::parse(&t.precondition)?,
                span_percent: PreconditionOptions::parse_span(&t.span)?,
                seq_ns: parse_time("--seq-time", &t.seq_time)?,
                random_ns: parse_time("--random-time", &t.random_time)?,
            },
            ..SuiteOptions::default()
        })
    }
}

/// A whole percentage from 1 to 100, with or without its `%` (`20%`, `20`).
fn parse_whole_percent(option: &'static str, text: &str) -> Result<u8, SuiteError> {
    let digits = text.trim().trim_end_matches('%').trim();
    match digits.parse::<u8>() {
        Ok(p) if (1..=100).contains(&p) => Ok(p),
        _ => Err(SuiteError::OptionValue {
            option,
            value: format!("'{text}'"),
            expected: "expected a whole percentage from 1 to 100, such as 20%".into(),
        }),
    }
}

/// `cmd` with every suite's options: those every suite takes and those several share
/// ([`SuiteOptionArgs`]) and each suite's own.
pub fn with_suite_options(reg: &Registry, cmd: clap::Command) -> clap::Command {
    let mut cmd = SuiteOptionArgs::augment_args(cmd);
    for &k in reg.suites {
        cmd = k.augment_args(cmd);
    }
    cmd
}

/// Refuse options given that `kind` does not read (they would be ignored without a word):
/// `--runtime` to a suite that runs to a length of its own, and an option some suite adds
/// or lists among those it reads ([`Registry::suite_options`]) to the other suites. `given`
/// says whether the option of that long name was given.
pub fn check_options_given(
    reg: &Registry,
    kind: SuiteKind,
    given: impl Fn(&str) -> bool,
) -> Result<(), SuiteError> {
    let suite = kind.name();
    if !kind.reads_runtime() && given("runtime") {
        return Err(SuiteError::Argument(format!(
            "--runtime does not apply to suite {suite}: it runs to its own length (see \
             `flashlab suite --help`, \"{suite} options\", and docs/suites.md)"
        )));
    }
    for (option, suites) in reg.suite_options() {
        if given(&option) && !suites.contains(&suite) {
            return Err(SuiteError::Argument(format!(
                "--{option} does not apply to suite {suite}: it is for {}",
                suites.join(", ")
            )));
        }
    }
    Ok(())
}

/// The long names of the options `kind` reads: those every suite takes, then its own and the
/// shared ones it lists.
pub fn options_of(reg: &Registry, kind: SuiteKind) -> Vec<String> {
    let all = with_suite_options(reg, clap::Command::new("suite"));
    let read_by: Vec<(String, Vec<&'static str>)> = reg.suite_options();
    all.get_arguments()
        .filter_map(|a| a.get_long())
        .filter(|long| {
            if *long == "runtime" && !kind.reads_runtime() {
                return false;
            }
            match read_by.iter().find(|(o, _)| o == long) {
                Some((_, suites)) => suites.contains(&kind.name()),
                None => true,
            }
        })
        .map(str::to_string)
        .collect()
}

/// The suite `name` and its options from `(option, value)` pairs, as `flashlab suite NAME
/// --option value ...` builds them: an option is its long name (`max-rounds`; a leading `--`
/// and `_` for `-` are accepted), a value its text (`"25%"`, `"1,8,32"`); a flag takes
/// `true` or `false`. An unknown option, one the suite does not read, or a value that does
/// not parse is an error naming the option and what is valid. The state cache and the
/// thread count are left to the caller.
pub fn options_from_pairs(
    reg: &Registry,
    name: &str,
    pairs: &[(String, String)],
) -> Result<(SuiteKind, SuiteOptions), SuiteError> {
    let kind = reg.suite(name)?;
    let cmd = with_suite_options(reg, clap::Command::new("suite").no_binary_name(true));
    let valid = || options_of(reg, kind).join(", ");
    let mut argv: Vec<String> = Vec::with_capacity(pairs.len());
    for (option, value) in pairs {
        let long = option.trim_start_matches("--").replace('_', "-");
        let Some(arg) = cmd
            .get_arguments()
            .find(|a| a.get_long() == Some(long.as_str()))
        else {
            let takes = options_of(reg, kind);
            return Err(SuiteError::Argument(format!(
                "unknown option '{}' for suite {}{}; it takes {}",
                flashlab_engine::input::echo(option),
                kind.name(),
                flashlab_engine::input::did_you_mean(&long, takes.iter().map(String::as_str)),
                valid()
            )));
        };
        if argv.iter().any(|a| {
            a.strip_prefix("--")
                .and_then(|a| a.split('=').next())
                .is_some_and(|a| a == long)
        }) {
            return Err(SuiteError::Argument(format!("--{long} is given twice")));
        }
        if matches!(arg.get_action(), ArgAction::SetTrue) {
            match value.trim() {
                "true" => argv.push(format!("--{long}")),
                "false" => {}
                other => {
                    return Err(SuiteError::Argument(format!(
                        "--{long} '{}': a flag; expected true or false",
                        flashlab_engine::input::echo(other)
                    )))
                }
            }
        } else {
            argv.push(format!("--{long}={value}"));
        }
    }
    let matches = cmd
        .clone()
        .try_get_matches_from(&argv)
        .map_err(|e| SuiteError::Argument(clap_message(reg, &e, &cmd)))?;
    check_options_given(reg, kind, |long| {
        cmd.get_arguments()
            .find(|a| a.get_long() == Some(long))
            .is_some_and(|a| {
                matches.value_source(a.get_id().as_str()) == Some(ValueSource::CommandLine)
            })
    })?;
    let args = SuiteOptionArgs::from_arg_matches(&matches)
        .map_err(|e| SuiteError::Argument(clap_message(reg, &e, &cmd)))?;
    let mut options = args.options()?;
    for &k in reg.suites {
        k.apply_args(&matches, &mut options)?;
    }
    options.validate()?;
    Ok((kind, options))
}

/// `text` with its first letter lower-cased, to follow "expected" mid-sentence ("rounds
/// before ..."), unless the first word is an abbreviation ("IOPS").
fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(first), Some(second)) if !second.is_uppercase() => first
            .to_lowercase()
            .chain(text[first.len_utf8()..].chars())
            .collect(),
        _ => text.to_string(),
    }
}

/// A clap error of [`options_from_pairs`] in one line: the option, the value, why, and the
/// option's help as the form it takes.
fn clap_message(reg: &Registry, e: &clap::Error, cmd: &clap::Command) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let text = |k| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => Some(v.join(", ")),
        _ => None,
    };
    if let (ErrorKind::ValueValidation | ErrorKind::InvalidValue, Some(arg), Some(value)) = (
        e.kind(),
        text(ContextKind::InvalidArg),
        text(ContextKind::InvalidValue),
    ) {
        // `--depths <DEPTHS>`: the option is the first word.
        let option = arg.split_whitespace().next().unwrap_or(&arg).to_string();
        let why = std::error::Error::source(e)
            .map(|s| match s.to_string().as_str() {
                "invalid digit found in string" => "not a whole number".to_string(),
                "cannot parse integer from empty string" => "empty".to_string(),
                "invalid float literal" => "not a number".to_string(),
                other => other.to_string(),
            })
            .unwrap_or_else(|| "not one of its values".to_string());
        // The help's first sentence, without the suites that read it (`qos, randread-qd-sweep:
        // queue depths, ...`): those are no part of the form.
        let help = option
            .strip_prefix("--")
            .and_then(|long| cmd.get_arguments().find(|a| a.get_long() == Some(long)))
            .and_then(|a| a.get_help())
            .map(|h| {
                let h = h.to_string();
                let first = h.split(". ").next().unwrap_or(&h).to_string();
                match first.split_once(": ") {
                    Some((suites, rest))
                        if suites.split(',').all(|s| reg.suite(s.trim()).is_ok()) =>
                    {
                        rest.to_string()
                    }
                    _ => first,
                }
            });
        let expected = match (e.get(ContextKind::ValidValue), help) {
            (Some(ContextValue::Strings(values)), _) => {
                let names: Vec<&str> = values.iter().map(String::as_str).collect();
                format!(
                    "; expected one of {}{}",
                    names.join(", "),
                    flashlab_engine::input::did_you_mean(&value, names.iter().copied())
                )
            }
            (_, Some(help)) => format!("; expected {}", lower_first(help.trim_end_matches('.'))),
            (_, None) => String::new(),
        };
        return format!("{option} '{value}': {why}{expected}");
    }
    let rendered = e.render().to_string();
    rendered
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
        .map(|l| l.strip_prefix("error: ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join(" ")
}
