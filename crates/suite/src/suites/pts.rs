//! The SNIA Solid State Storage Performance Test Specification (PTS) Enterprise tests: IOPS,
//! throughput and latency. Each purges the drive, preconditions it workload-independently
//! (sequential writes of twice the user capacity), then runs *rounds* of its test stimulus
//! until a tracked value meets the steady-state rule ([`flashlab_kit::steady`]), and reports the
//! mean over the steady window (the last five rounds when steady state is not reached).

use flashlab_report::{RunResult, DDIR_READ, DDIR_WRITE};

use flashlab_kit::grids::{mix_block_label, values, Cols, GridSpec, P99_999};
use flashlab_kit::measure::size_label;
use flashlab_kit::session::Session;
use flashlab_kit::steady::{check_window, steady_state, SteadyRule};
use flashlab_kit::steps::{
    bw_bytes_per_s, iops, job_text, measure, purge_and_fill_with, qd_jobs, result_value, FILL_STEPS,
};
use flashlab_kit::suite::{Outcome, RunsOn, Suite};
use flashlab_kit::Dim;
use flashlab_kit::{
    Axis, Chart, Coord, Measure, Series, SteadyReport, SuiteError, SuiteOptions, Unit,
};

/// PTS: every cell of a round runs for one minute.
const CELL_NS: u64 = 60 * flashlab_engine::NS_PER_S;

/// Read shares of the IOPS test's mixes, in the PTS order (100 % read first).
const IOPS_MIXES: [u32; 7] = [100, 95, 65, 50, 35, 5, 0];
/// Block sizes of the IOPS test, largest first (the PTS inner loop).
const IOPS_BLOCKS: [u64; 8] = [
    1 << 20,
    128 << 10,
    64 << 10,
    32 << 10,
    16 << 10,
    8 << 10,
    4 << 10,
    512,
];
/// Read shares and block sizes of the latency test, in the same order.
const LAT_MIXES: [u32; 3] = [100, 65, 0];
const LAT_BLOCKS: [u64; 3] = [8 << 10, 4 << 10, 512];
/// Block sizes of the throughput test (PTS-E asks for both).
const TP_BLOCKS: [u64; 2] = [128 << 10, 1 << 20];
/// The latency percentile reported besides mean and max.
const LAT_PERCENTILE: f64 = 99.999;

/// fio `rw=` and extra lines for a random mix with `read_pct` % reads.
fn random_mix(read_pct: u32) -> (&'static str, Vec<String>) {
    match read_pct {
        100 => ("randread", Vec::new()),
        0 => ("randwrite", Vec::new()),
        p => ("randrw", vec![format!("rwmixread={p}")]),
    }
}

fn cell_runtime(opts: &SuiteOptions) -> Vec<String> {
    vec![
        "time_based=1".into(),
        format!("runtime={}ns", opts.runtime_ns.unwrap_or(CELL_NS)),
    ]
}

/// The rounds to average: the steady window, or the last `window` rounds.
fn window_range(st: &SteadyReport) -> std::ops::Range<usize> {
    let w = SteadyRule::SNIA_PTS.window;
    let end = st.verdict.round.unwrap_or(st.rounds_iops.len());
    end.saturating_sub(w)..end
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

/// True when the rounds so far end in a window that meets the rule.
fn window_is_steady(values: &[f64]) -> bool {
    let rule = SteadyRule::SNIA_PTS;
    values.len() >= rule.window && check_window(&values[values.len() - rule.window..], &rule).steady
}

/// A chart of per-round values with the steady window marked.
fn rounds_chart(
    id: &str,
    title: &str,
    y: Axis,
    series: Vec<(&str, &[f64])>,
    st: &SteadyReport,
) -> Chart {
    let window = SteadyRule::SNIA_PTS.window;
    Chart {
        id: id.into(),
        title: title.into(),
        x: Axis::linear("round", Unit::Count),
        y,
        series: series
            .into_iter()
            .map(|(name, values)| Series {
                name: name.into(),
                points: values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| ((i + 1) as f64, *v))
                    .collect(),
            })
            .collect(),
        band: st
            .verdict
            .round
            .map(|r| ((r + 1 - window) as f64, r as f64)),
    }
}

