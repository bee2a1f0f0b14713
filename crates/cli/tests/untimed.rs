//! `flashlab run --untimed JOB`: preconditioning jobs of a job file given to the drive with
//! its timing model off. The measured jobs after them must read as after the timed path
//! (issue 65's tolerances: IOPS within 2%, write amplification within 1%, latency
//! percentiles within 5%), the untimed jobs are listed apart from the results, and a job or a
//! drive that does not allow it is refused with the reason.

mod common;

use common::{flashlab, job_file, stderr};

/// A fill, two capacities of 4 KiB random writes, then what is measured: a capacity of
/// random writes and a few seconds of random reads, as `jobs/four-corners/*.fio` do.
const PRECONDITION_THEN_MEASURE: &str = "\
[global]
direct=1
ioengine=libaio
norandommap=1
randrepeat=1
size=100%

[fill]
rw=write
bs=128k
iodepth=32

[rand-precondition]
stonewall
rw=randwrite
bs=4k
iodepth=32
loops=2

[rand-write-4k]
stonewall
rw=randwrite
bs=4k
iodepth=32

[rand-read-4k]
stonewall
rw=randread
bs=4k
iodepth=32
time_based=1
runtime=2s
";

fn run_json(path: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "run",
        path,
        "--device",
        "tiny-test-1gb",
        "--output-format",
        "json",
    ];
    args.extend_from_slice(extra);
    let out = flashlab(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    if extra.contains(&"--untimed") {
        assert!(
            stderr(&out).contains("ran without the timing model (--untimed), so not among the results: fill, rand-precondition\n"),
            "{}",
            stderr(&out)
        );
    }
    serde_json::from_slice(&out.stdout).expect("the run prints JSON")
}

fn job<'a>(run: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    run["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == name)
        .unwrap_or_else(|| panic!("no job {name} in {run}"))
}

