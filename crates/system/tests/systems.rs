//! Systems driven directly through `BlockDevice` with a small closed-loop driver.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use flashlab_engine::{BlockDevice, IoRequest, SeedTree};
use flashlab_system::{
    load_system_config, parse_system_config, system_preset_names, System, SystemError,
};

fn build(text: &str) -> System {
    let cfg = parse_system_config("test.toml", text).unwrap_or_else(|e| panic!("{e}"));
    System::build(&cfg, SeedTree::new(1)).unwrap_or_else(|e| panic!("{e}"))
}

fn err(text: &str) -> String {
    parse_system_config("test.toml", text)
        .unwrap_err()
        .to_string()
}

fn tiny(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("[drive.{n}]\npreset = \"tiny-test-1gb\"\n"))
        .collect()
}

/// Closed loop: keep `qd` requests outstanding; `next(i)` gives request `i`. Returns
/// (end time, start time of the run).
fn run(
    dev: &mut dyn BlockDevice,
    start_ns: u64,
    n: usize,
    qd: usize,
    mut next: impl FnMut(usize) -> IoRequest,
) -> u64 {
    let mut heap = BinaryHeap::new();
    for _ in 0..qd {
        heap.push(Reverse(start_ns));
    }
    let mut end = start_ns;
    for i in 0..n {
        let Reverse(t) = heap.pop().unwrap();
        let c = dev
            .submit(t, &next(i))
            .unwrap_or_else(|e| panic!("request {i}: {e}"));
        assert!(c.done_ns >= t);
        end = end.max(c.done_ns);
        heap.push(Reverse(c.done_ns));
    }
    end
}

fn mb_per_s(bytes: u64, ns: u64) -> f64 {
    bytes as f64 / (ns as f64 * 1e-9) / 1e6
}

fn seq_write_rate(sys: &mut System) -> f64 {
    let len = 128 << 10;
    let n = 512;
    let end = run(sys, 0, n, 16, |i| IoRequest::write(i as u64 * len, len));
    mb_per_s(n as u64 * len, end)
}

#[test]
fn raid0_scales_with_members_until_a_shared_link_caps_it() {
    let one = {
        let mut s = build(&format!(
            "name = \"r1\"\n{}[raid.r]\nlevel = 0\nmembers = [\"a\"]\n",
            tiny(&["a"])
        ));
        seq_write_rate(&mut s)
    };
    let four = {
        let mut s = build(&format!(
            "name = \"r4\"\n{}[raid.r]\nlevel = 0\nmembers = [\"a\", \"b\", \"c\", \"d\"]\n",
            tiny(&["a", "b", "c", "d"])
        ));
        seq_write_rate(&mut s)
    };
    assert!(four > 3.2 * one, "one {one:.0} MB/s, four {four:.0} MB/s");
    // The same four behind one link no faster than a single drive's rate.
    let cap = (one * 1.2) as u64;
    let mut s = build(&format!(
        "name = \"r4l\"\n{}[raid.r]\nlevel = 0\nmembers = [\"a\", \"b\", \"c\", \"d\"]\n[link.up]\nbandwidth = \"{cap}MB/s\"\ndevices = [\"a\", \"b\", \"c\", \"d\"]\n",
        tiny(&["a", "b", "c", "d"])
    ));
    let linked = seq_write_rate(&mut s);
    assert!(
        linked < cap as f64 * 1.02 && linked > cap as f64 * 0.8,
        "cap {cap}, got {linked:.0}"
    );
    let c = s.counters_json();
    assert!(c["links"][0]["bytes_to_devices"].as_u64().unwrap() >= 512 * (128 << 10));
}

