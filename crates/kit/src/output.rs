//! Renderings of a [`SuiteReport`]: a terminal table (devices side by side), one JSON
//! document, a CSV, and the per-step files under an output directory.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::charts::{figure_json, figures_csv, report_figures};
use crate::format::{find, format_value, metric_rows, steady_cell};
use crate::layout::{grid_title, grids};
use crate::measure::TIDY_COLUMNS;
use crate::registry::Registry;
use crate::steady::SteadyRule;
use crate::{Axis, Chart, DeviceReport, Measure, SuiteKind, SuiteReport};

/// The terminal table: one row per metric, one column per device.
pub fn render_table(report: &SuiteReport) -> String {
    let header: Vec<String> = std::iter::once("device".to_string())
        .chain(report.devices.iter().map(|d| d.device.clone()))
        .collect();
    let mut rows: Vec<Vec<String>> = vec![std::iter::once("steady state".to_string())
        .chain(report.devices.iter().map(steady_cell))
        .collect()];
    for (name, like) in metric_rows(report) {
        rows.push(
            std::iter::once(name)
                .chain(report.devices.iter().map(|d| {
                    find(d, like).map_or("-".into(), |m| format_value(like.unit, m.value))
                }))
                .collect(),
        );
    }
    let mut out = format!(
        "suite {}: {} (seed {})\n",
        report.suite.name(),
        report.suite.report_summary(&report.options),
        report.options.seed
    );
    for d in &report.devices {
        if let Some(note) = &d.scale_note {
            let _ = writeln!(out, "{}: {note}", d.device);
        }
    }
    write_aligned(&mut out, &header, &rows);
    for grid in grids(report) {
        for d in &report.devices {
            if let Some(t) = grid.table(d) {
                let _ = write!(out, "\n{}\n", grid_title(grid.spec.title, report, d));
                write_aligned(&mut out, &t.header, &t.rows);
            }
        }
    }
    out
}

