//! Axis planning: the display unit an axis is labelled in, its range and its ticks. Pure
//! functions of the data, so they are tested without drawing anything.
//!
//! Positions are in *plot space*: the displayed value on a linear axis, its base-10 logarithm
//! on a log axis. The drawing code only ever sees plot-space numbers on linear coordinates.

use crate::chart::{Axis, Unit};

/// A labelled tick in plot space.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tick {
    pub pos: f64,
    pub label: String,
}

/// How one axis is drawn.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AxisPlan {
    pub log: bool,
    /// Raw values are divided by this before display (1e6 for B/s shown as MB/s).
    pub divisor: f64,
    /// The axis title with its display unit, e.g. "read latency (ms)".
    pub title: String,
    /// Plot-space range, with a margin so markers at the extremes are not cut by the frame.
    pub lo: f64,
    pub hi: f64,
    pub ticks: Vec<Tick>,
    /// Unlabelled grid lines (2..9 × 10^k on a decimal log axis).
    pub minor: Vec<f64>,
}

impl AxisPlan {
    /// Plot-space position of a raw value; `None` when it cannot be drawn (not finite, or
    /// not positive on a log axis).
    pub fn place(&self, raw: f64) -> Option<f64> {
        let v = raw / self.divisor;
        if !v.is_finite() {
            None
        } else if self.log {
            (v > 0.0).then(|| v.log10())
        } else {
            Some(v)
        }
    }
}

/// Share of the range added on each side.
const MARGIN: f64 = 0.04;
/// About this many labelled ticks on a linear axis.
const LINEAR_TICKS: f64 = 7.0;

/// The unit raw values are shown in, chosen by the largest magnitude on the axis: a reader
/// compares "0.25 ms" faster than "250000 ns".
pub(crate) fn display_unit(unit: Unit, max_abs: f64) -> (f64, &'static str) {
    match unit {
        Unit::BytesPerS if max_abs >= 1e10 => (1e9, "GB/s"),
        Unit::BytesPerS => (1e6, "MB/s"),
        Unit::Ns if max_abs >= 1e10 => (1e9, "s"),
        Unit::Ns if max_abs >= 1e6 => (1e6, "ms"),
        Unit::Ns if max_abs >= 1e3 => (1e3, "µs"),
        Unit::Ns => (1.0, "ns"),
        Unit::Iops => (1.0, "IOPS"),
        Unit::Count | Unit::Ratio => (1.0, ""),
        Unit::Bytes if max_abs >= 1e12 => (1e12, "TB"),
        Unit::Bytes if max_abs >= 1e9 => (1e9, "GB"),
        Unit::Bytes if max_abs >= 1e6 => (1e6, "MB"),
        Unit::Bytes => (1.0, "B"),
        Unit::Percent => (1.0, "%"),
    }
}

/// Plan `axis` for the raw `values` it must show (any value may be NaN or, on a log axis,
/// non-positive: those are ignored). `from_zero` makes a linear axis start at 0 when the data
/// are all positive (throughput and IOPS are read against zero).
pub(crate) fn plan(axis: &Axis, values: &[f64], from_zero: bool) -> AxisPlan {
    let usable = |v: &&f64| v.is_finite() && (!axis.log || **v > 0.0);
    let max_abs = values
        .iter()
        .filter(usable)
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let (divisor, unit) = display_unit(axis.unit, max_abs);
    let shown: Vec<f64> = values.iter().filter(usable).map(|v| v / divisor).collect();
    // "write IOPS" already names its unit; "IOPS (IOPS)" would say it twice.
    let title = if unit.is_empty() || axis.label.contains(unit) {
        axis.label.clone()
    } else if axis.label.is_empty() {
        unit.to_string()
    } else {
        format!("{} ({unit})", axis.label)
    };
    let (ticks, minor, lo, hi) = if axis.log {
        log_ticks(&shown)
    } else {
        linear_ticks(&shown, from_zero)
    };
    let pad = (hi - lo) * MARGIN;
    AxisPlan {
        log: axis.log,
        divisor,
        title,
        lo: lo - pad,
        hi: hi + pad,
        ticks,
        minor,
    }
}

