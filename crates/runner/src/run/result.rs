//! A run's result: each clone's measurements scaled back to the full drive, fio's group
//! reporting, and the `flashlab` object (seed, device, rate targets, I/O errors, scale).

use super::*;

impl<T: Targets + ?Sized> Runner<'_, '_, T> {
    /// Each clone's end on the full drive's clock: phases follow one another, each lasting
    /// its longest clone's scaled time.
    fn full_end_ns(&self) -> Vec<SimTime> {
        let mut ends = vec![0; self.clones.len()];
        let mut phase_full_start_ns: SimTime = 0;
        for (p, &(lo, hi)) in self.phases.iter().enumerate() {
            let start_ns = self.phase_start_ns[p];
            let mut phase_end_ns = phase_full_start_ns;
            for (i, c) in self.clones[lo..hi].iter().enumerate() {
                let back = self.plan.jobs[c.spec_index].back;
                let span_ns = c.window.end_ns.saturating_sub(start_ns) as f64 * back.time_factor;
                ends[lo + i] = phase_full_start_ns + span_ns.round() as SimTime;
                phase_end_ns = phase_end_ns.max(ends[lo + i]);
            }
            phase_full_start_ns = phase_end_ns;
        }
        ends
    }

    /// The run's result, or [`RunError::Io`] (holding it) when jobs stopped at I/O errors.
    pub(super) fn into_checked_result(self) -> Result<RunResult, RunError> {
        let errors: Vec<JobIoError> = self
            .clones
            .iter()
            .filter_map(|c| c.io_error.clone())
            .collect();
        let result = self.into_result();
        if errors.is_empty() {
            Ok(result)
        } else {
            Err(RunError::Io {
                errors,
                result: Box::new(result),
            })
        }
    }

    /// What the drive wrote in each phase (the jobs between stonewalls, which run
    /// together and share the drive): the host's bytes, the media's and their ratio, so a
    /// job after a fill has a write amplification of its own. None when the device does
    /// not count its writes or a phase did not run.
    fn phase_writes_json(&self) -> Option<Value> {
        let phases = self.phases.len();
        let mut out = Vec::with_capacity(phases);
        for p in 0..phases {
            let start = self.phase_writes[p]?;
            let end = self.phase_writes[p + 1]?;
            let w = end.since(start);
            out.push(json!({
                "jobs": self.phase_names[p],
                "host_write_bytes": w.host_bytes,
                "nand_write_bytes": w.nand_bytes,
                "write_amplification": w.write_amplification(),
            }));
        }
        Some(Value::Array(out))
    }

