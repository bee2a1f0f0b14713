//! The figures a reviewer publishes, drawn from what every suite keeps: each job step's fio
//! JSON (IOPS, bandwidth, completion-latency percentiles and fio's latency distribution), the
//! steady-state window.
//!
//! - Latency against IOPS: the steps that ran one workload at several queue depths as one
//!   curve per drive, each point labelled with its depth.
//! - Latency percentiles (on a "nines" axis up to 99.99 % and beyond) and the cumulative
//!   distribution of completion latency, per queue depth or per test.
//! - A suite's own figures of its whole report (`Suite::figures`: grouped bars of unrelated
//!   tests, drives side by side), drawn with the job steps and helpers here.
//!
//! The suites' own charts (rounds, timelines, sweeps) are drawn as they come; these are
//! added to them, and the same data goes into the JSON report (`figures`) and the output
//! directory (`figures.csv`).

use std::fmt::Write as _;

use flashlab_report::html::{value_label, Figure, FigureKind};
use serde_json::{json, Value};

use crate::{Axis, Chart, DirectionFigures, Series, StepKind, SuiteReport, Unit};

/// Figures with more lines than this are cut to it (and say so): past a dozen the colours
/// repeat and no reader can follow a line.
const MAX_SERIES: usize = 12;

/// One job step as the figures read it.
#[derive(Debug, Clone)]
pub struct JobStep {
    pub device: usize,
    pub name: String,
    /// The workload without its depth: `4k randrw 70/30`.
    pub workload: String,
    pub random: bool,
    pub bs_bytes: u64,
    pub iodepth: u32,
    pub numjobs: u32,
    pub read: DirectionFigures,
    pub write: DirectionFigures,
    /// fio's latency distribution: (upper bound in ns, share of I/Os in percent).
    pub distribution: Vec<(f64, f64)>,
}

impl JobStep {
    /// "QD8", or "QD8×4" with several jobs.
    pub fn depth_label(&self) -> String {
        if self.numjobs > 1 {
            format!("QD{}×{}", self.iodepth, self.numjobs)
        } else {
            format!("QD{}", self.iodepth)
        }
    }

    pub fn outstanding(&self) -> u64 {
        u64::from(self.iodepth) * u64::from(self.numjobs)
    }

    pub fn total_iops(&self) -> f64 {
        self.read.iops + self.write.iops
    }

    /// The direction whose latency is shown: reads when there are any (the latency a mixed
    /// workload's reader waits for), else writes.
    pub fn shown(&self) -> (&'static str, &DirectionFigures) {
        if self.read.ios > 0 {
            ("read", &self.read)
        } else {
            ("write", &self.write)
        }
    }

    /// Mean completion latency over both directions.
    pub fn mean_latency_ns(&self) -> f64 {
        let n = (self.read.ios + self.write.ios) as f64;
        if n == 0.0 {
            return f64::NAN;
        }
        (self.read.clat_mean_ns * self.read.ios as f64
            + self.write.clat_mean_ns * self.write.ios as f64)
            / n
    }

