//! Intel's timed-workload endurance indicators (SMART E2h media wear, E3h host reads, E4h
//! timer) in the health log: held at FFFFh for the first hour after a reset, then the wear and
//! the read share of what ran since the reset.

mod common;

use flashlab_engine::{BlockDevice, IoRequest, RngStream};

const NOT_YET: u64 = 0xFFFF;
const MINUTE_NS: u64 = 60_000_000_000;

fn timed(d: &flashlab_device::Ssd) -> (u64, u64, u64) {
    let h = &d.counters_json()["health"];
    let get = |k: &str| h[k].as_u64().unwrap();
    (
        get("timed_workload_media_wear"),
        get("timed_workload_host_reads_percent"),
        get("timed_workload_minutes"),
    )
}

#[test]
fn the_indicators_read_nothing_for_an_hour_then_the_wear_and_reads_since_the_reset() {
    let sets = [("nand.pe_cycles", "100")];
    let mut d = common::tiny_ssd(&sets);
    assert_eq!(timed(&d), (NOT_YET, NOT_YET, 0));
    let ius = d.capacity_bytes() / 4096;

    // Wear before the reset does not count.
    let mut rng = RngStream::from_seed_u64(3);
    let mut left = 2 * ius;
    let end = common::run_qd(&mut d, 0, 32, || {
        left = left.checked_sub(1)?;
        Some(IoRequest::write(rng.below(ius) * 4096, 4096))
    });
    d.reset_timed_workload();
    let avg_at_reset = d.ftl().erase_count_summary().avg();
    assert!(avg_at_reset > 0.0);

    // Since the reset: three writes to each read, then the drive sits idle to the hour.
    let (mut left, mut k) = (4 * ius, 0u64);
    let end = common::run_qd(&mut d, end, 32, || {
        left = left.checked_sub(1)?;
        k += 1;
        let at = rng.below(ius) * 4096;
        Some(if k % 4 == 0 {
            IoRequest::read(at, 4096)
        } else {
            IoRequest::write(at, 4096)
        })
    });
    let (_, _, minutes) = timed(&d);
    assert!(minutes < 60, "{minutes} minutes of random I/O");
    assert_eq!(timed(&d).0, NOT_YET);
    d.idle(end, end + 61 * MINUTE_NS);
    let (wear, reads, minutes_after) = timed(&d);
    assert!(
        (61..=62 + minutes).contains(&minutes_after),
        "{minutes_after} minutes"
    );
    assert_eq!(reads, 25);
    let worn = d.ftl().erase_count_summary().avg() - avg_at_reset;
    assert!(worn > 1.0, "{worn} erases per block");
    assert_eq!(wear, (worn / 100.0 * 100.0 * 1024.0) as u64);

    // A secure erase keeps the timer running and the wear counting (its own erases add to
    // it); a new reset starts them again.
    d.format(end + 62 * MINUTE_NS);
    let (wear_after_format, _, minutes_after_format) = timed(&d);
    assert!(wear_after_format >= wear && minutes_after_format > minutes_after);
    d.reset_timed_workload();
    assert_eq!(timed(&d), (NOT_YET, NOT_YET, 0));
}
