//! Running statistics as fio keeps them (`struct io_stat`): min, max, sample count, and a
//! running mean and sum of squared deviations (Welford), merged the way fio merges clones.

/// One statistic (latency in ns, bandwidth in KiB/s, or IOPS).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IoStat {
    pub min: u64,
    pub max: u64,
    pub samples: u64,
    pub mean: f64,
    /// Sum of squared deviations from the mean (fio's `S`).
    pub s: f64,
}

impl Default for IoStat {
    fn default() -> Self {
        Self::new()
    }
}

/// `min, max, mean, stddev` as fio reports them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stddev: f64,
}

impl IoStat {
    pub const fn new() -> Self {
        Self {
            min: u64::MAX,
            max: 0,
            samples: 0,
            mean: 0.0,
            s: 0.0,
        }
    }

    /// fio's `add_stat_sample`, operation for operation, so means and deviations match its
    /// output to the last printed digit.
    #[inline]
    pub fn add(&mut self, value: u64) {
        let val = value as f64;
        if value > self.max {
            self.max = value;
        }
        if value < self.min {
            self.min = value;
        }
        let delta = val - self.mean;
        if delta != 0.0 {
            self.mean += delta / (self.samples as f64 + 1.0);
            self.s += delta * (val - self.mean);
        }
        self.samples += 1;
    }

    /// fio's `calc_lat`: `None` without samples; the deviation is the sample standard
    /// deviation (n - 1), 0 for a single sample.
    pub fn summary(&self) -> Option<Summary> {
        if self.samples == 0 {
            return None;
        }
        let n = self.samples as f64;
        let stddev = if n > 1.0 {
            (self.s / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        Some(Summary {
            min: self.min,
            max: self.max,
            mean: self.mean,
            stddev,
        })
    }

    /// Like [`IoStat::summary`] with zeros for an empty statistic (fio's JSON does this).
    pub fn summary_or_zero(&self) -> Summary {
        self.summary().unwrap_or(Summary {
            min: 0,
            max: 0,
            mean: 0.0,
            stddev: 0.0,
        })
    }

    /// Merge as fio's `sum_stat`. Latencies (`pure_sum = false`) pool: the result describes
    /// all samples of both. Bandwidth and IOPS (`pure_sum = true`) add up: clones run side
    /// by side, so the group's rate is the sum of theirs — fio adds min, max, mean and S too.
    pub fn merge(&mut self, src: &IoStat, pure_sum: bool) {
        if src.samples == 0 {
            return;
        }
        let first = self.samples == 0;
        if pure_sum {
            if first {
                *self = *src;
            } else {
                self.min += src.min;
                self.max += src.max;
                self.samples += src.samples;
                self.mean += src.mean;
                self.s += src.s;
            }
            return;
        }
        self.min = self.min.min(src.min);
        self.max = self.max.max(src.max);
        let (mean, s) = if first {
            (src.mean, src.s)
        } else {
            let delta = src.mean - self.mean;
            let (n1, n2) = (self.samples as f64, src.samples as f64);
            let mean = (src.mean * n2 + self.mean * n1) / (n1 + n2);
            // fio multiplies the sample counts as integers before converting.
            let prod = self.samples.wrapping_mul(src.samples) as f64;
            let s = src.s + self.s + delta.powi(2) * prod / (n1 + n2);
            (mean, s)
        };
        self.samples += src.samples;
        self.mean = mean;
        self.s = s;
    }
}

/// A latency statistic accumulated exactly: integer sum and sum of squares, turned into
/// fio's mean and `S` once, by [`ExactStat::to_io_stat`]. Cheaper per sample than Welford's
/// division and two dependent float operations, and the result is the exact value rounded
/// once, where fio's running doubles round at every sample (they agree to ~1e-12 relative
/// on latencies; the last printed digit can differ).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExactStat {
    min: u64,
    max: u64,
    /// Samples in `sum` and `sum_sq`.
    samples: u64,
    sum: u128,
    sum_sq: u128,
    /// Earlier samples whose squares no longer fitted `sum_sq` (values above ~2^32 ns, or
    /// more than 2^64 samples), kept as fio keeps them.
    spilled: IoStat,
}

impl Default for ExactStat {
    fn default() -> Self {
        Self::new()
    }
}

impl ExactStat {
    pub const fn new() -> Self {
        Self {
            min: u64::MAX,
            max: 0,
            samples: 0,
            sum: 0,
            sum_sq: 0,
            spilled: IoStat::new(),
        }
    }

