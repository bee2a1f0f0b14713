//! `flashlab run --report`: a job file's run as one self-contained HTML page, as fio-plot
//! draws a run: per job, bandwidth, IOPS and latency over time (from the logs the job wrote),
//! the completion-latency percentiles and their histogram, and a table of each direction.

use crate::chart::{Axis, Chart, Series, Unit};
use crate::html::{render_page, render_svg, Block, Figure, Page, Section, Table};
use crate::logs::{LogKind, LogSeries};
use crate::{JobResult, Made, RunResult, DDIR_READ, DDIR_TRIM, DDIR_WRITE};

/// Points a line over time keeps: longer logs are averaged in equal runs of entries.
const MAX_TIME_POINTS: usize = 400;

/// Percentiles of the percentile chart: the median through the tail.
const PERCENTILES: [f64; 8] = [50.0, 90.0, 99.0, 99.5, 99.9, 99.95, 99.99, 99.999];

/// Histogram bins per power of two of latency.
const BINS_PER_OCTAVE: f64 = 4.0;

/// What the page says about the run: the job file, the device, the command that ran it and
/// when ([`Made`]).
#[derive(Debug, Clone, Default)]
pub struct RunContext<'a> {
    pub job_file: &'a str,
    pub device: &'a str,
    pub made: Made<'a>,
}

const DIRS: [(usize, &str); 3] = [
    (DDIR_READ, "read"),
    (DDIR_WRITE, "write"),
    (DDIR_TRIM, "trim"),
];

