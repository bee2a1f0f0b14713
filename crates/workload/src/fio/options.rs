//! The one option table. Each entry names a fio option, its aliases, its type, fio's default,
//! a help line and what flashlab does with it. The parser, the error messages (nearest
//! option) and `--help`-style listings all read this table; adding an option is one entry.

use super::value::{parse_amount, parse_bool, parse_bytes, parse_int, parse_time_ns, TimeUnit};
use crate::job::JobSpec;

mod table;
use table::OPTIONS;

/// The type of an option's value (for validation of accepted options and for help).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OptionType {
    /// `0`/`1`; written bare it means `1`.
    Bool,
    /// An integer (size suffixes allowed, as in fio).
    Int,
    /// Bytes with k/m/g/t/p suffixes.
    Size,
    /// Bytes, or a percentage of the target (`50%`).
    SizeOrPercent,
    /// Bytes per direction: `read,write,trim`.
    SizePerDirection,
    /// Integers per direction: `read,write,trim`.
    IntPerDirection,
    /// `min-max` per direction.
    SizeRange,
    /// `size/percent:...` per direction.
    SizeSplit,
    /// A duration; a bare number is in the given unit.
    Time(TimeUnit),
    /// An integer percentage 0..=100.
    Percent,
    /// Free text.
    Str,
    /// Free text, or bare (fio then uses the job name).
    LogPrefix,
    /// One of the listed words.
    Enum(&'static [&'static str]),
    /// `rw=` pattern with optional `:N`.
    Pattern,
    /// `random_distribution=` syntax.
    Distribution,
    /// Colon-separated decimals.
    FloatList,
    /// CPU numbers and `low-high` ranges separated by commas (fio's `cpus_allowed`).
    CpuList,
    /// A non-zero bit mask of CPUs (fio's `cpumask`).
    CpuMask,
}

impl OptionType {
    /// Whether the option may be written without `=value`.
    pub fn bare_allowed(self) -> bool {
        matches!(self, OptionType::Bool | OptionType::LogPrefix)
    }

    /// A short description of valid values, for help and messages.
    pub fn describe(self) -> String {
        match self {
            OptionType::Bool => "0 or 1".into(),
            OptionType::Int => "an integer".into(),
            OptionType::Size => "a size (e.g. 4k, 1m, 2g)".into(),
            OptionType::SizeOrPercent => "a size or a percentage (e.g. 1g or 50%)".into(),
            OptionType::SizePerDirection => "sizes per direction: read,write,trim".into(),
            OptionType::IntPerDirection => "integers per direction: read,write,trim".into(),
            OptionType::SizeRange => "min-max sizes per direction".into(),
            OptionType::SizeSplit => "size/percent:... per direction".into(),
            OptionType::Time(u) => format!("a duration (bare numbers in {u:?})").to_lowercase(),
            OptionType::Percent => "a percentage from 0 to 100".into(),
            OptionType::Str | OptionType::LogPrefix => "text".into(),
            OptionType::Enum(words) => format!("one of {}", words.join(", ")),
            OptionType::Pattern => "an I/O pattern such as randread".into(),
            OptionType::Distribution => {
                "random, zipf:θ, pareto:h, normal:σ, zoned:..., zoned_abs:...".into()
            }
            OptionType::FloatList => "decimals separated by ':'".into(),
            OptionType::CpuList => {
                "CPU numbers and ranges separated by commas (e.g. 0,5,8-15)".into()
            }
            OptionType::CpuMask => "a non-zero CPU bit mask (e.g. 34 or 0x22)".into(),
        }
    }
}

/// What flashlab does with an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionClass {
    /// Parsed into the [`JobSpec`] and modelled.
    Simulated,
    /// Accepted and validated, but only matters to real I/O (engines, caching, CPU placement)
    /// or to presentation; it does not change the simulation.
    Accepted,
    /// A real fio option whose effect flashlab does not model: using it is an error rather
    /// than a silently different run.
    NotSimulated,
}

/// The parsing state of one section: the job being built and the unit base in force.
#[derive(Debug, Clone)]
pub(crate) struct Builder {
    pub spec: JobSpec,
    pub kb_base: u64,
    /// `name=` given (overrides the section name).
    pub name: Option<String>,
    /// fio's buffer options as given so far; they resolve to `spec.compressible_percent`.
    pub buffers: BufferOptions,
}

/// The options that decide what fio writes. They are kept apart from the job because the
/// result depends on all of them whatever their order (and on `[global]`'s).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BufferOptions {
    /// `buffer_compress_percentage`; 0 is fio's "not set".
    pub compress_percent: u8,
    pub zero_buffers: bool,
    pub pattern: bool,
}

impl BufferOptions {
    /// The share of a write a compressor can remove, in fio's order of precedence: a
    /// compress percentage above 0 (random data plus zeros or the pattern), then a pattern
    /// (repeated bytes), then zeros, then fio's default random data.
    pub fn compressible_percent(self) -> u8 {
        if self.compress_percent > 0 {
            self.compress_percent
        } else if self.pattern || self.zero_buffers {
            100
        } else {
            0
        }
    }
}

impl Builder {
    fn set_buffers(&mut self, f: impl FnOnce(&mut BufferOptions)) {
        f(&mut self.buffers);
        self.spec.buffers.compressible_percent = self.buffers.compressible_percent();
    }
}

type ApplyFn = fn(&mut Builder, Option<&str>) -> Result<(), String>;

/// One fio option.
#[derive(Debug, Clone, Copy)]
pub struct OptionDef {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub ty: OptionType,
    /// fio's default as fio shows it (empty: none).
    pub default: &'static str,
    pub help: &'static str,
    pub class: OptionClass,
    /// fio applies (and prints) options with a higher priority first within a section;
    /// `kb_base` must be known before sizes are read and `filename` comes last.
    pub priority: i8,
    pub(crate) apply: Option<ApplyFn>,
}

