//! Config value types that read human units from TOML and write them back exactly.

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

use crate::units;

/// A size in bytes ("16KiB", "7.68TB", or an integer number of bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Size(pub u64);

/// A duration in nanoseconds ("350us").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Time(pub u64);

/// Transfers per second ("1.2GT/s").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransferRate(pub u64);

/// A per-page array time: one time, or a list per page type (lower, upper, extra, top) whose
/// average is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageTime(pub u64);

/// An energy in picojoules ("50uJ").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Energy(pub u64);

/// A power in microwatts ("13W").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Power(pub u64);

/// Exact text for picojoules.
pub fn energy_text(pj: u64) -> String {
    for (u, m) in [
        ("J", 1_000_000_000_000u64),
        ("mJ", 1_000_000_000),
        ("uJ", 1_000_000),
        ("nJ", 1_000),
    ] {
        if pj >= m && pj.is_multiple_of(m) {
            return format!("{}{u}", pj / m);
        }
    }
    format!("{pj}pJ")
}

/// Exact text for microwatts.
pub fn power_text(uw: u64) -> String {
    for (u, m) in [("W", 1_000_000u64), ("mW", 1_000)] {
        if uw >= m && uw.is_multiple_of(m) {
            return format!("{}{u}", uw / m);
        }
    }
    format!("{uw}uW")
}

impl Serialize for Energy {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&energy_text(self.0))
    }
}
impl Serialize for Power {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&power_text(self.0))
    }
}

struct EnergyVisitor;
impl Visitor<'_> for EnergyVisitor {
    type Value = Energy;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(units::ENERGY_HELP)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Energy, E> {
        units::parse_energy_pj(v)
            .map(Energy)
            .map_err(|e| E::custom(format!("{e}; expected {}", units::ENERGY_HELP)))
    }
}
impl<'de> Deserialize<'de> for Energy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Energy, D::Error> {
        d.deserialize_any(EnergyVisitor)
    }
}

struct PowerVisitor;
impl Visitor<'_> for PowerVisitor {
    type Value = Power;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(units::POWER_HELP)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Power, E> {
        units::parse_power_uw(v)
            .map(Power)
            .map_err(|e| E::custom(format!("{e}; expected {}", units::POWER_HELP)))
    }
}
impl<'de> Deserialize<'de> for Power {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Power, D::Error> {
        d.deserialize_any(PowerVisitor)
    }
}

/// `"auto"` or a fraction of the drive to simulate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ScaleSetting {
    Auto,
    Fraction(f64),
}

/// Exact text for a byte count: the largest unit that divides it.
pub fn size_text(bytes: u64) -> String {
    const UNITS: [(&str, u64); 8] = [
        ("TiB", 1 << 40),
        ("TB", 1_000_000_000_000),
        ("GiB", 1 << 30),
        ("GB", 1_000_000_000),
        ("MiB", 1 << 20),
        ("MB", 1_000_000),
        ("KiB", 1 << 10),
        ("KB", 1_000),
    ];
    for (u, m) in UNITS {
        if bytes >= m && bytes.is_multiple_of(m) {
            return format!("{}{u}", bytes / m);
        }
    }
    format!("{bytes}B")
}

/// Exact text for nanoseconds.
pub fn time_text(ns: u64) -> String {
    for (u, m) in [("s", 1_000_000_000u64), ("ms", 1_000_000), ("us", 1_000)] {
        if ns >= m && ns.is_multiple_of(m) {
            return format!("{}{u}", ns / m);
        }
    }
    format!("{ns}ns")
}

impl Serialize for Size {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&size_text(self.0))
    }
}
impl Serialize for Time {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&time_text(self.0))
    }
}
impl Serialize for PageTime {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&time_text(self.0))
    }
}
impl Serialize for TransferRate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let text = if t.is_multiple_of(1_000_000_000) {
            format!("{}GT/s", t / 1_000_000_000)
        } else if t.is_multiple_of(1_000_000) {
            format!("{}MT/s", t / 1_000_000)
        } else {
            format!("{t}T/s")
        };
        s.serialize_str(&text)
    }
}
impl Serialize for ScaleSetting {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ScaleSetting::Auto => s.serialize_str("auto"),
            ScaleSetting::Fraction(f) => s.serialize_f64(*f),
        }
    }
}

struct SizeVisitor;
impl Visitor<'_> for SizeVisitor {
    type Value = Size;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(units::SIZE_HELP)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Size, E> {
        units::parse_size(v)
            .map(Size)
            .map_err(|e| E::custom(format!("{e}; expected {}", units::SIZE_HELP)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Size, E> {
        u64::try_from(v)
            .map(Size)
            .map_err(|_| E::custom(format!("negative size {v}; expected {}", units::SIZE_HELP)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Size, E> {
        Ok(Size(v))
    }
}
impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Size, D::Error> {
        d.deserialize_any(SizeVisitor)
    }
}

fn time_from_str<E: de::Error>(v: &str) -> Result<u64, E> {
    units::parse_time_ns(v).map_err(|e| E::custom(format!("{e}; expected {}", units::TIME_HELP)))
}

struct TimeVisitor;
impl Visitor<'_> for TimeVisitor {
    type Value = Time;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(units::TIME_HELP)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Time, E> {
        time_from_str(v).map(Time)
    }
}
impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Time, D::Error> {
        d.deserialize_any(TimeVisitor)
    }
}

struct PageTimeVisitor;
impl<'de> Visitor<'de> for PageTimeVisitor {
    type Value = PageTime;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}, or a list of them per page type", units::TIME_HELP)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<PageTime, E> {
        time_from_str(v).map(PageTime)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PageTime, A::Error> {
        let (mut sum, mut n) = (0u64, 0u64);
        while let Some(t) = seq.next_element::<Time>()? {
            sum += t.0;
            n += 1;
        }
        if n == 0 {
            return Err(de::Error::custom("empty list of page times"));
        }
        Ok(PageTime(sum.div_ceil(n)))
    }
}
impl<'de> Deserialize<'de> for PageTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PageTime, D::Error> {
        d.deserialize_any(PageTimeVisitor)
    }
}

