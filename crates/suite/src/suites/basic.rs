//! The basic suites: `precondition`, `four-corners` and `qos`.

use flashlab_engine::NS_PER_S;
use flashlab_report::{RunResult, DDIR_READ, DDIR_WRITE};

use flashlab_kit::charts::{job_steps, label_bars, series_name, slug, JobStep};
use flashlab_kit::grids::{values, Cols, GridSpec, P99, P99_9, P99_99, P99_9999};
use flashlab_kit::session::Session;
use flashlab_kit::steps::{
    bw_bytes_per_s, iops, job_text, measure, purge_and_fill, qd_jobs, random_write_rounds,
    result_value, round_steps, steady_chart, steady_iops, steady_measures, timed, DEFAULT_JOBS,
    FILL_STEPS, RAMP_NS,
};
use flashlab_kit::suite::{Outcome, RunsOn, Suite, SuiteFigures};
use flashlab_kit::Dim;
use flashlab_kit::SuiteReport;
use flashlab_kit::{
    Axis, Chart, Coord, Measure, Series, SteadyReport, SuiteError, SuiteOptions, Unit,
};
use flashlab_report::html::{Figure, FigureKind};

/// Measurement windows (after a ramp) of the time-based steps when `--runtime` is not given.
const SEQ_READ_NS: u64 = 10 * NS_PER_S;
const SEQ_WRITE_NS: u64 = 30 * NS_PER_S;
const RAND_READ_NS: u64 = 5 * NS_PER_S;
const QOS_NS: u64 = 10 * NS_PER_S;
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
    fn targets(&self) -> RunsOn {
        RunsOn::Any
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
    fn targets(&self) -> RunsOn {
        RunsOn::Any
    }
    fn figures(&self, report: &SuiteReport) -> SuiteFigures {
        SuiteFigures {
            figures: four_corner_bars(report),
            replaces: Vec::new(),
        }
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        let opts = s.opts();
        Ok(with_steady_chart(four_corners(s, opts)?))
    }
}

/// `qos`: a read/write mix across queue depths, IOPS and read latency percentiles.
pub(crate) struct Qos;

/// `qos`'s own options.
#[derive(Debug, Clone, PartialEq)]
pub struct QosOptions {
    /// Read share of the mix, in percent.
    pub rwmixread: u32,
    /// Queue depths, one measured step each.
    pub depths: Vec<u32>,
}

impl Default for QosOptions {
    fn default() -> Self {
        Self {
            rwmixread: 70,
            depths: vec![1, 8, 32, 64, 128, 256],
        }
    }
}

// `qos`'s command-line options (a doc comment would become the command's about).
#[derive(clap::Args, Debug)]
pub(crate) struct QosArgs {
    /// qos: read share of the mix, percent.
    #[arg(long, default_value_t = 70)]
    rwmixread: u32,
    /// qos, randread-qd-sweep: queue depths, comma-separated. qos's default is shown;
    /// randread-qd-sweep's is 1,2,4,8,16,32,64,128,256.
    #[arg(long, value_delimiter = ',', default_value = "1,8,32,64,128,256")]
    depths: Vec<u32>,
}

impl flashlab_kit::options::OwnOptions for QosOptions {
    fn validate(&self, _common: &SuiteOptions) -> Result<(), SuiteError> {
        let bad = |option: &'static str, value: String, valid: String| {
            Err(SuiteError::BadOption {
                option,
                value,
                valid,
            })
        };
        if self.rwmixread > 100 {
            return bad(
                "--rwmixread",
                self.rwmixread.to_string(),
                "a percentage from 0 to 100".into(),
            );
        }
        if self.depths.is_empty() {
            return bad("--depths", String::new(), "at least one queue depth".into());
        }
        let max = flashlab_kit::options::MAX_QD;
        if let Some(&d) = self.depths.iter().find(|&&d| d == 0 || d > max) {
            return bad("--depths", d.to_string(), format!("depths from 1 to {max}"));
        }
        if let Some((i, d)) = flashlab_kit::options::repeated(&self.depths, |&d| d) {
            return Err(flashlab_kit::options::repeated_error(
                "--depths",
                d.to_string(),
                i,
            ));
        }
        Ok(())
    }
}