fn random_write_iops(level: u32) -> (f64, serde_json::Value) {
    let mut s = build(&format!(
        "name = \"r\"\n{}[raid.r]\nlevel = {level}\nchunk = \"64KiB\"\nmembers = [\"a\", \"b\", \"c\", \"d\"]\n",
        tiny(&["a", "b", "c", "d"])
    ));
    // Fill a region first so reads find data on NAND.
    let region: u64 = 24 << 20;
    let t = run(&mut s, 0, (region / (1 << 20)) as usize, 4, |i| {
        IoRequest::write(i as u64 * (1 << 20), 1 << 20)
    });
    let before = s.counters_json();
    let mut rng = SeedTree::new(5).stream();
    let n = 2000;
    let t2 = run(&mut s, t + 1_000_000_000, n, 1, |_| {
        IoRequest::write(rng.below(region / 4096) * 4096, 4096)
    });
    let after = s.counters_json();
    let ios = |v: &serde_json::Value| v["root"]["member_ios"].as_u64().unwrap();
    let d = json_delta(&before, &after);
    assert_eq!(ios(&after) - ios(&before), d["ios"].as_u64().unwrap());
    (n as f64 / ((t2 - t - 1_000_000_000) as f64 * 1e-9), d)
}

fn json_delta(a: &serde_json::Value, b: &serde_json::Value) -> serde_json::Value {
    let g = |v: &serde_json::Value, k: &str| v["root"][k].as_u64().unwrap();
    serde_json::json!({
        "ios": g(b, "member_ios") - g(a, "member_ios"),
        "parity_reads": g(b, "parity_reads") - g(a, "parity_reads"),
        "parity_writes": g(b, "parity_writes") - g(a, "parity_writes"),
    })
}

#[test]
fn raid5_small_random_write_costs_four_member_ios() {
    let (iops0, d0) = random_write_iops(0);
    let (iops5, d5) = random_write_iops(5);
    assert_eq!(d0["ios"], 2000);
    assert_eq!(d5["ios"], 8000, "{d5}");
    assert_eq!(d5["parity_reads"], 2000);
    assert_eq!(d5["parity_writes"], 2000);
    assert!(
        iops5 < 0.8 * iops0,
        "raid0 {iops0:.0} IOPS, raid5 {iops5:.0} IOPS"
    );
}

