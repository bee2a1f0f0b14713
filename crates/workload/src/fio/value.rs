//! fio's value syntaxes: sizes with k/m/g/t/p suffixes, times with unit suffixes, booleans,
//! percentages and per-direction lists. Each parser returns what would have been valid on
//! failure; the caller adds the file, line and option.

use flashlab_engine::{NS_PER_MS, NS_PER_S, NS_PER_US};

/// What a size may end with, for messages.
pub(crate) const SIZE_SUFFIXES: &str =
    "a number of bytes with an optional suffix k/m/g/t/p (or kb/kib, mb/mib, ...; case-insensitive)";

/// A parsed size: bytes, or a fraction of the target when written with `%`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Amount {
    Bytes(u64),
    Fraction(f64),
}

/// Split a number from its suffix: `"1.5g"` -> (`1.5`, `"g"`). Hex (`0x10`) has no suffix.
fn split_number(text: &str) -> Option<(f64, &str)> {
    let t = text.trim();
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        let v = u64::from_str_radix(hex, 16).ok()?;
        return Some((v as f64, ""));
    }
    let end = t
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.'))
        .map_or(t.len(), |(i, _)| i);
    let (num, suffix) = t.split_at(end);
    if num.is_empty() || num.starts_with('.') || num.matches('.').count() > 1 {
        return None;
    }
    let v: f64 = num.parse().ok()?;
    Some((v, suffix.trim()))
}

/// Exact integer part for plain integers so large byte counts keep every digit.
fn split_integer(text: &str) -> Option<(u64, &str)> {
    let t = text.trim();
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if end == 0 || t[end..].starts_with('.') {
        return None;
    }
    Some((t[..end].parse().ok()?, t[end..].trim()))
}

/// Multiplier for a size suffix under fio's `kb_base` rule. With the default `kb_base=1024`
/// fio keeps its historical meaning: `k`/`kb` are powers of 1024 and the IEC spellings
/// (`kib`, `mib`, ...) are powers of 1000; `kb_base=1000` swaps the two.
fn size_multiplier(suffix: &str, kb_base: u64) -> Option<u64> {
    let s = suffix.to_ascii_lowercase();
    let other = if kb_base == 1000 { 1024 } else { 1000 };
    let (pow, base) = match s.as_str() {
        "" | "b" => (0, kb_base),
        "k" | "kb" => (1, kb_base),
        "m" | "mb" => (2, kb_base),
        "g" | "gb" => (3, kb_base),
        "t" | "tb" => (4, kb_base),
        "p" | "pb" => (5, kb_base),
        "ki" | "kib" => (1, other),
        "mi" | "mib" => (2, other),
        "gi" | "gib" => (3, other),
        "ti" | "tib" => (4, other),
        "pi" | "pib" => (5, other),
        _ => return None,
    };
    base.checked_pow(pow)
}

/// A size in bytes; `allow_percent` also accepts `N%` (of the target).
pub(crate) fn parse_amount(
    text: &str,
    kb_base: u64,
    allow_percent: bool,
) -> Result<Amount, String> {
    let expected = || {
        if allow_percent {
            format!("{SIZE_SUFFIXES}, or a percentage like 50%")
        } else {
            SIZE_SUFFIXES.to_string()
        }
    };
    let t = text.trim();
    if let Some(pct) = t.strip_suffix('%') {
        if !allow_percent {
            return Err(SIZE_SUFFIXES.to_string());
        }
        let (v, rest) = split_number(pct).ok_or_else(expected)?;
        if !rest.is_empty() || !(0.0..=100.0).contains(&v) {
            return Err("a percentage between 0% and 100%".to_string());
        }
        return Ok(Amount::Fraction(v / 100.0));
    }
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16)
            .map(Amount::Bytes)
            .map_err(|_| expected());
    }
    if let Some((v, suffix)) = split_integer(t) {
        let mult = size_multiplier(suffix, kb_base).ok_or_else(expected)?;
        return v
            .checked_mul(mult)
            .map(Amount::Bytes)
            .ok_or_else(|| "a size below 16 EiB".into());
    }
    let (v, suffix) = split_number(t).ok_or_else(expected)?;
    let mult = size_multiplier(suffix, kb_base).ok_or_else(expected)?;
    let bytes = v * mult as f64;
    if !(bytes.is_finite() && bytes < u64::MAX as f64) {
        return Err("a size below 16 EiB".into());
    }
    Ok(Amount::Bytes(bytes as u64))
}

