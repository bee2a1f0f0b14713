//! fio's latency histogram ("plat" buckets): values below 128 ns are exact; above, each power
//! of two is split into 64 equal buckets, so a bucket's width is at most 1/64 of its value and
//! the value reported for it (the bucket's midpoint) is within 1/128 of any sample in it.
//! Recording is O(1) into a fixed array; nothing allocates after construction.

/// Bits of a sample kept below its most significant bit (fio's `FIO_IO_U_PLAT_BITS`).
pub const PLAT_BITS: u32 = 6;
/// Buckets per group (fio's `FIO_IO_U_PLAT_VAL`).
pub const PLAT_VAL: usize = 1 << PLAT_BITS;
/// Groups (fio's `FIO_IO_U_PLAT_GROUP_NR`).
pub const PLAT_GROUP_NR: usize = 29;
/// Buckets in all (fio's `FIO_IO_U_PLAT_NR`, 1856).
pub const PLAT_NR: usize = PLAT_GROUP_NR * PLAT_VAL;
/// fio reads at most this many percentiles from `percentile_list`.
pub const PERCENTILE_LIST_MAX_LEN: usize = 20;

/// Bucket index of a latency in ns (fio's `plat_val_to_idx`). Values beyond the last group
/// (about 17 s) all land in the last bucket, as in fio.
#[inline]
pub fn plat_val_to_idx(val_ns: u64) -> usize {
    let msb = if val_ns == 0 {
        0
    } else {
        63 - val_ns.leading_zeros()
    };
    if msb <= PLAT_BITS {
        return val_ns as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) as usize) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (val_ns >> error_bits) as usize;
    (base + offset).min(PLAT_NR - 1)
}

/// The value a bucket stands for (fio's `plat_idx_to_val`): the index itself for the exact
/// buckets, otherwise the middle of the bucket's range.
#[inline]
pub fn plat_idx_to_val(idx: usize) -> u64 {
    debug_assert!(idx < PLAT_NR);
    if idx < (PLAT_VAL << 1) {
        return idx as u64;
    }
    let error_bits = (idx >> PLAT_BITS) as u32 - 1;
    let base = 1u64 << (error_bits + PLAT_BITS);
    let k = (idx % PLAT_VAL) as u64;
    // fio computes `base + (k + 0.5) * (1 << error_bits)` in floating point and truncates;
    // the product is exact, so integer arithmetic gives the same number.
    base + ((2 * k + 1) << error_bits) / 2
}

/// A latency histogram over fio's 1856 buckets. The 15 KB of buckets are allocated at the
/// first sample: a job keeps one per direction and kind, and most jobs use few of them.
#[derive(Clone)]
pub struct Histogram {
    /// Empty until the first sample; then `PLAT_NR` counts.
    buckets: Box<[u64]>,
}

impl PartialEq for Histogram {
    fn eq(&self, other: &Self) -> bool {
        (0..PLAT_NR).all(|i| self.count(i) == other.count(i))
    }
}

