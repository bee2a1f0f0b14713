//! Calibration: the four corners of every NAND preset with a target in
//! `jobs/four-corners/targets.toml`, run on the slice that file names, each within ±15% of its
//! target. A corner listed as a known miss must still miss in the stated direction, so the
//! list cannot go stale; a run listed with `known_error` must still fail with that message.
//! Prints the table (`cargo test -p flashlab --test integration calibration:: -- --ignored
//! --nocapture`: a long test, which `cargo test` leaves to `.ci/run`) and checks docs/calibration.md shows it (`FLASHLAB_UPDATE_CALIBRATION=1`
//! writes it there).

mod common;

use common::{page_holds, repo, toml_text as text};

use std::path::PathBuf;
use std::process::Command;

/// The aim of the calibration: every corner within this fraction of its target.
const BOUND: f64 = 0.15;

/// Where docs/calibration.md's results table starts; the test writes it there under
/// `FLASHLAB_UPDATE_CALIBRATION=1`, with the known misses' reasons left to the page's prose.
const BEGIN_RESULTS: &str = "<!-- results: written by the calibration test -->\n";

struct Corner {
    name: String,
    target: f64,
    unit: String,
    source: String,
    /// `Some((direction, reason))`: "high" or "low", and why it misses.
    known_miss: Option<(String, String)>,
}

struct Run {
    preset: String,
    /// Device keys set on top of the preset (`KEY=VALUE`), e.g. another capacity of the
    /// same drive model.
    sets: Vec<String>,
    job: String,
    scale: String,
    /// `sim.die_cut` (`die_cut = "allow"`: the slice cuts dies, its errors accepted).
    die_cut: Option<String>,
    known_error: Option<String>,
    /// Jobs run without the timing model (`--untimed`): preconditioning only.
    untimed: Vec<String>,
    corners: Vec<Corner>,
}

fn load() -> Vec<Run> {
    let path = repo().join("jobs/four-corners/targets.toml");
    let doc: toml::Table = std::fs::read_to_string(&path)
        .expect("jobs/four-corners/targets.toml is readable")
        .parse()
        .expect("jobs/four-corners/targets.toml is valid TOML");
    let runs = doc
        .get("run")
        .and_then(|v| v.as_array())
        .expect("calibration.toml has [[run]] entries");
    runs.iter()
        .map(|r| {
            let r = r.as_table().expect("[[run]] is a table");
            let preset = text(r, "preset", "[[run]]");
            let ctx = format!("run {preset}");
            let scale = match r.get("scale") {
                Some(toml::Value::Float(f)) => f.to_string(),
                Some(toml::Value::Integer(i)) => i.to_string(),
                Some(toml::Value::String(s)) => s.clone(),
                _ => panic!("{ctx}: `scale` (a fraction or \"auto\") is required"),
            };
            let corners = r
                .get("corner")
                .and_then(|v| v.as_array())
                .unwrap_or_else(|| panic!("{ctx}: [[run.corner]] entries are required"))
                .iter()
                .map(|c| {
                    let c = c.as_table().expect("[[run.corner]] is a table");
                    let name = text(c, "name", &ctx);
                    let target = c
                        .get("target")
                        .and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64)))
                        .unwrap_or_else(|| panic!("{ctx} {name}: `target` is required"));
                    let known_miss = c.get("known_miss").map(|v| {
                        let reason = v.as_str().expect("known_miss is text").to_string();
                        let dir = text(c, "miss", &format!("{ctx} {name} (known_miss)"));
                        assert!(
                            dir == "high" || dir == "low",
                            "{ctx} {name}: miss must be \"high\" or \"low\""
                        );
                        (dir, reason)
                    });
                    Corner {
                        unit: text(c, "unit", &ctx),
                        source: text(c, "source", &ctx),
                        name,
                        target,
                        known_miss,
                    }
                })
                .collect();
            let sets = text_list(r, "set", "\"KEY=VALUE\"", &ctx);
            for s in &sets {
                assert!(s.contains('='), "{ctx}: `set` entry {s:?} is not KEY=VALUE");
            }
            let untimed = text_list(r, "untimed", "job names", &ctx);
            Run {
                sets,
                untimed,
                job: text(r, "job", &ctx),
                die_cut: r
                    .get("die_cut")
                    .map(|v| v.as_str().expect("die_cut is text").to_string()),
                known_error: r
                    .get("known_error")
                    .map(|v| v.as_str().expect("known_error is text").to_string()),
                preset,
                scale,
                corners,
            }
        })
        .collect()
}

/// The list of text at `key` of a run (empty when absent); `what` says what its entries are.
fn text_list(r: &toml::Table, key: &str, what: &str, ctx: &str) -> Vec<String> {
    let Some(v) = r.get(key) else {
        return Vec::new();
    };
    v.as_array()
        .unwrap_or_else(|| panic!("{ctx}: `{key}` is a list of {what}"))
        .iter()
        .map(|e| {
            e.as_str()
                .unwrap_or_else(|| panic!("{ctx}: `{key}` entries are text"))
                .to_string()
        })
        .collect()
}

impl Run {
    /// The device as the table names it: the preset, and the keys set on it.
    fn device(&self) -> String {
        if self.sets.is_empty() {
            self.preset.clone()
        } else {
            format!("{} ({})", self.preset, self.sets.join(", "))
        }
    }
}

