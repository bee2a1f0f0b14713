//! Running a plan's points: one simulation each, its result one JSON file.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use flashlab_host::simulate;
use serde_json::{json, Value};

use crate::plan::{Plan, Point};
use crate::PlanError;

/// Why a sweep (or one simulation) stopped.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The plan, a value in it, the job file or the device is wrong (exit 2). Transparent:
    /// the plan error is the message, not also its cause, so a chain prints it once.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The input is fine but a run failed (exit 1).
    #[error("point {point}: {message}")]
    Run { point: u64, message: String },
    /// Writing or reading results failed (exit 1).
    #[error("{0}")]
    Io(String),
    /// An input other than the plan is wrong: `--outdir`, or what `collect` reads (exit 2).
    #[error("{0}")]
    Input(String),
}

impl SweepError {
    pub fn is_bad_input(&self) -> bool {
        matches!(self, SweepError::Plan(_) | SweepError::Input(_))
    }
}

/// Checks, before any point runs, that `outdir` is a directory (made when absent) in which
/// a new file can be made ([`flashlab_engine::output::check_dir`]), so no simulation runs
/// only to fail at its write.
pub fn check_outdir(outdir: &Path) -> Result<(), SweepError> {
    flashlab_engine::output::check_dir("--outdir", outdir)
        .map_err(|e| SweepError::Input(e.to_string()))
}

/// The flashlab build a result came from.
pub fn provenance() -> Value {
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "commit": env!("FLASHLAB_COMMIT"),
    })
}

/// A point's result file in the output directory.
pub fn point_file_name(index: u64) -> String {
    format!("point-{index:06}.json")
}

fn parse_job(plan: &Plan, point: &Point) -> Result<flashlab_workload::JobFile, PlanError> {
    let name = plan_dir(plan).join(&plan.job.path);
    flashlab_workload::parse_str(&plan.job.text, &name.display().to_string(), &|var| {
        point.env_value(var)
    })
    .map_err(|e| PlanError {
        file: plan.file.clone(),
        line: plan.job.line,
        message: format!("point {}: {e}", point.index),
    })
}

fn plan_dir(plan: &Plan) -> PathBuf {
    Path::new(&plan.file)
        .parent()
        .unwrap_or(Path::new(""))
        .to_path_buf()
}

/// Check every point before running any: each device (with its overrides) loads and the
/// job file parses with each point's variables. An error names the plan's line of the value
/// at fault.
pub fn check_plan(plan: &Plan) -> Result<(), PlanError> {
    check_points(plan, 0..plan.point_count()?)
}

/// [`check_plan`] for the points `indices` only: a run of one point (`--point N`, one task
/// of an array) costs what its own settings cost, not the whole plan's.
pub fn check_points(plan: &Plan, indices: impl IntoIterator<Item = u64>) -> Result<(), PlanError> {
    let mut devices_seen = HashSet::new();
    let mut jobs_seen = HashSet::new();
    for index in indices {
        let point = plan.point(index)?;
        let device_key = (point.device.clone(), point.overrides());
        if devices_seen.insert(device_key) {
            check_device(plan, &point)?;
        }
        let env: Vec<_> = point
            .env
            .iter()
            .map(|(n, v)| (n.clone(), v.text.clone()))
            .collect();
        if jobs_seen.insert(env) {
            parse_job(plan, &point)?;
        }
    }
    Ok(())
}

fn check_device(plan: &Plan, point: &Point) -> Result<(), PlanError> {
    let at = |line: Option<usize>, message: String| PlanError {
        file: plan.file.clone(),
        line: line.unwrap_or(0),
        message,
    };
    if flashlab_system::is_system(&point.device) {
        if let Some((key, value)) = point.set.first() {
            return Err(at(
                Some(value.line),
                format!(
                    "set.{key}: device keys apply to a single drive, and {} is a system",
                    point.device
                ),
            ));
        }
        return flashlab_system::load_system_config(&point.device)
            .map(|_| ())
            .map_err(|e| at(point.device_line, e.to_string()));
    }
    let overrides = point.overrides();
    if let Err(e) = flashlab_device::load_device_config(&point.device, &overrides) {
        // The first override whose addition fails is the one at fault; none: the device.
        let culprit = (0..overrides.len()).find(|&n| {
            flashlab_device::load_device_config(&point.device, &overrides[..=n]).is_err()
        });
        let line = match culprit {
            Some(n) => Some(point.set[n].1.line),
            None => point.device_line,
        };
        return Err(at(line, format!("point {}: {e}", point.index)));
    }
    Ok(())
}

/// Run point `index` and return its result document. A plan with `[precondition]` runs
/// its preconditioning every time ([`run_point_cached`] keeps it).
pub fn run_point(plan: &Plan, index: u64) -> Result<Value, SweepError> {
    run_point_cached(plan, index, None)
}

