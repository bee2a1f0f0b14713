//! Preconditioning steps at the speed of the mapping: host writes given to a simulated
//! drive's FTL with the timing model off (`Ssd::untimed`), where the state they leave does
//! not depend on timing. The measured steps that follow run timed.

use super::*;
use flashlab_device::Untimed;
use flashlab_engine::IoKind;
use flashlab_workload::IoGenerator;

impl Session<'_> {
    /// Whether preconditioning steps whose state does not depend on timing run without it
    /// here: on a simulated drive (not a system, not real storage) whose state after host
    /// writes is its FTL's alone ([`Ssd::untimed_refusal`]), unless the options ask for the
    /// timed path (`--timed-precondition`). A suite's checkpoint recipe says which path it
    /// took, so the precondition cache keeps the two apart.
    pub fn untimed_allowed(&mut self) -> bool {
        if self.opts.timed_precondition {
            return false;
        }
        match &mut self.drive {
            Drive::Sim(dev) => dev
                .as_ssd_mut()
                .is_some_and(|ssd| ssd.untimed_refusal().is_none()),
            Drive::Real(_) | Drive::Described(_) => false,
        }
    }

    /// The next job's writes go on with those of the untimed step just run (the timed part
    /// of a split round or interval): the drive keeps its write buffer's full depth for
    /// them however short they are (`Ssd::continue_writes`), as the writes they go on with
    /// left it full.
    pub fn continue_writes(&mut self) {
        if let Drive::Sim(dev) = &mut self.drive {
            if let Some(ssd) = dev.as_ssd_mut() {
                ssd.continue_writes();
            }
        }
    }

    /// Run `body` as the next step on the drive with its timing model off; the drive's
    /// clock moves on to where [`Untimed::finish`] sets it. The step is recorded as a driven
    /// step: its JSON (fio's schema, no jobs: nothing was timed to measure) carries the
    /// drive's counters at its end. Call only where [`Self::untimed_allowed`].
    pub fn untimed_step(
        &mut self,
        step: &str,
        what: &str,
        body: impl FnOnce(&mut Untimed<'_>) -> Result<(), DeviceError>,
    ) -> Result<(), SuiteError> {
        let chain = self.cache.take();
        self.announce(step);
        let refused = |error| SuiteError::Refused {
            device: self.device.clone(),
            step: step.to_string(),
            error,
        };
        let ssd = match &mut self.drive {
            Drive::Sim(dev) => dev.as_ssd_mut(),
            Drive::Real(_) | Drive::Described(_) => None,
        };
        let Some(ssd) = ssd else {
            return Err(self.no_device(step));
        };
        let mut run = match ssd.untimed(self.now_ns) {
            Ok(run) => run,
            Err(why) => {
                return Err(SuiteError::Argument(format!(
                    "device '{}', step '{step}': cannot run without timing: {why}",
                    self.device
                )))
            }
        };
        body(&mut run).map_err(refused)?;
        self.now_ns = run.finish();
        let json = serde_json::json!({
            "fio version": "flashlab untimed step",
            "jobs": [],
            "flashlab": {
                "suite_step": step,
                "suite_step_untimed": what,
                "suite_step_end_ns": self.now_ns,
                "device_counters": self.counters_json(),
            },
        });
        let text = serde_json::to_string_pretty(&json).unwrap_or_default();
        self.record(step, StepKind::Driven, None, Some(text), Vec::new(), None);
        self.cache = chain.map(|c| c.then(&format!("untimed '{step}': {what}")));
        Ok(())
    }

    /// Run job step `step` (`text`: one job of one clone whose I/Os do not depend on time,
    /// as a fill's) with the timing model off: every write and trim its generator gives, in
    /// the order the job would issue them, so the FTL sees what the timed job gives it
    /// (where a pass wraps, how long its last write is). The generator is the runner's, from
    /// the seed the runner would give the job. Call only where [`Self::untimed_allowed`].
    /// Returns the bytes it wrote as the run would report them: on a slice, scaled back to
    /// the drive described.
    pub fn untimed_job(&mut self, step: &str, what: &str, text: &str) -> Result<u64, SuiteError> {
        let (file, options) = self.plan_job(step, text)?;
        let invalid = |why: String| {
            SuiteError::Argument(format!(
                "device '{}', step '{step}': cannot run without timing: {why}",
                self.device
            ))
        };
        // On a slice, the job's sizes as the timed run would scale them; a slice the run
        // would refuse (a die cut) is refused as the run's, so that the suite moves to the
        // slice that keeps its figures.
        let file =
            flashlab_runner::sliced_file(&file, &options).map_err(|error| SuiteError::Run {
                device: self.device.clone(),
                step: step.to_string(),
                error: Box::new(error),
            })?;
        let [spec] = file.jobs.as_slice() else {
            return Err(invalid(format!("{} jobs, not one", file.jobs.len())));
        };
        if spec.control.numjobs > 1 || spec.time.time_based {
            return Err(invalid("a timed or cloned job".into()));
        }
        if spec.io.rw.directions()[0] {
            return Err(invalid(
                "a job that reads: its reads are measured, never untimed".into(),
            ));
        }
        let (capacity_bytes, block_bytes) = match &self.drive {
            Drive::Sim(dev) => (dev.capacity_bytes(), dev.logical_block_bytes()),
            Drive::Real(_) | Drive::Described(_) => return Err(self.no_device(step)),
        };
        // The runner's seeds for the file's first job (job numbers count from 1).
        let seeds = flashlab_engine::SeedTree::new(options.seed)
            .child("job")
            .index(1);
        let mut generator = IoGenerator::new(spec, 0, capacity_bytes, block_bytes, seeds)
            .map_err(|e| invalid(e.to_string()))?;
        let mut written_bytes = 0u64;
        self.untimed_step(step, what, |u| {
            // Reads were refused above; a flush has nothing for the FTL (the drive's
            // writes are all carried out).
            u.run(&mut || {
                let io = generator.next_io()?;
                if io.kind == IoKind::Write {
                    written_bytes += io.len_bytes;
                }
                Some((io.kind, io.offset_bytes, io.len_bytes))
            })
            .map_err(|refused| refused.error)
        })?;
        // As the run's results come back from a slice (`flashlab_report::ScaleBack`):
        // bytes times the capacity factor.
        Ok((written_bytes as f64 * options.scale.capacity_factor).round() as u64)
    }
}
