//! fio's latency-target mode (`latency_target`, `latency_window`, `latency_percentile`):
//! the job searches for the deepest queue that still meets a total-latency target. It
//! starts at depth 1; each window in which at least `latency_percentile` of the completed
//! I/Os met the target raises the depth (doubling until a depth fails, then bisecting
//! between the last success and the failure), and a failing window lowers it (bisecting
//! down, after the I/Os in flight have completed). When a success leaves the depth where it
//! was, the search has converged: the statistics restart for one more window at that depth,
//! and the job ends after it. With `latency_percentile=100` a single I/O over the target
//! fails the window at once; at depth 1 that ends the job with fio's "max latency exceeded"
//! error, since no depth can meet the target.
//!
//! Latency here is fio's total latency (`lat`: issue to completion). Windows start when the
//! job starts and after each change of depth, counting every I/O completed in them; an I/O
//! fails only while statistics are kept (after `ramp_time`).

use flashlab_engine::SimTime;
use flashlab_workload::JobSpec;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct LatTarget {
    target_ns: u64,
    window_ns: u64,
    percentile: f64,
    max_depth: u32,
    /// The depth the job may use now.
    pub depth: u32,
    /// Deepest depth known to meet the target, and shallowest known to miss it (the job's
    /// `iodepth` until one has missed).
    low: u32,
    high: u32,
    /// Running the final window at the depth found.
    end_run: bool,
    window_start_ns: SimTime,
    window_start_ios: u64,
    failed: u64,
    /// Waiting for the I/Os in flight to drain before the next window (fio's quiesce).
    pub quiescing: bool,
    /// When the drain ends, restart the statistics (the final window).
    reset_after_drain: bool,
}

/// What the job does after a completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LatAction {
    /// Go on at `depth` (which may have grown).
    Continue,
    /// Issue nothing until the I/Os in flight have completed, then call
    /// [`LatTarget::drained`].
    Drain,
    /// The final window is over: the job ends.
    Done,
    /// An I/O missed the target at depth 1 (with `latency_percentile=100`).
    Fatal,
}

impl LatTarget {
    /// The mode for `spec`, started at `now_ns`; None when it has no latency target.
    pub fn new(spec: &JobSpec, now_ns: SimTime) -> Option<LatTarget> {
        (spec.latency.latency_target_ns > 0).then(|| LatTarget {
            target_ns: spec.latency.latency_target_ns,
            window_ns: spec.latency.latency_window_ns,
            percentile: spec.latency.latency_percentile,
            max_depth: spec.engine.iodepth.max(1),
            depth: 1,
            low: 1,
            high: spec.engine.iodepth.max(1),
            end_run: false,
            window_start_ns: now_ns,
            window_start_ios: 0,
            failed: 0,
            quiescing: false,
            reset_after_drain: false,
        })
    }

    pub fn target_ns(&self) -> u64 {
        self.target_ns
    }

    /// An I/O completed at `now_ns` after `latency_ns`, the job's `done_ios`-th; `counted`:
    /// statistics are being kept.
    pub fn completed(
        &mut self,
        now_ns: SimTime,
        latency_ns: u64,
        counted: bool,
        done_ios: u64,
    ) -> LatAction {
        if self.quiescing {
            return LatAction::Continue;
        }
        if counted && latency_ns > self.target_ns {
            if self.percentile >= 100.0 {
                return match self.lower() {
                    true => LatAction::Fatal,
                    false => LatAction::Drain,
                };
            }
            self.failed += 1;
        }
        if now_ns.saturating_sub(self.window_start_ns) < self.window_ns {
            return LatAction::Continue;
        }
        let ios = done_ios - self.window_start_ios;
        // No I/O completed in the window: not a success (fio's 0/0).
        let met = ios > 0 && (ios - self.failed) as f64 * 100.0 / ios as f64 >= self.percentile;
        if met {
            self.raise(now_ns, done_ios)
        } else if self.lower() {
            // Depth 1 misses: it stays, judged again at the next completion (as fio).
            LatAction::Continue
        } else {
            LatAction::Drain
        }
    }

    /// The window met the target: deeper, or the search is over.
    fn raise(&mut self, now_ns: SimTime, done_ios: u64) -> LatAction {
        let was = self.depth;
        self.low = self.depth;
        self.depth = if self.high != self.max_depth {
            (self.depth + self.high) / 2
        } else {
            self.depth.saturating_mul(2)
        }
        .min(self.max_depth);
        if self.depth == was {
            if self.end_run {
                return LatAction::Done;
            }
            self.end_run = true;
            self.reset_after_drain = true;
            self.quiescing = true;
            return LatAction::Drain;
        }
        self.new_window(now_ns, done_ios);
        LatAction::Continue
    }

