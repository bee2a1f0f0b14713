//! Human units in presets: sizes ("7.68TB" decimal, "16KiB" binary), times ("350us"), rates
//! ("3.2GB/s", "6Gb/s", "1.2GT/s").
//!
//! Numbers are parsed as exact decimals (no floating point), so "7.68TB" is exactly
//! 7,680,000,000,000 bytes.

/// Why a unit string was refused; the message says what would be valid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct UnitError {
    pub message: String,
}

fn err(input: &str, what: &str) -> UnitError {
    UnitError {
        message: format!(
            "cannot read \"{}\" as {what}",
            flashlab_engine::input::excerpt(input)
        ),
    }
}

pub const SIZE_HELP: &str = "a size such as \"4096\", \"16KiB\", \"3.84TB\" (B, KB, MB, GB, TB, PB are powers of 1000; KiB, MiB, GiB, TiB, PiB powers of 1024)";
pub const TIME_HELP: &str =
    "a time such as \"350us\", \"3.5ms\", \"50ns\", \"1s\" (ns, us or µs, ms, s)";
pub const RATE_HELP: &str =
    "a rate such as \"3.2GB/s\", \"6Gb/s\" (bits), \"1.2GT/s\" or \"1200MT/s\" (transfers)";

/// Splits "7.68TB" into an exact decimal (digits as integer, number of fraction digits) and
/// the suffix.
fn split_number(s: &str) -> Option<(u128, u32, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(end);
    let num: String = num.chars().filter(|c| *c != '_').collect();
    if num.is_empty() || num.matches('.').count() > 1 || num == "." {
        return None;
    }
    let (int, frac) = num.split_once('.').unwrap_or((&num, ""));
    if frac.len() > 18 || int.len() > 20 {
        return None;
    }
    let digits: u128 = format!("{int}{frac}").parse().ok()?;
    Some((digits, frac.len() as u32, suffix.trim()))
}

/// `digits / 10^decimals * multiplier`, rounded to nearest, if it fits in u64.
fn scale(digits: u128, decimals: u32, multiplier: u128) -> Option<u64> {
    let den = 10u128.pow(decimals);
    let v = digits.checked_mul(multiplier)?;
    let r = (v + den / 2) / den;
    u64::try_from(r).ok()
}

fn prefix_multiplier(prefix: &str) -> Option<u128> {
    Some(match prefix.to_ascii_lowercase().as_str() {
        "" => 1,
        "k" => 1_000,
        "m" => 1_000_000,
        "g" => 1_000_000_000,
        "t" => 1_000_000_000_000,
        "p" => 1_000_000_000_000_000,
        "ki" => 1 << 10,
        "mi" => 1 << 20,
        "gi" => 1 << 30,
        "ti" => 1 << 40,
        "pi" => 1 << 50,
        _ => return None,
    })
}

/// Bytes from "4096", "16KiB", "7.68TB".
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    let bad = || err(s, "a size");
    let (digits, dec, suffix) = split_number(s).ok_or_else(bad)?;
    let prefix = if suffix.is_empty() {
        ""
    } else {
        suffix
            .strip_suffix('B')
            .or_else(|| suffix.strip_suffix('b').filter(|p| !p.is_empty()))
            .ok_or_else(bad)?
    };
    let mult = prefix_multiplier(prefix).ok_or_else(bad)?;
    scale(digits, dec, mult).ok_or_else(bad)
}

/// Nanoseconds from "350us", "3.5ms", "50ns", "2s". A bare number is refused: a time without
/// a unit is too easy to get wrong by 1000×.
pub fn parse_time_ns(s: &str) -> Result<u64, UnitError> {
    let bad = || err(s, "a time");
    let (digits, dec, suffix) = split_number(s).ok_or_else(bad)?;
    let mult: u128 = match suffix {
        "ns" => 1,
        "us" | "µs" | "μs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => return Err(bad()),
    };
    scale(digits, dec, mult).ok_or_else(bad)
}

pub const ENERGY_HELP: &str =
    "an energy such as \"50uJ\", \"2.5nJ\", \"80pJ\", \"1mJ\" (pJ, nJ, uJ or µJ, mJ, J)";
pub const POWER_HELP: &str = "a power such as \"13W\", \"500mW\", \"25.5W\" (uW or µW, mW, W)";

