//! `--output-format terse`: fio's terse version 3 lines from `flashlab run` and
//! `flashlab replay`, laid out as fio 3.33's own (the reference output kept beside the golden
//! files) and carrying the same figures as the JSON output of the same run.

mod common;

use common::{flashlab, job_file, stderr, stdout};
use serde_json::Value;

const DEVICE: [&str; 2] = ["--device", "tiny-test-1gb"];

/// Two groups: a group_reporting pair of mixed clones, then sequential writes.
const JOB: &str = "\
[global]
ioengine=libaio
direct=1
group_reporting=1
percentile_list=50:90:99:99.9:99.99

[rw7030]
rw=randrw
rwmixread=70
bs=4k
iodepth=8
numjobs=2
size=4m

[seq-write]
stonewall
new_group
rw=write
bs=128k
iodepth=4
size=8m
";

/// The first line of fio 3.33's terse output of `mixed.fio`, split into fields.
fn reference_fields() -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/golden/fio-3.33/fio-mixed.terse.txt"
    );
    let text = std::fs::read_to_string(path).expect("reference terse output");
    let first = text.lines().next().expect("a line");
    first.split(';').map(String::from).collect()
}

/// fio appends the host disk's utilization (name and eight figures per disk) to every
/// line; a simulated drive is no host disk, and the JSON and normal outputs leave it out too.
const DISK_UTIL_FIELDS: usize = 9;

fn run(job: &str, format: &str) -> String {
    let mut args = vec!["run", job, "--output-format", format, "--seed", "7"];
    args.extend(DEVICE);
    let out = flashlab(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
}

#[test]
fn run_prints_one_terse_line_per_reported_job() {
    let job = job_file("terse.fio", JOB);
    let terse = run(&job, "terse");
    let json: Value = serde_json::from_str(&run(&job, "json")).expect("JSON output");
    let jobs = json["jobs"].as_array().unwrap();
    let reference = reference_fields();
    assert_eq!(reference[..2], ["3", "fio-3.33"]);
    let want_fields = reference.len() - DISK_UTIL_FIELDS;

    let lines: Vec<&str> = terse.lines().collect();
    assert_eq!(lines.len(), jobs.len(), "{terse}");
    assert!(terse.ends_with('\n'));
    for (line, j) in lines.iter().zip(jobs) {
        let f: Vec<&str> = line.split(';').collect();
        assert_eq!(f.len(), want_fields, "{line}");
        let name = j["jobname"].as_str().unwrap();
        assert_eq!(f[..3], ["3", "fio-3.33", name]);
        assert_eq!(f[3], j["groupid"].to_string());
        // Reads at field 5, writes 41 fields later: KiB, KiB/s, IOPS, ms.
        for (at, dir) in [(5, "read"), (46, "write")] {
            let d = &j[dir];
            assert_eq!(f[at], d["io_kbytes"].to_string(), "{name} {dir}");
            assert_eq!(f[at + 1], d["bw"].to_string(), "{name} {dir}");
            let iops = d["iops"].as_f64().unwrap() as u64;
            assert_eq!(f[at + 2], iops.to_string(), "{name} {dir}");
            assert_eq!(f[at + 3], d["runtime"].to_string(), "{name} {dir}");
            // Completion latency in µs.
            let clat = &d["clat_ns"];
            let min_us = clat["min"].as_u64().unwrap() / 1000;
            assert_eq!(f[at + 8], min_us.to_string(), "{name} {dir}");
            let mean_us = clat["mean"].as_f64().unwrap() / 1000.0;
            assert_eq!(f[at + 10], format!("{mean_us:.6}"), "{name} {dir}");
            // The job's five percentiles, then fio's padding to 20.
            match clat["percentile"].as_object() {
                Some(p) => {
                    for (i, (k, v)) in p.iter().enumerate() {
                        let want = format!("{k}%={}", v.as_u64().unwrap() / 1000);
                        assert_eq!(f[at + 12 + i], want, "{name} {dir}");
                    }
                }
                None => assert_eq!(f[at + 12], "50.000000%=0", "{name} {dir}"),
            }
            assert!(f[at + 17..at + 32].iter().all(|p| *p == "0%=0"), "{line}");
        }
    }
    // The mixed group read and wrote; the sequential job only wrote.
    assert_ne!(lines[0].split(';').nth(5), Some("0"));
    assert_eq!(lines[1].split(';').nth(5), Some("0"));
}

#[test]
fn terse_output_is_deterministic_and_goes_to_output_file() {
    let job = job_file("terse-out.fio", "[r]\nrw=randread\nbs=4k\nsize=2m\n");
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("terse-out.txt");
    let path_text = path.to_string_lossy().into_owned();
    let mut args = vec![
        "run",
        &job,
        "--output-format",
        "terse",
        "--output",
        &path_text,
        // The seed `run` gives: the host's and the controller's times per I/O are drawn.
        "--seed",
        "7",
    ];
    args.extend(DEVICE);
    let out = flashlab(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let written = std::fs::read_to_string(&path).unwrap();
    assert_eq!(written, run(&job, "terse"));
    assert!(written.starts_with("3;fio-3.33;r;0;0;2048;"), "{written}");
}

#[test]
fn replay_prints_a_terse_line() {
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/traces/sample-msr.csv"
    );
    let mut args = vec![
        "replay",
        trace,
        "--format",
        "msr",
        "--output-format",
        "terse",
    ];
    args.extend(DEVICE);
    let out = flashlab(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "{text}");
    let f: Vec<&str> = text.trim_end().split(';').collect();
    assert_eq!(f.len(), reference_fields().len() - DISK_UTIL_FIELDS);
    assert_eq!(f[..2], ["3", "fio-3.33"]);
}
