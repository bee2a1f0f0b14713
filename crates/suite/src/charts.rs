//! The figures a reviewer publishes, drawn from what every suite keeps: each job step's fio
//! JSON (IOPS, bandwidth, completion-latency percentiles and fio's latency distribution), the
//! steady-state window, and the published figures the calibration compares presets with.
//!
//! - Latency against IOPS: the steps that ran one workload at several queue depths (qos,
//!   app-profiles, showdown) as one curve per drive, each point labelled with its depth.
//! - Latency percentiles (on a "nines" axis up to 99.99 % and beyond) and the cumulative
//!   distribution of completion latency, per queue depth or per test.
//! - Grouped bars for suites of unrelated tests (four corners, the desktop tests), drives side
//!   by side, with the drive's published figure beside its own where there is one.
//!
//! The suites' own charts (rounds, timelines, sweeps) are drawn as they come; these are
//! added to them, and the same data goes into the JSON report (`figures`) and the output
//! directory (`figures.csv`).

use std::fmt::Write as _;

use flashlab_report::html::{Figure, FigureKind};
use serde_json::{json, Value};

use crate::{Axis, Chart, DirectionFigures, Series, StepKind, SuiteReport, Unit};

/// Figures with more lines than this are cut to it (and say so): past a dozen the colours
/// repeat and no reader can follow a line.
const MAX_SERIES: usize = 12;

/// The published four-corner figures of presets, with their sources.
const TARGETS_TOML: &str = include_str!("../../../jobs/four-corners/targets.toml");

/// One job step as the figures read it.
#[derive(Debug, Clone)]
struct JobStep {
    device: usize,
    name: String,
    /// The workload without its depth: `4k randrw 70/30`.
    workload: String,
    random: bool,
    bs_bytes: u64,
    iodepth: u32,
    numjobs: u32,
    read: DirectionFigures,
    write: DirectionFigures,
    /// fio's latency distribution: (upper bound in ns, share of I/Os in percent).
    distribution: Vec<(f64, f64)>,
}

impl JobStep {
    /// "QD8", or "QD8×4" with several jobs.
    fn depth_label(&self) -> String {
        if self.numjobs > 1 {
            format!("QD{}×{}", self.iodepth, self.numjobs)
        } else {
            format!("QD{}", self.iodepth)
        }
    }

    fn outstanding(&self) -> u64 {
        u64::from(self.iodepth) * u64::from(self.numjobs)
    }

    fn total_iops(&self) -> f64 {
        self.read.iops + self.write.iops
    }

    /// The direction whose latency is shown: reads when there are any (the latency a mixed
    /// workload's reader waits for), else writes.
    fn shown(&self) -> (&'static str, &DirectionFigures) {
        if self.read.ios > 0 {
            ("read", &self.read)
        } else {
            ("write", &self.write)
        }
    }

    /// Mean completion latency over both directions.
    fn mean_latency_ns(&self) -> f64 {
        let n = (self.read.ios + self.write.ios) as f64;
        if n == 0.0 {
            return f64::NAN;
        }
        (self.read.clat_mean_ns * self.read.ios as f64
            + self.write.clat_mean_ns * self.write.ios as f64)
            / n
    }

    /// The 99th percentile of the slower direction.
    fn p99_latency_ns(&self) -> f64 {
        [&self.read, &self.write]
            .iter()
            .filter(|d| d.ios > 0)
            .filter_map(|d| d.percentiles.iter().find(|p| (p.0 - 99.0).abs() < 1e-9))
            .map(|p| p.1)
            .fold(f64::NAN, f64::max)
    }
}

/// The job steps of a report with the figures their runs kept; a step without (a real
/// target's job whose text does not parse) is left out: the figures show what was measured,
/// never a guess.
fn job_steps(report: &SuiteReport) -> Vec<JobStep> {
    let mut out = Vec::new();
    for (device, d) in report.devices.iter().enumerate() {
        for s in &d.steps {
            let (StepKind::Job, Some(f)) = (s.kind, &s.figures) else {
                continue;
            };
            out.push(JobStep {
                device,
                name: s.name.clone(),
                workload: f.workload.clone(),
                random: f.random,
                bs_bytes: f.bs_bytes,
                iodepth: f.iodepth,
                numjobs: f.numjobs,
                read: f.read.clone(),
                write: f.write.clone(),
                distribution: f.distribution.clone(),
            });
        }
    }
    out
}

