//! The suites themselves: which steps run in which order and what each one measures.

use flashlab_engine::NS_PER_S;
use flashlab_report::{RunResult, DDIR_READ, DDIR_WRITE};

use crate::grids::GridSpec;
use crate::options::RoundLength;
use crate::session::Session;
use crate::steady::{check_window, steady_state, SteadyRule};
use crate::suite::{Outcome, Suite, Targets};
use crate::{Axis, Chart, Measure, Series, SteadyReport, SuiteError, SuiteOptions, Unit};

/// Queue depth and job count when `--qd`/`--jobs` are not given: QD32 × 1, the depth of SATA
/// NCQ and of client datasheets, deep enough to keep an NVMe drive's dies busy.
pub(crate) const DEFAULT_QD: u32 = 32;
const DEFAULT_JOBS: u32 = 1;
/// Depth of the workload-independent fill: it only has to write every block, fast.
pub(crate) const FILL_QD: u32 = 32;

/// Measurement windows (after a ramp) of the time-based steps when `--runtime` is not given.
const SEQ_READ_NS: u64 = 10 * NS_PER_S;
const SEQ_WRITE_NS: u64 = 30 * NS_PER_S;
const RAND_READ_NS: u64 = 5 * NS_PER_S;
const QOS_NS: u64 = 10 * NS_PER_S;
/// Ramps let queues fill and a write buffer reach its steady level before measuring.
pub(crate) const RAMP_NS: u64 = NS_PER_S;
const SEQ_WRITE_RAMP_NS: u64 = 2 * NS_PER_S;

/// Percentiles the qos suite reports, and their key suffixes.
const QOS_PERCENTILES: [(f64, &str); 4] = [
    (99.0, "p99"),
    (99.9, "p99_9"),
    (99.99, "p99_99"),
    (99.9999, "p99_9999"),
];

/// The outcome of a suite whose only chart is its random-write rounds.
fn with_steady_chart((steady, results): (SteadyReport, Vec<Measure>)) -> Outcome {
    Outcome {
        charts: vec![steady_chart(&steady)],
        steady: Some(steady),
        results,
    }
}

/// `precondition`: the drive brought to the SNIA steady state.
pub(crate) struct Precondition;

impl Suite for Precondition {
    fn name(&self) -> &'static str {
        "precondition"
    }
    fn summary(&self) -> &'static str {
        "purge, sequential fill x2, 4 KiB random-write rounds to SNIA steady state"
    }
    fn targets(&self) -> Targets {
        Targets::Any
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        let opts = s.opts();
        Ok(with_steady_chart(precondition(s, opts)?))
    }
}

/// `four-corners`: sequential and random, read and write, each in its specified state.
pub(crate) struct FourCorners;

impl Suite for FourCorners {
    fn name(&self) -> &'static str {
        "four-corners"
    }
    fn summary(&self) -> &'static str {
        "128 KiB sequential read/write, 4 KiB random read/write, each preconditioned"
    }
    fn targets(&self) -> Targets {
        Targets::Any
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        let opts = s.opts();
        Ok(with_steady_chart(four_corners(s, opts)?))
    }
}

/// `qos`: a read/write mix across queue depths, IOPS and read latency percentiles.
pub(crate) struct Qos;

impl Suite for Qos {
    fn name(&self) -> &'static str {
        "qos"
    }
    fn summary(&self) -> &'static str {
        "4 KiB read/write mix across queue depths: IOPS, read latency tail"
    }
    fn targets(&self) -> Targets {
        Targets::Any
    }
    fn options(&self) -> &'static [&'static str] {
        &["rwmixread", "depths"]
    }
    fn options_text(&self, o: &SuiteOptions) -> Vec<String> {
        let depths: Vec<String> = o.qos_depths.iter().map(u32::to_string).collect();
        vec![
            format!("{}% reads", o.rwmixread),
            format!("queue depths {}", depths.join(", ")),
        ]
    }
    fn grids(&self) -> &'static [GridSpec] {
        &[crate::grids::QOS]
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        let opts = s.opts();
        let mut o = with_steady_chart(qos(s, opts)?);
        o.charts.extend(qos_charts(&opts.qos_depths, &o.results));
        Ok(o)
    }
}

