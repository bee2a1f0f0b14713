//! Zoned namespaces (`[zns]`): zones written at their write pointers on blocks of their own,
//! reset by erasing them, with no garbage collection; the zone rules' errors.

mod common;

use flashlab_device::zoned::ZoneState;
use flashlab_device::Ssd;
use flashlab_engine::{BlockDevice, DeviceError, IoRequest, ZoneOp};

/// The tiny drive as one zoned namespace: 3 MiB blocks on 4 planes, 12 MiB zones.
fn zoned(extra: &[(&str, &str)]) -> Ssd {
    let mut sets = vec![("zns.enabled", "true")];
    sets.extend_from_slice(extra);
    common::tiny_ssd(&sets)
}

/// Write zone `zone` whole from its write pointer in `bs` writes at QD1 from `t`; returns
/// the last completion.
fn fill_zone(d: &mut Ssd, zone: u32, bs: u64, mut t: u64) -> u64 {
    let g = d.zones().unwrap();
    let start = u64::from(zone) * g.zone_bytes;
    let mut at = d.zone_write_pointer(zone).unwrap();
    while at < g.capacity_bytes {
        let n = bs.min(g.capacity_bytes - at);
        t = d
            .submit(t, &IoRequest::write(start + at, n))
            .unwrap()
            .done_ns;
        at += n;
    }
    t
}

fn status(r: Result<flashlab_engine::Completion, DeviceError>) -> (&'static str, i32) {
    match r {
        Err(DeviceError::Zone { status, errno, .. }) => (status, errno),
        other => panic!("expected a zone error, got {other:?}"),
    }
}

#[test]
fn zones_take_their_size_from_the_blocks_and_the_capacity_from_the_zones() {
    let d = zoned(&[]);
    let g = d.zones().unwrap();
    assert_eq!(g.capacity_bytes, 12 << 20);
    assert_eq!(g.zone_bytes, g.capacity_bytes);
    assert_eq!(g.zones, (1_000_000_000 / g.capacity_bytes) as u32);
    assert_eq!(d.capacity_bytes(), u64::from(g.zones) * g.zone_bytes);
    let d = zoned(&[("zns.zone_size", "\"16MiB\"")]);
    assert_eq!(
        d.capacity_bytes(),
        u64::from(d.zones().unwrap().zones) << 24
    );
    // A conventional drive has no zones and refuses zone commands.
    let mut c = common::tiny_ssd(&[]);
    assert!(c.zones().is_none());
    assert_eq!(status(c.zone_command(0, ZoneOp::Reset, 0)).1, 95);
}

#[test]
fn sequential_writes_then_resets_write_each_byte_once() {
    let mut d = zoned(&[]);
    let zones = d.zones().unwrap().zones;
    let mut t = 0;
    // Twice over every zone, resetting each before it is written again: no device GC, so
    // the NAND writes equal the host's.
    for round in 0..2 {
        for z in 0..zones {
            if round > 0 {
                t = d.zone_command(t, ZoneOp::Reset, z).unwrap().done_ns;
            }
            t = fill_zone(&mut d, z, 128 << 10, t);
            assert_eq!(d.zone_state(z), Some(ZoneState::Full));
        }
    }
    let c = d.counters_json();
    assert_eq!(c["write_amplification"], 1.0, "{}", c["ftl"]);
    assert_eq!(c["ftl"]["gc_copied_ius"], 0);
    let blocks_per_zone = c["zns"]["blocks_per_zone"].as_u64().unwrap();
    assert_eq!(c["ftl"]["erases"], u64::from(zones) * blocks_per_zone);
    assert_eq!(c["zns"]["zone_resets"], zones);
    // Every erase went to the media.
    assert_eq!(c["media"]["erases"], c["ftl"]["erases"]);
}

#[test]
fn a_write_off_the_write_pointer_fails_as_a_zns_drive_fails_it() {
    let mut d = zoned(&[]);
    let g = d.zones().unwrap();
    d.submit(0, &IoRequest::write(0, 8192)).unwrap();
    let e = d.submit(1000, &IoRequest::write(4096, 4096)).unwrap_err();
    assert!(
        e.to_string()
            .contains("Zone Invalid Write: write of 4096 bytes at byte 4096 is not at zone 0's write pointer (byte 8192)"),
        "{e}"
    );
    assert_eq!(status(Err(e)).1, 5);
    // Past the capacity of a zone larger than it: a boundary error.
    let mut d = zoned(&[("zns.zone_size", "\"16MiB\"")]);
    let cap = d.zones().unwrap().capacity_bytes;
    let t = fill_zone(&mut d, 0, 1 << 20, 0);
    assert_eq!(
        status(d.submit(t, &IoRequest::write(cap, 4096))).0,
        "Zone Is Full"
    );
    d.zone_command(t, ZoneOp::Reset, 0).unwrap();
    d.submit(t, &IoRequest::write(0, cap - 4096)).unwrap();
    assert_eq!(
        status(d.submit(t + 1, &IoRequest::write(cap - 4096, 8192))).0,
        "Zone Boundary Error"
    );
    // Nothing a refused write asked for happened.
    assert_eq!(d.zone_write_pointer(0), Some(cap - 4096));
    let _ = g;
}

