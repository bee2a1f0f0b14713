//! fio's steady-state job termination (`steadystate=`, `steadystate_duration=`,
//! `steadystate_ramp_time=`). Once a second of the job's time the IOPS and bandwidth of the
//! second just past are sampled (all directions together); once the window holds
//! `duration` samples, each new sample judges it: every sample within the limit of the
//! window's mean (`iops`, `bw`), or the least-squares slope under the limit (`iops_slope`,
//! `bw_slope`), a limit ending in `%` being a share of the mean. When the criterion holds,
//! the job stops there, as fio terminates it. With `group_reporting` the group's clones are
//! judged on their summed rates and stop together.
//!
//! Samples start once the job has run for `steadystate_ramp_time` plus one second, as fio's
//! first sample after its ramp is the second ending then. On a slice of a drive a "second"
//! is the slice's time for one second of the full drive, and the samples are the full
//! drive's rates, so the criterion judges what the drive would show.

use flashlab_engine::{SimTime, NS_PER_S};
use flashlab_report::SteadyStateReport;
use flashlab_workload::{SteadyMetric, SteadyState};

/// One detection: a clone's, or a reporting group's.
pub(super) struct SteadyTracker {
    cfg: SteadyState,
    /// Clone indices judged together.
    pub members: Vec<usize>,
    /// Simulated time per sample (one second of the full drive).
    pub interval_ns: SimTime,
    /// Simulated time before the first sample's second begins.
    ramp_ns: SimTime,
    /// Full-drive I/Os and bytes per simulated ones.
    count_factor: f64,
    /// When the first member started; checks fall at whole intervals after it.
    pub origin_ns: Option<SimTime>,
    prev_ios: u64,
    prev_bytes: u64,
    /// The window as a ring; `next` is where the next sample goes, `filled` how many are in.
    iops: Vec<u64>,
    bw: Vec<u64>,
    next: usize,
    filled: usize,
    attained: bool,
    criterion: f64,
    max_deviation: f64,
    slope: f64,
    /// Every member has finished: no more checks.
    pub done: bool,
}

/// What a check decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    /// Check again one interval later.
    Again,
    /// The criterion holds: stop every member now.
    Attained,
    /// Nothing left to judge.
    Over,
}

impl SteadyTracker {
    /// A tracker for `members`, or why the options cannot be judged.
    pub fn new(
        cfg: SteadyState,
        members: Vec<usize>,
        time_factor: f64,
        count_factor: f64,
    ) -> Result<SteadyTracker, String> {
        if cfg.slope && cfg.duration_s < 2 {
            return Err(format!(
                "steadystate={} needs a window of at least 2 samples for a slope (steadystate_duration=2 or more)",
                cfg.describe()
            ));
        }
        if !(cfg.limit.is_finite() && cfg.limit >= 0.0) {
            return Err("the steadystate limit must be 0 or more".to_string());
        }
        let n = cfg.duration_s as usize;
        Ok(SteadyTracker {
            cfg,
            members,
            interval_ns: ((NS_PER_S as f64 * time_factor).round() as SimTime).max(1),
            ramp_ns: cfg.ramp_ns,
            count_factor,
            origin_ns: None,
            prev_ios: 0,
            prev_bytes: 0,
            iops: vec![0; n],
            bw: vec![0; n],
            next: 0,
            filled: 0,
            attained: false,
            criterion: 0.0,
            max_deviation: 0.0,
            slope: 0.0,
            done: false,
        })
    }

    /// The check at `now_ns`, with the members' completed I/Os and bytes so far.
    pub fn check(&mut self, now_ns: SimTime, ios: u64, bytes: u64) -> Check {
        if self.done || self.attained {
            return Check::Over;
        }
        let since_start = now_ns.saturating_sub(self.origin_ns.unwrap_or(now_ns));
        let (d_ios, d_bytes) = (ios - self.prev_ios, bytes - self.prev_bytes);
        self.prev_ios = ios;
        self.prev_bytes = bytes;
        if since_start < self.ramp_ns.saturating_add(self.interval_ns) {
            return Check::Again;
        }
        let n = self.iops.len();
        self.iops[self.next] = (d_ios as f64 * self.count_factor) as u64;
        self.bw[self.next] = (d_bytes as f64 * self.count_factor) as u64;
        self.next = (self.next + 1) % n;
        self.filled = (self.filled + 1).min(n);
        if self.filled < n {
            return Check::Again;
        }
        self.judge();
        if self.attained {
            Check::Attained
        } else {
            Check::Again
        }
    }