/// Picojoules from "50uJ", "2.5nJ", "80pJ".
pub fn parse_energy_pj(s: &str) -> Result<u64, UnitError> {
    let bad = || err(s, "an energy");
    let (digits, dec, suffix) = split_number(s).ok_or_else(bad)?;
    let mult: u128 = match suffix {
        "pJ" => 1,
        "nJ" => 1_000,
        "uJ" | "µJ" | "μJ" => 1_000_000,
        "mJ" => 1_000_000_000,
        "J" => 1_000_000_000_000,
        _ => return Err(bad()),
    };
    scale(digits, dec, mult).ok_or_else(bad)
}

/// Microwatts from "13W", "500mW".
pub fn parse_power_uw(s: &str) -> Result<u64, UnitError> {
    let bad = || err(s, "a power");
    let (digits, dec, suffix) = split_number(s).ok_or_else(bad)?;
    let mult: u128 = match suffix {
        "uW" | "µW" | "μW" => 1,
        "mW" => 1_000,
        "W" => 1_000_000,
        _ => return Err(bad()),
    };
    // Powers are whole µW: a finer digit would be rounded away, and "3.0000001W" refused as
    // "not more than 3W" reads as a contradiction.
    if digits
        .checked_mul(mult)
        .is_some_and(|v| v % 10u128.pow(dec) != 0)
    {
        return Err(err(s, "a power in whole µW (no digit below 1µW)"));
    }
    scale(digits, dec, mult).ok_or_else(bad)
}

/// What a rate counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateUnit {
    BytesPerS,
    BitsPerS,
    TransfersPerS,
}

/// Rate from "3.2GB/s" (bytes), "6Gb/s" (bits), "1.2GT/s" / "1200MT/s" (transfers).
pub fn parse_rate(s: &str) -> Result<(u64, RateUnit), UnitError> {
    let bad = || err(s, "a rate");
    let (digits, dec, suffix) = split_number(s).ok_or_else(bad)?;
    let unit = suffix
        .strip_suffix("/s")
        .or_else(|| suffix.strip_suffix("ps"))
        .ok_or_else(bad)?;
    let (prefix, kind) = if let Some(p) = unit.strip_suffix('B') {
        (p, RateUnit::BytesPerS)
    } else if let Some(p) = unit.strip_suffix('b') {
        (p, RateUnit::BitsPerS)
    } else if let Some(p) = unit.strip_suffix('T') {
        (p, RateUnit::TransfersPerS)
    } else {
        return Err(bad());
    };
    let mult = prefix_multiplier(prefix).ok_or_else(bad)?;
    Ok((scale(digits, dec, mult).ok_or_else(bad)?, kind))
}

/// Rate in bytes per second ("3.2GB/s", or bits divided by 8).
pub fn parse_bytes_per_s(s: &str) -> Result<u64, UnitError> {
    match parse_rate(s)? {
        (v, RateUnit::BytesPerS) => Ok(v),
        (v, RateUnit::BitsPerS) => Ok(v / 8),
        (_, RateUnit::TransfersPerS) => Err(err(s, "a byte rate (GB/s or Gb/s, not GT/s)")),
    }
}

/// Transfers per second ("1.2GT/s", "1200MT/s").
pub fn parse_transfers_per_s(s: &str) -> Result<u64, UnitError> {
    match parse_rate(s)? {
        (v, RateUnit::TransfersPerS) => Ok(v),
        _ => Err(err(s, "a transfer rate (MT/s or GT/s)")),
    }
}

