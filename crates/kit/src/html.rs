//! The suite report as one self-contained HTML page: options, the devices' results side by
//! side, the steady-state verdicts, every chart (one figure per chart id, all devices on it)
//! and each drive's health log after its last step.

use flashlab_report::html::{
    band_label, render_page, render_svg, Band, Block, Figure, FigureKind, Page, Section, Table,
};
use flashlab_report::Made;
use serde_json::Value;

use crate::charts::{cap, merge_identical, report_figures};
use crate::format::{find, format_value, grouped, metric_rows, steady_cell};
use crate::layout::{grid_title, grids};
use crate::steady::SteadyRule;
use crate::{Chart, DeviceReport, Series, SuiteReport};

/// The report as an HTML document; the same report gives the same bytes.
pub fn render_html(report: &SuiteReport) -> String {
    render_html_with(report, &Made::default())
}

/// The report as an HTML document whose summary names the command that made it and when
/// (`made`); the same report and `made` give the same bytes.
pub fn render_html_with(report: &SuiteReport, made: &Made<'_>) -> String {
    let names: Vec<&str> = report.devices.iter().map(|d| d.device.as_str()).collect();
    let (results, every) = results_sections(report);
    let mut sections = vec![
        summary_section(report, made),
        charts_section(report),
        results,
        steady_section(report),
        health_section(report),
    ];
    sections.extend(every);
    let page = Page {
        title: format!(
            "flashlab {} suite: {}",
            report.suite.name(),
            names.join(", ")
        ),
        intro: Vec::new(),
        sections,
        footer: Some(format!(
            "flashlab {}: simulated results; the same inputs and seed give the same report.",
            env!("CARGO_PKG_VERSION")
        )),
    };
    render_page(&page)
}

/// The charts of the page, in its order, each as a standalone SVG document: `(id, svg)`.
pub fn render_figures_svg(report: &SuiteReport) -> Vec<(String, String)> {
    page_figures(report)
        .iter()
        .map(|f| (f.chart.id.clone(), render_svg(f)))
        .collect()
}

/// What was run, on what, with which flashlab and command, and the slice notes: what a
/// reader needs before the first chart.
fn summary_section(report: &SuiteReport, made: &Made<'_>) -> Section {
    let names: Vec<&str> = report.devices.iter().map(|d| d.device.as_str()).collect();
    let mut blocks = vec![
        Block::Paragraph(format!(
            "The {} suite: {}.",
            report.suite.name(),
            report.suite.report_summary(&report.options)
        )),
        Block::Paragraph(format!(
            "{} {}.",
            if names.len() == 1 {
                "Device:"
            } else {
                "Devices:"
            },
            names.join(", ")
        )),
        Block::Paragraph(options_line(report)),
    ];
    // The note says what it is (a slice, a real target, one of several drives).
    for d in &report.devices {
        if let Some(note) = &d.scale_note {
            blocks.push(Block::Paragraph(format!("{}: {note}.", d.device)));
        }
    }
    if report.devices.iter().any(|d| d.steady.is_some()) {
        let verdicts: Vec<String> = report
            .devices
            .iter()
            .map(|d| format!("{}: {}", d.device, steady_cell(d)))
            .collect();
        blocks.push(Block::Paragraph(format!(
            "Steady state: {}.",
            verdicts.join("; ")
        )));
    }
    blocks.push(Block::Paragraph(made.line()));
    Section {
        heading: "Summary".into(),
        blocks,
    }
}

fn options_line(report: &SuiteReport) -> String {
    let o = &report.options;
    let mut parts = vec![format!("seed {}", o.seed)];
    // Rounds are named only where a suite ran them (a steady-state verdict records it):
    // settings a suite never read would say it preconditioned.
    if report.devices.iter().any(|d| d.steady.is_some()) {
        parts.push(format!("preconditioning rounds of {}", o.round.describe()));
        parts.push(format!("at most {} rounds", o.max_rounds));
    }
    parts.extend([
        match o.qd {
            Some(qd) => format!("queue depth {qd}"),
            None => "the suite's default queue depth".into(),
        },
        format!("{} job(s)", o.jobs.unwrap_or(1)),
    ]);
    parts.extend(report.suite.options_text(o));
    if let Some(ns) = o.runtime_ns {
        parts.push(format!("measured steps run {}", human_ns(ns as f64)));
    }
    if let Some(p) = o.compressible_percent {
        parts.push(format!("written data {p}% compressible"));
    }
    format!("Options: {}.", parts.join("; "))
}

