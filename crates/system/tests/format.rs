//! A system's format: caches emptied, SSD members erased, a lone SSD's FTL reachable.

use flashlab_engine::{BlockDevice, IoRequest, SeedTree};
use flashlab_system::{load_system_config, parse_system_config, System};

#[test]
fn format_empties_the_cache_tier() {
    let cfg = load_system_config("optane-16gb-hdd-2tb").unwrap();
    let mut sys = System::build(&cfg, SeedTree::new(1)).unwrap();
    let mut t = 0;
    for i in 0..64u64 {
        let c = sys.submit(t, &IoRequest::read(i * 65536, 4096)).unwrap();
        t = c.done_ns;
    }
    assert!(sys.counters_json()["root"]["lines_used"].as_u64().unwrap() > 0);
    assert!(sys.root_ssd().is_none());
    sys.format(t);
    assert_eq!(sys.counters_json()["root"]["lines_used"], 0);
    // The lines come back as misses.
    let before = sys.counters_json()["root"]["read_misses"].as_u64().unwrap();
    sys.submit(t + 1, &IoRequest::read(0, 4096)).unwrap();
    let after = sys.counters_json()["root"]["read_misses"].as_u64().unwrap();
    assert_eq!(after, before + 1);
}

#[test]
fn format_erases_every_ssd_member() {
    let text = "name = \"pair\"\n[drive.a]\npreset = \"tiny-test-1gb\"\n[drive.b]\npreset = \"tiny-test-1gb\"\n[raid.array]\nlevel = 1\nmembers = [\"a\", \"b\"]\n";
    let cfg = parse_system_config("pair.toml", text).unwrap();
    let mut sys = System::build(&cfg, SeedTree::new(1)).unwrap();
    let c = sys.submit(0, &IoRequest::write(0, 1 << 20)).unwrap();
    // A secure erase erases the blocks the write used (erased ones stay as they are).
    let erases = |s: &System, i: usize| {
        s.counters_json()["root"]["children"][i]["counters"]["health"]["erase_count_avg"]
            .as_f64()
            .unwrap()
    };
    let before = [erases(&sys, 0), erases(&sys, 1)];
    sys.format(c.done_ns);
    sys.submit(c.done_ns, &IoRequest::flush()).unwrap();
    for i in 0..2 {
        assert!(
            erases(&sys, i) > before[i],
            "member {i}: {before:?} -> {}",
            erases(&sys, i)
        );
    }
}
