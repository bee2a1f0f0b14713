//! Results as text: the key list's rows, a value in its unit, the steady-state cell. The
//! terminal table, the grids and the HTML report share them.

use crate::{DeviceReport, Measure, SuiteReport, Unit};

/// Metric keys of all devices, first-seen order (devices may differ, e.g. in round count),
/// with a measure of each (the first seen).
pub fn metric_rows(report: &SuiteReport) -> Vec<(String, &Measure)> {
    let mut rows: Vec<(String, &Measure)> = Vec::new();
    for d in &report.devices {
        for m in &d.results {
            if !rows
                .iter()
                .any(|(_, seen)| seen.is(m.family, &m.row, m.col))
            {
                rows.push((m.key(), m));
            }
        }
    }
    rows
}

/// The measure of `d` that is `like` (same family, row and column).
pub fn find<'a>(d: &'a DeviceReport, like: &Measure) -> Option<&'a Measure> {
    d.results
        .iter()
        .find(|m| m.is(like.family, &like.row, like.col))
}

pub fn format_value(unit: Unit, v: f64) -> String {
    match unit {
        Unit::BytesPerS => format!("{:.1} MB/s", v / 1e6),
        Unit::Iops => format!("{v:.0} IOPS"),
        Unit::Ns if v >= 1e6 => format!("{:.2} ms", v / 1e6),
        Unit::Ns if v >= 1e3 => format!("{:.1} us", v / 1e3),
        Unit::Ns => format!("{v:.0} ns"),
        Unit::Count => format!("{v:.0}"),
        Unit::Ratio => format!("{v:.3}"),
        Unit::Percent => format!("{v:.3} %"),
        Unit::Bytes if v.abs() >= 1e12 => format!("{:.2} TB", v / 1e12),
        Unit::Bytes if v.abs() >= 1e9 => format!("{:.2} GB", v / 1e9),
        Unit::Bytes if v.abs() >= 1e6 => format!("{:.1} MB", v / 1e6),
        Unit::Bytes => format!("{v:.0} B"),
    }
}

pub fn steady_cell(d: &DeviceReport) -> String {
    match &d.steady {
        None => "-".into(),
        Some(st) => match st.verdict.round {
            Some(r) => format!("round {r}"),
            None => format!("not reached ({} rounds)", st.rounds_iops.len()),
        },
    }
}

/// A whole number with its thousands separated: 14293745664 → "14,293,745,664".
pub use flashlab_device::units::grouped;
