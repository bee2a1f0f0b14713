//! Background GC beside host reads (`ftl.gc_background_busy_share`) on the small test preset:
//! a drive left below its background GC threshold by random writes collects garbage while a
//! QD32 read stream runs, so the reads queue behind GC and its firmware work; with the share
//! at 0 (the default) it waits for idle time, and a drive above the threshold is unchanged.

mod common;

use common::{run_qd, tiny_ssd};
use flashlab_device::{load_device_config, Ssd};
use flashlab_engine::{BlockDevice, IoRequest, RngStream, SeedTree};

fn ssd(share: &str) -> Ssd {
    tiny_ssd(&[
        ("slc_cache.dynamic", "false"),
        ("controller.relocation_cpu", "\"50us\""),
        ("ftl.gc_background_busy_share", share),
    ])
}

fn random(write: bool, n: u64, span_bytes: u64, seed: u64) -> impl FnMut() -> Option<IoRequest> {
    let mut rng = RngStream::from_seed_u64(seed);
    let mut left = n;
    move || {
        (left > 0).then(|| {
            left -= 1;
            let off = rng.below(span_bytes / 4096) * 4096;
            if write {
                IoRequest::write(off, 4096)
            } else {
                IoRequest::read(off, 4096)
            }
        })
    }
}

fn fill(d: &mut Ssd) -> u64 {
    let cap = d.capacity_bytes();
    let mut off = 0u64;
    run_qd(d, 0, 32, move || {
        (off < cap).then(|| {
            let r = IoRequest::write(off, (128 << 10).min(cap - off));
            off += 128 << 10;
            r
        })
    })
}

fn counter(d: &Ssd, part: &str, key: &str) -> u64 {
    d.counters_json()[part][key].as_u64().unwrap()
}

/// Random reads (IOPS) and GC copies during them, on a drive in a random-write steady state
/// (`steady`) or freshly filled.
fn reads_after(share: &str, steady: bool) -> (f64, u64) {
    let mut d = ssd(share);
    let cap = d.capacity_bytes();
    let mut t = fill(&mut d);
    if steady {
        // Random writes with repeats leave partly valid blocks and the free blocks at the
        // foreground threshold.
        t = run_qd(&mut d, t, 32, random(true, cap / 4096, cap, 5));
    }
    let copied = counter(&d, "ftl", "gc_copied_ius");
    let n = 60_000;
    let end = run_qd(&mut d, t, 32, random(false, n, cap, 6));
    (
        n as f64 / ((end - t) as f64 * 1e-9),
        counter(&d, "ftl", "gc_copied_ius") - copied,
    )
}

#[test]
fn reads_on_a_drive_below_the_threshold_queue_behind_background_gc() {
    let (idle_only, copied0) = reads_after("0", true);
    let (half, copied_half) = reads_after("0.5", true);
    // Without the share, nothing is reclaimed while the host keeps reading.
    assert_eq!(copied0, 0);
    // With it, GC copies valid data beside the reads (whole victims of 768 IUs) and the reads
    // wait behind it on the dies and the firmware core.
    assert!(copied_half > 768, "{copied_half}");
    assert!(half < idle_only * 0.8, "{half} vs {idle_only}");
    // A larger share reclaims more in the same reads and costs them more.
    let (all, copied_all) = reads_after("1", true);
    assert!(copied_all > copied_half, "{copied_all} vs {copied_half}");
    assert!(all < half, "{all} vs {half}");
}

#[test]
fn a_drive_that_is_not_below_the_threshold_reads_as_before() {
    let (off, copied_off) = reads_after("0", false);
    let (on, copied_on) = reads_after("1", false);
    assert_eq!(copied_off, 0);
    assert_eq!(copied_on, 0);
    assert_eq!(off, on);
}

#[test]
fn the_share_is_a_fraction() {
    let sets = vec![(
        "ftl.gc_background_busy_share".to_string(),
        "1.5".to_string(),
    )];
    let e = load_device_config("tiny-test-1gb", &sets)
        .and_then(|c| Ssd::new(&c, SeedTree::new(1)).map(|_| ()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("gc_background_busy_share") && e.contains("1]"),
        "{e}"
    );
}