/// Write IOPS per round, the steady window marked.
pub(crate) fn steady_chart(st: &SteadyReport) -> Chart {
    let window = SteadyRule::SNIA_PTS.window;
    let band = st
        .verdict
        .round
        .map(|r| ((r + 1 - window) as f64, r as f64));
    Chart {
        id: "steady-rounds".into(),
        title: "4 KiB random-write rounds and the steady-state window".into(),
        x: Axis::linear("round", Unit::Count),
        y: Axis::linear("write IOPS", Unit::Iops),
        series: vec![Series {
            name: "write IOPS".into(),
            points: st
                .rounds_iops
                .iter()
                .enumerate()
                .map(|(i, v)| ((i + 1) as f64, *v))
                .collect(),
        }],
        band,
    }
}

/// The value of `name` among `results`, if measured.
pub(crate) fn result_value(results: &[Measure], name: &str) -> Option<f64> {
    results.iter().find(|m| m.name == name).map(|m| m.value)
}

/// IOPS against queue depth, and read latency (mean and percentiles, log scale) against it.
fn qos_charts(depths: &[u32], results: &[Measure]) -> Vec<Chart> {
    let line = |name: &str, key: &str| Series {
        name: name.to_string(),
        points: depths
            .iter()
            .filter_map(|&d| {
                result_value(results, &format!("qd{d}_{key}")).map(|v| (f64::from(d), v))
            })
            .collect(),
    };
    let mut latency = vec![line("average", "read_lat_avg_ns")];
    for (_, key) in QOS_PERCENTILES {
        latency.push(line(key, &format!("read_lat_{key}_ns")));
    }
    vec![
        Chart {
            id: "qos-iops".into(),
            title: "IOPS against queue depth".into(),
            x: Axis::log("queue depth", Unit::Count),
            y: Axis::linear("IOPS", Unit::Iops),
            series: vec![
                line("total", "iops"),
                line("read", "read_iops"),
                line("write", "write_iops"),
            ],
            band: None,
        },
        Chart {
            id: "qos-read-latency".into(),
            title: "Read completion latency against queue depth".into(),
            x: Axis::log("queue depth", Unit::Count),
            y: Axis::log("read latency", Unit::Ns),
            series: latency,
            band: None,
        },
    ]
}

pub(crate) fn measure(name: impl Into<String>, unit: Unit, value: f64) -> Measure {
    Measure {
        name: name.into(),
        unit,
        value,
    }
}

/// Sum over the run's jobs (clones are merged by group_reporting).
pub(crate) fn iops(run: &RunResult, ddir: usize) -> f64 {
    run.jobs.iter().map(|j| j.iops(ddir)).sum()
}

pub(crate) fn bw_bytes_per_s(run: &RunResult, ddir: usize) -> f64 {
    run.jobs.iter().map(|j| j.bw_bytes_per_s(ddir) as f64).sum()
}

/// The option that makes random offsets uniform with repeats: each drawn independently, so a
/// block may be written again before another is written once. The SNIA PTS's "uniform random",
/// Iometer, VDbench and DiskSpd draw so; fio's default random map instead writes every block
/// once per pass, which leaves whole passes' worth of wholly invalid blocks to greedy GC and
/// makes steady random writes optimistic (docs/calibration.md, "Random writes with repeats").
pub(crate) const UNIFORM_RANDOM: &str = "norandommap=1";

/// `rw` writes or trims at random offsets (alone or mixed with reads): the jobs whose
/// offsets must be [`UNIFORM_RANDOM`].
pub(crate) fn writes_randomly(rw: &str) -> bool {
    matches!(rw, "randwrite" | "randrw" | "randtrim" | "randtrimwrite")
}

/// `norandommap=1` and a line break for a random write or mix, nothing otherwise: the
/// option line a generated job carries after its `rw=`, visible in its `job options`.
pub(crate) fn uniform_random_line(rw: &str) -> String {
    if writes_randomly(rw) {
        format!("{UNIFORM_RANDOM}\n")
    } else {
        String::new()
    }
}