#[test]
fn open_and_active_limits_fail_with_linux_s_errno() {
    let mut d = zoned(&[("zns.max_open_zones", "2"), ("zns.max_active_zones", "3")]);
    let zb = d.zones().unwrap().zone_bytes;
    for z in 0..3 {
        d.submit(0, &IoRequest::write(z * zb, 4096)).unwrap();
    }
    // Three active (one closed by the drive to open the third), a fourth cannot be.
    assert_eq!(d.zone_state(0), Some(ZoneState::Closed));
    assert_eq!(
        status(d.submit(1, &IoRequest::write(3 * zb, 4096))),
        ("Too Many Active Zones", 109)
    );
    d.zone_command(2, ZoneOp::Finish, 0).unwrap();
    d.submit(3, &IoRequest::write(3 * zb, 4096)).unwrap();
    let mut d = zoned(&[("zns.max_open_zones", "1")]);
    d.zone_command(0, ZoneOp::Open, 0).unwrap();
    assert_eq!(
        status(d.submit(1, &IoRequest::write(zb, 4096))),
        ("Too Many Open Zones", 109)
    );
}

#[test]
fn reads_find_programmed_pages_and_read_zeros_past_the_write_pointer() {
    let mut d = zoned(&[]);
    let t = d.submit(0, &IoRequest::write(0, 1 << 20)).unwrap().done_ns;
    let before = d.counters_json()["ftl"]["nand_read_pages"]
        .as_u64()
        .unwrap();
    let r = d
        .submit(t + 10_000_000, &IoRequest::read(0, 64 << 10))
        .unwrap();
    let after = d.counters_json()["ftl"]["nand_read_pages"]
        .as_u64()
        .unwrap();
    assert_eq!(after - before, 4, "four 16 KiB pages");
    assert!(r.done_ns - (t + 10_000_000) > 50_000, "a NAND read: {r:?}");
    // Unwritten data costs no NAND read.
    let r = d
        .submit(t + 20_000_000, &IoRequest::read(4 << 20, 64 << 10))
        .unwrap();
    assert_eq!(
        d.counters_json()["ftl"]["nand_read_pages"]
            .as_u64()
            .unwrap(),
        after
    );
    assert!(r.done_ns - (t + 20_000_000) < 50_000, "{r:?}");
}

#[test]
fn append_lands_at_the_write_pointer_and_finish_fills_the_zone() {
    let mut d = zoned(&[]);
    let zb = d.zones().unwrap().zone_bytes;
    let (_, at) = d.zone_append(0, 1, 8192).unwrap();
    assert_eq!(at, zb);
    let (_, at) = d.zone_append(10, 1, 4096).unwrap();
    assert_eq!(at, zb + 8192);
    d.zone_command(20, ZoneOp::Finish, 1).unwrap();
    assert_eq!(d.zone_state(1), Some(ZoneState::Full));
    // The finished zone's partial page was programmed: 3 IUs.
    assert_eq!(d.counters_json()["ftl"]["nand_write_ius"], 3);
    assert!(d.zone_append(30, 1, 4096).is_err());
    assert!(d.zone_append(30, 10_000, 4096).is_err());
}

#[test]
fn zoned_keys_are_checked() {
    use flashlab_device::load_device_config;
    let bad = |sets: &[(&str, &str)]| {
        let sets: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        match load_device_config("tiny-test-1gb", &sets)
            .map(|cfg| Ssd::new(&cfg, flashlab_engine::SeedTree::new(1)).map(|_| ()))
        {
            Ok(Ok(())) => panic!("{sets:?} accepted"),
            Ok(Err(e)) => e.to_string(),
            Err(e) => e.to_string(),
        }
    };
    let e = bad(&[("zns.max_open_zones", "4")]);
    assert!(e.contains("zns.enabled"), "{e}");
    let e = bad(&[("zns.enabled", "true"), ("zns.zone_size", "\"8MiB\"")]);
    assert!(e.contains("zns.zone_size"), "{e}");
    let e = bad(&[("zns.enabled", "true"), ("namespaces", "[\"500MB\"]")]);
    assert!(e.contains("namespaces"), "{e}");
    let e = bad(&[
        ("zns.enabled", "true"),
        ("zns.max_open_zones", "4"),
        ("zns.max_active_zones", "2"),
    ]);
    assert!(e.contains("zns.max_open_zones"), "{e}");
}