/// The write amplification of the phase whose jobs are `name`.
fn phase_wa(run: &serde_json::Value, name: &str) -> f64 {
    run["flashlab"]["phase_writes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["jobs"] == name)
        .and_then(|p| p["write_amplification"].as_f64())
        .unwrap_or_else(|| panic!("no phase {name}"))
}

fn within(name: &str, untimed: f64, timed: f64, bound: f64) {
    let error = untimed / timed - 1.0;
    assert!(
        error.abs() <= bound,
        "{name}: {untimed} untimed against {timed} timed ({:+.2}%, bound ±{}%)",
        error * 100.0,
        bound * 100.0
    );
}

#[test]
fn measured_jobs_after_untimed_preconditioning_read_as_after_the_timed_path() {
    untimed_reads_as_timed("untimed-precondition.fio", &[]);
}

/// A map paged through a DRAM cache (a quarter of the tiny drive's 1 MiB map): the cache's
/// look-ups, write-backs and translation reads follow the order of the writes, not the
/// dies' timing, so the untimed path leaves the cache and the FTL as the timed one does.
#[test]
fn a_paged_map_reads_after_untimed_preconditioning_as_after_the_timed_path() {
    let (timed, untimed) = untimed_reads_as_timed(
        "untimed-paged-map.fio",
        &["--set", "controller.map_cache=256KiB"],
    );
    let cache = |run: &serde_json::Value, key: &str| {
        run["flashlab"]["device_counters"]["map_cache"][key]
            .as_f64()
            .unwrap()
    };
    for key in ["map_cache_misses", "translation_writes"] {
        assert!(cache(&timed, key) > 0.0, "{key}: the cache must page");
        within(key, cache(&untimed, key), cache(&timed, key), 0.01);
    }
}

/// The job file run timed and with its preconditioning untimed (`sets` on both): the
/// measured jobs within issue 65's tolerances. Returns (timed, untimed).
fn untimed_reads_as_timed(name: &str, sets: &[&str]) -> (serde_json::Value, serde_json::Value) {
    let path = job_file(name, PRECONDITION_THEN_MEASURE);
    let timed = run_json(&path, sets);
    let untimed_args: Vec<&str> = ["--untimed", "fill,rand-precondition"]
        .into_iter()
        .chain(sets.iter().copied())
        .collect();
    let untimed = run_json(&path, &untimed_args);

    // The untimed jobs are not results: nothing was timed to measure.
    let names: Vec<&str> = untimed["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["jobname"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["rand-write-4k", "rand-read-4k"]);
    let listed = untimed["flashlab"]["untimed_jobs"].as_array().unwrap();
    assert_eq!(listed.len(), 2, "{listed:?}");
    let capacity = job(&timed, "fill")["write"]["io_bytes"].as_u64().unwrap();
    assert_eq!(listed[0]["jobname"], "fill");
    assert_eq!(listed[0]["bytes"].as_u64(), Some(capacity));
    assert_eq!(listed[1]["jobname"], "rand-precondition");
    assert_eq!(listed[1]["bytes"].as_u64(), Some(2 * capacity));
    // Its phase's write amplification is the FTL's, counted without the dies.
    assert!(phase_wa(&untimed, "rand-precondition") > 1.5);

    for (name, dir) in [("rand-write-4k", "write"), ("rand-read-4k", "read")] {
        let (u, t) = (&job(&untimed, name)[dir], &job(&timed, name)[dir]);
        within(
            &format!("{name} IOPS"),
            u["iops"].as_f64().unwrap(),
            t["iops"].as_f64().unwrap(),
            0.02,
        );
        for p in ["50.000000", "99.000000"] {
            within(
                &format!("{name} p{p}"),
                u["clat_ns"]["percentile"][p].as_f64().unwrap(),
                t["clat_ns"]["percentile"][p].as_f64().unwrap(),
                0.05,
            );
        }
    }
    within(
        "rand-write-4k write amplification",
        phase_wa(&untimed, "rand-write-4k"),
        phase_wa(&timed, "rand-write-4k"),
        0.01,
    );
    (timed, untimed)
}

#[test]
fn a_job_or_a_drive_that_does_not_allow_it_is_refused_with_the_reason() {
    let path = job_file("untimed-refused.fio", PRECONDITION_THEN_MEASURE);
    let refused = |device: &str, jobs: &str, expect: &[&str]| {
        let out = flashlab(&["run", &path, "--device", device, "--untimed", jobs]);
        let said = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{said}");
        for e in expect {
            assert!(said.contains(e), "{e:?} not in {said}");
        }
        assert!(out.stdout.is_empty(), "a refused run printed results");
    };
    let tiny = "tiny-test-1gb";
    refused(
        tiny,
        "rand-read-4k",
        &["job 'rand-read-4k'", "--untimed", "it reads"],
    );
    refused(
        tiny,
        "fil",
        &["job 'fil'", "no such job", "fill, rand-precondition"],
    );
    // A drive whose compressed writes are not modelled without timing: refused before any
    // I/O.
    refused(
        "ocz-vertex-3-240gb",
        "rand-precondition",
        &[
            "job 'rand-precondition'",
            "the device refuses",
            "compression_granule",
        ],
    );
}

/// A fill, then a short random read: what `flashlab fio` and `flashlab run` are compared on.
const FILL_THEN_READ: &str = "\
[global]
direct=1
ioengine=libaio
size=100%

[fill]
rw=write
bs=128k
iodepth=32

[rand-read-4k]
stonewall
rw=randread
bs=4k
iodepth=32
time_based=1
runtime=500ms
";

/// `flashlab fio --untimed` is `flashlab run --untimed`: the same jobs left out of the
/// results and listed apart, the same measured job to the I/O.
#[test]
fn the_fio_command_line_runs_jobs_untimed_as_run_does() {
    let path = job_file("untimed-fio-command-line.fio", FILL_THEN_READ);
    let run = flashlab(&[
        "run",
        &path,
        "--device",
        "tiny-test-1gb",
        "--untimed",
        "fill",
        "--output-format",
        "json",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let fio = flashlab(&[
        "fio",
        "--device",
        "tiny-test-1gb",
        "--untimed=fill",
        "--output-format=json",
        &path,
    ]);
    assert!(fio.status.success(), "{}", stderr(&fio));
    assert!(
        stderr(&fio).contains("so not among the results: fill\n"),
        "{}",
        stderr(&fio)
    );
    let (run, fio): (serde_json::Value, serde_json::Value) = (
        serde_json::from_slice(&run.stdout).unwrap(),
        serde_json::from_slice(&fio.stdout).unwrap(),
    );
    let names = |v: &serde_json::Value| -> Vec<String> {
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["jobname"].to_string())
            .collect()
    };
    assert_eq!(names(&fio), ["\"rand-read-4k\""]);
    assert_eq!(names(&run), names(&fio));
    assert_eq!(fio["flashlab"]["untimed_jobs"][0]["jobname"], "fill");
    assert_eq!(
        fio["flashlab"]["untimed_jobs"],
        run["flashlab"]["untimed_jobs"]
    );
    let ios = |v: &serde_json::Value| v["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert!(ios(&fio) > 0);
    assert_eq!(ios(&fio), ios(&run));

    let out = flashlab(&["fio", "--device", "tiny-test-1gb", "--untimed=fill,", &path]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--untimed \"fill,\": expected job names separated by commas"),
        "{}",
        stderr(&out)
    );
    let out = flashlab(&[
        "fio",
        "--device",
        "tiny-test-1gb",
        "--untimed=rand-read-4k",
        &path,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("it reads"), "{}", stderr(&out));
}