/// A one-job fio file. `lines` are extra `key=value` options. Random writes and mixes draw
/// their offsets with repeats ([`UNIFORM_RANDOM`]).
pub(crate) fn job_text(
    name: &str,
    rw: &str,
    bs: &str,
    qd: u32,
    jobs: u32,
    lines: &[String],
) -> String {
    let uniform = uniform_random_line(rw);
    let mut t = format!(
        "[global]\nioengine=libaio\ndirect=1\ngroup_reporting=1\n\n[{name}]\nrw={rw}\n{uniform}bs={bs}\niodepth={qd}\nnumjobs={jobs}\nsize=100%\n"
    );
    for l in lines {
        t.push_str(l);
        t.push('\n');
    }
    t
}

pub(crate) fn timed(runtime_ns: u64, ramp_ns: u64) -> Vec<String> {
    vec![
        "time_based=1".into(),
        format!("ramp_time={ramp_ns}ns"),
        format!("runtime={runtime_ns}ns"),
    ]
}

pub(crate) fn qd_jobs(opts: &SuiteOptions) -> (u32, u32) {
    (
        opts.qd.unwrap_or(DEFAULT_QD),
        opts.jobs.unwrap_or(DEFAULT_JOBS),
    )
}

/// Purge, then the workload-independent preconditioning: the whole drive written twice with
/// 128 KiB sequential writes, so every block holds data and the FTL's free pool is at its
/// floor.
pub(crate) fn purge_and_fill(s: &mut Session) -> Result<(), SuiteError> {
    purge_and_fill_with(s, "", "128k", 2)
}

/// Purge, then `loops` sequential passes over the whole drive at block size `bs`. Step names
/// are `{prefix}purge` and `{prefix}fill`.
pub(crate) fn purge_and_fill_with(
    s: &mut Session,
    prefix: &str,
    bs: &str,
    loops: u32,
) -> Result<(), SuiteError> {
    s.purge(&format!("{prefix}purge"))?;
    let name = format!("{prefix}fill");
    let text = job_text(&name, "write", bs, FILL_QD, 1, &[format!("loops={loops}")]);
    s.job(&name, &text, &|run| {
        vec![measure(
            "bw_bytes_per_s",
            Unit::BytesPerS,
            bw_bytes_per_s(run, DDIR_WRITE),
        )]
    })?;
    Ok(())
}

/// Workload-dependent preconditioning: rounds of 4 KiB random writes until the write IOPS
/// meet the SNIA steady-state rule or `max_rounds` have run.
pub(crate) fn random_write_rounds(
    s: &mut Session,
    opts: &SuiteOptions,
) -> Result<SteadyReport, SuiteError> {
    let (qd, jobs) = qd_jobs(opts);
    let round_lines = match opts.round {
        RoundLength::TimeNs(ns) => vec!["time_based=1".to_string(), format!("runtime={ns}ns")],
        RoundLength::Bytes(b) => vec![format!("io_size={}", per_job_bytes(b, jobs))],
        RoundLength::CapacityFraction(f) => {
            let b = (s.full_capacity_bytes() as f64 * f).round() as u64;
            vec![format!("io_size={}", per_job_bytes(b, jobs))]
        }
    };
    let rule = SteadyRule::SNIA_PTS;
    let mut values = Vec::with_capacity(opts.max_rounds);
    for r in 1..=opts.max_rounds {
        let name = format!("round-{r:02}");
        let text = job_text(&name, "randwrite", "4k", qd, jobs, &round_lines);
        let run = s.job(&name, &text, &|run| {
            vec![measure("write_iops", Unit::Iops, iops(run, DDIR_WRITE))]
        })?;
        values.push(iops(&run, DDIR_WRITE));
        if values.len() >= rule.window
            && check_window(&values[values.len() - rule.window..], &rule).steady
        {
            break;
        }
    }
    let verdict = steady_state(&values, &rule);
    Ok(SteadyReport {
        rounds_iops: values,
        verdict,
    })
}

/// Bytes each of `jobs` clones writes so that together they write `total` (whole 4 KiB blocks,
/// at least one).
pub(crate) fn per_job_bytes(total: u64, jobs: u32) -> u64 {
    (total / u64::from(jobs.max(1)) / 4096).max(1) * 4096
}

