//! The app-profiles suite: its shipped job templates say what they do (the mix and block-size
//! split in each header are the ones fio is given), and a run on the tiny test drive climbs
//! to a peak where more outstanding I/O only adds latency.

use std::path::PathBuf;

use crate::common::run_on_target_with;
use flashlab_device::load_device_config;
use flashlab_engine::NS_PER_S;
use flashlab_suite::{
    app_profile, suite, AppProfileOptions, DeviceReport, RoundLength, SuiteOptions, SuiteTarget,
    APP_PROFILES,
};
use flashlab_system::parse_system_config;
use flashlab_workload::{BlockSize, RandomDistribution, RwPattern};

fn profiles_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../jobs/profiles")
}

/// `# mix: 70% reads / 30% writes` → (70, 30).
fn header_mix(text: &str) -> (u32, u32) {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("# mix: "))
        .expect("a '# mix:' header line");
    let pct = |part: &str| -> u32 {
        part.trim()
            .split('%')
            .next()
            .unwrap()
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("percent in {line}"))
    };
    let (r, w) = line.split_once('/').expect("reads / writes");
    assert!(r.contains("reads") && w.contains("writes"), "{line}");
    (pct(r), pct(w))
}

/// `#   reads:  8 KiB 90%, 64 KiB 7%   (mean 19.4 KiB)` → [(8192, 90), (65536, 7)]; sizes
/// below 1 KiB as fractions (`0.5 KiB`).
fn header_split(text: &str, dir: &str) -> Vec<(u64, u32)> {
    let prefix = format!("#   {dir}:");
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("a '{prefix}' header line"));
    let line = line.split('(').next().unwrap();
    line.split(',')
        .map(|e| {
            let w: Vec<&str> = e.split_whitespace().collect();
            assert_eq!(w.len(), 3, "'{e}': SIZE KiB PCT%");
            assert_eq!(w[1], "KiB", "{e}");
            let kib: f64 = w[0].parse().unwrap();
            let pct: u32 = w[2].trim_end_matches('%').parse().unwrap();
            ((kib * 1024.0) as u64, pct)
        })
        .collect()
}

fn split_of(bs: &BlockSize) -> Vec<(u64, u32)> {
    match bs {
        BlockSize::Split(s) => s.clone(),
        other => panic!("expected a bssplit, got {other:?}"),
    }
}

#[test]
fn every_template_parses_and_does_what_its_header_says() {
    let mut files: Vec<String> = std::fs::read_dir(profiles_dir())
        .expect("jobs/profiles exists")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".fio"))
        .collect();
    files.sort();
    let mut shipped: Vec<String> = APP_PROFILES
        .iter()
        .map(|p| format!("{}.fio", p.name))
        .collect();
    shipped.sort();
    assert_eq!(
        files, shipped,
        "every file is a profile and every profile a file"
    );

    for name in &files {
        let path = profiles_dir().join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let profile = app_profile(name.trim_end_matches(".fio")).unwrap();
        assert_eq!(
            profile.job_text, text,
            "{name}: the suite runs the file as shipped"
        );
        let file = flashlab_workload::parse_file(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(file.jobs.len(), 1, "{name}: one job section");
        let job = &file.jobs[0];
        assert_eq!(job.id.name, profile.name, "{name}");
        assert_eq!(job.io.rw, RwPattern::RandRw, "{name}");
        assert!(job.report.group_reporting, "{name}: clones report as one");

        let (reads, writes) = header_mix(&text);
        assert_eq!(reads + writes, 100, "{name}");
        assert_eq!(
            job.io.rwmixread, reads,
            "{name}: rwmixread against the header"
        );

        for (ddir, dir) in [(0, "reads"), (1, "writes")] {
            let split = split_of(&job.block.bs[ddir]);
            assert_eq!(
                split.iter().map(|e| e.1).sum::<u32>(),
                100,
                "{name}: {dir} weights"
            );
            assert_eq!(split, header_split(&text, dir), "{name}: {dir} split");
        }

        // Linked clones send the read share of all accesses to the replica's 10 %.
        let linked = profile.name.starts_with("vdi-linked");
        match &job.io.random_distribution {
            RandomDistribution::Zoned(zones) => {
                assert!(linked, "{name}: only linked clones are zoned");
                assert_eq!(
                    zones,
                    &vec![(f64::from(reads), 10.0), (f64::from(writes), 90.0)],
                    "{name}"
                );
            }
            RandomDistribution::Random => assert!(!linked, "{name}: linked clones are zoned"),
            other => panic!("{name}: unexpected distribution {other:?}"),
        }
    }
}

fn value(r: &DeviceReport, key: &str) -> f64 {
    r.results
        .iter()
        .find(|m| m.key() == key)
        .unwrap_or_else(|| panic!("no {key}"))
        .value
}

fn short(profiles: &[&str], loads: &[u32]) -> SuiteOptions {
    SuiteOptions {
        round: RoundLength::TimeNs(NS_PER_S),
        max_rounds: 5,
        runtime_ns: Some(NS_PER_S),
        ..Default::default()
    }
    .with(AppProfileOptions {
        profiles: profiles.iter().map(|p| p.to_string()).collect(),
        loads: loads.to_vec(),
        ..Default::default()
    })
}

