//! The drive end to end on the small test preset: latencies, bandwidth bounds, write
//! amplification's effect on throughput, flush semantics, idle GC and errors.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use flashlab_device::{load_device_config, Ssd};
use flashlab_engine::{BlockDevice, DeviceError, IoRequest, RngStream, SeedTree};

const TINY: &str = "tiny-test-1gb";

fn ssd(sets: &[(&str, &str)]) -> Ssd {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let cfg = load_device_config(TINY, &sets).unwrap();
    Ssd::new(&cfg, SeedTree::new(7)).unwrap()
}

/// Closed loop at queue depth `qd` from `start_ns`: each completion issues the next request.
/// Returns (time of the last completion, sum of latencies).
fn run_qd(
    d: &mut Ssd,
    start_ns: u64,
    qd: usize,
    mut next: impl FnMut() -> Option<IoRequest>,
) -> (u64, u64) {
    let mut inflight: BinaryHeap<Reverse<u64>> = (0..qd).map(|_| Reverse(start_ns)).collect();
    let (mut end, mut lat) = (start_ns, 0);
    while let Some(Reverse(t)) = inflight.pop() {
        end = end.max(t);
        if let Some(req) = next() {
            let c = d.submit(t, &req).unwrap();
            assert!(c.done_ns >= c.accepted_ns && c.accepted_ns >= t);
            lat += c.done_ns - t;
            inflight.push(Reverse(c.done_ns));
        }
    }
    (end, lat)
}

fn seq_writes(cap: u64, bs: u64, bytes: u64) -> impl FnMut() -> Option<IoRequest> {
    let mut off = 0u64;
    move || {
        if off >= bytes {
            return None;
        }
        let at = off % cap;
        let r = IoRequest::write(at, bs.min(cap - at));
        off += bs;
        Some(r)
    }
}

#[test]
fn qd1_random_read_latency_is_tr_plus_transfers_plus_overhead() {
    // Random reads of 64 MiB would hit a read buffer now and then: this measures NAND reads.
    let mut d = ssd(&[
        ("slc_cache.dynamic", "false"),
        ("controller.read_buffer", "0B"),
        ("controller.read_ahead", "0B"),
    ]);
    let cap = d.capacity_bytes();
    let (t, _) = run_qd(&mut d, 0, 8, seq_writes(cap, 128 << 10, 64 << 20));
    let f = d.submit(t, &IoRequest::flush()).unwrap();
    let mut rng = RngStream::from_seed_u64(3);
    let mut now = f.done_ns + 1_000_000_000;
    // 5 us overhead (its mean: a quarter of it varies per command) + 50 us tR (the average
    // over a TLC word line's page types, 0.9 / 1.2 / 0.9 of it, each read within ±10% of its
    // type's: `flashlab_media::variation`) + 4 KiB over a 1.6 GB/s channel + 4 KiB over
    // 6.77 GB/s PCIe + the decoder's 1-20 iterations of 1 us (3.99 on average).
    let transfers = 4096.0 / 1.6 + 4096.0 / 6.774;
    let expect = 5_000.0 + 50_000.0 + transfers + 3_987.0;
    // The fastest: the overhead's fixed three quarters, the fastest page type's tR 10% short
    // and one decode iteration.
    let floor = 3_750.0 + 50_000.0 * 0.9 * 0.9 + transfers + 1_000.0;
    let mut lats = Vec::new();
    for _ in 0..400 {
        let off = rng.below((64 << 20) / 4096) * 4096;
        let c = d.submit(now, &IoRequest::read(off, 4096)).unwrap();
        let lat = (c.done_ns - now) as f64;
        assert!(lat > floor - 10.0, "latency {lat} ns, at least {floor}");
        lats.push(lat);
        now = c.done_ns + 10_000;
    }
    let mean = lats.iter().sum::<f64>() / lats.len() as f64;
    // The reads' spread (about 8.4 us) leaves the mean of 400 within about 0.4 us of it.
    assert!(
        (mean - expect).abs() < 2_000.0,
        "mean {mean} ns, expected {expect}"
    );
    let (min, max) = lats
        .iter()
        .fold((f64::MAX, 0f64), |(a, b), &l| (a.min(l), b.max(l)));
    assert!(max - min > 1_000.0, "no spread: {min}..{max}");
    // An unwritten range never touches NAND: controller and link only.
    let c = d.submit(now, &IoRequest::read(cap - 4096, 4096)).unwrap();
    let lat = (c.done_ns - now) as f64 - 4096.0 / 6.774;
    assert!(lat > 3_730.0 && lat < 20_000.0, "{lat}");
}