#[test]
fn full_stripe_writes_read_nothing() {
    let mut s = build(&format!(
        "name = \"r\"\n{}[raid.r]\nlevel = 6\nchunk = \"64KiB\"\nmembers = [\"a\", \"b\", \"c\", \"d\", \"e\"]\n",
        tiny(&["a", "b", "c", "d", "e"])
    ));
    // Three data chunks per row.
    let row = 3 * (64 << 10);
    run(&mut s, 0, 10, 1, |i| IoRequest::write(i as u64 * row, row));
    let c = s.counters_json();
    assert_eq!(c["root"]["full_stripe_writes"], 10);
    assert_eq!(c["root"]["parity_reads"], 0);
    assert_eq!(c["root"]["parity_writes"], 20);
    assert_eq!(
        c["root"]["member_reads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .sum::<u64>(),
        0
    );
}

#[test]
fn degraded_raid5_reconstructs_then_rebuilds() {
    let mut s = build(&format!(
        "name = \"r\"\n{}[raid.r]\nlevel = 5\nchunk = \"64KiB\"\nbackground_rate = \"50MB/s\"\nmembers = [\"a\", \"b\", \"c\"]\n",
        tiny(&["a", "b", "c"])
    ));
    s.raid_mut("r").unwrap().fail_member(1).unwrap();
    assert!(
        s.raid_mut("r").unwrap().fail_member(2).is_err(),
        "RAID 5 survives one failure only"
    );
    let t = run(&mut s, 0, 40, 1, |i| {
        IoRequest::read(i as u64 * (64 << 10), 64 << 10)
    });
    let c = s.counters_json();
    assert!(
        c["root"]["degraded_reads"].as_u64().unwrap() >= 10,
        "{}",
        c["root"]
    );
    assert_eq!(c["root"]["member_reads"][1], 0);
    let r = s.raid_mut("r").unwrap();
    r.start_rebuild(t, 1).unwrap();
    assert!(r.background_done().is_none());
    r.run_background(t + 60_000_000_000).unwrap();
    let done = r.background_done().expect("rebuild finished");
    let secs = (done.done_ns - done.started_ns) as f64 * 1e-9;
    // ~1 GB per member at the configured 50 MB/s.
    assert!((19.0..23.0).contains(&secs), "{secs}");
    let before = s.counters_json()["root"]["degraded_reads"]
        .as_u64()
        .unwrap();
    run(&mut s, t + 70_000_000_000, 40, 1, |i| {
        IoRequest::read(i as u64 * (64 << 10), 64 << 10)
    });
    assert_eq!(
        s.counters_json()["root"]["degraded_reads"]
            .as_u64()
            .unwrap(),
        before
    );
}

#[test]
fn unclean_shutdown_resyncs_a_mirror_and_slows_the_host() {
    let text = format!(
        "name = \"m\"\n{}[raid.m]\nlevel = 1\nbackground_rate = \"1GB/s\"\nmembers = [\"a\", \"b\"]\n",
        tiny(&["a", "b"])
    );
    let mut quiet = build(&text);
    let mut busy = build(&text);
    busy.raid_mut("m").unwrap().unclean_shutdown(0);
    let len = 128 << 10;
    let a = run(&mut quiet, 0, 200, 4, |i| {
        IoRequest::write(i as u64 * len, len)
    });
    let b = run(&mut busy, 0, 200, 4, |i| {
        IoRequest::write(i as u64 * len, len)
    });
    assert!(b > a, "resync competes with host writes: {a} vs {b}");
    let r = busy.raid_mut("m").unwrap();
    assert!(r.background_progress().is_some());
    r.run_background(60_000_000_000).unwrap();
    assert!(r.background_done().unwrap().resync);
}

#[test]
fn raid1_reads_are_balanced() {
    let mut s = build(&format!(
        "name = \"m\"\n{}[raid.m]\nlevel = 1\nmembers = [\"a\", \"b\"]\n",
        tiny(&["a", "b"])
    ));
    let mut rng = SeedTree::new(2).stream();
    run(&mut s, 0, 1000, 8, |_| {
        IoRequest::read(rng.below(200_000) * 4096, 4096)
    });
    let c = s.counters_json();
    let r = c["root"]["member_reads"].as_array().unwrap();
    let (a, b) = (r[0].as_u64().unwrap(), r[1].as_u64().unwrap());
    assert_eq!(a + b, 1000);
    assert!(a.abs_diff(b) < 200, "{a} {b}");
}

#[test]
fn host_write_back_cache_absorbs_a_burst() {
    let base = format!(
        "name = \"r\"\n{}[raid.r]\nlevel = 5\nmembers = [\"a\", \"b\", \"c\"]\n",
        tiny(&["a", "b", "c"])
    );
    let cached = format!("{base}[raid.r.host_cache]\nsize = \"64MiB\"\n");
    let mut rng = SeedTree::new(9).stream();
    let offs: Vec<u64> = (0..200).map(|_| rng.below(1 << 17) * 4096).collect();
    let mut plain = build(&base);
    let mut fast = build(&cached);
    let a = run(&mut plain, 0, 200, 1, |i| IoRequest::write(offs[i], 4096));
    let b = run(&mut fast, 0, 200, 1, |i| IoRequest::write(offs[i], 4096));
    assert!(b * 5 < a, "{a} vs {b}");
    // A flush waits for the members (no power-loss protection).
    let f = fast.submit(b, &IoRequest::flush()).unwrap();
    assert!(f.done_ns > b);
}

/// RAID 5 of four tiny drives, 64 KiB chunks (rows of 192 KiB of data), with or without
/// a host write-back cache of `cache` (e.g. "64MiB").
fn raid5_of_four(cache: Option<&str>) -> System {
    let mut text = format!(
        "name = \"r\"\n{}[raid.r]\nlevel = 5\nchunk = \"64KiB\"\nmembers = [\"a\", \"b\", \"c\", \"d\"]\n",
        tiny(&["a", "b", "c", "d"])
    );
    if let Some(size) = cache {
        text.push_str(&format!("[raid.r.host_cache]\nsize = \"{size}\"\n"));
    }
    build(&text)
}

fn root_counter(s: &System, key: &str) -> u64 {
    s.counters_json()["root"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("no counter {key}"))
}

#[test]
fn write_back_cache_turns_sequential_partial_rows_into_full_stripes() {
    // 128 KiB writes on 192 KiB rows: no single write covers a row.
    let len: u64 = 128 << 10;
    let n = 600;
    let mut plain = raid5_of_four(None);
    let mut cached = raid5_of_four(Some("64MiB"));
    let a = run(&mut plain, 0, n, 32, |i| {
        IoRequest::write(i as u64 * len, len)
    });
    let b = run(&mut cached, 0, n, 32, |i| {
        IoRequest::write(i as u64 * len, len)
    });
    let rows = n as u64 * len / (192 << 10);
    // Without the cache every row is written in parts, each with parity reads.
    assert_eq!(root_counter(&plain, "full_stripe_writes"), 0);
    assert!(root_counter(&plain, "parity_reads") > 0);
    // With it every row the stream completes is one full-stripe write with no reads.
    assert_eq!(root_counter(&cached, "full_stripe_writes"), rows);
    assert_eq!(root_counter(&cached, "held_rows_completed"), rows);
    assert_eq!(root_counter(&cached, "parity_reads"), 0);
    assert_eq!(root_counter(&cached, "read_modify_write_rows"), 0);
    assert_eq!(root_counter(&cached, "reconstruct_write_rows"), 0);
    // The data reached the members: 4/3 of it with parity.
    let f = cached.submit(b, &IoRequest::flush()).unwrap();
    let member_writes: u64 = cached.counters_json()["root"]["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            c["counters"]["health"]["data_units_written"]
                .as_u64()
                .unwrap()
        })
        .sum();
    let expected_units = n as u64 * len * 4 / 3 / 512_000;
    assert!(
        member_writes.abs_diff(expected_units) <= 4,
        "{member_writes} data units on the members, expected ~{expected_units}"
    );
    assert!(f.done_ns >= b);
    assert!(mb_per_s(n as u64 * len, b) > mb_per_s(n as u64 * len, a));
}

