//! Statistics collection during a run ([`JobStats`], in `collect`) and its results
//! ([`JobResult`], [`RunResult`], [`GroupStats`]), following fio's `thread_stat` and
//! `group_run_stats`.

mod collect;

pub use collect::JobStats;
pub(crate) use collect::DEFAULT_SIG_FIGS;

use crate::histogram::{normalize_percentile_list, Histogram};
use crate::logs::JobLogs;
use crate::stats::{IoStat, Summary};
use crate::{JobStatsConfig, Unified, DDIR_READ, DDIR_TRIM, DDIR_WRITE};

/// fio's default `bw_avg_time` and `iops_avg_time`: one bandwidth/IOPS sample per 500 ms.
pub const DEFAULT_AVG_TIME_MS: u64 = 500;

/// Per data direction (fio's per-`ddir` arrays of `thread_stat`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DirStats {
    pub slat: IoStat,
    pub clat: IoStat,
    pub lat: IoStat,
    /// KiB/s per sample window.
    pub bw: IoStat,
    /// I/Os per second per sample window.
    pub iops: IoStat,
    pub clat_hist: Histogram,
    /// Total and submission latency histograms, kept only for `lat_percentiles` and
    /// `slat_percentiles` (15 KiB each).
    pub lat_hist: Option<Histogram>,
    pub slat_hist: Option<Histogram>,
    pub io_bytes: u64,
    pub total_ios: u64,
    pub short_ios: u64,
    pub drop_ios: u64,
    pub runtime_ms: u64,
}

impl DirStats {
    pub(crate) fn new() -> Self {
        Self {
            slat: IoStat::new(),
            clat: IoStat::new(),
            lat: IoStat::new(),
            bw: IoStat::new(),
            iops: IoStat::new(),
            clat_hist: Histogram::new(),
            lat_hist: None,
            slat_hist: None,
            io_bytes: 0,
            total_ios: 0,
            short_ios: 0,
            drop_ios: 0,
            runtime_ms: 0,
        }
    }

    fn reset(&mut self) {
        self.slat = IoStat::new();
        self.clat = IoStat::new();
        self.lat = IoStat::new();
        self.bw = IoStat::new();
        self.iops = IoStat::new();
        self.clat_hist.clear();
        for h in [&mut self.lat_hist, &mut self.slat_hist]
            .into_iter()
            .flatten()
        {
            h.clear();
        }
        self.io_bytes = 0;
        self.total_ios = 0;
        self.short_ios = 0;
        self.drop_ios = 0;
        self.runtime_ms = 0;
    }

    /// fio's `bw_bytes`: bytes per second over the direction's runtime.
    pub(crate) fn bw_bytes_per_s(&self) -> u64 {
        if self.runtime_ms == 0 {
            return 0;
        }
        ((1000u128 * self.io_bytes as u128) / self.runtime_ms as u128) as u64
    }

    /// fio's `iops`: I/Os per second over the direction's runtime.
    pub(crate) fn iops(&self) -> f64 {
        if self.runtime_ms == 0 {
            return 0.0;
        }
        1000.0 * self.total_ios as f64 / self.runtime_ms as f64
    }

    fn merge(&mut self, o: &DirStats) {
        self.clat.merge(&o.clat, false);
        self.slat.merge(&o.slat, false);
        self.lat.merge(&o.lat, false);
        self.bw.merge(&o.bw, true);
        self.iops.merge(&o.iops, true);
        self.clat_hist.merge(&o.clat_hist);
        for (h, oh) in [
            (&mut self.lat_hist, &o.lat_hist),
            (&mut self.slat_hist, &o.slat_hist),
        ] {
            match (h.as_mut(), oh) {
                (Some(h), Some(oh)) => h.merge(oh),
                (None, Some(oh)) => *h = Some(oh.clone()),
                _ => {}
            }
        }
        self.io_bytes += o.io_bytes;
        self.total_ios += o.total_ios;
        self.short_ios += o.short_ios;
        self.drop_ios += o.drop_ios;
        self.runtime_ms = self.runtime_ms.max(o.runtime_ms);
    }
}