/// 1, 2, 2.5 or 5 × 10^k: the smallest at least `raw`.
fn nice_step(raw: f64) -> f64 {
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag)
}

/// Ticks at multiples of a nice step covering the data; the range is the outermost ticks.
fn linear_ticks(values: &[f64], from_zero: bool) -> (Vec<Tick>, Vec<f64>, f64, f64) {
    let (mut min, mut max) = min_max(values).unwrap_or((0.0, 1.0));
    if from_zero && min > 0.0 {
        min = 0.0;
    }
    if max - min <= f64::EPSILON * max.abs().max(1.0) {
        // One value: centre it in a range of its own size (or 1 around zero).
        let half = if max == 0.0 { 1.0 } else { max.abs() / 2.0 };
        if from_zero && min >= 0.0 {
            (min, max) = (0.0, max + half);
        } else {
            (min, max) = (min - half, max + half);
        }
    }
    let mut step = nice_step((max - min) / LINEAR_TICKS);
    // Whole-number data (rounds, counts) never get fractional ticks.
    if step < 1.0 && values.iter().all(|v| v.fract() == 0.0) && max - min >= 1.0 {
        step = 1.0;
    }
    let first = (min / step + 1e-9).floor() as i64;
    let last = (max / step - 1e-9).ceil() as i64;
    // One suffix for the whole axis: "8000" under "10k" reads as two scales.
    let top = (first.abs().max(last.abs())) as f64 * step;
    let ticks = (first..=last)
        .map(|i| {
            let pos = i as f64 * step;
            Tick {
                pos,
                label: format_in(pos, suffix_for(top)),
            }
        })
        .collect();
    (ticks, Vec::new(), first as f64 * step, last as f64 * step)
}

/// Decimal log axes run between 1-2-5 values around the data, labelled at each decade and,
/// over less than three decades, at 2 and 5 too. Data that are all integer powers of two
/// (queue depths, block sizes) are labelled at each power of two instead.
fn log_ticks(values: &[f64]) -> (Vec<Tick>, Vec<f64>, f64, f64) {
    let (mut min, mut max) = min_max(values).unwrap_or((1.0, 10.0));
    if all_powers_of_two(values) {
        if min == max {
            (min, max) = (min / 2.0, max * 2.0);
        }
        let (a, b) = (min.log2().round() as i32, max.log2().round() as i32);
        // Every other power of two once there are more than a dozen.
        let every = if b - a > 12 { 2 } else { 1 };
        let ticks = (a..=b)
            .step_by(every)
            .map(|e| {
                let v = 2f64.powi(e);
                Tick {
                    pos: v.log10(),
                    label: format_tick(v),
                }
            })
            .collect();
        return (ticks, Vec::new(), min.log10(), max.log10());
    }
    if min == max {
        (min, max) = (min / 2.0, max * 2.0);
    }
    let lo = nice_125_below(min);
    let hi = nice_125_above(max);
    let decades = hi.log10() - lo.log10();
    let mantissas: &[f64] = if decades < 3.0 - 1e-9 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let mut ticks = Vec::new();
    let mut minor = Vec::new();
    let first = lo.log10().floor() as i32;
    let last = hi.log10().ceil() as i32;
    let within = |v: f64| v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9);
    for e in first..=last {
        for m in 1..10 {
            let v = f64::from(m) * 10f64.powi(e);
            if !within(v) {
                continue;
            }
            if mantissas.contains(&f64::from(m)) {
                ticks.push(Tick {
                    pos: v.log10(),
                    label: format_tick(v),
                });
            } else {
                minor.push(v.log10());
            }
        }
    }
    (ticks, minor, lo.log10(), hi.log10())
}

fn min_max(values: &[f64]) -> Option<(f64, f64)> {
    values.iter().fold(None, |acc, &v| match acc {
        None => Some((v, v)),
        Some((a, b)) => Some((a.min(v), b.max(v))),
    })
}