/// The figures of a report, in the order the page shows them, and the suite charts they
/// stand in for on the page (the JSON keeps those as they are).
pub(crate) struct ReportFigures {
    pub figures: Vec<Figure>,
    pub replaces: Vec<&'static str>,
}

pub(crate) fn report_figures(report: &SuiteReport) -> ReportFigures {
    let steps = job_steps(report);
    let mut figures = Vec::new();
    let mut replaces = Vec::new();
    let own = report.suite.figures(report);
    figures.extend(own.figures);
    replaces.extend(own.replaces);
    // Suites of unrelated tests have their bars; a test run at two depths there is not a
    // curve.
    let families = if figures.is_empty() {
        depth_families(report, &steps)
    } else {
        Vec::new()
    };
    for (workload, members) in &families {
        figures.push(latency_iops(report, workload, members));
    }
    for (workload, members) in &families {
        figures.extend(percentile_figure(
            report,
            &format!("at each queue depth, {workload}"),
            members,
        ));
        figures.extend(cdf_figure(
            report,
            &format!("at each queue depth, {workload}"),
            members,
        ));
    }
    if families.is_empty() {
        // One figure per drive: a line per test, in the same colour on every drive.
        let tests = last_of_each_workload(&steps);
        for (device, d) in report.devices.iter().enumerate() {
            let mine: Vec<&JobStep> = tests
                .iter()
                .copied()
                .filter(|s| s.device == device)
                .collect();
            let what = if report.devices.len() > 1 {
                format!("of each test, {}", d.device)
            } else {
                "of each test".to_string()
            };
            figures.extend(percentile_figure(report, &what, &mine));
            figures.extend(cdf_figure(report, &what, &mine));
        }
    }
    ReportFigures { figures, replaces }
}

/// A series name: the device's name prefixed when the report compares several.
fn series_name(report: &SuiteReport, device: usize, name: &str) -> String {
    if report.devices.len() > 1 {
        format!("{}: {name}", report.devices[device].device)
    } else {
        name.to_string()
    }
}

/// A distribution's series name: figures of one drive's tests leave the drive out.
fn member_name(report: &SuiteReport, what: &str, device: usize, name: &str) -> String {
    if what.starts_with("of each test") {
        name.to_string()
    } else {
        series_name(report, device, name)
    }
}

fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// The workloads some device ran at two or more queue depths, in first-seen order, each with
/// its steps (per device and depth the last step, by depth).
fn depth_families<'s>(
    report: &SuiteReport,
    steps: &'s [JobStep],
) -> Vec<(String, Vec<&'s JobStep>)> {
    let mut workloads: Vec<&str> = Vec::new();
    for s in steps {
        if !workloads.contains(&s.workload.as_str()) {
            workloads.push(&s.workload);
        }
    }
    workloads
        .into_iter()
        .filter_map(|w| {
            let mut members: Vec<&JobStep> = Vec::new();
            for device in 0..report.devices.len() {
                let mut mine: Vec<&JobStep> = Vec::new();
                for s in steps
                    .iter()
                    .filter(|s| s.device == device && s.workload == w)
                {
                    mine.retain(|m| m.outstanding() != s.outstanding());
                    mine.push(s);
                }
                mine.sort_by_key(|s| s.outstanding());
                members.extend(mine);
            }
            let depths_of = |device: usize| members.iter().filter(|s| s.device == device).count();
            (0..report.devices.len())
                .any(|d| depths_of(d) >= 2)
                .then(|| (w.to_string(), members))
        })
        .collect()
}

/// Per device, the last step of each workload and depth (the last round, not every one).
fn last_of_each_workload(steps: &[JobStep]) -> Vec<&JobStep> {
    let mut out: Vec<&JobStep> = Vec::new();
    for s in steps {
        out.retain(|o| {
            !(o.device == s.device
                && o.workload == s.workload
                && o.outstanding() == s.outstanding())
        });
        out.push(s);
    }
    out.sort_by_key(|s| s.device);
    out
}

