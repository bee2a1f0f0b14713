//! The map in too little DRAM (`controller.map_cache`) on the small test preset: random
//! writes over the whole drive miss the cache of translation pages, so each reads one from
//! NAND and writes a changed one back, costing IOPS and NAND writes; random writes over a
//! span whose map fits in the cache run as on a drive holding the whole map.

mod common;

use common::{run_qd, tiny_ssd};
use flashlab_device::{load_device_config, Ssd};
use flashlab_engine::{BlockDevice, IoRequest, RngStream};

/// 128 KB of map cache: 31 translation pages of 4 KiB out of the 1 GB drive's 245.
const SMALL_CACHE: (&str, &str) = ("controller.map_cache", "\"128KB\"");

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

/// Fill, then `n` 4 KiB random writes at QD32 over `[0, span_bytes)` twice; over the second
/// batch: (IOPS, NAND-written IUs, host-written IUs), and the drive's counters at the end.
fn random_writes(sets: &[(&str, &str)], span_bytes: u64, n: u64) -> (f64, u64, u64, Ssd) {
    let mut d = tiny_ssd(sets);
    let mut t = fill(&mut d);
    let mut rng = RngStream::from_seed_u64(11);
    let mut result = (0.0, 0, 0);
    for _ in 0..2 {
        let before = d.ftl().counters().clone();
        let start = t;
        let mut left = n;
        t = run_qd(&mut d, start, 32, || {
            (left > 0).then(|| {
                left -= 1;
                IoRequest::write(rng.below(span_bytes / 4096) * 4096, 4096)
            })
        });
        let c = d.ftl().counters();
        result = (
            n as f64 / ((t - start) as f64 * 1e-9),
            c.nand_write_ius - before.nand_write_ius,
            c.host_write_ius - before.host_write_ius,
        );
    }
    (result.0, result.1, result.2, d)
}

#[test]
fn a_small_map_cache_costs_full_span_random_writes_iops_and_nand_writes() {
    let cap = tiny_ssd(&[]).capacity_bytes();
    let n = 60_000;
    let (iops_whole, nand_whole, host_whole, whole) = random_writes(&[], cap, n);
    let (iops_paged, nand_paged, host_paged, paged) = random_writes(&[SMALL_CACHE], cap, n);
    assert_eq!(host_whole, n);
    // Translation pages are not host writes.
    assert_eq!(host_paged, n);
    assert!(whole.map_cache_counters().is_none());
    assert!(whole.counters_json().get("map_cache").is_none());
    let c = paged.map_cache_counters().unwrap();
    // 31 of 245 pages cached: almost every random write misses, reads its page and evicts
    // a changed one.
    let misses = c.misses as f64 / (c.hits + c.misses) as f64;
    assert!(misses > 0.8, "miss share {misses}");
    assert!(c.translation_reads > c.misses * 8 / 10, "{c:?}");
    assert!(c.translation_writes > c.misses * 8 / 10, "{c:?}");
    let j = paged.counters_json();
    assert_eq!(j["map_cache"]["translation_writes"], c.translation_writes);
    assert_eq!(j["map_cache"]["slots"], 31);
    // Nearly a translation page written back per host write, each amplified by GC like data.
    eprintln!(
        "IOPS {iops_paged:.0} vs {iops_whole:.0}, NAND IUs {nand_paged} vs {nand_whole} for {n} host IUs"
    );
    assert!(
        nand_paged > nand_whole + n * 8 / 10,
        "NAND IUs {nand_paged} vs {nand_whole}"
    );
    assert!(
        iops_paged < 0.8 * iops_whole,
        "IOPS {iops_paged:.0} vs {iops_whole:.0}"
    );
}

#[test]
fn relocation_changes_the_map_entries_of_what_it_moves() {
    let cap = tiny_ssd(&[]).capacity_bytes();
    let n = 60_000;
    let (_, _, _, d) = random_writes(&[SMALL_CACHE], cap, n);
    let c = d.map_cache_counters().unwrap();
    let copied = d.ftl().counters().gc_copied_ius + d.ftl().counters().slc_folded_ius;
    // The host's look-ups: one per 128 KiB write of the fill (32 IUs of a page's 1,024)
    // and one per 4 KiB write.
    let host = cap.div_ceil(128 << 10) + 2 * n;
    let by_relocation = c.hits + c.misses - host;
    // Every victim's copies look up their translation pages, each page once per victim
    // however many of its entries moved.
    assert!(copied > n, "GC copied {copied}");
    assert!(by_relocation > 0, "{c:?}");
    assert!(
        by_relocation < copied,
        "{by_relocation} look-ups for {copied} copies"
    );
    // Random data: a victim's copies fall on many of the 245 pages.
    assert!(
        by_relocation * 20 > copied,
        "{by_relocation} look-ups for {copied} copies"
    );
}

