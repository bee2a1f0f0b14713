//! A plan directory on disk: the plan written into it, read back from its manifest, and a
//! simulated run's outputs written beside it. Each file goes through the rule of every
//! file flashlab writes (`flashlab_engine::output`); a file already there that flashlab
//! would write differently is refused, never replaced.

use std::path::Path;

use flashlab_engine::output::{check_dir, OutputFile};

use crate::plan::{Plan, FORMAT, MANIFEST};
use crate::simrun::Outputs;
use crate::FitError;

/// Largest manifest read.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;

fn write_new(dir: &Path, name: &str, text: &str, what: &str) -> Result<(), FitError> {
    let path = dir.join(name);
    if path.exists() {
        let same = std::fs::read(&path)
            .map(|b| b == text.as_bytes())
            .unwrap_or(false);
        if same {
            return Ok(());
        }
        return Err(FitError::bad(
            path.display(),
            format!("already there and not the {what} flashlab would write; name a new --outdir or remove it"),
        ));
    }
    let file =
        OutputFile::check("--outdir", &path).map_err(|e| FitError::bad(path.display(), e))?;
    file.write_bytes(text.as_bytes())
        .map_err(|e| FitError::failed(format!("{}: {e}", path.display())))
}

/// Writes `plan`'s job files and manifest into `dir` (made when absent). Files of the same
/// plan already there are kept.
pub fn write_plan(dir: &Path, plan: &Plan) -> Result<(), FitError> {
    check_dir("--outdir", dir).map_err(|e| FitError::bad("--outdir", e))?;
    for job in &plan.jobs {
        write_new(dir, &job.file, &job.text, "plan's job file")?;
    }
    write_new(dir, MANIFEST, &plan.manifest_json(), "plan's manifest")
}

/// The plan of `dir`, from its manifest: the plan for the manifest's capacity, whose jobs
/// must be the manifest's.
pub fn read_plan(dir: &Path) -> Result<Plan, FitError> {
    let path = dir.join(MANIFEST);
    if !path.exists() {
        return Err(FitError::bad(
            path.display(),
            "missing: expected the manifest `flashlab fit plan --outdir DIR` writes",
        ));
    }
    let text = flashlab_engine::input::read_text(&path, MAX_MANIFEST_BYTES, "a plan manifest")
        .map_err(|e| FitError::bad(path.display(), e))?;
    let shown: Plan = serde_json::from_str(&text).map_err(|e| {
        FitError::bad(
            format!("{}:{}", path.display(), e.line()),
            format!("not a plan manifest: {e}"),
        )
    })?;
    if shown.format != FORMAT {
        return Err(FitError::bad(
            path.display(),
            format!("format {:?}: expected {FORMAT:?}", shown.format),
        ));
    }
    let plan = Plan::new(shown.capacity_bytes).map_err(|e| FitError::bad(path.display(), e))?;
    let names = |p: &Plan| p.jobs.iter().map(|j| j.name.clone()).collect::<Vec<_>>();
    if names(&shown) != names(&plan) {
        return Err(FitError::bad(
            path.display(),
            format!(
                "jobs {:?}: expected this flashlab's plan, jobs {:?}",
                names(&shown),
                names(&plan)
            ),
        ));
    }
    Ok(plan)
}

/// Refuses a run into `dir` that would replace outputs already there.
pub fn check_outputs_absent(dir: &Path, plan: &Plan) -> Result<(), FitError> {
    for job in &plan.jobs {
        for name in &job.outputs {
            let path = dir.join(name);
            if path.exists() {
                return Err(FitError::bad(
                    path.display(),
                    "an output of the plan is already there; run into a new --outdir (a plan's outputs are written once)",
                ));
            }
        }
    }
    Ok(())
}

/// Writes a simulated run's outputs into `dir`.
pub fn write_outputs(dir: &Path, outputs: &Outputs) -> Result<(), FitError> {
    for (name, text) in outputs {
        write_new(dir, name, text, "output")?;
    }
    Ok(())
}

/// Every file of a plan directory a fit reads: its manifest and the outputs.
pub fn inputs(dir: &Path, plan: &Plan) -> Vec<std::path::PathBuf> {
    let mut all = vec![dir.join(MANIFEST)];
    for job in &plan.jobs {
        all.extend(job.outputs.iter().map(|o| dir.join(o)));
    }
    all
}
