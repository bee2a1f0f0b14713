//! [`JobStats`]: the statistics one job clone collects while it runs (latencies, histograms,
//! bandwidth/IOPS samples, depth and call buckets, logs), finished into a [`JobResult`].

use super::{DirStats, JobResult, DEFAULT_AVG_TIME_MS};
use crate::hist_log::HistLog;
use crate::histogram::Histogram;
use crate::logs::{JobLogs, LogKind, LogSeries};
use crate::stats::{ExactStat, IoStat};
use crate::{Disabled, JobStatsConfig, Unified, DDIR_TRIM};

const NS_PER_MS: u64 = 1_000_000;

/// fio's `io_u_mark_lat_nsec/usec/msec` bucket of a value in its unit: the index of the
/// first upper bound of 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000(, 2000) above it.
#[inline]
fn lat_bucket(v: u64) -> usize {
    match v {
        0..=1 => 0,
        2..=3 => 1,
        4..=9 => 2,
        10..=19 => 3,
        20..=49 => 4,
        50..=99 => 5,
        100..=249 => 6,
        250..=499 => 7,
        500..=749 => 8,
        750..=999 => 9,
        1000..=1999 => 10,
        _ => 11,
    }
}

/// fio's depth bucket: 1, 2-3, 4-7, 8-15, 16-31, 32-63, >=64.
#[inline]
fn depth_bucket(depth: u32) -> usize {
    // The bucket is the power of two at or below the depth (0 counts as 1), capped at 64.
    ((31 - (depth | 1).leading_zeros()) as usize).min(6)
}

/// Statistics of one running job (one clone).
pub struct JobStats {
    res: JobResult,
    /// Total or submission latency histograms are kept (one test per I/O for both).
    more_hists: bool,
    /// Per direction: slat, clat and lat, summed exactly and written into `res` by
    /// [`JobStats::finish`].
    lat_sums: [[ExactStat; 3]; 3],
    start_ns: u64,
    bw_avg_ms: u64,
    iops_avg_ms: u64,
    /// A per-I/O bw/iops log turns the bw/iops statistic per-I/O too, as in fio.
    per_io_bw: bool,
    per_io_iops: bool,
    next_bw_ns: u64,
    next_iops_ns: u64,
    /// The earlier of the windowed statistics' next sample times (`u64::MAX` when both are
    /// per I/O): a completion before it has no window to close.
    next_sample_ns: u64,
    this_io_bytes: [u64; 3],
    stat_io_bytes: [u64; 3],
    this_io_blocks: [u64; 3],
    stat_io_blocks: [u64; 3],
    bw_log: Option<usize>,
    iops_log: Option<usize>,
    lat_log: Option<usize>,
    clat_log: Option<usize>,
    slat_log: Option<usize>,
    /// Whole µs each direction ran, when a job's directions run in phases of their own (a
    /// verify job's writes, then its read-back): fio's per-direction `elapsed_us`.
    phase_runtime_us: Option<[u64; 3]>,
    /// The runner reports submissions and reaps in batches (`iodepth_batch_*`): completions
    /// are not counted one call each.
    batched: bool,
    disabled: Disabled,
    /// The engine completes each I/O inside its submitting call: no submission latency is
    /// sampled, and the device's acceptance time is completion latency.
    synchronous: bool,
}

/// fio's default `significant_figures`.
pub(crate) const DEFAULT_SIG_FIGS: usize = 4;

/// fio's `__io_u_mark_map` bucket for the I/Os of one submit or reap call: 0, 1-4, 5-8,
/// 9-16, 17-32, 33-64, more.
fn call_bucket(n: u32) -> usize {
    match n {
        0 => 0,
        1..=4 => 1,
        5..=8 => 2,
        9..=16 => 3,
        17..=32 => 4,
        33..=64 => 5,
        _ => 6,
    }
}

