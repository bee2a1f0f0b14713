//! `flashlab fit FILE --output PRESET`: a drive fitted to published figures (a TOML set of
//! a review's or a data sheet's figures, each with its source, plan job and condition);
//! see docs/fit.md, "Fits from published figures".

use std::path::Path;

use anyhow::anyhow;
use flashlab_fit::{published, FitError, FitOptions};

use crate::{bad_input, failure, run_failed, Failure};

fn fit_failure(e: FitError) -> Failure {
    failure(e.bad_input, anyhow!(e.message))
}

/// Fits the published set `set_path` and writes the preset to `output`.
pub fn cmd_fit_published(
    set_path: &Path,
    output: &Path,
    report: Option<&Path>,
    options: &FitOptions,
) -> Result<(), Failure> {
    if report.is_some() {
        return Err(bad_input(anyhow!(
            "--report: a fit of published figures has no plan outputs to chart; its terminal summary gives each figure against the fitted drive's"
        )));
    }
    let mut files = crate::state_files::Files::new();
    files.input("published set", Some(set_path))?;
    let checked = files.output("--output", output)?;
    let set = published::read_published(set_path).map_err(fit_failure)?;
    let (fitted, whole) = published::fit_published(&set, options).map_err(fit_failure)?;
    let name = output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "fitted".into());
    let preset = published::preset_toml(&set, &fitted, &whole, &name);
    checked.write_bytes(preset.as_bytes()).map_err(run_failed)?;
    print!("{}", published::render_text(&set, &fitted, &whole));
    println!("Wrote {}", output.display());
    Ok(())
}
