//! Where data lands decides how fast it reads back: a whole drive written sequentially reads
//! sequentially at the speed of its dies working together, whatever path the data took to
//! its final blocks.

mod common;

use common::{flashlab, job_file, stderr, stdout};
use serde_json::Value;

/// A sequential fill of the whole drive, two minutes idle (a cache folds meanwhile), then
/// sequential 128 KiB reads.
const FILL_IDLE_READ: &str = "\
[global]
direct=1
ioengine=libaio
[fill]
rw=write
bs=128k
iodepth=32
size=100%
[seq-read-128k]
stonewall
startdelay=120s
rw=read
bs=128k
iodepth=32
size=100%
time_based=1
ramp_time=1s
runtime=5s
";

/// The read step's bandwidth (KiB/s) and the SLC IUs folded over the run.
fn fill_idle_read(device: &str, set: &[&str]) -> (f64, u64) {
    let path = job_file("fill-idle-read.fio", FILL_IDLE_READ);
    let mut args = vec!["run", &path, "--device", device, "--output-format", "json"];
    for s in set {
        args.extend(["--set", s]);
    }
    let out = flashlab(&args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).expect("JSON parses");
    let read = doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == "seq-read-128k")
        .unwrap();
    let folded = doc["flashlab"]["device_counters"]["ftl"]["slc_folded_ius"]
        .as_u64()
        .unwrap();
    (read["read"]["bw"].as_f64().unwrap(), folded)
}

/// The default drive writes through its dynamic SLC cache and folds it into TLC blocks, one
/// block of one plane at a time. Its full drive read at 4.8 GB/s while the same drive without
/// the cache read at 6.4 GB/s: the folded copies of consecutive logical pages had come to
/// rest on one die.
#[test]
fn a_folded_full_drive_reads_sequentially_as_fast_as_one_written_without_a_cache() {
    let (cached_kib_s, folded) = fill_idle_read("generic-tlc-256gb", &[]);
    let (direct_kib_s, direct_folded) =
        fill_idle_read("generic-tlc-256gb", &["slc_cache.dynamic=false"]);
    assert!(folded > 0 && direct_folded == 0, "{folded} {direct_folded}");
    assert!(
        cached_kib_s >= 0.97 * direct_kib_s,
        "sequential read after folding {cached_kib_s} KiB/s, without the cache {direct_kib_s}"
    );
}
