//! Helpers shared by the device's integration tests: the small test drive with `--set`-style
//! overrides, and a closed-loop host at a fixed queue depth.

// Each test binary uses the part it needs.
#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use flashlab_device::{load_device_config, Ssd};
use flashlab_engine::{BlockDevice, IoRequest, RngStream, SeedTree};

/// `tiny-test-1gb` with `sets` (dotted keys, TOML values), seeded with `seed`.
pub fn tiny_ssd_seeded(sets: &[(&str, &str)], seed: u64) -> Ssd {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let cfg = load_device_config("tiny-test-1gb", &sets).unwrap();
    Ssd::new(&cfg, SeedTree::new(seed)).unwrap()
}

/// `tiny-test-1gb` with `sets`, seed 7.
pub fn tiny_ssd(sets: &[(&str, &str)]) -> Ssd {
    tiny_ssd_seeded(sets, 7)
}

/// Closed loop at queue depth `qd` from `start_ns`: each completion submits the next request
/// `next` gives; returns the last completion.
pub fn run_qd(
    d: &mut Ssd,
    start_ns: u64,
    qd: usize,
    mut next: impl FnMut() -> Option<IoRequest>,
) -> u64 {
    let mut inflight: BinaryHeap<Reverse<u64>> = (0..qd).map(|_| Reverse(start_ns)).collect();
    let mut end = start_ns;
    while let Some(Reverse(t)) = inflight.pop() {
        end = end.max(t);
        if let Some(req) = next() {
            let c = d.submit(t, &req).unwrap();
            inflight.push(Reverse(c.done_ns));
        }
    }
    end
}

/// One 128 KiB sequential pass over the whole drive at QD32 from `start_ns`; returns its end.
pub fn fill_sequentially(d: &mut Ssd, start_ns: u64) -> u64 {
    let cap = d.capacity_bytes();
    let mut off = 0;
    run_qd(d, start_ns, 32, || {
        (off < cap).then(|| {
            let len = (128 << 10).min(cap - off);
            off += len;
            IoRequest::write(off - len, len)
        })
    })
}

/// The tiny drive with 8 dies (16 planes, 8 per channel as on the 8-die default drive) of
/// small blocks: ~300 MB, 16% spare.
pub const MANY_UNITS: &[(&str, &str)] = &[
    ("nand.dies_per_channel", "4"),
    ("nand.pages_per_block", "48"),
    ("nand.blocks_per_plane", "32"),
    ("capacity.user", "\"300MB\""),
    ("slc_cache.dynamic", "false"),
];

/// [`MANY_UNITS`] with `sets` (dotted keys, TOML values): steady 4 KiB random writes at QD32
/// after a fill and one pass, as (IOPS, share of time the planes are busy, WA) over a second
/// pass.
pub fn steady_random_writes_many_units_with(sets: &[(&str, &str)]) -> (f64, f64, f64) {
    let mut all = MANY_UNITS.to_vec();
    all.extend_from_slice(sets);
    let mut d = tiny_ssd(&all);
    let ius = d.capacity_bytes() / 4096;
    let mut t = fill_sequentially(&mut d, 0);
    let mut rng = RngStream::from_seed_u64(3);
    let mut result = (0.0, 0.0, 0.0);
    for pass in 0..2 {
        let before = d.counters_json();
        let start = t;
        let mut left = ius;
        t = run_qd(&mut d, t, 32, || {
            (left > 0).then(|| {
                left -= 1;
                IoRequest::write(rng.below(ius) * 4096, 4096)
            })
        });
        if pass == 1 {
            let after = d.counters_json();
            let delta = |a: &str, k: &str| {
                after[a][k].as_u64().unwrap() as f64 - before[a][k].as_u64().unwrap() as f64
            };
            let secs = (t - start) as f64 * 1e-9;
            let planes = 16.0;
            result = (
                ius as f64 / secs,
                delta("media", "array_busy_ns") * 1e-9 / (planes * secs),
                delta("ftl", "nand_write_ius") / delta("ftl", "host_write_ius"),
            );
        }
    }
    result
}
