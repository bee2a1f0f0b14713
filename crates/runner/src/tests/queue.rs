//! Filling the queue: depth against a bandwidth limit, the device's queue limit and the
//! host queue, `iodepth_low`, `iodepth_batch_*`, and the flushes of `fsync`, `fdatasync`
//! and `end_fsync`.

use super::*;

#[test]
fn iops_scale_with_queue_depth_until_the_bandwidth_limit() {
    // 100 us per I/O: each slot completes 1,000 I/Os in 100 ms.
    for qd in [1u32, 4, 16] {
        let mut dev = FakeDevice::new(100 * NS_PER_US);
        let s = run(vec![timed("qd", qd, 100 * NS_PER_MS)], &mut dev);
        assert_near(s[0].measured_ios[0] as f64, qd as f64 * 1000.0, 0.01, "ios");
        assert_eq!(dev.max_in_device, qd as usize);
    }
    // 400 MB/s caps 4 KiB reads at 97,656 IOPS, well below 32 / 100 us.
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    dev.link_bytes_per_s = Some(400_000_000);
    let s = run(vec![timed("bw", 32, 100 * NS_PER_MS)], &mut dev);
    assert_near(
        s[0].measured_ios[0] as f64,
        9765.6,
        0.02,
        "bandwidth-bound ios",
    );
}

#[test]
fn device_queue_limit_holds_the_rest_in_the_host_queue() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    dev.qd_limit = 4;
    let (result, s) = run_seeded(vec![timed("q", 16, 100 * NS_PER_MS)], &mut dev, 1);
    assert_eq!(dev.max_in_device, 4);
    assert_near(s[0].measured_ios[0] as f64, 4000.0, 0.01, "ios");
    // Waiting in the host queue counts as completion latency: slat stays the device's
    // acceptance cost, and total latency is four device round trips.
    let job = &result.jobs[0];
    let slat = job.slat_ns(0).expect("slat");
    assert_eq!((slat.min, slat.max), (500, 500));
    assert_near(job.lat_ns(0).unwrap().mean, 400_000.0, 0.01, "lat");
    assert_near(job.clat_ns(0).unwrap().mean, 399_500.0, 0.01, "clat");
}

#[test]
fn fsync_sends_a_flush_every_n_writes() {
    let mut dev = FakeDevice::new(20 * NS_PER_US);
    let job = {
        let mut j = spec("fsync");
        j.io.rw = RwPattern::Write;
        j.target.size = Some(SizeSpec::Bytes(1 << 20));
        j.sync.fsync_every = 8;
        j.engine.iodepth = 4;
        j
    };
    let (result, s) = run_seeded(vec![job], &mut dev, 1);
    assert_eq!(s[0].measured_ios[1], 256);
    assert_eq!(s[0].flushes, 32);
    assert_eq!(dev.kinds[3], 32);
    // Flushes are reported as syncs, not as writes.
    assert_eq!(result.jobs[0].total_ios(1), 256);
}

#[test]
fn end_fsync_flushes_once_after_the_last_write() {
    let mut dev = FakeDevice::new(20 * NS_PER_US);
    let job = {
        let mut j = spec("end");
        j.io.rw = RwPattern::Write;
        j.target.size = Some(SizeSpec::Bytes(64 << 10));
        j.sync.end_fsync = true;
        j
    };
    let s = run(vec![job], &mut dev);
    assert_eq!(s[0].measured_ios[1], 16);
    assert_eq!(s[0].flushes, 1);
    // 16 writes then the flush, one at a time.
    assert_eq!(s[0].end_ns, 17 * 20 * NS_PER_US);
}