/// The mean of the steady window, or of the last rounds when steady state was not reached.
pub(crate) fn steady_iops(st: &SteadyReport) -> f64 {
    match st.verdict.window {
        Some(w) => w.mean,
        None if st.rounds_iops.is_empty() => 0.0,
        None => st.rounds_iops.iter().sum::<f64>() / st.rounds_iops.len() as f64,
    }
}

pub(crate) fn steady_measures(st: &SteadyReport) -> Vec<Measure> {
    let mut m = vec![
        measure("rounds", Unit::Count, st.rounds_iops.len() as f64),
        measure("steady_write_iops", Unit::Iops, steady_iops(st)),
    ];
    if let Some(w) = st.verdict.window {
        m.push(measure("window_range_iops", Unit::Iops, w.range));
        m.push(measure("window_excursion_iops", Unit::Iops, w.excursion));
    }
    m
}

fn precondition(
    s: &mut Session,
    opts: &SuiteOptions,
) -> Result<(SteadyReport, Vec<Measure>), SuiteError> {
    purge_and_fill(s)?;
    let st = random_write_rounds(s, opts)?;
    let mut results = steady_measures(&st);
    for (i, v) in st.rounds_iops.iter().enumerate() {
        results.push(measure(
            format!("round_{:02}_write_iops", i + 1),
            Unit::Iops,
            *v,
        ));
    }
    Ok((st, results))
}

fn four_corners(
    s: &mut Session,
    opts: &SuiteOptions,
) -> Result<(SteadyReport, Vec<Measure>), SuiteError> {
    let (qd, jobs) = qd_jobs(opts);
    let window = |default_ns: u64| opts.runtime_ns.unwrap_or(default_ns);
    let bw_iops = |ddir: usize| {
        move |run: &RunResult| {
            vec![
                measure("bw_bytes_per_s", Unit::BytesPerS, bw_bytes_per_s(run, ddir)),
                measure("iops", Unit::Iops, iops(run, ddir)),
            ]
        }
    };
    // Sequential fill: the state sequential and read figures are specified in.
    purge_and_fill(s)?;
    let mut results = Vec::new();
    let steps: [(&str, &str, &str, u64, u64, usize); 3] = [
        (
            "seq-read-128k",
            "read",
            "128k",
            SEQ_READ_NS,
            RAMP_NS,
            DDIR_READ,
        ),
        (
            "seq-write-128k",
            "write",
            "128k",
            SEQ_WRITE_NS,
            SEQ_WRITE_RAMP_NS,
            DDIR_WRITE,
        ),
        (
            "rand-read-4k",
            "randread",
            "4k",
            RAND_READ_NS,
            RAMP_NS,
            DDIR_READ,
        ),
    ];
    for (name, rw, bs, runtime_ns, ramp_ns, ddir) in steps {
        let text = job_text(name, rw, bs, qd, jobs, &timed(window(runtime_ns), ramp_ns));
        let run = s.job(name, &text, &bw_iops(ddir))?;
        let key = name.replace('-', "_");
        results.push(measure(
            format!("{key}_bw_bytes_per_s"),
            Unit::BytesPerS,
            bw_bytes_per_s(&run, ddir),
        ));
        results.push(measure(format!("{key}_iops"), Unit::Iops, iops(&run, ddir)));
    }
    // Random writes are measured where they settle: the mean of the steady window.
    let st = random_write_rounds(s, opts)?;
    let rand_write_iops = steady_iops(&st);
    results.push(measure(
        "rand_write_4k_bw_bytes_per_s",
        Unit::BytesPerS,
        rand_write_iops * 4096.0,
    ));
    results.push(measure("rand_write_4k_iops", Unit::Iops, rand_write_iops));
    results.push(measure(
        "rand_write_rounds",
        Unit::Count,
        st.rounds_iops.len() as f64,
    ));
    Ok((st, results))
}