#[test]
fn slc_cached_reads_use_slc_timing() {
    let mut d = ssd(&[]);
    let cap = d.capacity_bytes();
    let (t, _) = run_qd(&mut d, 0, 4, seq_writes(cap, 64 << 10, 8 << 20));
    // Read as soon as the data is durable: after an idle gap, background folding would move
    // it out of the SLC cache (and the read could queue behind that work).
    let t = d.submit(t, &IoRequest::flush()).unwrap().done_ns;
    let c = d.submit(t, &IoRequest::read(1 << 20, 4096)).unwrap();
    let lat = (c.done_ns - t) as f64;
    // The command's time varies from 3.75 us up around its 5 us mean.
    let expect = 5_000.0 + 30_000.0 + 4096.0 / 1.6 + 4096.0 / 6.774;
    assert!(lat > expect - 1_270.0 && lat < expect + 15_000.0, "{lat}");
    assert!(
        d.counters_json()["health"]["slc_read_hits"]
            .as_u64()
            .unwrap()
            >= 1
    );
}

/// Program bandwidth of the tiny preset: 4 planes × 16 KiB / 600 us.
const TINY_PROGRAM_BPS: f64 = 4.0 * 16384.0 / 600e-6;

#[test]
fn sequential_write_bandwidth_is_bounded_by_program_bandwidth() {
    let mut d = ssd(&[("slc_cache.dynamic", "false")]);
    let cap = d.capacity_bytes();
    let bytes = 256u64 << 20;
    let (t, _) = run_qd(&mut d, 0, 32, seq_writes(cap, 128 << 10, bytes));
    let bw = bytes as f64 / (t as f64 * 1e-9);
    assert!(bw <= TINY_PROGRAM_BPS * 1.01, "{bw}");
    assert!(bw >= TINY_PROGRAM_BPS * 0.9, "{bw} vs {TINY_PROGRAM_BPS}");
    // And a link slower than the media becomes the bound: SATA 1.5 Gb/s ≈ 139 MB/s usable
    // is still above 109 MB/s, so use an efficiency that brings it under.
    let mut d = ssd(&[
        ("slc_cache.dynamic", "false"),
        ("link.kind", "sata-1.5g"),
        ("link.protocol_efficiency", "0.5"),
    ]);
    let (t, _) = run_qd(&mut d, 0, 32, seq_writes(cap, 128 << 10, 64 << 20));
    let bw = (64u64 << 20) as f64 / (t as f64 * 1e-9);
    assert!((75e6 * 0.95..=75e6 * 1.001).contains(&bw), "{bw}");
}