    /// The window's samples of the judged metric, oldest first.
    fn window(&self) -> impl Iterator<Item = f64> + '_ {
        let v = match self.cfg.metric {
            SteadyMetric::Iops => &self.iops,
            SteadyMetric::Bw => &self.bw,
        };
        let n = v.len();
        (0..n).map(move |i| v[(self.next + i) % n] as f64)
    }

    fn judge(&mut self) {
        let n = self.iops.len() as f64;
        let mean = self.window().sum::<f64>() / n;
        let value = if self.cfg.slope {
            // Least squares over x = 0, 1, ..., n-1 (samples one interval apart).
            let (sum_x, sum_xx) = (n * (n - 1.0) / 2.0, (n - 1.0) * n * (2.0 * n - 1.0) / 6.0);
            let sum_xy: f64 = self.window().enumerate().map(|(i, y)| i as f64 * y).sum();
            self.slope = (sum_xy - sum_x * mean) / (sum_xx - sum_x * sum_x / n);
            self.slope
        } else {
            self.max_deviation = self.window().map(|y| (y - mean).abs()).fold(0.0, f64::max);
            self.max_deviation
        };
        self.criterion = if !self.cfg.percent {
            value
        } else if mean > 0.0 {
            100.0 * value / mean
        } else {
            // Nothing moved in the window: no share of it is steady.
            f64::INFINITY
        };
        self.attained = self.criterion.abs() < self.cfg.limit;
    }

    /// fio's report of the detection.
    pub fn report(&self) -> SteadyStateReport {
        let n = self.iops.len();
        // Oldest first; a window that never filled starts at its first slot.
        let start = if self.filled < n { 0 } else { self.next };
        let ordered = |v: &[u64]| (0..n).map(|i| v[(start + i) % n]).collect::<Vec<u64>>();
        SteadyStateReport {
            ss: self.cfg.describe(),
            duration_s: self.cfg.duration_s,
            attained: self.attained,
            criterion: self.criterion,
            percent: self.cfg.percent,
            iops_metric: self.cfg.metric == SteadyMetric::Iops,
            slope_metric: self.cfg.slope,
            max_deviation: self.max_deviation,
            slope: self.slope,
            iops: ordered(&self.iops),
            bw_bytes_per_s: ordered(&self.bw),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(metric: SteadyMetric, slope: bool, limit: f64, percent: bool, n: u32) -> SteadyState {
        SteadyState {
            metric,
            slope,
            limit,
            percent,
            duration_s: n,
            ramp_ns: 0,
        }
    }

    /// Feed per-second I/O counts; returns the check results.
    fn feed(t: &mut SteadyTracker, per_second: &[u64]) -> Vec<Check> {
        t.origin_ns = Some(0);
        let mut total = 0;
        per_second
            .iter()
            .enumerate()
            .map(|(k, &ios)| {
                total += ios;
                t.check((k as u64 + 1) * NS_PER_S, total, total * 4096)
            })
            .collect()
    }

    #[test]
    fn deviation_within_the_limit_is_attained_once_the_window_is_full() {
        let mut t = SteadyTracker::new(
            cfg(SteadyMetric::Iops, false, 20.0, true, 3),
            vec![0],
            1.0,
            1.0,
        )
        .unwrap();
        let r = feed(&mut t, &[60_492, 60_990, 62_421]);
        assert_eq!(r, [Check::Again, Check::Again, Check::Attained]);
        let rep = t.report();
        // fio's sample: mean 61,301, largest deviation 1,120 (1.827050%).
        assert_eq!(rep.iops, [60_492, 60_990, 62_421]);
        assert_eq!(rep.iops_mean(), 61_301);
        assert!(
            (rep.max_deviation - 1120.0).abs() < 0.5,
            "{}",
            rep.max_deviation
        );
        assert_eq!(format!("{:.6}", rep.criterion as f32), "1.827050");
        assert_eq!(rep.bw_bytes_per_s[0], 60_492 * 4096);
    }

    #[test]
    fn a_window_outside_the_limit_rolls_on() {
        let mut t = SteadyTracker::new(
            cfg(SteadyMetric::Iops, false, 5.0, true, 3),
            vec![0],
            1.0,
            1.0,
        )
        .unwrap();
        let r = feed(&mut t, &[100, 200, 300, 400, 400, 400]);
        assert_eq!(r[..5], [Check::Again; 5]);
        assert_eq!(r[5], Check::Attained);
        // The window is the last three samples, oldest first.
        assert_eq!(t.report().iops, [400, 400, 400]);
    }

    #[test]
    fn slope_is_the_least_squares_slope_of_the_window() {
        let mut t =
            SteadyTracker::new(cfg(SteadyMetric::Bw, true, 1.0, true, 4), vec![0], 1.0, 1.0)
                .unwrap();
        // bw = ios * 4096: 1000, 1010, 1020, 1030 IOPS rise 10 a second, 1% of the mean
        // (1015) per second is 10.15: the slope (10 * 4096 bytes/s) is 0.985% of the mean.
        let r = feed(&mut t, &[1000, 1010, 1020, 1030]);
        assert_eq!(r[3], Check::Attained);
        let rep = t.report();
        assert!((rep.slope - 10.0 * 4096.0).abs() < 1e-6, "{}", rep.slope);
        assert!((rep.criterion - 100.0 * 10.0 / 1015.0).abs() < 1e-9);
        assert_eq!(rep.max_deviation, 0.0);
    }

    #[test]
    fn absolute_limits_and_a_falling_slope() {
        let mut t = SteadyTracker::new(
            cfg(SteadyMetric::Iops, true, 5.0, false, 3),
            vec![0],
            1.0,
            1.0,
        )
        .unwrap();
        let r = feed(&mut t, &[130, 120, 110, 100, 95, 93]);
        // Slopes -10, -10, -7.5, -3.5: under 5 in size only at the last window.
        assert_eq!(r[..5], [Check::Again; 5]);
        assert_eq!(r[5], Check::Attained);
        assert!((t.report().slope + 3.5).abs() < 1e-9);
    }

    #[test]
    fn ramp_and_slices() {
        let mut c = cfg(SteadyMetric::Iops, false, 1.0, true, 2);
        // Half a full-drive second of ramp on a slice running at a quarter of the drive's
        // time: samples begin at 1.5 full seconds = 0.375 s of slice time.
        c.ramp_ns = NS_PER_S / 8;
        let mut t = SteadyTracker::new(c, vec![0], 0.25, 8.0).unwrap();
        assert_eq!(t.interval_ns, NS_PER_S / 4);
        t.origin_ns = Some(0);
        let q = NS_PER_S / 4;
        // Before ramp + interval (0.375 s): no sample; then one a check.
        assert_eq!(t.check(q, 10, 10), Check::Again);
        assert_eq!(t.check(2 * q, 20, 20), Check::Again);
        assert_eq!(t.check(3 * q, 30, 30), Check::Attained);
        // The slice's 10 I/Os a quarter second are the drive's 80 a second.
        assert_eq!(t.report().iops, [80, 80]);
    }

    #[test]
    fn nothing_moving_is_not_steady_and_a_one_sample_slope_is_refused() {
        let mut t = SteadyTracker::new(
            cfg(SteadyMetric::Iops, false, 50.0, true, 2),
            vec![0],
            1.0,
            1.0,
        )
        .unwrap();
        assert_eq!(feed(&mut t, &[0, 0, 0]), [Check::Again; 3]);
        assert!(t.report().criterion.is_infinite());
        assert!(SteadyTracker::new(
            cfg(SteadyMetric::Iops, true, 1.0, true, 1),
            vec![0],
            1.0,
            1.0
        )
        .is_err());
    }
}
