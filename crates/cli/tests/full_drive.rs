//! A full client drive is one state, however it got full: sequential writes past its SLC
//! cache run at one rate after one fill or after two (docs/validation.md, "Writing past the
//! cache on a full drive"); its random writes keep the static cache full of user data
//! ("Random writes on a full drive").

mod common;

use common::{flashlab, job_file, repo, stderr, stdout};
use serde_json::Value;

/// A small drive shaped like the PM981a (8 dies, two planes, TLC, a static and a dynamic
/// SLC cache), small enough to fill twice in seconds. Its dynamic cache may take half the
/// free room, so after one fill its blocks, left unfolded, would hold more than the spare
/// area and the next writes would fold them first (300,864 KiB/s for 2 s against 506,240
/// after two fills); with the cache folded as the fill takes its room, 375,616 and 365,376
/// (the cache folding while the host writes, the preset's `slc_cache.when_full`).
const SMALL_CLIENT: [&str; 6] = [
    "capacity.user=9GB",
    "nand.blocks_per_plane=32",
    "nand.bad_block_reserve=0",
    "slc_cache.static=256MB",
    "slc_cache.dynamic_max_fraction=0.5",
    "sim.scale=1",
];

/// The drive filled sequentially `passes` times, then 128 KiB sequential writes at QD32
/// past its cache: their rate in KiB/s.
fn write_after_fills(passes: u32) -> f64 {
    let text = format!(
        "\
[global]
ioengine=libaio
direct=1
size=100%
[fill]
rw=write
bs=128k
iodepth=32
loops={passes}
[seq-write-128k]
stonewall
rw=write
bs=128k
iodepth=32
time_based=1
runtime=2s
"
    );
    let path = job_file(&format!("full-drive-write-{passes}.fio"), &text);
    let mut args = vec![
        "run",
        &path,
        "--device",
        "samsung-pm981a-256gb",
        "--output-format",
        "json",
    ];
    for s in &SMALL_CLIENT {
        args.extend(["--set", s]);
    }
    let out = flashlab(&args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).expect("JSON parses");
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == "seq-write-128k")
        .unwrap()["write"]["bw"]
        .as_f64()
        .unwrap()
}

/// After one fill the dynamic cache's data must not be left to fold on the next writes (the
/// fill folds it as it takes the cache's room); after two the second fill found no cache
/// to speak of: both states write at the TLC rate.
#[test]
fn a_full_drive_writes_past_its_cache_at_one_rate_after_one_fill_or_two() {
    let (once, twice) = std::thread::scope(|s| {
        let once = s.spawn(|| write_after_fills(1));
        let twice = s.spawn(|| write_after_fills(2));
        (once.join().unwrap(), twice.join().unwrap())
    });
    println!("past the cache: {once} KiB/s after one fill, {twice} KiB/s after two");
    assert!(
        (once - twice).abs() <= 0.05 * twice,
        "past the cache: {once} KiB/s after one fill, {twice} KiB/s after two"
    );
}

/// The full PM981a's random writes in `client-full.fio` (after the sequential overwrite that
/// empties the static cache of the fill's data), on the smallest slice the drive allows: the
/// emptied static blocks take host writes again while the host writes, so the cache holds
/// user data the native blocks need not carry; left emptied until idle time, the cache's
/// footprint would go to GC. On this slice: 6,280 IOPS with the cache folding while the host
/// writes (the preset's setting), 6,956 writing straight to TLC past it; the study ~6,000.
#[test]
fn a_full_client_drives_random_writes_keep_its_static_cache_full() {
    let job = repo().join("jobs/validation/client-full.fio");
    let job = job.to_str().unwrap();
    let args = [
        "run",
        job,
        "--device",
        "samsung-pm981a-256gb",
        "--set",
        "sim.scale=0.16",
        "--output-format",
        "json",
    ];
    let out = flashlab(&args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).expect("JSON parses");
    let iops = doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == "rand-write-4k")
        .unwrap()["write"]["iops"]
        .as_f64()
        .unwrap();
    println!("full drive, 4 KiB random write: {iops:.0} IOPS");
    assert!(
        iops >= 5_500.0,
        "full drive, 4 KiB random write: {iops:.0} IOPS"
    );
}