#[test]
fn iodepth_low_lets_the_queue_drain_before_it_is_refilled() {
    // Completions come one per 10 us through a serial link, each 10 us after its transfer.
    // Kept full (the default), 16 I/Os are in the device at every completion; with
    // iodepth_low=4 the queue drains to 4 before 12 more are issued at once, so fewer are
    // in flight on average and each waits less.
    let run = |low: Option<u32>| {
        let mut dev = FakeDevice::new(10 * NS_PER_US);
        dev.link_bytes_per_s = Some(4096 * 100_000);
        let job = {
            let mut j = timed("low", 16, 100 * NS_PER_MS);
            j.engine.iodepth_low = low;
            j
        };
        let (result, _) = run_seeded(vec![job], &mut dev, 1);
        let j = job_json(&result, 0);
        (
            j["read"]["lat_ns"]["mean"].as_f64().unwrap(),
            j["read"]["iops"].as_f64().unwrap(),
        )
    };
    let (full_lat, full_iops) = run(None);
    let (low_lat, low_iops) = run(Some(4));
    assert_near(
        full_lat,
        160_000.0,
        0.05,
        "kept full: 16 I/Os ahead at 10 us each",
    );
    assert!(
        low_lat < 0.75 * full_lat,
        "drained: {low_lat} against {full_lat}"
    );
    // The link stays busy either way (4 in flight cover its 10 us per I/O).
    assert_near(low_iops, full_iops, 0.05, "throughput");
    // iodepth_low = iodepth is the default, and fio takes 0 for it too (fixup_options).
    assert_eq!(run(Some(16)).0, full_lat);
    assert_eq!(run(Some(0)).0, full_lat);
}

/// A 16-deep random-read job on a serial link (one completion per 10 us, each 10 us after
/// its transfer), with fio's batch options: mean total latency, IOPS and the JSON
/// distributions.
fn batched_run(submit: u32, min: u32, max: u32, low: Option<u32>) -> (f64, f64, serde_json::Value) {
    let mut dev = FakeDevice::new(10 * NS_PER_US);
    dev.link_bytes_per_s = Some(4096 * 100_000);
    let job = {
        let mut j = timed("batch", 16, 100 * NS_PER_MS);
        j.engine.iodepth_batch_submit = submit;
        j.engine.iodepth_batch_complete_min = min;
        j.engine.iodepth_batch_complete_max = max;
        j.engine.iodepth_low = low;
        j
    };
    let (result, _) = run_seeded(vec![job], &mut dev, 1);
    let j = job_json(&result, 0);
    (
        j["read"]["lat_ns"]["mean"].as_f64().unwrap(),
        j["read"]["iops"].as_f64().unwrap(),
        j,
    )
}

#[test]
fn iodepth_batch_complete_min_refills_the_queue_in_batches() {
    let (full_lat, full_iops, _) = batched_run(1, 1, 0, None);
    assert_near(
        full_lat,
        160_000.0,
        0.05,
        "kept full: 16 ahead at 10 us each",
    );
    // Once full, fio waits for 4 completions and refills 4 behind the 12 left: they finish
    // 130, 140, 150 and 160 us later.
    let (lat, iops, j) = batched_run(1, 4, 0, None);
    assert_near(lat, 145_000.0, 0.02, "refilled 4 at a time");
    assert_near(iops, full_iops, 0.01, "the link stays busy");
    // Each reap takes 4 (fio's 1-4 bucket); depths 13-15 at commit fall in fio's 8-15
    // bucket, 16 in 16-31: 3 to 1.
    assert_near(
        j["iodepth_level"]["8"].as_f64().unwrap(),
        75.0,
        0.01,
        "IO depths 8",
    );
    assert_near(
        j["iodepth_level"]["16"].as_f64().unwrap(),
        25.0,
        0.01,
        "IO depths 16",
    );
    assert_near(
        j["iodepth_complete"]["4"].as_f64().unwrap(),
        100.0,
        0.01,
        "reaps",
    );
    // Completions come one at a time here, so a larger maximum reaps no more.
    assert_eq!(batched_run(1, 4, 16, None).0, lat);
    // 0 counts as 1: fio's default.
    assert_eq!(batched_run(1, 0, 0, None).0, full_lat);
}

#[test]
fn iodepth_batch_submit_changes_the_distributions_not_the_queue() {
    let (full_lat, _, _) = batched_run(1, 1, 0, None);
    // fio commits what it queued before it waits for a completion: with no host time the
    // device sees each I/O when it is drawn.
    let (lat, _, j) = batched_run(8, 1, 0, None);
    assert_eq!(lat, full_lat);
    // After the first fill, fio's counter of queued I/Os (reset only by a batch commit)
    // commits 8 at a time at depth 16; the engine gets them one per wait.
    assert!(j["iodepth_level"]["16"].as_f64().unwrap() > 99.0, "{j}");
    assert!(j["iodepth_submit"]["4"].as_f64().unwrap() > 99.0, "{j}");
    // Reaping 8 at a time, the engine gets 8 per commit.
    let (_, _, j) = batched_run(8, 8, 0, None);
    assert_near(
        j["iodepth_submit"]["8"].as_f64().unwrap(),
        100.0,
        0.01,
        "submit 8",
    );
    assert!(j["iodepth_complete"]["8"].as_f64().unwrap() > 99.0, "{j}");
    // 0 submits the whole depth at once.
    let (_, _, j) = batched_run(0, 16, 0, None);
    assert_near(
        j["iodepth_submit"]["16"].as_f64().unwrap(),
        100.0,
        0.01,
        "submit 16",
    );
}

