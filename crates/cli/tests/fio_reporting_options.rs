//! fio options that change what fio does or prints, and so must not be accepted without
//! effect: the queue batches, the latency disables, `significant_figures`, `unit_base`
//! and `unified_rw_reporting`. Expectations are what fio 3.33 printed for the same options.

mod common;
use common::*;

const DEVICE: &str = "tiny-test-1gb";

fn fio(args: &[&str]) -> std::process::Output {
    let mut all = vec!["fio", "--device", DEVICE];
    all.extend_from_slice(args);
    flashlab(&all)
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.push("--output-format=json");
    let o = fio(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("JSON output")
}

const RANDREAD: [&str; 6] = [
    "--name=t",
    "--rw=randread",
    "--bs=4k",
    "--size=64m",
    "--iodepth=32",
    "--ioengine=libaio",
];

#[test]
fn iodepth_batch_complete_min_and_iodepth_low_give_fios_distributions() {
    // fio 3.33, libaio on a file, iodepth=32 iodepth_low=4 iodepth_batch_complete_min=8:
    // IO depths 1=3.1%, 2=6.2%, 4=12.5%, 8=25.0%, 16=50.0%, 32=3.1%; complete 8=100.0%.
    let mut args = RANDREAD.to_vec();
    args.extend(["--iodepth_low=4", "--iodepth_batch_complete_min=8"]);
    let j = &json(&args)["jobs"][0];
    let level = &j["iodepth_level"];
    for (key, pct) in [
        ("1", 3.1),
        ("2", 6.2),
        ("4", 12.5),
        ("8", 25.0),
        ("16", 50.0),
    ] {
        let v = level[key].as_f64().unwrap();
        assert!((v - pct).abs() < 0.1, "{key}: {v} {level}");
    }
    assert!(j["iodepth_complete"]["8"].as_f64().unwrap() > 99.9, "{j}");
    // Without iodepth_low: 4 reaped at a time, depths 29-31 and 32 at commit (fio: 16=74.8%,
    // 32=24.8%).
    let mut args = RANDREAD.to_vec();
    args.push("--iodepth_batch_complete=4");
    let j = &json(&args)["jobs"][0];
    let v = j["iodepth_level"]["16"].as_f64().unwrap();
    assert!((v - 75.0).abs() < 0.2, "{j}");
}

#[test]
fn gtod_reduce_leaves_only_the_iops_line() {
    let mut args = RANDREAD.to_vec();
    args.push("--gtod_reduce=1");
    let o = fio(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("read: IOPS="), "{text}");
    for gone in [
        "slat (",
        "clat (",
        " lat (",
        "percentiles",
        "lat (usec)",
        "lat (nsec)",
    ] {
        assert!(!text.contains(gone), "{gone} in {text}");
    }
    let o = fio(&["--name=t", "--disable_lat=1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("disable_slat"), "{}", stderr(&o));
}

#[test]
fn significant_figures_and_unit_base_set_the_normal_figures() {
    let base = ["--name=t", "--rw=read", "--bs=128k", "--size=64m"];
    let mut args = base.to_vec();
    args.extend(["--significant_figures=6", "--unit_base=1"]);
    let o = fio(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    // fio 3.33 printed `BW=818791Kibit/s (838442kbit/s)(204800KiB/2001msec)` with these.
    let line = text.lines().find(|l| l.contains("read: IOPS=")).unwrap();
    assert!(
        line.contains("Kibit/s (") || line.contains("Mibit/s ("),
        "{line}"
    );
    assert!(line.contains("(65536KiB/"), "{line}");
    let group = text.lines().find(|l| l.contains("READ: bw=")).unwrap();
    assert!(group.contains("bit/s"), "{group}");
    assert!(group.contains("io=65536KiB (67109kB)"), "{group}");
    // The JSON does not change.
    let plain = json(&base);
    let figures = json(&args);
    assert_eq!(plain["jobs"][0]["read"], figures["jobs"][0]["read"]);
}

#[test]
fn unified_rw_reporting_prints_fios_mixed_direction() {
    // fio 3.33 (null engine, rw=randrw, unified_rw_reporting=mixed): the JSON job holds
    // "mixed" in place of read, write, trim and sync; the normal output has one "mixed:"
    // block, "issued rwts: total=N,0,0,0" and a "MIXED:" group line; terse has one
    // direction block. With "both": read, write, trim, sync, then "mixed"; the normal
    // block reads "mixed: IOPS=0, BW=0 (0)(0B/...msec)" and a MIXED line closes the group.
    let base = [
        "--name=t",
        "--rw=randrw",
        "--bs=4k",
        "--size=64m",
        "--iodepth=4",
        "--ioengine=libaio",
    ];
    let unified: Vec<String> = ["mixed", "1", "both", "2", "none"]
        .iter()
        .map(|v| format!("--unified_rw_reporting={v}"))
        .collect();
    let with = |v: &str| {
        let mut a = base.to_vec();
        let opt = unified
            .iter()
            .find(|o| o.ends_with(&format!("={v}")))
            .unwrap();
        a.push(opt.as_str());
        a
    };
    let plain = json(&base);
    let (r, w) = (&plain["jobs"][0]["read"], &plain["jobs"][0]["write"]);
    let total = r["total_ios"].as_u64().unwrap() + w["total_ios"].as_u64().unwrap();
    let mixed = json(&with("mixed"));
    let j = &mixed["jobs"][0];
    for gone in ["read", "write", "trim", "sync"] {
        assert!(j.get(gone).is_none(), "{gone}");
    }
    assert_eq!(j["mixed"]["total_ios"], total);
    let o = fio(&with("1"));
    let text = stdout(&o);
    assert!(text.contains("  mixed: IOPS="), "{text}");
    assert!(
        text.contains(&format!("issued rwts: total={total},0,0,0")),
        "{text}"
    );
    assert!(text.contains("\n  MIXED: bw="), "{text}");
    let both = json(&with("both"));
    let j = &both["jobs"][0];
    assert_eq!(j["read"], plain["jobs"][0]["read"]);
    assert_eq!(j["mixed"]["total_ios"], total);
    let text = stdout(&fio(&with("2")));
    assert!(text.contains("  mixed: IOPS=0, BW=0 (0)(0B/"), "{text}");
    assert!(
        text.contains("\n   READ: bw=") && text.contains("\n  MIXED: bw="),
        "{text}"
    );
    let terse = |v: &str| {
        let mut a = with(v);
        a.push("--output-format=terse");
        stdout(&fio(&a)).trim_end().split(';').count()
    };
    assert_eq!(terse("none"), 121);
    assert_eq!(terse("mixed"), 80);
    assert_eq!(terse("both"), 162);
}

#[test]
fn a_reporting_group_whose_lat_percentiles_change_is_refused_as_fio_refuses_it() {
    // fio 3.33 (null engine): a group_reporting job whose lat_percentiles differs from the
    // job before it in its group stops the run ("fio: lat_percentiles in job: b differs
    // from group"); a job without group_reporting, or one opening a new group, is not
    // checked, and slat_percentiles is not compared.
    let common = ["--rw=randread", "--size=1m", "--number_ios=10"];
    let run = |jobs: &[&str]| {
        let mut a = common.to_vec();
        a.extend_from_slice(jobs);
        fio(&a)
    };
    let refused = [
        vec![
            "--group_reporting",
            "--name=a",
            "--lat_percentiles=1",
            "--name=b",
        ],
        vec![
            "--name=a",
            "--name=b",
            "--group_reporting",
            "--lat_percentiles=1",
        ],
        vec![
            "--name=a",
            "--lat_percentiles=1",
            "--name=b",
            "--name=c",
            "--group_reporting",
            "--lat_percentiles=1",
        ],
    ];
    for jobs in &refused {
        let o = run(jobs);
        assert_eq!(o.status.code(), Some(2), "{jobs:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains("lat_percentiles") && e.contains("reporting group"),
            "{e}"
        );
    }
    assert!(stderr(&run(&refused[2])).contains("job 'c'"));
    let accepted = [
        vec![
            "--name=a",
            "--group_reporting",
            "--lat_percentiles=1",
            "--name=b",
        ],
        vec![
            "--group_reporting",
            "--name=a",
            "--lat_percentiles=1",
            "--name=b",
            "--stonewall",
        ],
        vec![
            "--group_reporting",
            "--name=a",
            "--slat_percentiles=1",
            "--name=b",
        ],
        vec![
            "--group_reporting",
            "--lat_percentiles=1",
            "--numjobs=2",
            "--name=a",
        ],
    ];
    for jobs in &accepted {
        let o = run(jobs);
        assert!(o.status.success(), "{jobs:?}: {}", stderr(&o));
    }
}

#[test]
fn unified_rw_reporting_on_a_slice_folds_the_whole_drives_figures() {
    // A slice's results are scaled back to the whole drive before they are reported: the
    // fold must be of the scaled directions, as without unified reporting.
    let slice = |extra: &[&str]| {
        let mut a = vec![
            "--set",
            "sim.scale=0.05",
            "--name=t",
            "--rw=randrw",
            "--bs=4k",
            "--size=1g",
            "--iodepth=8",
            "--ioengine=libaio",
        ];
        a.extend_from_slice(extra);
        a.push("--output-format=json");
        let mut all = vec!["fio", "--device", "generic-tlc-256gb"];
        all.extend_from_slice(&a);
        let o = flashlab(&all);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str::<serde_json::Value>(&stdout(&o)).expect("JSON output")
    };
    let plain = &slice(&[])["jobs"][0];
    let sum =
        |key: &str| plain["read"][key].as_u64().unwrap() + plain["write"][key].as_u64().unwrap();
    for v in ["mixed", "both"] {
        let arg = format!("--unified_rw_reporting={v}");
        let j = &slice(&[arg.as_str()])["jobs"][0];
        let m = &j["mixed"];
        assert_eq!(m["total_ios"].as_u64(), Some(sum("total_ios")), "{v}");
        assert_eq!(m["io_bytes"].as_u64(), Some(sum("io_bytes")), "{v}");
        assert_eq!(m["runtime"], plain["read"]["runtime"], "{v}");
    }
}