impl Eq for Histogram {}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let used: Vec<(u64, u64)> = self.nonzero().collect();
        f.debug_struct("Histogram").field("nonzero", &used).finish()
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    pub fn new() -> Self {
        Self {
            buckets: Box::default(),
        }
    }

    /// The buckets, allocated on first use.
    #[inline]
    fn buckets_mut(&mut self) -> &mut [u64] {
        if self.buckets.is_empty() {
            self.allocate();
        }
        &mut self.buckets
    }

    #[cold]
    #[inline(never)]
    fn allocate(&mut self) {
        self.buckets = vec![0u64; PLAT_NR].into_boxed_slice();
    }

    #[inline]
    pub fn record(&mut self, val_ns: u64) {
        self.buckets_mut()[plat_val_to_idx(val_ns)] += 1;
    }

    /// Add `count` samples of `val_ns` at once (reading a histogram back from json+ bins).
    pub fn record_n(&mut self, val_ns: u64, count: u64) {
        self.buckets_mut()[plat_val_to_idx(val_ns)] += count;
    }

    pub fn clear(&mut self) {
        self.buckets.iter_mut().for_each(|b| *b = 0);
    }

    /// Add another histogram's counts (group_reporting).
    pub fn merge(&mut self, other: &Histogram) {
        if other.buckets.is_empty() {
            return;
        }
        for (a, b) in self.buckets_mut().iter_mut().zip(other.buckets.iter()) {
            *a += *b;
        }
    }

    pub fn count(&self, idx: usize) -> u64 {
        self.buckets.get(idx).copied().unwrap_or(0)
    }

    pub fn total(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// `(bucket value, count)` of every non-empty bucket in increasing order (json+ `bins`).
    pub fn nonzero(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.buckets
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| (plat_idx_to_val(i), *c))
    }

    /// The reported value of each percentile in `sorted_list` (ascending, in percent), as fio's
    /// `calc_clat_percentiles`: walking the buckets in order, percentile `p` takes the value of
    /// the first bucket where the running count reaches `p / 100 * n`. `n` is the sample count
    /// of the matching statistic (fio passes `N`, not the histogram total). Percentiles never
    /// reached (an inconsistent `n`) are reported as 0, where fio prints an error.
    pub fn percentiles(&self, n: u64, sorted_list: &[f64]) -> Vec<u64> {
        let mut out = vec![0u64; sorted_list.len()];
        if sorted_list.is_empty() {
            return out;
        }
        let mut j = 0;
        let mut sum = 0u64;
        'walk: for (i, c) in self.buckets.iter().enumerate() {
            sum += *c;
            while reaches(sum, sorted_list[j], n) {
                out[j] = plat_idx_to_val(i);
                j += 1;
                if j == sorted_list.len() {
                    break 'walk;
                }
            }
        }
        out
    }
}

/// `sum >= p / 100 * n`, evaluated exactly. fio evaluates it in `long double`; exact
/// arithmetic agrees with that wherever plain `f64` rounding could flip the comparison
/// (e.g. 99.9% of 1000 samples must need the 1000th sample, not the 999th).
fn reaches(sum: u64, p: f64, n: u64) -> bool {
    if p.is_nan() || p <= 0.0 || p.is_infinite() {
        return true;
    }
    let bits = p.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    // p = mant * 2^e exactly.
    let (mant, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp - 1075)
    };
    let lhs = sum as u128 * 100;
    let rhs = mant as u128 * n as u128;
    if e >= 0 {
        match rhs.checked_shl(e as u32) {
            Some(r) if e < 64 => lhs >= r,
            _ => false,
        }
    } else if ((-e) as u32) < lhs.leading_zeros() {
        (lhs << (-e) as u32) >= rhs
    } else {
        // Tiny percentiles: f64 is exact enough here.
        sum as f64 >= p / 100.0 * n as f64
    }
}

/// The decimals fio prints percentile labels with (`percentile_precision`): per value of
/// `percentile_list`, the digits right after its first '.', the most over the list
/// (fio's parse.c counts them as written: `50.10` asks for 2, `50.` and `5e1` for 0).
pub fn percentile_precision(text: &str) -> u32 {
    text.split(':')
        .filter_map(|p| p.split_once('.'))
        .map(|(_, frac)| frac.bytes().take_while(u8::is_ascii_digit).count() as u32)
        .max()
        .unwrap_or(0)
}

