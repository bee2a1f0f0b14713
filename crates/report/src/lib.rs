//! Results and their renderings. The runner records completions into [`JobStats`]; finished
//! jobs become [`JobResult`]s inside a [`RunResult`]; reporters render a `RunResult` as fio's
//! normal text, JSON or json+, and write fio's log files. The model never sees any of this.
//!
//! Everything follows fio 3.33 so that tools reading fio output read ours: the latency
//! histogram and its percentiles ([`histogram`]), running statistics and their merging
//! ([`stats`]), the JSON schema, key order and number formats ([`render_json`]), the text
//! report ([`render_normal`]) and the log files ([`write_logs`]).
//!
//! Where fio's numbers depend on wall-clock sampling (bandwidth and IOPS samples every
//! 500 ms, log windows), samples are taken at exact simulated window boundaries.

pub mod chart;
mod dist;
mod fdp;
mod fio_json;
pub mod hist_log;
pub mod histogram;
pub mod html;
pub mod iolog;
mod json;
mod log_file;
pub mod logs;
mod made;
mod normal;
#[cfg(feature = "png")]
mod png;
mod result;
mod run_html;
mod scale;
pub mod stats;
mod terse;

#[cfg(test)]
mod tests;

use std::path::Path;

use logs::{LogKind, LogSeries};

pub use fdp::render_fdp;
pub use fio_json::{parse_fio_json, FioJsonError};
pub use json::{as_reported, json_value, render_json};
pub use made::{utc_date_time, Made};
pub use normal::{num2str, render_normal};
#[cfg(feature = "png")]
pub use png::{svg_to_png, PNG_SCALE};
pub use result::{
    GroupStats, JobResult, JobStats, RunResult, SteadyStateReport, DEFAULT_AVG_TIME_MS,
};
pub use run_html::{render_run_figures_svg, render_run_html, RunContext};
pub use scale::ScaleBack;
pub use terse::render_terse;

/// Data directions, fio's order.
/// fio's `unified_rw_reporting`: how a job's directions are reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Unified {
    /// Each direction apart (fio's default).
    #[default]
    None,
    /// Every direction folded into one `mixed` direction, in place of read, write and trim.
    Mixed,
    /// Each direction apart, and the `mixed` fold after them.
    Both,
}

impl Unified {
    /// fio's `UNIFIED_*` value (a group ors its jobs' values together).
    pub(crate) fn code(self) -> u32 {
        match self {
            Unified::None => 0,
            Unified::Mixed => 1,
            Unified::Both => 2,
        }
    }
}

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
    /// fio's `write_lat_log` writes three files: `_lat`, `_clat` and `_slat`.
    pub lat_prefix: Option<String>,
    pub iops_prefix: Option<String>,
    /// 0 = one line per I/O.
    pub log_avg_msec: u64,
    /// fio's `write_hist_log`: a completion-latency histogram log with this prefix.
    pub hist_prefix: Option<String>,
    /// `log_hist_msec`: the histogram log's window (0: one line per I/O).
    pub log_hist_msec: u64,
    /// `log_hist_coarseness`: bins summed in groups of `2^coarseness`.
    pub log_hist_coarseness: u8,
    /// fio's `bwavgtime` / `iopsavgtime`: the window of the bandwidth and IOPS samples
    /// behind their min/max/mean/stddev (None: fio's 500 ms; a bw or iops log sets its own).
    pub bw_avg_ms: Option<u64>,
    pub iops_avg_ms: Option<u64>,
    /// fio's `log_offset`: log lines carry the I/O's offset.
    pub log_offset: bool,
    /// fio's `log_max_value`: averaged windows log their largest sample (every log fio
    /// averages: bw, iops, lat, clat, slat; not the histogram log).
    pub log_max_value: bool,
    /// fio's `per_job_logs=0`: the jobs share log files named without the job number.
    pub shared_logs: bool,
}

/// What a job does not measure: fio's `disable_lat`, `disable_clat`, `disable_slat` and
/// `disable_bw_measurement` (`gtod_reduce` sets all four). Bandwidth and IOPS samples taken
/// per window are kept either way, as in fio 3.33; only per-I/O ones (a bw or iops log
/// with `log_avg_msec=0`) stop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Disabled {
    pub lat: bool,
    pub clat: bool,
    pub slat: bool,
    pub bw: bool,
}

impl Disabled {
    /// fio's `gtod_reduce()` test: completion, submission and bandwidth all off (per-I/O
    /// IOPS samples stop too).
    pub fn reduced(self) -> bool {
        self.clat && self.slat && self.bw
    }
}

/// Which latencies a job reports percentiles of (fio's `clat_percentiles`, on by default,
/// `lat_percentiles` and `slat_percentiles`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PercentileKinds {
    pub clat: bool,
    pub lat: bool,
    pub slat: bool,
}

