//! Results laid out as grids. A suite names its results in families, `{row}_{col}` or the
//! like: a row per queue depth, block size, step or power state and the same columns in each
//! (IOPS, latency percentiles, bandwidth). The key list keeps every result greppable; a grid
//! shows one family the way reviewers tabulate it (the SNIA PTS IOPS matrix, QoS per queue
//! depth). Grids are data: a name template, the columns, and which rows belong; the rows are
//! found among the results, so a grid follows the options (depths, steps, block sizes) and
//! shows nothing when its family is absent.

use crate::format::{find, format_value};
use crate::{DeviceReport, SuiteKind, SuiteReport, Unit};

/// One family of results as rows and columns (a suite lists its own, [`crate::Suite::grids`]).
pub struct GridSpec {
    pub(crate) title: &'static str,
    /// Heading of the row labels' column.
    pub(crate) row_header: &'static str,
    /// A result's name, with `{row}` and `{col}` standing for the row and column keys.
    template: &'static str,
    /// (label, key) of each column, in order.
    cols: &'static [(&'static str, &'static str)],
    /// Whether a candidate row key belongs to the family (the template alone can match a
    /// longer name through a shorter column key: `qd8_read_iops` as row `qd8_read`, column
    /// `iops`).
    row_ok: fn(&str) -> bool,
    row_label: fn(&str) -> String,
}

/// A grid with the row keys found among a report's results (first-seen order over devices).
pub(crate) struct Grid {
    pub spec: &'static GridSpec,
    pub rows: Vec<String>,
}

/// One device's grid as text cells: the header and one row per row key that has a value;
/// columns without any value are left out. None when no cell has a value.
pub(crate) struct GridTable {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl GridSpec {
    fn name(&self, row: &str, col: &str) -> String {
        self.template.replace("{col}", col).replace("{row}", row)
    }

    /// The row key of result `name` under column `col`, if it is one of this family's.
    fn row_of<'n>(&self, name: &'n str, col: &str) -> Option<&'n str> {
        let pattern = self.template.replace("{col}", col);
        let (pre, post) = pattern.split_once("{row}")?;
        let row = name.strip_prefix(pre)?.strip_suffix(post)?;
        (!row.is_empty() && (self.row_ok)(row)).then_some(row)
    }
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
            let mut rows: Vec<String> = Vec::new();
            for m in report.devices.iter().flat_map(|d| &d.results) {
                for (_, col) in spec.cols {
                    if let Some(row) = spec.row_of(&m.name, col) {
                        if !rows.iter().any(|r| r == row) {
                            rows.push(row.to_string());
                        }
                    }
                }
            }
            (!rows.is_empty()).then_some(Grid { spec, rows })
        })
        .collect()
}

