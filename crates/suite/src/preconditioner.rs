//! The `precondition` suite as a [`Preconditioner`]: what a sweep plan's `[precondition]`
//! runs on each point's drive, through the precondition cache.

use flashlab_host::{Device, PreconditionError, Preconditioned, Preconditioner};
use serde_json::{json, Value};

use flashlab_kit::{DeviceReport, DeviceRun, On, SuiteDevice, SuiteError, SuiteTarget};
use flashlab_kit::{StateCache, SuiteKind, SuiteOptions};

use crate::registry::{self, options_from_pairs};

/// The suite whose preconditioning a [`SuitePreconditioner`] runs.
const PRECONDITION_SUITE: &str = "precondition";

/// Preconditions a device as `flashlab suite precondition` does, with the options of that
/// suite; a drive preconditioned before with the same device, keys, seed and options (by a
/// suite or another sweep point) is loaded from `cache` instead.
#[derive(Debug, Clone, Default)]
pub struct SuitePreconditioner {
    pub cache: Option<StateCache>,
}

fn failed(e: SuiteError) -> PreconditionError {
    PreconditionError {
        bad_input: e.is_bad_input(),
        message: e.to_string(),
    }
}

fn bad_input(message: String) -> PreconditionError {
    PreconditionError {
        bad_input: true,
        message,
    }
}

impl Preconditioner for SuitePreconditioner {
    fn check(&self, options: &[(String, String)]) -> Result<(), String> {
        options_from_pairs(PRECONDITION_SUITE, options)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// Records the suite, the options as written, the round steady state was reached in,
    /// the rounds run, the suite's results, the end time and the device's counters when it
    /// ended (a run after it measures its own write amplification from them).
    fn precondition(
        &self,
        device: &mut Device,
        name: &str,
        overrides: &[(String, String)],
        seed: u64,
        options: &[(String, String)],
    ) -> Result<Preconditioned, PreconditionError> {
        let (kind, mut suite_options) =
            options_from_pairs(PRECONDITION_SUITE, options).map_err(failed)?;
        suite_options.seed = seed;
        suite_options.state_cache = self.cache.clone();
        let target = if flashlab_system::is_system(name) {
            SuiteTarget::System(
                flashlab_system::load_system_config(name).map_err(|e| bad_input(e.to_string()))?,
            )
        } else {
            SuiteTarget::Drive(Box::new(
                flashlab_device::load_device_config(name, overrides)
                    .map_err(|e| bad_input(e.to_string()))?,
            ))
        };
        // The seed the device was built with, as a suite's own fresh device has it: the
        // cache's key.
        let device_seed = flashlab_engine::SeedTree::new(seed)
            .child("device")
            .master_seed();
        let device_name = device.name().to_string();
        let dev: &mut dyn SuiteDevice = match device {
            Device::Drive(ssd) => &mut **ssd,
            Device::System(system) => &mut **system,
        };
        let fresh = (&target, device_seed);
        let (report, end_ns) = run_on(kind, dev, &device_name, fresh, &suite_options)?;
        let (counters_key, counters) = device.counters_json();
        let results: serde_json::Map<String, Value> = report
            .results
            .iter()
            .map(|m| (m.key(), json!(m.value)))
            .collect();
        let written: serde_json::Map<String, Value> = options
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let record = json!({
            "suite": kind.name(),
            "options": written,
            "steady_round": report.steady.as_ref().and_then(|s| s.verdict.round),
            "rounds": report.steady.as_ref().map(|s| s.rounds_iops.len()),
            "results": results,
            "end_ns": end_ns,
            counters_key: counters,
        });
        Ok(Preconditioned { end_ns, record })
    }
}

/// The suite on the sweep point's device, just built from `target` with `device_seed`,
/// silently: its one device's report and end time.
fn run_on(
    kind: SuiteKind,
    dev: &mut dyn SuiteDevice,
    name: &str,
    (target, device_seed): (&SuiteTarget, u64),
    options: &SuiteOptions,
) -> Result<(DeviceReport, u64), PreconditionError> {
    let run = DeviceRun::starting_at(0).fresh(target, device_seed);
    let on = On::Device { dev, name, run };
    let ran = registry::run(kind, on, options, &|_, _| {}).map_err(failed)?;
    let report = ran
        .report
        .devices
        .into_iter()
        .next()
        .ok_or_else(|| PreconditionError {
            bad_input: false,
            message: format!("suite {} reported no device", kind.name()),
        })?;
    Ok((report, ran.end_ns))
}