fn steady_report(values: Vec<f64>) -> SteadyReport {
    let verdict = steady_state(&values, &SteadyRule::SNIA_PTS);
    SteadyReport {
        rounds_iops: values,
        verdict,
    }
}

/// `rounds` and, when reached, the steady round, in row `row`.
fn round_measures(row: &[Coord], st: &SteadyReport) -> Vec<Measure> {
    let mut m = vec![measure("rounds", Unit::Count, st.rounds_iops.len() as f64).under(row)];
    if let Some(r) = st.verdict.round {
        m.push(measure("steady_round", Unit::Count, r as f64).under(row));
    }
    m
}

/// The (read share, block size) cells of a test in PTS order (mix outer, blocks as
/// listed), and the index of the tracked 4 KiB 100 % write cell.
fn matrix(mixes: &[u32], blocks: &[u64]) -> (Vec<(u32, u64)>, usize) {
    let cells: Vec<(u32, u64)> = mixes
        .iter()
        .flat_map(|&m| blocks.iter().map(move |&b| (m, b)))
        .collect();
    let tracked = cells
        .iter()
        .position(|&c| c == (0, 4096))
        .expect("the 4 KiB write cell is in the matrix");
    (cells, tracked)
}

/// IOPS test: rounds over the 56 (mix, block size) cells; steady state on the 4 KiB 100 %
/// write cell. Results: every cell's IOPS, averaged over the steady window.
pub(crate) fn iops_test(s: &mut Session, opts: &SuiteOptions) -> Result<Outcome, SuiteError> {
    let (qd, jobs) = qd_jobs(opts);
    let (cells, tracked_cell) = matrix(&IOPS_MIXES, &IOPS_BLOCKS);
    s.plan_steps(FILL_STEPS + opts.max_rounds * cells.len(), 1);
    purge_and_fill_with(s, "", "128k", 2)?;
    let cell_job = |round: &str, mix: u32, bs: u64| {
        let name = format!("round-{round}-{}-{}", Coord::Mix(mix).key(), size_label(bs));
        let (rw, mut lines) = random_mix(mix);
        lines.extend(cell_runtime(opts));
        let text = job_text(&name, rw, &bs.to_string(), qd, jobs, &lines);
        (name, text)
    };
    // The rounds are the PTS's workload-dependent preconditioning and its measurement at
    // once: the precondition cache keeps the drive at their end and every cell's IOPS, so a
    // repeat on the same drive reads them back instead of running the matrix again.
    let recipe = format!(
        "PTS IOPS rounds, at most {}, until cell {tracked_cell} is steady:\n{}",
        opts.max_rounds,
        cells
            .iter()
            .map(|&(mix, bs)| cell_job("NN", mix, bs).1)
            .collect::<String>()
    );
    let table: Vec<Vec<f64>> = s.checkpoint(&recipe, |s| {
        let mut table = Vec::with_capacity(opts.max_rounds);
        let mut tracked = Vec::with_capacity(opts.max_rounds);
        for r in 1..=opts.max_rounds {
            let mut row = Vec::with_capacity(cells.len());
            for &(mix, bs) in &cells {
                let (name, text) = cell_job(&format!("{r:02}"), mix, bs);
                let run = s.job(&name, &text, &|run| vec![cell_iops_measure(run)])?;
                row.push(cell_iops_measure(&run).value);
            }
            tracked.push(row[tracked_cell]);
            table.push(row);
            if window_is_steady(&tracked) {
                break;
            }
        }
        Ok(table)
    })?;
    let tracked: Vec<f64> = table.iter().map(|row| row[tracked_cell]).collect();
    s.rounds_ended(opts.max_rounds.saturating_sub(table.len()) * cells.len());
    let st = steady_report(tracked);
    let avg_rounds = &table[window_range(&st)];
    let mut results = round_measures(&[], &st);
    results.push(
        measure(
            "iops",
            Unit::Iops,
            mean(avg_rounds.iter().map(|row| row[tracked_cell])),
        )
        .under(&[Coord::Phase("tracked"), Coord::Mix(0), Coord::Block(4096)]),
    );
    for (i, &(mix, bs)) in cells.iter().enumerate() {
        results.push(
            measure(
                "iops",
                Unit::Iops,
                mean(avg_rounds.iter().map(|row| row[i])),
            )
            .under(&[Coord::Mix(mix), Coord::Block(bs)]),
        );
    }
    let by_block_size = Chart {
        id: "pts-iops-block-size".into(),
        title: "Steady-state IOPS against block size, one line per R/W mix".into(),
        x: Axis::log("block size, bytes", Unit::Count),
        y: Axis::log("IOPS", Unit::Iops),
        series: IOPS_MIXES
            .iter()
            .map(|&mix| Series {
                name: format!("{}/{}", mix, 100 - mix),
                // Points in x order: block sizes ascending.
                points: IOPS_BLOCKS
                    .iter()
                    .rev()
                    .filter_map(|&bs| {
                        let cell = [Coord::Mix(mix), Coord::Block(bs)];
                        let v = result_value(&results, "iops", &cell, None)?;
                        Some((bs as f64, v))
                    })
                    .collect(),
            })
            .collect(),
        band: None,
    };
    let steady_chart = rounds_chart(
        "steady-rounds",
        "4 KiB 100% write IOPS per round and the steady-state window",
        Axis::linear("IOPS", Unit::Iops),
        vec![("4 KiB write IOPS", &st.rounds_iops)],
        &st,
    );
    Ok(Outcome {
        charts: vec![steady_chart, by_block_size],
        steady: Some(st),
        results,
    })
}