fn all_powers_of_two(values: &[f64]) -> bool {
    !values.is_empty()
        && values.iter().all(|&v| {
            v >= 1.0 && v.fract() == 0.0 && v < 2f64.powi(53) && (v as u64).is_power_of_two()
        })
}

/// The largest 1, 2 or 5 × 10^k not above `v` (> 0).
fn nice_125_below(v: f64) -> f64 {
    let mag = 10f64.powf(v.log10().floor());
    [5.0, 2.0, 1.0]
        .iter()
        .map(|m| m * mag)
        .find(|c| *c <= v * (1.0 + 1e-9))
        .unwrap_or(mag)
}

/// The smallest 1, 2 or 5 × 10^k not below `v` (> 0).
fn nice_125_above(v: f64) -> f64 {
    let mag = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|c| *c >= v * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag)
}

/// A value as a label beside a chart whose axis of `unit` shows `axis_values`: in the
/// axis's display unit and with its tick suffix, so a bar's "18.11" stands on an axis in
/// GB/s rather than "18110" in MB/s.
pub fn value_label(unit: Unit, axis_values: &[f64], v: f64) -> String {
    let max_abs = axis_values
        .iter()
        .filter(|v| v.is_finite())
        .fold(v.abs(), |m, x| m.max(x.abs()));
    let (divisor, _) = display_unit(unit, max_abs);
    format_in(v / divisor, suffix_for(max_abs / divisor))
}

/// A tick label: at most four significant digits, no trailing zeros, thousands as k and
/// millions as M ("150k", "2.5", "0.02").
pub(crate) fn format_tick(v: f64) -> String {
    format_in(v, suffix_for(v))
}

/// The suffix and its factor a value of this magnitude is written with.
fn suffix_for(v: f64) -> (f64, &'static str) {
    match v.abs() {
        a if a >= 1e9 => (1e9, "G"),
        a if a >= 1e6 => (1e6, "M"),
        a if a >= 1e4 => (1e3, "k"),
        _ => (1.0, ""),
    }
}