/// A finished job (or a group_reporting merge of clones).
#[derive(Debug, Clone)]
pub struct JobResult {
    pub(crate) jobname: String,
    pub(crate) groupid: u32,
    pub(crate) job_index: u32,
    pub(crate) members: u32,
    pub(crate) error: i32,
    pub(crate) job_options: Vec<(String, String)>,
    pub(crate) percentile_list: Vec<f64>,
    /// Decimals of the normal output's percentile labels.
    pub(crate) percentile_precision: u32,
    /// fio's `description=` (empty: none), cut as fio cuts it.
    pub(crate) description: String,
    /// Which latencies report percentiles (fio's `clat_percentiles`, `lat_percentiles`,
    /// `slat_percentiles`).
    pub(crate) percentiles: crate::PercentileKinds,
    pub(crate) dirs: [DirStats; 3],
    pub(crate) sync: IoStat,
    pub(crate) sync_hist: Histogram,
    pub(crate) sync_total: u64,
    pub(crate) usr_time_ms: u64,
    pub(crate) sys_time_ms: u64,
    pub(crate) ctx: u64,
    pub(crate) majf: u64,
    pub(crate) minf: u64,
    /// I/O depth at issue: 1, 2, 4, 8, 16, 32, >=64.
    pub(crate) io_u_map: [u64; 7],
    pub(crate) io_u_submit: [u64; 7],
    pub(crate) io_u_complete: [u64; 7],
    pub(crate) total_submit: u64,
    pub(crate) total_complete: u64,
    /// Completion latency distribution, fio's `io_u_lat_n/u/m` buckets.
    pub(crate) lat_n: [u64; 10],
    pub(crate) lat_u: [u64; 10],
    pub(crate) lat_m: [u64; 12],
    pub(crate) total_run_time_ms: u64,
    pub(crate) latency_depth: u32,
    /// fio's `significant_figures`: digits of the normal output's IOPS, bandwidth and sizes.
    pub(crate) sig_figs: usize,
    /// fio's `unit_base=1`: the normal output's bandwidths in bits.
    pub(crate) unit_bits: bool,
    pub(crate) latency_target: u64,
    pub(crate) latency_percentile: f64,
    pub(crate) latency_window: u64,
    pub(crate) end_ns: u64,
    pub(crate) logs: Vec<JobLogs>,
    /// fio's steady-state detection, when the job asked for it.
    pub(crate) steadystate: Option<SteadyStateReport>,
    /// fio's `unified_rw_reporting` (of the first member of a reporting group).
    pub(crate) unified: Unified,
    /// Every direction folded as fio's `sum_thread_stats` folds them for `unified_rw_reporting`
    /// (latencies pooled, bandwidth and IOPS samples added, the longest runtime), member by
    /// member and direction by direction in fio's order; `None` when not unified, and after
    /// [`Self::settle_unified`] has moved a `mixed` fold into the read slot.
    pub(crate) mixed: Option<DirStats>,
    /// fio's `nr_zone_resets` of a `zonemode=zbd` job that writes or trims (None: fio does
    /// not count them).
    pub(crate) zone_resets: Option<u64>,
}

/// What fio reports of a job's steady-state detection (its JSON `"steadystate"` object and
/// the normal output's `steadystate` line).
#[derive(Debug, Clone, PartialEq)]
pub struct SteadyStateReport {
    /// The criterion as fio names it (`iops:20.000000%`).
    pub ss: String,
    /// Samples in the window (seconds).
    pub duration_s: u32,
    pub attained: bool,
    /// The criterion judged against the limit (a percentage of the mean when `percent`).
    pub criterion: f64,
    pub percent: bool,
    /// The window's IOPS were judged rather than its bandwidth.
    pub iops_metric: bool,
    /// The criterion is the window's slope rather than its largest deviation.
    pub slope_metric: bool,
    /// Largest distance of a sample from the window's mean (deviation criteria; else 0).
    pub max_deviation: f64,
    /// Least-squares slope of the window per sample (slope criteria; else 0).
    pub slope: f64,
    /// The window's samples, oldest first, zeros where it never filled.
    pub iops: Vec<u64>,
    pub bw_bytes_per_s: Vec<u64>,
}

impl SteadyStateReport {
    /// Mean of the window's samples, as fio takes it (integer division over the window).
    pub fn iops_mean(&self) -> u64 {
        mean_u64(&self.iops)
    }
    pub fn bw_mean(&self) -> u64 {
        mean_u64(&self.bw_bytes_per_s)
    }
}

/// fio keeps a job's description in a 256-byte buffer (`FIO_JOBDESC_SIZE`): 255 bytes
/// and the terminating NUL. Cut at a character boundary so the text stays valid UTF-8.
const FIO_JOBDESC_MAX: usize = 255;

