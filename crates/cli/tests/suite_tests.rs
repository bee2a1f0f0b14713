//! `flashlab suite` with the wsat, recovery, op-sweep and endurance suites: options reach the
//! suites, bad ones exit with 2 and name themselves. The tidy CSV and the grouped help.

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
    // Off a terminal, standard error holds at most a progress line every 10 s and a line
    // for a preconditioning taken from the state cache.
    let err = stderr(&out);
    assert!(
        err.lines().all(|l| l.starts_with("flashlab: [")
            || l.ends_with(")") && l.contains("from the state cache")),
        "{err}"
    );
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

/// The tidy CSV holds one row per result, with the axes as columns: the same figures the JSON
/// report keys by name.
#[test]
fn tidy_csv_has_a_row_per_result_and_a_column_per_axis() {
    let args = [
        "suite",
        "qos",
        "--device",
        DEVICE,
        "--depths",
        "1,8",
        "--runtime",
        "200ms",
        "--round",
        "5%",
        "--max-rounds",
        "6",
    ];
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tidy-qos");
    let _ = std::fs::remove_dir_all(&dir);
    let mut tidy_args = args.to_vec();
    tidy_args.extend([
        "--output-format",
        "tidy-csv",
        "--outdir",
        dir.to_str().unwrap(),
    ]);
    let out = flashlab(&tidy_args);
    assert!(out.status.success(), "{}", stderr(&out));
    let tidy = stdout(&out);
    assert_eq!(
        std::fs::read_to_string(dir.join("qos-tidy.csv")).unwrap(),
        tidy,
        "the outdir holds the same tidy form"
    );
    let mut json_args = args.to_vec();
    json_args.extend(["--output-format", "json"]);
    let out = flashlab(&json_args);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let results = doc["devices"][0]["results"].as_object().unwrap();

    let mut lines = tidy.lines();
    assert_eq!(
        lines.next(),
        Some("device,metric,family,queue_depth,percentile,unit,value")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), results.len(), "{tidy}");
    for row in &rows {
        assert_eq!(row.len(), 7, "{row:?}");
        assert_eq!(row[0], DEVICE);
        let value: f64 = row[6].parse().unwrap();
        assert_eq!(Some(value), results[row[1]].as_f64(), "{row:?}");
    }
    let p99_9 = rows
        .iter()
        .find(|r| r[1] == "qd8_read_lat_p99_9_ns")
        .expect("the p99.9 read latency at QD8");
    assert_eq!(&p99_9[2..6], ["read_lat_ns", "8", "99.9", "ns"]);
    let iops = rows.iter().find(|r| r[1] == "qd1_iops").unwrap();
    assert_eq!(&iops[2..6], ["iops", "1", "", "IOPS"]);
    let steady = rows.iter().find(|r| r[1] == "steady_write_iops").unwrap();
    assert_eq!(&steady[2..6], ["steady_write_iops", "", "", "IOPS"]);
}

/// `suite --help` lists the options every suite takes first, then each suite's own under a
/// heading with its name, those of several suites under one heading.
#[test]
fn suite_help_groups_options_by_suite() {
    let out = flashlab(&["suite", "--help"]);
    assert!(out.status.success());
    let help = stdout(&out);
    // The heading each option is listed under.
    let heading_of = |option: &str| {
        let mut heading = "";
        for line in help.lines() {
            if !line.starts_with(' ') && line.ends_with(':') {
                heading = line;
            }
            if line.trim_start().starts_with(&format!("{option} ")) {
                return heading.to_string();
            }
        }
        panic!("{option} missing from:\n{help}");
    };
    for (option, heading) in [
        ("--device", "Options:"),
        ("--seed", "Options:"),
        ("--round", "Options:"),
        ("--rwmixread", "qos options:"),
        ("--depths", "Options of several suites:"),
        ("--write-multiple", "wsat options:"),
        ("--variant", "recovery options:"),
        ("--op", "op-sweep options:"),
        ("--workload", "endurance options:"),
        ("--members", "raid-scaling options:"),
        ("--zipf", "cache-passes options:"),
        ("--vms", "oltp options:"),
        ("--precondition", "Options of several suites:"),
        ("--size", "Options of several suites:"),
        ("--target", "Real storage (--target):"),
    ] {
        assert_eq!(heading_of(option), heading, "{option}");
    }
}

