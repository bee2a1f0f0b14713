//! fio options that used to be accepted without effect although they change what fio does
//! or prints: the queue batches, the latency disables, `significant_figures`, `unit_base`
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

const RANDREAD: [&str; 5] = [
    "--name=t",
    "--rw=randread",
    "--bs=4k",
    "--size=64m",
    "--iodepth=32",
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
fn unified_rw_reporting_mixed_is_refused() {
    for v in ["mixed", "both", "1", "2"] {
        let arg = format!("--unified_rw_reporting={v}");
        let o = fio(&["--name=t", "--rw=randrw", &arg]);
        assert_eq!(o.status.code(), Some(2), "{v}: {}", stderr(&o));
        assert!(stderr(&o).contains("not simulated"), "{}", stderr(&o));
    }
    let o = fio(&["--name=t", "--size=1m", "--unified_rw_reporting=none"]);
    assert!(o.status.success(), "{}", stderr(&o));
}
