//! Validation: published measurements no preset was fitted to (`jobs/validation/rows.toml`),
//! each against the model in the same condition. Rows of `[[run]]` are run through the CLI
//! (a job file or a suite) and must reproduce their recorded `model` figure within 1%; rows
//! of `[[command]]` are measured by a command too slow for the test and only their recorded
//! figure is checked. Every row must be within its tolerance, or, listed as a known miss,
//! still miss in its stated direction, so the list cannot go stale when a mechanism lands.
//! No row may compare with a figure of its preset's calibration set
//! (`jobs/validation/fitted.toml`), and the tables of `docs/validation.md` are written from
//! the rows (`FLASHLAB_UPDATE_VALIDATION=1` rewrites them).
//! `cargo test -p flashlab --release --test integration validation:: -- --nocapture` prints
//! the tables.

mod common;

use common::{page_holds, repo, toml_text as text};

use std::path::{Path, PathBuf};
use std::process::Command;

/// How a published figure bounds the model: about the figure, or a bound it was published as.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Bound {
    About,
    AtLeast,
    AtMost,
}

/// One published figure, its condition, and where the model's figure comes from.
#[derive(Clone, Debug)]
struct Row {
    section: i64,
    name: String,
    state: String,
    tool: String,
    depth: String,
    host: String,
    /// How the model's condition differs from the published one, when it does.
    note: Option<String>,
    published: f64,
    unit: String,
    bound: Bound,
    /// Allowed relative error, e.g. 0.15 for ±15%.
    tolerance: f64,
    source: String,
    /// The model's figure at the last update of rows.toml.
    model: f64,
    /// fio job whose figure it is (job runs), or the CSV's device (suite runs).
    select: Option<String>,
    metric: String,
    /// `Some((direction, reason))`: "high" or "low", and why it misses.
    known_miss: Option<(String, String)>,
}

enum Source {
    Job(String),
    Suite { name: String, args: Vec<String> },
}

struct Run {
    devices: Vec<String>,
    source: Source,
    sets: Vec<String>,
    rows: Vec<Row>,
}

struct Measured {
    device: String,
    command: String,
    why: String,
    rows: Vec<Row>,
}

fn number(t: &toml::Table, key: &str, ctx: &str) -> f64 {
    t.get(key)
        .and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64)))
        .unwrap_or_else(|| panic!("{ctx}: `{key}` (a number) is required"))
}

fn strings(t: &toml::Table, key: &str, ctx: &str) -> Vec<String> {
    t.get(key)
        .map(|v| {
            v.as_array()
                .unwrap_or_else(|| panic!("{ctx}: `{key}` is a list of text"))
                .iter()
                .map(|s| {
                    s.as_str()
                        .unwrap_or_else(|| panic!("{ctx}: `{key}` entries are text"))
                        .to_string()
                })
                .collect()
        })
        .unwrap_or_default()
}

fn table(path: &Path) -> toml::Table {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .parse()
        .unwrap_or_else(|e| panic!("{} is not valid TOML: {e}", path.display()))
}

fn row(c: &toml::Value, ctx: &str) -> Row {
    let c = c.as_table().expect("a row is a table");
    let name = text(c, "name", ctx);
    let rctx = format!("{ctx} {name}");
    let known_miss = c.get("known_miss").map(|v| {
        let reason = v.as_str().expect("known_miss is text").to_string();
        let dir = text(c, "miss", &rctx);
        assert!(
            dir == "high" || dir == "low",
            "{rctx}: miss must be \"high\" or \"low\""
        );
        (dir, reason)
    });
    let tolerance = number(c, "tolerance", &rctx);
    assert!(
        tolerance > 0.0 && tolerance < 1.0,
        "{rctx}: tolerance is a fraction in (0, 1)"
    );
    let bound = match c.get("bound").map(|v| v.as_str().expect("bound is text")) {
        None | Some("about") => Bound::About,
        Some("at least") => Bound::AtLeast,
        Some("at most") => Bound::AtMost,
        Some(b) => panic!("{rctx}: bound {b:?} is not \"about\", \"at least\" or \"at most\""),
    };
    let select = c
        .get("job")
        .or(c.get("series"))
        .map(|v| v.as_str().expect("job/series is text").to_string());
    Row {
        section: c
            .get("section")
            .and_then(|v| v.as_integer())
            .unwrap_or_else(|| panic!("{rctx}: `section` (of docs/reviews.md) is required")),
        state: text(c, "state", &rctx),
        tool: text(c, "tool", &rctx),
        depth: text(c, "depth", &rctx),
        host: text(c, "host", &rctx),
        note: c
            .get("note")
            .map(|v| v.as_str().expect("note is text").to_string()),
        published: number(c, "published", &rctx),
        unit: text(c, "unit", &rctx),
        bound,
        tolerance,
        source: text(c, "source", &rctx),
        model: number(c, "model", &rctx),
        select,
        metric: text(c, "metric", &rctx),
        name,
        known_miss,
    }
}

