//! The plan run on a simulated drive, job after job on one drive whose clock goes on between
//! them (as a real drive's state carries from one fio run to the next), through the path
//! `flashlab run` takes (`flashlab_host::run_jobs`). Its outputs are fio's: each job's JSON
//! document and its logs, named as fio names them.

use std::collections::BTreeMap;

use flashlab_device::{DeviceConfig, Ssd};
use flashlab_engine::SeedTree;
use flashlab_host::Device;

use crate::plan::Plan;
use crate::FitError;

/// A plan run's files: name in the plan directory → contents.
pub type Outputs = BTreeMap<String, String>;

/// Runs every job of `plan` on a drive built fresh from `config` with `seed`.
pub fn run_plan(config: &DeviceConfig, plan: &Plan, seed: u64) -> Result<Outputs, FitError> {
    let ssd = Ssd::new(config, SeedTree::new(seed).child("device"))
        .map_err(|e| FitError::bad("the drive", e))?;
    let mut device = Device::Drive(Box::new(ssd));
    let mut clock_ns = 0;
    let mut outputs = Outputs::new();
    for job in &plan.jobs {
        let file = flashlab_workload::parse_str(&job.text, &job.file, &|_| None)
            .map_err(|e| FitError::failed(format!("{}: {e}", job.file)))?;
        let options = device.run_options(seed);
        let outcome = flashlab_host::run_jobs(&mut device, clock_ns, &file, &options, &mut |_| {})
            .map_err(|e| FitError::failed(format!("{}: {e}", job.file)))?;
        if let Some(errors) = outcome.io_errors {
            return Err(FitError::failed(format!("{}: {errors}", job.file)));
        }
        clock_ns = outcome.horizon_ns;
        let json = flashlab_report::render_json(&outcome.result, false);
        outputs.insert(format!("{}.json", job.name), json);
        for log in flashlab_report::log_files(&outcome.result) {
            outputs.insert(log.name, log.text);
        }
    }
    Ok(outputs)
}

/// The capacity a drive shows its host: what a plan for it is sized from.
pub fn user_bytes(config: &DeviceConfig) -> Result<u64, FitError> {
    let model = config
        .resolve()
        .map_err(|e| FitError::bad(&e.key, format!("{}: {}", e.value, e.message)))?;
    Ok(model.full_user_bytes)
}
