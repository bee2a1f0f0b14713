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
    // side by side (8 planes busy on average), not with one victim after another (that would
    // keep 3 planes busy on average and leave 1,219 of 2,185 operations held at the end).
    // Operations go to the dies one at a time until the die of the oldest one left is booked
    // to the gap's end: the few dozen left wait for the next idle time.
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
    assert!(
        left < 100,
        "{left} of {held} held operations left after the idle gap"
    );
    // The work ran on many planes at once: more than four planes' worth of the gap.
    assert!(
        busy > 4 * gap_ns,
        "{busy} ns of plane time in a {gap_ns} ns gap"
    );
}

/// Idle work yields to the host an operation at a time: when the host comes back, each die
/// has at most one idle-time operation still running (the longest is an erase, 3.5 ms on the
/// tiny drive, or a 600 us program and the read its data wait for), never the rest of the
/// piece it belongs to. Folds of superblock stripes given to the dies whole, a piece after
/// another while the first die of the next was free, made the slowest of these reads wait
/// 128 ms.
#[test]
fn idle_work_books_at_most_one_operation_per_die_past_the_host_return() {
    let mut d = tiny_ssd(&[]);
    // 200 MB into the dynamic SLC cache (a quarter of the drive): folds for idle time.
    let len = 200u64 << 20;
    let mut off = 0;
    let t = run_qd(&mut d, 0, 32, || {
        (off < len).then(|| {
            off += 128 << 10;
            IoRequest::write(off - (128 << 10), 128 << 10)
        })
    });
    let folded =
        |d: &flashlab_device::Ssd| d.counters_json()["ftl"]["slc_folded_ius"].as_u64().unwrap();
    assert_eq!(folded(&d), 0, "folded while the host wrote");
    // The drive starts idle work 10 ms after its last completion, once its dies are idle;
    // the host comes back within a millisecond of the first fold.
    let mut back = t + 10_000_000;
    while folded(&d) == 0 {
        back += 1_000_000;
        assert!(back < t + 1_000_000_000, "no fold in a second of idle time");
        d.idle(t, back);
    }
    let mut worst = 0;
    for i in 0..8 {
        let c = d
            .submit(back, &IoRequest::read(i * (len / 8), 4096))
            .unwrap();
        worst = worst.max(c.done_ns - back);
    }
    println!(
        "slowest of 8 reads after the idle window: {:.2} ms; {} operations held",
        worst as f64 / 1e6,
        held_ops(&d)
    );
    // One erase (3.5 ms) or one program with its data's read, then the read itself.
    assert!(
        worst < 5_000_000,
        "a read waited {worst} ns behind idle work"
    );
}