/// [`run_point`] with the precondition cache `cache`: a point whose drive (device, keys,
/// seed, preconditioning options) was preconditioned before, by a suite or another point,
/// loads that state instead of running the preconditioning again. The result is the same
/// either way.
pub fn run_point_cached(
    plan: &Plan,
    index: u64,
    cache: Option<&flashlab_suite::StateCache>,
) -> Result<Value, SweepError> {
    let point = plan.point(index)?;
    check_device(plan, &point)?;
    let job_file = parse_job(plan, &point)?;
    let bad = |message: String| {
        SweepError::Plan(PlanError {
            file: plan.file.clone(),
            line: 0,
            message: format!("point {index}: {message}"),
        })
    };
    let failed = |(bad_input, message): (bool, String)| {
        if bad_input {
            bad(message)
        } else {
            SweepError::Run {
                point: index,
                message,
            }
        }
    };
    let (simulated, preconditioned) = match &plan.precondition {
        None => (
            simulate(&job_file, &point.device, &point.overrides(), point.seed).map_err(failed)?,
            None,
        ),
        Some(pre) => {
            let (simulated, pre) =
                precondition_and_run(plan, &point, pre, &job_file, cache).map_err(failed)?;
            (simulated, Some(pre))
        }
    };
    let result = flashlab_report::json_value(&simulated.result, false);
    let settings: serde_json::Map<String, Value> = point
        .settings
        .iter()
        .map(|(name, value)| (name.clone(), Value::String(value.text.clone())))
        .collect();
    let overrides: serde_json::Map<String, Value> = point
        .set
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.text.clone())))
        .collect();
    let mut doc = json!({
        "point": index,
        "plan": plan.file,
        // The plan's size, so `collect` finds points missing after the highest one too.
        "plan_points": plan.point_count()?,
        "settings": settings,
        "device": point.device,
        "overrides": overrides,
        "seed": point.seed,
        "io_errors": simulated.io_errors,
        "flashlab": provenance(),
        "device_config": simulated.device_config,
        "result": result,
    });
    if let (Some(pre), Value::Object(fields)) = (preconditioned, &mut doc) {
        fields.insert("precondition".into(), pre);
    }
    Ok(doc)
}

/// The point's drive preconditioned by the precondition suite (`plan`'s `[precondition]`
/// options, the point's seed; from `cache` when it holds that drive's state), then the job
/// run on it from where the preconditioning left its clock. Also returns what the
/// preconditioning did: its options, its results and the device's counters when the job
/// started (the job's own write amplification is measured from them).
fn precondition_and_run(
    plan: &Plan,
    point: &Point,
    pre: &crate::plan::Precondition,
    job_file: &flashlab_workload::JobFile,
    cache: Option<&flashlab_suite::StateCache>,
) -> Result<(flashlab_host::Simulated, Value), (bool, String)> {
    use flashlab_suite::{DeviceRun, SuiteTarget};
    let at_line = |e: flashlab_suite::SuiteError| {
        (
            true,
            PlanError {
                file: plan.file.clone(),
                line: pre.line,
                message: format!("precondition: {e}"),
            }
            .to_string(),
        )
    };
    let (kind, mut options) =
        flashlab_suite::options_from_pairs(crate::plan::PRECONDITION_SUITE, &pre.pairs())
            .map_err(at_line)?;
    options.seed = point.seed;
    options.state_cache = cache.cloned();
    let overrides = point.overrides();
    let (mut device, device_config) =
        flashlab_host::Device::build(&point.device, &overrides, point.seed)
            .map_err(|e| (true, e.0))?;
    let target = if flashlab_system::is_system(&point.device) {
        SuiteTarget::System(
            flashlab_system::load_system_config(&point.device)
                .map_err(|e| (true, e.to_string()))?,
        )
    } else {
        SuiteTarget::Drive(Box::new(
            flashlab_device::load_device_config(&point.device, &overrides)
                .map_err(|e| (true, e.to_string()))?,
        ))
    };
    // The seed the device was built with, as a suite's own fresh device has it: the cache's
    // key.
    let device_seed = flashlab_engine::SeedTree::new(point.seed)
        .child("device")
        .master_seed();
    let name = device.name().to_string();
    let run = DeviceRun::starting_at(0).fresh(&target, device_seed);
    let suite_failed = |e: flashlab_suite::SuiteError| (e.is_bad_input(), e.to_string());
    let (report, clock_ns) = match &mut device {
        flashlab_host::Device::Drive(ssd) => flashlab_suite::run_on_suite_device_as(
            kind,
            &mut **ssd,
            &name,
            run,
            &options,
            &mut |_| {},
        ),
        flashlab_host::Device::System(system) => flashlab_suite::run_on_suite_device_as(
            kind,
            &mut **system,
            &name,
            run,
            &options,
            &mut |_| {},
        ),
    }
    .map_err(suite_failed)?;
    let (counters_key, counters) = device.counters_json();
    let results: serde_json::Map<String, Value> = report
        .results
        .iter()
        .map(|m| (m.key(), json!(m.value)))
        .collect();
    let written: serde_json::Map<String, Value> = pre
        .options
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.text.clone())))
        .collect();
    let run_options = device.run_options(point.seed);
    let outcome =
        flashlab_host::run_jobs(&mut device, clock_ns, job_file, &run_options, &mut |_| {})
            .map_err(|e| (e.is_bad_input(), e.to_string()))?;
    let summary = json!({
        "suite": kind.name(),
        "options": written,
        "steady_round": report.steady.as_ref().and_then(|s| s.verdict.round),
        "rounds": report.steady.as_ref().map(|s| s.rounds_iops.len()),
        "results": results,
        "end_ns": clock_ns,
        counters_key: counters,
    });
    Ok((
        flashlab_host::Simulated {
            result: outcome.result,
            device_config,
            io_errors: outcome.io_errors,
        },
        summary,
    ))
}

