//! Blocks failing with wear (`nand.grown_bad_at_rated`, `nand.grown_bad_shape`): a block whose
//! erase fails is retired and a block of the bad-block reserve takes its place; once the
//! reserve is gone the spare shrinks, and the drive turns read-only before garbage collection
//! runs out of room. The health log follows it as an NVMe drive's does.

mod common;

use flashlab_device::Ssd;
use flashlab_engine::{BlockDevice, DeviceError, IoRequest, RngStream};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The tiny drive rated for 30 P/E cycles, with a 3% reserve.
const WEARING: &[(&str, &str)] = &[
    ("nand.pe_cycles", "30"),
    ("nand.bad_block_reserve", "0.03"),
    ("capacity.user", "\"900MB\""),
];

/// QD32 4 KiB random writes from `start_ns` until `passes` times the capacity is written or
/// the drive refuses one; returns the refusal, if any, and the last completion.
fn random_writes(d: &mut Ssd, start_ns: u64, passes: u64) -> (Option<DeviceError>, u64) {
    let ius = d.capacity_bytes() / 4096;
    let mut rng = RngStream::from_seed_u64(5);
    let mut inflight: BinaryHeap<Reverse<u64>> = (0..32).map(|_| Reverse(start_ns)).collect();
    let (mut left, mut end) = (passes * ius, start_ns);
    while let Some(Reverse(t)) = inflight.pop() {
        end = end.max(t);
        if left == 0 {
            continue;
        }
        left -= 1;
        match d.submit(t, &IoRequest::write(rng.below(ius) * 4096, 4096)) {
            Ok(c) => inflight.push(Reverse(c.done_ns)),
            Err(e) => return (Some(e), end),
        }
    }
    (None, end)
}

fn health(d: &Ssd) -> serde_json::Value {
    d.counters_json()["health"].clone()
}

#[test]
fn a_fresh_drive_reports_its_whole_spare_and_no_warning() {
    let d = common::tiny_ssd(WEARING);
    let h = health(&d);
    assert_eq!(h["available_spare"], 100);
    assert_eq!(h["critical_warning"], 0);
    assert_eq!(h["grown_bad_blocks"], 0);
    assert_eq!(
        h["bad_block_reserve_left_blocks"],
        h["bad_block_reserve_blocks"]
    );
    assert_eq!(h["read_only"], false);
}

#[test]
fn wear_draws_down_the_spare_until_the_drive_turns_read_only() {
    let mut d = common::tiny_ssd(WEARING);
    let reserve = health(&d)["bad_block_reserve_blocks"].as_u64().unwrap();
    assert!(reserve >= 10, "{reserve} reserve blocks");
    let mut t = common::fill_sequentially(&mut d, 0);
    // Available spare after each few passes: it only falls, and blocks fail only once the
    // erase counts approach the rating.
    let mut spare = vec![100];
    let mut refusal = None;
    for _ in 0..40 {
        let (e, end) = random_writes(&mut d, t, 2);
        t = end;
        let h = health(&d);
        spare.push(h["available_spare"].as_u64().unwrap());
        if e.is_some() {
            refusal = e;
            break;
        }
    }
    println!("available spare by step: {spare:?}");
    assert!(spare.windows(2).all(|w| w[1] <= w[0]), "{spare:?}");
    assert!(spare.iter().any(|&s| 0 < s && s < 100), "{spare:?}");
    let Some(DeviceError::ReadOnly { reason }) = refusal else {
        panic!("the drive never refused a write: {refusal:?}, spare {spare:?}");
    };
    assert!(
        reason.contains("failed with wear") && reason.contains("30 rated P/E cycles"),
        "{reason}"
    );
    let h = health(&d);
    println!("{h}");
    assert_eq!(h["read_only"], true);
    assert_eq!(h["available_spare"], 0);
    assert_eq!(h["bad_block_reserve_left_blocks"], 0);
    assert!(h["grown_bad_blocks"].as_u64().unwrap() > reserve);
    // Bits 0 (spare below threshold), 2 (reliability degraded) and 3 (read-only).
    assert_eq!(h["critical_warning"], 0b1101);
    // The average erase count is past the rating: with the default Weibull life (1% failed
    // at the rated cycles, shape 3) failures gather beyond it.
    assert!(h["erase_count_avg"].as_f64().unwrap() > 30.0, "{h}");
    // Reads still work on a read-only drive.
    assert!(d.submit(t, &IoRequest::read(0, 4096)).is_ok());
}