impl Suite for Qos {
    fn name(&self) -> &'static str {
        "qos"
    }
    fn summary(&self) -> &'static str {
        "4 KiB read/write mix across queue depths: IOPS, read latency tail"
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Any
    }
    fn augment_args(&self, cmd: clap::Command) -> clap::Command {
        <QosArgs as clap::Args>::augment_args(cmd)
    }
    fn apply_args(&self, m: &clap::ArgMatches, o: &mut SuiteOptions) -> Result<(), SuiteError> {
        let a = flashlab_kit::suite::parse_args::<QosArgs>(m)?;
        *o.own_mut() = QosOptions {
            rwmixread: a.rwmixread,
            depths: a.depths,
        };
        Ok(())
    }
    fn options_text(&self, o: &SuiteOptions) -> Vec<String> {
        let q = o.own::<QosOptions>();
        let depths: Vec<String> = q.depths.iter().map(u32::to_string).collect();
        vec![
            format!("{}% reads", q.rwmixread),
            format!("queue depths {}", depths.join(", ")),
        ]
    }
    fn grids(&self) -> &'static [GridSpec] {
        &[QOS]
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        let opts = s.opts();
        let mut o = with_steady_chart(qos(s, opts)?);
        o.charts
            .extend(qos_charts(&opts.own::<QosOptions>().depths, &o.results));
        Ok(o)
    }
}