    /// The 99th percentile of the slower direction.
    pub fn p99_latency_ns(&self) -> f64 {
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
pub fn job_steps(report: &SuiteReport) -> Vec<JobStep> {
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
pub struct ReportFigures {
    pub figures: Vec<Figure>,
    pub replaces: Vec<&'static str>,
}

pub fn report_figures(report: &SuiteReport) -> ReportFigures {
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
pub fn series_name(report: &SuiteReport, device: usize, name: &str) -> String {
    if report.devices.len() > 1 {
        format!("{}: {name}", report.devices[device].device)
    } else {
        name.to_string()
    }
}

/// A distribution's series name: figures of one drive's tests leave the drive out.
pub fn member_name(report: &SuiteReport, what: &str, device: usize, name: &str) -> String {
    if what.starts_with("of each test") {
        name.to_string()
    } else {
        series_name(report, device, name)
    }
}

pub fn slug(text: &str) -> String {
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

/// A line figure whose series draw the same points as one line: a line drawn over another
/// hides it, so three drives that measured the same would show as one unexplained line. The
/// first keeps its colour and is named for all ("3 series, identical: a, b, c").
pub fn merge_identical(mut fig: Figure) -> Figure {
    if fig.kind != FigureKind::Lines {
        return fig;
    }
    let series = std::mem::take(&mut fig.chart.series);
    let colour_of = |i: usize| fig.colours.get(i).copied().unwrap_or(i);
    // Per kept series: its original index and the names it stands for.
    let mut kept: Vec<(usize, Vec<String>)> = Vec::new();
    for (i, s) in series.iter().enumerate() {
        let same = kept.iter_mut().find(|(k, _)| {
            let other = &series[*k];
            !s.points.is_empty()
                && other.points == s.points
                && fig.secondary.contains(k) == fig.secondary.contains(&i)
        });
        match same {
            Some((_, names)) => names.push(s.name.clone()),
            None => kept.push((i, vec![s.name.clone()])),
        }
    }
    if kept.len() == series.len() {
        fig.chart.series = series;
        return fig;
    }
    let labels = std::mem::take(&mut fig.labels);
    fig.colours = kept.iter().map(|(i, _)| colour_of(*i)).collect();
    fig.secondary = kept
        .iter()
        .enumerate()
        .filter(|(_, (i, _))| fig.secondary.contains(i))
        .map(|(n, _)| n)
        .collect();
    fig.labels = kept
        .iter()
        .map(|(i, _)| labels.get(*i).cloned().unwrap_or_default())
        .collect();
    fig.chart.series = kept
        .into_iter()
        .map(|(i, names)| {
            let mut s = series[i].clone();
            if names.len() > 1 {
                s.name = format!("{} series, identical: {}", names.len(), names.join(", "));
            }
            s
        })
        .collect();
    fig
}

/// A figure cut to [`MAX_SERIES`] lines for the page, saying so (the JSON report keeps them
/// all).
pub fn cap(mut fig: Figure) -> Figure {
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

/// Every bar's value as its label, in the unit and with the tick suffix of the y axis the
/// bars stand on (all series' values decide it, as they decide the axis).
pub fn label_bars(fig: &mut Figure) {
    let all: Vec<f64> = fig
        .chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .collect();
    let unit = fig.chart.y.unit;
    fig.labels = fig
        .chart
        .series
        .iter()
        .map(|s| {
            s.points
                .iter()
                .map(|p| value_label(unit, &all, p.1))
                .collect()
        })
        .collect();
}

fn number(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// One figure's data as JSON: what is drawn, in raw units, with labels and named x
/// positions.
pub fn figure_json(fig: &Figure) -> Value {
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
pub fn figures_csv(figures: &[Figure]) -> String {
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

    #[test]
    fn identical_lines_are_drawn_once_and_named_for_all() {
        let line = |name: &str, y: f64| Series {
            name: name.into(),
            points: vec![(1.0, y), (2.0, y / 2.0)],
        };
        let mut fig = Figure::new(Chart {
            id: "scan-passes".into(),
            title: "t".into(),
            x: Axis::linear("pass", Unit::Count),
            y: Axis::linear("seconds", Unit::Ratio),
            series: vec![
                line("a time", 4.0),
                line("b time", 4.0),
                line("c time", 3.0),
                line("d time", 4.0),
            ],
            band: None,
        });
        fig.colours = vec![0, 1, 2, 3];
        let merged = merge_identical(fig);
        let names: Vec<&str> = merged
            .chart
            .series
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(
            names,
            ["3 series, identical: a time, b time, d time", "c time"]
        );
        assert_eq!(merged.colours, [0, 2]);
        assert_eq!(merged.labels.len(), 2);
        // Distinct lines are left alone.
        let mut bars = merged.clone();
        bars.chart.series.push(line("e", 4.0));
        bars.kind = FigureKind::Bars;
        assert_eq!(merge_identical(bars).chart.series.len(), 3);
    }
}