impl JobStats {
    pub fn new(config: JobStatsConfig) -> Self {
        let mut res = JobResult::empty(&config);
        for d in res.dirs.iter_mut() {
            if config.percentiles.lat {
                d.lat_hist = Some(Histogram::new());
            }
            if config.percentiles.slat {
                d.slat_hist = Some(Histogram::new());
            }
        }
        let logs = &config.logs;
        let avg = logs.log_avg_msec;
        let mut series = Vec::new();
        let mut add = |kind: LogKind, prefix: &Option<String>| -> Option<usize> {
            prefix.as_ref().map(|p| {
                let mut l = LogSeries::new(kind, p, avg);
                l.with_offset = logs.log_offset;
                l.log_max = logs.log_max_value;
                series.push(l);
                series.len() - 1
            })
        };
        let bw_log = add(LogKind::Bw, &logs.bw_prefix);
        let lat_log = add(LogKind::Lat, &logs.lat_prefix);
        let clat_log = add(LogKind::Clat, &logs.lat_prefix);
        let slat_log = add(LogKind::Slat, &logs.lat_prefix);
        let iops_log = add(LogKind::Iops, &logs.iops_prefix);
        let hist = logs
            .hist_prefix
            .as_ref()
            .map(|p| HistLog::new(p, logs.log_hist_msec, logs.log_hist_coarseness));
        if !series.is_empty() || hist.is_some() {
            res.logs.push(JobLogs {
                job_index: config.job_index,
                series,
                hist,
                shared: logs.shared_logs,
            });
        }
        // fio: a bw (iops) log sets bw_avg_time (iops_avg_time) to log_avg_msec, so the
        // statistic and the log see the same samples; 0 means one sample per I/O.
        let bw_avg_ms = if bw_log.is_some() {
            avg
        } else {
            logs.bw_avg_ms.unwrap_or(DEFAULT_AVG_TIME_MS)
        };
        let iops_avg_ms = if iops_log.is_some() {
            avg
        } else {
            logs.iops_avg_ms.unwrap_or(DEFAULT_AVG_TIME_MS)
        };
        let mut s = Self {
            more_hists: config.percentiles.lat || config.percentiles.slat,
            res,
            lat_sums: [[ExactStat::new(); 3]; 3],
            start_ns: 0,
            bw_avg_ms,
            iops_avg_ms,
            per_io_bw: bw_avg_ms == 0,
            per_io_iops: iops_avg_ms == 0,
            next_bw_ns: 0,
            next_iops_ns: 0,
            next_sample_ns: 0,
            this_io_bytes: [0; 3],
            stat_io_bytes: [0; 3],
            this_io_blocks: [0; 3],
            stat_io_blocks: [0; 3],
            bw_log,
            iops_log,
            lat_log,
            clat_log,
            slat_log,
            phase_runtime_us: None,
            batched: false,
            disabled: Disabled::default(),
            synchronous: false,
        };
        s.start_measuring(0);
        s
    }

    /// Each direction's runtime in whole µs, for a job whose directions ran in phases of
    /// their own (fio adds up a phase's µs per direction and rounds the sum up to ms);
    /// without it every direction with bytes ran the whole measured interval.
    pub fn set_phase_runtimes_us(&mut self, runtime_us: [u64; 3]) {
        self.phase_runtime_us = Some(runtime_us);
    }

    /// The job's iodepth, reported as fio's `latency_depth` (default: the job's `iodepth`
    /// option, else 1).
    pub fn set_iodepth(&mut self, iodepth: u32) {
        self.res.latency_depth = iodepth;
    }

    fn log(&mut self, idx: Option<usize>, at: (u64, u64), value: u64, ddir: usize, bs: u64) {
        if let Some(i) = idx {
            let (elapsed_ms, offset) = at;
            self.res.logs[0].series[i].add_at(elapsed_ms, value, ddir, bs, offset);
        }
    }

    /// Close the bandwidth and IOPS sample windows that ended at or before `now_ns`. Like
    /// fio's `__add_samples`, a direction that moved nothing in a window gets no sample.
    /// The first window closed takes everything moved since the last sample, so the later
    /// ones up to `now_ns` are skipped at once (one step per window made a job with hours of
    /// thinktime, or a trace replayed slowly, spin through billions of empty windows).
    fn advance_samples(&mut self, now_ns: u64) {
        if !self.per_io_bw {
            let w_ns = self.bw_avg_ms * NS_PER_MS;
            if now_ns >= self.next_bw_ns {
                let elapsed_ms = (self.next_bw_ns - self.start_ns) / NS_PER_MS;
                for ddir in 0..3 {
                    let delta = self.this_io_bytes[ddir] - self.stat_io_bytes[ddir];
                    if delta == 0 {
                        continue;
                    }
                    let rate = delta * 1000 / self.bw_avg_ms / 1024;
                    self.res.dirs[ddir].bw.add(rate);
                    self.log(self.bw_log, (elapsed_ms, 0), rate, ddir, 0);
                    self.stat_io_bytes[ddir] = self.this_io_bytes[ddir];
                }
                let windows = (now_ns - self.next_bw_ns) / w_ns + 1;
                self.next_bw_ns = self.next_bw_ns.saturating_add(windows.saturating_mul(w_ns));
            }
        }
        if !self.per_io_iops {
            let w_ns = self.iops_avg_ms * NS_PER_MS;
            if now_ns >= self.next_iops_ns {
                let elapsed_ms = (self.next_iops_ns - self.start_ns) / NS_PER_MS;
                for ddir in 0..3 {
                    let delta = self.this_io_blocks[ddir] - self.stat_io_blocks[ddir];
                    if delta == 0 {
                        continue;
                    }
                    let rate = delta * 1000 / self.iops_avg_ms;
                    self.res.dirs[ddir].iops.add(rate);
                    self.log(self.iops_log, (elapsed_ms, 0), rate, ddir, 0);
                    self.stat_io_blocks[ddir] = self.this_io_blocks[ddir];
                }
                let windows = (now_ns - self.next_iops_ns) / w_ns + 1;
                self.next_iops_ns = self
                    .next_iops_ns
                    .saturating_add(windows.saturating_mul(w_ns));
            }
        }
        self.update_next_sample();
    }