/// A cell's IOPS: reads and writes together.
fn cell_iops_measure(run: &RunResult) -> Measure {
    measure(
        "iops",
        Unit::Iops,
        iops(run, DDIR_READ) + iops(run, DDIR_WRITE),
    )
}

/// Throughput test: for 128 KiB and 1024 KiB, purge, fill sequentially at that block size,
/// then rounds of sequential reads and writes; steady state on the write bandwidth.
pub(crate) fn throughput_test(s: &mut Session, opts: &SuiteOptions) -> Result<Outcome, SuiteError> {
    let (qd, jobs) = qd_jobs(opts);
    let mut results = Vec::new();
    let mut charts = Vec::new();
    let mut last = None;
    let per_block_size = FILL_STEPS + opts.max_rounds * 2;
    s.plan_steps(TP_BLOCKS.len() * per_block_size, TP_BLOCKS.len());
    for bs in TP_BLOCKS {
        let label = size_label(bs);
        let bs_text = bs.to_string();
        purge_and_fill_with(s, &format!("{label}-"), &bs_text, 2)?;
        let (mut reads, mut writes) = (Vec::new(), Vec::new());
        for r in 1..=opts.max_rounds {
            for (rw, ddir, values) in [
                ("read", DDIR_READ, &mut reads),
                ("write", DDIR_WRITE, &mut writes),
            ] {
                let name = format!("{label}-round-{r:02}-{rw}");
                let text = job_text(&name, rw, &bs_text, qd, jobs, &cell_runtime(opts));
                let bw = move |run: &RunResult| {
                    vec![measure(
                        "bw_bytes_per_s",
                        Unit::BytesPerS,
                        bw_bytes_per_s(run, ddir),
                    )]
                };
                let run = s.job(&name, &text, &bw)?;
                values.push(bw_bytes_per_s(&run, ddir));
            }
            if window_is_steady(&writes) {
                break;
            }
        }
        s.rounds_ended(opts.max_rounds.saturating_sub(writes.len()) * 2);
        let st = steady_report(writes);
        let window = window_range(&st);
        let row = [Coord::SeqBlock(bs)];
        results.push(
            measure(
                "read_bw_bytes_per_s",
                Unit::BytesPerS,
                mean(reads[window.clone()].iter().copied()),
            )
            .under(&row),
        );
        results.push(
            measure(
                "write_bw_bytes_per_s",
                Unit::BytesPerS,
                mean(st.rounds_iops[window].iter().copied()),
            )
            .under(&row),
        );
        results.extend(round_measures(&row, &st));
        charts.push(rounds_chart(
            &format!("steady-rounds-{label}"),
            &format!("{label} sequential bandwidth per round (steady state tracked on writes)"),
            Axis::linear("bandwidth", Unit::BytesPerS),
            vec![("read", &reads), ("write", &st.rounds_iops)],
            &st,
        ));
        last = Some(st);
    }
    Ok(Outcome {
        steady: last,
        results,
        charts,
    })
}

