//! Helpers shared by the device's integration tests: the small test drive with `--set`-style
//! overrides, and a closed-loop host at a fixed queue depth.

// Each test binary uses the part it needs.
#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use flashlab_device::{load_device_config, Ssd};
use flashlab_engine::{BlockDevice, IoRequest, SeedTree};

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
