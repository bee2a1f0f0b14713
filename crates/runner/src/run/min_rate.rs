//! fio's minimum rates (`rate_min`, `rate_iops_min`, `rate_cycle`): after a settling time of
//! two seconds from the job's start (and once `ramp_time` is over), each direction's rate
//! is taken over every `rate_cycle`; a cycle below a minimum stops the job with an I/O
//! error (EIO), as fio's `check_min_rate` does. On a slice the settling time and the cycle
//! are spans of the drive's time and the minimums the slice's share of the drive's.

use flashlab_engine::{SimTime, NS_PER_S};
use flashlab_workload::JobSpec;

/// fio's settling time before minimum rates are checked.
const SETTLE_NS: SimTime = 2 * NS_PER_S;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct MinRate {
    bytes_per_s: [u64; 3],
    iops: [u64; 3],
    cycle_ns: SimTime,
    settle_until_ns: SimTime,
    /// Per direction: when the running cycle began, and the bytes and I/Os done by then.
    cycle_start: [Option<(SimTime, u64, u64)>; 3],
}

/// A direction's rate fell below its minimum over a cycle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Shortfall {
    pub ddir: usize,
    /// Whether the bandwidth (else the IOPS) minimum was missed.
    pub bandwidth: bool,
    pub rate: f64,
    pub min: u64,
}

impl MinRate {
    /// The minimums of `spec` for a clone started at `start_ns`; `time_factor`: simulated
    /// time per second of the drive's. None when the job sets none.
    pub fn new(spec: &JobSpec, start_ns: SimTime, time_factor: f64) -> Option<MinRate> {
        let any = spec
            .rate
            .rate_min_bytes_per_s
            .iter()
            .chain(&spec.rate.rate_iops_min)
            .any(|&r| r > 0);
        any.then(|| MinRate {
            bytes_per_s: spec.rate.rate_min_bytes_per_s,
            iops: spec.rate.rate_iops_min,
            cycle_ns: spec.rate.rate_cycle_ns.max(1),
            settle_until_ns: start_ns
                .saturating_add((SETTLE_NS as f64 * time_factor).round() as SimTime),
            cycle_start: [None; 3],
        })
    }

    /// An I/O of direction `ddir` completed at `now_ns`, the direction having done `bytes`
    /// and `ios` so far; `measuring`: `ramp_time` is over.
    pub fn check(
        &mut self,
        ddir: usize,
        now_ns: SimTime,
        bytes: u64,
        ios: u64,
        measuring: bool,
    ) -> Option<Shortfall> {
        if !measuring
            || now_ns < self.settle_until_ns
            || (self.bytes_per_s[ddir] == 0 && self.iops[ddir] == 0)
        {
            return None;
        }
        let Some((start_ns, start_bytes, start_ios)) = self.cycle_start[ddir] else {
            self.cycle_start[ddir] = Some((now_ns, bytes, ios));
            return None;
        };
        let spent_ns = now_ns - start_ns;
        if spent_ns < self.cycle_ns {
            return None;
        }
        self.cycle_start[ddir] = Some((now_ns, bytes, ios));
        let per_s = |n: u64| n as f64 * NS_PER_S as f64 / spent_ns as f64;
        let (bw, iops) = (per_s(bytes - start_bytes), per_s(ios - start_ios));
        if self.bytes_per_s[ddir] > 0 && bw < self.bytes_per_s[ddir] as f64 {
            return Some(Shortfall {
                ddir,
                bandwidth: true,
                rate: bw,
                min: self.bytes_per_s[ddir],
            });
        }
        if self.iops[ddir] > 0 && iops < self.iops[ddir] as f64 {
            return Some(Shortfall {
                ddir,
                bandwidth: false,
                rate: iops,
                min: self.iops[ddir],
            });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashlab_engine::NS_PER_MS;

    fn spec(bw_min: u64, iops_min: u64) -> JobSpec {
        {
            let mut j = JobSpec::new("m", 1);
            j.rate.rate_min_bytes_per_s = [0, bw_min, 0];
            j.rate.rate_iops_min = [0, iops_min, 0];
            j
        }
    }

    #[test]
    fn a_cycle_under_the_minimum_falls_short_after_the_settling_time() {
        let mut m = MinRate::new(&spec(1_000_000, 0), 0, 1.0).unwrap();
        // 1 MB/s exactly for 5 s, then half of it.
        let mut bytes = 0;
        let mut short = None;
        for ms in (100..10_000).step_by(100) {
            bytes += if ms <= 5_000 { 100_000 } else { 50_000 };
            let now = ms * NS_PER_MS;
            if let Some(s) = m.check(1, now, bytes, bytes / 4096, true) {
                short = Some((ms, s));
                break;
            }
            // Nothing is judged in the first two seconds.
            assert!(ms >= 2_000 || m.cycle_start[1].is_none());
        }
        let (ms, s) = short.expect("the slow half falls short");
        assert_eq!(ms, 6_000);
        assert!(s.bandwidth && s.min == 1_000_000);
        assert!((s.rate - 500_000.0).abs() < 1.0, "{}", s.rate);
    }

    #[test]
    fn only_set_directions_and_measured_time_are_judged() {
        assert!(MinRate::new(&spec(0, 0), 0, 1.0).is_none());
        let mut m = MinRate::new(&spec(0, 100), 0, 1.0).unwrap();
        // Reads have no minimum; writes during ramp_time are not judged.
        assert_eq!(m.check(0, 5 * NS_PER_S, 0, 0, true), None);
        assert_eq!(m.check(1, 5 * NS_PER_S, 0, 0, false), None);
        assert_eq!(m.check(1, 6 * NS_PER_S, 0, 0, true), None); // the cycle starts
        let s = m.check(1, 7 * NS_PER_S, 4096 * 50, 50, true).unwrap();
        assert_eq!((s.bandwidth, s.min), (false, 100));
        assert!((s.rate - 50.0).abs() < 1e-9);
    }

    #[test]
    fn a_slice_settles_for_its_share_of_two_seconds() {
        let m = MinRate::new(&spec(1, 0), 10, 0.25).unwrap();
        assert_eq!(m.settle_until_ns, 10 + NS_PER_S / 2);
    }
}