/// A size in bytes (no percentage).
pub(crate) fn parse_bytes(text: &str, kb_base: u64) -> Result<u64, String> {
    match parse_amount(text, kb_base, false)? {
        Amount::Bytes(b) => Ok(b),
        Amount::Fraction(_) => Err(SIZE_SUFFIXES.to_string()),
    }
}

/// An integer; fio also accepts size suffixes on integers (`iodepth=1k`).
pub(crate) fn parse_int(text: &str, kb_base: u64, min: u64, max: u64) -> Result<u64, String> {
    let range = || format!("an integer from {min} to {max}");
    let v = parse_bytes(text, kb_base).map_err(|_| range())?;
    if v < min || v > max {
        return Err(range());
    }
    Ok(v)
}

/// fio's booleans: 0 or 1 (any integer; non-zero is true).
pub(crate) fn parse_bool(text: &str) -> Result<bool, String> {
    let t = text.trim();
    // fio's parser gives every boolean option the range 0 to 1 (option_init): 2 is refused
    // as -1 is.
    match split_integer(t) {
        Some((0, "")) => Ok(false),
        Some((1, "")) => Ok(true),
        _ => Err("0 or 1".to_string()),
    }
}

/// Units a time option may default to when written without a suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Microseconds,
    Milliseconds,
    Seconds,
}

impl TimeUnit {
    fn ns(self) -> u64 {
        match self {
            TimeUnit::Microseconds => NS_PER_US,
            TimeUnit::Milliseconds => NS_PER_MS,
            TimeUnit::Seconds => NS_PER_S,
        }
    }
}

pub(crate) const TIME_SUFFIXES: &str =
    "a number with an optional unit ns, us/usec, ms/msec, s/sec, m/min, h or d";

/// Longest duration any time option takes: a run's simulated clock stops at 2^62 ns
/// (146 years), so a longer runtime, ramp_time, startdelay or thinktime is refused where it
/// is written rather than when the run reaches it.
pub const MAX_DURATION_NS: u64 = 1 << 62;

/// A duration in nanoseconds; a bare number is in `default_unit`.
pub(crate) fn parse_time_ns(text: &str, default_unit: TimeUnit) -> Result<u64, String> {
    let (v, suffix) = split_number(text).ok_or_else(|| TIME_SUFFIXES.to_string())?;
    let mult = match suffix.to_ascii_lowercase().as_str() {
        "" => default_unit.ns(),
        "ns" | "nsec" => 1,
        "us" | "usec" => NS_PER_US,
        "ms" | "msec" => NS_PER_MS,
        "s" | "sec" => NS_PER_S,
        "m" | "min" => 60 * NS_PER_S,
        "h" => 3_600 * NS_PER_S,
        "d" => 86_400 * NS_PER_S,
        _ => return Err(TIME_SUFFIXES.to_string()),
    };
    let ns = v * mult as f64;
    if !(ns.is_finite() && ns <= MAX_DURATION_NS as f64) {
        return Err(format!(
            "a duration of at most {}d (2^62 ns, the simulated time a run can reach)",
            MAX_DURATION_NS / (86_400 * NS_PER_S)
        ));
    }
    Ok(ns.round() as u64)
}

/// A plain decimal number (percentiles, distribution parameters).
pub(crate) fn parse_f64(text: &str) -> Option<f64> {
    let t = text.trim();
    if t.is_empty() || !t.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    t.parse().ok().filter(|v: &f64| v.is_finite())
}