/// Mean, max and tail latency of one cell, over reads and writes together.
#[derive(Debug, Clone, Copy, PartialEq)]
struct CellLatency {
    mean_ns: f64,
    max_ns: f64,
    /// The larger of the two directions' percentiles: an upper bound of the mixed one (at
    /// that value both directions, hence their mix, have reached the percentile).
    p99_999_ns: f64,
}

fn cell_latency(run: &RunResult) -> CellLatency {
    let mut out = CellLatency {
        mean_ns: 0.0,
        max_ns: 0.0,
        p99_999_ns: 0.0,
    };
    // One job (clones merged by group_reporting): its latencies are the run's.
    let Some(job) = run.jobs.first() else {
        return out;
    };
    let mut total_ios = 0u64;
    let mut weighted = 0.0;
    for ddir in [DDIR_READ, DDIR_WRITE] {
        let Some(clat) = job.clat_ns(ddir) else {
            continue;
        };
        let n = job.total_ios(ddir);
        total_ios += n;
        weighted += clat.mean * n as f64;
        out.max_ns = out.max_ns.max(clat.max as f64);
        if let Some(&(_, v)) = job
            .clat_percentiles_ns(ddir)
            .iter()
            .find(|(p, _)| (p - LAT_PERCENTILE).abs() < 1e-9)
        {
            // fio's percentile is its histogram bucket's value, which can lie above the
            // largest sample; the percentile of the samples cannot.
            out.p99_999_ns = out.p99_999_ns.max(v.min(clat.max) as f64);
        }
    }
    if total_ios > 0 {
        out.mean_ns = weighted / total_ios as f64;
    }
    out
}