fn latency_iops(report: &SuiteReport, workload: &str, members: &[&JobStep]) -> Figure {
    let mut series = Vec::new();
    let mut labels = Vec::new();
    let mut colours = Vec::new();
    let mut secondary = Vec::new();
    for device in 0..report.devices.len() {
        let mine: Vec<&&JobStep> = members.iter().filter(|s| s.device == device).collect();
        if mine.is_empty() {
            continue;
        }
        series.push(Series {
            name: series_name(report, device, "mean"),
            points: mine
                .iter()
                .map(|s| (s.total_iops(), s.mean_latency_ns()))
                .collect(),
        });
        labels.push(mine.iter().map(|s| s.depth_label()).collect());
        colours.extend([device, device]);
        secondary.push(series.len());
        series.push(Series {
            name: series_name(report, device, "99th percentile"),
            points: mine
                .iter()
                .map(|s| (s.total_iops(), s.p99_latency_ns()))
                .collect(),
        });
        labels.push(Vec::new());
    }
    let mut fig = Figure::new(Chart {
        id: format!("latency-iops-{}", slug(workload)),
        title: format!("Completion latency against IOPS per queue depth, {workload}"),
        x: Axis::linear("IOPS", Unit::Iops),
        y: Axis::log("completion latency", Unit::Ns),
        series,
        band: None,
    });
    fig.labels = labels;
    fig.colours = colours;
    fig.secondary = secondary;
    fig.note = Some(
        "Each point is one queue depth (labelled on the mean); the dashed line is the 99th \
         percentile of the slower direction. A curve bending up is the depth past which the \
         drive only queues."
            .into(),
    );
    fig
}

/// Percentile → position on a "nines" axis: 0 → 0, 90 → 1, 99 → 2, 99.9 → 3 …
fn nines(percentile: f64) -> f64 {
    -(1.0 - percentile / 100.0).log10()
}

/// Ticks of a nines axis from `min_pos` to `max_pos`: 0, 50, 90, 99, 99.9 …
fn nines_ticks(min_pos: f64, max_pos: f64) -> Vec<(f64, String)> {
    let mut ticks: Vec<(f64, String)> = vec![(0.0, "0".into()), (nines(50.0), "50".into())];
    for k in 1..=max_pos.ceil().max(1.0) as usize {
        let label = match k {
            1 => "90".to_string(),
            k => format!("99{}{}", if k > 2 { "." } else { "" }, "9".repeat(k - 2)),
        };
        ticks.push((k as f64, label));
    }
    // From the tick at or below the first point.
    let first = ticks
        .iter()
        .rposition(|t| t.0 <= min_pos + 1e-9)
        .unwrap_or(0);
    ticks.split_off(first)
}

/// Completion-latency percentiles of each member (its shown direction), on a nines axis;
/// the minimum stands at 0.
fn percentile_figure(report: &SuiteReport, what: &str, members: &[&JobStep]) -> Option<Figure> {
    let mut series = Vec::new();
    let mut max_pos: f64 = 0.0;
    let mut min_pos = f64::INFINITY;
    for s in members {
        let (dir_name, dir) = s.shown();
        if dir.percentiles.is_empty() {
            continue;
        }
        let mut points = Vec::new();
        for &(p, v) in dir.percentiles.iter().filter(|p| p.0 < 100.0) {
            let x = nines(p);
            max_pos = max_pos.max(x);
            min_pos = min_pos.min(x);
            points.push((x, v));
        }
        let label = if what.starts_with("at each") {
            format!("{} {dir_name}", s.depth_label())
        } else if s.name.contains(dir_name) {
            s.name.clone()
        } else {
            format!("{} {dir_name}", s.name)
        };
        series.push(Series {
            name: member_name(report, what, s.device, &label),
            points,
        });
    }
    if series.is_empty() {
        return None;
    }
    let id = format!("latency-percentiles-{}", slug(what));
    let mut fig = Figure::new(Chart {
        id,
        title: format!("Completion-latency percentiles {what}"),
        x: Axis::linear("percentile (%)", Unit::Count),
        y: Axis::log("completion latency", Unit::Ns),
        series,
        band: None,
    });
    fig.x_ticks = nines_ticks(min_pos, max_pos);
    fig.note = Some(
        "Percentiles as fio reports them for each step (reads where the step read, else \
         writes); the axis gives each further nine the same width, so the tail reads as \
         clearly as the median."
            .into(),
    );
    Some(fig)
}