/// fio's per-direction lists (`bs=4k,8k`): read, write, trim. An empty field keeps the
/// default; fields not written repeat the last one written (`bs=,8k` is 8k for writes and
/// trims), and a trailing comma leaves the rest at their defaults.
pub(crate) fn split_ddir(text: &str) -> Result<[Option<&str>; 3], String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err("at most three comma-separated values: read,write,trim".to_string());
    }
    let mut out = [None; 3];
    let last = parts.last().copied().filter(|p| !p.is_empty());
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = match parts.get(i) {
            Some(p) if !p.is_empty() => Some(*p),
            Some(_) => None,
            None => last,
        };
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_fio_kb_base_rules() {
        assert_eq!(parse_bytes("4096", 1024), Ok(4096));
        assert_eq!(parse_bytes("4k", 1024), Ok(4096));
        assert_eq!(parse_bytes("4KB", 1024), Ok(4096));
        assert_eq!(parse_bytes("1m", 1024), Ok(1 << 20));
        assert_eq!(parse_bytes("2g", 1024), Ok(2 << 30));
        assert_eq!(parse_bytes("1t", 1024), Ok(1 << 40));
        assert_eq!(parse_bytes("1p", 1024), Ok(1 << 50));
        assert_eq!(parse_bytes("0x1000", 1024), Ok(4096));
        // fio's compatibility mode: IEC spellings are decimal unless kb_base=1000.
        assert_eq!(parse_bytes("64MiB", 1024), Ok(64_000_000));
        assert_eq!(parse_bytes("4KiB", 1000), Ok(4096));
        assert_eq!(parse_bytes("4k", 1000), Ok(4000));
        assert_eq!(parse_bytes("1.5k", 1024), Ok(1536));
        assert_eq!(parse_bytes(" 8k ", 1024), Ok(8192));
        assert!(parse_bytes("4q", 1024).unwrap_err().contains("k/m/g/t/p"));
        assert!(parse_bytes("", 1024).is_err());
        assert!(parse_bytes("k", 1024).is_err());
        assert!(parse_bytes("1.2.3", 1024).is_err());
        assert!(parse_bytes("99999999999p", 1024).is_err());
        assert!(parse_bytes("50%", 1024).is_err());
        assert_eq!(parse_amount("50%", 1024, true), Ok(Amount::Fraction(0.5)));
        assert!(parse_amount("150%", 1024, true).is_err());
    }

    #[test]
    fn times_use_the_option_default_unit() {
        assert_eq!(parse_time_ns("2", TimeUnit::Seconds), Ok(2 * NS_PER_S));
        assert_eq!(
            parse_time_ns("10", TimeUnit::Microseconds),
            Ok(10 * NS_PER_US)
        );
        assert_eq!(parse_time_ns("10ms", TimeUnit::Seconds), Ok(10 * NS_PER_MS));
        assert_eq!(parse_time_ns("5usec", TimeUnit::Seconds), Ok(5 * NS_PER_US));
        assert_eq!(parse_time_ns("2m", TimeUnit::Seconds), Ok(120 * NS_PER_S));
        assert_eq!(parse_time_ns("1h", TimeUnit::Seconds), Ok(3600 * NS_PER_S));
        assert_eq!(
            parse_time_ns("1d", TimeUnit::Seconds),
            Ok(86_400 * NS_PER_S)
        );
        assert_eq!(
            parse_time_ns("1.5s", TimeUnit::Seconds),
            Ok(1_500 * NS_PER_MS)
        );
        assert!(parse_time_ns("3 fortnights", TimeUnit::Seconds)
            .unwrap_err()
            .contains("us/usec"));
        assert!(parse_time_ns("99999999999d", TimeUnit::Seconds).is_err());
    }

    #[test]
    fn booleans_and_ints() {
        assert_eq!(parse_bool("1"), Ok(true));
        assert_eq!(parse_bool("0"), Ok(false));
        assert!(parse_bool("yes").is_err());
        assert_eq!(parse_int("16", 1024, 1, 100), Ok(16));
        assert_eq!(parse_int("1k", 1024, 1, 4096), Ok(1024));
        assert!(parse_int("0", 1024, 1, 100)
            .unwrap_err()
            .contains("from 1 to 100"));
    }

    #[test]
    fn per_direction_lists_follow_fio() {
        assert_eq!(split_ddir("4k"), Ok([Some("4k"); 3]));
        assert_eq!(
            split_ddir("8k,32k"),
            Ok([Some("8k"), Some("32k"), Some("32k")])
        );
        assert_eq!(split_ddir("8k,32k,"), Ok([Some("8k"), Some("32k"), None]));
        assert_eq!(split_ddir(",8k"), Ok([None, Some("8k"), Some("8k")]));
        assert_eq!(split_ddir(",8k,"), Ok([None, Some("8k"), None]));
        assert!(split_ddir("1,2,3,4").is_err());
    }
}

/// A size or offset that may be a percentage of the target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeSpec {
    Bytes(u64),
    /// Fraction in [0, 1] of the device (fio's `size=50%`), or for `io_size` of the clone's
    /// region (fio's `io_size=25%`).
    Fraction(f64),
}
