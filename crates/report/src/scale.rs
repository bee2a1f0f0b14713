//! Results of a simulated slice of a drive, scaled back to the whole drive.
//!
//! A slice holds a fraction of the drive's capacity (and possibly of its dies), and the job
//! run against it is shrunk to match (see the runner). Its results are turned back into the
//! full drive's figures with two factors per job: how much longer the full drive's clock runs
//! (`time_factor`) and how many more bytes and I/Os it moves (`count_factor`). Rates follow
//! as their quotient. Latencies are those of I/Os the slice really simulated, so they stay
//! as they are (their sample counts too: they describe the simulated I/Os).

use crate::logs::LogKind;
use crate::result::{DirStats, JobResult};
use crate::stats::IoStat;

/// How one job's figures on a slice map to the whole drive.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScaleBack {
    /// Full-drive time per simulated time (runtimes, log timestamps).
    pub time_factor: f64,
    /// Full-drive bytes and I/O counts per simulated ones.
    pub count_factor: f64,
}

impl ScaleBack {
    /// Nothing to scale.
    pub const IDENTITY: ScaleBack = ScaleBack {
        time_factor: 1.0,
        count_factor: 1.0,
    };

    /// Full-drive bandwidth and IOPS per simulated ones.
    pub fn rate_factor(&self) -> f64 {
        self.count_factor / self.time_factor
    }

    pub fn is_identity(&self) -> bool {
        self.time_factor == 1.0 && self.count_factor == 1.0
    }
}

/// `v × f`, rounded; a non-zero value stays non-zero (a 1 ms runtime must not become 0 and
/// divide rates by zero).
fn scale_u64(v: u64, f: f64) -> u64 {
    if v == 0 {
        return 0;
    }
    ((v as f64 * f).round() as u64).max(1)
}

fn scale_all<const N: usize>(a: &mut [u64; N], f: f64) {
    a.iter_mut().for_each(|x| *x = scale_u64(*x, f));
}

/// Multiply every sample of a statistic by `f`: min, max and mean by `f`, the sum of squared
/// deviations by `f²`; the sample count is unchanged.
fn scale_stat(s: &mut IoStat, f: f64) {
    if s.samples == 0 {
        return;
    }
    s.min = scale_u64(s.min, f);
    s.max = scale_u64(s.max, f);
    s.mean *= f;
    s.s *= f * f;
}

impl DirStats {
    fn scale_back(&mut self, scale: &ScaleBack, runtime_ms: u64, scale_bw: bool, scale_iops: bool) {
        let c = scale.count_factor;
        self.io_bytes = scale_u64(self.io_bytes, c);
        self.total_ios = scale_u64(self.total_ios, c);
        self.short_ios = scale_u64(self.short_ios, c);
        self.drop_ios = scale_u64(self.drop_ios, c);
        if self.runtime_ms > 0 {
            self.runtime_ms = runtime_ms;
        }
        if scale_bw {
            scale_stat(&mut self.bw, scale.rate_factor());
        }
        if scale_iops {
            scale_stat(&mut self.iops, scale.rate_factor());
        }
    }
}

