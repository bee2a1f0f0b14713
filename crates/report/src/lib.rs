//! Results and their renderings. The runner records completions into [`JobStats`]; finished
//! jobs become [`JobResult`]s inside a [`RunResult`]; reporters render a `RunResult` as fio's
//! normal text, JSON or json+, and write fio's log files. The model never sees any of this.
//!
//! API CONTRACT (stub; the implementation fills in the bodies and may add items).

use std::path::Path;

/// Data directions, fio's order.
pub const DDIR_READ: usize = 0;
pub const DDIR_WRITE: usize = 1;
pub const DDIR_TRIM: usize = 2;

/// fio's default `percentile_list`.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// Which logs a job writes (fio's write_*_log options).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogConfig {
    pub bw_prefix: Option<String>,
    pub lat_prefix: Option<String>,
    pub iops_prefix: Option<String>,
    /// 0 = one line per I/O.
    pub log_avg_msec: u64,
}

/// What a job's statistics need to know up front.
#[derive(Debug, Clone, PartialEq)]
pub struct JobStatsConfig {
    pub jobname: String,
    pub groupid: u32,
    /// fio numbers every job (clones included) from 1 in file order; log files end `.N.log`.
    pub job_index: u32,
    pub job_options: Vec<(String, String)>,
    pub percentile_list: Vec<f64>,
    pub logs: LogConfig,
}

/// Statistics of one running job (one clone).
pub struct JobStats {
    _private: (),
}

impl JobStats {
    pub fn new(_config: JobStatsConfig) -> Self {
        todo!()
    }

    /// One I/O finished. `issue_ns`: the job issued it; `accepted_ns`: the device accepted it
    /// (slat = accepted - issue); `done_ns`: completion (clat = done - accepted,
    /// lat = done - issue). Times are absolute simulated ns; `start_ns` of the measured
    /// interval is set by [`JobStats::start_measuring`].
    pub fn record(&mut self, _ddir: usize, _issue_ns: u64, _accepted_ns: u64, _done_ns: u64, _bytes: u64, _offset: u64) {
        todo!()
    }

    /// Start (or restart, after ramp_time) the measured interval at `at_ns`; earlier records
    /// are discarded.
    pub fn start_measuring(&mut self, _at_ns: u64) {
        todo!()
    }

    /// The job ended at `end_ns`.
    pub fn finish(self, _end_ns: u64) -> JobResult {
        todo!()
    }
}

/// A finished job (or a group_reporting merge of clones).
#[derive(Debug, Clone)]
pub struct JobResult {
    _private: (),
}

impl JobResult {
    /// Fold another clone into this one (group_reporting).
    pub fn merge(&mut self, _other: &JobResult) {
        todo!()
    }
}

/// A whole run.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub global_options: Vec<(String, String)>,
    pub jobs: Vec<JobResult>,
    /// The device's counters and anything flashlab adds (the `"flashlab"` JSON object).
    pub flashlab: serde_json::Value,
}

/// fio's `--output-format=json` (`plus = false`) or `json+` (`plus = true`).
pub fn render_json(_run: &RunResult, _plus: bool) -> String {
    todo!()
}

/// fio's normal text output.
pub fn render_normal(_run: &RunResult) -> String {
    todo!()
}

/// Write the bw/lat/iops log files of every job under `dir`.
pub fn write_logs(_run: &RunResult, _dir: &Path) -> std::io::Result<()> {
    todo!()
}