/// fio's treatment of `percentile_list`: at most 20 entries, a 0 ends the list, sorted
/// ascending. An empty list means fio's default.
pub fn normalize_percentile_list(list: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = list
        .iter()
        .copied()
        .take(PERCENTILE_LIST_MAX_LEN)
        .take_while(|p| *p != 0.0)
        .collect();
    if list.is_empty() {
        v = crate::DEFAULT_PERCENTILES.to_vec();
    }
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_are_exact() {
        for v in 0..128u64 {
            assert_eq!(plat_val_to_idx(v), v as usize);
            assert_eq!(plat_idx_to_val(v as usize), v);
        }
    }

    #[test]
    fn known_bucket_edges() {
        // 128..255: buckets of width 2, reported at their middle (rounded down as fio does).
        assert_eq!(plat_val_to_idx(128), 128);
        assert_eq!(plat_val_to_idx(129), 128);
        assert_eq!(plat_val_to_idx(130), 129);
        assert_eq!(plat_idx_to_val(128), 129);
        assert_eq!(plat_val_to_idx(255), 191);
        assert_eq!(plat_val_to_idx(256), 192);
        assert_eq!(plat_idx_to_val(192), 258);
        // Values taken from fio 3.33 json+ output (reference sample bins).
        assert_eq!(plat_idx_to_val(plat_val_to_idx(32_200)), 32_128);
        assert_eq!(plat_idx_to_val(plat_val_to_idx(65_600)), 66_048);
        assert_eq!(plat_idx_to_val(plat_val_to_idx(378_000)), 378_880);
        // The last bucket swallows everything above the tracked range.
        assert_eq!(plat_val_to_idx(u64::MAX), PLAT_NR - 1);
        assert_eq!(plat_val_to_idx(1 << 40), PLAT_NR - 1);
        assert_eq!(plat_val_to_idx((1 << 34) - 1), PLAT_NR - 1);
        assert_eq!(plat_val_to_idx(1 << 33), PLAT_NR - PLAT_VAL);
    }

    #[test]
    fn every_bucket_round_trips_and_bounds_error() {
        for idx in 0..PLAT_NR {
            let v = plat_idx_to_val(idx);
            assert_eq!(plat_val_to_idx(v), idx, "bucket {idx} value {v}");
        }
        // Relative error of the reported value stays below 1/128 (fio's design bound).
        let mut v = 1u64;
        while v < (1 << 33) {
            for x in [v, v + v / 3, v * 2 - 1] {
                let r = plat_idx_to_val(plat_val_to_idx(x));
                let err = (r as f64 - x as f64).abs() / x as f64;
                assert!(err <= 1.0 / 128.0 + 1e-12, "{x} -> {r}");
            }
            v *= 2;
        }
    }

    #[test]
    fn indices_are_monotonic() {
        let mut last = 0;
        for v in (0..5_000_000u64).step_by(37) {
            let i = plat_val_to_idx(v);
            assert!(i >= last);
            last = i;
        }
    }

    #[test]
    fn percentiles_of_known_inputs() {
        let mut h = Histogram::new();
        for v in 1..=100u64 {
            h.record(v);
        }
        let p = h.percentiles(100, &[1.0, 50.0, 99.0, 99.5, 100.0]);
        assert_eq!(p, vec![1, 50, 99, 100, 100]);
        // One slow outlier among fast I/Os shows up only at the top.
        let mut h = Histogram::new();
        for _ in 0..999 {
            h.record(10_000);
        }
        h.record(5_000_000);
        let list = [50.0, 99.8, 99.9];
        let p = h.percentiles(1000, &list);
        assert_eq!(p[0], plat_idx_to_val(plat_val_to_idx(10_000)));
        assert_eq!(p[1], p[0]);
        // 99.9% of 1000 samples needs all 999 fast ones and a bit more: the outlier.
        assert_eq!(p[2], plat_idx_to_val(plat_val_to_idx(5_000_000)));
        assert_eq!(h.total(), 1000);
    }

    #[test]
    fn percentile_threshold_is_exact() {
        assert!(!reaches(999, 99.9, 1000));
        assert!(reaches(1000, 99.9, 1000));
        assert!(reaches(50, 50.0, 100));
        assert!(!reaches(49, 50.0, 100));
        assert!(reaches(9999, 99.99, 10_000));
        assert!(!reaches(9998, 99.99, 10_000));
        assert!(reaches(1, 1.0, 100));
        assert!(!reaches(0, 1.0, 100));
    }

    #[test]
    fn merge_adds_counts() {
        let mut a = Histogram::new();
        let mut b = Histogram::new();
        a.record(5);
        b.record(5);
        b.record(1_000_000);
        a.merge(&b);
        let bins: Vec<_> = a.nonzero().collect();
        assert_eq!(
            bins,
            vec![(5, 2), (plat_idx_to_val(plat_val_to_idx(1_000_000)), 1)]
        );
    }

    #[test]
    fn percentile_list_is_normalized_like_fio() {
        assert_eq!(normalize_percentile_list(&[99.0, 50.0]), vec![50.0, 99.0]);
        assert_eq!(normalize_percentile_list(&[]).len(), 17);
        assert_eq!(normalize_percentile_list(&[90.0, 0.0, 10.0]), vec![90.0]);
        let long: Vec<f64> = (1..=30).map(|x| x as f64).collect();
        assert_eq!(normalize_percentile_list(&long).len(), 20);
    }
}
