//! A workload run on a simulated device: the one path `flashlab run`, `flashlab fio`,
//! `flashlab replay`, sweeps and the Python package share.
//!
//! A [`Device`] is a drive or a storage system, built fresh or loaded from a state file, at
//! the device time its next run starts. [`run_jobs`] runs a job file on it (a drive split
//! into namespaces lets each job's `filename=` pick one), [`replay_trace`] replays a block
//! trace; both continue the device's clock ([`flashlab_engine::Continued`]), add the
//! device's counters to the result's `"flashlab"` object, and keep a run that jobs stopped
//! at I/O errors (a drive gone read-only) as fio does: the result is written, then the run
//! fails ([`Outcome::io_errors`]).

mod precondition;

use std::io::BufRead;

use flashlab_device::{DriveTargets, Ssd};
use flashlab_engine::{BlockDevice, Continued, SeedTree, SimTime, StateError};
use flashlab_report::RunResult;
use flashlab_runner::{
    Progress, ReplayError, ReplayOptions, RunError, RunOptions, SliceScale, Targets,
};
use flashlab_system::System;
use flashlab_workload::trace::TraceReader;
use flashlab_workload::JobFile;

pub use precondition::{PreconditionError, Preconditioned, Preconditioner};

/// What a run goes to: one drive, or a storage system (RAID sets, cache tiers, links).
pub enum Device {
    Drive(Box<Ssd>),
    System(Box<System>),
}

/// Why a device could not be built from its name (bad input: the name, a key or a value).
#[derive(Debug)]
pub struct BuildError(pub String);

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BuildError {}

impl Device {
    /// The drive or system preset or file `name` (with device keys `overrides`, which only a
    /// single drive takes), built fresh with `seed`'s device stream; with its resolved
    /// configuration as JSON (a system: its name).
    pub fn build(
        name: &str,
        overrides: &[(String, String)],
        seed: u64,
    ) -> Result<(Device, serde_json::Value), BuildError> {
        let bad = |e: &dyn std::fmt::Display| BuildError(e.to_string());
        let seeds = SeedTree::new(seed);
        if flashlab_system::is_system(name) {
            if !overrides.is_empty() {
                return Err(BuildError(
                    "device keys (set.*) apply to a single drive; a system's drives carry their overrides in its file".into(),
                ));
            }
            let config = flashlab_system::load_system_config(name).map_err(|e| bad(&e))?;
            let system = System::build(&config, seeds.child("device")).map_err(|e| bad(&e))?;
            let described = serde_json::json!({ "system": config.name });
            return Ok((Device::System(Box::new(system)), described));
        }
        let config = flashlab_device::load_device_config(name, overrides).map_err(|e| match e {
            flashlab_device::ConfigError::UnknownDevice { name, .. } => {
                BuildError(flashlab_system::unknown_device_message(&name))
            }
            e => bad(&e),
        })?;
        let ssd = Ssd::new(&config, seeds.child("device")).map_err(|e| bad(&e))?;
        let described = serde_json::to_value(&config).unwrap_or(serde_json::Value::Null);
        Ok((Device::Drive(Box::new(ssd)), described))
    }

    /// The device's name, as the result's job options show it.
    pub fn name(&self) -> &str {
        match self {
            Device::Drive(ssd) => ssd.name(),
            Device::System(system) => system.name(),
        }
    }

    /// How the simulated device stands for the whole one: a drive too large to simulate
    /// whole runs as a slice, whose jobs the runner shrinks and whose results it scales back;
    /// a system runs whole.
    pub fn slice_scale(&self) -> SliceScale {
        match self {
            Device::Drive(ssd) => {
                let info = ssd.scale();
                SliceScale::of_drive(info.capacity_factor, info.die_factor, info.die_cut_allowed)
            }
            Device::System(_) => SliceScale::FULL,
        }
    }

    /// The run options of a job file on this device with `seed`.
    pub fn run_options(&self, seed: u64) -> RunOptions {
        let options = RunOptions::new(seed, self.name());
        match self {
            Device::Drive(_) => options.with_scale(self.slice_scale()),
            Device::System(_) => options,
        }
    }