#[test]
fn random_writes_over_a_span_whose_map_fits_run_as_with_the_whole_map() {
    // 64 MB: 16 translation pages, all cached after the first touch of each.
    let span = 64_000_000;
    let n = 30_000;
    let (iops_whole, nand_whole, _, _) = random_writes(&[], span, n);
    let (iops_paged, nand_paged, _, paged) = random_writes(&[SMALL_CACHE], span, n);
    let c = paged.map_cache_counters().unwrap();
    // The fill pages the whole map through the cache once (every page loaded, changed and
    // evicted in turn); the random writes then load their 16 pages once and always hit, but
    // for the pages of the little cold data the SLC cache's fold and GC move (their entries
    // change too).
    assert!(c.misses <= 245 + 16 + 32, "{c:?}");
    assert!(c.hits >= 2 * n - 16, "{c:?}");
    let rel = |a: f64, b: f64| (a - b).abs() / b;
    assert!(
        rel(iops_paged, iops_whole) < 0.02,
        "IOPS {iops_paged:.0} vs {iops_whole:.0}"
    );
    assert!(
        rel(nand_paged as f64, nand_whole as f64) < 0.02,
        "NAND IUs {nand_paged} vs {nand_whole}"
    );
}

#[test]
fn reads_that_miss_wait_for_their_translation_page() {
    let cap = tiny_ssd(&[]).capacity_bytes();
    let mut lat = Vec::new();
    for sets in [&[][..], &[SMALL_CACHE][..]] {
        let mut d = tiny_ssd(sets);
        let mut t = fill(&mut d);
        let mut rng = RngStream::from_seed_u64(5);
        let mut total_ns = 0;
        // QD1: each read's latency is its own.
        for _ in 0..2_000 {
            t += 1_000_000;
            let c = d
                .submit(t, &IoRequest::read(rng.below(cap / 4096) * 4096, 4096))
                .unwrap();
            total_ns += c.done_ns - t;
        }
        lat.push(total_ns / 2_000);
        if sets.is_empty() {
            assert!(d.map_cache_counters().is_none());
        } else {
            let c = d.map_cache_counters().unwrap();
            assert!(c.translation_reads > 1_500, "{c:?}");
            // Reads change no entry: what is written back was changed by the fill (every
            // page once) or by the fold of the SLC cache that followed it (moved data's
            // entries change: each page at most once more).
            assert!(c.translation_writes <= 2 * 245, "{c:?}");
        }
    }
    // One more NAND read (tR 50 us on this drive) ahead of most reads.
    assert!(lat[1] > lat[0] + 35_000, "mean latency {lat:?} ns");
}

#[test]
fn a_map_cache_too_small_or_as_large_as_the_map_is_handled() {
    let load = |v: &str| {
        load_device_config(
            "tiny-test-1gb",
            &[("controller.map_cache".to_string(), format!("\"{v}\""))],
        )
    };
    let err = load("32KiB").unwrap_err().to_string();
    assert!(err.contains("controller.map_cache"), "{err}");
    assert!(err.contains("64KiB"), "{err}");
    // A cache holding the whole map (~1 MB) changes nothing.
    let cfg = load("2MB").unwrap();
    let d = Ssd::new(&cfg, flashlab_engine::SeedTree::new(1)).unwrap();
    assert!(d.map_cache_counters().is_none());
    let described = load("128KB").unwrap().describe();
    assert!(described.contains("map_cache_bytes"), "{described}");
    assert!(described.contains("paged"), "{described}");
}

#[test]
fn a_slice_keeps_the_drives_share_of_cached_translation_pages() {
    let model = |scale: &str, cache: &str| {
        load_device_config(
            "intel-ssd-710-200gb",
            &[
                ("sim.scale".to_string(), scale.to_string()),
                ("controller.map_cache".to_string(), format!("\"{cache}\"")),
            ],
        )
        .map(|c| c.resolve().unwrap())
    };
    let full = model("1", "64MB").unwrap().map_cache.unwrap();
    let slice = model("0.04", "64MB").unwrap().map_cache.unwrap();
    // 64 MB of 4 KiB pages out of a 195 MB map: 15,625 of 47,684.
    assert_eq!((full.slots, full.pages), (15_625, 47_684));
    let share = |m: flashlab_device::model::MapCacheModel| m.slots as f64 / m.pages as f64;
    assert!(
        (share(slice) - share(full)).abs() < 0.01,
        "{slice:?} vs {full:?}"
    );
    // The smallest cache the drive takes leaves a 0.04 slice too few pages: the error says
    // which key and that a larger slice helps.
    match model("0.04", "64KiB") {
        Err(flashlab_device::ConfigError::Invalid { key, valid, .. }) => {
            assert_eq!(key, "controller.map_cache");
            assert!(valid.contains("sim.scale"), "{valid}");
        }
        other => panic!("want an invalid-key error, got {other:?}"),
    }
    assert!(model("1", "64KiB").unwrap().map_cache.is_some());
}