/// Rows under a header, the first column left-aligned and the others right-aligned.
fn write_aligned(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            std::iter::once(header)
                .chain(rows.iter().map(Vec::as_slice))
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in std::iter::once(header).chain(rows.iter().map(Vec::as_slice)) {
        let mut line = String::new();
        for (i, (cell, w)) in r.iter().zip(&widths).enumerate() {
            if i == 0 {
                let _ = write!(line, "{cell:w$}");
            } else {
                let _ = write!(line, "  {cell:>w$}");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

fn number(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

fn measures_json(ms: &[Measure]) -> Value {
    Value::Object(
        ms.iter()
            .map(|m| (m.key(), number(m.value)))
            .collect::<Map<_, _>>(),
    )
}

fn device_json(d: &DeviceReport, kind: SuiteKind) -> Value {
    let steady = d.steady.as_ref().map_or(Value::Null, |st| {
        json!({
            "tracked": kind.tracked(),
            "reached": st.verdict.reached(),
            "round": st.verdict.round,
            "rounds": st.rounds_iops.iter().map(|v| number(*v)).collect::<Vec<_>>(),
            "window": st.verdict.window.map_or(Value::Null, |w| json!({
                "mean": number(w.mean),
                "range": number(w.range),
                "excursion": number(w.excursion),
                "steady": w.steady,
            })),
        })
    });
    let steps: Vec<Value> = d
        .steps
        .iter()
        .map(|s| {
            json!({
                "name": s.name,
                "kind": s.kind.name(),
                "end_ns": s.end_ns,
                "measured": measures_json(&s.measures),
            })
        })
        .collect();
    json!({
        "device": d.device,
        "scale": d.scale_note,
        "steady_state": steady,
        "results": measures_json(&d.results),
        "steps": steps,
        "charts": d.charts.iter().map(chart_json).collect::<Vec<_>>(),
    })
}

fn axis_json(a: &Axis) -> Value {
    json!({"label": a.label, "unit": a.unit.name(), "log": a.log})
}

fn chart_json(c: &Chart) -> Value {
    json!({
        "id": c.id,
        "title": c.title,
        "x": axis_json(&c.x),
        "y": axis_json(&c.y),
        "band": c.band.map(|(a, b)| vec![number(a), number(b)]),
        "series": c.series.iter().map(|s| json!({
            "name": s.name,
            "points": s.points.iter().map(|&(x, y)| vec![number(x), number(y)]).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// One JSON document: the suite, its options and rule, and per device the steps, measured
/// values and steady-state verdict.
pub fn render_json(report: &SuiteReport, reg: &Registry) -> String {
    let o = &report.options;
    let rule = SteadyRule::SNIA_PTS;
    let units: Map<String, Value> = metric_rows(report)
        .into_iter()
        .map(|(n, m)| (n, Value::String(m.unit.name().into())))
        .collect();
    let shared: Map<String, Value> = [
        ("seed", json!(o.seed)),
        ("round", json!(o.round.describe())),
        ("max_rounds", json!(o.max_rounds)),
        ("round_timed_percent", json!(o.round_timed_percent)),
        ("qd", json!(o.qd)),
        ("jobs", json!(o.jobs)),
        ("runtime_ns", json!(o.runtime_ns)),
        ("size", json!(o.client.size_bytes)),
        ("profile", json!(o.client.profile.name())),
        ("state", json!(o.client.state().name())),
        ("compressible_percent", json!(o.compressible_percent)),
        ("timed_precondition", json!(o.timed_precondition)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let doc = json!({
        "suite": report.suite.name(),
        "description": report.suite.summary(),
        "options": (reg.report_options)(o, shared),
        "steady_state_rule": {
            "window_rounds": rule.window,
            "max_range_fraction": rule.max_range_fraction,
            "max_excursion_fraction": rule.max_excursion_fraction,
        },
        "units": units,
        "devices": report
            .devices
            .iter()
            .map(|d| device_json(d, report.suite))
            .collect::<Vec<_>>(),
    });
    let mut doc = doc;
    if let Some((group, value)) = report.suite.options_json(o) {
        doc["options"][group] = value;
    }
    doc["figures"] = Value::Array(
        report_figures(report)
            .figures
            .iter()
            .map(figure_json)
            .collect(),
    );
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `device,metric,unit,value`: every result, plus the steady-state round (empty when not
/// reached).
pub fn render_csv(report: &SuiteReport) -> String {
    let mut out = String::from("device,metric,unit,value\n");
    for d in &report.devices {
        let dev = csv_field(&d.device);
        if let Some(st) = &d.steady {
            let round = st.verdict.round.map_or(String::new(), |r| r.to_string());
            let _ = writeln!(out, "{dev},steady_state_round,,{round}");
        }
        for m in &d.results {
            let _ = writeln!(
                out,
                "{dev},{},{},{}",
                csv_field(&m.key()),
                m.unit.name(),
                m.value
            );
        }
    }
    out
}

/// The tidy form: one row per device and result, `device,metric,family`, then a column per
/// axis the report's results lie on ([`crate::measure::TIDY_COLUMNS`], those used, in that
/// order; empty where a result has no value on it), `unit,value`. `metric` is the flat key,
/// `family` what is measured without its axes (`read_lat_ns` for every read latency
/// percentile of every queue depth).
pub fn render_tidy_csv(report: &SuiteReport) -> String {
    let cells = |m: &Measure| -> Vec<(&'static str, String)> {
        m.row.iter().chain(&m.col).flat_map(|c| c.tidy()).collect()
    };
    let used: Vec<&str> = TIDY_COLUMNS
        .into_iter()
        .filter(|col| {
            report
                .devices
                .iter()
                .flat_map(|d| &d.results)
                .any(|m| cells(m).iter().any(|(c, _)| c == col))
        })
        .collect();
    let mut out = String::from("device,metric,family");
    for col in &used {
        let _ = write!(out, ",{col}");
    }
    out.push_str(",unit,value\n");
    for d in &report.devices {
        let dev = csv_field(&d.device);
        for m in &d.results {
            let cells = cells(m);
            let _ = write!(out, "{dev},{},{}", csv_field(&m.key()), m.family);
            for col in &used {
                let values: Vec<&str> = cells
                    .iter()
                    .filter(|(c, _)| c == col)
                    .map(|(_, v)| v.as_str())
                    .collect();
                let _ = write!(out, ",{}", csv_field(&values.join(";")));
            }
            let _ = writeln!(out, ",{},{}", m.unit.name(), m.value);
        }
    }
    out
}

/// A device name as a directory name: anything but `[A-Za-z0-9._-]` becomes `_`.
fn dir_name(i: usize, device: &str) -> String {
    let clean: String = device
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{}-{clean}", i + 1)
}

/// Whether [`write_outdir`] may write the file at `rel` (its path under the directory, `/`
/// between names): a table (`*.csv`), or a step's job file or fio JSON in a device's
/// directory (`<n>-<device>/<NN>-<step>.fio`, `.json`). A command registers the directory's
/// files by this rule before the work, with its inputs and other outputs.
pub fn is_outdir_file(rel: &str) -> bool {
    let numbered = |s: &str, digits: std::ops::RangeFrom<usize>| {
        s.split_once('-').is_some_and(|(n, _)| {
            digits.contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit())
        })
    };
    match rel.split_once('/') {
        None => rel.ends_with(".csv"),
        Some((device, step)) => {
            numbered(device, 1..)
                && numbered(step, 2..)
                && !step.contains('/')
                && (step.ends_with(".fio") || step.ends_with(".json"))
        }
    }
}

/// Under `dir`: `<suite>.csv`, its tidy form `<suite>-tidy.csv`, `figures.csv` (the report's
/// figures as points, when it has any), and per device `<n>-<device>/<step>.fio` and `<step>.json`
/// (the job file and its fio JSON) for every job step, numbered in order.
pub fn write_outdir(report: &SuiteReport, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    // Each file by the rule of every file flashlab writes: a regular file or nothing at
    // the path, written beside and renamed.
    let write = |path: PathBuf, bytes: &[u8]| {
        flashlab_engine::output::OutputFile::check("--outdir", &path)
            .and_then(|out| out.write_bytes(bytes))
            .map_err(std::io::Error::other)
    };
    write(
        dir.join(format!("{}.csv", report.suite.name())),
        render_csv(report).as_bytes(),
    )?;
    write(
        dir.join(format!("{}-tidy.csv", report.suite.name())),
        render_tidy_csv(report).as_bytes(),
    )?;
    let figures = report_figures(report).figures;
    if !figures.is_empty() {
        write(dir.join("figures.csv"), figures_csv(&figures).as_bytes())?;
    }
    for (i, d) in report.devices.iter().enumerate() {
        let sub = dir.join(dir_name(i, &d.device));
        std::fs::create_dir_all(&sub)?;
        for (n, step) in d.steps.iter().enumerate() {
            let stem = format!("{:02}-{}", n + 1, step.name);
            if let Some(text) = &step.job_text {
                write(sub.join(format!("{stem}.fio")), text.as_bytes())?;
            }
            if let Some(j) = &step.fio_json {
                write(sub.join(format!("{stem}.json")), j.as_bytes())?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outdir_rule_takes_the_names_written() {
        for rel in [
            "some-suite.csv",
            "some-suite-tidy.csv",
            "figures.csv",
            "1-tiny-test-1gb/01-fill.json",
            "12-x/03-step.fio",
        ] {
            assert!(is_outdir_file(rel), "{rel}");
        }
        for rel in [
            "notes.txt",
            "x/01-fill.json",
            "1-x/1-fill.json",
            "1-x/01-a/b.json",
        ] {
            assert!(!is_outdir_file(rel), "{rel}");
        }
        assert!(is_outdir_file(&format!(
            "{}/01-fill.json",
            dir_name(0, "../x y.toml")
        )));
    }

    #[test]
    fn directory_names_are_safe() {
        assert_eq!(dir_name(0, "tiny-test-1gb"), "1-tiny-test-1gb");
        assert_eq!(dir_name(1, "../x y.toml"), "2-.._x_y.toml");
    }
}