/// IOPS against queue depth, and read latency (mean and percentiles, log scale) against it.
fn qos_charts(depths: &[u32], results: &[Measure]) -> Vec<Chart> {
    let line = |name: &str, family: &str, col: Option<Coord>| Series {
        name: name.to_string(),
        points: depths
            .iter()
            .filter_map(|&d| {
                result_value(results, family, &[Coord::Depth(d)], col).map(|v| (f64::from(d), v))
            })
            .collect(),
    };
    let mut latency = vec![line("average", "read_lat_avg_ns", None)];
    for (p, _) in QOS_PERCENTILES {
        latency.push(line(
            &format!("p{p}"),
            "read_lat_ns",
            Some(Coord::Percentile(p)),
        ));
    }
    vec![
        Chart {
            id: "qos-iops".into(),
            title: "IOPS against queue depth".into(),
            x: Axis::log("queue depth", Unit::Count),
            y: Axis::linear("IOPS", Unit::Iops),
            series: vec![
                line("total", "iops", None),
                line("read", "read_iops", None),
                line("write", "write_iops", None),
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

fn precondition(
    s: &mut Session,
    opts: &SuiteOptions,
) -> Result<(SteadyReport, Vec<Measure>), SuiteError> {
    let rounds = opts.max_rounds * round_steps(s, opts);
    s.plan_steps(FILL_STEPS + rounds, 1);
    purge_and_fill(s)?;
    let st = random_write_rounds(s, opts)?;
    let mut results = steady_measures(&st);
    for (i, v) in st.rounds_iops.iter().enumerate() {
        results.push(measure("write_iops", Unit::Iops, *v).under(&[Coord::Round(i as u32 + 1)]));
    }
    Ok((st, results))
}

fn four_corners(
    s: &mut Session,
    opts: &SuiteOptions,
) -> Result<(SteadyReport, Vec<Measure>), SuiteError> {
    let spec = s.spec();
    // Each corner runs at the depth and jobs its published figure was measured at, where the
    // drive records it (`[spec]`), unless --qd or --jobs says otherwise.
    let depth = |corner: &'static str| -> Result<((u32, u32), Vec<Measure>), SuiteError> {
        let c = spec
            .condition(corner)
            .map_err(|(key, value)| SuiteError::BadOption {
                option: key,
                value,
                valid: flashlab_device::config::SPEC_CONDITION_FORM.into(),
            })?;
        let at = match c {
            Some(c) if opts.qd.is_none() && opts.jobs.is_none() => (c.qd, c.jobs),
            _ => qd_jobs(opts),
        };
        // The depth the corner ran at and the published figure's condition, where the drive
        // records one (a drive without keeps its results as they were).
        let test = [Coord::Test(corner)];
        let mut m = Vec::new();
        if let Some(c) = c {
            m.push(measure("qd", Unit::Count, f64::from(at.0)).under(&test));
            m.push(measure("jobs", Unit::Count, f64::from(at.1)).under(&test));
            m.push(measure("published_qd", Unit::Count, f64::from(c.qd)).under(&test));
            m.push(measure("published_jobs", Unit::Count, f64::from(c.jobs)).under(&test));
            let state = match c.state {
                flashlab_device::SpecState::Fresh => 0.0,
                flashlab_device::SpecState::Full => 1.0,
                flashlab_device::SpecState::Steady => 2.0,
            };
            m.push(measure("published_state", Unit::Count, state).under(&test));
        }
        Ok((at, m))
    };
    let window = |default_ns: u64| opts.runtime_ns.unwrap_or(default_ns);
    let bw_iops = |ddir: usize| {
        move |run: &RunResult| {
            vec![
                measure("bw_bytes_per_s", Unit::BytesPerS, bw_bytes_per_s(run, ddir)),
                measure("iops", Unit::Iops, iops(run, ddir)),
            ]
        }
    };
    let steps: [(&'static str, &str, &str, u64, u64, usize); 3] = [
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
    let rounds = opts.max_rounds * round_steps(s, opts);
    s.plan_steps(FILL_STEPS + steps.len() + rounds, 1);
    // Sequential fill: the state sequential and read figures are specified in.
    purge_and_fill(s)?;
    let mut results = Vec::new();
    for (name, rw, bs, runtime_ns, ramp_ns, ddir) in steps {
        let ((qd, jobs), conditions) = depth(name)?;
        results.extend(conditions);
        let text = job_text(name, rw, bs, qd, jobs, &timed(window(runtime_ns), ramp_ns));
        let run = s.job(name, &text, &bw_iops(ddir))?;
        let test = [Coord::Test(name)];
        results.push(
            measure(
                "bw_bytes_per_s",
                Unit::BytesPerS,
                bw_bytes_per_s(&run, ddir),
            )
            .under(&test),
        );
        results.push(measure("iops", Unit::Iops, iops(&run, ddir)).under(&test));
    }
    // Random writes are measured where they settle: the mean of the steady window.
    let ((qd, jobs), conditions) = depth("rand-write-4k")?;
    results.extend(conditions);
    let mut at = opts.clone();
    (at.qd, at.jobs) = (Some(qd), Some(jobs));
    let st = random_write_rounds(s, &at)?;
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
    let q = opts.own::<QosOptions>();
    let rounds = opts.max_rounds * round_steps(s, opts);
    s.plan_steps(FILL_STEPS + rounds + q.depths.len(), 1);
    purge_and_fill(s)?;
    let st = random_write_rounds(s, opts)?;
    let mut results = vec![measure("steady_write_iops", Unit::Iops, steady_iops(&st))];
    let jobs = opts.jobs.unwrap_or(DEFAULT_JOBS);
    // fio also reports the median, so the report's percentile chart shows the tail beside
    // it; the results keep the tail only.
    let percentiles = std::iter::once(50.0)
        .chain(QOS_PERCENTILES.iter().map(|(p, _)| *p))
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(":");
    for &depth in &q.depths {
        let name = format!("qos-qd{depth}");
        let mut lines = timed(opts.runtime_ns.unwrap_or(QOS_NS), RAMP_NS);
        lines.push(format!("rwmixread={}", q.rwmixread));
        lines.push(format!("percentile_list={percentiles}"));
        let text = job_text(&name, "randrw", "4k", depth, jobs, &lines);
        // The drive is steady: each depth's window keeps its time on a slice.
        let run = s.steady_job(&name, &text, &qos_measures)?;
        let at = [Coord::Depth(depth)];
        results.extend(qos_measures(&run).into_iter().map(|m| m.under(&at)));
    }
    Ok((st, results))
}

/// IOPS of the mix and the read completion latency: mean and tail percentiles, from the
/// report's histogram (fio's clat percentiles).
fn qos_measures(run: &RunResult) -> Vec<Measure> {
    let mut m = vec![
        measure(
            "iops",
            Unit::Iops,
            iops(run, DDIR_READ) + iops(run, DDIR_WRITE),
        ),
        measure("read_iops", Unit::Iops, iops(run, DDIR_READ)),
        measure("write_iops", Unit::Iops, iops(run, DDIR_WRITE)),
    ];
    // One job (clones merged): its read latency is the run's.
    let Some(job) = run.jobs.first() else {
        return m;
    };
    if let Some(clat) = job.clat_ns(DDIR_READ) {
        m.push(measure("read_lat_avg_ns", Unit::Ns, clat.mean));
    }
    let pcts = job.clat_percentiles_ns(DDIR_READ);
    for (p, _) in QOS_PERCENTILES {
        if let Some(&(_, v)) = pcts.iter().find(|(q, _)| (q - p).abs() < 1e-9) {
            m.push(measure("read_lat_ns", Unit::Ns, v as f64).col(Coord::Percentile(p)));
        }
    }
    m
}

// The grids it lays its results out in.
const QOS: GridSpec = GridSpec {
    title: "IOPS and read latency per queue depth",
    row_header: "queue depth",
    dims: &[Dim::QueueDepth],
    cols: Cols::Figures(&[
        ("IOPS", "iops", None),
        ("read IOPS", "read_iops", None),
        ("write IOPS", "write_iops", None),
        ("read avg", "read_lat_avg_ns", None),
        ("p99", "read_lat_ns", P99),
        ("p99.9", "read_lat_ns", P99_9),
        ("p99.99", "read_lat_ns", P99_99),
        ("p99.9999", "read_lat_ns", P99_9999),
    ]),
    row_label: values,
};

/// The published four-corner figures of presets, with their sources.
const TARGETS_TOML: &str = include_str!("../../../../jobs/four-corners/targets.toml");

/// A published figure: (value in the chart's unit, source).
#[derive(Debug, Clone, PartialEq)]
struct Published {
    value: f64,
    source: String,
}

/// The published figure for `preset`'s `corner` (`seq-read-128k` …), from the calibration
/// targets: MB/s as bytes per second, IOPS as is.
fn published(preset: &str, corner: &str) -> Option<Published> {
    let doc: toml::Table = TARGETS_TOML.parse().ok()?;
    let runs = doc.get("run")?.as_array()?;
    runs.iter()
        .filter_map(|r| r.as_table())
        .filter(|r| r.get("preset").and_then(|p| p.as_str()) == Some(preset))
        // Runs that change the drive (another capacity) are not the preset's own figure;
        // the simulator's own settings (`sim.*`) change no figure.
        .filter(|r| {
            r.get("set")
                .and_then(|s| s.as_array())
                .into_iter()
                .flatten()
                .all(|k| k.as_str().is_some_and(|k| k.starts_with("sim.")))
        })
        .flat_map(|r| {
            r.get("corner")
                .and_then(|c| c.as_array())
                .into_iter()
                .flatten()
        })
        .filter_map(|c| c.as_table())
        .find(|c| c.get("name").and_then(|n| n.as_str()) == Some(corner))
        .and_then(|c| {
            let target = c
                .get("target")
                .and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64)))?;
            let scale = match c.get("unit").and_then(|u| u.as_str())? {
                "MB/s" => 1e6,
                "IOPS" => 1.0,
                _ => return None,
            };
            Some(Published {
                value: target * scale,
                source: short_source(c.get("source")?.as_str()?),
            })
        })
}

/// The condition a published corner was measured at, as the suite's results state it
/// (`steady QD64×4`), or that the drive does not record it.
fn published_condition(results: &[Measure], corner: &'static str) -> String {
    let test = [Coord::Test(corner)];
    let v = |family: &str| flashlab_kit::steps::result_value(results, family, &test, None);
    match (v("published_state"), v("published_qd"), v("published_jobs")) {
        (Some(state), Some(qd), Some(jobs)) => {
            let state = ["fresh", "full", "steady"]
                .get(state as usize)
                .copied()
                .unwrap_or("?");
            format!("{state} QD{qd:.0}×{jobs:.0}")
        }
        _ => "condition not recorded".to_string(),
    }
}

/// A target's source as a reader needs it: who published it and where, without the
/// calibration's working notes (what follows the first closing parenthesis, or the first
/// `;` outside one).
fn short_source(source: &str) -> String {
    let mut depth = 0usize;
    for (i, c) in source.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    return source[..=i].to_string();
                }
            }
            ';' if depth == 0 => return source[..i].trim_end().to_string(),
            _ => {}
        }
    }
    source.to_string()
}