impl Default for PercentileKinds {
    fn default() -> Self {
        PercentileKinds {
            clat: true,
            lat: false,
            slat: false,
        }
    }
}

/// What a job's statistics need to know up front.
#[derive(Debug, Clone, PartialEq)]
pub struct JobStatsConfig {
    pub jobname: String,
    pub groupid: u32,
    /// fio numbers every job (clones included) from 1 in file order; log files end `.N.log`.
    pub job_index: u32,
    pub job_options: Vec<(String, String)>,
    /// Empty: fio's default list. Sorted, cut at 20 entries or at a 0, as fio does.
    pub percentile_list: Vec<f64>,
    /// Decimals of the normal output's percentile labels (fio's `percentile_precision`,
    /// from the digits written in `percentile_list`; 2 for the default list).
    pub percentile_precision: u32,
    pub percentiles: PercentileKinds,
    pub logs: LogConfig,
    /// fio's `description=`, printed by every output format when set.
    pub description: Option<String>,
}

/// Write the bw/lat/iops log files of every job under `dir` (a clone merged by
/// group_reporting still writes its own files, numbered by its own job index; with
/// `per_job_logs=0` the jobs share one file per prefix and kind, in job order), and the jobs'
/// iologs.
pub fn write_logs(run: &RunResult, dir: &Path) -> std::io::Result<()> {
    for f in log_files(run) {
        log_file::write_file(dir, &f.name, &f.text)?;
    }
    Ok(())
}

/// One log file a run writes: the job option that asked for it, its name (a path relative
/// to where the logs go) and its contents.
#[derive(Debug, Clone, PartialEq)]
pub struct LogFile {
    pub option: &'static str,
    pub name: String,
    pub text: String,
}

/// The option that writes a log of `kind`.
fn log_option(kind: LogKind) -> &'static str {
    match kind {
        LogKind::Bw => "write_bw_log",
        LogKind::Iops => "write_iops_log",
        LogKind::Lat | LogKind::Clat | LogKind::Slat => "write_lat_log",
    }
}

/// Every log file of the run, in the order [`write_logs`] writes them: each job's own
/// files, then the shared ones (`per_job_logs=0`, the jobs' parts in job order), then the
/// iologs.
pub fn log_files(run: &RunResult) -> Vec<LogFile> {
    let mut files = Vec::new();
    let mut shared: Vec<LogFile> = Vec::new();
    let mut add_shared =
        |option, name: String, text: String| match shared.iter_mut().find(|f| f.name == name) {
            Some(f) => f.text.push_str(&text),
            None => shared.push(LogFile { option, name, text }),
        };
    for job in &run.jobs {
        for logs in &job.logs {
            for series in &logs.series {
                let option = log_option(series.kind);
                if logs.shared {
                    add_shared(option, series.shared_file_name(), series.render());
                } else {
                    let name = series.file_name(logs.job_index);
                    files.push(LogFile {
                        option,
                        name,
                        text: series.render(),
                    });
                }
            }
            if let Some(h) = &logs.hist {
                if logs.shared {
                    add_shared("write_hist_log", h.shared_file_name(), h.render());
                } else {
                    let name = h.file_name(logs.job_index);
                    files.push(LogFile {
                        option: "write_hist_log",
                        name,
                        text: h.render(),
                    });
                }
            }
        }
    }
    files.extend(shared);
    for l in &run.iologs {
        files.push(LogFile {
            option: "write_iolog",
            name: l.path.clone(),
            text: l.render(),
        });
    }
    files
}

/// The log files a job writes, named as [`log_files`] names them, for its clone of job
/// number `job_index` (fio numbers every clone from 1 in file order): known before the
/// run, so each can be checked before any work.
pub fn log_file_names(logs: &LogConfig, job_index: u32) -> Vec<(&'static str, String)> {
    let mut names = Vec::new();
    let kinds = [
        (LogKind::Bw, &logs.bw_prefix),
        (LogKind::Lat, &logs.lat_prefix),
        (LogKind::Clat, &logs.lat_prefix),
        (LogKind::Slat, &logs.lat_prefix),
        (LogKind::Iops, &logs.iops_prefix),
    ];
    for (kind, prefix) in kinds {
        if let Some(p) = prefix {
            let series = LogSeries::new(kind, p, 0);
            let name = if logs.shared_logs {
                series.shared_file_name()
            } else {
                series.file_name(job_index)
            };
            names.push((log_option(kind), name));
        }
    }
    if let Some(p) = &logs.hist_prefix {
        let h = crate::hist_log::HistLog::new(p, 0, 0);
        let name = if logs.shared_logs {
            h.shared_file_name()
        } else {
            h.file_name(job_index)
        };
        names.push(("write_hist_log", name));
    }
    names
}