impl OptionDef {
    pub fn matches(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }
}

const fn sim(
    name: &'static str,
    aliases: &'static [&'static str],
    ty: OptionType,
    default: &'static str,
    help: &'static str,
    apply: ApplyFn,
) -> OptionDef {
    OptionDef {
        name,
        aliases,
        ty,
        default,
        help,
        class: OptionClass::Simulated,
        priority: 0,
        apply: Some(apply),
    }
}

const fn acc(
    name: &'static str,
    aliases: &'static [&'static str],
    ty: OptionType,
    default: &'static str,
    help: &'static str,
) -> OptionDef {
    OptionDef {
        name,
        aliases,
        ty,
        default,
        help,
        class: OptionClass::Accepted,
        priority: 0,
        apply: None,
    }
}

const fn not(
    name: &'static str,
    aliases: &'static [&'static str],
    help: &'static str,
) -> OptionDef {
    OptionDef {
        name,
        aliases,
        ty: OptionType::Str,
        default: "",
        help,
        class: OptionClass::NotSimulated,
        priority: 0,
        apply: None,
    }
}

const fn prio(mut def: OptionDef, priority: i8) -> OptionDef {
    def.priority = priority;
    def
}

/// Every option flashlab knows, in table order.
pub fn option_table() -> &'static [OptionDef] {
    OPTIONS
}

/// The option called `name` (or with that alias).
pub fn find_option(name: &str) -> Option<&'static OptionDef> {
    option_table().iter().find(|o| o.matches(name))
}

/// Names longer than this get no suggestion: no option is nearly that long, and the search
/// costs the name's length times every option's.
const MAX_SUGGEST_BYTES: usize = 64;

/// The known option or alias nearest to `name` by edit distance.
pub(crate) fn nearest_option(name: &str) -> Option<&'static str> {
    if name.len() > MAX_SUGGEST_BYTES {
        return None;
    }
    option_table()
        .iter()
        .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
        .map(|n| (strsim::levenshtein(name, n), n))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

/// Check an accepted option's value against its type.
pub(crate) fn validate(def: &OptionDef, value: &str, kb_base: u64) -> Result<(), String> {
    let expected = || def.ty.describe();
    match def.ty {
        OptionType::Bool => parse_bool(value).map(drop),
        OptionType::Int => parse_int(value, kb_base, 0, u64::MAX).map(drop),
        OptionType::Size => parse_bytes(value, kb_base).map(drop),
        OptionType::SizeOrPercent => parse_amount(value, kb_base, true).map(drop),
        OptionType::Percent => parse_int(value, 1000, 0, 100).map(drop),
        OptionType::Time(u) => parse_time_ns(value, u).map(drop),
        OptionType::Enum(words) => {
            if words.contains(&value.trim()) {
                Ok(())
            } else {
                let hint =
                    flashlab_engine::input::did_you_mean(value.trim(), words.iter().copied());
                Err(format!("{}{hint}", expected()))
            }
        }
        OptionType::CpuList => cpu_list_ok(value).then_some(()).ok_or_else(expected),
        OptionType::CpuMask => match parse_int(value, kb_base, 1, u64::MAX) {
            Ok(_) => Ok(()),
            Err(_) => Err(expected()),
        },
        _ => Ok(()),
    }
}

/// Whether `value` is a CPU list: numbers and `low-high` ranges (low at most high, so no
/// range is empty, which fio refuses when it sets the affinity) separated by commas.
fn cpu_list_ok(value: &str) -> bool {
    let number = |t: &str| -> Option<u64> {
        let t = t.trim();
        (!t.is_empty() && t.bytes().all(|c| c.is_ascii_digit()))
            .then(|| t.parse().ok())
            .flatten()
    };
    value.split(',').all(|item| match item.split_once('-') {
        Some((lo, hi)) => matches!((number(lo), number(hi)), (Some(l), Some(h)) if l <= h),
        None => number(item).is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names_are_unique_and_documented() {
        let t = option_table();
        let mut names: Vec<&str> = t
            .iter()
            .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
            .collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "an option name or alias appears twice");
        for o in t {
            assert!(!o.help.is_empty(), "{} has no help", o.name);
            assert_eq!(
                o.apply.is_some(),
                o.class == OptionClass::Simulated,
                "{}",
                o.name
            );
        }
        assert!(find_option("loop").is_none());
        assert_eq!(
            find_option("verify").map(|o| o.class),
            Some(OptionClass::Simulated)
        );
        assert_eq!(
            find_option("verify_backlog").map(|o| o.class),
            Some(OptionClass::Simulated)
        );
        assert_eq!(find_option("readwrite").map(|o| o.name), Some("rw"));
        assert_eq!(
            find_option("wait_for_previous").map(|o| o.name),
            Some("stonewall")
        );
    }

    #[test]
    fn nearest_option_by_edit_distance() {
        assert_eq!(nearest_option("iodepht"), Some("iodepth"));
        assert_eq!(nearest_option("rwmixred"), Some("rwmixread"));
        assert_eq!(nearest_option("blocksze"), Some("blocksize"));
    }

    #[test]
    fn accepted_values_are_checked_by_type() {
        let direct = find_option("direct").unwrap();
        assert!(validate(direct, "1", 1024).is_ok());
        assert_eq!(validate(direct, "yes", 1024), Err("0 or 1".into()));
        let gen = find_option("random_generator").unwrap();
        assert!(validate(gen, "lfsr", 1024).is_ok());
        assert!(validate(gen, "mt", 1024)
            .unwrap_err()
            .contains("tausworthe64"));
    }
}