/// The run as an HTML document; the same run and context give the same bytes.
pub fn render_run_html(run: &RunResult, cx: &RunContext<'_>) -> String {
    let mut summary = vec![
        Block::Paragraph(format!("Job file: {}.", cx.job_file)),
        Block::Paragraph(format!("Device: {}.", cx.device)),
        Block::Paragraph(format!(
            "{} job(s): {}.",
            run.jobs.len(),
            run.jobs
                .iter()
                .map(JobResult::jobname)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    ];
    summary.push(Block::Paragraph(cx.made.line()));
    let mut sections = vec![Section {
        heading: "Summary".into(),
        blocks: summary,
    }];
    for job in &run.jobs {
        let mut blocks = vec![Block::Table(job_table(job))];
        blocks.extend(job_figures(job).into_iter().map(Block::Figure));
        sections.push(Section {
            heading: format!("Job {}", job.jobname()),
            blocks,
        });
    }
    render_page(&Page {
        title: format!("flashlab run: {}", cx.job_file),
        intro: Vec::new(),
        sections,
        footer: Some(format!(
            "flashlab {}: simulated results; the same inputs and seed give the same report.",
            env!("CARGO_PKG_VERSION")
        )),
    })
}

/// Every chart of the run's page as a standalone SVG document: `(id, svg)`.
pub fn render_run_figures_svg(run: &RunResult) -> Vec<(String, String)> {
    run.jobs
        .iter()
        .flat_map(job_figures)
        .map(|f| (f.chart.id.clone(), render_svg(&f)))
        .collect()
}

fn active(job: &JobResult) -> impl Iterator<Item = (usize, &'static str)> + '_ {
    DIRS.into_iter().filter(|&(d, _)| job.total_ios(d) > 0)
}

fn job_table(job: &JobResult) -> Table {
    let pcts = [50.0, 99.0, 99.9, 99.99];
    let mut header: Vec<String> = ["direction", "I/Os", "IOPS", "bandwidth", "mean latency"]
        .map(String::from)
        .to_vec();
    header.extend(pcts.iter().map(|p| format!("p{p}")));
    let rows = active(job)
        .map(|(d, name)| {
            let stats = &job.dirs[d];
            let values = stats.clat_hist.percentiles(stats.clat_hist.total(), &pcts);
            let mut row = vec![
                name.to_string(),
                job.total_ios(d).to_string(),
                format!("{:.0}", job.iops(d)),
                format!("{:.1} MB/s", job.bw_bytes_per_s(d) as f64 / 1e6),
                job.clat_ns(d).map_or("-".into(), |s| latency_cell(s.mean)),
            ];
            row.extend(values.iter().map(|v| latency_cell(*v as f64)));
            row
        })
        .collect();
    Table { header, rows }
}

/// A latency in the unit its magnitude reads best in, four significant digits at most:
/// "12.78 ms", not "12779.5 µs".
fn latency_cell(ns: f64) -> String {
    let (div, unit) = match ns.abs() {
        a if a >= 1e9 => (1e9, "s"),
        a if a >= 1e6 => (1e6, "ms"),
        a if a >= 1e3 => (1e3, "µs"),
        _ => (1.0, "ns"),
    };
    let v = ns / div;
    let digits = if v.abs() >= 100.0 { 1 } else { 2 };
    format!("{v:.digits$} {unit}")
}

fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

/// Percentile → position on a "nines" axis: 90 → 1, 99 → 2, 99.9 → 3 …
fn nines(p: f64) -> f64 {
    -(1.0 - p / 100.0).log10()
}

fn job_figures(job: &JobResult) -> Vec<Figure> {
    let id = format!("job{}-{}", job.job_index(), slug(job.jobname()));
    let mut out = Vec::new();
    out.extend(time_figures(job, &id));
    // Percentiles on a nines axis from the first percentile: the median and the tail.
    let mut series = Vec::new();
    for (d, name) in active(job) {
        let h = &job.dirs[d].clat_hist;
        let values = h.percentiles(h.total(), &PERCENTILES);
        series.push(Series {
            name: name.into(),
            points: PERCENTILES
                .iter()
                .zip(values)
                .map(|(p, v)| (nines(*p), v as f64))
                .collect(),
        });
    }
    if !series.is_empty() {
        let mut fig = Figure::new(Chart {
            id: format!("{id}-latency-percentiles"),
            title: format!("{}: completion-latency percentiles", job.jobname()),
            x: Axis::linear("percentile (%)", Unit::Count),
            y: Axis::log("completion latency", Unit::Ns),
            series,
            band: None,
        });
        fig.x_ticks = PERCENTILES
            .iter()
            .filter(|p| ![99.5, 99.95].contains(*p))
            .map(|p| (nines(*p), p.to_string()))
            .collect();
        fig.note = Some(
            "From the median to the tail: each further nine has the same width, so the \
             tail reads as clearly as the median."
                .into(),
        );
        out.push(fig);
    }
    // The histogram: the share of I/Os in bins of a quarter octave.
    let mut series = Vec::new();
    for (d, name) in active(job) {
        let h = &job.dirs[d].clat_hist;
        let total = h.total();
        if total == 0 {
            continue;
        }
        let bins = histogram_bins(h.nonzero());
        series.push(Series {
            name: name.into(),
            points: bins
                .iter()
                .map(|&(b, c)| {
                    let mid = 2f64.powf((b as f64 + 0.5) / BINS_PER_OCTAVE);
                    (mid, c as f64 * 100.0 / total as f64)
                })
                .collect(),
        });
    }
    if !series.is_empty() {
        let mut fig = Figure::new(Chart {
            id: format!("{id}-latency-histogram"),
            title: format!("{}: completion-latency histogram", job.jobname()),
            x: Axis::log("completion latency", Unit::Ns),
            y: Axis::linear("share of I/Os", Unit::Percent),
            series,
            band: None,
        });
        fig.note = Some(format!(
            "The share of each direction's I/Os completed in each bin ({BINS_PER_OCTAVE} bins \
             per doubling of latency), from fio's latency histogram."
        ));
        out.push(fig);
    }
    out
}

/// fio's latency buckets `(ns, count)`, in ascending order, gathered into bins of
/// [`BINS_PER_OCTAVE`] per doubling: `(bin, count)` from the first bin holding an I/O to
/// the last. An empty bin between two others is kept at zero, so a gap between modes is
/// drawn as one rather than as a line across it.
fn histogram_bins(buckets: impl Iterator<Item = (u64, u64)>) -> Vec<(i64, u64)> {
    let mut bins: Vec<(i64, u64)> = Vec::new();
    for (v, c) in buckets {
        let bin = ((v.max(1) as f64).log2() * BINS_PER_OCTAVE).floor() as i64;
        match bins.last().map(|&(b, _)| b) {
            Some(b) if b == bin => {
                if let Some(last) = bins.last_mut() {
                    last.1 += c;
                }
            }
            Some(b) => {
                bins.extend((b + 1..bin).map(|e| (e, 0)));
                bins.push((bin, c));
            }
            None => bins.push((bin, c)),
        }
    }
    bins
}

/// Bandwidth, IOPS and latency over time, one chart per kind the job logged.
fn time_figures(job: &JobResult, id: &str) -> Vec<Figure> {
    let mut out = Vec::new();
    let kinds = [
        (LogKind::Bw, "bandwidth", Unit::BytesPerS),
        (LogKind::Iops, "IOPS", Unit::Iops),
        (LogKind::Lat, "total latency", Unit::Ns),
        (LogKind::Clat, "completion latency", Unit::Ns),
        (LogKind::Slat, "submission latency", Unit::Ns),
    ];
    for (kind, what, unit) in kinds {
        let logs: Vec<(u32, &LogSeries)> = job
            .logs
            .iter()
            .flat_map(|l| l.series.iter().map(move |s| (l.job_index, s)))
            .filter(|(_, s)| s.kind == kind && !s.entries.is_empty())
            .collect();
        let clones = logs.len();
        let mut series = Vec::new();
        for (index, log) in logs {
            for (d, name) in DIRS {
                let mut points: Vec<(f64, f64)> = log
                    .entries
                    .iter()
                    .filter(|e| usize::from(e.ddir) == d)
                    .map(|e| {
                        // fio logs bandwidth in KiB/s.
                        let v = if kind == LogKind::Bw {
                            e.value as f64 * 1024.0
                        } else {
                            e.value as f64
                        };
                        (e.time_ms as f64 / 1000.0, v)
                    })
                    .collect();
                if points.is_empty() {
                    continue;
                }
                if points.len() > MAX_TIME_POINTS {
                    let run = points.len().div_ceil(MAX_TIME_POINTS);
                    points = points
                        .chunks(run)
                        .map(|c| {
                            let n = c.len() as f64;
                            (
                                c.iter().map(|p| p.0).sum::<f64>() / n,
                                c.iter().map(|p| p.1).sum::<f64>() / n,
                            )
                        })
                        .collect();
                }
                series.push(Series {
                    name: if clones > 1 {
                        format!("{name}, job {index}")
                    } else {
                        name.into()
                    },
                    points,
                });
            }
        }
        if series.is_empty() {
            continue;
        }
        let mut fig = Figure::new(Chart {
            id: format!("{id}-{}-over-time", kind.suffix()),
            title: format!("{}: {what} over time", job.jobname()),
            x: Axis::linear("time (s)", Unit::Count),
            y: Axis::linear(what, unit),
            series,
            band: None,
        });
        fig.note = Some(format!(
            "From the job's {} log (write_{}_log).",
            kind.suffix(),
            if matches!(kind, LogKind::Clat | LogKind::Slat) {
                "lat"
            } else {
                kind.suffix()
            }
        ));
        out.push(fig);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{histogram_bins, latency_cell, BINS_PER_OCTAVE};

    #[test]
    fn histogram_bins_keep_the_empty_bins_between_modes() {
        // Two modes an octave apart: the bins between them are there, at zero.
        let bins = histogram_bins([(1_000, 3), (1_010, 2), (2_000, 5)].into_iter());
        let octave = BINS_PER_OCTAVE as i64;
        assert_eq!(bins.len() as i64, octave + 1, "{bins:?}");
        assert_eq!(bins[0].1, 5);
        assert_eq!(bins[bins.len() - 1].1, 5);
        assert!(bins[1..bins.len() - 1].iter().all(|&(_, c)| c == 0));
        assert!(bins.windows(2).all(|w| w[1].0 == w[0].0 + 1));
        assert!(histogram_bins(std::iter::empty()).is_empty());
    }

    #[test]
    fn latency_cells_pick_their_unit_by_magnitude() {
        assert_eq!(latency_cell(12_779_500.0), "12.78 ms");
        assert_eq!(latency_cell(450_000.0), "450.0 µs");
        assert_eq!(latency_cell(31_200.0), "31.20 µs");
        assert_eq!(latency_cell(800.0), "800.0 ns");
        assert_eq!(latency_cell(2.5e9), "2.50 s");
    }
}
