//! The bad-block reserve (`nand.bad_block_reserve`): a share of the native blocks set aside for
//! blocks bad from the factory and for replacing blocks that fail in use. No data goes to
//! them, so garbage collection works with the spare area the other blocks leave.

mod common;

use common::steady_random_writes_many_units_with;
use flashlab_device::load_device_config;
use flashlab_engine::{BlockDevice, IoRequest};

/// The error loading the tiny drive with `sets`, if any.
fn load_error(sets: &[(&str, &str)]) -> Option<String> {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    load_device_config("tiny-test-1gb", &sets)
        .err()
        .map(|e| e.to_string())
}

#[test]
fn a_reserve_costs_what_the_same_number_of_missing_blocks_costs() {
    // The many-unit drive has 16 planes of 32 blocks; 1/32 of them set aside is 16 blocks,
    // as many as 31 blocks per plane leave out.
    let (iops, _, wa) = steady_random_writes_many_units_with(&[]);
    let (iops_r, _, wa_r) =
        steady_random_writes_many_units_with(&[("nand.bad_block_reserve", "0.03125")]);
    let (iops_f, _, wa_f) =
        steady_random_writes_many_units_with(&[("nand.blocks_per_plane", "31")]);
    println!(
        "all blocks good: {iops:.0} IOPS, WA {wa:.3}; 1/32 set aside: {iops_r:.0}, WA \
         {wa_r:.3}; 31 blocks per plane: {iops_f:.0}, WA {wa_f:.3}"
    );
    assert!(
        wa_r > 1.1 * wa,
        "WA {wa_r:.3} with the reserve, {wa:.3} without"
    );
    assert!(
        (wa_r / wa_f - 1.0).abs() < 0.03,
        "WA {wa_r:.3} with the reserve, {wa_f:.3} with as many blocks fewer"
    );
    assert!(
        (iops_r / iops_f - 1.0).abs() < 0.05,
        "{iops_r:.0} IOPS with the reserve, {iops_f:.0} with as many blocks fewer"
    );
}

#[test]
fn the_health_log_leaves_the_reserve_out_of_the_erase_counts() {
    let mut all = common::MANY_UNITS.to_vec();
    all.push(("nand.bad_block_reserve", "0.03125"));
    let mut d = common::tiny_ssd(&all);
    let cap = d.capacity_bytes();
    let mut off = 0;
    // Four sequential passes: every good block is written, and erased before it is again.
    common::run_qd(&mut d, 0, 32, || {
        (off < 4 * cap).then(|| {
            let at = off % cap;
            let len = (128 << 10).min(cap - at);
            off += len;
            IoRequest::write(at, len)
        })
    });
    let h = &d.counters_json()["health"];
    assert_eq!(h["bad_block_reserve_blocks"], 16);
    assert_eq!(h["available_spare"], 100);
    let min = h["erase_count_min"].as_u64().unwrap();
    let max = h["erase_count_max"].as_u64().unwrap();
    // 496 good blocks take 300 MB four times over: each is erased at least once (the reserve's
    // blocks, never erased, would make the minimum 0).
    assert!(min >= 1 && max >= min, "erase counts {min}..{max}");
}

#[test]
fn out_of_range_or_too_large_reserves_are_refused_by_name() {
    let fits = |reserve| {
        load_error(&[
            ("slc_cache.dynamic", "false"),
            ("capacity.user", "\"900MB\""),
            ("nand.bad_block_reserve", reserve),
        ])
    };
    assert_eq!(fits("0.05"), None);
    let err = load_error(&[("nand.bad_block_reserve", "0.3")]).expect("30% set aside");
    assert!(
        err.contains("nand.bad_block_reserve") && err.contains("0.2"),
        "{err}"
    );
    let err = load_error(&[("nand.bad_block_reserve", "-0.01")]).expect("a negative share");
    assert!(err.contains("nand.bad_block_reserve"), "{err}");
    // With a static SLC cache of 170 MB (163 of the 352 blocks), a fifth of the rest would
    // leave the drive fewer than half its blocks for native data.
    let err = load_error(&[
        ("slc_cache.static", "\"170MB\""),
        ("capacity.user", "\"100MB\""),
        ("nand.bad_block_reserve", "0.2"),
    ])
    .expect("half the blocks set aside or static");
    assert!(
        err.contains("nand.bad_block_reserve") && err.contains("below 0.0"),
        "{err}"
    );
    // 900 MB of user data on 1.1 GB raw does not fit once a fifth of the blocks is set aside.
    let err = fits("0.2").expect("too little spare left");
    assert!(
        err.contains("capacity.user") && err.contains("spare"),
        "{err}"
    );
}

#[test]
fn describe_states_the_reserve_and_the_spare_it_leaves() {
    let describe = |reserve: &str| {
        load_device_config(
            "tiny-test-1gb",
            &[
                ("slc_cache.dynamic".into(), "false".into()),
                ("capacity.user".into(), "\"800MB\"".into()),
                ("nand.bad_block_reserve".into(), reserve.into()),
            ],
        )
        .unwrap()
        .describe_json()
    };
    let (none, some) = (describe("0"), describe("0.05"));
    let cap = |d: &serde_json::Value, k: &str| d["capacity"][k].as_f64().unwrap();
    assert_eq!(cap(&none, "bad_block_reserve_bytes"), 0.0);
    assert!((cap(&none, "spare_factor_effective") - cap(&none, "spare_factor")).abs() < 1e-4);
    // 352 blocks of 3 MiB: 5% is 17.6, so 18 blocks set aside.
    let block = f64::from(3u32 << 20);
    assert_eq!(cap(&some, "bad_block_reserve_bytes"), 18.0 * block);
    let raw = cap(&some, "raw_bytes");
    let good = raw - 18.0 * block;
    let want = (good - 800e6) / good;
    assert!(
        (cap(&some, "spare_factor_effective") - want).abs() < 1e-4,
        "{} against {want}",
        cap(&some, "spare_factor_effective")
    );
    // The nominal spare factor is the raw capacity's, with or without a reserve.
    assert_eq!(cap(&some, "spare_factor"), cap(&none, "spare_factor"));
}

#[test]
fn a_slice_keeps_the_drives_share_of_reserved_blocks() {
    let cfg = load_device_config(
        "solidigm-d5-p5430-15.36tb",
        &[
            ("nand.bad_block_reserve".into(), "0.0248".into()),
            ("sim.scale".into(), "0.001".into()),
        ],
    )
    .unwrap();
    let m = cfg.resolve().unwrap();
    let blocks = m.geometry.blocks() as f64;
    let share = f64::from(m.ftl.bad_blocks) / blocks;
    assert!(
        (share - 0.0248).abs() < 0.5 / blocks + 1e-9,
        "{} of {blocks} blocks set aside",
        m.ftl.bad_blocks
    );
    assert_eq!(
        m.full_bad_bytes,
        (m.full.blocks() as f64 * 0.0248).round() as u64 * m.full.block_bytes()
    );
}
