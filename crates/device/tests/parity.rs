//! Die-level parity (`ftl.parity_stripe_pages`): one page in every N of a block holds parity,
//! programmed after its stripe's data. It costs program bandwidth (N programs per N - 1 pages
//! of data) and capacity the spare area would otherwise have (higher GC write
//! amplification), and the drive refuses a user capacity its data pages cannot hold.

mod common;

use common::{run_qd, steady_random_writes_many_units_with, tiny_ssd};
use flashlab_device::{load_device_config, Ssd};
use flashlab_engine::{BlockDevice, IoRequest, SeedTree};

/// Sequential 128 KiB writes over the whole tiny drive (no SLC cache, so every page is a
/// native TLC program) at QD32: (MB/s, WA, parity pages, NAND program pages).
fn sequential_fill(parity: &str) -> (f64, f64, u64, u64) {
    let mut d = tiny_ssd(&[
        ("slc_cache.dynamic", "false"),
        ("capacity.user", "\"800MB\""),
        ("ftl.parity_stripe_pages", parity),
    ]);
    let cap = d.capacity_bytes();
    let mut off = 0u64;
    let end = run_qd(&mut d, 0, 32, || {
        (off < cap).then(|| {
            let len = (128 << 10).min(cap - off);
            off += len;
            IoRequest::write(off - len, len)
        })
    });
    let c = d.counters_json();
    let ftl = &c["ftl"];
    let n = |k: &str| ftl[k].as_u64().unwrap();
    (
        cap as f64 / (end as f64 * 1e-9) / 1e6,
        n("nand_write_ius") as f64 / n("host_write_ius") as f64,
        n("parity_program_pages"),
        n("nand_program_pages"),
    )
}

#[test]
fn sequential_writes_pay_one_program_per_stripe() {
    let (mb_s, wa, parity, pages) = sequential_fill("0");
    assert_eq!(parity, 0);
    assert!((wa - 1.0).abs() < 0.01, "WA {wa} without parity");
    let (mb_s_p, wa_p, parity_p, pages_p) = sequential_fill("8");
    // Every 8th page is parity: WA 8/7, one parity page per 7 data pages (up to a stripe's
    // worth short on each block still open).
    assert!(
        (wa_p - 8.0 / 7.0).abs() < 0.01,
        "WA {wa_p} with a parity page in 8"
    );
    let data = pages_p - parity_p;
    assert!(
        7 * parity_p <= data && data <= 7 * parity_p + 7 * 16,
        "{parity_p} / {data}"
    );
    assert_eq!(data, pages, "the same data pages with and without parity");
    // The fill is program-bound, so it slows by the programs parity adds.
    let ratio = mb_s_p / mb_s;
    assert!(
        (ratio - 7.0 / 8.0).abs() < 0.03,
        "{mb_s_p:.0} MB/s with parity against {mb_s:.0} MB/s without (ratio {ratio:.3})"
    );
}

#[test]
fn parity_takes_its_capacity_from_the_spare_area() {
    // Steady 4 KiB random writes on a 280 MB drive of 357 MB raw: a parity page in 16 takes
    // 6.25% of the raw capacity out of its spare area, so GC copies far more.
    let user = ("capacity.user", "\"280MB\"");
    let (iops, _, wa) = steady_random_writes_many_units_with(&[user]);
    let (iops_p, _, wa_p) =
        steady_random_writes_many_units_with(&[user, ("ftl.parity_stripe_pages", "16")]);
    println!("without parity {iops:.0} IOPS, WA {wa:.2}; with {iops_p:.0} IOPS, WA {wa_p:.2}");
    assert!(
        wa_p > 1.3 * wa,
        "WA {wa_p:.2} with parity against {wa:.2} without"
    );
    assert!(
        iops_p < 0.8 * iops,
        "{iops_p:.0} IOPS with parity against {iops:.0} without"
    );
}

/// The error building the tiny drive with `sets` gives, if any.
fn build_error(sets: &[(&str, &str)]) -> Option<String> {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    match load_device_config("tiny-test-1gb", &sets) {
        Err(e) => Some(e.to_string()),
        Ok(c) => Ssd::new(&c, SeedTree::new(1)).err().map(|e| e.to_string()),
    }
}

#[test]
fn a_capacity_only_the_raw_pages_hold_is_refused() {
    let at = |stripe| {
        build_error(&[
            ("slc_cache.dynamic", "false"),
            ("capacity.user", "\"950MB\""),
            ("ftl.parity_stripe_pages", stripe),
        ])
    };
    assert_eq!(at("0"), None);
    let err = at("4").expect("950 MB does not fit 3 data pages in 4");
    assert!(
        err.contains("capacity.user") && err.contains("spare"),
        "{err}"
    );
    let err = build_error(&[("ftl.parity_stripe_pages", "1")]).expect("a stripe of 1 page");
    assert!(
        err.contains("parity_stripe_pages") && err.contains("0 (no parity)"),
        "{err}"
    );
}

#[test]
fn describe_states_the_parity_and_the_spare_it_leaves() {
    let cfg = |stripe: &str| {
        load_device_config(
            "tiny-test-1gb",
            &[
                ("slc_cache.dynamic".into(), "false".into()),
                ("capacity.user".into(), "\"800MB\"".into()),
                ("ftl.parity_stripe_pages".into(), stripe.into()),
            ],
        )
        .unwrap()
        .describe_json()
    };
    let (none, eight) = (cfg("0"), cfg("8"));
    let cap = |d: &serde_json::Value, k: &str| d["capacity"][k].as_f64().unwrap();
    let raw = cap(&none, "raw_bytes");
    assert_eq!(cap(&none, "parity_bytes"), 0.0);
    assert_eq!(
        cap(&none, "spare_factor_after_parity"),
        cap(&none, "spare_factor")
    );
    // 192-page blocks: 24 parity pages each, an eighth of the raw capacity.
    assert_eq!(cap(&eight, "parity_bytes"), (raw / 8.0).floor());
    let after = cap(&eight, "spare_factor_after_parity");
    assert!(
        (cap(&eight, "spare_factor") - after - 0.125).abs() < 1e-3,
        "{after}"
    );
    let bound = |d: &serde_json::Value| {
        d["bandwidth"]["seq_write_bound_bytes_per_s"]
            .as_f64()
            .unwrap()
    };
    assert!(bound(&eight) < bound(&none));
}