/// The cumulative share of I/Os completed within each of fio's latency buckets.
fn cdf_figure(report: &SuiteReport, what: &str, members: &[&JobStep]) -> Option<Figure> {
    let mut series = Vec::new();
    for s in members {
        let mut total = 0.0;
        let mut points = Vec::new();
        // The curve starts at the bound below the first I/O: 0 % there.
        let mut below = None;
        for &(upper_ns, pct) in &s.distribution {
            total += pct;
            if total > 0.0 {
                if points.is_empty() {
                    points.extend(below.map(|b| (b, 0.0)));
                }
                points.push((upper_ns, total.min(100.0)));
            } else {
                below = Some(upper_ns);
            }
            if total >= 100.0 - 1e-6 {
                break;
            }
        }
        if points.is_empty() {
            continue;
        }
        let label = if what.starts_with("at each") {
            s.depth_label()
        } else {
            s.name.clone()
        };
        series.push(Series {
            name: member_name(report, what, s.device, &label),
            points,
        });
    }
    if series.is_empty() {
        return None;
    }
    let mut fig = Figure::new(Chart {
        id: format!("latency-cdf-{}", slug(what)),
        title: format!("Share of I/Os completed within a latency, {what}"),
        x: Axis::log("latency", Unit::Ns),
        y: Axis::linear("I/Os completed", Unit::Percent),
        series,
        band: None,
    });
    fig.note = Some(
        "From fio's latency distribution of each step (reads and writes together, at its \
         bucket bounds 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000 of each unit)."
            .into(),
    );
    Some(fig)
}

/// A figure cut to [`MAX_SERIES`] lines for the page, saying so (the JSON report keeps them
/// all).
pub(crate) fn cap(mut fig: Figure) -> Figure {
    let n = fig.chart.series.len();
    if n > MAX_SERIES {
        fig.chart.series.truncate(MAX_SERIES);
        fig.labels.truncate(MAX_SERIES);
        fig.colours.truncate(MAX_SERIES);
        fig.secondary.retain(|&i| i < MAX_SERIES);
        let said = format!(
            "The first {MAX_SERIES} of {n} lines are drawn; the JSON report's figures have \
             them all."
        );
        fig.note = Some(match fig.note.take() {
            Some(n) => format!("{n} {said}"),
            None => said,
        });
    }
    fig
}

/// A bar's value as its label: MB/s whole, IOPS in thousands above 10,000.
fn bar_label(unit: Unit, v: f64) -> String {
    match unit {
        Unit::BytesPerS => format!("{:.0}", v / 1e6),
        Unit::Iops if v >= 1e6 => format!("{:.2}M", v / 1e6),
        // "k" as the axis ticks spell thousands.
        Unit::Iops if v >= 1e4 => format!("{:.0}k", v / 1e3),
        _ => format!("{v:.0}"),
    }
}

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
fn published_condition(results: &[crate::Measure], corner: &'static str) -> String {
    let test = [crate::Coord::Test(corner)];
    let v = |family: &str| crate::steps::result_value(results, family, &test, None);
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
/// Four-corners' grouped bars (its [`crate::Suite::figures`]).
pub(crate) fn four_corner_bars(report: &SuiteReport) -> Vec<Figure> {
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
        let mut labels = Vec::new();
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
            labels.push(points.iter().map(|p| bar_label(unit, p.1)).collect());
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
                labels.push(spec.iter().map(|(_, p)| bar_label(unit, p.value)).collect());
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
            title, unit, &corners, series, labels, secondary, colours, &sources,
        ));
    }
    out
}

