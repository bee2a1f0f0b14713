//! Idle time carries out the GC work the drive put off while the host wrote, on every die at
//! once: each held victim goes to the dies at the idle gap's start and queues behind what its
//! dies already have, so victims on different dies run side by side.

mod common;

use common::{fill_sequentially, run_qd, tiny_ssd, MANY_UNITS};
use flashlab_engine::{BlockDevice, IoRequest, RngStream};

/// The many-unit drive filled, then random writes until the pacing queue holds work; returns
/// the drive, the end of the writes and the operations held.
fn drive_with_held_work() -> (flashlab_device::Ssd, u64, u64) {
    let mut d = tiny_ssd(MANY_UNITS);
    let cap = d.capacity_bytes();
    let t = fill_sequentially(&mut d, 0);
    let ius = cap / 4096;
    let mut rng = RngStream::from_seed_u64(11);
    let mut left = ius;
    let t = run_qd(&mut d, t, 32, || {
        (left > 0).then(|| {
            left -= 1;
            IoRequest::write(rng.below(ius) * 4096, 4096)
        })
    });
    let held = held_ops(&d);
    (d, t, held)
}

fn held_ops(d: &flashlab_device::Ssd) -> u64 {
    d.counters_json()["media"]["internal_ops_held"]
        .as_u64()
        .unwrap()
}

#[test]
fn idle_time_drains_held_gc_work_on_every_die_at_once() {
    let (mut d, t, held) = drive_with_held_work();
    assert!(
        held > 1_000,
        "only {held} operations held after the random writes"
    );
    let busy_before = d.counters_json()["media"]["array_busy_ns"]
        .as_u64()
        .unwrap();
    // 100 ms of idle time: enough for the ~2,200 held operations with the 16 planes working
    // side by side (13 planes busy on average, the gap ending with idle GC beyond the held
    // work), not with one victim after another (that would keep 3 planes busy on average and
    // leave 1,219 of 2,185 operations held at the end).
    let gap_ns = 100_000_000;
    d.idle(t, t + gap_ns);
    let left = held_ops(&d);
    let busy = d.counters_json()["media"]["array_busy_ns"]
        .as_u64()
        .unwrap()
        - busy_before;
    println!(
        "{held} operations held; after {} ms idle {left} left, {:.1} ms of plane time \
         ({:.1} planes busy on average)",
        gap_ns / 1_000_000,
        busy as f64 / 1e6,
        busy as f64 / gap_ns as f64
    );
    assert_eq!(
        left, 0,
        "{left} of {held} held operations left after the idle gap"
    );
    // The work ran on many planes at once: more than four planes' worth of the gap.
    assert!(
        busy > 4 * gap_ns,
        "{busy} ns of plane time in a {gap_ns} ns gap"
    );
}