/// `v` written with a given suffix, at most four significant digits, no trailing zeros.
fn format_in(v: f64, (factor, suffix): (f64, &'static str)) -> String {
    if v == 0.0 || !v.is_finite() {
        return "0".into();
    }
    let scaled = v / factor;
    let digits = (3 - scaled.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let mut s = format!("{scaled:.digits$}");
    if s.contains('.') {
        s = s.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    if s == "-0" {
        s = "0".into();
    }
    s + suffix
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(p: &AxisPlan) -> Vec<&str> {
        p.ticks.iter().map(|t| t.label.as_str()).collect()
    }

    #[test]
    fn tick_labels_are_short_and_exact() {
        assert_eq!(format_tick(0.0), "0");
        assert_eq!(format_tick(0.2 + 1e-17), "0.2");
        assert_eq!(format_tick(0.30000000000000004), "0.3");
        assert_eq!(format_tick(2.5), "2.5");
        assert_eq!(format_tick(150.0), "150");
        assert_eq!(format_tick(5000.0), "5000");
        assert_eq!(format_tick(12_500.0), "12.5k");
        assert_eq!(format_tick(150_000.0), "150k");
        assert_eq!(format_tick(2_000_000.0), "2M");
        assert_eq!(format_tick(-2.5), "-2.5");
    }

    #[test]
    fn decimal_log_axis_ticks_each_decade_and_shades_the_rest() {
        // 65 µs .. 509 ms, in ns: shown in ms over 0.05 .. 1000, four and a bit decades.
        let p = plan(
            &Axis::log("read latency", Unit::Ns),
            &[65e3, 9e5, 509.6e6],
            false,
        );
        assert_eq!(p.title, "read latency (ms)");
        assert_eq!(p.divisor, 1e6);
        assert_eq!(labels(&p), ["0.1", "1", "10", "100", "1000"]);
        assert!((p.ticks[0].pos - (-1.0)).abs() < 1e-12);
        // 2..9 × 10^k inside the range are light lines, the decades are not among them.
        assert!(p.minor.iter().any(|m| (m - 0.2f64.log10()).abs() < 1e-12));
        assert!(!p.minor.iter().any(|m| (m - 1.0).abs() < 1e-12));
        // The range covers 0.05 .. 1000 plus the margin.
        assert!(p.lo < 0.05f64.log10() && p.hi > 3.0);
        assert_eq!(p.place(-1.0), None);
        assert_eq!(p.place(f64::NAN), None);
        assert!((p.place(1e6).unwrap() - 0.0).abs() < 1e-12);
    }

    #[test]
    fn narrow_log_axis_adds_2_and_5() {
        let p = plan(&Axis::log("latency", Unit::Ns), &[120e3, 800e3], false);
        assert_eq!(p.title, "latency (µs)");
        assert_eq!(labels(&p), ["100", "200", "500", "1000"]);
    }

    #[test]
    fn powers_of_two_are_ticked_as_such() {
        let p = plan(
            &Axis::log("queue depth", Unit::Count),
            &[1.0, 8.0, 32.0, 256.0],
            false,
        );
        assert_eq!(
            labels(&p),
            ["1", "2", "4", "8", "16", "32", "64", "128", "256"]
        );
        assert_eq!(p.title, "queue depth");
        let one = plan(&Axis::log("queue depth", Unit::Count), &[8.0], false);
        assert_eq!(labels(&one), ["4", "8", "16"]);
    }

    #[test]
    fn linear_ticks_share_one_suffix() {
        // A write axis up to 10,000 IOPS: "8000" under "10k" would read as two scales.
        let p = plan(&Axis::linear("write IOPS", Unit::Iops), &[9_100.0], true);
        assert_eq!(labels(&p), ["0", "2k", "4k", "6k", "8k", "10k"]);
    }

    #[test]
    fn value_labels_use_the_axis_unit() {
        // 18,110 MB/s on an axis that reaches 10^10 B/s is labelled in GB/s like the axis.
        let all = [18.11e9, 3.2e9];
        let p = plan(&Axis::linear("read bandwidth", Unit::BytesPerS), &all, true);
        assert_eq!(p.title, "read bandwidth (GB/s)");
        assert_eq!(value_label(Unit::BytesPerS, &all, 18.11e9), "18.11");
        assert_eq!(value_label(Unit::BytesPerS, &all, 3.2e9), "3.2");
        assert_eq!(value_label(Unit::BytesPerS, &[2.5e9], 2.5e9), "2500");
        assert_eq!(value_label(Unit::Iops, &[12_000.0], 9_000.0), "9k");
    }

    #[test]
    fn linear_axis_from_zero_with_nice_steps() {
        let p = plan(
            &Axis::linear("throughput", Unit::BytesPerS),
            &[1.2e9, 3.1e9, f64::NAN],
            true,
        );
        assert_eq!(p.title, "throughput (MB/s)");
        assert_eq!(
            labels(&p),
            ["0", "500", "1000", "1500", "2000", "2500", "3000", "3500"]
        );
        assert!(p.lo < 0.0 && p.hi > 3500.0);
    }

    #[test]
    fn unit_is_not_repeated_in_the_title() {
        let p = plan(&Axis::linear("write IOPS", Unit::Iops), &[1.0], true);
        assert_eq!(p.title, "write IOPS");
        let p = plan(&Axis::linear("", Unit::Ns), &[1.0], true);
        assert_eq!(p.title, "ns");
    }

    #[test]
    fn whole_number_axis_never_gets_fractional_ticks() {
        let p = plan(&Axis::linear("round", Unit::Count), &[1.0, 2.0, 3.0], false);
        assert_eq!(labels(&p), ["1", "2", "3"]);
    }

    #[test]
    fn empty_and_constant_axes_still_have_a_range() {
        for values in [&[][..], &[f64::NAN][..], &[5.0][..], &[0.0][..]] {
            for log in [false, true] {
                let axis = Axis {
                    label: "x".into(),
                    unit: Unit::Iops,
                    log,
                };
                let p = plan(&axis, values, false);
                assert!(p.lo < p.hi, "{values:?} log={log}: {p:?}");
                assert!(p.ticks.len() >= 2, "{values:?} log={log}: {p:?}");
            }
        }
    }
}
