//! One device's run of a suite: steps in sequence on one drive, simulated time continuing.
//!
//! `run_jobs` starts its clock at 0 on every call, while the drive's clocks keep the time
//! of the previous step. [`Shifted`] adds the time already spent to every submission (and
//! takes it off every completion), so each step starts when the previous one ended.

use flashlab_device::Ssd;
use flashlab_engine::{BlockDevice, Completion, DeviceError, IoRequest, SeedTree, SimTime};
use flashlab_report::{render_json, RunResult};
use flashlab_runner::{RunOptions, SliceScale};

use crate::{Measure, StepRecord, SuiteError};

/// A drive seen from a run that starts at 0 while the drive is already at `offset_ns`.
struct Shifted<'a> {
    ssd: &'a mut Ssd,
    offset_ns: SimTime,
    /// Latest drive time seen: submissions, completions, idle periods.
    horizon_ns: SimTime,
}

impl BlockDevice for Shifted<'_> {
    fn capacity_bytes(&self) -> u64 {
        self.ssd.capacity_bytes()
    }
    fn logical_block_bytes(&self) -> u64 {
        self.ssd.logical_block_bytes()
    }
    fn queue_depth_limit(&self) -> u32 {
        self.ssd.queue_depth_limit()
    }
    fn submit(&mut self, now_ns: SimTime, req: &IoRequest) -> Result<Completion, DeviceError> {
        let at = now_ns + self.offset_ns;
        let c = self.ssd.submit(at, req)?;
        self.horizon_ns = self.horizon_ns.max(at).max(c.done_ns);
        // A device never answers before the submission, so these do not underflow.
        Ok(Completion {
            accepted_ns: c.accepted_ns - self.offset_ns,
            done_ns: c.done_ns - self.offset_ns,
        })
    }
    fn idle(&mut self, from_ns: SimTime, until_ns: SimTime) {
        let until = until_ns + self.offset_ns;
        self.ssd.idle(from_ns + self.offset_ns, until);
        self.horizon_ns = self.horizon_ns.max(until);
    }
}

pub(crate) struct Session<'a> {
    ssd: &'a mut Ssd,
    device: String,
    seeds: SeedTree,
    scale: SliceScale,
    /// Drive time at which the next step starts.
    now_ns: SimTime,
    pub steps: Vec<StepRecord>,
    progress: &'a mut dyn FnMut(&str),
}

impl<'a> Session<'a> {
    pub fn new(
        ssd: &'a mut Ssd,
        device: &str,
        seed: u64,
        progress: &'a mut dyn FnMut(&str),
    ) -> Self {
        let info = ssd.scale();
        Self {
            ssd,
            device: device.to_string(),
            seeds: SeedTree::new(seed).child("suite"),
            scale: SliceScale::new(info.capacity_factor, info.die_factor),
            now_ns: 0,
            steps: Vec::new(),
            progress,
        }
    }

    pub fn scale(&self) -> SliceScale {
        self.scale
    }

    /// User bytes of the whole drive (not of the slice simulated).
    pub fn full_capacity_bytes(&self) -> u64 {
        (self.ssd.capacity_bytes() as f64 * self.scale.capacity_factor).round() as u64
    }

    /// Secure erase: every block erased, nothing mapped. The next step starts once the drive
    /// accepts commands again.
    pub fn purge(&mut self, step: &str) -> Result<(), SuiteError> {
        (self.progress)(step);
        self.ssd.format(self.now_ns);
        // The drive takes no command before the erase is done, so the completion of a flush
        // submitted now tells when that is.
        let c = self
            .ssd
            .submit(self.now_ns, &IoRequest::flush())
            .map_err(|error| SuiteError::Refused {
                device: self.device.clone(),
                step: step.to_string(),
                error,
            })?;
        self.now_ns = self.now_ns.max(c.done_ns);
        self.steps.push(StepRecord {
            name: step.to_string(),
            job_text: None,
            fio_json: None,
            end_ns: self.now_ns,
            measures: Vec::new(),
        });
        Ok(())
    }

    /// The host sends nothing for `duration_ns`: the drive runs its background work (buffer
    /// flush, SLC-cache folding, GC) as it would between two benchmark tests.
    pub fn idle(&mut self, step: &str, duration_ns: u64) {
        (self.progress)(step);
        let until = self.now_ns + duration_ns;
        self.ssd.idle(self.now_ns, until);
        self.now_ns = until;
        self.steps.push(StepRecord {
            name: step.to_string(),
            job_text: None,
            fio_json: None,
            end_ns: self.now_ns,
            measures: Vec::new(),
        });
    }

    /// Run one fio job file (text) as the next step; `measure` picks the step's figures.
    pub fn job(
        &mut self,
        step: &str,
        text: &str,
        measure: &dyn Fn(&RunResult) -> Vec<Measure>,
    ) -> Result<RunResult, SuiteError> {
        (self.progress)(step);
        let file_name = format!("{step}.fio");
        let file = flashlab_workload::parse_str(text, &file_name, &|_| None).map_err(|error| {
            SuiteError::Job {
                device: self.device.clone(),
                step: step.to_string(),
                error: Box::new(error),
            }
        })?;
        // Every step draws fresh random offsets: the same seed in every round would rewrite
        // the same sequence of blocks.
        let seed = self.seeds.child(step).master_seed();
        let options = RunOptions::new(seed, self.device.clone()).with_scale(self.scale);
        let mut dev = Shifted {
            ssd: &mut *self.ssd,
            offset_ns: self.now_ns,
            horizon_ns: self.now_ns,
        };
        let result = flashlab_runner::run_jobs(&file, &mut dev, &options, &mut |_| {});
        let horizon_ns = dev.horizon_ns;
        let mut run = result.map_err(|error| SuiteError::Run {
            device: self.device.clone(),
            step: step.to_string(),
            error: Box::new(error),
        })?;
        self.now_ns = horizon_ns;
        if let serde_json::Value::Object(extra) = &mut run.flashlab {
            extra.insert("device_counters".into(), self.ssd.counters_json());
            extra.insert("suite_step".into(), step.into());
            extra.insert("suite_step_end_ns".into(), self.now_ns.into());
        }
        self.steps.push(StepRecord {
            name: step.to_string(),
            job_text: Some(text.to_string()),
            fio_json: Some(render_json(&run, false)),
            end_ns: self.now_ns,
            measures: measure(&run),
        });
        Ok(run)
    }
}