/// The families of results as grids, and every result by its key: folded in its own last
/// section when grids show them, else the results themselves.
fn results_sections(report: &SuiteReport) -> (Section, Option<Section>) {
    let mut blocks = Vec::new();
    let mut header = vec!["metric".to_string()];
    header.extend(report.devices.iter().map(|d| d.device.clone()));
    let mut rows = vec![{
        let mut r = vec!["steady state".to_string()];
        r.extend(report.devices.iter().map(steady_cell));
        r
    }];
    for (name, like) in metric_rows(report) {
        let mut r = vec![name];
        r.extend(
            report
                .devices
                .iter()
                .map(|d| find(d, like).map_or("-".into(), |m| format_value(like.unit, m.value))),
        );
        rows.push(r);
    }
    for grid in grids(report) {
        for d in &report.devices {
            let Some(t) = grid.table(d) else {
                continue;
            };
            blocks.push(Block::Heading(grid_title(grid.spec.title, report, d)));
            blocks.push(Block::Table(Table {
                header: t.header,
                rows: t.rows,
            }));
        }
    }
    let every = Table { header, rows };
    if blocks.is_empty() {
        let results = Section {
            heading: "Results".into(),
            blocks: vec![Block::Table(every)],
        };
        return (results, None);
    }
    let every = Section {
        heading: "Every result by key".into(),
        blocks: vec![Block::Details {
            summary: format!(
                "{} results, by the keys of the JSON and CSV outputs",
                every.rows.len()
            ),
            blocks: vec![Block::Table(every)],
        }],
    };
    (
        Section {
            heading: "Results".into(),
            blocks,
        },
        Some(every),
    )
}