    #[inline]
    pub fn add(&mut self, value: u64) {
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        // A sum of at most 2^64 values below 2^64 fits 128 bits.
        self.sum += u128::from(value);
        let sq = u128::from(value) * u128::from(value);
        let (sum_sq, overflow) = self.sum_sq.overflowing_add(sq);
        self.sum_sq = sum_sq;
        self.samples += 1;
        if overflow {
            self.spill(value, sq);
        }
    }

    /// `sum_sq` wrapped on `value`: move the samples before it to `spilled` and start the
    /// exact sums again from `value` alone (one square always fits).
    #[cold]
    fn spill(&mut self, value: u64, sq: u128) {
        self.samples -= 1;
        self.sum -= u128::from(value);
        self.sum_sq = self.sum_sq.wrapping_sub(sq);
        let before = self.exact_part();
        self.spilled.merge(&before, false);
        self.samples = 1;
        self.sum = u128::from(value);
        self.sum_sq = sq;
    }

    /// The samples in the exact sums as fio's `io_stat`. Min and max are the whole
    /// statistic's: merging takes the smaller and larger, so they stay right.
    fn exact_part(&self) -> IoStat {
        if self.samples == 0 {
            return IoStat::new();
        }
        let n = u128::from(self.samples);
        // sum = q n + r: mean = q + r / n, and S = sum_sq - sum^2 / n
        // = sum_sq - q (sum + r) - r^2 / n, where q (sum + r) <= sum_sq fits and r < n.
        let (q, r) = (self.sum / n, self.sum % n);
        let (nf, rf) = (n as f64, r as f64);
        let mean = q as f64 + rf / nf;
        let s = ((self.sum_sq - q * (self.sum + r)) as f64 - rf * rf / nf).max(0.0);
        IoStat {
            min: self.min,
            max: self.max,
            samples: self.samples,
            mean,
            s,
        }
    }