#[test]
fn without_wear_out_failures_blocks_never_fail() {
    let mut sets = WEARING.to_vec();
    sets.push(("nand.grown_bad_at_rated", "0"));
    let mut d = common::tiny_ssd(&sets);
    let t = common::fill_sequentially(&mut d, 0);
    let (e, _) = random_writes(&mut d, t, 30);
    assert!(e.is_none(), "{e:?}");
    let h = health(&d);
    assert!(h["erase_count_avg"].as_f64().unwrap() > 60.0, "{h}");
    assert_eq!(h["grown_bad_blocks"], 0);
    assert_eq!(h["available_spare"], 100);
}

#[test]
fn out_of_range_wear_out_settings_are_refused_by_name() {
    for (key, value, valid) in [
        ("nand.grown_bad_at_rated", "0.7", "[0, 0.5]"),
        ("nand.grown_bad_at_rated", "-0.1", "[0, 0.5]"),
        ("nand.grown_bad_shape", "0.1", "[0.5, 10]"),
    ] {
        let sets = vec![(key.to_string(), value.to_string())];
        let e = flashlab_device::load_device_config("tiny-test-1gb", &sets)
            .and_then(|c| Ssd::new(&c, flashlab_engine::SeedTree::new(1)).map(|_| ()))
            .unwrap_err()
            .to_string();
        assert!(e.contains(key) && e.contains(valid), "{e}");
    }
}

#[test]
fn power_off_retention_falls_with_the_most_worn_block_and_with_temperature() {
    use flashlab_media::Retention;
    let mut d = common::tiny_ssd(WEARING);
    // New: a tenth of the rated cycles and below keep the data sheets' 10 years, at the client
    // class's 30 °C.
    assert_eq!(health(&d)["power_off_retention_days"], 3652.5);
    assert_eq!(health(&d)["power_off_retention_temperature_c"], 30.0);
    let (refused, _) = random_writes(&mut d, 0, 8);
    assert!(refused.is_none());
    let h = health(&d);
    let max = h["erase_count_max"].as_f64().unwrap();
    assert!(max > 3.0, "{max} erases");
    let days = h["power_off_retention_days"].as_f64().unwrap();
    assert_eq!(days, Retention::CLIENT.days(max / 30.0, 30.0));
    assert!(days < 3652.5, "{days}");

    // An enterprise drive holds its 3 months at 40 °C; stored 5 °C warmer, about half that.
    let hot = common::tiny_ssd(&[
        ("nand.retention_class", "\"enterprise\""),
        ("nand.retention_temperature_c", "45"),
    ]);
    let fresh_hot = health(&hot)["power_off_retention_days"].as_f64().unwrap();
    assert!((fresh_hot / 3652.5 - 0.5).abs() < 0.05, "{fresh_hot}");
    assert_eq!(health(&hot)["power_off_retention_temperature_c"], 45.0);
}

#[test]
fn data_left_unpowered_needs_read_retries_and_is_lost_past_its_retention_time() {
    let mut d = common::tiny_ssd(WEARING);
    let (refused, end) = random_writes(&mut d, 0, 8);
    assert!(refused.is_none());
    let read_all = |d: &mut Ssd, at: u64| -> Result<u64, DeviceError> {
        let mut t = at;
        let cap = d.capacity_bytes();
        let mut off = 0;
        while off < cap {
            let len = (128 << 10).min(cap - off);
            t = d.submit(t, &IoRequest::read(off, len))?.done_ns;
            off += len;
        }
        Ok(t)
    };
    // QD1 sequential reads of the whole drive, fresh.
    let fresh_end = read_all(&mut d, end).unwrap();
    let fresh = fresh_end - end;
    assert_eq!(health(&d)["read_retries"], 0);

    // Three quarters of the most worn block's retention time unpowered: retries, slower.
    let days = health(&d)["power_off_retention_days"].as_f64().unwrap();
    d.power_off(0.75 * days, 30.0);
    let aged_end = read_all(&mut d, fresh_end).unwrap();
    assert!(
        aged_end - fresh_end > fresh,
        "{} vs {fresh}",
        aged_end - fresh_end
    );
    assert!(health(&d)["read_retries"].as_u64().unwrap() > 0);
    assert_eq!(health(&d)["media_errors"], 0);

    // As long again, but 10 °C warmer (four times as fast): past it, the data is lost.
    d.power_off(0.75 * days / 4.0, 40.0);
    let Err(DeviceError::Uncorrectable { reason }) = read_all(&mut d, aged_end) else {
        panic!("the aged data read back");
    };
    assert!(reason.contains("past its retention time"), "{reason}");
    assert_eq!(health(&d)["media_errors"], 1);
}