/// What a run of several points did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RunSummary {
    pub ran: u64,
    pub skipped: u64,
    pub failed: Vec<String>,
}

/// Run `points` of the plan on `threads` threads, each result into `outdir` (written
/// whole, then renamed, so an interrupted sweep leaves no half file). With `resume`, a
/// point whose file exists and belongs to this plan's point is skipped. `cache` keeps the
/// points' preconditioned drives ([`run_point_cached`]). `on_done` is told
/// of each point as it ends.
pub fn run_plan(
    plan: &Plan,
    points: &[u64],
    outdir: &Path,
    threads: usize,
    resume: bool,
    cache: Option<&flashlab_suite::StateCache>,
    on_done: &(dyn Fn(u64, &str) + Sync),
) -> Result<RunSummary, SweepError> {
    check_points(plan, points.iter().copied())?;
    check_outdir(outdir)?;
    let next = AtomicU64::new(0);
    let summary = Mutex::new(RunSummary::default());
    let worker = || loop {
        let slot = next.fetch_add(1, Ordering::Relaxed);
        let Some(&index) = points.get(slot as usize) else {
            break;
        };
        let path = outdir.join(point_file_name(index));
        if resume && done_already(plan, index, &path) {
            summary.lock().unwrap_or_else(|e| e.into_inner()).skipped += 1;
            on_done(index, "skipped (result exists)");
            continue;
        }
        // The point's file is checked before its simulation, so a FIFO or a directory at
        // its name costs no run.
        let outcome = flashlab_engine::output::OutputFile::check("point file", &path)
            .map_err(|e| SweepError::Io(e.to_string()))
            .and_then(|out| {
                run_point_cached(plan, index, cache).and_then(|doc| write_atomically(&out, &doc))
            });
        let mut s = summary.lock().unwrap_or_else(|e| e.into_inner());
        match outcome {
            Ok(()) => {
                s.ran += 1;
                drop(s);
                on_done(index, "done");
            }
            Err(e) => {
                s.failed.push(e.to_string());
                drop(s);
                on_done(index, "failed");
            }
        }
    };
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(worker);
        }
    });
    Ok(summary.into_inner().unwrap_or_else(|e| e.into_inner()))
}

/// A point file read back for `--resume`, with `collect`'s bound: only a regular file of at
/// most 64 MiB is read (a link to /dev/zero, a FIFO or a huge sparse file is not), so a
/// resumed sweep never takes more memory or time than the file's bound.
fn read_point_file(path: &Path) -> Option<Value> {
    let text = crate::read_bounded(path, crate::collect::MAX_POINT_FILE_BYTES).ok()?;
    serde_json::from_str::<Value>(&text).ok()
}

fn done_already(plan: &Plan, index: u64, path: &Path) -> bool {
    let Some(doc) = read_point_file(path) else {
        return false;
    };
    let Ok(point) = plan.point(index) else {
        return false;
    };
    let same_settings = point
        .settings
        .iter()
        .all(|(name, value)| doc["settings"][name].as_str() == Some(value.text.as_str()));
    doc["point"].as_u64() == Some(index) && same_settings && doc["flashlab"] == provenance()
}

fn write_atomically(
    out: &flashlab_engine::output::OutputFile,
    doc: &Value,
) -> Result<(), SweepError> {
    let mut text = serde_json::to_string_pretty(doc)
        .map_err(|e| SweepError::Io(format!("{}: {e}", out.path().display())))?;
    text.push('\n');
    // The rule of every file flashlab writes: a regular file or nothing at the path,
    // written beside and renamed, nothing left behind on failure.
    out.write_bytes(text.as_bytes())
        .map_err(|e| SweepError::Io(e.to_string()))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// `--resume` read a point file whole: a link to /dev/zero grew to gigabytes, a FIFO
    /// waited for ever. It reads with `collect`'s bound, and only regular files.
    #[test]
    fn resume_reads_point_files_with_a_bound() {
        let dir = std::env::temp_dir().join(format!("flashlab-resume-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo.json");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let zero = dir.join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let sparse = dir.join("sparse.json");
        let f = std::fs::File::create(&sparse).unwrap();
        f.set_len(3 << 30).unwrap();
        let start = std::time::Instant::now();
        for p in [&fifo, &zero, &sparse] {
            assert!(read_point_file(p).is_none(), "{}", p.display());
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(2));
        let good = dir.join("good.json");
        std::fs::write(&good, "{\"point\": 3}").unwrap();
        assert_eq!(read_point_file(&good).unwrap()["point"], 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