impl JobResult {
    /// Turn a slice's result into the whole drive's: bytes, I/O counts and depth/latency
    /// distribution counts × `count_factor`; runtimes and log timestamps × `time_factor`;
    /// bandwidth and IOPS samples (and windowed bw/iops log values) × their quotient;
    /// latencies unchanged. `measured_ns` is the slice's measured interval (after
    /// `ramp_time`): runtimes are rounded from it, not from its already rounded ms.
    /// `full_end_ns` is the job's end on the full drive's clock (the caller knows how earlier
    /// phases were scaled). Per-I/O bandwidth samples (a bw log with `log_avg_msec=0`) are a
    /// latency in disguise (bytes over clat) and stay as they are. Call it on each clone
    /// before merging clones.
    pub fn scale_back(&mut self, scale: &ScaleBack, measured_ns: u64, full_end_ns: u64) {
        self.end_ns = full_end_ns;
        if scale.is_identity() {
            return;
        }
        let full_measured_ns = (measured_ns as f64 * scale.time_factor).round() as u64;
        // fio's rounding of a runtime: up to whole ms from whole µs.
        let runtime_ms = (full_measured_ns / 1_000).div_ceil(1_000);
        let per_io = |kind: LogKind| {
            self.logs
                .iter()
                .flat_map(|l| l.series.iter())
                .any(|s| s.kind == kind && s.avg_msec == 0)
        };
        let (scale_bw, scale_iops) = (!per_io(LogKind::Bw), !per_io(LogKind::Iops));
        for d in self.dirs.iter_mut() {
            d.scale_back(scale, runtime_ms, scale_bw, scale_iops);
        }
        // A clone's unified fold is of its own directions (it is scaled before any merge):
        // folded again from the scaled ones, it rounds as they do.
        if let Some(m) = self.mixed.as_mut() {
            *m = DirStats::new();
            JobResult::fold_dirs(m, &self.dirs);
        }
        let c = scale.count_factor;
        self.sync_total = scale_u64(self.sync_total, c);
        scale_all(&mut self.io_u_map, c);
        scale_all(&mut self.io_u_submit, c);
        scale_all(&mut self.io_u_complete, c);
        self.total_submit = scale_u64(self.total_submit, c);
        self.total_complete = scale_u64(self.total_complete, c);
        scale_all(&mut self.lat_n, c);
        scale_all(&mut self.lat_u, c);
        scale_all(&mut self.lat_m, c);
        self.total_run_time_ms = full_measured_ns / 1_000_000;
        let rate = scale.rate_factor();
        for h in self.logs.iter_mut().filter_map(|l| l.hist.as_mut()) {
            h.scale_back(scale.time_factor, c);
        }
        for series in self.logs.iter_mut().flat_map(|l| l.series.iter_mut()) {
            let windowed_rate =
                series.avg_msec > 0 && matches!(series.kind, LogKind::Bw | LogKind::Iops);
            for e in series.entries.iter_mut() {
                e.time_ms = (e.time_ms as f64 * scale.time_factor).round() as u64;
                if windowed_rate {
                    e.value = (e.value as f64 * rate).round() as u64;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{JobStats, JobStatsConfig, LogConfig, DDIR_READ, DDIR_WRITE};

    const MS: u64 = 1_000_000;

    /// 4 KiB writes every 100 µs for `run_ms`, each with a 50 µs latency.
    fn writer(run_ms: u64, logs: LogConfig) -> JobResult {
        let mut s = JobStats::new(JobStatsConfig {
            jobname: "w".into(),
            groupid: 0,
            job_index: 1,
            job_options: Vec::new(),
            percentile_list: Vec::new(),
            percentile_precision: 2,
            percentiles: Default::default(),
            logs,
            description: None,
        });
        s.start_measuring(0);
        let mut t = 0;
        while t + 50_000 <= run_ms * MS {
            s.record_depth(1);
            s.record(DDIR_WRITE, t, t, t + 50_000, 4096, 0);
            t += 100_000;
        }
        s.finish(run_ms * MS)
    }

    #[test]
    fn counts_and_time_scale_rates_follow_latencies_stay() {
        let slice = writer(2_000, LogConfig::default());
        let mut full = slice.clone();
        // A 1/16 capacity slice with every die: 16x the bytes over 16x the time.
        let scale = ScaleBack {
            time_factor: 16.0,
            count_factor: 16.0,
        };
        full.scale_back(&scale, 2_000 * MS, 32_000 * MS);
        assert_eq!(
            full.io_bytes(DDIR_WRITE),
            16 * slice.io_bytes(DDIR_WRITE),
            "bytes x16"
        );
        assert_eq!(full.total_ios(DDIR_WRITE), 16 * 20_000);
        assert_eq!(full.runtime_ms(DDIR_WRITE), 32_000);
        assert_eq!(
            full.bw_bytes_per_s(DDIR_WRITE),
            slice.bw_bytes_per_s(DDIR_WRITE)
        );
        assert!((full.iops(DDIR_WRITE) - 10_000.0).abs() < 1e-9);
        assert_eq!(full.clat_ns(DDIR_WRITE), slice.clat_ns(DDIR_WRITE));
        assert_eq!(
            full.clat_percentiles_ns(DDIR_WRITE),
            slice.clat_percentiles_ns(DDIR_WRITE)
        );
        assert_eq!(
            full.bw_samples_kib(DDIR_WRITE),
            slice.bw_samples_kib(DDIR_WRITE)
        );
        assert_eq!(full.end_ns(), 32_000 * MS);
        assert_eq!(full.io_bytes(DDIR_READ), 0);
        assert_eq!(
            full.runtime_ms(DDIR_READ),
            0,
            "an idle direction stays idle"
        );
    }

    #[test]
    fn a_die_cut_multiplies_rates_and_windowed_logs() {
        let logs = LogConfig {
            bw_prefix: Some("b".into()),
            iops_prefix: Some("i".into()),
            lat_prefix: Some("l".into()),
            log_avg_msec: 500,
            ..LogConfig::default()
        };
        let slice = writer(2_000, logs);
        let mut full = slice.clone();
        // Half the dies: the slice moved half the full drive's rate in the same time.
        let scale = ScaleBack {
            time_factor: 8.0,
            count_factor: 16.0,
        };
        full.scale_back(&scale, 2_000 * MS, 16_000 * MS);
        assert_eq!(full.runtime_ms(DDIR_WRITE), 16_000);
        assert!((full.iops(DDIR_WRITE) - 20_000.0).abs() < 1e-9);
        let (a, b) = (
            slice.iops_samples(DDIR_WRITE).unwrap(),
            full.iops_samples(DDIR_WRITE).unwrap(),
        );
        assert_eq!((b.min, b.max), (2 * a.min, 2 * a.max));
        assert!((b.mean - 2.0 * a.mean).abs() < 1e-9);
        assert!((b.stddev - 2.0 * a.stddev).abs() < 1e-9);
        let series = |r: &JobResult, kind: LogKind| {
            r.logs[0]
                .series
                .iter()
                .find(|s| s.kind == kind)
                .unwrap()
                .entries
                .clone()
        };
        let (si, fi) = (series(&slice, LogKind::Iops), series(&full, LogKind::Iops));
        assert_eq!(si.len(), fi.len());
        assert!(!si.is_empty());
        for (s, f) in si.iter().zip(fi.iter()) {
            assert_eq!(f.time_ms, 8 * s.time_ms);
            assert_eq!(f.value, 2 * s.value);
        }
        let (sl, fl) = (series(&slice, LogKind::Clat), series(&full, LogKind::Clat));
        for (s, f) in sl.iter().zip(fl.iter()) {
            assert_eq!(f.time_ms, 8 * s.time_ms);
            assert_eq!(f.value, s.value, "latency values are not scaled");
        }
    }

    #[test]
    fn per_io_bandwidth_samples_are_latencies_and_stay() {
        let logs = LogConfig {
            bw_prefix: Some("b".into()),
            log_avg_msec: 0,
            ..LogConfig::default()
        };
        let slice = writer(10, logs);
        let mut full = slice.clone();
        full.scale_back(
            &ScaleBack {
                time_factor: 2.0,
                count_factor: 8.0,
            },
            10 * MS,
            20 * MS,
        );
        assert_eq!(
            full.bw_samples_kib(DDIR_WRITE),
            slice.bw_samples_kib(DDIR_WRITE)
        );
        assert_eq!(full.total_ios(DDIR_WRITE), 8 * slice.total_ios(DDIR_WRITE));
    }

    #[test]
    fn identity_changes_nothing_but_the_end() {
        let slice = writer(100, LogConfig::default());
        let mut same = slice.clone();
        same.scale_back(&ScaleBack::IDENTITY, 100 * MS, slice.end_ns());
        assert_eq!(format!("{same:?}"), format!("{slice:?}"));
    }
}