pub(crate) fn fio_description(text: &str) -> String {
    let mut end = text.len().min(FIO_JOBDESC_MAX);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

fn mean_u64(v: &[u64]) -> u64 {
    if v.is_empty() {
        0
    } else {
        v.iter().sum::<u64>() / v.len() as u64
    }
}

impl JobResult {
    /// fio's `usr_cpu` / `sys_cpu`: CPU time as a percentage of the job's run time.
    pub(crate) fn cpu_percent(&self) -> (f64, f64) {
        let rt = self.total_run_time_ms;
        if rt == 0 {
            return (0.0, 0.0);
        }
        (
            self.usr_time_ms as f64 * 100.0 / rt as f64,
            self.sys_time_ms as f64 * 100.0 / rt as f64,
        )
    }

    fn empty(config: &JobStatsConfig) -> Self {
        let iodepth = config
            .job_options
            .iter()
            .rev()
            .find(|(k, _)| k == "iodepth")
            .and_then(|(_, v)| v.trim().parse::<u32>().ok())
            .unwrap_or(1);
        Self {
            jobname: config.jobname.clone(),
            groupid: config.groupid,
            job_index: config.job_index,
            members: 1,
            error: 0,
            job_options: config.job_options.clone(),
            percentile_list: normalize_percentile_list(&config.percentile_list),
            percentile_precision: config.percentile_precision,
            description: fio_description(config.description.as_deref().unwrap_or("")),
            percentiles: config.percentiles,
            dirs: [DirStats::new(), DirStats::new(), DirStats::new()],
            sync: IoStat::new(),
            sync_hist: Histogram::new(),
            sync_total: 0,
            usr_time_ms: 0,
            sys_time_ms: 0,
            ctx: 0,
            majf: 0,
            minf: 0,
            io_u_map: [0; 7],
            io_u_submit: [0; 7],
            io_u_complete: [0; 7],
            total_submit: 0,
            total_complete: 0,
            lat_n: [0; 10],
            lat_u: [0; 10],
            lat_m: [0; 12],
            total_run_time_ms: 0,
            latency_depth: iodepth,
            sig_figs: DEFAULT_SIG_FIGS,
            unit_bits: false,
            latency_target: 0,
            latency_percentile: 100.0,
            latency_window: 0,
            end_ns: 0,
            logs: Vec::new(),
            steadystate: None,
            zone_resets: None,
            unified: Unified::None,
            mixed: None,
        }
    }

    /// The directions folded in order into one (fio's `mixed` direction).
    pub(crate) fn fold_dirs(mixed: &mut DirStats, dirs: &[DirStats; 3]) {
        for d in dirs {
            mixed.merge(d);
        }
    }

    /// Under `unified_rw_reporting=mixed`, the fold takes the read slot and the other
    /// directions are empty, as in fio's `thread_stat` (every output then reads the slot
    /// as `mixed`). Once every member is merged; a second call changes nothing.
    pub(crate) fn settle_unified(&mut self) {
        if self.unified == Unified::Mixed {
            if let Some(m) = self.mixed.take() {
                self.dirs = [m, DirStats::new(), DirStats::new()];
            }
        }
    }

    /// fio's `unified_rw_reporting` of the job.
    pub fn unified(&self) -> Unified {
        self.unified
    }

    /// Fold another clone into this one (group_reporting), as fio's `sum_thread_stats`:
    /// latencies pool (min of mins, max of maxes, combined mean and deviation, summed
    /// histograms), bandwidth and IOPS samples add up, bytes and counts add up, the runtime
    /// per direction is the longest. Name, description and group stay those of `self` (the
    /// first member); the percentile settings and the JSON job options become `other`'s, as
    /// fio's `__show_run_stats` copies them from each member in turn, the last one winning.
    pub fn merge(&mut self, other: &JobResult) {
        self.percentile_list.clone_from(&other.percentile_list);
        self.percentile_precision = other.percentile_precision;
        // lat and slat stay: fio refuses a group whose members differ in them, and their
        // histograms are kept only when the first member asked for them.
        self.percentiles.clat = other.percentiles.clat;
        self.job_options.clone_from(&other.job_options);
        // The group reports as its first member asks (fio's `ts->unified_rw_rep`).
        if let Some(m) = self.mixed.as_mut() {
            Self::fold_dirs(m, &other.dirs);
        }
        for (d, o) in self.dirs.iter_mut().zip(other.dirs.iter()) {
            d.merge(o);
        }
        self.sync.merge(&other.sync, false);
        self.sync_hist.merge(&other.sync_hist);
        self.sync_total += other.sync_total;
        self.usr_time_ms += other.usr_time_ms;
        self.sys_time_ms += other.sys_time_ms;
        self.ctx += other.ctx;
        self.majf += other.majf;
        self.minf += other.minf;
        for k in 0..7 {
            self.io_u_map[k] += other.io_u_map[k];
            self.io_u_submit[k] += other.io_u_submit[k];
            self.io_u_complete[k] += other.io_u_complete[k];
        }
        add_into(&mut self.lat_n, &other.lat_n);
        add_into(&mut self.lat_u, &other.lat_u);
        add_into(&mut self.lat_m, &other.lat_m);
        self.total_submit += other.total_submit;
        self.total_complete += other.total_complete;
        self.total_run_time_ms += other.total_run_time_ms;
        self.members += other.members;
        if self.error == 0 {
            self.error = other.error;
        }
        self.end_ns = self.end_ns.max(other.end_ns);
        self.logs.extend(other.logs.iter().cloned());
        if let Some(r) = other.zone_resets {
            self.zone_resets = Some(self.zone_resets.unwrap_or(0) + r);
        }
        // A reporting group's clones share one detection: the first one's report stands.
        if self.steadystate.is_none() {
            self.steadystate = other.steadystate.clone();
        }
    }

    pub fn jobname(&self) -> &str {
        &self.jobname
    }
    pub fn groupid(&self) -> u32 {
        self.groupid
    }
    /// fio's job number of the (first) clone, used in log file names.
    pub fn job_index(&self) -> u32 {
        self.job_index
    }
    /// How many clones were merged into this result.
    pub fn members(&self) -> u32 {
        self.members
    }
    pub fn error(&self) -> i32 {
        self.error
    }
    /// fio's latency-target figures: the depth the search ended at, the target (ns), the
    /// window (us, as fio keeps it) and the percentile.
    pub fn set_latency_target(
        &mut self,
        depth: u32,
        target_ns: u64,
        window_us: u64,
        percentile: f64,
    ) {
        self.latency_depth = depth;
        self.latency_target = target_ns;
        self.latency_window = window_us;
        self.latency_percentile = percentile;
    }
    /// Attach the job's steady-state detection result.
    pub fn set_steadystate(&mut self, report: SteadyStateReport) {
        self.steadystate = Some(report);
    }
    pub fn steadystate(&self) -> Option<&SteadyStateReport> {
        self.steadystate.as_ref()
    }
    /// fio's zone reset count of a `zonemode=zbd` job.
    pub fn set_zone_resets(&mut self, resets: u64) {
        self.zone_resets = Some(resets);
    }
    pub fn zone_resets(&self) -> Option<u64> {
        self.zone_resets
    }
    /// Set fio's `error` (an errno-style code; 0 = none).
    pub fn set_error(&mut self, error: i32) {
        self.error = error;
    }
    pub fn io_bytes(&self, ddir: usize) -> u64 {
        self.dirs.get(ddir).map_or(0, |d| d.io_bytes)
    }
    pub fn total_ios(&self, ddir: usize) -> u64 {
        self.dirs.get(ddir).map_or(0, |d| d.total_ios)
    }
    /// Measured time of a direction in ms (0 if it moved no data), as fio rounds it (up).
    pub fn runtime_ms(&self, ddir: usize) -> u64 {
        self.dirs.get(ddir).map_or(0, |d| d.runtime_ms)
    }
    /// fio's `iops`: I/Os per second over the direction's runtime.
    pub fn iops(&self, ddir: usize) -> f64 {
        self.dirs.get(ddir).map_or(0.0, DirStats::iops)
    }
    /// fio's `bw_bytes`: bytes per second over the direction's runtime.
    pub fn bw_bytes_per_s(&self, ddir: usize) -> u64 {
        self.dirs.get(ddir).map_or(0, DirStats::bw_bytes_per_s)
    }
    /// Submission latency (ns); `None` without samples.
    pub fn slat_ns(&self, ddir: usize) -> Option<Summary> {
        self.dirs.get(ddir).and_then(|d| d.slat.summary())
    }
    /// Completion latency (ns).
    pub fn clat_ns(&self, ddir: usize) -> Option<Summary> {
        self.dirs.get(ddir).and_then(|d| d.clat.summary())
    }
    /// Total latency (ns).
    pub fn lat_ns(&self, ddir: usize) -> Option<Summary> {
        self.dirs.get(ddir).and_then(|d| d.lat.summary())
    }
    /// Bandwidth samples (KiB/s).
    pub fn bw_samples_kib(&self, ddir: usize) -> Option<Summary> {
        self.dirs.get(ddir).and_then(|d| d.bw.summary())
    }
    /// IOPS samples.
    pub fn iops_samples(&self, ddir: usize) -> Option<Summary> {
        self.dirs.get(ddir).and_then(|d| d.iops.summary())
    }
    /// `(percentile, clat ns)` for the job's percentile list, as fio reports them.
    pub fn clat_percentiles_ns(&self, ddir: usize) -> Vec<(f64, u64)> {
        let Some(d) = self.dirs.get(ddir) else {
            return Vec::new();
        };
        if d.clat.samples == 0 {
            return Vec::new();
        }
        let vals = d
            .clat_hist
            .percentiles(d.clat.samples, &self.percentile_list);
        self.percentile_list.iter().copied().zip(vals).collect()
    }
    /// Whether the job reports completion-latency percentiles (fio's `clat_percentiles`).
    pub fn reports_clat_percentiles(&self) -> bool {
        self.percentiles.clat
    }
    /// fio's completion-latency distribution (its `latency_ns`, `latency_us` and `latency_ms`
    /// buckets) as (upper bound in ns, share of the job's I/Os in percent), ascending; the
    /// open `>=2000` ms bucket has no bound and is left out.
    pub fn latency_distribution(&self) -> Vec<(f64, f64)> {
        let total_ios: u64 = self.dirs.iter().map(|d| d.total_ios).sum();
        let mut out = Vec::with_capacity(3 * (crate::dist::LAT_RANGES.len() - 1));
        let mut add = |shares: &[f64], scale_ns: f64| {
            for (bound, share) in crate::dist::LAT_RANGES.iter().zip(shares) {
                if let Ok(bound) = bound.parse::<f64>() {
                    out.push((bound * scale_ns, *share));
                }
            }
        };
        add(&crate::dist::calc_lat(&self.lat_n, total_ios), 1.0);
        add(&crate::dist::calc_lat(&self.lat_u, total_ios), 1e3);
        add(&crate::dist::calc_lat(&self.lat_m, total_ios), 1e6);
        out
    }
    /// Log entries not kept because a per-I/O log hit its memory bound.
    pub fn log_entries_dropped(&self) -> u64 {
        self.logs
            .iter()
            .map(|l| {
                l.series.iter().map(|s| s.dropped).sum::<u64>()
                    + l.hist.as_ref().map_or(0, |h| h.dropped)
            })
            .sum()
    }
    /// Simulated time at which the (last) job ended.
    pub fn end_ns(&self) -> u64 {
        self.end_ns
    }
    /// fio's `latency_depth`: the job's iodepth (fio prints the latency target block only
    /// when it is non-zero).
    pub fn set_latency_depth(&mut self, depth: u32) {
        self.latency_depth = depth;
    }
}

fn add_into<const N: usize>(a: &mut [u64; N], b: &[u64; N]) {
    for (x, y) in a.iter_mut().zip(b.iter()) {
        *x += *y;
    }
}

/// One reporting group's totals per direction (fio's `group_run_stats`), for the
/// "Run status group" lines and `bw_agg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupStats {
    pub groupid: u32,
    pub min_run_ms: [u64; 3],
    pub max_run_ms: [u64; 3],
    /// Bytes per second of the slowest and fastest job.
    pub min_bw_bytes_per_s: [u64; 3],
    pub max_bw_bytes_per_s: [u64; 3],
    pub io_bytes: [u64; 3],
    /// The group's aggregate bandwidth: all its bytes over the longest runtime.
    pub agg_bytes_per_s: [u64; 3],
    /// `significant_figures` and `unit_base=1` of the group's last job (fio's
    /// `__show_run_stats` takes them from each job of the group in turn).
    pub sig_figs: usize,
    pub unit_bits: bool,
    /// The group's jobs' `unified_rw_reporting` codes (none 0, mixed 1, both 2) or-ed
    /// together, as fio 3.33 combines them: the group lines read `MIXED` when it is 1 and
    /// gain a `MIXED` line when it is 2 (a group mixing both and mixed gets neither).
    pub unified_bits: u32,
}

