//! The host link carries read data in the order it is ready, not in submission order: a read
//! queued behind a busy plane must not hold up the transfer of a later read whose data is
//! ready first (that wait would grow with the commands in flight, so slices with fewer dies
//! would read faster than their drive).

mod common;

use common::tiny_ssd_seeded;
use flashlab_engine::{BlockDevice, IoRequest};

#[test]
fn a_read_ready_early_does_not_wait_for_one_queued_behind_a_busy_plane() {
    // Without the controller's read buffer: repeated reads of one IU must each go to the
    // plane, not wait for the first one's data in DRAM.
    let mut d = tiny_ssd_seeded(
        &[
            ("controller.read_buffer", "0B"),
            ("controller.read_ahead", "0B"),
        ],
        1,
    );
    // 1 MiB written sequentially: its pages are spread over every plane.
    let mut t = 0;
    for i in 0..8u64 {
        t = d
            .submit(t, &IoRequest::write(i << 17, 128 << 10))
            .unwrap()
            .done_ns;
    }
    // Let the programs finish.
    t += 1_000_000_000;
    // Eight reads of one IU queue on its plane: the last is ready ~8 tR later.
    let mut last_queued = 0;
    for _ in 0..8 {
        last_queued = d.submit(t, &IoRequest::read(0, 4096)).unwrap().done_ns;
    }
    // Reads of other IUs submitted after them, on other planes, finish first.
    let done: Vec<u64> = (1..64u64)
        .map(|k| {
            d.submit(t, &IoRequest::read(k * 16384, 4096))
                .unwrap()
                .done_ns
        })
        .collect();
    let earliest = *done.iter().min().unwrap();
    assert!(
        earliest < last_queued,
        "earliest later read done at {earliest} ns, the queued one at {last_queued} ns"
    );
}
