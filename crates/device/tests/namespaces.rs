//! Namespaces share one drive: capacity, spare area, per-namespace addressing and counters,
//! and a noisy neighbour on the same dies.

use flashlab_device::{load_device_config, Ssd};
use flashlab_engine::{BlockDevice, DeviceError, IoRequest, RngStream, SeedTree};

fn sets(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn ssd(v: &[(&str, &str)]) -> Ssd {
    let cfg = load_device_config("tiny-test-1gb", &sets(v)).unwrap();
    Ssd::new(&cfg, SeedTree::new(3)).unwrap()
}

const TWO: (&str, &str) = ("namespaces", "[\"400MB\", \"400MB\"]");

#[test]
fn unallocated_capacity_becomes_spare_area() {
    let one = ssd(&[]);
    let two = ssd(&[TWO]);
    assert_eq!(one.namespace_count(), 1);
    assert_eq!(one.namespace_bytes(0), one.capacity_bytes());
    assert_eq!(two.namespace_count(), 2);
    assert_eq!(two.namespace_bytes(0), 400_000_000 / 4096 * 4096);
    assert_eq!(two.capacity_bytes(), 2 * two.namespace_bytes(0));
    // The FTL maps only the allocated 800 MB: 200 MB more spare than the 1 GB drive.
    let (u1, u2) = (one.ftl().config().user_ius, two.ftl().config().user_ius);
    assert_eq!(
        u1 - u2,
        (one.capacity_bytes() - two.capacity_bytes()) / 4096
    );
    let cfg = load_device_config("tiny-test-1gb", &sets(&[TWO])).unwrap();
    let d = cfg.describe_json();
    assert_eq!(d["capacity"]["namespaces"], 2);
    assert_eq!(
        d["capacity"]["drive_user_bytes"],
        1_000_000_000u64 / 4096 * 4096
    );
}

#[test]
fn each_namespace_is_a_block_device_with_its_own_range_and_counters() {
    let mut d = ssd(&[TWO]);
    let cap = d.namespace_bytes(1);
    {
        let mut ns2 = d.namespace(1).unwrap();
        assert_eq!(ns2.capacity_bytes(), cap);
        assert_eq!(ns2.name(), "ns2");
        ns2.submit(0, &IoRequest::write(cap - 8192, 8192)).unwrap();
        let e = ns2.submit(1_000, &IoRequest::read(cap, 4096)).unwrap_err();
        assert!(
            matches!(e, DeviceError::OutOfRange { capacity_bytes, .. } if capacity_bytes == cap)
        );
    }
    assert!(d.namespace(2).is_none());
    d.submit_to(0, 2_000, &IoRequest::read(0, 4096)).unwrap();
    // A whole-drive request in namespace 2's range counts for it.
    d.submit(3_000, &IoRequest::read(cap + 4096, 4096)).unwrap();
    let j = d.counters_json();
    let ns = j["namespaces"].as_array().unwrap();
    assert_eq!(ns.len(), 2);
    assert_eq!(ns[0]["host_read_commands"], 1);
    assert_eq!(ns[1]["host_read_commands"], 1);
    assert_eq!(ns[1]["host_write_commands"], 1);
    assert_eq!(ns[1]["bytes_written"], 8192);
    assert_eq!(j["health"]["host_read_commands"], 2);
    assert_eq!(d.resolve_namespace("ns2"), Ok(1));
    assert_eq!(d.resolve_namespace("/dev/nvme0n1"), Ok(0));
    let e = d.resolve_namespace("ns3").unwrap_err().to_string();
    assert!(e.contains("ns1 to ns2"), "{e}");
}

#[test]
fn namespace_2_written_lands_in_the_ftl_after_namespace_1() {
    let mut d = ssd(&[TWO]);
    // Fill namespace 2 only: reads of namespace 1 stay unmapped (controller + link only).
    let cap = d.namespace_bytes(1);
    let mut t = 0;
    let mut off = 0;
    while off < cap {
        let len = (1 << 20).min(cap - off);
        t = d
            .submit_to(1, t, &IoRequest::write(off, len))
            .unwrap()
            .done_ns;
        off += len;
    }
    t += 10_000_000;
    let c1 = d.submit_to(0, t, &IoRequest::read(4096, 4096)).unwrap();
    let c2 = d
        .submit_to(1, c1.done_ns, &IoRequest::read(4096, 4096))
        .unwrap();
    let (l1, l2) = (c1.done_ns - t, c2.done_ns - c1.done_ns);
    assert!(l1 < 10_000, "unmapped read {l1} ns");
    assert!(l2 > 30_000, "NAND read {l2} ns");
}

#[test]
fn a_noisy_neighbour_slows_the_quiet_namespace() {
    // Reads on namespace 2 alone, then beside random writes on namespace 1: the dies are
    // shared, so the quiet tenant's reads slow down.
    let run = |with_writes: bool| -> u64 {
        let mut d = ssd(&[TWO]);
        let cap = d.namespace_bytes(0);
        let mut t = 0;
        for ns in 0..2 {
            let mut off = 0;
            while off < cap {
                let len = (1 << 20).min(cap - off);
                t = d
                    .submit_to(ns, t, &IoRequest::write(off, len))
                    .unwrap()
                    .done_ns;
                off += len;
            }
        }
        let mut rng = RngStream::from_seed_u64(5);
        let (mut now, mut wnext, mut total) = (t + 50_000_000, t + 50_000_000, 0);
        for _ in 0..2_000 {
            while with_writes && wnext <= now {
                let at = rng.below(cap / 4096) * 4096;
                wnext = d
                    .submit_to(0, wnext, &IoRequest::write(at, 4096))
                    .unwrap()
                    .done_ns;
            }
            let at = rng.below(cap / 4096) * 4096;
            let c = d.submit_to(1, now, &IoRequest::read(at, 4096)).unwrap();
            total += c.done_ns - now;
            now = c.done_ns;
        }
        total / 2_000
    };
    let (quiet, noisy) = (run(false), run(true));
    assert!(
        noisy > 2 * quiet,
        "mean read {quiet} ns alone, {noisy} ns with writes"
    );
}

#[test]
fn bad_namespace_lists_are_refused_with_the_option() {
    for (v, want) in [
        ("[\"600MB\", \"600MB\"]", "exceed the user capacity"),
        ("[\"1KB\"]", "smaller than one IU"),
        ("[\"lots\"]", "expected a size"),
    ] {
        let e = load_device_config("tiny-test-1gb", &sets(&[("namespaces", v)]))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(&format!("--set namespaces={v}")), "{e}");
        assert!(e.contains(want), "{e}");
    }
}
