//! A host program to a free block whose erase still waits in the pacing queue sends only
//! that erase and the reads of the block before it to the dies, not every older queued
//! operation: a deep queue would otherwise hand the dies a burst of other victims' work
//! at once and run those victims' units far ahead of the rest.

mod common;

use common::{run_qd, tiny_ssd, MANY_UNITS};
use flashlab_engine::{BlockDevice, IoRequest, RngStream};

#[test]
fn a_program_waiting_for_a_queued_erase_releases_only_that_blocks_work() {
    let mut d = tiny_ssd(MANY_UNITS);
    let cap = d.capacity_bytes();
    let ius = cap / 4096;
    let mut off = 0;
    let t = run_qd(&mut d, 0, 32, || {
        (off < cap).then(|| {
            let len = (128 << 10).min(cap - off);
            off += len;
            IoRequest::write(off - len, len)
        })
    });
    let mut rng = RngStream::from_seed_u64(3);
    let mut left = 2 * ius;
    run_qd(&mut d, t, 32, || {
        (left > 0).then(|| {
            left -= 1;
            IoRequest::write(rng.below(ius) * 4096, 4096)
        })
    });
    let c = d.counters_json();
    let waits = c["media"]["host_waits_for_queued_erase"].as_u64().unwrap();
    let released = c["media"]["ops_released_for_queued_erases"]
        .as_u64()
        .unwrap();
    eprintln!("{waits} programs waited for a queued erase, {released} operations released");
    assert!(waits > 0, "the workload must reach a queued erase");
    // A block's reads (at most one per page, 48 pages) and its erase.
    assert!(
        released <= waits * 49,
        "{released} operations for {waits} erases"
    );
}