/// Latency test: QD1 and one job (the PTS's single outstanding I/O) over 3 mixes × 3 block
/// sizes; steady state on the 4 KiB 100 % write mean latency.
pub(crate) fn latency_test(s: &mut Session, opts: &SuiteOptions) -> Result<Outcome, SuiteError> {
    let (cells, tracked_cell) = matrix(&LAT_MIXES, &LAT_BLOCKS);
    s.plan_steps(FILL_STEPS + opts.max_rounds * cells.len(), 1);
    purge_and_fill_with(s, "", "128k", 2)?;
    let mut table: Vec<Vec<CellLatency>> = Vec::with_capacity(opts.max_rounds);
    let mut tracked = Vec::with_capacity(opts.max_rounds);
    for r in 1..=opts.max_rounds {
        let mut row = Vec::with_capacity(cells.len());
        for &(mix, bs) in &cells {
            let name = format!("round-{r:02}-{}-{}", Coord::Mix(mix).key(), size_label(bs));
            let (rw, mut lines) = random_mix(mix);
            lines.extend(cell_runtime(opts));
            lines.push(format!("percentile_list={LAT_PERCENTILE}"));
            let text = job_text(&name, rw, &bs.to_string(), 1, 1, &lines);
            let run = s.job(&name, &text, &|run| {
                let c = cell_latency(run);
                vec![
                    measure("lat_mean_ns", Unit::Ns, c.mean_ns),
                    measure("lat_max_ns", Unit::Ns, c.max_ns),
                    measure("lat_ns", Unit::Ns, c.p99_999_ns)
                        .col(Coord::Percentile(LAT_PERCENTILE)),
                ]
            })?;
            row.push(cell_latency(&run));
        }
        tracked.push(row[tracked_cell].mean_ns);
        table.push(row);
        if window_is_steady(&tracked) {
            break;
        }
    }
    s.rounds_ended(opts.max_rounds.saturating_sub(table.len()) * cells.len());
    let st = steady_report(tracked);
    let avg_rounds = &table[window_range(&st)];
    let mut results = round_measures(&[], &st);
    let mut stats: [Vec<(f64, f64)>; 3] = Default::default();
    for (i, &(mix, bs)) in cells.iter().enumerate() {
        let row = [Coord::Mix(mix), Coord::Block(bs)];
        // Mean and tail: the mean over the window's rounds; max: the largest seen in it.
        let c = CellLatency {
            mean_ns: mean(avg_rounds.iter().map(|row| row[i].mean_ns)),
            max_ns: avg_rounds
                .iter()
                .map(|row| row[i].max_ns)
                .fold(0.0, f64::max),
            p99_999_ns: mean(avg_rounds.iter().map(|row| row[i].p99_999_ns)),
        };
        results.push(measure("lat_mean_ns", Unit::Ns, c.mean_ns).under(&row));
        results.push(measure("lat_max_ns", Unit::Ns, c.max_ns).under(&row));
        results.push(
            measure("lat_ns", Unit::Ns, c.p99_999_ns)
                .col(Coord::Percentile(LAT_PERCENTILE))
                .under(&row),
        );
        let x = (i + 1) as f64;
        stats[0].push((x, c.mean_ns));
        stats[1].push((x, c.p99_999_ns));
        stats[2].push((x, c.max_ns));
    }
    let cell_names: Vec<String> = cells
        .iter()
        .enumerate()
        .map(|(i, &(mix, bs))| format!("{} {}/{} {}", i + 1, mix, 100 - mix, size_label(bs)))
        .collect();
    let [mean_pts, tail_pts, max_pts] = stats;
    let by_cell = Chart {
        id: "pts-latency-cells".into(),
        title: format!("QD1 latency per cell ({})", cell_names.join(", ")),
        x: Axis::linear("cell", Unit::Count),
        y: Axis::log("latency", Unit::Ns),
        series: vec![
            Series {
                name: "mean".into(),
                points: mean_pts,
            },
            Series {
                name: "p99.999".into(),
                points: tail_pts,
            },
            Series {
                name: "max".into(),
                points: max_pts,
            },
        ],
        band: None,
    };
    let steady_chart = rounds_chart(
        "steady-rounds",
        "4 KiB 100% write mean latency per round and the steady-state window",
        Axis::linear("mean latency", Unit::Ns),
        vec![("4 KiB write mean latency", &st.rounds_iops)],
        &st,
    );
    Ok(Outcome {
        charts: vec![steady_chart, by_cell],
        steady: Some(st),
        results,
    })
}

/// `pts-iops`: the SNIA PTS IOPS test.
pub(crate) struct PtsIops;

impl Suite for PtsIops {
    fn name(&self) -> &'static str {
        "pts-iops"
    }
    fn summary(&self) -> &'static str {
        "SNIA PTS IOPS: 7 R/W mixes x 8 block sizes, rounds to steady state"
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Any
    }
    fn grids(&self) -> &'static [GridSpec] {
        &[PTS_IOPS]
    }
    fn tracked(&self) -> &'static str {
        "r0w100_4k_iops"
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        let opts = s.opts();
        iops_test(s, opts)
    }
}

/// `pts-throughput`: the SNIA PTS throughput test.
pub(crate) struct PtsThroughput;

impl Suite for PtsThroughput {
    fn name(&self) -> &'static str {
        "pts-throughput"
    }
    fn summary(&self) -> &'static str {
        "SNIA PTS throughput: 128 KiB and 1024 KiB sequential read/write at steady state"
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Any
    }
    fn grids(&self) -> &'static [GridSpec] {
        &[PTS_THROUGHPUT]
    }
    fn tracked(&self) -> &'static str {
        "seq_1024k_write_bw_bytes_per_s"
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        let opts = s.opts();
        throughput_test(s, opts)
    }
}

/// `pts-latency`: the SNIA PTS latency test.
pub(crate) struct PtsLatency;

impl Suite for PtsLatency {
    fn name(&self) -> &'static str {
        "pts-latency"
    }
    fn summary(&self) -> &'static str {
        "SNIA PTS latency: QD1 mean, max, p99.999 for 3 mixes x 3 block sizes"
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Any
    }
    fn grids(&self) -> &'static [GridSpec] {
        &[PTS_LATENCY]
    }
    fn tracked(&self) -> &'static str {
        "r0w100_4k_lat_mean_ns"
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        let opts = s.opts();
        latency_test(s, opts)
    }
}