/// op-sweep's write amplification spans whole GC cycles: on a small slice a 2-minute run is
/// shorter than one cycle, yet the drive at 0% extra spare is well past WA 1, and since its
/// media program bandwidth is what limits random writes, IOPS × WA stays about the same
/// across spare points.
#[test]
fn op_sweep_write_amplification_does_not_depend_on_the_window() {
    let out = flashlab(&[
        "suite",
        "op-sweep",
        "--device",
        "solidigm-d5-p5430-15.36tb",
        "--set",
        "sim.scale=0.001",
        "--set",
        "sim.die_cut=allow",
        "--op",
        "0,0.1",
        "--run-minutes",
        "2",
        "--no-state-cache",
        "--output-format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let r = &doc["devices"][0]["results"];
    let get = |key: &str| r[key].as_f64().unwrap_or_else(|| panic!("{key}: {r}"));
    let wa0 = get("op0_run_2min_write_amplification");
    let wa10 = get("op10_run_2min_write_amplification");
    assert!(wa0 > 2.0, "WA at 0% extra spare: {wa0}");
    assert!(wa10 > 1.5 && wa10 < wa0, "WA at 10%: {wa10}, at 0%: {wa0}");
    assert_eq!(get("op0_write_amplification"), wa0);
    let media0 = get("op0_run_2min_write_iops") * wa0;
    let media10 = get("op10_run_2min_write_iops") * wa10;
    let ratio = media0 / media10;
    assert!(
        (0.85..1.15).contains(&ratio),
        "IUs programmed per second: {media0} at 0%, {media10} at 10%"
    );
}

/// `suite NAME --help` is that suite's help alone: what it reads, from the same definitions
/// that refuse another suite's option, and no other suite's options.
#[test]
fn a_named_suites_help_lists_what_it_reads_only() {
    let help_of = |args: &[&str]| {
        let out = flashlab(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        stdout(&out)
    };
    let lists = |help: &str, option: &str| {
        help.lines()
            .any(|l| l.trim_start().starts_with(&format!("{option} ")))
    };
    let qos = help_of(&["suite", "qos", "--help"]);
    assert!(qos.starts_with("qos: "), "{qos}");
    assert!(qos.contains("Usage: flashlab suite qos [OPTIONS]"), "{qos}");
    for option in ["--seed", "--rwmixread", "--depths", "--runtime", "--device"] {
        assert!(lists(&qos, option), "{option} missing from:\n{qos}");
    }
    for option in [
        "--write-multiple",
        "--op",
        "--members",
        "--zipf",
        "--interval",
    ] {
        assert!(!lists(&qos, option), "{option} listed in:\n{qos}");
    }
    // A shared option's help loses the list of the suites it is for.
    assert!(qos.contains("Queue depths, comma-separated"), "{qos}");
    // wsat runs to its own length: no --runtime; the help may come before the name.
    let wsat = help_of(&["suite", "-h", "wsat"]);
    assert!(
        lists(&wsat, "--write-multiple") && lists(&wsat, "--interval"),
        "{wsat}"
    );
    assert!(
        !lists(&wsat, "--runtime") && !lists(&wsat, "--rwmixread"),
        "{wsat}"
    );
    // Without a name (or with an unknown one) the help lists every suite's options.
    let all = help_of(&["suite", "--help"]);
    assert!(lists(&all, "--rwmixread") && lists(&all, "--write-multiple"));
    assert_eq!(help_of(&["suite", "nope", "--help"]), all);
}
