//! Running a plan's points: one simulation each, its result one JSON file.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use flashlab_host::{simulate, Preconditioner};
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

/// The directory a plan's relative paths (its job file, device files) start from.
pub fn plan_dir(plan: &Plan) -> PathBuf {
    Path::new(&plan.file)
        .parent()
        .unwrap_or(Path::new(""))
        .to_path_buf()
}

/// Check every point before running any: `[precondition]`'s options pass `pre`, each
/// device (with its overrides) loads and the job file parses with each point's variables.
/// An error names the plan's line of the value at fault.
pub fn check_plan(plan: &Plan, pre: &dyn Preconditioner) -> Result<(), PlanError> {
    check_points(plan, 0..plan.point_count()?, pre)
}

/// [`check_plan`] for the points `indices` only: a run of one point (`--point N`, one task
/// of an array) costs what its own settings cost, not the whole plan's.
pub fn check_points(
    plan: &Plan,
    indices: impl IntoIterator<Item = u64>,
    pre: &dyn Preconditioner,
) -> Result<(), PlanError> {
    plan.check_precondition(pre)?;
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

/// Run point `index` and return its result document. A plan with `[precondition]` has
/// `pre` precondition the point's drive first (the suites' preconditioner may load a drive
/// preconditioned before, by a suite or another point, from its cache: the result is the
/// same either way).
pub fn run_point(plan: &Plan, index: u64, pre: &dyn Preconditioner) -> Result<Value, SweepError> {
    plan.check_precondition(pre)?;
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
            simulate(
                &job_file,
                &point.device,
                &point.overrides(),
                point.seed,
                &[],
            )
            .map_err(failed)?,
            None,
        ),
        Some(options) => {
            let (simulated, record) =
                precondition_and_run(&point, options, &job_file, pre).map_err(failed)?;
            (simulated, Some(record))
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

/// The point's drive preconditioned by `pre` (`[precondition]`'s options, the point's
/// seed), then the job run on it from where the preconditioning left its clock. Also returns
/// what the preconditioning did, as `pre` records it.
fn precondition_and_run(
    point: &Point,
    options: &crate::plan::Precondition,
    job_file: &flashlab_workload::JobFile,
    pre: &dyn Preconditioner,
) -> Result<(flashlab_host::Simulated, Value), (bool, String)> {
    let overrides = point.overrides();
    let (mut device, device_config) =
        flashlab_host::Device::build(&point.device, &overrides, point.seed)
            .map_err(|e| (true, e.0))?;
    let done = pre
        .precondition(
            &mut device,
            &point.device,
            &overrides,
            point.seed,
            &options.pairs(),
        )
        .map_err(|e| (e.bad_input, e.message))?;
    let run_options = device.run_options(point.seed);
    let outcome = flashlab_host::run_jobs(
        &mut device,
        done.end_ns,
        job_file,
        &run_options,
        &mut |_| {},
    )
    .map_err(|e| (e.is_bad_input(), e.to_string()))?;
    Ok((
        flashlab_host::Simulated {
            result: outcome.result,
            device_config,
            io_errors: outcome.io_errors,
        },
        done.record,
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
/// point whose file exists and belongs to this plan's point is skipped. `pre` preconditions
/// the points' drives of a plan with `[precondition]` ([`run_point`]). `on_done` is told of
/// each point as it ends.
pub fn run_plan(
    plan: &Plan,
    points: &[u64],
    outdir: &Path,
    threads: usize,
    resume: bool,
    pre: &dyn Preconditioner,
    on_done: &(dyn Fn(u64, &str) + Sync),
) -> Result<RunSummary, SweepError> {
    check_points(plan, points.iter().copied(), pre)?;
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
                run_point(plan, index, pre).and_then(|doc| write_atomically(&out, &doc))
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