#[test]
fn steady_random_writes_are_slower_than_sequential_by_about_wa() {
    let mut d = ssd(&[("slc_cache.dynamic", "false"), ("buffer.size", "32MiB")]);
    let cap = d.capacity_bytes();
    let (mut t, _) = run_qd(&mut d, 0, 32, seq_writes(cap, 128 << 10, cap));
    let ius = cap / 4096;
    let mut rng = RngStream::from_seed_u64(11);
    // Random 4 KiB writes: one pass to reach steady state, then measure one more pass.
    for pass in 0..2 {
        let before = d.counters_json();
        let mut left = ius;
        let start = t;
        let (end, _) = run_qd(&mut d, t, 32, || {
            if left == 0 {
                return None;
            }
            left -= 1;
            Some(IoRequest::write(rng.below(ius) * 4096, 4096))
        });
        t = end;
        if pass == 1 {
            let after = d.counters_json();
            let host = after["ftl"]["host_write_ius"].as_u64().unwrap()
                - before["ftl"]["host_write_ius"].as_u64().unwrap();
            let nand = after["ftl"]["nand_write_ius"].as_u64().unwrap()
                - before["ftl"]["nand_write_ius"].as_u64().unwrap();
            let wa = nand as f64 / host as f64;
            let bw = (ius * 4096) as f64 / ((end - start) as f64 * 1e-9);
            let ratio = bw * wa / TINY_PROGRAM_BPS;
            // A die's planes program together and a GC read or an erase on one plane holds
            // the whole die: per host page at WA ~7.8, ~3.9 two-plane programs (2.35 ms)
            // against ~6.8 reads of 50 us and a share of an erase (~0.38 ms), so programs
            // can fill at most ~0.86 of die time; a few programs whose other plane's page was
            // not ready go alone (measured: 0.776; 0.860 while planes programmed on their
            // own and reads overlapped the other plane's programs). Victims taken from
            // successive units and transfers booked into channel gaps keep every die busy;
            // a large buffer keeps back-pressure from adding to that.
            assert!(wa > 2.0, "wa {wa}");
            assert!(
                (0.74..=0.87).contains(&ratio),
                "random {bw} B/s × WA {wa} vs program {TINY_PROGRAM_BPS}: {ratio}"
            );
        }
    }
}

#[test]
fn flush_without_plp_waits_for_programs_with_plp_does_not() {
    for plp in [false, true] {
        let mut d = ssd(&[("buffer.plp", if plp { "true" } else { "false" })]);
        let w = d.submit(0, &IoRequest::write(0, 4096)).unwrap();
        // A buffered write completes long before any program could.
        assert!(w.done_ns < 20_000, "{w:?}");
        let f = d.submit(w.done_ns, &IoRequest::flush()).unwrap();
        if plp {
            assert!(f.done_ns - w.done_ns < 10_000, "{f:?}");
        } else {
            // The data goes to the (SLC-mode) cache: at least an SLC program (200 us on
            // average, each within ±15% of it).
            assert!(f.done_ns - w.done_ns >= 170_000, "{f:?}");
        }
        let mut fua = IoRequest::write(8192, 4096);
        fua.fua = true;
        let c = d.submit(f.done_ns, &fua).unwrap();
        assert_eq!(c.done_ns - f.done_ns >= 170_000, !plp, "{c:?}");
    }
}