impl GroupStats {
    fn new(groupid: u32) -> Self {
        Self {
            groupid,
            min_run_ms: [0; 3],
            max_run_ms: [0; 3],
            min_bw_bytes_per_s: [u64::MAX; 3],
            max_bw_bytes_per_s: [0; 3],
            io_bytes: [0; 3],
            agg_bytes_per_s: [0; 3],
            sig_figs: DEFAULT_SIG_FIGS,
            unit_bits: false,
            unified_bits: 0,
        }
    }
}

/// A whole run.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub global_options: Vec<(String, String)>,
    pub jobs: Vec<JobResult>,
    /// The device's counters and anything flashlab adds (the `"flashlab"` JSON object).
    pub flashlab: serde_json::Value,
    /// Shown as `"fio version"`.
    pub fio_version: String,
    /// Wall-clock time of the report, seconds since the Unix epoch. 0 by default so that
    /// the same seed gives byte-identical output; set it for real timestamps.
    pub timestamp_s: u64,
    /// The same in ms (`timestamp_ms`).
    pub timestamp_ms: u64,
    /// fio's `elapsed` (whole seconds since the run started, rounded up).
    pub elapsed_s: u64,
    /// The jobs' `write_iolog` logs, written beside the other log files.
    pub iologs: Vec<crate::iolog::IoLog>,
}

