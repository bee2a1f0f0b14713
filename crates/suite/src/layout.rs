//! A report's results laid out in its suite's grids ([`crate::GridSpec`]): the rows found
//! among the results, and each device's grid as text cells for the table and the HTML report.

use crate::format::format_value;
use crate::grids::{GridSpec, RowKey};
use crate::measure::Measure;
use crate::suite::{DeviceReport, SuiteKind, SuiteReport};
use crate::Unit;

/// A grid with the rows found among a report's results (first-seen order over devices).
pub(crate) struct Grid {
    pub spec: &'static GridSpec,
    pub rows: Vec<RowKey>,
}

/// One device's grid as text cells: the header and one row per row key that has a value;
/// columns without any value are left out. None when no cell has a value.
pub(crate) struct GridTable {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// Titles of the grids a suite's output lays out, in order (each shown when its family of
/// results is there).
pub fn grid_titles(kind: SuiteKind) -> Vec<&'static str> {
    kind.grids().iter().map(|s| s.title).collect()
}

/// The grids of a report: each of its suite's families that has at least one row.
pub(crate) fn grids(report: &SuiteReport) -> Vec<Grid> {
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
pub(crate) fn grid_title(title: &str, report: &SuiteReport, d: &DeviceReport) -> String {
    if report.devices.len() > 1 {
        format!("{title}: {}", d.device)
    } else {
        title.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Coord;
    use crate::suite;
    use crate::SuiteOptions;

    fn device(name: &str, results: Vec<Measure>) -> DeviceReport {
        DeviceReport {
            device: name.into(),
            scale_note: None,
            steps: Vec::new(),
            steady: None,
            results,
            charts: Vec::new(),
        }
    }

    fn report(suite: SuiteKind, devices: Vec<DeviceReport>) -> SuiteReport {
        SuiteReport {
            suite,
            options: SuiteOptions::default(),
            devices,
        }
    }

    fn at(family: &'static str, unit: Unit, value: f64, row: &[Coord]) -> Measure {
        Measure::new(family, unit, value).under(row)
    }

    fn rows(g: &Grid) -> Vec<String> {
        g.rows.iter().map(|r| g.spec.label(r)).collect()
    }

    #[test]
    fn qos_rows_are_the_depths_and_other_figures_make_no_rows() {
        let (qd1, qd32) = ([Coord::Depth(1)], [Coord::Depth(32)]);
        let p99_9 = Coord::Percentile(99.9);
        let d = device(
            "a",
            vec![
                Measure::new("steady_write_iops", Unit::Iops, 9.0),
                at("iops", Unit::Iops, 100.0, &qd1),
                at("read_iops", Unit::Iops, 70.0, &qd1),
                at("read_lat_ns", Unit::Ns, 2_500_000.0, &qd1).col(p99_9),
                at("iops", Unit::Iops, 900.0, &qd32),
                at("read_iops", Unit::Iops, 630.0, &qd32),
                at("read_lat_ns", Unit::Ns, 9_000_000.0, &qd32).col(p99_9),
            ],
        );
        assert_eq!(d.results[3].key(), "qd1_read_lat_p99_9_ns");
        let r = report(suite("qos").unwrap(), vec![d]);
        let g = grids(&r);
        assert_eq!(g.len(), 1);
        assert_eq!(rows(&g[0]), ["1", "32"]);
        let t = g[0].table(&r.devices[0]).expect("cells");
        // Columns with no value (write IOPS, the other percentiles) are left out.
        // IOPS are said once, in the heading; latencies keep their own units.
        assert_eq!(t.header, ["queue depth", "IOPS", "read IOPS", "p99.9"]);
        assert_eq!(
            t.rows,
            [
                ["1", "100", "70", "2.50 ms"],
                ["32", "900", "630", "9.00 ms"],
            ]
        );
    }

    #[test]
    fn pts_iops_is_a_matrix_of_block_sizes_by_mix() {
        let cell = |mix, bs, v| at("iops", Unit::Iops, v, &[Coord::Mix(mix), Coord::Block(bs)]);
        let tracked = [Coord::Phase("tracked"), Coord::Mix(0), Coord::Block(4096)];
        let d = device(
            "a",
            vec![
                at("iops", Unit::Iops, 5.0, &tracked),
                cell(100, 128 << 10, 1.0),
                cell(100, 4096, 2.0),
                cell(0, 128 << 10, 3.0),
                cell(0, 4096, 4.0),
            ],
        );
        assert_eq!(d.results[0].key(), "tracked_r0w100_4k_iops");
        let r = report(suite("pts-iops").unwrap(), vec![d]);
        let g = grids(&r);
        assert_eq!(rows(&g[0]), ["128k", "4k"]);
        let t = g[0].table(&r.devices[0]).unwrap();
        // Every column in IOPS, and the title says so: the headings are the mixes alone.
        assert_eq!(t.header, ["block size", "100/0", "0/100"]);
        assert_eq!(t.rows[1], ["4k", "2", "4"]);
    }

    #[test]
    fn a_row_needs_every_axis_of_its_family() {
        let step = [Coord::WriteSize(8192), Coord::Step(1)];
        let wp = device(
            "a",
            vec![
                at("target_write_bw_bytes_per_s", Unit::BytesPerS, 1e8, &step),
                at("write_bw_bytes_per_s", Unit::BytesPerS, 9e7, &step),
                at(
                    "ceiling_write_bw_bytes_per_s",
                    Unit::BytesPerS,
                    1e8,
                    &[Coord::WriteSize(8192)],
                ),
            ],
        );
        let g = grids(&report(suite("write-pressure").unwrap(), vec![wp]));
        assert_eq!(rows(&g[0]), ["bs8k step001"]);
        let sql = Coord::Profile("sql");
        let app = device(
            "a",
            vec![
                at("iops", Unit::Iops, 1.0, &[sql, Coord::Load(1)]),
                at("read_lat_avg_ns", Unit::Ns, 1.0, &[sql, Coord::Load(1)]),
                at(
                    "lat_avg_ns",
                    Unit::Ns,
                    1.0,
                    &[Coord::Profile("sql-90-10"), Coord::Load(16)],
                ),
                at("peak_iops", Unit::Iops, 1.0, &[sql]),
            ],
        );
        let g = grids(&report(suite("app-profiles").unwrap(), vec![app]));
        assert_eq!(rows(&g[0]), ["sql load1", "sql 90 10 load16"]);
    }

    #[test]
    fn devices_share_the_rows_and_each_shows_only_its_own() {
        let iops = |d, v| at("iops", Unit::Iops, v, &[Coord::Depth(d)]);
        let a = device("a", vec![iops(1, 1.0)]);
        let b = device("b", vec![iops(1, 2.0), iops(8, 3.0)]);
        let r = report(suite("qos").unwrap(), vec![a, b]);
        let g = grids(&r);
        assert_eq!(rows(&g[0]), ["1", "8"]);
        assert_eq!(g[0].table(&r.devices[0]).unwrap().rows.len(), 1);
        assert_eq!(g[0].table(&r.devices[1]).unwrap().rows.len(), 2);
        assert_eq!(
            grid_title(g[0].spec.title, &r, &r.devices[1]),
            "IOPS and read latency per queue depth: b"
        );
    }

    #[test]
    fn health_fields_are_rows_and_before_and_after_columns() {
        let d = device(
            "a",
            vec![
                at(
                    "percentage_used",
                    Unit::Percent,
                    1.0,
                    &[Coord::Phase("before")],
                ),
                at(
                    "percentage_used",
                    Unit::Percent,
                    3.0,
                    &[Coord::Phase("after")],
                ),
                Measure::new("write_amplification", Unit::Ratio, 2.0),
            ],
        );
        let r = report(suite("endurance").unwrap(), vec![d]);
        let t = grids(&r)[0].table(&r.devices[0]).unwrap();
        assert_eq!(t.header, ["field", "before", "after"]);
        assert_eq!(t.rows, [["percentage_used", "1.000 %", "3.000 %"]]);
    }

    #[test]
    fn a_suite_without_the_family_has_no_grid() {
        let d = device(
            "a",
            vec![Measure::new("steady_write_iops", Unit::Iops, 1.0)],
        );
        assert!(grids(&report(suite("qos").unwrap(), vec![d.clone()])).is_empty());
        assert!(grids(&report(suite("four-corners").unwrap(), vec![d])).is_empty());
    }
}