#[test]
fn the_curve_climbs_then_latency_grows_at_the_top() {
    let target = SuiteTarget::Drive(Box::new(load_device_config("tiny-test-1gb", &[]).unwrap()));
    // Half-second points: the 5 s settle leaves the drive a few free blocks beyond its
    // foreground-GC threshold (13 of 352), and a point of 16 % writes at ~12,000 IOPS uses
    // them up in about a second. Longer points measure this full drive's random-write-bound
    // state instead, where vdi-full-boot's IOPS do not rise with load (1 s points: 11,943 at
    // load 1, 10,829 at load 4; 2 s: 8,859 and 7,529); the dies-in-parallel climb this test
    // is about shows while the free blocks last (0.5 s: 12,016 then 20,096).
    let opts = SuiteOptions {
        runtime_ns: Some(NS_PER_S / 2),
        ..short(&["vdi-full-boot", "sql-80-20"], &[1, 4, 16, 64, 256])
    };
    let r = run_on_target_with(suite("app-profiles").unwrap(), &target, &opts).unwrap();

    // Preconditioned first: purge, fill, rounds, settle; then the points.
    let names: Vec<&str> = r.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(&names[..4], ["purge", "fill", "round-01", "round-02"]);
    let settle = names
        .iter()
        .position(|n| *n == "vdi-full-boot-settle")
        .unwrap();
    assert_eq!(names[settle - 1], "round-05");
    assert_eq!(names[settle + 1], "vdi-full-boot-load1");
    assert!(
        names.contains(&"sql-80-20-settle"),
        "an idle before each profile"
    );

    let iops = |load: u32| value(&r, &format!("vdi_full_boot_load{load}_iops"));
    let lat = |load: u32| value(&r, &format!("vdi_full_boot_load{load}_lat_avg_ns"));
    // Two dies: four outstanding I/Os keep both busier than one does.
    assert!(
        iops(4) > 1.2 * iops(1),
        "load 1 {} load 4 {}",
        iops(1),
        iops(4)
    );
    // Every load runs: the highest is what a review publishes as the profile's peak.
    assert_eq!(value(&r, "vdi_full_boot_points"), 5.0);
    assert_eq!(value(&r, "vdi_full_boot_top_load"), 256.0);
    assert_eq!(value(&r, "vdi_full_boot_top_iops"), iops(256));
    assert_eq!(value(&r, "vdi_full_boot_top_lat_avg_ns"), lat(256));
    assert_eq!(
        value(&r, "vdi_full_boot_top_lat_p99_ns"),
        value(&r, "vdi_full_boot_load256_lat_p99_ns")
    );
    // The 2-die drive reaches its knee early, with latency several times that of one
    // outstanding I/O by the top load; the knee is the most IOPS before it.
    assert_eq!(value(&r, "vdi_full_boot_knee_reached"), 1.0);
    let knee = value(&r, "vdi_full_boot_knee_load") as u32;
    assert!([1, 4, 16, 64].contains(&knee), "knee at {knee}");
    assert!(
        lat(256) > 3.0 * lat(1),
        "latency {} -> {}",
        lat(1),
        lat(256)
    );
    let peak = value(&r, "vdi_full_boot_knee_iops");
    assert_eq!(peak, iops(knee));
    assert!(peak >= iops(1) && peak >= iops(4));
    // Mixed: reads and writes in about the profile's proportion (84/16).
    let share = value(&r, "vdi_full_boot_load4_read_iops") / iops(4);
    assert!((0.78..0.90).contains(&share), "read share {share}");

    // Charts: the preconditioning rounds, then one per group run, a line per profile whose
    // points are (IOPS, average latency) in load order.
    let ids: Vec<&str> = r.charts.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        ["steady-rounds", "app-profiles-sql", "app-profiles-vdi-full"]
    );
    let vdi = &r.charts[2].series[0];
    assert_eq!(vdi.name, "vdi-full-boot");
    assert_eq!(vdi.points.len(), 5);
    assert_eq!(vdi.points[0], (iops(1), lat(1)));
}

#[test]
fn runs_on_a_system_too() {
    let text = r#"
name = "pair"
[drive.a]
preset = "tiny-test-1gb"
[drive.b]
preset = "tiny-test-1gb"
[raid.array]
level = 0
members = ["a", "b"]
"#;
    let cfg = parse_system_config("pair.toml", text).unwrap();
    let opts = SuiteOptions {
        round: RoundLength::TimeNs(NS_PER_S / 5),
        runtime_ns: Some(NS_PER_S / 5),
        ..short(&["oracle"], &[1, 8])
    };
    let r = run_on_target_with(
        suite("app-profiles").unwrap(),
        &SuiteTarget::System(cfg),
        &opts,
    )
    .unwrap();
    assert!(value(&r, "oracle_load1_iops") > 0.0);
    assert!(r.steps.iter().any(|s| s.name == "oracle-load8"));
    let json = r.steps.last().unwrap().fio_json.as_deref().unwrap();
    assert!(
        json.contains("device_counters"),
        "system counters in the step's JSON"
    );
}