    fn update_next_sample(&mut self) {
        let bw = if self.per_io_bw {
            u64::MAX
        } else {
            self.next_bw_ns
        };
        let iops = if self.per_io_iops {
            u64::MAX
        } else {
            self.next_iops_ns
        };
        self.next_sample_ns = bw.min(iops);
    }

    /// One I/O finished. `issue_ns`: the job issued it; `accepted_ns`: the device accepted it
    /// (slat = accepted - issue); `done_ns`: completion (clat = done - accepted,
    /// lat = done - issue). Times are absolute simulated ns; `start_ns` of the measured
    /// interval is set by [`JobStats::start_measuring`]. Call in completion order (times
    /// non-decreasing). `ddir` is [`DDIR_READ`](crate::DDIR_READ),
    /// [`DDIR_WRITE`](crate::DDIR_WRITE) or [`DDIR_TRIM`]; anything else is ignored. Flushes
    /// go to [`JobStats::record_sync`] instead.
    #[inline]
    pub fn record(
        &mut self,
        ddir: usize,
        issue_ns: u64,
        accepted_ns: u64,
        done_ns: u64,
        bytes: u64,
        offset: u64,
    ) {
        // Nearly every job collects every latency: compiled with nothing disabled, the
        // per-latency tests below fold away.
        if self.disabled == Disabled::default() && !self.synchronous {
            self.record_with::<false>(ddir, issue_ns, accepted_ns, done_ns, bytes, offset);
        } else {
            self.record_with::<true>(ddir, issue_ns, accepted_ns, done_ns, bytes, offset);
        }
    }