#[test]
fn held_rows_are_written_as_they_stand_when_not_completed() {
    // Random 4 KiB writes rarely continue each other: rows are held, then written with
    // their parity reads once more than the held limit wait, and the rest at a flush.
    let mut s = raid5_of_four(Some("64MiB"));
    let mut rng = SeedTree::new(5).stream();
    let offs: Vec<u64> = (0..400).map(|_| rng.below(1 << 18) * 4096).collect();
    let end = run(&mut s, 0, 400, 8, |i| IoRequest::write(offs[i], 4096));
    let partial = root_counter(&s, "held_rows_written_partial");
    assert!(partial >= 400 - 16 - 10, "{partial}");
    let f = s.submit(end, &IoRequest::flush()).unwrap();
    assert!(f.done_ns > end, "a flush waits for the held rows (no PLP)");
    let rows =
        root_counter(&s, "read_modify_write_rows") + root_counter(&s, "reconstruct_write_rows");
    assert_eq!(rows, root_counter(&s, "held_rows_written_partial"));
    assert!(rows >= 400 - 10, "{rows}");
    assert_eq!(root_counter(&s, "full_stripe_writes"), 0);
}

#[test]
fn a_small_write_back_cache_writes_held_rows_to_make_room() {
    // A cache of one row's worth: held parts must leave it for later writes to enter.
    let mut s = raid5_of_four(Some("192KiB"));
    let mut rng = SeedTree::new(6).stream();
    let offs: Vec<u64> = (0..300).map(|_| rng.below(1 << 14) * 65536).collect();
    let end = run(&mut s, 0, 300, 4, |i| IoRequest::write(offs[i], 65536));
    assert!(end > 0);
    assert!(root_counter(&s, "held_rows_written_partial") > 200);
    assert!(root_counter(&s, "host_cache_wait_ns") > 0);
}