fn steady_section(report: &SuiteReport) -> Section {
    let rule = SteadyRule::SNIA_PTS;
    let mut blocks = vec![Block::Paragraph(format!(
        "Tracked value: write IOPS of each 4 KiB random-write round. Steady state (SNIA PTS) is \
         the first window of {} rounds whose range is at most {:.0} % of its mean and whose \
         least-squares line moves by at most {:.0} % of the mean across the window.",
        rule.window,
        rule.max_range_fraction * 100.0,
        rule.max_excursion_fraction * 100.0
    ))];
    let rows: Vec<Vec<String>> = report
        .devices
        .iter()
        .filter_map(|d| {
            let st = d.steady.as_ref()?;
            let iops = |v: f64| format_value(crate::Unit::Iops, v);
            let (mean, range, excursion) =
                st.verdict
                    .window
                    .map_or(("-".into(), "-".into(), "-".into()), |w| {
                        let pct = |v: f64| {
                            if w.mean > 0.0 {
                                format!("{} ({:.1} %)", iops(v), v / w.mean * 100.0)
                            } else {
                                iops(v)
                            }
                        };
                        (iops(w.mean), pct(w.range), pct(w.excursion))
                    });
            let window = match st.verdict.round {
                Some(r) => format!("rounds {}–{r}", r + 1 - rule.window.min(r)),
                None => "-".into(),
            };
            Some(vec![
                d.device.clone(),
                steady_cell(d),
                st.rounds_iops.len().to_string(),
                window,
                mean,
                range,
                excursion,
            ])
        })
        .collect();
    if rows.is_empty() {
        blocks = vec![Block::Paragraph(
            "This suite tracks no steady state.".into(),
        )];
    } else {
        blocks.push(Block::Table(Table {
            header: [
                "device",
                "verdict",
                "rounds run",
                "window",
                "window mean",
                "range",
                "excursion",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }));
    }
    Section {
        heading: "Steady state".into(),
        blocks,
    }
}

/// Charts grouped by id in first-seen order, each group drawn as one figure: with several
/// devices every series is named "device: series" and each device's band is shaded in the
/// colour of its first series.
pub fn merged_figures(report: &SuiteReport) -> Vec<Figure> {
    let mut groups: Vec<(&str, Vec<(&DeviceReport, &Chart)>)> = Vec::new();
    for d in &report.devices {
        for c in &d.charts {
            match groups.iter_mut().find(|(id, _)| *id == c.id) {
                Some((_, members)) => members.push((d, c)),
                None => groups.push((&c.id, vec![(d, c)])),
            }
        }
    }
    groups
        .into_iter()
        .map(|(_, members)| {
            if report.devices.len() == 1 {
                return Figure::new(members[0].1.clone());
            }
            let first = members[0].1;
            let mut chart = Chart {
                id: first.id.clone(),
                title: first.title.clone(),
                x: first.x.clone(),
                y: first.y.clone(),
                series: Vec::new(),
                band: None,
            };
            let mut bands = Vec::new();
            for (d, c) in members {
                if let Some((from, to)) = c.band {
                    bands.push(Band {
                        from,
                        to,
                        label: format!("{}: {}", d.device, band_label(&c.x.label, from, to)),
                        series: (!c.series.is_empty()).then_some(chart.series.len()),
                    });
                }
                chart.series.extend(c.series.iter().map(|s| Series {
                    name: format!("{}: {}", d.device, s.name),
                    points: s.points.clone(),
                }));
            }
            Figure {
                chart,
                bands,
                note: None,
                kind: FigureKind::Lines,
                x_ticks: Vec::new(),
                labels: Vec::new(),
                secondary: Vec::new(),
                colours: Vec::new(),
            }
        })
        .collect()
}

/// The reviewer's figures (bars, latency against IOPS) first, then the suite's own charts
/// (rounds, timelines, sweeps), then the latency distributions.
fn page_figures(report: &SuiteReport) -> Vec<Figure> {
    let derived = report_figures(report);
    let (distributions, leading): (Vec<Figure>, Vec<Figure>) =
        derived.figures.into_iter().partition(|f| {
            f.chart.id.starts_with("latency-percentiles") || f.chart.id.starts_with("latency-cdf")
        });
    let own = merged_figures(report)
        .into_iter()
        .filter(|f| !derived.replaces.contains(&f.chart.id.as_str()));
    leading
        .into_iter()
        .chain(own)
        .chain(distributions)
        .map(merge_identical)
        .map(cap)
        .collect()
}

fn charts_section(report: &SuiteReport) -> Section {
    let figures = page_figures(report);
    let blocks = if figures.is_empty() {
        vec![Block::Paragraph("This suite draws no charts.".into())]
    } else {
        figures.into_iter().map(Block::Figure).collect()
    };
    Section {
        heading: "Charts".into(),
        blocks,
    }
}

/// The health logs of the device's steps, in order, with the step's name: each as its fields
/// serialize (the names and order the fio JSON's `health` object shows).
fn health_logs(d: &DeviceReport) -> Vec<(&str, Value)> {
    d.steps
        .iter()
        .filter_map(|step| {
            let health = serde_json::to_value(step.health.as_ref()?).ok()?;
            health.is_object().then_some((step.name.as_str(), health))
        })
        .collect()
}

/// A health log field: its (dotted) key and value.
type Field = (String, Value);

/// A health log's fields, one level of nesting shown with dotted keys.
fn health_fields(health: &Value) -> Vec<Field> {
    let Value::Object(fields) = health else {
        return Vec::new();
    };
    fields
        .iter()
        .flat_map(|(k, v)| match v {
            Value::Object(inner) => inner
                .iter()
                .map(|(ik, iv)| (format!("{k}.{ik}"), iv.clone()))
                .collect(),
            v => vec![(k.clone(), v.clone())],
        })
        .collect()
}

/// Values a health log uses for "no figure": the all-ones of a 16-, 32- or 64-bit field
/// (NVMe's 65,535 for a timed-workload figure not yet measured).
fn is_sentinel(v: &Value) -> bool {
    v.as_u64()
        .is_some_and(|n| n == u64::from(u16::MAX) || n == u64::from(u32::MAX) || n == u64::MAX)
}

/// A health value as read: integers grouped, byte counts and times also in human units.
fn health_cell(key: &str, v: &Value) -> String {
    if is_sentinel(v) {
        return "not available".into();
    }
    match v {
        Value::Null => "-".into(),
        Value::Bool(b) => b.to_string(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_u64() {
            Some(i) if key.contains("bytes") && i >= 1000 => {
                format!("{} ({})", grouped(i), human_bytes(i as f64))
            }
            Some(i) if key.ends_with("_ns") && i >= 1000 => {
                format!("{} ({})", grouped(i), human_ns(i as f64))
            }
            Some(i) => grouped(i),
            None => trimmed(n.as_f64().unwrap_or(f64::NAN), 3),
        },
        other => other.to_string(),
    }
}

/// `v` with at most `decimals` decimals and no trailing zeros.
fn trimmed(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn human_ns(ns: f64) -> String {
    match ns {
        t if t >= 1e9 => format!("{} s", trimmed(t / 1e9, 2)),
        t if t >= 1e6 => format!("{} ms", trimmed(t / 1e6, 2)),
        t => format!("{} µs", trimmed(t / 1e3, 1)),
    }
}

fn human_bytes(b: f64) -> String {
    match b {
        b if b >= 1e12 => format!("{:.2} TB", b / 1e12),
        b if b >= 1e9 => format!("{:.2} GB", b / 1e9),
        b if b >= 1e6 => format!("{:.2} MB", b / 1e6),
        b => format!("{:.1} kB", b / 1e3),
    }
}

fn health_section(report: &SuiteReport) -> Section {
    let mut blocks = Vec::new();
    for d in &report.devices {
        blocks.push(Block::Heading(d.device.clone()));
        let logs = health_logs(d);
        let (Some((first_step, first)), Some((last_step, last))) = (logs.first(), logs.last())
        else {
            blocks.push(Block::Paragraph(
                "No health log was recorded (no job step ran).".into(),
            ));
            continue;
        };
        let before = health_fields(first);
        let after = health_fields(last);
        let leaf = |k: &str| k.rsplit('.').next().unwrap_or(k).to_string();
        // With one log there is nothing to compare: every field is shown.
        let (changed, unchanged): (Vec<&Field>, Vec<&Field>) = after.iter().partition(|(k, v)| {
            logs.len() == 1 || before.iter().find(|(bk, _)| bk == k).map(|(_, bv)| bv) != Some(v)
        });
        if logs.len() == 1 {
            blocks.push(Block::Paragraph(format!(
                "After the only step, {last_step}."
            )));
        } else {
            blocks.push(Block::Paragraph(format!(
                "What changed from the first step ({first_step}) to the last ({last_step}); \
                 the fields that did not change follow the table."
            )));
        }
        if !changed.is_empty() {
            let rows = changed
                .iter()
                .map(|(k, v)| {
                    let was = before
                        .iter()
                        .find(|(bk, _)| bk == k)
                        .map_or("-".into(), |(_, bv)| health_cell(&leaf(k), bv));
                    if logs.len() == 1 {
                        vec![k.clone(), health_cell(&leaf(k), v)]
                    } else {
                        vec![k.clone(), was, health_cell(&leaf(k), v)]
                    }
                })
                .collect();
            let header = if logs.len() == 1 {
                vec!["field".into(), "value".into()]
            } else {
                vec![
                    "field".into(),
                    format!("after {first_step}"),
                    format!("after {last_step}"),
                ]
            };
            blocks.push(Block::Table(Table { header, rows }));
        }
        if !unchanged.is_empty() {
            let listed: Vec<String> = unchanged
                .iter()
                .map(|(k, v)| format!("{k} {}", health_cell(&leaf(k), v)))
                .collect();
            blocks.push(Block::Paragraph(format!(
                "Unchanged: {}.",
                listed.join("; ")
            )));
        }
    }
    Section {
        heading: "Drive health".into(),
        blocks,
    }
}