    /// [`JobStats::record`]; `SOME_DISABLED`: whether any latency or sample is disabled.
    #[inline(always)]
    fn record_with<const SOME_DISABLED: bool>(
        &mut self,
        ddir: usize,
        issue_ns: u64,
        accepted_ns: u64,
        done_ns: u64,
        bytes: u64,
        offset: u64,
    ) {
        if ddir > DDIR_TRIM {
            debug_assert!(false, "data direction {ddir} out of range");
            return;
        }
        if done_ns >= self.next_sample_ns {
            self.advance_samples(done_ns);
        }
        // A synchronous engine's call returns with the I/O done: fio samples no submission
        // latency (`io_u_queued` runs only for a queued I/O) and times the call as clat.
        let accepted_ns = if SOME_DISABLED && self.synchronous {
            issue_ns
        } else {
            accepted_ns
        };
        let slat = accepted_ns.saturating_sub(issue_ns);
        let clat = done_ns.saturating_sub(accepted_ns);
        let lat = done_ns.saturating_sub(issue_ns);
        // fio's account_io_completion: a disabled latency takes no sample anywhere.
        let off = if SOME_DISABLED {
            Disabled {
                slat: self.disabled.slat || self.synchronous,
                ..self.disabled
            }
        } else {
            Disabled::default()
        };
        let [s_sum, c_sum, l_sum] = &mut self.lat_sums[ddir];
        if !off.slat {
            s_sum.add(slat);
        }
        if !off.clat {
            c_sum.add(clat);
        }
        if !off.lat {
            l_sum.add(lat);
        }
        let d = &mut self.res.dirs[ddir];
        if !off.clat {
            d.clat_hist.record(clat);
        }
        if self.more_hists {
            if let Some(h) = d.lat_hist.as_mut().filter(|_| !off.lat) {
                h.record(lat);
            }
            if let Some(h) = d.slat_hist.as_mut().filter(|_| !off.slat) {
                h.record(slat);
            }
        }
        d.io_bytes += bytes;
        d.total_ios += 1;
        // fio buckets completion latency (not total latency) for latency_ns/us/ms.
        if !off.clat {
            if clat < 1_000 {
                self.res.lat_n[lat_bucket(clat)] += 1;
            } else if clat < 1_000_000 {
                self.res.lat_u[lat_bucket(clat / 1_000)] += 1;
            } else {
                self.res.lat_m[lat_bucket(clat / 1_000_000)] += 1;
            }
        }
        if !self.batched {
            // One completion reaped at a time.
            self.res.io_u_complete[1] += 1;
            self.res.total_complete += 1;
        }
        self.this_io_bytes[ddir] += bytes;
        self.this_io_blocks[ddir] += 1;

        if self.res.logs.is_empty() {
            return;
        }
        let done_ms = done_ns.saturating_sub(self.start_ns) / NS_PER_MS;
        if self.per_io_bw && !off.bw {
            // fio's add_bw_sample: bytes * 10^6 / clat_ns.
            let rate = if clat > 0 {
                (bytes as u128 * 1_000_000 / clat as u128) as u64
            } else {
                0
            };
            self.res.dirs[ddir].bw.add(rate);
            self.log(self.bw_log, (done_ms, offset), rate, ddir, bytes);
        }
        // fio's `gtod_reduce` follows the options, not the engine's missing slat.
        if self.per_io_iops && !(SOME_DISABLED && self.disabled.reduced()) {
            self.res.dirs[ddir].iops.add(1);
            self.log(self.iops_log, (done_ms, offset), 1, ddir, bytes);
        }
        if let Some(h) = self.res.logs[0].hist.as_mut().filter(|_| !off.clat) {
            h.add(done_ms, clat, ddir, bytes);
        }
        let accepted_ms = accepted_ns.saturating_sub(self.start_ns) / NS_PER_MS;
        if !off.slat {
            self.log(self.slat_log, (accepted_ms, offset), slat, ddir, bytes);
        }
        if !off.lat {
            self.log(self.lat_log, (done_ms, offset), lat, ddir, bytes);
        }
        if !off.clat {
            self.log(self.clat_log, (done_ms, offset), clat, ddir, bytes);
        }
    }

    /// The job issued an I/O and now has `depth` I/Os in flight, this one included (fio's
    /// `io_u_mark_depth`, for the "IO depths" distribution). Optional: without it the
    /// distribution reads 0%.
    #[inline]
    pub fn record_depth(&mut self, depth: u32) {
        self.res.io_u_map[depth_bucket(depth)] += 1;
        // One I/O per submission call.
        self.res.io_u_submit[1] += 1;
        self.res.total_submit += 1;
    }

    /// Submissions and reaps come in batches: the runner reports them with
    /// [`JobStats::record_commit`], [`JobStats::record_submit_call`] and
    /// [`JobStats::record_reap_call`] instead of [`JobStats::record_depth`] and a reap per
    /// completion.
    pub fn set_batched(&mut self) {
        self.batched = true;
    }

    /// fio's `td_io_commit`: `queued` I/Os counted at depth `depth` (`io_u_mark_depth`).
    pub fn record_commit(&mut self, depth: u32, queued: u32) {
        self.res.io_u_map[depth_bucket(depth)] += u64::from(queued);
    }

    /// One call handing `n` I/Os to the engine (`io_u_mark_submit`).
    pub fn record_submit_call(&mut self, n: u32) {
        self.res.io_u_submit[call_bucket(n)] += 1;
        self.res.total_submit += 1;
    }

    /// One call reaping `n` completions (`io_u_mark_complete`).
    pub fn record_reap_call(&mut self, n: u32) {
        self.res.io_u_complete[call_bucket(n)] += 1;
        self.res.total_complete += 1;
    }

    /// fio's `significant_figures` and `unit_base=1` (bits), for the normal output.
    pub fn set_presentation(&mut self, sig_figs: usize, unit_bits: bool) {
        self.res.sig_figs = sig_figs;
        self.res.unit_bits = unit_bits;
    }

    /// fio's `unified_rw_reporting`.
    pub fn set_unified(&mut self, unified: Unified) {
        self.res.unified = unified;
    }

    /// The job's engine is synchronous (fio's `FIO_SYNCIO`): it samples no submission
    /// latency, and times each I/O's whole call as completion latency.
    pub fn set_synchronous(&mut self) {
        self.synchronous = true;
    }