    /// All samples as fio's `io_stat` (mean and sum of squared deviations).
    pub fn to_io_stat(&self) -> IoStat {
        let mut out = self.spilled;
        out.merge(&self.exact_part(), false);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(values: &[u64]) -> (f64, f64) {
        let n = values.len() as f64;
        let mean = values.iter().map(|v| *v as f64).sum::<f64>() / n;
        let var = values
            .iter()
            .map(|v| (*v as f64 - mean).powi(2))
            .sum::<f64>()
            / (n - 1.0);
        (mean, var.sqrt())
    }

    #[test]
    fn running_mean_and_stddev() {
        let vals = [3u64, 7, 7, 19, 24, 1000, 5];
        let mut s = IoStat::new();
        vals.iter().for_each(|v| s.add(*v));
        let sum = s.summary().unwrap();
        let (m, d) = naive(&vals);
        assert_eq!((sum.min, sum.max), (3, 1000));
        assert!((sum.mean - m).abs() < 1e-9);
        assert!((sum.stddev - d).abs() < 1e-9);
        assert_eq!(s.samples, 7);
        assert!(IoStat::new().summary().is_none());
        let mut one = IoStat::new();
        one.add(42);
        assert_eq!(one.summary().unwrap().stddev, 0.0);
    }

    #[test]
    fn pooled_merge_equals_recording_everything() {
        let a_vals = [10u64, 20, 30, 40];
        let b_vals = [100u64, 5, 7];
        let mut a = IoStat::new();
        let mut b = IoStat::new();
        let mut all = IoStat::new();
        a_vals.iter().for_each(|v| a.add(*v));
        b_vals.iter().for_each(|v| b.add(*v));
        a_vals.iter().chain(b_vals.iter()).for_each(|v| all.add(*v));
        let mut m = IoStat::new();
        m.merge(&a, false);
        m.merge(&b, false);
        m.merge(&IoStat::new(), false);
        let (x, y) = (m.summary().unwrap(), all.summary().unwrap());
        assert_eq!((x.min, x.max, m.samples), (5, 100, 7));
        assert!((x.mean - y.mean).abs() < 1e-9);
        assert!((x.stddev - y.stddev).abs() < 1e-9);
    }

    #[test]
    fn pure_sum_adds_like_fio_group_reporting() {
        // Two rate-limited clones from fio's fio-rate-numjobs2 sample: 1025.67 and 1026.67
        // KiB/s on average over 3 samples each report 2052.33 KiB/s, min 2048, 6 samples.
        let mut a = IoStat::new();
        [1024u64, 1024, 1029].iter().for_each(|v| a.add(*v));
        let mut b = IoStat::new();
        [1024u64, 1024, 1032].iter().for_each(|v| b.add(*v));
        let mut g = IoStat::new();
        g.merge(&a, true);
        g.merge(&b, true);
        let s = g.summary().unwrap();
        assert_eq!((s.min, s.max, g.samples), (2048, 2061, 6));
        assert_eq!(format!("{:.6}", s.mean), "2052.333333");
        assert_eq!(format!("{:.6}", s.stddev), "3.444803");
    }

    #[test]
    fn exact_stat_is_the_exact_mean_and_deviation() {
        let vals = [3u64, 7, 7, 19, 24, 1000, 5];
        let mut e = ExactStat::new();
        vals.iter().for_each(|v| e.add(*v));
        let st = e.to_io_stat();
        let sum = st.summary().unwrap();
        assert_eq!((sum.min, sum.max, st.samples), (3, 1000, 7));
        // Sum 1065, sum of squares 1,001,069: mean 1065/7, S = 1,001,109 - 1065^2/7.
        assert_eq!(sum.mean, 1065.0 / 7.0);
        let s_exact = 1_001_069.0 - 1065.0 * 1065.0 / 7.0;
        assert!(
            (st.s - s_exact).abs() <= s_exact * 1e-15,
            "{} vs {s_exact}",
            st.s
        );
        assert!(ExactStat::new().to_io_stat().summary().is_none());
        let mut one = ExactStat::new();
        one.add(42);
        assert_eq!(one.to_io_stat().summary().unwrap().stddev, 0.0);
        assert_eq!(one.to_io_stat().summary().unwrap().mean, 42.0);
    }

    /// Where Welford's running doubles drift, the integer sums do not: a large common offset
    /// with a small spread.
    #[test]
    fn exact_stat_keeps_a_small_spread_on_a_large_offset() {
        let mut e = ExactStat::new();
        let base = 1u64 << 40;
        for i in 0..100_000u64 {
            e.add(base + i % 2);
        }
        let st = e.to_io_stat();
        let sum = st.summary().unwrap();
        assert_eq!(sum.mean, base as f64 + 0.5);
        // Exactly n/4 for alternating 0/1.
        assert_eq!(st.s, 25_000.0);
    }

    #[test]
    fn exact_stat_spills_squares_that_overflow() {
        let big = u64::MAX - 1;
        let vals = [big, 10, big, big, 3, big];
        let mut e = ExactStat::new();
        let mut w = IoStat::new();
        for v in vals {
            e.add(v);
            w.add(v);
        }
        let (x, y) = (e.to_io_stat(), w);
        assert_eq!((x.min, x.max, x.samples), (3, big, 6));
        assert!(
            (x.mean - y.mean).abs() <= y.mean * 1e-12,
            "{} vs {}",
            x.mean,
            y.mean
        );
        assert!((x.s - y.s).abs() <= y.s * 1e-9, "{} vs {}", x.s, y.s);
    }
}
