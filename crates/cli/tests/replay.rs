//! `flashlab replay`: the sample traces of every format, the real DiskSim traces beside the
//! repository (when present), pacing, determinism and bad input.

mod common;

use std::path::PathBuf;

use common::{flashlab, job_file, stderr, stdout};
use serde_json::Value;

/// The tiny test drive (NVMe, deep queue) and a slice of a SATA drive (NCQ 32, so open-loop
/// overload goes through the host queue).
const TINY: [&str; 2] = ["--device", "tiny-test-1gb"];
const SATA: [&str; 4] = ["--device", "intel-x25-e-64gb", "--set", "sim.scale=0.125"];

fn sample(name: &str) -> String {
    format!(
        "{}/../../testdata/traces/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// `shared/reference/traces/NAME` in an ancestor of the repository, when present.
fn reference_trace(name: &str) -> Option<String> {
    let found = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/reference/traces").join(name))
        .find(|p| p.is_file());
    if found.is_none() {
        eprintln!("{name}: reference trace not found beside the repository; skipped");
    }
    found.map(|p| p.to_string_lossy().into_owned())
}

fn replay_json(trace: &str, format: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "replay",
        trace,
        "--format",
        format,
        "--output-format",
        "json",
    ];
    args.extend(extra);
    let out = flashlab(&args);
    assert!(out.status.success(), "flashlab {args:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("JSON output")
}

fn ios(v: &Value, dir: &str) -> u64 {
    v["jobs"][0][dir]["total_ios"].as_u64().unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("a number: {v}"))
}

/// Every direction that moved data has plausible IOPS and latencies for an SSD, and the
/// counts add up to the requests replayed.
fn assert_sane(v: &Value, what: &str) {
    let job = &v["jobs"][0];
    let requests = v["flashlab"]["replay"]["requests"].as_u64().unwrap();
    assert_eq!(ios(v, "read") + ios(v, "write"), requests, "{what}");
    for dir in ["read", "write"] {
        let d = &job[dir];
        if d["total_ios"].as_u64().unwrap() == 0 {
            continue;
        }
        let iops = f(&d["iops"]);
        let clat_mean_ns = f(&d["clat_ns"]["mean"]);
        let lat_max_ns = f(&d["lat_ns"]["max"]);
        assert!(iops > 0.0 && iops < 5e6, "{what} {dir}: iops {iops}");
        assert!(
            clat_mean_ns > 1_000.0 && clat_mean_ns < 1e9,
            "{what} {dir}: clat mean {clat_mean_ns} ns"
        );
        assert!(
            lat_max_ns >= clat_mean_ns && lat_max_ns < 10e9,
            "{what} {dir}"
        );
        assert!(d["io_bytes"].as_u64().unwrap() > 0, "{what} {dir}");
    }
    assert!(!job["jobname"].as_str().unwrap().is_empty(), "{what}");
    assert!(v["flashlab"]["device_counters"].is_object(), "{what}");
}

#[test]
fn samples_of_every_format_replay() {
    for (file, format, requests) in [
        ("sample-disksim.trace", "disksim", 300),
        ("sample-msr.csv", "msr", 300),
        ("sample-blkparse.txt", "blkparse", 300),
        ("sample-fio-iolog.log", "fio-iolog", 300),
        ("sample-alibaba.csv", "alibaba", 300),
        ("sample-tencent.csv", "tencent", 300),
    ] {
        let v = replay_json(&sample(file), format, &TINY);
        assert_eq!(v["flashlab"]["replay"]["requests"], requests, "{file}");
        assert_eq!(v["jobs"][0]["jobname"], file);
        assert_sane(&v, file);
        // The 2 GiB samples do not fit the 1 GB drive: some requests were wrapped.
        assert!(
            v["flashlab"]["replay"]["remap"]["moved"].as_u64().unwrap() > 0,
            "{file}"
        );
    }
    // --volume keeps one of the three volumes.
    let v = replay_json(
        &sample("sample-msr.csv"),
        "msr",
        &["--volume", "1", TINY[0], TINY[1]],
    );
    let kept = v["flashlab"]["replay"]["requests"].as_u64().unwrap();
    assert!(kept > 50 && kept < 200, "{kept}");
    assert_eq!(
        v["flashlab"]["replay"]["lines"]["other_volumes"],
        300 - kept
    );
}

#[test]
fn real_traces_replay_open_and_closed_on_two_drives() {
    for (name, max) in [("tpcc-small.trace", "7000"), ("wsrch-small.trace", "6000")] {
        let Some(trace) = reference_trace(name) else {
            continue;
        };
        for drive in [&TINY[..], &SATA[..]] {
            let mut open = vec!["--max-requests", max];
            open.extend(drive);
            let v = replay_json(&trace, "disksim", &open);
            let what = format!("{name} open {drive:?}");
            assert_sane(&v, &what);
            let r = &v["flashlab"]["replay"];
            assert_eq!(r["mode"], "open");
            // Open loop lasts at least as long as the trace it replays.
            assert!(
                f(&r["replay_span_ns"]) >= f(&r["trace_span_ns"]),
                "{what}: {r}"
            );

            let mut closed = vec!["--mode", "closed", "--qd", "32", "--max-requests", max];
            closed.extend(drive);
            let v = replay_json(&trace, "disksim", &closed);
            let what = format!("{name} closed {drive:?}");
            assert_sane(&v, &what);
            let r = &v["flashlab"]["replay"];
            // 32 outstanding never exceeds either drive's queue: nothing waits on the host.
            assert_eq!(r["late_requests"], 0, "{what}");
        }
    }
}

#[test]
fn faster_replay_waits_longer_or_starts_late() {
    let trace =
        reference_trace("tpcc-small.trace").unwrap_or_else(|| sample("sample-disksim.trace"));
    for drive in [&TINY[..], &SATA[..]] {
        let run = |speed: &str| {
            let mut args = vec!["--speed", speed, "--max-requests", "3000"];
            args.extend(drive);
            replay_json(&trace, "disksim", &args)
        };
        let (slow, fast) = (run("1"), run("100"));
        let lat = |v: &Value| f(&v["jobs"][0]["read"]["lat_ns"]["mean"]);
        let late = |v: &Value| v["flashlab"]["replay"]["late_requests"].as_u64().unwrap();
        assert!(
            lat(&fast) > lat(&slow) || late(&fast) > late(&slow),
            "{drive:?}: speed 1 lat {} late {}, speed 100 lat {} late {}",
            lat(&slow),
            late(&slow),
            lat(&fast),
            late(&fast)
        );
        // 100 times the pace finishes sooner.
        assert!(
            f(&fast["flashlab"]["replay"]["replay_span_ns"])
                < f(&slow["flashlab"]["replay"]["replay_span_ns"])
        );
    }
    // On the SATA drive, the flood at speed 100 overflows NCQ: requests wait on the host.
    let mut args = vec!["--speed", "100", "--max-requests", "3000"];
    args.extend(SATA);
    let v = replay_json(&trace, "disksim", &args);
    assert!(v["flashlab"]["replay"]["late_requests"].as_u64().unwrap() > 0);
}

#[test]
fn same_seed_gives_the_same_json() {
    let trace = sample("sample-alibaba.csv");
    let args = [
        "replay",
        &trace,
        "--format",
        "alibaba",
        "--device",
        "tiny-test-1gb",
        "--output-format",
        "json+",
        "--seed",
        "5",
    ];
    let (a, b) = (flashlab(&args), flashlab(&args));
    assert!(a.status.success(), "{}", stderr(&a));
    assert_eq!(stdout(&a), stdout(&b));
}

#[test]
fn normal_output_reads_like_fio_with_a_replay_line() {
    let out = flashlab(&[
        "replay",
        &sample("sample-tencent.csv"),
        "--format",
        "tencent",
        "--device",
        "tiny-test-1gb",
        "--mode",
        "closed",
        "--qd",
        "4",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let first = text.lines().next().unwrap_or("");
    assert!(
        first.starts_with("flashlab: replayed 300 requests of ")
            && first.contains("sample-tencent.csv (tencent), closed loop at qd 4: 0 late"),
        "{text}"
    );
    assert!(text.contains("read: IOPS="), "{text}");
}

#[test]
fn malformed_lines_fail_with_their_place_or_are_skipped() {
    let trace = job_file(
        "replay-bad.trace",
        "1000 0 8 8 1\n2000 0 16 8 0\n3000 0 twenty 8 1\n4000 0 24 8 1\n",
    );
    let out = flashlab(&[
        "replay",
        &trace,
        "--format",
        "disksim",
        "--device",
        "tiny-test-1gb",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("replay-bad.trace:3:") && err.contains("start sector"),
        "{err}"
    );

    let v = replay_json(
        &trace,
        "disksim",
        &["--skip-bad-lines", "--device", "tiny-test-1gb"],
    );
    let r = &v["flashlab"]["replay"];
    assert_eq!(r["requests"], 3);
    assert_eq!(r["lines"]["skipped_bad"], 1);
    assert_eq!(r["lines"]["first_bad"], 3);
}

#[test]
fn bad_options_exit_2_with_a_reason() {
    let trace = sample("sample-disksim.trace");
    for (extra, says) in [
        (vec!["--qd", "4"], "--qd applies to --mode closed"),
        (
            vec!["--mode", "closed", "--speed", "2"],
            "--speed applies to --mode open",
        ),
        (vec!["--speed", "0"], "--speed 0"),
        (vec!["--remap", "error"], "past the device"),
        (vec!["--volume", "9"], "no request to replay"),
    ] {
        let mut args = vec![
            "replay",
            &trace,
            "--format",
            "disksim",
            "--device",
            "tiny-test-1gb",
        ];
        args.extend(&extra);
        let out = flashlab(&args);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{extra:?}: {}", stderr(&out));
    }
    let blk = sample("sample-blkparse.txt");
    let out = flashlab(&["replay", &blk, "--format", "blkparse", "--volume", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("names no device or volume"),
        "{}",
        stderr(&out)
    );
}

/// A speed so low that the trace's requests fall past the simulated clock's range is bad
/// input that names --speed, quickly (the arrival times once saturated and the replay spun
/// for ever).
#[test]
fn a_speed_past_the_simulated_clock_is_bad_input_not_a_hang() {
    let trace = job_file(
        "three-ms-apart.trace",
        "0 0 0 8 0\n1000000 0 8 8 1\n2000000 0 16 8 0\n",
    );
    let start = std::time::Instant::now();
    let out = flashlab(&[
        "replay",
        &trace,
        "--format",
        "disksim",
        "--device",
        "tiny-test-1gb",
        "--speed",
        "1e-13",
    ]);
    assert!(start.elapsed().as_secs() < 60);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--speed"), "{}", stderr(&out));
}