    /// The latencies and per-I/O samples the job does not collect.
    pub fn set_disabled(&mut self, disabled: Disabled) {
        self.disabled = disabled;
    }

    /// A flush (fsync) finished: fio reports these under `sync`, not as writes.
    pub fn record_sync(&mut self, issue_ns: u64, done_ns: u64) {
        if self.disabled.clat {
            return;
        }
        let lat = done_ns.saturating_sub(issue_ns);
        self.res.sync.add(lat);
        self.res.sync_hist.record(lat);
        self.res.sync_total += 1;
    }

    /// Start (or restart, after ramp_time) the measured interval at `at_ns`; earlier records
    /// are discarded.
    pub fn start_measuring(&mut self, at_ns: u64) {
        self.lat_sums = [[ExactStat::new(); 3]; 3];
        let r = &mut self.res;
        for d in r.dirs.iter_mut() {
            d.reset();
        }
        r.sync = IoStat::new();
        r.sync_hist.clear();
        r.sync_total = 0;
        r.io_u_map = [0; 7];
        r.io_u_submit = [0; 7];
        r.io_u_complete = [0; 7];
        r.total_submit = 0;
        r.total_complete = 0;
        r.lat_n = [0; 10];
        r.lat_u = [0; 10];
        r.lat_m = [0; 12];
        for l in r.logs.iter_mut() {
            l.series.iter_mut().for_each(|s| s.reset());
            if let Some(h) = l.hist.as_mut() {
                h.reset();
            }
        }
        self.start_ns = at_ns;
        self.next_bw_ns = at_ns + self.bw_avg_ms * NS_PER_MS;
        self.next_iops_ns = at_ns + self.iops_avg_ms * NS_PER_MS;
        self.update_next_sample();
        self.this_io_bytes = [0; 3];
        self.stat_io_bytes = [0; 3];
        self.this_io_blocks = [0; 3];
        self.stat_io_blocks = [0; 3];
    }

    /// The job ended at `end_ns`.
    pub fn finish(mut self, end_ns: u64) -> JobResult {
        let end_ns = end_ns.max(self.start_ns);
        self.advance_samples(end_ns);
        let elapsed_ns = end_ns - self.start_ns;
        // fio rounds each direction's runtime up to whole ms (from whole µs).
        let runtime_ms = (elapsed_ns / 1_000).div_ceil(1_000);
        let phases = self.phase_runtime_us;
        for (ddir, (d, [s_sum, c_sum, l_sum])) in
            self.res.dirs.iter_mut().zip(&self.lat_sums).enumerate()
        {
            let ran_ms = phases.map_or(runtime_ms, |us| us[ddir].div_ceil(1_000));
            d.runtime_ms = if d.io_bytes > 0 { ran_ms } else { 0 };
            d.slat = s_sum.to_io_stat();
            d.clat = c_sum.to_io_stat();
            d.lat = l_sum.to_io_stat();
        }
        if self.res.unified != Unified::None {
            let mut mixed = DirStats::new();
            JobResult::fold_dirs(&mut mixed, &self.res.dirs);
            self.res.mixed = Some(mixed);
        }
        self.res.total_run_time_ms = elapsed_ns / NS_PER_MS;
        self.res.end_ns = end_ns;
        let elapsed_ms = elapsed_ns / NS_PER_MS;
        for l in self.res.logs.iter_mut() {
            l.series.iter_mut().for_each(|s| s.finalize(elapsed_ms));
            // Submission samples arrive in completion order; fio logs them at submission.
            for s in l
                .series
                .iter_mut()
                .filter(|s| s.kind == LogKind::Slat && s.avg_msec == 0)
            {
                s.entries.sort_by_key(|e| e.time_ms);
            }
        }
        self.res
    }
}

#[cfg(test)]
mod bucket_tests {
    use super::depth_bucket;

    #[test]
    fn depth_buckets_are_fios() {
        // fio's io_u_mark_depth: 1, 2-3, 4-7, 8-15, 16-31, 32-63, >=64.
        let bounds = [
            (0, 1, 0),
            (2, 3, 1),
            (4, 7, 2),
            (8, 15, 3),
            (16, 31, 4),
            (32, 63, 5),
        ];
        for (lo, hi, bucket) in bounds {
            for depth in lo..=hi {
                assert_eq!(depth_bucket(depth), bucket, "depth {depth}");
            }
        }
        for depth in [64, 65, 1000, u32::MAX] {
            assert_eq!(depth_bucket(depth), 6, "depth {depth}");
        }
    }
}
