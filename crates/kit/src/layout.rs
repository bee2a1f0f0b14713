//! A report's results laid out in its suite's grids ([`crate::GridSpec`]): the rows found
//! among the results, and each device's grid as text cells for the table and the HTML report.

use crate::format::format_value;
use crate::grids::{GridSpec, RowKey};
use crate::measure::Measure;
use crate::suite::{DeviceReport, SuiteKind, SuiteReport};
use crate::Unit;

/// A grid with the rows found among a report's results (first-seen order over devices).
pub struct Grid {
    pub spec: &'static GridSpec,
    pub rows: Vec<RowKey>,
}

/// One device's grid as text cells: the header and one row per row key that has a value;
/// columns without any value are left out. None when no cell has a value.
pub struct GridTable {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// Titles of the grids a suite's output lays out, in order (each shown when its family of
/// results is there).
pub fn grid_titles(kind: SuiteKind) -> Vec<&'static str> {
    kind.grids().iter().map(|s| s.title).collect()
}

/// The grids of a report: each of its suite's families that has at least one row.
pub fn grids(report: &SuiteReport) -> Vec<Grid> {
    report
        .suite
        .grids()
        .iter()
        .filter_map(|spec| {
            let mut rows: Vec<RowKey> = Vec::new();
            for m in report.devices.iter().flat_map(|d| &d.results) {
                if let Some((row, _)) = spec.place(m) {
                    if !rows.contains(&row) {
                        rows.push(row);
                    }
                }
            }
            (!rows.is_empty()).then_some(Grid { spec, rows })
        })
        .collect()
}

impl Grid {
    /// The measure of `d` in `row` and column `col`.
    fn cell<'d>(&self, d: &'d DeviceReport, row: &RowKey, col: usize) -> Option<&'d Measure> {
        d.results.iter().find(|m| {
            self.spec
                .place(m)
                .is_some_and(|(r, c)| c == col && r == *row)
        })
    }

    pub fn table(&self, d: &DeviceReport) -> Option<GridTable> {
        let spec = self.spec;
        // Per column: its label and, when all its cells are IOPS or all MB/s, that unit,
        // said once in the heading instead of in every cell.
        let used: Vec<(String, usize, Option<&str>)> = spec
            .col_labels()
            .into_iter()
            .enumerate()
            .filter_map(|(col, label)| {
                let units: Vec<Unit> = self
                    .rows
                    .iter()
                    .filter_map(|row| self.cell(d, row, col).map(|m| m.unit))
                    .collect();
                let first = *units.first()?;
                let suffix = match first {
                    Unit::Iops => Some(" IOPS"),
                    Unit::BytesPerS => Some(" MB/s"),
                    _ => None,
                }
                .filter(|_| units.iter().all(|&u| u == first));
                Some((label.to_string(), col, suffix))
            })
            .collect();
        // The unit goes into a heading unless the label says it, or every column has it
        // and the title says it (the PTS matrix: "IOPS by block size and ...").
        let one_unit = used.iter().all(|c| c.2.is_some() && c.2 == used[0].2);
        let used: Vec<(String, usize, Option<&str>)> = used
            .into_iter()
            .map(|(label, col, suffix)| {
                let said = |sfx: &str| {
                    let unit = sfx.trim();
                    label.contains(unit) || (one_unit && spec.title.contains(unit))
                };
                match suffix {
                    Some(sfx) if !said(sfx) => (format!("{label},{sfx}"), col, suffix),
                    _ => (label, col, suffix),
                }
            })
            .collect();
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .filter_map(|row| {
                let cells: Vec<Option<String>> = used
                    .iter()
                    .map(|&(_, col, suffix)| {
                        self.cell(d, row, col).map(|m| {
                            let text = format_value(m.unit, m.value);
                            match suffix.and_then(|sfx| text.strip_suffix(sfx)) {
                                Some(number) => number.to_string(),
                                None => text,
                            }
                        })
                    })
                    .collect();
                cells.iter().any(Option::is_some).then(|| {
                    std::iter::once(spec.label(row))
                        .chain(cells.into_iter().map(|c| c.unwrap_or_else(|| "-".into())))
                        .collect()
                })
            })
            .collect();
        if rows.is_empty() {
            return None;
        }
        let header = std::iter::once(spec.row_header.to_string())
            .chain(used.into_iter().map(|(heading, _, _)| heading))
            .collect();
        Some(GridTable { header, rows })
    }
}

/// A grid's title, naming the device when the report compares several.
pub fn grid_title(title: &str, report: &SuiteReport, d: &DeviceReport) -> String {
    if report.devices.len() > 1 {
        format!("{title}: {}", d.device)
    } else {
        title.to_string()
    }
}
