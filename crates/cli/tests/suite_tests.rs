//! `flashlab suite` with the wsat, recovery, op-sweep and endurance suites: options reach the
//! suites, bad ones exit with 2 and name themselves.

mod common;

use common::{flashlab, job_file, stderr, stdout};
use serde_json::Value;

const DEVICE: &str = "tiny-test-1gb";

#[test]
fn wsat_options_shape_the_run_and_the_json() {
    let out = flashlab(&[
        "suite",
        "wsat",
        "--device",
        DEVICE,
        "--write-multiple",
        "0.5",
        "--interval",
        "10%",
        "--output-format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["options"]["wsat"]["write_multiple"], 0.5);
    assert_eq!(doc["devices"][0]["results"]["intervals"], 5.0);
    assert_eq!(doc["units"]["write_amplification"], "");
    assert_eq!(doc["units"]["host_bytes_written"], "B");
    let charts = doc["devices"][0]["charts"].as_array().unwrap();
    assert!(charts.iter().any(|c| c["id"] == "wsat-iops-written"));
    // Off a terminal, standard error holds at most a progress line every 10 s.
    let err = stderr(&out);
    assert!(err.lines().all(|l| l.starts_with("flashlab: [")), "{err}");
}

#[test]
fn endurance_reads_a_job_file_workload() {
    let path = job_file(
        "endurance-w.fio",
        "[w]\nioengine=libaio\nrw=randwrite\nbs=16k\niodepth=8\nio_size=64m\n",
    );
    let out = flashlab(&[
        "suite",
        "endurance",
        "--device",
        DEVICE,
        "--workload",
        &path,
        "--measure",
        "5%",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("projected_tbw_bytes"), "{text}");
    assert!(text.contains("after_media_wearout_indicator"), "{text}");
}

#[test]
fn bad_test_options_exit_2_naming_the_option() {
    for (suite, args, option) in [
        ("wsat", vec!["--interval", "0.0001%"], "--interval"),
        ("wsat", vec!["--write-multiple", "0"], "--write-multiple"),
        ("recovery", vec!["--variant", "clean"], "--variant"),
        ("recovery", vec!["--idle-minutes", "30,5"], "--idle-minutes"),
        (
            "recovery",
            vec!["--dirty-minutes", "20,0"],
            "--dirty-minutes",
        ),
        (
            "recovery",
            vec!["--hir-idle-multiples", "0"],
            "--hir-idle-multiples",
        ),
        ("op-sweep", vec!["--op", "0,1.5"], "--op"),
        ("op-sweep", vec!["--run-minutes", "0"], "--run-minutes"),
        ("endurance", vec!["--workload", "jedec"], "--workload"),
        ("endurance", vec!["--workload", "missing.fio"], "--workload"),
        ("endurance", vec!["--duty-cycle", "2"], "--duty-cycle"),
        ("endurance", vec!["--measure", "5 parsecs"], "--measure"),
        ("write-pressure", vec!["--write-bs", "3k"], "--write-bs"),
        ("write-pressure", vec!["--start", "fast"], "--start"),
        ("noisy-neighbor", vec!["--read-qd", "0"], "--read-qd"),
    ] {
        let mut all = vec!["suite", suite, "--device", DEVICE];
        all.extend(args);
        let out = flashlab(&all);
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        assert!(stderr(&out).contains(option), "{all:?}: {}", stderr(&out));
    }
}