#[test]
fn cache_tier_second_pass_is_faster() {
    let cfg = load_system_config("optane-16gb-hdd-2tb").unwrap();
    let mut s = System::build(&cfg, SeedTree::new(1)).unwrap();
    let mut rng = SeedTree::new(4).stream();
    // A 2 GiB hot set of the disk, read at random.
    let offs: Vec<u64> = (0..300).map(|_| rng.below(2 << 30 >> 16) << 16).collect();
    let first = run(&mut s, 0, 300, 1, |i| IoRequest::read(offs[i], 4096));
    let second = run(&mut s, first, 300, 1, |i| IoRequest::read(offs[i], 4096)) - first;
    assert!(second * 20 < first, "first {first} ns, second {second} ns");
    let c = s.counters_json();
    assert!(c["root"]["read_hits"].as_u64().unwrap() >= 300);
    assert!(c["root"]["promotions"].as_u64().unwrap() <= 300);
    // The disk alone is as slow both times.
    let mut d = System::build(&load_system_config("hdd-2tb").unwrap(), SeedTree::new(1)).unwrap();
    let a = run(&mut d, 0, 300, 1, |i| IoRequest::read(offs[i], 4096));
    let b = run(&mut d, a, 300, 1, |i| IoRequest::read(offs[i], 4096)) - a;
    assert!(b * 2 > a, "{a} {b}");
}

/// A 64 MiB 3D XPoint cache in front of the hard disk, read misses promoted as `promote`
/// says.
fn small_tier(promote: &str) -> System {
    build(&format!(
        "name = \"c\"\n[drive.fast]\npreset = \"intel-optane-memory-16gb\"\nset = {{ capacity = \"64MiB\" }}\n[drive.hdd]\npreset = \"toshiba-dt01aca200-2tb\"\n[cache.t]\ncache = \"fast\"\nbacking = \"hdd\"\nline = \"64KiB\"\npromote = \"{promote}\"\n"
    ))
}

#[test]
fn a_read_miss_promotes_its_whole_line_or_only_what_was_read() {
    // Files of 8 KiB side by side, each read once and then read again, far apart on the disk
    // (every first read pays a seek).
    let reads = |promote: &str| {
        let mut s = small_tier(promote);
        let file = |i: usize| (i as u64 % 8) * (8 << 10) + (i as u64 / 8) * (1 << 30);
        let first = run(&mut s, 0, 64, 1, |i| IoRequest::read(file(i), 8 << 10));
        let c = s.counters_json();
        let first_hits = c["root"]["read_hits"].as_u64().unwrap();
        let hdd_bytes = c["root"]["backing_device"]["bytes_read"].as_u64().unwrap();
        let second = run(&mut s, first, 64, 1, |i| IoRequest::read(file(i), 8 << 10)) - first;
        let hits = s.counters_json()["root"]["read_hits"].as_u64().unwrap() - first_hits;
        (first, first_hits, hdd_bytes, second, hits)
    };
    // The whole line: the first read of each group fills its 64 KiB line, and the seven
    // files after it are served by the cache on their first read.
    let (line_first, line_hits, line_bytes, _, line_again) = reads("line");
    assert_eq!(line_hits, 56);
    assert_eq!(line_bytes, 8 * (64 << 10));
    // Only what was read: every first read goes to the disk, which reads just the file, and
    // nothing is served by the cache before it was read once (Intel's caching driver: a
    // first read is no faster than the disk alone).
    let (read_first, read_hits, read_bytes, read_second, read_again) = reads("read");
    assert_eq!(read_hits, 0);
    assert_eq!(read_bytes, 64 * (8 << 10));
    // It takes as long as the disk alone (whose buffer holds the neighbours it read ahead).
    let mut d = System::build(&load_system_config("hdd-2tb").unwrap(), SeedTree::new(1)).unwrap();
    let file = |i: usize| (i as u64 % 8) * (8 << 10) + (i as u64 / 8) * (1 << 30);
    let alone = run(&mut d, 0, 64, 1, |i| IoRequest::read(file(i), 8 << 10));
    assert!(
        (read_first as f64 / alone as f64 - 1.0).abs() < 0.02,
        "{read_first} {alone} (line: {line_first})"
    );
    // Both serve the second pass from the cache.
    assert_eq!((line_again, read_again), (64, 64));
    assert!(read_second * 20 < read_first, "{read_second} {read_first}");
}