    /// The device's counters as the `"flashlab"` object shows them, under their key.
    pub fn counters_json(&self) -> (&'static str, serde_json::Value) {
        match self {
            Device::Drive(ssd) => ("device_counters", ssd.counters_json()),
            Device::System(system) => ("system_counters", system.counters_json()),
        }
    }

    /// Writes the device's state (`docs/state.md`), its next run to start at `clock_ns`.
    pub fn save_state(
        &self,
        out: impl std::io::Write,
        clock_ns: SimTime,
    ) -> Result<u64, StateError> {
        match self {
            Device::Drive(ssd) => ssd.save_state(out, clock_ns),
            Device::System(system) => system.save_state(out, clock_ns),
        }
    }
}

/// A run that finished, or that jobs stopped at I/O errors.
pub struct Outcome {
    /// fio's result, the device's counters in its `"flashlab"` object.
    pub result: RunResult,
    /// The I/O errors that stopped jobs, one a line: the result stands, the run failed.
    pub io_errors: Option<String>,
    /// Latest device time the run reached: where the device's next run starts.
    pub horizon_ns: SimTime,
}

/// Runs `file` on `device`, which is at device time `clock_ns`. On a drive split into
/// namespaces, fio's `filename=` picks a job's namespace; elsewhere every job addresses the
/// whole device. Errors other than jobs stopped at I/O errors come back as they are.
pub fn run_jobs(
    device: &mut Device,
    clock_ns: SimTime,
    file: &JobFile,
    options: &RunOptions,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Outcome, RunError> {
    // The runner compresses a slice's time by its time factor (docs/scale.md): the write
    // buffer holds its capacity share (`Ssd::keep_drive_time`), for `run`, `fio`, sweeps
    // and the Python package alike.
    if let Device::Drive(ssd) = device {
        ssd.keep_drive_time(false);
    }
    let ran = match device {
        Device::Drive(ssd) if ssd.namespace_count() > 1 => run_on_targets(
            &mut DriveTargets::new(ssd),
            clock_ns,
            file,
            options,
            progress,
        ),
        Device::Drive(ssd) => run_on(&mut **ssd, clock_ns, file, options, progress),
        Device::System(system) => run_on(&mut **system, clock_ns, file, options, progress),
    };
    let (result, horizon_ns) = (ran.result, ran.horizon_ns);
    let (result, io_errors) = split_io_errors(result)?;
    Ok(finish(device, result, io_errors, horizon_ns))
}

/// A job file's run on a device continued from device time `clock_ns`, as the runner ended
/// it: jobs that I/O errors stopped are its `Err(RunError::Io)`, the result inside.
pub struct Ran {
    pub result: Result<RunResult, RunError>,
    /// Latest device time the device reached: where its next run starts.
    pub horizon_ns: SimTime,
    /// The run's own clock at its last progress report, from the run's start. It can pass
    /// the device's last completion (the host's completion path comes after it).
    pub run_end_ns: SimTime,
}

/// Runs `file` on `device` (every job addresses the whole device) from device time
/// `clock_ns`. With [`run_on_targets`], the one way a job file runs on a simulated device:
/// [`run_jobs`] (and so `run`, `fio`, sweeps and Python) and the suites' steps come here.
pub fn run_on<D>(
    device: D,
    clock_ns: SimTime,
    file: &JobFile,
    options: &RunOptions,
    progress: &mut dyn FnMut(&Progress),
) -> Ran
where
    D: std::ops::DerefMut,
    D::Target: BlockDevice,
{
    let mut continued = Continued::new(device, clock_ns);
    let mut run_end_ns = 0;
    let result = flashlab_runner::run_jobs(file, &mut continued, options, &mut |p| {
        run_end_ns = run_end_ns.max(p.now_ns);
        progress(p);
    });
    Ran {
        result,
        horizon_ns: continued.horizon_ns(),
        run_end_ns,
    }
}

/// [`run_on`] on a device of several targets (a drive's namespaces): fio's `filename=`
/// picks a job's target.
pub fn run_on_targets<T>(
    targets: T,
    clock_ns: SimTime,
    file: &JobFile,
    options: &RunOptions,
    progress: &mut dyn FnMut(&Progress),
) -> Ran
where
    T: std::ops::DerefMut,
    T::Target: Targets,
{
    let mut continued = Continued::new(targets, clock_ns);
    let mut run_end_ns = 0;
    let result = flashlab_runner::run_targets(file, &mut continued, options, &mut |p| {
        run_end_ns = run_end_ns.max(p.now_ns);
        progress(p);
    });
    Ran {
        result,
        horizon_ns: continued.horizon_ns(),
        run_end_ns,
    }
}

/// Replays the block trace `reader` reads on `device`, which is at device time `clock_ns`,
/// as [`run_jobs`] runs a job file (the whole device, whatever its namespaces).
pub fn replay_trace<R: BufRead>(
    device: &mut Device,
    clock_ns: SimTime,
    reader: &mut TraceReader<R>,
    options: &ReplayOptions,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Outcome, ReplayError> {
    let (result, horizon_ns) = match device {
        Device::Drive(ssd) => {
            // A replay on a slice keeps the drive's time per die (arrivals stretched, or the
            // depth divided, by the die factor; never compressed by the capacity factor):
            // the write buffer keeps the dies' share, by the rule `run_jobs` follows for
            // compressed time.
            ssd.keep_drive_time(true);
            let mut drive = Continued::new(&mut **ssd, clock_ns);
            let r = flashlab_runner::replay_trace(reader, &mut drive, options, progress);
            (r, drive.horizon_ns())
        }
        Device::System(system) => {
            let mut continued = Continued::new(&mut **system, clock_ns);
            let r = flashlab_runner::replay_trace(reader, &mut continued, options, progress);
            (r, continued.horizon_ns())
        }
    };
    let (result, io_errors) = match result {
        Err(ReplayError::Run(e)) => split_io_errors(Err(e)).map_err(ReplayError::Run)?,
        other => (other?, None),
    };
    Ok(finish(device, result, io_errors, horizon_ns))
}

/// A run's result, with the I/O errors that stopped its jobs (the result kept, as fio
/// prints its results before it exits non-zero); any other error as it is.
fn split_io_errors(
    result: Result<RunResult, RunError>,
) -> Result<(RunResult, Option<String>), RunError> {
    match result {
        Ok(run) => Ok((run, None)),
        Err(RunError::Io { errors, result }) => {
            let text = errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n");
            Ok((*result, Some(text)))
        }
        Err(e) => Err(e),
    }
}

fn finish(
    device: &Device,
    mut result: RunResult,
    io_errors: Option<String>,
    horizon_ns: SimTime,
) -> Outcome {
    if let serde_json::Value::Object(extra) = &mut result.flashlab {
        let (key, counters) = device.counters_json();
        extra.insert(key.into(), counters);
    }
    Outcome {
        result,
        io_errors,
        horizon_ns,
    }
}

/// What [`simulate`] gives: fio's result (the device's counters in its `"flashlab"`
/// object) and the device's resolved configuration.
pub struct Simulated {
    pub result: RunResult,
    pub device_config: serde_json::Value,
    /// Jobs stopped at I/O errors: the result is written, the run counts as failed.
    pub io_errors: Option<String>,
}

/// `flashlab run` as a library call: `file` on a fresh drive or system preset or file with
/// device keys `overrides` and `seed`, the jobs named in `untimed` run without the timing
/// model (`flashlab run --untimed`). `Err((bad_input, message))`.
pub fn simulate(
    file: &JobFile,
    device: &str,
    overrides: &[(String, String)],
    seed: u64,
    untimed: &[String],
) -> Result<Simulated, (bool, String)> {
    let (mut device, device_config) =
        Device::build(device, overrides, seed).map_err(|e| (true, e.0))?;
    let mut options = device.run_options(seed);
    options.untimed_jobs = untimed.to_vec();
    let outcome = run_jobs(&mut device, 0, file, &options, &mut |_| {})
        .map_err(|e| (e.is_bad_input(), e.to_string()))?;
    Ok(Simulated {
        result: outcome.result,
        device_config,
        io_errors: outcome.io_errors,
    })
}