struct TransferRateVisitor;
impl Visitor<'_> for TransferRateVisitor {
    type Value = TransferRate;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a transfer rate such as \"1.2GT/s\" or \"1600MT/s\"")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<TransferRate, E> {
        units::parse_transfers_per_s(v)
            .map(TransferRate)
            .map_err(|e| {
                E::custom(format!(
                    "{e}; expected a transfer rate such as \"1.2GT/s\" or \"1600MT/s\""
                ))
            })
    }
}
impl<'de> Deserialize<'de> for TransferRate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TransferRate, D::Error> {
        d.deserialize_any(TransferRateVisitor)
    }
}

struct ScaleVisitor;
impl Visitor<'_> for ScaleVisitor {
    type Value = ScaleSetting;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("\"auto\" or a fraction of the drive in (0, 1]")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<ScaleSetting, E> {
        if v.eq_ignore_ascii_case("auto") {
            Ok(ScaleSetting::Auto)
        } else {
            Err(E::custom(format!(
                "scale {:?}: expected \"auto\" or a fraction of the drive in (0, 1]",
                flashlab_engine::input::excerpt(v)
            )))
        }
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<ScaleSetting, E> {
        Ok(ScaleSetting::Fraction(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<ScaleSetting, E> {
        Ok(ScaleSetting::Fraction(v as f64))
    }
}
impl<'de> Deserialize<'de> for ScaleSetting {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ScaleSetting, D::Error> {
        d.deserialize_any(ScaleVisitor)
    }
}

/// A data rate in bytes per second ("6.5GB/s", "2Gb/s").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bandwidth(pub u64);

impl Serialize for Bandwidth {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let b = self.0;
        let text = if b.is_multiple_of(1_000_000) {
            format!("{}MB/s", b / 1_000_000)
        } else {
            format!("{b}B/s")
        };
        s.serialize_str(&text)
    }
}

struct BandwidthVisitor;
impl Visitor<'_> for BandwidthVisitor {
    type Value = Bandwidth;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a data rate such as \"6.5GB/s\" or \"360MB/s\"")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Bandwidth, E> {
        units::parse_bytes_per_s(v).map(Bandwidth).map_err(|e| {
            E::custom(format!(
                "{e}; expected a data rate such as \"6.5GB/s\" or \"360MB/s\""
            ))
        })
    }
}
impl<'de> Deserialize<'de> for Bandwidth {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Bandwidth, D::Error> {
        d.deserialize_any(BandwidthVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, Serialize)]
    struct T {
        s: Size,
        t: Time,
        p: PageTime,
        r: TransferRate,
        x: ScaleSetting,
    }

    #[test]
    fn read_and_write_back_exactly() {
        let v: T = toml::from_str(
            "s = \"7.68TB\"\nt = \"350us\"\np = [\"500us\", \"1500us\", \"3ms\"]\nr = \"1.2GT/s\"\nx = \"auto\"",
        )
        .unwrap();
        assert_eq!(v.s, Size(7_680_000_000_000));
        assert_eq!(v.t, Time(350_000));
        assert_eq!(v.p, PageTime(1_666_667));
        assert_eq!(v.r, TransferRate(1_200_000_000));
        assert_eq!(v.x, ScaleSetting::Auto);
        let text = toml::to_string(&v).unwrap();
        assert!(text.contains("s = \"7680GB\""), "{text}");
        assert!(text.contains("t = \"350us\""), "{text}");
        assert!(text.contains("r = \"1200MT/s\""), "{text}");
        let back: T = toml::from_str(&text).unwrap();
        assert_eq!(back.s, v.s);
        assert_eq!(back.p, v.p);
    }

    #[test]
    fn bad_values_name_what_is_valid() {
        let e = toml::from_str::<T>(
            "s = \"12 parsecs\"\nt = \"1us\"\np = \"1us\"\nr = \"1GT/s\"\nx = 1",
        )
        .unwrap_err();
        assert!(e.message().contains("KiB"), "{}", e.message());
        assert_eq!(e.span().map(|s| s.start), Some(4));
        let e =
            toml::from_str::<T>("s = 1\nt = 350\np = \"1us\"\nr = \"1GT/s\"\nx = 1").unwrap_err();
        assert!(e.message().contains("350us"), "{}", e.message());
    }

    #[test]
    fn bandwidth_reads_human_units() {
        #[derive(Debug, Deserialize, Serialize)]
        struct T {
            b: Bandwidth,
        }
        let t: T = toml::from_str("b = \"6.5GB/s\"").unwrap();
        assert_eq!(t.b, Bandwidth(6_500_000_000));
        assert!(toml::to_string(&t).unwrap().contains("6500MB/s"));
        let e = toml::from_str::<T>("b = \"1.2GT/s\"").unwrap_err();
        assert!(e.message().contains("GB/s"), "{}", e.message());
    }
}