fn qos(s: &mut Session, opts: &SuiteOptions) -> Result<(SteadyReport, Vec<Measure>), SuiteError> {
    purge_and_fill(s)?;
    let st = random_write_rounds(s, opts)?;
    let mut results = vec![measure("steady_write_iops", Unit::Iops, steady_iops(&st))];
    let jobs = opts.jobs.unwrap_or(DEFAULT_JOBS);
    let percentiles = QOS_PERCENTILES
        .iter()
        .map(|(p, _)| p.to_string())
        .collect::<Vec<_>>()
        .join(":");
    for &depth in &opts.qos_depths {
        let name = format!("qos-qd{depth}");
        let mut lines = timed(opts.runtime_ns.unwrap_or(QOS_NS), RAMP_NS);
        lines.push(format!("rwmixread={}", opts.rwmixread));
        lines.push(format!("percentile_list={percentiles}"));
        let text = job_text(&name, "randrw", "4k", depth, jobs, &lines);
        // The drive is steady: each depth's window keeps its time on a slice.
        let run = s.steady_job(&name, &text, &|run| qos_measures("", run))?;
        results.extend(qos_measures(&format!("qd{depth}_"), &run));
    }
    Ok((st, results))
}

/// IOPS of the mix and the read completion latency: mean and tail percentiles, from the
/// report's histogram (fio's clat percentiles).
fn qos_measures(prefix: &str, run: &RunResult) -> Vec<Measure> {
    let mut m = vec![
        measure(
            format!("{prefix}iops"),
            Unit::Iops,
            iops(run, DDIR_READ) + iops(run, DDIR_WRITE),
        ),
        measure(
            format!("{prefix}read_iops"),
            Unit::Iops,
            iops(run, DDIR_READ),
        ),
        measure(
            format!("{prefix}write_iops"),
            Unit::Iops,
            iops(run, DDIR_WRITE),
        ),
    ];
    // One job (clones merged): its read latency is the run's.
    let Some(job) = run.jobs.first() else {
        return m;
    };
    if let Some(clat) = job.clat_ns(DDIR_READ) {
        m.push(measure(
            format!("{prefix}read_lat_avg_ns"),
            Unit::Ns,
            clat.mean,
        ));
    }
    let pcts = job.clat_percentiles_ns(DDIR_READ);
    for (p, key) in QOS_PERCENTILES {
        if let Some(&(_, v)) = pcts.iter().find(|(q, _)| (q - p).abs() < 1e-9) {
            m.push(measure(
                format!("{prefix}read_lat_{key}_ns"),
                Unit::Ns,
                v as f64,
            ));
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qos_charts_follow_the_measured_depths() {
        let results = vec![
            measure("qd1_iops", Unit::Iops, 100.0),
            measure("qd8_iops", Unit::Iops, 700.0),
            measure("qd1_read_lat_p99_ns", Unit::Ns, 9e4),
        ];
        let charts = qos_charts(&[1, 8], &results);
        assert_eq!(charts[0].series[0].points, vec![(1.0, 100.0), (8.0, 700.0)]);
        let p99 = charts[1].series.iter().find(|s| s.name == "p99").unwrap();
        assert_eq!(p99.points, vec![(1.0, 9e4)]);
        assert!(charts[1].y.log);
    }

    #[test]
    fn steady_chart_marks_the_window_that_met_the_rule() {
        let st = SteadyReport {
            rounds_iops: vec![9.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0],
            verdict: steady_state(&[9.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0], &SteadyRule::SNIA_PTS),
        };
        let c = steady_chart(&st);
        assert_eq!(c.band, Some((2.0, 6.0)));
        assert_eq!(c.series[0].points.len(), 7);
    }

    #[test]
    fn per_job_bytes_split_in_whole_blocks() {
        assert_eq!(per_job_bytes(1 << 30, 1), 1 << 30);
        assert_eq!(per_job_bytes(1 << 30, 3), 357_912_576);
        assert_eq!(per_job_bytes(100, 4), 4096);
    }

    #[test]
    fn generated_jobs_parse() {
        let text = job_text("x", "randrw", "4k", 8, 2, &timed(2 * NS_PER_S, RAMP_NS));
        let file = flashlab_workload::parse_str(&text, "x.fio", &|_| None).unwrap();
        assert_eq!(file.jobs.len(), 1);
        let j = &file.jobs[0];
        assert_eq!(j.iodepth, 8);
        assert_eq!(j.numjobs, 2);
        assert!(j.time_based);
        assert_eq!(j.runtime_ns, Some(2 * NS_PER_S));
    }
}