#[test]
fn iodepth_batch_complete_min_with_iodepth_low_drains_in_batches() {
    // fio 3.33 with libaio, iodepth=32, iodepth_low=4, iodepth_batch_complete_min=8 printed
    // IO depths 1=3.1%, 2=6.2%, 4=12.5%, 8=25.0%, 16=50.0%, 32=3.1% and complete 8=100%:
    // the queue drains 8 at a time past 4 down to 0, then refills from 1 to 32.
    let mut dev = FakeDevice::new(10 * NS_PER_US);
    dev.link_bytes_per_s = Some(4096 * 100_000);
    let job = {
        let mut j = timed("batch", 32, 100 * NS_PER_MS);
        j.engine.iodepth_batch_complete_min = 8;
        j.engine.iodepth_low = Some(4);
        j
    };
    let (result, _) = run_seeded(vec![job], &mut dev, 1);
    let j = job_json(&result, 0);
    for (key, pct) in [
        ("1", 3.125),
        ("2", 6.25),
        ("4", 12.5),
        ("8", 25.0),
        ("16", 50.0),
        ("32", 3.125),
    ] {
        assert_near(j["iodepth_level"][key].as_f64().unwrap(), pct, 0.01, key);
    }
    assert_near(
        j["iodepth_complete"]["8"].as_f64().unwrap(),
        100.0,
        0.01,
        "reaps of 8",
    );
}

#[test]
fn fdatasync_flushes_every_n_writes_apart_from_fsync() {
    let job = {
        let mut j = spec("sync");
        j.io.rw = RwPattern::RandWrite;
        j.target.number_ios = Some(100);
        j.sync.fdatasync_every = 10;
        j.sync.fsync_every = 25;
        j
    };
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let s = run(vec![job], &mut dev);
    // 10 fdatasyncs and 4 fsyncs; at writes 50 and 100 both fall due and one flush serves.
    assert_eq!(dev.kinds[3], 12);
    assert_eq!(s[0].flushes, 12);
}

#[test]
fn serialize_overlap_keeps_overlapping_ios_apart() {
    // Random 4 KiB writes over 16 KiB at depth 4: without the guard, I/Os to the same block
    // are in flight together; with it, none is, every I/O still runs, and the queue runs
    // shallower.
    let job = |serialize_overlap| {
        let mut j = spec("so");
        j.io.rw = RwPattern::RandWrite;
        j.engine.iodepth = 4;
        j.target.size = Some(SizeSpec::Bytes(16_384));
        j.target.io_size = Some(SizeSpec::Bytes(400 * 4096));
        j.io.norandommap = true;
        j.engine.serialize_overlap = serialize_overlap;
        j
    };
    let mut free = FakeDevice::new(100 * NS_PER_US);
    let loose = run(vec![job(false)], &mut free);
    assert!(
        free.overlapping_submits > 50,
        "{}",
        free.overlapping_submits
    );
    let mut guarded = FakeDevice::new(100 * NS_PER_US);
    let (result, s) = run_seeded(vec![job(true)], &mut guarded, 1);
    assert_eq!(guarded.overlapping_submits, 0);
    assert_eq!(s[0].measured_ios[1], 400);
    assert_eq!(loose[0].measured_ios[1], 400);
    // Shallower: at 100 us an I/O, 400 I/Os take longer than the 10 ms of a full queue.
    assert!(
        result.jobs[0].runtime_ms(1) > 10,
        "{}",
        result.jobs[0].runtime_ms(1)
    );
    // An I/O the rate holds back is not yet in flight: it guards nothing until issued.
    let mut paced = FakeDevice::new(100 * NS_PER_US);
    let rated = {
        let mut j = job(true);
        j.rate.rate_iops = [0, 30_000, 0];
        j
    };
    let s = run(vec![rated], &mut paced);
    assert_eq!((s[0].measured_ios[1], paced.overlapping_submits), (400, 0));
}