/// "7.68 TB" / "16 KiB" style: binary units when the value is a whole number of KiB..TiB,
/// decimal otherwise, with up to 3 significant decimals.
pub fn format_size(bytes: u64) -> String {
    for (unit, m) in [
        ("TiB", 1u64 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ] {
        // Binary units only where they read naturally ("16 KiB", not "250000000 KiB").
        if bytes >= m && bytes.is_multiple_of(m) && bytes / m < 10_000 {
            return format!("{} {unit}", bytes / m);
        }
    }
    format_decimal(bytes as f64, "B")
}

/// Decimal SI formatting with three significant digits after the point ("281.9 GB").
pub fn format_decimal(v: f64, unit: &str) -> String {
    let (p, d) = [("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)]
        .into_iter()
        .find(|(_, d)| v >= *d)
        .unwrap_or(("", 1.0));
    let x = v / d;
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s} {p}{unit}")
}

/// A whole number with its thousands separated: 14293745664 → "14,293,745,664".
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// "350 us", "3.5 ms", "50 ns".
pub fn format_time(ns: u64) -> String {
    if ns >= 1_000_000_000 {
        format_decimal_plain(ns as f64 / 1e9, "s")
    } else if ns >= 1_000_000 {
        format_decimal_plain(ns as f64 / 1e6, "ms")
    } else if ns >= 1_000 {
        format_decimal_plain(ns as f64 / 1e3, "us")
    } else {
        format!("{ns} ns")
    }
}

fn format_decimal_plain(x: f64, unit: &str) -> String {
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_decimal_and_binary() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("16KiB").unwrap(), 16384);
        assert_eq!(parse_size("16 KiB").unwrap(), 16384);
        assert_eq!(parse_size("16kib").unwrap(), 16384);
        assert_eq!(parse_size("7.68TB").unwrap(), 7_680_000_000_000);
        assert_eq!(parse_size("256GB").unwrap(), 256_000_000_000);
        assert_eq!(parse_size("3GiB").unwrap(), 3 << 30);
        assert_eq!(parse_size("1.5KiB").unwrap(), 1536);
        assert_eq!(parse_size("512B").unwrap(), 512);
        assert_eq!(parse_size("1_000").unwrap(), 1000);
    }

    #[test]
    fn sizes_refused_with_help() {
        for bad in [
            "",
            "KiB",
            "16 KB/s",
            "16Q",
            "1.2.3GB",
            "abc",
            "99999999999PB",
            "16K",
        ] {
            let e = parse_size(bad).unwrap_err();
            assert!(e.message.contains("a size"), "{bad}: {e}");
        }
    }

    #[test]
    fn energies_and_powers() {
        assert_eq!(parse_energy_pj("50uJ"), Ok(50_000_000));
        assert_eq!(parse_energy_pj("2.5nJ"), Ok(2_500));
        assert_eq!(parse_energy_pj("80pJ"), Ok(80));
        assert_eq!(parse_power_uw("13W"), Ok(13_000_000));
        assert_eq!(parse_power_uw("0.5mW"), Ok(500));
        assert!(parse_energy_pj("50").is_err());
        assert!(parse_power_uw("13 watts").is_err());
        // Below the µW resolution: refused, not rounded to a value the message contradicts.
        let e = parse_power_uw("3.0000001W").unwrap_err().to_string();
        assert!(e.contains("whole µW"), "{e}");
        assert_eq!(parse_power_uw("3.000001W"), Ok(3_000_001));
    }

    #[test]
    fn times() {
        assert_eq!(parse_time_ns("350us").unwrap(), 350_000);
        assert_eq!(parse_time_ns("350µs").unwrap(), 350_000);
        assert_eq!(parse_time_ns("3.5ms").unwrap(), 3_500_000);
        assert_eq!(parse_time_ns("50ns").unwrap(), 50);
        assert_eq!(parse_time_ns("2 s").unwrap(), 2_000_000_000);
        assert_eq!(parse_time_ns("0.5us").unwrap(), 500);
        assert!(parse_time_ns("350").is_err());
        assert!(parse_time_ns("350 min").is_err());
    }

    #[test]
    fn rates() {
        assert_eq!(parse_bytes_per_s("3.2GB/s").unwrap(), 3_200_000_000);
        assert_eq!(parse_bytes_per_s("6Gb/s").unwrap(), 750_000_000);
        assert_eq!(parse_bytes_per_s("600MBps").unwrap(), 600_000_000);
        assert_eq!(parse_transfers_per_s("1.2GT/s").unwrap(), 1_200_000_000);
        assert_eq!(parse_transfers_per_s("1600MT/s").unwrap(), 1_600_000_000);
        assert!(parse_transfers_per_s("1.2GB/s").is_err());
        assert!(parse_bytes_per_s("1.2GT/s").is_err());
        assert!(parse_bytes_per_s("1.2GB").is_err());
    }

    #[test]
    fn formatting() {
        assert_eq!(format_size(16384), "16 KiB");
        assert_eq!(format_size(3 << 30), "3 GiB");
        assert_eq!(format_size(256_000_000_000), "256 GB");
        assert_eq!(format_size(281_857_228_800), "281.857 GB");
        assert_eq!(format_time(350_000), "350 us");
        assert_eq!(format_time(3_500_000), "3.5 ms");
        assert_eq!(format_time(12), "12 ns");
        assert_eq!(format_decimal(7.877e9, "B/s"), "7.877 GB/s");
    }
}