fn rows(t: &toml::Table, key: &str, ctx: &str) -> Vec<Row> {
    t.get(key)
        .and_then(|v| v.as_array())
        .unwrap_or_else(|| panic!("{ctx}: [[..{key}]] entries are required"))
        .iter()
        .map(|c| row(c, ctx))
        .collect()
}

fn load() -> (Vec<Run>, Vec<Measured>) {
    let doc = table(&repo().join("jobs/validation/rows.toml"));
    let runs = doc
        .get("run")
        .and_then(|v| v.as_array())
        .expect("rows.toml has [[run]] entries")
        .iter()
        .map(|r| {
            let r = r.as_table().expect("[[run]] is a table");
            let mut devices = strings(r, "devices", "[[run]]");
            if let Some(d) = r.get("device") {
                devices.push(d.as_str().expect("device is text").to_string());
            }
            assert!(
                !devices.is_empty(),
                "[[run]]: `device` or `devices` is required"
            );
            let source = match (r.get("job"), r.get("suite")) {
                (Some(j), None) => Source::Job(j.as_str().expect("job is text").to_string()),
                (None, Some(s)) => Source::Suite {
                    name: s.as_str().expect("suite is text").to_string(),
                    args: strings(r, "args", "[[run]]"),
                },
                _ => panic!("[[run]] {devices:?}: exactly one of `job` and `suite`"),
            };
            let ctx = format!("run {}", devices.join(","));
            let sets = strings(r, "set", &ctx);
            for s in &sets {
                assert!(s.contains('='), "{ctx}: `set` entry {s:?} is not KEY=VALUE");
            }
            Run {
                rows: rows(r, "row", &ctx),
                devices,
                source,
                sets,
            }
        })
        .collect();
    let measured = doc
        .get("command")
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .map(|m| {
                    let m = m.as_table().expect("[[command]] is a table");
                    let command = text(m, "command", "[[command]]");
                    Measured {
                        device: text(m, "device", &command),
                        why: text(m, "why", &command),
                        rows: rows(m, "row", &command),
                        command,
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    (runs, measured)
}

/// A device given as a path from the repository root, a preset or a system preset.
fn device_file(device: &str) -> PathBuf {
    let root = repo();
    [
        root.join(device),
        root.join("presets").join(format!("{device}.toml")),
        root.join("presets/systems").join(format!("{device}.toml")),
        root.join("presets/systems/drives")
            .join(format!("{device}.toml")),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .unwrap_or_else(|| panic!("device {device:?} is neither a file nor a preset"))
}

/// The drive presets a device is made of: its own name, or its drives' presets.
fn presets_of(device: &str) -> Vec<String> {
    let t = table(&device_file(device));
    match t.get("drive").and_then(|d| d.as_table()) {
        Some(drives) => drives
            .values()
            .filter_map(|d| d.get("preset").and_then(|p| p.as_str()))
            .map(|p| p.to_string())
            .collect(),
        None => vec![text(&t, "name", device)],
    }
}

/// A figure of a preset's calibration set.
struct Fitted {
    preset: String,
    /// "read", "write" or "other": what the figure measures.
    op: String,
    figure: String,
    value: f64,
    unit: String,
    how: String,
}

/// The presets of the calibration set (each with its note), and every figure of it.
fn calibration_set() -> (Vec<String>, Vec<Fitted>) {
    let (names, figures, _) = calibration_data();
    (names, figures)
}

fn calibration_data() -> (Vec<String>, Vec<Fitted>, Vec<Option<String>>) {
    let doc = table(&repo().join("jobs/validation/fitted.toml"));
    let mut names = Vec::new();
    let mut notes = Vec::new();
    let mut figures = Vec::new();
    for p in doc
        .get("preset")
        .and_then(|v| v.as_array())
        .expect("fitted.toml has [[preset]] entries")
    {
        let p = p.as_table().expect("[[preset]] is a table");
        let name = text(p, "name", "[[preset]]");
        for f in p
            .get("fitted")
            .and_then(|v| v.as_array())
            .unwrap_or_else(|| panic!("{name}: `fitted` (a list) is required"))
        {
            let f = f.as_table().expect("a fitted figure is a table");
            let how = text(f, "how", &name);
            assert!(
                how == "fitted" || how == "calibrated",
                "{name}: how must be \"fitted\" or \"calibrated\""
            );
            let op = text(f, "op", &name);
            assert!(
                ["read", "write", "other"].contains(&op.as_str()),
                "{name}: op must be \"read\", \"write\" or \"other\""
            );
            figures.push(Fitted {
                preset: name.clone(),
                op,
                figure: text(f, "figure", &name),
                value: number(f, "value", &name),
                unit: text(f, "unit", &name),
                how,
            });
        }
        notes.push(
            p.get("note")
                .map(|v| v.as_str().expect("note is text").to_string()),
        );
        names.push(name);
    }
    (names, figures, notes)
}

/// The calibration set as the table of docs/calibration.md.
fn calibration_table() -> String {
    let (names, figures, notes) = calibration_data();
    let mut t = String::from("| preset | fitted or calibrated to | note |\n|---|---|---|\n");
    for (name, note) in names.iter().zip(notes) {
        let list: Vec<String> = figures
            .iter()
            .filter(|f| &f.preset == name)
            .map(|f| format!("{} {} ({}, {})", figure(f.value), f.unit, f.figure, f.how))
            .collect();
        let list = if list.is_empty() {
            "none".to_string()
        } else {
            list.join("; ")
        };
        t.push_str(&format!(
            "| `{name}` | {list} | {} |\n",
            note.unwrap_or_default()
        ));
    }
    t
}

/// Why a row may not be a validation row: its published figure is one its preset was fitted
/// or calibrated to.
fn refused(row: &Row, presets: &[String], set: &[Fitted]) -> Option<String> {
    let op = if row.metric.contains("read") {
        "read"
    } else if row.metric.contains("write") {
        "write"
    } else {
        "other"
    };
    set.iter()
        .find(|f| {
            presets.contains(&f.preset)
                && f.op == op
                && f.unit == row.unit
                && (row.published / f.value - 1.0).abs() < 0.005
        })
        .map(|f| {
            format!(
                "{}: {} {} is in the calibration set of {} ({}): not a validation row",
                row.name, row.published, row.unit, f.preset, f.figure
            )
        })
}

/// The row's status for a model figure: `Ok(text)` when it holds (within tolerance, or a
/// known miss still missing its way), `Err(why)` when not.
fn status(row: &Row, model: f64) -> Result<String, String> {
    let err = model / row.published - 1.0;
    let (high, low) = match row.bound {
        Bound::About => (err > row.tolerance, err < -row.tolerance),
        Bound::AtLeast => (false, err < -row.tolerance),
        Bound::AtMost => (err > row.tolerance, false),
    };
    match &row.known_miss {
        None if !high && !low => Ok(format!("ok (±{:.0}%)", row.tolerance * 100.0)),
        None => Err(format!(
            "{}: {} {} against {} ({:+.0}%), outside ±{:.0}%",
            row.name,
            figure(model),
            row.unit,
            row.published,
            err * 100.0,
            row.tolerance * 100.0
        )),
        Some((dir, reason)) => {
            if (dir == "high" && high) || (dir == "low" && low) {
                Ok(format!("known miss ({dir}): {reason}"))
            } else {
                Err(format!(
                    "{}: listed as a known miss ({dir}) but {} {} is {:+.0}%: update jobs/validation/rows.toml",
                    row.name,
                    figure(model),
                    row.unit,
                    err * 100.0
                ))
            }
        }
    }
}

/// A figure as the tables show it: thousands separated, three significant digits below 100.
fn figure(x: f64) -> String {
    if x.abs() >= 100.0 {
        let s = format!("{:.0}", x);
        let (sign, digits) = s.split_at(if s.starts_with('-') { 1 } else { 0 });
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        format!("{sign}{out}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

fn published(row: &Row) -> String {
    let sign = match row.bound {
        Bound::About => "",
        Bound::AtLeast => "≥",
        Bound::AtMost => "≤",
    };
    format!("{sign}{} {}", figure(row.published), row.unit)
}

fn line(row: &Row, device: &str) -> String {
    let mut condition = format!("{}; {}; {}; {}", row.state, row.tool, row.depth, row.host);
    if let Some(n) = &row.note {
        condition.push_str(&format!(". Model: {n}"));
    }
    let status = status(row, row.model).unwrap_or_else(|e| format!("FAILS: {e}"));
    format!(
        "| {} | {} | {} | {} | {} | {} | {} {} | {:+.0}% | {} |\n",
        row.section,
        device,
        row.name,
        condition,
        published(row),
        row.source,
        figure(row.model),
        row.unit,
        (row.model / row.published - 1.0) * 100.0,
        status
    )
}

const HEADER: &str = "| § | device | figure | condition: state; tool; QD x jobs; host | published | source | model | error | status |\n|---|---|---|---|---:|---|---:|---:|---|\n";

/// The two tables of docs/validation.md: rows the test runs, rows measured by a command.
fn tables(runs: &[Run], measured: &[Measured]) -> (String, String) {
    let mut by_test = String::from(HEADER);
    for run in runs {
        let what = match &run.source {
            Source::Job(j) => format!("`{j}`"),
            Source::Suite { name, args } => format!("`suite {name} {}`", args.join(" ")),
        };
        let slice = if run.sets.is_empty() {
            String::new()
        } else {
            format!(", `{}`", run.sets.join("`, `"))
        };
        for row in &run.rows {
            let device = match (&run.source, &row.select) {
                (Source::Suite { .. }, Some(series)) => format!("`{series}`, {what}"),
                _ => format!("`{}`, {what}{slice}", short(&run.devices.join(", "))),
            };
            by_test.push_str(&line(row, &device));
        }
    }
    let mut by_command = String::from(
        "| § | device | figure | condition: state; tool; QD x jobs; host | published | source | model | error | status |\n|---|---|---|---|---:|---|---:|---:|---|\n",
    );
    for m in measured {
        for (i, row) in m.rows.iter().enumerate() {
            let device = if i == 0 {
                format!("`{}`: `{}` ({})", m.device, m.command, m.why)
            } else {
                format!("`{}`: as above", m.device)
            };
            by_command.push_str(&line(row, &device));
        }
    }
    (by_test, by_command)
}

fn short(device: &str) -> String {
    device
        .trim_start_matches("presets/")
        .trim_end_matches(".toml")
        .to_string()
}

/// Run one job file or suite; the JSON result (job) or the CSV text (suite), or the error.
fn execute(index: usize, run: &Run) -> Result<String, String> {
    let root = repo();
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_flashlab"));
    let out = match &run.source {
        Source::Job(job) => {
            let out = tmp.join(format!("validation-{index}.json"));
            cmd.arg("run")
                .arg(root.join("jobs/validation").join(job))
                .arg("--device")
                .arg(device_file(&run.devices[0]))
                .args(["--output-format", "json", "--output"])
                .arg(&out);
            out
        }
        Source::Suite { name, args } => {
            let dir = tmp.join(format!("validation-{index}"));
            let _ = std::fs::remove_dir_all(&dir);
            cmd.args(["suite", name]).args(args);
            for d in &run.devices {
                cmd.arg("--device").arg(d);
            }
            cmd.arg("--outdir").arg(&dir);
            dir.join(format!("{name}.csv"))
        }
    };
    cmd.args(run.sets.iter().flat_map(|s| ["--set", s.as_str()]));
    let o = cmd.output().expect("the flashlab binary runs");
    if !o.status.success() {
        return Err(common::stderr(&o));
    }
    Ok(std::fs::read_to_string(&out).expect("the result was written"))
}

/// The model's figure of `row` in a run's output. Metrics of a job: `read_iops`,
/// `write_iops`, `read_mb_s`, `write_mb_s` (10^6 bytes/s), `read_lat_mean_us`,
/// `write_lat_mean_us` (fio's total latency), `job_write_amplification` (the drive's over
/// the job's phase: `flashlab.phase_writes`); of the run: `write_amplification`. Of a
/// suite: a metric of its CSV (`device,metric,unit,value`) for the row's `series`.
fn value(run: &Run, output: &str, row: &Row) -> Option<f64> {
    if let Source::Suite { .. } = run.source {
        let series = row.select.as_deref()?;
        return output.lines().find_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f.len() == 4 && f[0] == series && f[1] == row.metric)
                .then(|| f[3].parse().ok())
                .flatten()
        });
    }
    let result: serde_json::Value = serde_json::from_str(output).ok()?;
    if row.metric == "write_amplification" {
        return result["flashlab"]["device_counters"]["write_amplification"].as_f64();
    }
    let jobname = row.select.as_deref()?;
    if row.metric == "job_write_amplification" {
        // The phase (jobs between stonewalls) the job ran in: its writes alone.
        return result["flashlab"]["phase_writes"]
            .as_array()?
            .iter()
            .find(|p| {
                p["jobs"]
                    .as_str()
                    .is_some_and(|jobs| jobs.split(", ").any(|j| j == jobname))
            })?["write_amplification"]
            .as_f64();
    }
    let job = result["jobs"]
        .as_array()?
        .iter()
        .find(|j| j["jobname"] == jobname)?;
    let (dir, what) = row.metric.split_once('_')?;
    let d = &job[dir];
    match what {
        "iops" => d["iops"].as_f64(),
        "mb_s" => Some(d["bw_bytes"].as_f64()? / 1e6),
        "lat_mean_us" => Some(d["lat_ns"]["mean"].as_f64()? / 1e3),
        _ => None,
    }
}

const BEGIN_TEST: &str = "<!-- rows run by the test: written from jobs/validation/rows.toml -->\n";
const BEGIN_COMMAND: &str =
    "<!-- rows measured by a command: written from jobs/validation/rows.toml -->\n";
const BEGIN_FITTED: &str = "<!-- calibration set: written from jobs/validation/fitted.toml -->\n";
/// The variable that makes the tests write the pages' tables instead of checking them.
const UPDATE: &str = "FLASHLAB_UPDATE_VALIDATION";

#[test]
fn every_preset_has_a_calibration_set() {
    let (names, _) = calibration_set();
    let root = repo();
    let mut missing = Vec::new();
    for dir in ["presets", "presets/systems/drives"] {
        for e in std::fs::read_dir(root.join(dir)).expect("the presets are listed") {
            let p = e.expect("a preset entry").path();
            if p.extension().is_some_and(|x| x == "toml") {
                let stem = p.file_stem().unwrap().to_string_lossy().to_string();
                if !names.contains(&stem) {
                    missing.push(stem);
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "presets with no entry in jobs/validation/fitted.toml: {missing:?}"
    );
}

#[test]
fn the_calibration_set_refuses_a_fitted_figure() {
    let (_, set) = calibration_set();
    // The fresh drive's data-sheet read, offered as a full drive's: refused.
    let row = Row {
        section: 5,
        name: "128 KiB sequential read, full drive".into(),
        state: "full".into(),
        tool: "Iometer".into(),
        depth: "QD32 x 1".into(),
        host: "Windows".into(),
        note: None,
        published: 3500.0,
        unit: "MB/s".into(),
        bound: Bound::About,
        tolerance: 0.15,
        source: "data sheet".into(),
        model: 3615.0,
        select: Some("seq-read-128k".into()),
        metric: "read_mb_s".into(),
        known_miss: None,
    };
    let pm981a = presets_of("presets/samsung-pm981a-256gb.toml");
    assert!(refused(&row, &pm981a, &set).is_some());
    // The same figure on a drive not fitted to it is not refused.
    assert!(refused(&row, &presets_of("micron-p300-200gb"), &set).is_none());
    // A system is refused by its drives' sets.
    let system = presets_of("workstation-raid10");
    assert!(refused(&row, &system, &set).is_some());
}

#[test]
fn rows_are_outside_the_calibration_set_and_hold_their_status() {
    let (runs, measured) = load();
    let (_, set) = calibration_set();
    let mut failures = Vec::new();
    let all = runs
        .iter()
        .flat_map(|r| r.rows.iter().map(move |row| (r.devices.clone(), row)))
        .chain(
            measured
                .iter()
                .flat_map(|m| m.rows.iter().map(move |row| (vec![m.device.clone()], row))),
        );
    for (devices, row) in all {
        let presets: Vec<String> = devices.iter().flat_map(|d| presets_of(d)).collect();
        if let Some(why) = refused(row, &presets, &set) {
            failures.push(why);
        }
        if let Err(why) = status(row, row.model) {
            failures.push(why);
        }
    }
    assert!(
        failures.is_empty(),
        "validation rows:\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_tables_of_the_pages_are_the_data() {
    let (runs, measured) = load();
    let (by_test, by_command) = tables(&runs, &measured);
    let fitted = calibration_table();
    println!("{by_test}\n{by_command}\n{fitted}");
    let failures: Vec<String> = [
        page_holds(
            "docs/validation.md",
            &[(BEGIN_TEST, &by_test), (BEGIN_COMMAND, &by_command)],
            UPDATE,
            "jobs/validation/",
        ),
        page_holds(
            "docs/calibration.md",
            &[(BEGIN_FITTED, &fitted)],
            UPDATE,
            "jobs/validation/",
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn validation() {
    let (runs, _) = load();
    let results = common::on_two_workers(&runs, execute);
    let mut failures = Vec::new();
    for (run, result) in runs.iter().zip(results) {
        let out = match result {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{:?}: the run failed: {e}", run.devices));
                continue;
            }
        };
        for row in &run.rows {
            let Some(model) = value(run, &out, row) else {
                failures.push(format!(
                    "{:?} {}: no figure `{}` in the result",
                    run.devices, row.name, row.metric
                ));
                continue;
            };
            println!(
                "{:?} {}: {} {} (recorded {})",
                run.devices,
                row.name,
                figure(model),
                row.unit,
                figure(row.model)
            );
            if (model / row.model - 1.0).abs() > 0.01 {
                failures.push(format!(
                    "{:?} {}: the model gives {model} {}, rows.toml records {}: update its `model`",
                    run.devices, row.name, row.unit, row.model
                ));
            }
            if let Err(why) = status(row, model) {
                failures.push(why);
            }
        }
    }
    assert!(failures.is_empty(), "validation:\n{}", failures.join("\n"));
}

/// The (value, unit) figures a provenance text names: "490K IOPS", "2,200 MB/s", "6.5 GB/s"
/// (in MB/s), as validation rows give theirs.
fn figures_named(text: &str) -> Vec<(f64, String)> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let unit = w.trim_end_matches([',', '.', ';', ':', ')']);
        let scale = match unit {
            "IOPS" | "MB/s" => 1.0,
            "GB/s" => 1000.0,
            _ => continue,
        };
        let Some(prev) = i
            .checked_sub(1)
            .map(|j| words[j].trim_start_matches(['~', '(']))
        else {
            continue;
        };
        let (digits, multiplier) = match prev.strip_suffix('K').or(prev.strip_suffix('k')) {
            Some(d) => (d, 1000.0),
            None => match prev.strip_suffix('M') {
                Some(d) => (d, 1e6),
                None => (prev, 1.0),
            },
        };
        if let Ok(v) = digits.replace(',', "").parse::<f64>() {
            let unit = if unit == "GB/s" { "MB/s" } else { unit };
            out.push((v * multiplier * scale, unit.to_string()));
        }
    }
    out
}

#[test]
fn figures_are_read_from_provenance_texts() {
    assert_eq!(
        figures_named(
            "Highest figure quoted: 490K IOPS random write; ~2,200 MB/s (spec), 6.5 GB/s."
        ),
        vec![
            (490_000.0, "IOPS".to_string()),
            (2200.0, "MB/s".to_string()),
            (6500.0, "MB/s".to_string())
        ]
    );
}

/// No validation row compares with a figure a key of its preset was fitted or capped to, as
/// the preset's `[provenance]` says (the calibration set of fitted.toml is checked above).
#[test]
fn rows_never_use_a_figure_a_key_was_fitted_or_capped_to() {
    use flashlab_device::{load_device_described, KeyOrigin, Provenance};
    let (runs, measured) = load();
    let all = runs
        .iter()
        .flat_map(|r| r.rows.iter().map(move |row| (r.devices.clone(), row)))
        .chain(
            measured
                .iter()
                .flat_map(|m| m.rows.iter().map(move |row| (vec![m.device.clone()], row))),
        );
    let mut uses = Vec::new();
    for (devices, row) in all {
        for preset in devices.iter().flat_map(|d| presets_of(d)) {
            let Ok(d) = load_device_described(&preset, &[]) else {
                continue; // a hard disk or 3D XPoint drive: no SSD keys to fit
            };
            for k in &d.keys {
                let figure = match &k.origin {
                    KeyOrigin::Recorded(Provenance::Fitted { figure })
                    | KeyOrigin::Recorded(Provenance::Cap { figure }) => figure,
                    _ => continue,
                };
                for (value, unit) in figures_named(figure) {
                    if unit == row.unit && (row.published / value - 1.0).abs() < 0.005 {
                        uses.push(format!(
                            "{}: {} {} is the figure {preset}'s {} was set from ({figure})",
                            row.name, row.published, row.unit, k.key
                        ));
                    }
                }
            }
        }
    }
    // A figure a parameter was set from belongs in the preset's calibration set
    // (jobs/validation/fitted.toml), never in a validation row.
    assert!(uses.is_empty(), "{uses:#?}");
}
