//! Garbage collection is spread over host writes: after a sequential fill, QD1 random writes
//! never wait for a whole burst of victims (the FTL empties a dozen nearly full blocks at
//! once when free blocks reach the reserve; given to the dies at once, that is hundreds of
//! milliseconds of die time ahead of the host's next page program).

use flashlab_device::{load_device_config, Ssd};
use flashlab_engine::{BlockDevice, IoRequest, RngStream, SeedTree};
use flashlab_report::DDIR_WRITE;
use flashlab_runner::{run_jobs, RunOptions};
use flashlab_workload::parse_str;

fn tiny() -> Ssd {
    let cfg = load_device_config("tiny-test-1gb", &[]).unwrap();
    Ssd::new(&cfg, SeedTree::new(3)).unwrap()
}

/// Fill sequentially, then `ios` 4 KiB random writes at QD1; (latencies, end time).
fn qd1_writes(d: &mut Ssd, ios: usize) -> (Vec<u64>, u64) {
    let cap = d.capacity_bytes();
    let mut t = 0;
    let mut off = 0;
    while off < cap {
        let len = (128 << 10).min(cap - off);
        t = d.submit(t, &IoRequest::write(off, len)).unwrap().done_ns;
        off += len;
    }
    let start = t;
    let mut rng = RngStream::from_seed_u64(5);
    let mut lat = Vec::with_capacity(ios);
    for _ in 0..ios {
        let at = rng.below(cap / 4096) * 4096;
        let c = d.submit(t, &IoRequest::write(at, 4096)).unwrap();
        lat.push(c.done_ns - t);
        t = c.done_ns;
    }
    lat.sort_unstable();
    (lat, t - start)
}

#[test]
fn qd1_random_writes_after_a_fill_never_wait_for_a_whole_gc_burst() {
    let mut d = tiny();
    let (lat, elapsed_ns) = qd1_writes(&mut d, 40_000);
    let max = *lat.last().unwrap();
    let p999 = lat[lat.len() * 999 / 1000];
    let iops = lat.len() as f64 / (elapsed_ns as f64 * 1e-9);
    let media = d.counters_json()["media"].clone();
    eprintln!("max {max} ns, p99.9 {p999} ns, {iops:.0} IOPS, {media}");
    // tiny-test-1gb: tPROG 600 us, 4 units, 768-IU blocks. One victim of ~700 valid IUs is
    // ~175 page reads and programs: ~110 ms of die time spread over 4 units (~28 ms), and a
    // burst of a dozen such victims is ~340 ms. Spread over the host writes, a host page
    // program waits for its share (a few internal operations per unit) and the write buffer
    // absorbs the rest: the worst write stays under one victim's time per unit.
    // (Given to the dies at once: max 486 ms, p99.9 9.6 ms, 3,954 IOPS; spread: 7.9 ms,
    // 5.2 ms, 4,195 IOPS; spread, with the dynamic SLC cache sized as documented (a quarter
    // of the free blocks in SLC mode, not the larger share counted before): 8.0 ms, 6.1 ms,
    // 3,939 IOPS; with a die's planes programming together, a GC read or erase on one plane
    // holding the whole die: 7.2 ms, 5.5 ms, 3,690 IOPS, 96% of programs in two-plane
    // pairs.)
    assert!(max < 25_000_000, "max write latency {max} ns");
    assert!(p999 < 8_000_000, "p99.9 write latency {p999} ns");
    // Throughput is the media's, not lost to pacing.
    assert!(iops > 3_500.0, "{iops:.0} IOPS");
    // The erase of a block the host needs was done in time (or nearly always).
    assert!(
        media["host_waits_for_queued_erase"].as_u64().unwrap() <= 10,
        "{media}"
    );
    assert!(
        media["internal_ops_held_peak"].as_u64().unwrap() > 1_000,
        "{media}"
    );
}

/// `flashlab run` of a sequential fill, then 2 GiB of 4 KiB random writes at QD32 (fio's
/// random map: every block once per pass): (max, p99.9 write latency ns, write IOPS, WA).
fn qd32_random_writes_after_a_fill(d: &mut Ssd, seed: u64) -> (u64, u64, f64, f64) {
    let text = "[global]\nioengine=libaio\ndirect=1\n\n[fill]\nrw=write\nbs=128k\niodepth=32\n\
                size=100%\n\n[rand]\nstonewall\nrw=randwrite\nbs=4k\niodepth=32\nsize=100%\n\
                io_size=2g\n";
    let file = parse_str(text, "qd32.fio", &|_| None).unwrap();
    let r = run_jobs(
        &file,
        d,
        &RunOptions::new(seed, "pacing").with_host(flashlab_runner::host::HostModel::Off),
        &mut |_| {},
    )
    .unwrap();
    let j = r.jobs.last().unwrap();
    let max = j.clat_ns(DDIR_WRITE).unwrap().max;
    let p999 = j
        .clat_percentiles_ns(DDIR_WRITE)
        .iter()
        .find(|(p, _)| *p == 99.9)
        .unwrap()
        .1;
    let wa = d.counters_json()["write_amplification"].as_f64().unwrap();
    (max, p999, j.iops(DDIR_WRITE), wa)
}

#[test]
fn qd32_random_writes_after_a_fill_wait_for_the_next_erase_not_a_whole_queue() {
    let mut d = tiny();
    let (max, p999, iops, wa) = qd32_random_writes_after_a_fill(&mut d, 1);
    let media = d.counters_json()["media"].clone();
    eprintln!("max {max} ns, p99.9 {p999} ns, {iops:.0} IOPS, WA {wa:.3}, {media}");
    // In the first pass after the fill the greedy victims hold ~690 of 768 IUs: a host block
    // costs ~10 victims (~350 operations each, ~28 ms of die time per victim over 4 units).
    // Relocation takes free blocks as fast as victims free them, so at a turn of the host's
    // stripe every free block may still wait for its erase. A stripe slot whose unit has only
    // such blocks is passed over for the page (own-unit allocation), so no host program waits
    // for an erase; taking such a block instead, whose erase can sit behind most of the
    // queue, would hold writes for hundreds of milliseconds. The tail left is the relocation
    // needed to free blocks at all: the reserve of 6 free blocks (1.5 per unit) leaves no
    // erased block a stripe ahead. Measured with a die's planes programming together (reads
    // and erases on one plane hold the whole die): max 25.1 ms, p99.9 22.2 ms, 4,196 IOPS,
    // WA 3.665 (WA under fio's random map rises a few percent with own-unit allocation:
    // docs/scale.md).
    assert!(max < 40_000_000, "max write latency {max} ns");
    assert!(p999 < 25_000_000, "p99.9 write latency {p999} ns");
    assert!(iops > 4_000.0, "{iops:.0} IOPS");
    assert!(wa < 3.85, "WA {wa}");
    assert_eq!(
        media["host_waits_for_queued_erase"].as_u64().unwrap(),
        0,
        "{media}"
    );
}