    /// The target was missed: shallower (after a drain). Returns true at depth 1, where
    /// there is nothing shallower.
    fn lower(&mut self) -> bool {
        if self.depth == 1 {
            return true;
        }
        self.high = self.depth;
        if self.depth == self.low {
            self.low -= 1;
        }
        self.depth = (self.depth + self.low) / 2;
        self.quiescing = true;
        false
    }

    /// The I/Os in flight have completed: the next window starts. Returns whether the
    /// statistics restart (the final window at the depth found).
    pub fn drained(&mut self, now_ns: SimTime, done_ios: u64) -> bool {
        self.quiescing = false;
        self.new_window(now_ns, done_ios);
        std::mem::take(&mut self.reset_after_drain)
    }

    fn new_window(&mut self, now_ns: SimTime, done_ios: u64) {
        self.window_start_ns = now_ns;
        self.window_start_ios = done_ios;
        self.failed = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashlab_engine::{NS_PER_MS, NS_PER_US};

    fn spec(iodepth: u32, percentile: f64) -> JobSpec {
        {
            let mut j = JobSpec::new("lt", 1);
            j.engine.iodepth = iodepth;
            j.latency.latency_target_ns = 500 * NS_PER_US;
            j.latency.latency_window_ns = 100 * NS_PER_MS;
            j.latency.latency_percentile = percentile;
            j
        }
    }

    /// Drive the search with a device whose latency is `lat(depth)`: each window completes
    /// 100 I/Os; returns the depths tried, in order, and how it ended.
    fn search(iodepth: u32, percentile: f64, lat: impl Fn(u32) -> u64) -> (Vec<u32>, LatAction) {
        let mut t = LatTarget::new(&spec(iodepth, percentile), 0).unwrap();
        let (mut now, mut ios) = (0, 0);
        let mut tried = vec![t.depth];
        for _ in 0..200 {
            let mut action = LatAction::Continue;
            for k in 0..100 {
                now += NS_PER_MS + if k == 99 { 1 } else { 0 };
                ios += 1;
                action = t.completed(now, lat(t.depth), true, ios);
                if action != LatAction::Continue {
                    break;
                }
            }
            match action {
                LatAction::Drain => {
                    t.drained(now, ios);
                }
                LatAction::Done | LatAction::Fatal => return (tried, action),
                LatAction::Continue => {}
            }
            if tried.last() != Some(&t.depth) {
                tried.push(t.depth);
            }
        }
        (tried, LatAction::Continue)
    }

    #[test]
    fn doubles_until_a_depth_misses_then_bisects_to_the_deepest_that_meets() {
        // Latency 100 us per queued I/O: depths up to 5 meet 500 us.
        let (tried, end) = search(64, 100.0, |d| 100 * NS_PER_US * d as u64);
        assert_eq!(end, LatAction::Done);
        assert_eq!(tried, [1, 2, 4, 8, 6, 5]);
    }

    #[test]
    fn a_depth_that_meets_at_the_limit_ends_the_search_there() {
        let (tried, end) = search(8, 100.0, |_| 100 * NS_PER_US);
        assert_eq!(end, LatAction::Done);
        assert_eq!(tried, [1, 2, 4, 8]);
    }

    #[test]
    fn missing_at_depth_one_is_fatal_only_when_every_io_must_meet() {
        let (tried, end) = search(8, 100.0, |_| NS_PER_MS);
        assert_eq!((tried, end), (vec![1], LatAction::Fatal));
        // With a percentile below 100 the job stays at depth 1.
        let (tried, end) = search(8, 99.0, |_| NS_PER_MS);
        assert_eq!((tried, end), (vec![1], LatAction::Continue));
    }

    #[test]
    fn a_percentile_tolerates_a_share_of_slow_ios() {
        // Every 50th I/O is slow (2%): a 99th percentile target fails, 95th passes.
        let slow_every = std::cell::Cell::new(0u32);
        let lat = |_| {
            slow_every.set(slow_every.get() + 1);
            if slow_every.get().is_multiple_of(50) {
                NS_PER_MS
            } else {
                NS_PER_US
            }
        };
        let (tried, end) = search(16, 95.0, lat);
        assert_eq!((tried.last().copied(), end), (Some(16), LatAction::Done));
        let (tried, _) = search(16, 99.0, lat);
        assert_eq!(tried, [1]);
    }
}