    pub(super) fn into_result(self) -> RunResult {
        let full_end_ns = self.full_end_ns();
        let phase_writes = self.phase_writes_json();
        let io_errors: Vec<Value> = self
            .clones
            .iter()
            .filter_map(|c| c.io_error.as_ref())
            .map(JobIoError::to_json)
            .collect();
        let mut jobs: Vec<JobResult> = Vec::with_capacity(self.clones.len());
        // fio's group_reporting: a job joins the previous result when both report as a group
        // and share the group id.
        let mut last_group: Option<u32> = None;
        let mut rate_report = Vec::new();
        let mut iologs = Vec::new();
        let mut untimed = Vec::new();
        for (mut c, end_ns) in self.clones.into_iter().zip(full_end_ns) {
            let mut result = c.result.take().expect("every clone finished");
            if let Some(done) = c.untimed {
                // Nothing was timed to measure: the job is listed with what it wrote, on
                // the full drive's scale.
                let count = self.plan.jobs[c.spec_index].back.count_factor;
                untimed.push(json!({
                    "jobname": c.spec.id.name,
                    "job_index": c.job_index,
                    "ios": (done.ios as f64 * count).round() as u64,
                    "bytes": (done.bytes as f64 * count).round() as u64,
                    "end_ns": end_ns,
                }));
                continue;
            }
            iologs.extend(c.iolog.take());
            if let Some(t) = c.steady {
                result.set_steadystate(self.trackers[t as usize].report());
            }
            let job_scale = &self.plan.jobs[c.spec_index];
            // Clones are scaled one by one: group_reporting adds their rates up afterwards.
            let measured_ns = c.window.end_ns.saturating_sub(c.window.measure_start_ns);
            result.scale_back(&job_scale.back, measured_ns, end_ns);
            // fio's stats=0: the job runs but is left out of the results.
            if c.spec.report.stats {
                let merge = c.spec.report.group_reporting && last_group == Some(c.groupid);
                match jobs.last_mut() {
                    Some(last) if merge => last.merge(&result),
                    _ => jobs.push(result),
                }
                last_group = c.spec.report.group_reporting.then_some(c.groupid);
            }
            if c.rate.active {
                rate_report.push(rate_json(&c, job_scale.back.rate_factor()));
            }
        }
        let mut flashlab = serde_json::Map::new();
        flashlab.insert("seed".into(), json!(self.options.seed));
        flashlab.insert("device".into(), json!(self.options.device_name));
        flashlab.insert("job_file".into(), json!(self.file.path));
        if !rate_report.is_empty() {
            flashlab.insert("rate".into(), Value::Array(rate_report));
        }
        if !io_errors.is_empty() {
            flashlab.insert("io_errors".into(), Value::Array(io_errors));
        }
        if !self.plan.scale.is_full() {
            flashlab.insert("scale".into(), self.plan.json());
        }
        if !untimed.is_empty() {
            flashlab.insert("untimed_jobs".into(), Value::Array(untimed));
        }
        if let Some(phases) = phase_writes {
            flashlab.insert("phase_writes".into(), phases);
        }
        let dropped: u64 = iologs.iter().map(|l: &IoLog| l.dropped).sum();
        if dropped > 0 {
            flashlab.insert("iolog_ios_dropped".into(), json!(dropped));
        }
        let mut result = RunResult::new(
            self.file.global_options.clone(),
            jobs,
            Value::Object(flashlab),
        );
        result.iologs = iologs;
        result
    }
}

/// Target against achieved rate of one clone, per limited direction. On a slice, `rate_factor`
/// turns the slice's targets and rates back into the full drive's.
fn rate_json(c: &JobClone, rate_factor: f64) -> Value {
    let runtime_ns = c.window.end_ns.saturating_sub(c.window.measure_start_ns);
    let mut dirs = serde_json::Map::new();
    let issues = c.spec.io.rw.directions();
    for (ddir, name) in DDIR_NAMES.iter().enumerate() {
        // fio applies a single `rate=` value to every direction; report the ones used.
        if !c.rate.limited(ddir) || !issues[ddir] {
            continue;
        }
        let secs = runtime_ns as f64 / NS_PER_S as f64;
        let (bw, iops) = if secs > 0.0 {
            (
                c.measured_bytes[ddir] as f64 / secs,
                c.measured_ios[ddir] as f64 / secs,
            )
        } else {
            (0.0, 0.0)
        };
        // Met when within 1% of every limit given (fio paces to the limit, not above it).
        let met_bw = c.rate.bytes_per_s[ddir] == 0 || bw >= 0.99 * c.rate.bytes_per_s[ddir] as f64;
        let met_iops = c.rate.iops[ddir] == 0 || iops >= 0.99 * c.rate.iops[ddir] as f64;
        let (bw, iops) = (bw * rate_factor, iops * rate_factor);
        dirs.insert(
            (*name).into(),
            json!({
                "target_bytes_per_s": full_rate(c.rate.bytes_per_s[ddir], rate_factor),
                "target_iops": full_rate(c.rate.iops[ddir], rate_factor),
                "achieved_bytes_per_s": bw.round() as u64,
                "achieved_iops": (iops * 1000.0).round() / 1000.0,
                "met": met_bw && met_iops,
            }),
        );
    }
    json!({
        "jobname": c.spec.id.name,
        "job_index": c.job_index,
        "process": match c.rate.process { RateProcess::Linear => "linear", RateProcess::Poisson => "poisson" },
        "late_ios": c.rate.late_ios,
        "max_lag_ns": c.rate.max_lag_ns,
        "directions": Value::Object(dirs),
    })
}

/// A slice's rate target as the full drive's (the job file's own value when it divides).
fn full_rate(slice_rate: u64, rate_factor: f64) -> u64 {
    (slice_rate as f64 * rate_factor).round() as u64
}