// The grids it lays its results out in.
const PTS_IOPS: GridSpec = GridSpec {
    title: "IOPS by block size and read/write mix (SNIA PTS)",
    row_header: "block size",
    dims: &[Dim::ReadPercent, Dim::BlockSize],
    cols: Cols::First {
        family: "iops",
        cols: &[
            ("100/0", Coord::Mix(100)),
            ("95/5", Coord::Mix(95)),
            ("65/35", Coord::Mix(65)),
            ("50/50", Coord::Mix(50)),
            ("35/65", Coord::Mix(35)),
            ("5/95", Coord::Mix(5)),
            ("0/100", Coord::Mix(0)),
        ],
    },
    row_label: values,
};

const PTS_THROUGHPUT: GridSpec = GridSpec {
    title: "Sequential throughput per block size (SNIA PTS)",
    row_header: "block size",
    dims: &[Dim::BlockSize],
    cols: Cols::Figures(&[
        ("read", "read_bw_bytes_per_s", None),
        ("write", "write_bw_bytes_per_s", None),
        ("rounds", "rounds", None),
        ("steady in round", "steady_round", None),
    ]),
    row_label: values,
};

const PTS_LATENCY: GridSpec = GridSpec {
    title: "Response time at QD1 by read/write mix and block size (SNIA PTS)",
    row_header: "mix, block size",
    dims: &[Dim::ReadPercent, Dim::BlockSize],
    cols: Cols::Figures(&[
        ("mean", "lat_mean_ns", None),
        ("p99.999", "lat_ns", P99_999),
        ("max", "lat_max_ns", None),
    ]),
    row_label: mix_block_label,
};

#[cfg(test)]
mod tests {
    use super::*;
    use flashlab_kit::steady::SteadyVerdict;

    #[test]
    fn labels_follow_the_pts_block_sizes() {
        assert_eq!(size_label(512), "512b");
        assert_eq!(size_label(4096), "4k");
        assert_eq!(size_label(1 << 20), "1024k");
        assert_eq!(size_label(64 << 20), "64m");
        assert_eq!(Coord::Mix(65).key(), "r65w35");
        assert_eq!(Coord::Mix(0).key(), "r0w100");
    }

    #[test]
    fn the_iops_matrix_is_56_cells_mix_major_largest_block_first() {
        assert_eq!(IOPS_MIXES.len() * IOPS_BLOCKS.len(), 56);
        assert!(IOPS_BLOCKS.windows(2).all(|w| w[0] > w[1]));
        assert_eq!(IOPS_MIXES[0], 100);
        assert_eq!(IOPS_MIXES[6], 0);
    }

    #[test]
    fn the_window_is_the_steady_one_or_the_last_five_rounds() {
        let reached = SteadyReport {
            rounds_iops: vec![1.0; 9],
            verdict: SteadyVerdict {
                round: Some(7),
                window: None,
            },
        };
        assert_eq!(window_range(&reached), 2..7);
        let not = SteadyReport {
            rounds_iops: vec![1.0; 9],
            verdict: SteadyVerdict {
                round: None,
                window: None,
            },
        };
        assert_eq!(window_range(&not), 4..9);
    }

    #[test]
    fn mixes_become_fio_rw_modes() {
        assert_eq!(random_mix(100), ("randread", vec![]));
        assert_eq!(random_mix(0), ("randwrite", vec![]));
        assert_eq!(random_mix(35).1, vec!["rwmixread=35".to_string()]);
    }

    #[test]
    fn generated_cells_parse_with_sub_kib_blocks() {
        let (rw, mut lines) = random_mix(65);
        lines.extend(cell_runtime(&SuiteOptions::default()));
        let text = job_text("c", rw, "512", 1, 1, &lines);
        let file = flashlab_workload::parse_str(&text, "c.fio", &|_| None).unwrap();
        assert_eq!(file.jobs[0].time.runtime_ns, Some(CELL_NS));
    }
}