/// A figure of two corners sharing a unit: its title, the unit, and (step, category) of each.
type CornerGroup = (&'static str, Unit, [(&'static str, &'static str); 2]);

/// Four corners as two figures of grouped bars (sequential MB/s, random IOPS), read and
/// write per drive, each drive's published figure beside its bar where there is one.
/// Four-corners' grouped bars (its [`flashlab_kit::Suite::figures`]).
fn four_corner_bars(report: &SuiteReport) -> Vec<Figure> {
    let steps = &job_steps(report);
    // (corner, category, unit): the step that measured it, or the steady window for random
    // writes.
    let groups: [CornerGroup; 2] = [
        (
            "Sequential 128 KiB",
            Unit::BytesPerS,
            [("seq-read-128k", "read"), ("seq-write-128k", "write")],
        ),
        (
            "Random 4 KiB",
            Unit::Iops,
            [("rand-read-4k", "read"), ("rand-write-4k", "write")],
        ),
    ];
    let mut out = Vec::new();
    for (title, unit, corners) in groups {
        let mut series = Vec::new();
        let mut secondary = Vec::new();
        let mut colours = Vec::new();
        let mut sources = Vec::new();
        for (device, d) in report.devices.iter().enumerate() {
            let mut points = Vec::new();
            for (i, (corner, _)) in corners.iter().enumerate() {
                if let Some(v) = corner_value(steps, device, d, unit, corner) {
                    points.push((i as f64, v));
                }
            }
            if points.is_empty() {
                continue;
            }
            colours.push(device);
            series.push(Series {
                name: series_name(report, device, "measured"),
                points,
            });
            let spec: Vec<(usize, Published)> = corners
                .iter()
                .enumerate()
                .filter_map(|(i, (corner, _))| Some((i, published(&d.device, corner)?)))
                .collect();
            if !spec.is_empty() {
                secondary.push(series.len());
                colours.push(device);
                series.push(Series {
                    name: series_name(report, device, "published"),
                    points: spec.iter().map(|(i, p)| (*i as f64, p.value)).collect(),
                });
                for (i, p) in spec {
                    sources.push(format!(
                        "{} {}: {}, {}",
                        d.device,
                        corners[i].0,
                        p.source,
                        published_condition(&d.results, corners[i].0)
                    ));
                }
            }
        }
        if series.is_empty() {
            continue;
        }
        out.push(corner_figure(
            title, unit, &corners, series, secondary, colours, &sources,
        ));
    }
    out
}

/// A drive's figure of one corner: the step that measured it, or the steady window (its
/// last round without one) for random writes.
fn corner_value(
    steps: &[JobStep],
    device: usize,
    d: &flashlab_kit::DeviceReport,
    unit: Unit,
    corner: &str,
) -> Option<f64> {
    if corner == "rand-write-4k" {
        let st = d.steady.as_ref()?;
        return st
            .verdict
            .window
            .map(|w| w.mean)
            .or_else(|| st.rounds_iops.last().copied());
    }
    let s = steps
        .iter()
        .rev()
        .find(|s| s.device == device && s.name == corner)?;
    let dir = if corner.contains("read") {
        &s.read
    } else {
        &s.write
    };
    Some(match unit {
        Unit::BytesPerS => dir.bw_bytes_per_s,
        _ => dir.iops,
    })
}

/// One group of four-corners' bars as a figure, with its corners as ticks and its notes.
#[allow(clippy::too_many_arguments)]
fn corner_figure(
    title: &str,
    unit: Unit,
    corners: &[(&str, &str); 2],
    series: Vec<Series>,
    secondary: Vec<usize>,
    colours: Vec<usize>,
    sources: &[String],
) -> Figure {
    let mut fig = Figure::new(Chart {
        id: format!("four-corners-{}", slug(title)),
        title: format!("{title}: read and write"),
        x: Axis::linear("", Unit::Count),
        y: Axis::linear(
            if unit == Unit::Iops {
                "IOPS"
            } else {
                "bandwidth"
            },
            unit,
        ),
        series,
        band: None,
    });
    fig.kind = FigureKind::Bars;
    fig.x_ticks = corners
        .iter()
        .enumerate()
        .map(|(i, (_, c))| (i as f64, c.to_string()))
        .collect();
    label_bars(&mut fig);
    fig.secondary = secondary;
    fig.colours = colours;
    let mut note = Vec::new();
    if unit == Unit::Iops {
        note.push(
            "Random writes are the mean of the steady-state window (the last round when \
             it was not reached)."
                .to_string(),
        );
    }
    if !sources.is_empty() {
        note.push(format!(
            "Outlined bars are the published figures, each with its source and the \
             condition it was measured in (fresh: a new drive; full: after a fill; steady: \
             at steady state; the queue depth × jobs), which need not be the measured \
             bar's: {}.",
            sources.join("; ")
        ));
    }
    fig.note = (!note.is_empty()).then(|| note.join(" "));
    fig
}

#[cfg(test)]
mod tests {
    #[test]
    fn sources_lose_working_notes() {
        assert_eq!(
            short_source("spec, U.2 (heise.de/-4720224; checked); = controller.max_iops"),
            "spec, U.2 (heise.de/-4720224; checked)"
        );
        assert_eq!(short_source("review; fits x"), "review");
        assert_eq!(published("no-such-preset", "seq-read-128k"), None);
    }

    use super::*;

    #[test]
    fn qos_charts_follow_the_measured_depths() {
        let results = vec![
            measure("iops", Unit::Iops, 100.0).under(&[Coord::Depth(1)]),
            measure("iops", Unit::Iops, 700.0).under(&[Coord::Depth(8)]),
            measure("read_lat_ns", Unit::Ns, 9e4)
                .col(Coord::Percentile(99.0))
                .under(&[Coord::Depth(1)]),
        ];
        let charts = qos_charts(&[1, 8], &results);
        assert_eq!(charts[0].series[0].points, vec![(1.0, 100.0), (8.0, 700.0)]);
        let p99 = charts[1].series.iter().find(|s| s.name == "p99").unwrap();
        assert_eq!(p99.points, vec![(1.0, 9e4)]);
        assert!(charts[1].y.log);
    }
}
