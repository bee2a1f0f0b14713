//! Lengths, sizes and times as the suite options take them (`25%`, `4GiB`, `1GB`, `60s`):
//! parsed here once for every option of the kind, with errors naming the option.

use flashlab_engine::{NS_PER_MS, NS_PER_S, NS_PER_US};

use crate::SuiteError;

/// How long one workload-dependent preconditioning round lasts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RoundLength {
    /// A fraction of the (whole drive's) user capacity written per round.
    CapacityFraction(f64),
    /// Bytes written per round.
    Bytes(u64),
    /// Simulated time per round.
    TimeNs(u64),
}

const ROUND_VALID: &str = "a percentage of the user capacity (25%), a size (512MiB, 4GiB, 1GB; \
K/M/G/T and KiB/MiB/GiB/TiB are binary, KB/MB/GB/TB decimal) or a time (500ms, 60s, 2min, 1h)";

impl RoundLength {
    /// Parse `25%`, `4GiB`, `1GB`, `60s`, `500ms`, `2min`.
    pub fn parse(text: &str) -> Result<RoundLength, SuiteError> {
        Self::parse_for("--round", text)
    }

    /// [`RoundLength::parse`] for another option of the same kind (errors name `option`).
    pub fn parse_for(option: &'static str, text: &str) -> Result<RoundLength, SuiteError> {
        let bad = || SuiteError::BadOption {
            option,
            value: text.to_string(),
            valid: ROUND_VALID.to_string(),
        };
        let t = text.trim();
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let value: f64 = num.parse().map_err(|_| bad())?;
        if !value.is_finite() || value <= 0.0 {
            return Err(bad());
        }
        let scaled = |mult: u64| -> Result<u64, SuiteError> {
            let v = value * mult as f64;
            if v >= 1.0 && v < u64::MAX as f64 {
                Ok(v.round() as u64)
            } else {
                Err(bad())
            }
        };
        Ok(match unit.trim() {
            "%" if value <= 1000.0 => RoundLength::CapacityFraction(value / 100.0),
            "ns" => RoundLength::TimeNs(scaled(1)?),
            "us" => RoundLength::TimeNs(scaled(NS_PER_US)?),
            "ms" => RoundLength::TimeNs(scaled(NS_PER_MS)?),
            "s" => RoundLength::TimeNs(scaled(NS_PER_S)?),
            "min" => RoundLength::TimeNs(scaled(60 * NS_PER_S)?),
            "h" => RoundLength::TimeNs(scaled(3600 * NS_PER_S)?),
            "B" | "" => RoundLength::Bytes(scaled(1)?),
            "K" | "k" | "KiB" => RoundLength::Bytes(scaled(1 << 10)?),
            "M" | "m" | "MiB" => RoundLength::Bytes(scaled(1 << 20)?),
            "G" | "g" | "GiB" => RoundLength::Bytes(scaled(1 << 30)?),
            "T" | "t" | "TiB" => RoundLength::Bytes(scaled(1 << 40)?),
            "KB" | "kB" => RoundLength::Bytes(scaled(1_000)?),
            "MB" => RoundLength::Bytes(scaled(1_000_000)?),
            "GB" => RoundLength::Bytes(scaled(1_000_000_000)?),
            "TB" => RoundLength::Bytes(scaled(1_000_000_000_000)?),
            _ => return Err(bad()),
        })
    }

    /// As written in the JSON report.
    pub fn describe(&self) -> String {
        match self {
            RoundLength::CapacityFraction(f) => format!("{}% of capacity", f * 100.0),
            RoundLength::Bytes(b) => format!("{b} bytes"),
            RoundLength::TimeNs(ns) => format!("{ns} ns"),
        }
    }
}

const SIZE_VALID: &str = "a size such as 512, 4KiB, 64MiB or 1GB (K/M/G/T and KiB/MiB/GiB/TiB \
are binary, KB/MB/GB/TB decimal)";

/// A byte count given to `option` (`512`, `4KiB`, `64M`, `1GB`).
pub fn parse_size(option: &'static str, text: &str) -> Result<u64, SuiteError> {
    match RoundLength::parse(text) {
        Ok(RoundLength::Bytes(b)) => Ok(b),
        _ => Err(SuiteError::BadOption {
            option,
            value: text.to_string(),
            valid: SIZE_VALID.into(),
        }),
    }
}

/// A time given to `option` (`500ms`, `5s`, `2min`, and fio's time units as a job file's
/// `runtime=` takes them: `15m` is 15 minutes, `sec`, `msec`, `usec`, `hr`, `d`); `0` is
/// allowed: no time at all.
pub fn parse_time(option: &'static str, text: &str) -> Result<u64, SuiteError> {
    if text.trim() == "0" {
        return Ok(0);
    }
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let fio_unit = match unit.trim().to_ascii_lowercase().as_str() {
        // A bare number is seconds, as fio's `runtime=15`.
        "" => Some("s"),
        "m" | "min" => Some("min"),
        "sec" => Some("s"),
        "msec" => Some("ms"),
        "usec" => Some("us"),
        "hr" => Some("h"),
        "d" => {
            let days: f64 = num.parse().unwrap_or(-1.0);
            if days == 0.0 {
                return Ok(0);
            }
            return match RoundLength::parse(&format!("{}h", days * 24.0)) {
                Ok(RoundLength::TimeNs(ns)) if days > 0.0 => Ok(ns),
                _ => Err(SuiteError::BadOption {
                    option,
                    value: text.to_string(),
                    valid: TIME_VALID.into(),
                }),
            };
        }
        _ => None,
    };
    let normal = match fio_unit {
        Some(u) => format!("{num}{u}"),
        None => t.to_string(),
    };
    // A zero with a unit (`0s`, `0ms`) is no time at all too: a round length refuses zero,
    // so the unit is checked on one of it.
    if num.parse::<f64>() == Ok(0.0) {
        let unit = &normal[num.len()..];
        if let Ok(RoundLength::TimeNs(_)) = RoundLength::parse(&format!("1{unit}")) {
            return Ok(0);
        }
    }
    match RoundLength::parse(&normal) {
        Ok(RoundLength::TimeNs(ns)) => Ok(ns),
        _ => Err(SuiteError::BadOption {
            option,
            value: text.to_string(),
            valid: TIME_VALID.into(),
        }),
    }
}

const TIME_VALID: &str =
    "a time such as 0, 500ms, 5s, 15 (seconds, as fio), 15m or 2h (ns, us, ms, s, m or min, h, d)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_take_fio_units() {
        let t = |s| parse_time("--time", s).unwrap();
        assert_eq!(t("15m"), 15 * 60 * NS_PER_S);
        assert_eq!(t("2min"), 120 * NS_PER_S);
        assert_eq!(t("30sec"), 30 * NS_PER_S);
        assert_eq!(t("1hr"), 3600 * NS_PER_S);
        assert_eq!(t("1d"), 24 * 3600 * NS_PER_S);
        assert_eq!(t("0"), 0);
        for zero in ["0s", "0ms", "0.0s", "0m", "0sec", "0h", "0d"] {
            assert_eq!(t(zero), 0, "{zero}");
        }
        assert!(parse_time("--time", "0MiB").is_err());
        // A bare number is seconds, as fio's `runtime=15`.
        assert_eq!(t("15"), 15 * NS_PER_S);
        assert_eq!(t("1.5"), 1_500_000_000);
        let e = parse_time("--time", "15MiB").unwrap_err().to_string();
        assert!(e.contains("--time") && e.contains("15m"), "{e}");
    }
}