impl RunResult {
    /// A result with deterministic defaults: timestamps 0, `elapsed_s` from the jobs' end
    /// times (simulated time starts at 0).
    pub fn new(
        global_options: Vec<(String, String)>,
        jobs: Vec<JobResult>,
        flashlab: serde_json::Value,
    ) -> Self {
        let end_ns = jobs.iter().map(|j| j.end_ns).max().unwrap_or(0);
        let mut jobs = jobs;
        jobs.iter_mut().for_each(JobResult::settle_unified);
        Self {
            global_options,
            jobs,
            flashlab,
            fio_version: "fio-3.33".to_string(),
            timestamp_s: 0,
            timestamp_ms: 0,
            elapsed_s: end_ns.div_ceil(1_000_000_000),
            iologs: Vec::new(),
        }
    }

    /// Set the report time (ms since the Unix epoch).
    pub fn with_timestamp_ms(mut self, timestamp_ms: u64) -> Self {
        self.timestamp_ms = timestamp_ms;
        self.timestamp_s = timestamp_ms / 1000;
        self
    }

    /// Per-group totals for groups 0 to the highest group id (fio prints every group id
    /// up to the last, even one without jobs).
    pub fn group_stats(&self) -> Vec<GroupStats> {
        let max_gid = self.jobs.iter().map(|j| j.groupid).max();
        let Some(max_gid) = max_gid else {
            return Vec::new();
        };
        let mut groups: Vec<GroupStats> = (0..=max_gid).map(GroupStats::new).collect();
        for j in &self.jobs {
            let g = &mut groups[j.groupid as usize];
            g.sig_figs = j.sig_figs;
            g.unit_bits = j.unit_bits;
            g.unified_bits |= j.unified.code();
            for ddir in [DDIR_READ, DDIR_WRITE, DDIR_TRIM] {
                let d = &j.dirs[ddir];
                if d.runtime_ms == 0 {
                    continue;
                }
                if g.min_run_ms[ddir] == 0 || d.runtime_ms < g.min_run_ms[ddir] {
                    g.min_run_ms[ddir] = d.runtime_ms;
                }
                g.max_run_ms[ddir] = g.max_run_ms[ddir].max(d.runtime_ms);
                let bw = j.bw_bytes_per_s(ddir);
                g.min_bw_bytes_per_s[ddir] = g.min_bw_bytes_per_s[ddir].min(bw);
                g.max_bw_bytes_per_s[ddir] = g.max_bw_bytes_per_s[ddir].max(bw);
                g.io_bytes[ddir] += d.io_bytes;
            }
        }
        for g in groups.iter_mut() {
            for ddir in 0..3 {
                if g.max_run_ms[ddir] > 0 {
                    g.agg_bytes_per_s[ddir] =
                        ((g.io_bytes[ddir] as u128 * 1000) / g.max_run_ms[ddir] as u128) as u64;
                }
            }
        }
        groups
    }
}

/// fio's `bw_agg` / `per=`: a job's mean bandwidth (truncated to whole KiB/s, as fio passes
/// it as an int) as a percentage of its group's aggregate, at most 100.
pub(crate) fn percent_of_agg(mean_kib: f64, agg_bytes_per_s: u64) -> f64 {
    if agg_bytes_per_s <= 1024 {
        return 100.0;
    }
    let p = (mean_kib as i64) as f64 * 100.0 / (agg_bytes_per_s as f64 / 1024.0);
    p.min(100.0)
}
