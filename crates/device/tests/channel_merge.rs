//! A flash channel keeps at most 32 reserved transfer intervals (`sim.channel_merge`). GC
//! reads book their transfer when their array work ends, far ahead on a deep plane queue, so
//! under steady random writes a channel holds more than that. Merging the two earliest marks
//! the channel's near future busy: a program's transfer, wished for now, lands behind the
//! merged block and its plane idles. Merging the narrowest gap keeps the near future free.

mod common;

use common::{run_qd, tiny_ssd};
use flashlab_engine::{BlockDevice, IoRequest, RngStream};

/// The tiny drive with 8 dies on 2 channels (8 planes per channel, as on the 8-die default
/// drive) of small blocks: ~300 MB, 16% spare.
const MANY_UNITS: &[(&str, &str)] = &[
    ("nand.dies_per_channel", "4"),
    ("nand.pages_per_block", "48"),
    ("nand.blocks_per_plane", "32"),
    ("capacity.user", "\"300MB\""),
    ("slc_cache.dynamic", "false"),
];

/// Steady 4 KiB random writes at QD32 after a fill and one pass: (IOPS, share of time the
/// planes are busy, WA) over a second pass.
fn steady(merge: &str) -> (f64, f64, f64) {
    let mut sets = MANY_UNITS.to_vec();
    let quoted = format!("\"{merge}\"");
    sets.push(("sim.channel_merge", &quoted));
    let mut d = tiny_ssd(&sets);
    let cap = d.capacity_bytes();
    let ius = cap / 4096;
    let mut off = 0;
    let mut t = run_qd(&mut d, 0, 32, || {
        (off < cap).then(|| {
            let len = (128 << 10).min(cap - off);
            off += len;
            IoRequest::write(off - len, len)
        })
    });
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

#[test]
fn merging_the_narrowest_channel_gap_keeps_more_planes_busy() {
    let (early_iops, early_busy, early_wa) = steady("earliest");
    let (narrow_iops, narrow_busy, narrow_wa) = steady("narrowest");
    eprintln!(
        "earliest {early_iops:.0} IOPS, planes busy {early_busy:.3}, WA {early_wa:.2}; \
         narrowest {narrow_iops:.0} IOPS, planes busy {narrow_busy:.3}, WA {narrow_wa:.2}"
    );
    assert!(narrow_busy > early_busy * 1.1);
    assert!(narrow_iops > early_iops * 1.1);
    // Same work per host write: only when the dies do it changes.
    assert!((narrow_wa - early_wa).abs() < 0.05 * early_wa);
}

#[test]
fn channel_merge_defaults_to_narrowest_and_names_the_valid_values() {
    let model = flashlab_device::load_device_config("tiny-test-1gb", &[])
        .unwrap()
        .resolve()
        .unwrap();
    assert_eq!(
        model.channel_merge,
        flashlab_device::ChannelMergeSetting::Narrowest
    );
    let sets = vec![("sim.channel_merge".to_string(), "\"latest\"".to_string())];
    let err = flashlab_device::load_device_config("tiny-test-1gb", &sets)
        .unwrap_err()
        .to_string();
    assert!(err.contains("channel_merge"), "{err}");
    assert!(err.contains("narrowest"), "{err}");
}
