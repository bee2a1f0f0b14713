//! fio's distributions as percents: I/O depths and latency buckets, as its normal and JSON
//! outputs print them.

/// fio's `stat_calc_dist`: percent of `total`, at least 0.1 for a non-empty bucket.
pub(crate) fn calc_dist(map: &[u64; 7], total: u64) -> [f64; 7] {
    let mut out = [0.0; 7];
    if total == 0 {
        return out;
    }
    for (o, m) in out.iter_mut().zip(map.iter()) {
        *o = *m as f64 / total as f64 * 100.0;
        if *o < 0.1 && *m > 0 {
            *o = 0.1;
        }
    }
    out
}

/// fio's `stat_calc_lat`: percent of all I/Os, at least 0.01 for a non-empty bucket.
pub(crate) fn calc_lat<const N: usize>(src: &[u64; N], total: u64) -> [f64; N] {
    let mut out = [0.0; N];
    if total == 0 {
        return out;
    }
    for (o, s) in out.iter_mut().zip(src.iter()) {
        *o = *s as f64 / total as f64 * 100.0;
        if *o < 0.01 && *s > 0 {
            *o = 0.01;
        }
    }
    out
}

pub(crate) const LAT_RANGES: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];