/// A drive's figure of one corner: the step that measured it, or the steady window (its
/// last round without one) for random writes.
fn corner_value(
    steps: &[JobStep],
    device: usize,
    d: &crate::DeviceReport,
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
    labels: Vec<Vec<String>>,
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
    fig.labels = labels;
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

/// CrystalDiskMark's name of a test: `SEQ1M Q8T1`, `RND4K Q32T16`.
fn cdm_name(s: &JobStep) -> String {
    let size = if s.bs_bytes >= 1 << 20 {
        format!("{}M", s.bs_bytes >> 20)
    } else {
        format!("{}K", s.bs_bytes >> 10)
    };
    let kind = if s.random { "RND" } else { "SEQ" };
    format!("{kind}{size} Q{}T{}", s.iodepth, s.numjobs)
}

/// The desktop tests as CrystalDiskMark shows them: per test the best measured run's
/// bandwidth, a figure for reads and one for writes, the drives side by side. A test's first
/// run prepares and is not counted; a step run once (writing the test file) is not a test.
/// Whether a step is a run of a desktop test: named `<test>-read-<n>` or `<test>-write-<n>`,
/// as the desktop suite names them.
fn desktop_run(s: &JobStep) -> bool {
    let mut parts = s.name.rsplitn(3, '-');
    let run = parts.next().unwrap_or("");
    let dir = parts.next().unwrap_or("");
    !run.is_empty() && run.bytes().all(|b| b.is_ascii_digit()) && matches!(dir, "read" | "write")
}

/// The desktop tests' grouped bars (desktop's [`crate::Suite::figures`]).
pub(crate) fn desktop_bars(report: &SuiteReport) -> Vec<Figure> {
    // Only the tests' runs (`<test>-<dir>-<run>`): the test file, written once at 1 MiB and
    // QD1, has SEQ1M Q1T1's shape but is not one of its runs.
    let steps = &job_steps(report)
        .into_iter()
        .filter(desktop_run)
        .collect::<Vec<_>>();
    // Per (device, test, write): the runs' bandwidths in order.
    let runs = |device: usize, test: &str, write: bool| -> Vec<f64> {
        steps
            .iter()
            .filter(|s| s.device == device && cdm_name(s) == test)
            .filter(|s| {
                if write {
                    s.write.ios > 0
                } else {
                    s.read.ios > 0
                }
            })
            .map(|s| {
                if write {
                    s.write.bw_bytes_per_s
                } else {
                    s.read.bw_bytes_per_s
                }
            })
            .collect()
    };
    let mut out = Vec::new();
    for (write, dir) in [(false, "read"), (true, "write")] {
        let mut tests: Vec<String> = Vec::new();
        // In the order the tests ran this direction (the test file is written first).
        for s in steps.iter().filter(|s| {
            if write {
                s.write.ios > 0
            } else {
                s.read.ios > 0
            }
        }) {
            let name = cdm_name(s);
            if !tests.contains(&name)
                && (0..report.devices.len()).any(|d| runs(d, &name, write).len() >= 2)
            {
                tests.push(name);
            }
        }
        if tests.is_empty() {
            continue;
        }
        let mut series = Vec::new();
        let mut labels = Vec::new();
        for device in 0..report.devices.len() {
            let points: Vec<(f64, f64)> = tests
                .iter()
                .enumerate()
                .filter_map(|(i, t)| {
                    let r = runs(device, t, write);
                    (r.len() >= 2).then(|| {
                        let best = r[1..].iter().copied().fold(f64::NEG_INFINITY, f64::max);
                        (i as f64, best)
                    })
                })
                .collect();
            if points.is_empty() {
                continue;
            }
            labels.push(
                points
                    .iter()
                    .map(|p| bar_label(Unit::BytesPerS, p.1))
                    .collect(),
            );
            series.push(Series {
                name: report.devices[device].device.clone(),
                points,
            });
        }
        let mut fig = Figure::new(Chart {
            id: format!("desktop-{dir}"),
            title: format!("Best-run {dir} bandwidth per test, as CrystalDiskMark shows it"),
            x: Axis::linear("", Unit::Count),
            y: Axis::linear(format!("{dir} bandwidth"), Unit::BytesPerS),
            series,
            band: None,
        });
        fig.kind = FigureKind::Bars;
        fig.x_ticks = tests
            .iter()
            .enumerate()
            .map(|(i, t)| (i as f64, t.clone()))
            .collect();
        fig.labels = labels;
        fig.note = Some(
            "The best of each test's measured runs (its first run prepares and is not \
             counted), in MB/s (10^6 bytes per second)."
                .into(),
        );
        out.push(fig);
    }
    out
}

fn number(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// One figure's data as JSON: what is drawn, in raw units, with labels and named x
/// positions.
pub(crate) fn figure_json(fig: &Figure) -> Value {
    let c = &fig.chart;
    let axis = |a: &Axis| json!({"label": a.label, "unit": a.unit.name(), "log": a.log});
    json!({
        "id": c.id,
        "title": c.title,
        "kind": match fig.kind { FigureKind::Lines => "lines", FigureKind::Bars => "bars" },
        "x": axis(&c.x),
        "y": axis(&c.y),
        "x_ticks": fig.x_ticks.iter().map(|(p, l)| json!([number(*p), l])).collect::<Vec<_>>(),
        "series": c.series.iter().enumerate().map(|(i, s)| json!({
            "name": s.name,
            "secondary": fig.secondary.contains(&i),
            "points": s.points.iter().map(|&(x, y)| json!([number(x), number(y)])).collect::<Vec<_>>(),
            "labels": fig.labels.get(i).cloned().unwrap_or_default(),
        })).collect::<Vec<_>>(),
        "note": fig.note,
    })
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Every figure's points as one table: `figure,series,x,x_name,y,label` in raw units; `x_name`
/// names a named x position (a bar's category, a percentile), `label` is the point's own.
pub(crate) fn figures_csv(figures: &[Figure]) -> String {
    let mut out = String::from("figure,series,x,x_name,y,label\n");
    for fig in figures {
        for (i, s) in fig.chart.series.iter().enumerate() {
            for (p, &(x, y)) in s.points.iter().enumerate() {
                let label = fig
                    .labels
                    .get(i)
                    .and_then(|l| l.get(p))
                    .map_or("", String::as_str);
                let x_name = fig
                    .x_ticks
                    .iter()
                    .find(|t| (t.0 - x).abs() < 1e-9)
                    .map_or("", |t| t.1.as_str());
                let _ = writeln!(
                    out,
                    "{},{},{x},{},{y},{}",
                    csv_field(&fig.chart.id),
                    csv_field(&s.name),
                    csv_field(x_name),
                    csv_field(label)
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{suite, DeviceReport, JobFigures, StepRecord, SuiteOptions};

    /// The figures of one job step (`rwmixread=70` for a mixed one).
    fn fio_json(rw: &str, bs: &str, iodepth: u32, read_iops: f64, write_iops: f64) -> JobFigures {
        let dir = |iops: f64, lat_ns: f64| DirectionFigures {
            ios: (iops * 2.0) as u64,
            iops,
            bw_bytes_per_s: iops * 4096.0,
            clat_mean_ns: lat_ns,
            percentiles: vec![(50.0, lat_ns), (99.0, lat_ns * 3.0), (99.99, lat_ns * 5.0)],
        };
        let lat = 1000.0 * f64::from(iodepth);
        let bs_bytes = match bs.strip_suffix('k') {
            Some(k) => k.parse::<u64>().unwrap() << 10,
            None => bs.trim_end_matches('m').parse::<u64>().unwrap() << 20,
        };
        let workload = if matches!(rw, "randrw" | "rw") {
            format!("{bs} {rw} 70/30")
        } else {
            format!("{bs} {rw}")
        };
        JobFigures {
            workload,
            random: rw.starts_with("rand"),
            bs_bytes,
            iodepth,
            numjobs: 1,
            read: dir(read_iops, lat),
            write: dir(write_iops, lat * 2.0),
            distribution: vec![
                (2.0, 0.0),
                (1000.0, 0.0),
                (2000.0, 10.0),
                (4000.0, 40.0),
                (10_000.0, 50.0),
                (2e6, 0.0),
            ],
        }
    }

    fn step(name: &str, figures: JobFigures) -> StepRecord {
        StepRecord {
            name: name.into(),
            kind: StepKind::Job,
            job_text: Some("[x]".into()),
            fio_json: Some("{}".into()),
            figures: Some(figures),
            health: None,
            end_ns: 1,
            measures: Vec::new(),
        }
    }

    fn device(name: &str, steps: Vec<StepRecord>) -> DeviceReport {
        DeviceReport {
            device: name.into(),
            scale_note: None,
            steps,
            steady: None,
            results: Vec::new(),
            charts: Vec::new(),
        }
    }

    fn report(kind: &str, devices: Vec<DeviceReport>) -> SuiteReport {
        SuiteReport {
            suite: suite(kind).unwrap(),
            options: SuiteOptions::default(),
            devices,
        }
    }

    #[test]
    fn one_workload_at_several_depths_is_a_latency_curve_per_drive() {
        let steps = |scale: f64| {
            vec![
                step("fill", fio_json("write", "128k", 32, 0.0, 900.0)),
                step("qos-qd1", fio_json("randrw", "4k", 1, 700.0 * scale, 300.0)),
                step(
                    "qos-qd8",
                    fio_json("randrw", "4k", 8, 2100.0 * scale, 900.0),
                ),
            ]
        };
        let r = report(
            "qos",
            vec![device("a", steps(1.0)), device("b", steps(2.0))],
        );
        let figs = report_figures(&r).figures;
        let ids: Vec<&str> = figs.iter().map(|f| f.chart.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "latency-iops-4k-randrw-70-30",
                "latency-percentiles-at-each-queue-depth-4k-randrw-70-30",
                "latency-cdf-at-each-queue-depth-4k-randrw-70-30"
            ]
        );
        let curve = &figs[0];
        let names: Vec<&str> = curve.chart.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "a: mean",
                "a: 99th percentile",
                "b: mean",
                "b: 99th percentile"
            ]
        );
        // x is total IOPS, y the N-weighted mean of both directions, points by depth.
        assert_eq!(curve.chart.series[2].points[0].0, 1400.0 + 300.0);
        let (r_ios, w_ios) = (2800.0, 600.0);
        let mean = (r_ios * 1000.0 + w_ios * 2000.0) / (r_ios + w_ios);
        assert!((curve.chart.series[2].points[0].1 - mean).abs() < 1e-6);
        assert_eq!(curve.labels[0], ["QD1", "QD8"]);
        assert_eq!(curve.colours, [0, 0, 1, 1]);
        assert_eq!(curve.secondary, [1, 3]);
        // Percentiles on the nines axis: 99 % at 2, 99.99 % at 4.
        let pct = &figs[1];
        assert_eq!(pct.chart.series.len(), 4);
        let xs: Vec<f64> = pct.chart.series[0].points.iter().map(|p| p.0).collect();
        assert!(
            (xs[1] - 2.0).abs() < 1e-9 && (xs[2] - 4.0).abs() < 1e-9,
            "{xs:?}"
        );
        let ticks: Vec<&str> = pct.x_ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(ticks, ["50", "90", "99", "99.9", "99.99"]);
        // The CDF starts at 0 below the first bucket and ends at 100 %.
        let cdf = &figs[2].chart.series[0].points;
        assert_eq!(cdf.first(), Some(&(1000.0, 0.0)));
        assert_eq!(cdf.last(), Some(&(10_000.0, 100.0)));
        // The JSON and CSV carry the same points.
        let j = figure_json(curve);
        assert_eq!(j["series"][0]["labels"][1], "QD8");
        assert_eq!(j["series"][1]["secondary"], true);
        let csv = figures_csv(&figs);
        assert!(csv.starts_with("figure,series,x,x_name,y,label\n"));
        assert!(
            csv.contains("latency-iops-4k-randrw-70-30,a: mean,1000,,"),
            "{csv}"
        );
    }

    #[test]
    fn tests_at_one_depth_each_give_distributions_per_drive_not_curves() {
        let steps = vec![
            step("seq-read-128k", fio_json("read", "128k", 32, 100.0, 0.0)),
            step("rand-read-4k", fio_json("randread", "4k", 32, 5000.0, 0.0)),
        ];
        let r = report(
            "precondition",
            vec![device("a", steps.clone()), device("b", steps)],
        );
        let ids: Vec<String> = report_figures(&r)
            .figures
            .into_iter()
            .map(|f| f.chart.id)
            .collect();
        assert_eq!(
            ids,
            [
                "latency-percentiles-of-each-test-a",
                "latency-cdf-of-each-test-a",
                "latency-percentiles-of-each-test-b",
                "latency-cdf-of-each-test-b"
            ]
        );
    }

    #[test]
    fn four_corners_are_bars_beside_the_published_figures() {
        let steps = vec![
            step("seq-read-128k", fio_json("read", "128k", 32, 50_000.0, 0.0)),
            step(
                "seq-write-128k",
                fio_json("write", "128k", 32, 0.0, 25_000.0),
            ),
            step(
                "rand-read-4k",
                fio_json("randread", "4k", 32, 800_000.0, 0.0),
            ),
        ];
        let r = report(
            "four-corners",
            vec![
                device("samsung-pm9a3-7.68tb", steps.clone()),
                device("x", steps),
            ],
        );
        let figs = report_figures(&r).figures;
        assert_eq!(figs[0].chart.id, "four-corners-sequential-128-kib");
        assert_eq!(figs[1].chart.id, "four-corners-random-4-kib");
        assert!(figs.iter().take(2).all(|f| f.kind == FigureKind::Bars));
        let seq = &figs[0];
        let names: Vec<&str> = seq.chart.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "samsung-pm9a3-7.68tb: measured",
                "samsung-pm9a3-7.68tb: published",
                "x: measured"
            ]
        );
        assert_eq!(seq.secondary, [1]);
        assert_eq!(seq.colours, [0, 0, 1]);
        // The published 6,500 MB/s read, in bytes per second, at the read category.
        assert_eq!(seq.chart.series[1].points[0], (0.0, 6.5e9));
        assert_eq!(seq.chart.series[0].points[0], (0.0, 50_000.0 * 4096.0));
        let note = seq.note.as_deref().unwrap();
        assert!(note.contains("heise.de/-4720224"), "{note}");
        assert!(!note.contains("controller."), "{note}");
        // Without steady-state rounds there is no random-write bar.
        assert_eq!(figs[1].chart.series[0].points.len(), 1);
    }

    #[test]
    fn desktop_tests_are_bars_of_the_best_measured_run() {
        let mut steps = vec![step("test-file", fio_json("write", "1m", 1, 0.0, 50.0))];
        for (run, iops) in [(0, 900.0), (1, 200.0), (2, 300.0)] {
            steps.push(step(
                &format!("seq1m-q8t1-read-{run}"),
                fio_json("read", "1m", 8, iops, 0.0),
            ));
        }
        let r = report("desktop", vec![device("a", steps.clone())]);
        let rf = report_figures(&r);
        assert_eq!(rf.replaces, ["desktop-tests"]);
        let ids: Vec<&str> = rf.figures.iter().map(|f| f.chart.id.as_str()).collect();
        assert_eq!(ids[0], "desktop-read");
        let read = &rf.figures[0];
        assert_eq!(read.x_ticks, [(0.0, "SEQ1M Q8T1".to_string())]);
        // Run 0 prepares: the best of runs 1 and 2.
        assert_eq!(read.chart.series[0].points, [(0.0, 300.0 * 4096.0)]);
        // The test file is written once: not a test, so no write figure.
        assert!(!ids.contains(&"desktop-write"));

        // Writes in the suite's order, after the test file (1 MiB at QD1, SEQ1M Q1T1's
        // shape, and faster than any run here): it is neither a run nor first in the order.
        for (test, qd, runs) in [
            ("seq1m-q8t1", 8, [70.0, 20.0, 30.0]),
            ("seq1m-q1t1", 1, [60.0, 10.0, 15.0]),
        ] {
            for (run, iops) in runs.into_iter().enumerate() {
                steps.push(step(
                    &format!("{test}-write-{run}"),
                    fio_json("write", "1m", qd, 0.0, iops),
                ));
            }
        }
        let r = report("desktop", vec![device("a", steps)]);
        let figs = report_figures(&r).figures;
        let write = figs.iter().find(|f| f.chart.id == "desktop-write").unwrap();
        let ticks: Vec<&str> = write.x_ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(ticks, ["SEQ1M Q8T1", "SEQ1M Q1T1"]);
        assert_eq!(
            write.chart.series[0].points,
            [(0.0, 30.0 * 4096.0), (1.0, 15.0 * 4096.0)]
        );
    }

    #[test]
    fn sources_lose_working_notes() {
        assert_eq!(
            short_source("spec, U.2 (heise.de/-4720224; checked); = controller.max_iops"),
            "spec, U.2 (heise.de/-4720224; checked)"
        );
        assert_eq!(short_source("review; fits x"), "review");
        assert_eq!(published("no-such-preset", "seq-read-128k"), None);
    }

    #[test]
    fn a_figure_past_a_dozen_lines_is_cut_for_the_page_and_says_so() {
        let mut fig = Figure::new(Chart {
            id: "x".into(),
            title: "x".into(),
            x: Axis::linear("x", Unit::Count),
            y: Axis::linear("y", Unit::Count),
            series: (0..15)
                .map(|i| Series {
                    name: i.to_string(),
                    points: vec![(0.0, 1.0)],
                })
                .collect(),
            band: None,
        });
        fig.secondary = vec![3, 13];
        let cut = cap(fig);
        assert_eq!(cut.chart.series.len(), MAX_SERIES);
        assert_eq!(cut.secondary, [3]);
        assert!(cut.note.unwrap().contains("The first 12 of 15 lines"));
    }
}