impl Grid {
    pub fn table(&self, d: &DeviceReport) -> Option<GridTable> {
        let spec = self.spec;
        // Per column: its label and, when all its cells are IOPS or all MB/s, that unit,
        // said once in the heading instead of in every cell.
        let used: Vec<(String, &str, Option<&str>)> = spec
            .cols
            .iter()
            .filter_map(|&(label, col)| {
                let units: Vec<Unit> = self
                    .rows
                    .iter()
                    .filter_map(|row| find(d, &spec.name(row, col)).map(|m| m.unit))
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
        let used: Vec<(String, &str, Option<&str>)> = used
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
                        find(d, &spec.name(row, col)).map(|m| {
                            let text = format_value(m.unit, m.value);
                            match suffix.and_then(|sfx| text.strip_suffix(sfx)) {
                                Some(number) => number.to_string(),
                                None => text,
                            }
                        })
                    })
                    .collect();
                cells.iter().any(Option::is_some).then(|| {
                    std::iter::once((spec.row_label)(row))
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

fn any(_: &str) -> bool {
    true
}

fn spaced(row: &str) -> String {
    row.replace('_', " ")
}

/// `qd8` → `8`.
fn depth_label(row: &str) -> String {
    row.trim_start_matches("qd").to_string()
}

fn is_depth(row: &str) -> bool {
    row.strip_prefix("qd")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// `r65w35` → `65/35`.
fn mix_label(mix: &str) -> String {
    mix.trim_start_matches('r').replace('w', "/")
}

fn is_mix(mix: &str) -> bool {
    mix.strip_prefix('r')
        .and_then(|m| m.split_once('w'))
        .is_some_and(|(r, w)| {
            !r.is_empty() && !w.is_empty() && r.bytes().chain(w.bytes()).all(|b| b.is_ascii_digit())
        })
}

/// `r65w35_4k` → `65/35, 4k`.
fn mix_block_label(row: &str) -> String {
    match row.split_once('_') {
        Some((mix, bs)) => format!("{}, {bs}", mix_label(mix)),
        None => row.to_string(),
    }
}

fn is_mix_block(row: &str) -> bool {
    row.split_once('_')
        .is_some_and(|(mix, bs)| is_mix(mix) && !bs.is_empty() && !bs.contains('_'))
}

/// Whether `row` ends in `marker` and a number (`sql_load16` for `_load`).
fn ends_in_number_after(row: &str, marker: &str) -> bool {
    row.rsplit_once(marker)
        .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn is_block(row: &str) -> bool {
    !row.is_empty() && !row.contains('_')
}

const READ_WRITE_BW_IOPS: &[(&str, &str)] = &[
    ("read", "read_bw_bytes_per_s"),
    ("read IOPS", "read_iops"),
    ("write", "write_bw_bytes_per_s"),
    ("write IOPS", "write_iops"),
];

pub(crate) const QOS: GridSpec = GridSpec {
    title: "IOPS and read latency per queue depth",
    row_header: "queue depth",
    template: "{row}_{col}",
    cols: &[
        ("IOPS", "iops"),
        ("read IOPS", "read_iops"),
        ("write IOPS", "write_iops"),
        ("read avg", "read_lat_avg_ns"),
        ("p99", "read_lat_p99_ns"),
        ("p99.9", "read_lat_p99_9_ns"),
        ("p99.99", "read_lat_p99_99_ns"),
        ("p99.9999", "read_lat_p99_9999_ns"),
    ],
    row_ok: is_depth,
    row_label: depth_label,
};

pub(crate) const PTS_IOPS: GridSpec = GridSpec {
    title: "IOPS by block size and read/write mix (SNIA PTS)",
    row_header: "block size",
    template: "{col}_{row}_iops",
    cols: &[
        ("100/0", "r100w0"),
        ("95/5", "r95w5"),
        ("65/35", "r65w35"),
        ("50/50", "r50w50"),
        ("35/65", "r35w65"),
        ("5/95", "r5w95"),
        ("0/100", "r0w100"),
    ],
    row_ok: is_block,
    row_label: str::to_string,
};

pub(crate) const PTS_THROUGHPUT: GridSpec = GridSpec {
    title: "Sequential throughput per block size (SNIA PTS)",
    row_header: "block size",
    template: "seq_{row}_{col}",
    cols: &[
        ("read", "read_bw_bytes_per_s"),
        ("write", "write_bw_bytes_per_s"),
        ("rounds", "rounds"),
        ("steady in round", "steady_round"),
    ],
    row_ok: is_block,
    row_label: str::to_string,
};

pub(crate) const PTS_LATENCY: GridSpec = GridSpec {
    title: "Response time at QD1 by read/write mix and block size (SNIA PTS)",
    row_header: "mix, block size",
    template: "{row}_{col}",
    cols: &[
        ("mean", "lat_mean_ns"),
        ("p99.999", "lat_p99_999_ns"),
        ("max", "lat_max_ns"),
    ],
    row_ok: is_mix_block,
    row_label: mix_block_label,
};

pub(crate) const TRANSFER_SWEEP: GridSpec = GridSpec {
    title: "Throughput per transfer size",
    row_header: "transfer size",
    template: "xfer_{row}_{col}",
    cols: READ_WRITE_BW_IOPS,
    row_ok: is_block,
    row_label: str::to_string,
};

pub(crate) const DESKTOP: GridSpec = GridSpec {
    title: "Desktop benchmark tests",
    row_header: "test",
    template: "{row}_{col}",
    cols: READ_WRITE_BW_IOPS,
    row_ok: |row| {
        let test = row.rsplit('_').nth(1).unwrap_or("");
        (test.starts_with("seq") || test.starts_with("rnd")) && row.contains("_q")
    },
    row_label: spaced,
};

pub(crate) const COMPRESSION: GridSpec = GridSpec {
    title: "Throughput per share of compressible data",
    row_header: "compressible, %",
    template: "compress{row}_{col}",
    cols: &[
        ("write", "write_bw_bytes_per_s"),
        ("read", "read_bw_bytes_per_s"),
    ],
    row_ok: |row| row.bytes().all(|b| b.is_ascii_digit()),
    row_label: str::to_string,
};

pub(crate) const RECOVERY: GridSpec = GridSpec {
    title: "Sequential probes after random writes and idle time",
    row_header: "random writes, idle",
    template: "{row}_{col}",
    cols: &[
        ("free blocks", "free_blocks"),
        ("sequential write", "seq_write_bw_bytes_per_s"),
        ("sequential read", "seq_read_bw_bytes_per_s"),
    ],
    row_ok: |row| row.starts_with("dirty") && row.contains("_idle"),
    row_label: spaced,
};

pub(crate) const RECOVERY_HIR: GridSpec = GridSpec {
    title: "Host idle recovery: bursts after each idle time",
    row_header: "idle after each burst",
    template: "hir_idle{row}_{col}",
    cols: &[
        ("mean burst", "mean_burst_iops"),
        ("max burst", "max_burst_iops"),
        ("mean burst / baseline", "mean_burst_vs_baseline"),
        ("baseline after", "baseline_iops"),
    ],
    row_ok: any,
    row_label: |row| row.replace('_', "."),
};

pub(crate) const OP_SWEEP: GridSpec = GridSpec {
    title: "Extra spare area: capacity, steady random writes and endurance",
    row_header: "extra spare, % of user capacity",
    template: "op{row}_{col}",
    cols: &[
        ("user capacity", "user_bytes"),
        ("capacity lost", "capacity_lost_percent"),
        ("effective spare", "effective_spare_percent"),
        ("steady write IOPS", "steady_write_iops"),
        ("write amplification", "write_amplification"),
        ("projected TB written", "projected_tbw_bytes"),
    ],
    row_ok: |row| row.bytes().all(|b| b.is_ascii_digit()),
    row_label: str::to_string,
};

pub(crate) const ENDURANCE_HEALTH: GridSpec = GridSpec {
    title: "Health log before and after the workload",
    row_header: "field",
    template: "{col}_{row}",
    cols: &[("before", "before"), ("after", "after")],
    row_ok: any,
    row_label: str::to_string,
};

pub(crate) const RAID_SCALING: GridSpec = GridSpec {
    title: "Array throughput per level and member count",
    row_header: "state, level, members",
    template: "{row}_{col}",
    cols: &[
        ("sequential write", "seq_write_bw_bytes_per_s"),
        ("sequential read", "seq_read_bw_bytes_per_s"),
        ("random write IOPS", "rand_write_iops"),
        ("random read IOPS", "rand_read_iops"),
    ],
    row_ok: |row| row.contains("_raid") && row.contains("_x"),
    row_label: spaced,
};

pub(crate) const CACHE_PASSES: GridSpec = GridSpec {
    title: "Desktop tests per pass",
    row_header: "pass, test",
    template: "{row}_{col}",
    cols: READ_WRITE_BW_IOPS,
    row_ok: |row| row.starts_with("pass") && row.contains("_q"),
    row_label: spaced,
};

pub(crate) const WRITE_PRESSURE: GridSpec = GridSpec {
    title: "Read latency per write-bandwidth step",
    row_header: "write size, step",
    template: "{row}_{col}",
    cols: &[
        ("target write", "target_write_bw_bytes_per_s"),
        ("achieved write", "write_bw_bytes_per_s"),
        ("read IOPS", "read_iops"),
        ("read avg", "read_lat_avg_ns"),
        ("p99", "read_lat_p99_ns"),
        ("p99.9", "read_lat_p99_9_ns"),
        ("p99.99", "read_lat_p99_99_ns"),
    ],
    row_ok: |row| row.starts_with("bs") && ends_in_number_after(row, "_step"),
    row_label: spaced,
};

pub(crate) const NOISY_NEIGHBOR: GridSpec = GridSpec {
    title: "Quiet namespaces' reads, alone and beside the neighbours",
    row_header: "phase, namespace",
    template: "{row}_{col}",
    cols: &[
        ("read IOPS", "read_iops"),
        ("read avg", "read_lat_avg_ns"),
        ("p99.99", "read_lat_p99_99_ns"),
        ("p99.9999", "read_lat_p99_9999_ns"),
    ],
    row_ok: |row| row.starts_with("alone_") || row.starts_with("neighbours_"),
    row_label: spaced,
};

pub(crate) const POWER: GridSpec = GridSpec {
    title: "Power per test and power state",
    row_header: "state, test",
    template: "{row}_{col}",
    cols: &[
        ("average W", "avg_power_w"),
        ("peak W", "peak_power_w"),
        ("throughput", "bw_bytes_per_s"),
        ("IOPS", "iops"),
        ("MB/s per W", "mb_per_s_per_w"),
        ("IOPS per W", "iops_per_w"),
    ],
    row_ok: |row| row.starts_with("ps") && row.contains('_'),
    row_label: spaced,
};

pub(crate) const APP_PROFILES: GridSpec = GridSpec {
    title: "Application profiles: IOPS against latency per load",
    row_header: "profile, load",
    template: "{row}_{col}",
    cols: &[
        ("IOPS", "iops"),
        ("read IOPS", "read_iops"),
        ("write IOPS", "write_iops"),
        ("avg", "lat_avg_ns"),
        ("p99", "lat_p99_ns"),
        ("read avg", "read_lat_avg_ns"),
        ("write avg", "write_lat_avg_ns"),
    ],
    row_ok: |row| ends_in_number_after(row, "_load"),
    row_label: spaced,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite;
    use crate::{Measure, SuiteOptions, Unit};

    fn device(name: &str, results: &[(&str, Unit, f64)]) -> DeviceReport {
        DeviceReport {
            device: name.into(),
            scale_note: None,
            steps: Vec::new(),
            steady: None,
            results: results
                .iter()
                .map(|&(n, unit, value)| Measure {
                    name: n.into(),
                    unit,
                    value,
                })
                .collect(),
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

    #[test]
    fn qos_rows_are_the_depths_and_longer_keys_do_not_make_rows_of_their_own() {
        let d = device(
            "a",
            &[
                ("steady_write_iops", Unit::Iops, 9.0),
                ("qd1_iops", Unit::Iops, 100.0),
                ("qd1_read_iops", Unit::Iops, 70.0),
                ("qd1_read_lat_p99_9_ns", Unit::Ns, 2_500_000.0),
                ("qd32_iops", Unit::Iops, 900.0),
                ("qd32_read_iops", Unit::Iops, 630.0),
                ("qd32_read_lat_p99_9_ns", Unit::Ns, 9_000_000.0),
            ],
        );
        let r = report(suite("qos").unwrap(), vec![d]);
        let g = grids(&r);
        assert_eq!(g.len(), 1);
        // `qd1_read_iops` also ends in `_iops`: `qd1_read` is not a depth.
        assert_eq!(g[0].rows, ["qd1", "qd32"]);
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
        let d = device(
            "a",
            &[
                ("tracked_r0w100_4k_iops", Unit::Iops, 5.0),
                ("r100w0_128k_iops", Unit::Iops, 1.0),
                ("r100w0_4k_iops", Unit::Iops, 2.0),
                ("r0w100_128k_iops", Unit::Iops, 3.0),
                ("r0w100_4k_iops", Unit::Iops, 4.0),
            ],
        );
        let r = report(suite("pts-iops").unwrap(), vec![d]);
        let g = grids(&r);
        assert_eq!(g[0].rows, ["128k", "4k"]);
        let t = g[0].table(&r.devices[0]).unwrap();
        // Every column in IOPS, and the title says so: the headings are the mixes alone.
        assert_eq!(t.header, ["block size", "100/0", "0/100"]);
        assert_eq!(t.rows[1], ["4k", "2", "4"]);
    }

    #[test]
    fn a_step_or_load_row_must_end_in_its_number() {
        let wp = device(
            "a",
            &[
                (
                    "bs8k_step001_target_write_bw_bytes_per_s",
                    Unit::BytesPerS,
                    1e8,
                ),
                ("bs8k_step001_write_bw_bytes_per_s", Unit::BytesPerS, 9e7),
                ("bs8k_ceiling_write_bw_bytes_per_s", Unit::BytesPerS, 1e8),
            ],
        );
        let g = grids(&report(suite("write-pressure").unwrap(), vec![wp]));
        assert_eq!(g[0].rows, ["bs8k_step001"]);
        let app = device(
            "a",
            &[
                ("sql_load1_iops", Unit::Iops, 1.0),
                ("sql_load1_read_lat_avg_ns", Unit::Ns, 1.0),
                ("sql_90_10_load16_lat_avg_ns", Unit::Ns, 1.0),
            ],
        );
        let g = grids(&report(suite("app-profiles").unwrap(), vec![app]));
        assert_eq!(g[0].rows, ["sql_load1", "sql_90_10_load16"]);
    }

    #[test]
    fn devices_share_the_rows_and_each_shows_only_its_own() {
        let a = device("a", &[("qd1_iops", Unit::Iops, 1.0)]);
        let b = device(
            "b",
            &[("qd1_iops", Unit::Iops, 2.0), ("qd8_iops", Unit::Iops, 3.0)],
        );
        let r = report(suite("qos").unwrap(), vec![a, b]);
        let g = grids(&r);
        assert_eq!(g[0].rows, ["qd1", "qd8"]);
        assert_eq!(g[0].table(&r.devices[0]).unwrap().rows.len(), 1);
        assert_eq!(g[0].table(&r.devices[1]).unwrap().rows.len(), 2);
        assert_eq!(
            grid_title(g[0].spec.title, &r, &r.devices[1]),
            "IOPS and read latency per queue depth: b"
        );
    }

    #[test]
    fn a_suite_without_the_family_has_no_grid() {
        let d = device("a", &[("steady_write_iops", Unit::Iops, 1.0)]);
        assert!(grids(&report(suite("qos").unwrap(), vec![d.clone()])).is_empty());
        assert!(grids(&report(suite("four-corners").unwrap(), vec![d])).is_empty());
    }
}