#[test]
fn buffer_back_pressure_limits_queued_writes() {
    // A burst of writes at one instant: the first buffer-full completes at once, the rest
    // wait for programs.
    let mut d = ssd(&[("slc_cache.dynamic", "false")]);
    let mut last = 0;
    for i in 0..2048u64 {
        last = d
            .submit(0, &IoRequest::write(i * 4096, 4096))
            .unwrap()
            .done_ns;
    }
    // 8 MiB through 109 MB/s of programs: ≥ 60 ms minus the 2 MiB buffer.
    assert!(last > 50_000_000, "{last}");
    assert!(
        d.counters_json()["health"]["buffer_wait_ns"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn idle_time_runs_background_gc() {
    let mut d = ssd(&[("slc_cache.dynamic", "false")]);
    let cap = d.capacity_bytes();
    let (t, _) = run_qd(&mut d, 0, 32, seq_writes(cap, 128 << 10, cap));
    let ius = cap / 4096;
    let mut rng = RngStream::from_seed_u64(5);
    let mut left = ius / 2;
    let (t, _) = run_qd(&mut d, t, 32, || {
        left = left.checked_sub(1)?;
        Some(IoRequest::write(rng.below(ius) * 4096, 4096))
    });
    let free_before = d.ftl().free_blocks();
    d.idle(t, t + 60_000_000_000);
    let free_after = d.ftl().free_blocks();
    assert!(free_after > free_before, "{free_before} -> {free_after}");
    // A read after the idle window is not delayed by work that started in it beyond one step.
    let c = d
        .submit(t + 60_000_000_000, &IoRequest::read(0, 4096))
        .unwrap();
    assert!(c.done_ns - (t + 60_000_000_000) < 200_000_000, "{c:?}");
}

#[test]
fn bad_requests_are_refused() {
    let mut d = ssd(&[]);
    let cap = d.capacity_bytes();
    assert_eq!(d.submit(0, &IoRequest::read(0, 0)), Err(DeviceError::Empty));
    assert!(matches!(
        d.submit(0, &IoRequest::read(cap, 4096)),
        Err(DeviceError::OutOfRange { .. })
    ));
    assert!(matches!(
        d.submit(0, &IoRequest::write(100, 512)),
        Err(DeviceError::Misaligned { .. })
    ));
    // Sub-IU writes are accepted (read-modify-write inside the drive).
    d.submit(0, &IoRequest::write(0, 4096)).unwrap();
    let flush = d.submit(0, &IoRequest::flush()).unwrap();
    d.submit(flush.done_ns, &IoRequest::write(512, 512))
        .unwrap();
    assert_eq!(d.queue_depth_limit(), 1024);
    assert_eq!(d.logical_block_bytes(), 512);
}

#[test]
fn same_inputs_same_completions() {
    let run = || {
        let mut d = ssd(&[]);
        let mut rng = RngStream::from_seed_u64(9);
        let mut out = Vec::new();
        let mut left = 20_000;
        run_qd(&mut d, 0, 16, || {
            left -= 1;
            (left > 0).then(|| {
                let off = rng.below(1 << 16) * 4096;
                if rng.below(3) == 0 {
                    IoRequest::read(off, 4096)
                } else {
                    IoRequest::write(off, 4096)
                }
            })
        });
        out.push(d.counters_json().to_string());
        out
    };
    assert_eq!(run(), run());
}

#[test]
fn health_log_counts_in_nvme_units() {
    let mut d = ssd(&[]);
    d.submit(0, &IoRequest::write(0, 512 * 1000)).unwrap();
    d.submit(0, &IoRequest::write(1 << 20, 4096)).unwrap();
    d.submit(0, &IoRequest::read(0, 4096)).unwrap();
    let h = d.counters_json()["health"].clone();
    // 516,096 bytes written = 1008 units of 512 B → 2 data units (rounded up).
    assert_eq!(h["data_units_written"], 2);
    assert_eq!(h["data_units_read"], 1);
    assert_eq!(h["host_write_commands"], 2);
    assert_eq!(h["host_read_commands"], 1);
    assert_eq!(h["percentage_used"], 0);
    assert_eq!(h["available_spare"], 100);
}

#[test]
fn scaled_drive_keeps_dies_and_shrinks_capacity() {
    let cfg = load_device_config(
        "generic-tlc-256gb",
        &[("sim.max_memory".to_string(), "64MiB".to_string())],
    )
    .unwrap();
    let d = Ssd::new(&cfg, SeedTree::new(1)).unwrap();
    let s = d.scale();
    // The GC pacing queue's ring (18 MB here, a fixed cost of the 32 units) comes out of the
    // budget before the mapping's share.
    assert!(s.capacity_factor > 9.0 && s.capacity_factor < 13.0, "{s:?}");
    assert_eq!(s.die_factor, 1.0);
    assert!(d.memory_bytes() < 70 << 20, "{}", d.memory_bytes());
    assert!(d.capacity_bytes() < 40_000_000_000);
}
