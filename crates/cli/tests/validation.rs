//! Validation: published figures no preset was fitted to (`jobs/validation/rows.toml`, the
//! table of `docs/validation.md`), each run through the CLI on the slice its row names and
//! held within the row's own tolerance. A row listed as a known miss must still miss in the
//! stated direction, so the list cannot go stale when a mechanism lands.
//! Prints the table (`cargo test -p flashlab --release --test validation -- --nocapture`).

mod common;

use common::{repo, toml_text as text};

use std::path::PathBuf;
use std::process::Command;

/// One published figure and how the model's figure is read from a run's JSON.
struct Row {
    name: String,
    published: f64,
    unit: String,
    /// Allowed relative error, e.g. 0.2 for ±20%.
    tolerance: f64,
    source: String,
    /// fio job whose figure it is; `None` for a figure of the whole run (device counters).
    jobname: Option<String>,
    metric: String,
    /// `Some((direction, reason))`: "high" or "low", and why it misses.
    known_miss: Option<(String, String)>,
}

struct Run {
    device: String,
    job: String,
    sets: Vec<String>,
    rows: Vec<Row>,
}

fn number(t: &toml::Table, key: &str, ctx: &str) -> f64 {
    t.get(key)
        .and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64)))
        .unwrap_or_else(|| panic!("{ctx}: `{key}` (a number) is required"))
}

fn load() -> Vec<Run> {
    let path = repo().join("jobs/validation/rows.toml");
    let doc: toml::Table = std::fs::read_to_string(&path)
        .expect("jobs/validation/rows.toml is readable")
        .parse()
        .expect("jobs/validation/rows.toml is valid TOML");
    doc.get("run")
        .and_then(|v| v.as_array())
        .expect("rows.toml has [[run]] entries")
        .iter()
        .map(|r| {
            let r = r.as_table().expect("[[run]] is a table");
            let device = text(r, "device", "[[run]]");
            let job = text(r, "job", "[[run]]");
            let ctx = format!("run {device} {job}");
            let sets = r
                .get("set")
                .map(|v| {
                    v.as_array()
                        .unwrap_or_else(|| panic!("{ctx}: `set` is a list of \"KEY=VALUE\""))
                        .iter()
                        .map(|s| {
                            let s = s.as_str().expect("`set` entries are text");
                            assert!(s.contains('='), "{ctx}: `set` entry {s:?} is not KEY=VALUE");
                            s.to_string()
                        })
                        .collect()
                })
                .unwrap_or_default();
            let rows = r
                .get("row")
                .and_then(|v| v.as_array())
                .unwrap_or_else(|| panic!("{ctx}: [[run.row]] entries are required"))
                .iter()
                .map(|c| {
                    let c = c.as_table().expect("[[run.row]] is a table");
                    let name = text(c, "name", &ctx);
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
                    Row {
                        published: number(c, "published", &rctx),
                        unit: text(c, "unit", &rctx),
                        tolerance,
                        source: text(c, "source", &rctx),
                        jobname: c
                            .get("job")
                            .map(|v| v.as_str().expect("job is text").into()),
                        metric: text(c, "metric", &rctx),
                        name,
                        known_miss,
                    }
                })
                .collect();
            Run {
                device,
                job,
                sets,
                rows,
            }
        })
        .collect()
}

/// Run one job file on one device; the JSON result or the error output.
fn execute(index: usize, run: &Run) -> Result<serde_json::Value, String> {
    let root = repo();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("validation-{index}.json"));
    let o = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .arg("run")
        .arg(root.join("jobs/validation").join(&run.job))
        .arg("--device")
        .arg(root.join(&run.device))
        .args(run.sets.iter().flat_map(|s| ["--set", s.as_str()]))
        .args(["--output-format", "json", "--output"])
        .arg(&out)
        .output()
        .expect("the flashlab binary runs");
    if !o.status.success() {
        return Err(common::stderr(&o));
    }
    let json = std::fs::read_to_string(&out).expect("the JSON result was written");
    Ok(serde_json::from_str(&json).expect("the JSON result parses"))
}

/// The model's figure of `row` in a run's JSON. Metrics of a job: `read_iops`, `write_iops`,
/// `read_mb_s`, `write_mb_s` (10^6 bytes/s),
/// `read_lat_mean_us`, `write_lat_mean_us` (fio's total latency: submission and
/// completion); of the run: `write_amplification`.
fn value(result: &serde_json::Value, row: &Row) -> Option<f64> {
    if row.metric == "write_amplification" {
        return result["flashlab"]["device_counters"]["write_amplification"].as_f64();
    }
    let jobname = row.jobname.as_deref()?;
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

#[test]
fn validation() {
    let runs = load();
    let results = common::on_two_workers(&runs, execute);

    let mut table = String::from(
        "| device | job | figure | published | model | error | tolerance | status |\n|---|---|---|---:|---:|---:|---:|---|\n",
    );
    let mut failures = Vec::new();
    for (run, result) in runs.iter().zip(results) {
        let json = match result {
            Ok(j) => j,
            Err(e) => {
                failures.push(format!("{} {}: the run failed: {e}", run.device, run.job));
                continue;
            }
        };
        for row in &run.rows {
            let Some(model) = value(&json, row) else {
                failures.push(format!(
                    "{} {} {}: no figure `{}` in the result",
                    run.device, run.job, row.name, row.metric
                ));
                continue;
            };
            let err = model / row.published - 1.0;
            let status = match &row.known_miss {
                None if err.abs() <= row.tolerance => "ok".to_string(),
                None => {
                    failures.push(format!(
                        "{} {} {}: {model:.3} {} vs {} ({}): {:+.0}%, outside ±{:.0}%",
                        run.device,
                        run.job,
                        row.name,
                        row.unit,
                        row.published,
                        row.source,
                        err * 100.0,
                        row.tolerance * 100.0
                    ));
                    "FAIL".to_string()
                }
                Some((dir, reason)) => {
                    let still = if dir == "high" {
                        err > row.tolerance
                    } else {
                        err < -row.tolerance
                    };
                    if !still {
                        failures.push(format!(
                            "{} {} {}: listed as a known miss ({dir}) but now {:+.0}%: update jobs/validation/rows.toml and docs/validation.md",
                            run.device,
                            run.job,
                            row.name,
                            err * 100.0
                        ));
                    }
                    format!("known miss ({dir}): {reason}")
                }
            };
            table.push_str(&format!(
                "| {} | {} | {} | {} {} | {:.3} {} | {:+.0}% | ±{:.0}% | {} |\n",
                run.device,
                run.job,
                row.name,
                row.published,
                row.unit,
                model,
                row.unit,
                err * 100.0,
                row.tolerance * 100.0,
                status
            ));
        }
    }
    println!("{table}");
    assert!(failures.is_empty(), "validation:\n{}", failures.join("\n"));
}