#[test]
fn frequency_eviction_keeps_hot_lines_through_a_scan() {
    let sys = |ev: &str| {
        build(&format!(
            "name = \"c\"\n[drive.fast]\npreset = \"intel-optane-memory-16gb\"\nset = {{ capacity = \"64MiB\" }}\n[drive.hdd]\npreset = \"toshiba-dt01aca200-2tb\"\n[cache.t]\ncache = \"fast\"\nbacking = \"hdd\"\nline = \"64KiB\"\neviction = \"{ev}\"\n"
        ))
    };
    let hits = |mut s: System| {
        let line = 64 << 10;
        // Hot set read twice (protected under the frequency policy), a scan of twice the
        // cache, then the hot set again.
        let mut t = 0;
        for _ in 0..2 {
            t = run(&mut s, t, 200, 1, |i| {
                IoRequest::read(i as u64 * line, 4096)
            });
        }
        t = run(&mut s, t, 2000, 1, |i| {
            IoRequest::read((10_000 + i as u64 * 7) * line, 4096)
        });
        let before = s.counters_json()["root"]["read_hits"].as_u64().unwrap();
        run(&mut s, t, 200, 1, |i| {
            IoRequest::read(i as u64 * line, 4096)
        });
        s.counters_json()["root"]["read_hits"].as_u64().unwrap() - before
    };
    let lru = hits(sys("lru"));
    let freq = hits(sys("frequency"));
    assert_eq!(lru, 0);
    assert!(freq > 150, "{freq}");
}

#[test]
fn hdd_queueing_raises_random_iops_and_xpoint_meets_its_spec() {
    let mut d = System::build(&load_system_config("hdd-2tb").unwrap(), SeedTree::new(1)).unwrap();
    let cap = d.capacity_bytes() / 4096;
    let mut rng = SeedTree::new(11).stream();
    let t1 = run(&mut d, 0, 300, 1, |_| {
        IoRequest::read(rng.below(cap) * 4096, 4096)
    });
    let qd1 = 300.0 / (t1 as f64 * 1e-9);
    let t32 = run(&mut d, t1, 1000, 32, |_| {
        IoRequest::read(rng.below(cap) * 4096, 4096)
    }) - t1;
    let qd32 = 1000.0 / (t32 as f64 * 1e-9);
    let t4 = run(&mut d, t1 + t32, 600, 4, |_| {
        IoRequest::read(rng.below(cap) * 4096, 4096)
    }) - t1
        - t32;
    let qd4 = 600.0 / (t4 as f64 * 1e-9);
    assert!((60.0..100.0).contains(&qd1), "{qd1}");
    assert!(qd32 > 1.8 * qd1, "{qd1} {qd32}");
    // At QD4 the drive chooses among three targets: the least of three seek-plus-rotation
    // draws is well short of one average (12.7 ms), well above the 8.3 ms turn it would be
    // capped at if the sector the head has just left were one of them.
    assert!(qd4 > 1.15 * qd1 && qd4 < 1.8 * qd1, "QD1 {qd1} QD4 {qd4}");

    let mut x = build("name = \"x\"\n[drive.o]\npreset = \"intel-optane-memory-16gb\"\n");
    let r = x.submit(0, &IoRequest::read(0, 4096)).unwrap();
    assert!((6_000..8_500).contains(&r.done_ns), "{}", r.done_ns);
    let w = x.submit(1_000_000, &IoRequest::write(0, 4096)).unwrap();
    assert!(
        (16_000..21_000).contains(&(w.done_ns - 1_000_000)),
        "{}",
        w.done_ns
    );
    let len = 128 << 10;
    let t0 = 10_000_000;
    let end = run(&mut x, t0, 500, 8, |i| IoRequest::read(i as u64 * len, len));
    let rate = mb_per_s(500 * len, end - t0);
    assert!((800.0..950.0).contains(&rate), "{rate}");
    let end = run(&mut x, end, 300, 8, |i| {
        IoRequest::write(i as u64 * len, len)
    }) - end;
    let rate = mb_per_s(300 * len, end);
    assert!((130.0..150.0).contains(&rate), "{rate}");
}

