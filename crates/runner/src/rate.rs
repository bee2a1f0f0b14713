//! Open-loop pacing for fio's `rate`, `rate_iops` and `rate_process`.

use flashlab_engine::{RngStream, SeedTree, SimTime, NS_PER_S};
use flashlab_workload::{JobSpec, RateProcess};

/// Open-loop pacing per data direction. Linear pacing computes the planned time of the n-th
/// I/O from the cumulative count (no rounding drift); Poisson pacing accumulates exponential
/// gaps drawn from the clone's own stream.
pub(crate) struct RateState {
    pub(crate) active: bool,
    pub(crate) bytes_per_s: [u64; 3],
    pub(crate) iops: [u64; 3],
    pub(crate) process: RateProcess,
    pub(crate) issued_bytes: [u64; 3],
    pub(crate) issued_ios: [u64; 3],
    pub(crate) poisson_next_ns: [SimTime; 3],
    /// How far `rate_ignore_thinktime` has moved the linear schedule on.
    pub(crate) skipped_ns: [SimTime; 3],
    pub(crate) rng: RngStream,
    pub(crate) max_lag_ns: SimTime,
    pub(crate) late_ios: u64,
}

impl RateState {
    pub(crate) fn new(spec: &JobSpec, seeds: SeedTree) -> Self {
        let active = spec
            .rate
            .rate_bytes_per_s
            .iter()
            .chain(spec.rate.rate_iops.iter())
            .any(|&r| r > 0);
        Self {
            active,
            bytes_per_s: spec.rate.rate_bytes_per_s,
            iops: spec.rate.rate_iops,
            process: spec.rate.rate_process,
            issued_bytes: [0; 3],
            issued_ios: [0; 3],
            poisson_next_ns: [0; 3],
            skipped_ns: [0; 3],
            rng: seeds.child("rate").stream(),
            max_lag_ns: 0,
            late_ios: 0,
        }
    }

    pub(crate) fn limited(&self, ddir: usize) -> bool {
        self.bytes_per_s[ddir] > 0 || self.iops[ddir] > 0
    }

    /// Mean gap after an I/O of `len_bytes`: the larger of the byte and IOPS limits.
    fn gap_ns(&self, ddir: usize, len_bytes: u64) -> f64 {
        let by_bytes = if self.bytes_per_s[ddir] > 0 {
            len_bytes as f64 * NS_PER_S as f64 / self.bytes_per_s[ddir] as f64
        } else {
            0.0
        };
        let by_iops = if self.iops[ddir] > 0 {
            NS_PER_S as f64 / self.iops[ddir] as f64
        } else {
            0.0
        };
        by_bytes.max(by_iops)
    }

    /// When the next I/O in `ddir` may start, for a clone that started at `start_ns`.
    pub(crate) fn planned_ns(&self, ddir: usize, start_ns: SimTime) -> SimTime {
        match self.process {
            RateProcess::Linear => {
                let by_bytes = if self.bytes_per_s[ddir] > 0 {
                    (self.issued_bytes[ddir] as u128 * NS_PER_S as u128
                        / self.bytes_per_s[ddir] as u128) as u64
                } else {
                    0
                };
                let by_iops = if self.iops[ddir] > 0 {
                    (self.issued_ios[ddir] as u128 * NS_PER_S as u128 / self.iops[ddir] as u128)
                        as u64
                } else {
                    0
                };
                start_ns
                    .saturating_add(self.skipped_ns[ddir])
                    .saturating_add(by_bytes.max(by_iops))
            }
            RateProcess::Poisson => self.poisson_next_ns[ddir].max(start_ns),
        }
    }

    /// fio's `rate_ignore_thinktime`: a pause of `think_ns` does not leave the direction
    /// behind its schedule. The schedule moves on by the pause less one I/O of the smallest
    /// block, so that the first I/O after it is due at once (a pause shorter than one I/O's
    /// gap moves it on by the whole pause).
    pub(crate) fn skip_think(&mut self, ddir: usize, think_ns: SimTime, min_bs: u64) {
        if think_ns == 0 || !self.limited(ddir) {
            return;
        }
        let gap_ns = self.gap_ns(ddir, min_bs) as SimTime;
        let skip_ns = if gap_ns <= think_ns {
            think_ns - gap_ns
        } else {
            think_ns
        };
        self.skipped_ns[ddir] += skip_ns;
        // fio moves a Poisson schedule on by the whole pause.
        self.poisson_next_ns[ddir] = self.poisson_next_ns[ddir].saturating_add(think_ns);
    }

    pub(crate) fn note_issue(
        &mut self,
        ddir: usize,
        len_bytes: u64,
        start_ns: SimTime,
        now_ns: SimTime,
    ) {
        let planned = self.planned_ns(ddir, start_ns);
        if now_ns > planned {
            self.late_ios += 1;
            self.max_lag_ns = self.max_lag_ns.max(now_ns - planned);
        }
        self.issued_bytes[ddir] += len_bytes;
        self.issued_ios[ddir] += 1;
        if self.process == RateProcess::Poisson {
            // Exponential gap: -ln(1 - U) * mean, with U in [0, 1) so the log is finite.
            let gap = -(1.0 - self.rng.unit_f64()).ln() * self.gap_ns(ddir, len_bytes);
            self.poisson_next_ns[ddir] = planned.saturating_add(gap as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_plan_follows_the_tighter_limit_without_drift() {
        let spec = {
            let mut j = JobSpec::new("r", 1);
            j.rate.rate_bytes_per_s = [3_000_000, 0, 0];
            j.rate.rate_iops = [500, 0, 0];
            j
        };
        let mut r = RateState::new(&spec, SeedTree::new(1));
        assert!(r.active && r.limited(0) && !r.limited(1));
        assert_eq!(r.planned_ns(0, 100), 100);
        // 4 KiB at 3 MB/s needs 1.365 ms; 500 IOPS needs 2 ms, the tighter limit.
        r.note_issue(0, 4096, 100, 100);
        assert_eq!(r.planned_ns(0, 100), 100 + 2_000_000);
        // Then bytes dominate: 3,004,096 bytes at 3 MB/s, computed from the cumulative count
        // so that no rounding accumulates.
        for _ in 0..3 {
            r.note_issue(0, 1_000_000, 100, 100);
        }
        assert_eq!(r.planned_ns(0, 100), 100 + 1_001_365_333);
        assert_eq!(r.late_ios, 0);
    }

    #[test]
    fn late_issues_are_counted_with_their_lag() {
        let spec = {
            let mut j = JobSpec::new("r", 1);
            j.rate.rate_iops = [1000, 0, 0];
            j
        };
        let mut r = RateState::new(&spec, SeedTree::new(1));
        r.note_issue(0, 4096, 0, 0);
        r.note_issue(0, 4096, 0, 1_500_000);
        assert_eq!((r.late_ios, r.max_lag_ns), (1, 500_000));
    }
}
