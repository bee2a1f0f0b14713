//! A session on real storage: the same records, wall-clock time.

use super::*;

/// Steps on real storage (`crate::real`): the same records, wall-clock time.
impl Session<'_> {
    /// An idle step or a purge the target took `took_ns` of wall-clock time for.
    pub fn real_step_done(&mut self, step: &str, kind: StepKind, took_ns: u64) {
        self.now_ns = self.now_ns.saturating_add(took_ns);
        self.record(step, kind, None, None, Vec::new(), None);
    }

    /// A job fio ran on the target from `start`, as the step's record.
    pub fn real_job_done(
        &mut self,
        step: &str,
        text: &str,
        start: std::time::Instant,
        outcome: Result<(RunResult, String), RealError>,
        measure: &dyn Fn(&RunResult) -> Vec<Measure>,
    ) -> Result<RunResult, SuiteError> {
        let (mut run, json) = outcome.map_err(|error| SuiteError::Real {
            device: self.device.clone(),
            step: step.to_string(),
            error: Box::new(error),
        })?;
        self.now_ns = self.now_ns.saturating_add(crate::real::elapsed_ns(start));
        if let serde_json::Value::Object(extra) = &mut run.flashlab {
            extra.insert("real_target".into(), self.device.clone().into());
            extra.insert("suite_step".into(), step.into());
        }
        if self.record_steps {
            let m = measure(&run);
            // The job text fio ran is parsed as a simulated step's is, for its figures.
            let file = self.plan_job(step, text).ok().map(|(file, _)| file);
            let spec = file.as_ref().and_then(|f| f.jobs.first());
            let figures = spec.and_then(|spec| JobFigures::of(spec, &run));
            self.record(
                step,
                StepKind::Job,
                Some(text.to_string()),
                Some(json),
                m,
                figures,
            );
        }
        Ok(run)
    }
}