#[test]
fn every_system_preset_loads_and_the_small_ones_build() {
    let names = system_preset_names();
    assert!(names.len() >= 8);
    for n in &names {
        let cfg = load_system_config(n).unwrap_or_else(|e| panic!("{n}: {e}"));
        assert!(!cfg.description.is_empty(), "{n}");
    }
    for n in ["hdd-2tb", "optane-16gb-hdd-2tb", "optane-32gb-hdd-2tb"] {
        let s = System::build(&load_system_config(n).unwrap(), SeedTree::new(1)).unwrap();
        assert_eq!(s.capacity_bytes(), 2_000_000_000_000 / 4096 * 4096);
    }
    let ws = load_system_config("workstation-raid0").unwrap();
    assert_eq!(ws.links["dmi"].devices, ["pch0", "pch1"]);
    assert!(ws.links["dmi"].bytes_per_s > 13_000_000_000);
}

#[test]
fn description_errors_name_place_and_what_is_valid() {
    let e = err(&format!(
        "name = \"x\"\n{}[raid.r]\nlevel = 5\nmembers = [\"a\", \"b\"]\n",
        tiny(&["a", "b"])
    ));
    assert!(e.starts_with("test.toml:8: raid.r.members"), "{e}");
    assert!(e.contains("RAID 5 needs at least 3 members"), "{e}");
    let e = err(&format!(
        "name = \"x\"\n{}[raid.r]\nlevel = 6\nmembers = [\"a\", \"b\", \"c\"]\n",
        tiny(&["a", "b", "c"])
    ));
    assert!(e.contains("RAID 6 needs at least 4"), "{e}");
    let e = err(&format!(
        "name = \"x\"\n{}[raid.r]\nlevel = 10\nmembers = [\"a\", \"b\", \"c\", \"d\", \"e\"]\n",
        tiny(&["a", "b", "c", "d", "e"])
    ));
    assert!(e.contains("even number"), "{e}");
    let e = err(&format!(
        "name = \"x\"\n{}[raid.r]\nlevel = 0\nmembers = [\"a\", \"zz\"]\n",
        tiny(&["a"])
    ));
    assert!(e.contains("refers to `zz`, which is not defined"), "{e}");
    assert!(e.contains("defined: a, r"), "{e}");
    let e = err(&format!(
        "name = \"x\"\n{}[raid.r]\nlevel = 0\nmembers = [\"a\", \"s\"]\n[raid.s]\nlevel = 0\nmembers = [\"r\"]\n",
        tiny(&["a"])
    ));
    assert!(
        e.contains("cycle: r -> s -> r") || e.contains("cycle: s -> r -> s"),
        "{e}"
    );
    let e = err(&format!(
        "name = \"x\"\n{}[raid.r]\nlevel = 0\nmembers = [\"a\"]\n[raid.s]\nlevel = 0\nmembers = [\"a\"]\n",
        tiny(&["a"])
    ));
    assert!(
        e.contains("`a` is used by both [raid.r] and [raid.s]"),
        "{e}"
    );
    let e = err(&format!(
        "name = \"x\"\n{}[raid.r]\nlevel = 0\nchunk = \"12 parsecs\"\nmembers = [\"a\"]\n",
        tiny(&["a"])
    ));
    assert!(
        e.starts_with("test.toml:6: raid.r.chunk = 12 parsecs"),
        "{e}"
    );
    let e = err(&format!(
        "name = \"x\"\n{}[raid.r]\nlevel = 3\nmembers = [\"a\"]\n",
        tiny(&["a"])
    ));
    assert!(e.contains("valid: 0, 1, 5, 6, 10"), "{e}");
    let e = err(&format!(
        "name = \"x\"\n{}[raid.r]\nlevel = 0\nchunks = \"64KiB\"\nmembers = [\"a\"]\n",
        tiny(&["a"])
    ));
    assert!(
        e.starts_with("test.toml:6:") && e.contains("unknown field `chunks`"),
        "{e}"
    );
    let e = err(
        "name = \"x\"\n[drive.a]\npreset = \"tiny-test-1gb\"\nset = { \"nand.chanels\" = 4 }\n",
    );
    assert!(
        e.contains("drive `a`") && e.contains("did you mean `channels`"),
        "{e}"
    );
    let e = err(&format!("name = \"x\"\n{}", tiny(&["a", "b"])));
    assert!(e.contains("set `root"), "{e}");
    let e = err(&format!("name = \"x\"\n{}[raid.r]\nlevel = 0\nmembers = [\"a\", \"up\"]\n[link.up]\nbandwidth = \"1GB/s\"\ndevices = [\"a\"]\n", tiny(&["a"])));
    assert!(e.contains("`up` is a link"), "{e}");
    assert!(matches!(
        parse_system_config("t.toml", "name = \"x\"\n[drive.a]\npreset = \"nope\"\n"),
        Err(SystemError::Drive { .. })
    ));
    let e = err("name = \"x\"\n[drive.f]\npreset = \"intel-optane-memory-16gb\"\n[drive.h]\npreset = \"toshiba-dt01aca200-2tb\"\n[cache.t]\ncache = \"f\"\nbacking = \"h\"\npromote = \"sector\"\n");
    assert!(
        e.starts_with("test.toml:")
            && e.contains("cache.t.promote = sector")
            && e.contains("read (only the sectors read)"),
        "{e}"
    );
    let e = err("name = \"x\"\n[drive.h]\npreset = \"toshiba-dt01aca200-2tb\"\nset = { average_seek = \"50ms\" }\n");
    assert!(
        e.contains("track_to_track <= average_seek <= full_stroke"),
        "{e}"
    );
}