/// Run one preset's job file; the JSON result, or the error output of a failed run.
fn execute(index: usize, run: &Run) -> Result<serde_json::Value, String> {
    let root = repo();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "calibration-{index}-{}-{}.json",
        run.preset, run.job
    ));
    let o = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .arg("run")
        .arg(root.join(format!("jobs/four-corners/{}.fio", run.job)))
        .arg("--device")
        .arg(root.join(format!("presets/{}.toml", run.preset)))
        .arg("--set")
        .arg(format!("sim.scale={}", run.scale))
        .args(run.sets.iter().flat_map(|s| ["--set", s.as_str()]))
        .args(
            run.die_cut
                .iter()
                .flat_map(|v| ["--set".to_string(), format!("sim.die_cut={v}")]),
        )
        .args(
            (!run.untimed.is_empty())
                .then(|| ["--untimed".to_string(), run.untimed.join(",")])
                .into_iter()
                .flatten(),
        )
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

/// A corner's figure: MB/s (10^6 bytes/s) for sequential corners, IOPS for random ones.
fn corner_value(result: &serde_json::Value, corner: &str) -> Option<f64> {
    let job = result["jobs"]
        .as_array()?
        .iter()
        .find(|j| j["jobname"] == corner)?;
    let dir = if corner.contains("read") {
        "read"
    } else {
        "write"
    };
    if corner.starts_with("seq") {
        Some(job[dir]["bw_bytes"].as_f64()? / 1e6)
    } else {
        job[dir]["iops"].as_f64()
    }
}

/// Long (ARCHITECTURE.md, "Tests, and the time CI takes"): `cargo test` leaves it out.
mod long {
    #[test]
    #[ignore = "long: .ci/run runs it (cargo test --workspace -- --ignored long::)"]
    fn calibration() {
        super::calibration();
    }
}

fn calibration() {
    let runs = load();
    let results = common::on_two_workers(&runs, execute);

    let header =
        "| preset | job | corner | target | simulated | error | status |\n|---|---|---|---:|---:|---:|---|\n";
    // What the test prints (every known miss with its reason) and what the page shows.
    let (mut table, mut page) = (String::from(header), String::from(header));
    let mut failures = Vec::new();
    for (run, result) in runs.iter().zip(results) {
        let json = match (result, &run.known_error) {
            (Err(e), Some(expected)) if e.contains(expected.as_str()) => {
                let line = format!(
                    "| {} | {} | (run) | | | | known error: {} |\n",
                    run.device(),
                    run.job,
                    expected
                );
                table.push_str(&line);
                page.push_str(&line);
                continue;
            }
            (Err(e), _) => {
                failures.push(format!(
                    "{} {}: the run failed: {}",
                    run.device(),
                    run.job,
                    e
                ));
                continue;
            }
            (Ok(_), Some(expected)) => {
                failures.push(format!(
                    "{} {}: listed as known_error \"{expected}\" but the run succeeded: remove known_error",
                    run.device(), run.job
                ));
                continue;
            }
            (Ok(j), None) => j,
        };
        for c in &run.corners {
            let Some(sim) = corner_value(&json, &c.name) else {
                failures.push(format!("{} {}: no job {}", run.device(), run.job, c.name));
                continue;
            };
            let err = sim / c.target - 1.0;
            let (status, shown) = match &c.known_miss {
                None if err.abs() <= BOUND => ("ok".to_string(), "ok".to_string()),
                None => {
                    failures.push(format!(
                        "{} {} {}: {sim:.0} {} vs {} ({}): {:+.0}%, outside ±{:.0}%",
                        run.device(),
                        run.job,
                        c.name,
                        c.unit,
                        c.target,
                        c.source,
                        err * 100.0,
                        BOUND * 100.0
                    ));
                    ("FAIL".to_string(), "FAIL".to_string())
                }
                Some((dir, reason)) => {
                    let still = if dir == "high" {
                        err > BOUND
                    } else {
                        err < -BOUND
                    };
                    if !still {
                        failures.push(format!(
                            "{} {} {}: listed as a known miss ({dir}) but now {:+.0}%: update jobs/four-corners/targets.toml",
                            run.device(),
                            run.job,
                            c.name,
                            err * 100.0
                        ));
                    }
                    (
                        format!("known miss ({dir}): {reason}"),
                        format!("known miss ({dir})"),
                    )
                }
            };
            let line = |status: &str| {
                format!(
                    "| {} | {} | {} | {} {} | {:.0} {} | {:+.0}% | {} |\n",
                    run.device(),
                    run.job,
                    c.name,
                    c.target,
                    c.unit,
                    sim,
                    c.unit,
                    err * 100.0,
                    status
                )
            };
            table.push_str(&line(&status));
            page.push_str(&line(&shown));
        }
    }
    println!("{table}");
    failures.extend(page_holds(
        "docs/calibration.md",
        &[(BEGIN_RESULTS, &page)],
        "FLASHLAB_UPDATE_CALIBRATION",
        "the calibration run",
    ));
    assert!(failures.is_empty(), "calibration:\n{}", failures.join("\n"));
}