#[test]
fn overrides_reach_the_drive() {
    let cfg = parse_system_config(
        "t.toml",
        "name = \"x\"\n[drive.a]\npreset = \"tiny-test-1gb\"\nset = { buffer = { plp = true }, \"nand.channels\" = 4 }\n",
    )
    .unwrap();
    match &cfg.components["a"] {
        flashlab_system::ComponentSpec::Ssd(c) => {
            assert!(c.buffer.plp);
            assert_eq!(c.nand.channels, 4);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn raid_members_that_compress_get_the_hosts_data_content() {
    let drive = |n: &str| {
        format!(
            "[drive.{n}]\npreset = \"tiny-test-1gb\"\nset = {{ \"controller.compression_granule\" = \"1KiB\", \"slc_cache.dynamic\" = false }}\n"
        )
    };
    let mut s = build(&format!(
        "name = \"rc\"\n{}{}[raid.r]\nlevel = 0\nmembers = [\"a\", \"b\"]\n",
        drive("a"),
        drive("b")
    ));
    assert!(s.compresses_data());
    let len = 128 << 10;
    run(&mut s, 0, 256, 8, |i| {
        IoRequest::write(i as u64 * len, len).with_compressible_percent(75)
    });
    // Each member stored a quarter of what it was written.
    let c = s.counters_json().to_string();
    let saved: Vec<u64> = c
        .match_indices("\"compression_saved_ius\":")
        .map(|(at, k)| {
            c[at + k.len()..]
                .split(|ch: char| !ch.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(saved.len(), 2, "{c}");
    // 128 KiB × 256 over two members: 16 MiB each, 4096 IUs of 4 granules, 3 saved per IU.
    assert!(saved.iter().all(|&s| s == 4096 * 3), "{saved:?}");
    let plain = build(&format!(
        "name = \"rp\"\n{}[raid.r]\nlevel = 0\nmembers = [\"a\", \"b\"]\n",
        tiny(&["a", "b"])
    ));
    assert!(!plain.compresses_data());
}
