//! Whole runs of the `flashlab` binary: outputs, exit codes and messages.

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::{flashlab, job_file, stderr, stdout};

/// The small preset made for tests when there is one, so runs stay fast; else the default.
fn test_device() -> String {
    let out = flashlab(&["devices"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let listing = stdout(&out);
    let names = preset_names(&listing, "drives:");
    names
        .iter()
        .find(|n| n.starts_with("tiny"))
        .or_else(|| names.iter().find(|_| listing.contains("(default)")))
        .map(|n| n.to_string())
        .expect("at least one preset")
}

/// The preset names `flashlab devices` lists under `heading` (a line of its own; the names
/// are the first words of the indented lines after it).
fn preset_names(listing: &str, heading: &str) -> Vec<String> {
    listing
        .lines()
        .skip_while(|l| !l.starts_with(heading))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

const SMALL_JOB: &str = "\
[global]
ioengine=libaio
direct=1

[rr]
rw=randread
bs=4k
iodepth=8
size=8m

[sw]
stonewall
rw=write
bs=64k
iodepth=4
size=8m
";

fn run_json(job: &str, seed: &str) -> Output {
    let device = test_device();
    flashlab(&[
        "run",
        job,
        "--device",
        &device,
        "--output-format",
        "json",
        "--seed",
        seed,
    ])
}

#[test]
fn json_output_has_fio_keys_and_flashlab_object() {
    let job = job_file("small-json.fio", SMALL_JOB);
    let out = run_json(&job, "1");
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON output");
    assert!(v["fio version"].is_string());
    assert_eq!(v["global options"]["ioengine"], "libaio");
    let jobs = v["jobs"].as_array().expect("jobs array");
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0]["jobname"], "rr");
    assert_eq!(jobs[0]["groupid"], 0);
    assert_eq!(jobs[1]["jobname"], "sw");
    assert_eq!(jobs[1]["groupid"], 1);
    // 8 MiB of 4 KiB reads.
    assert_eq!(jobs[0]["read"]["total_ios"], 2048);
    assert_eq!(jobs[0]["read"]["io_bytes"], 8 << 20);
    assert!(jobs[0]["read"]["iops"].as_f64().unwrap() > 0.0);
    assert!(jobs[0]["read"]["clat_ns"]["mean"].as_f64().unwrap() > 0.0);
    assert_eq!(jobs[1]["write"]["io_bytes"], 8 << 20);
    assert_eq!(v["flashlab"]["seed"], 1);
    assert!(v["flashlab"]["device_counters"].is_object());
}

#[test]
fn same_seed_gives_identical_bytes_and_another_seed_differs() {
    let job = job_file("small-det.fio", SMALL_JOB);
    let a = run_json(&job, "5");
    let b = run_json(&job, "5");
    let c = run_json(&job, "6");
    assert!(a.status.success(), "stderr: {}", stderr(&a));
    assert_eq!(stdout(&a), stdout(&b));
    assert_ne!(stdout(&a), stdout(&c));
}

#[test]
fn normal_output_goes_to_the_output_file() {
    let job = job_file("small-normal.fio", SMALL_JOB);
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("small-normal.txt");
    let _ = std::fs::remove_file(&target);
    let device = test_device();
    let out = flashlab(&[
        "run",
        &job,
        "--device",
        &device,
        "--output",
        target.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(out.stdout.is_empty());
    let text = std::fs::read_to_string(&target).expect("output file");
    assert!(text.contains("rr: (groupid=0"), "{text}");
    // Progress goes to stderr only on a terminal, never into a pipe.
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

#[test]
fn bad_job_file_exits_2_naming_file_and_line() {
    let job = job_file("bad-value.fio", "[a]\nrw=randread\niodepth=lots\n");
    let out = flashlab(&["run", &job]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("bad-value.fio:3"), "{err}");
}

#[test]
fn unknown_option_suggests_the_nearest() {
    let job = job_file("typo.fio", "[a]\nrw=randread\niodepht=4\n");
    let out = flashlab(&["run", &job]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("typo.fio:3"), "{err}");
    assert!(err.contains("iodepth"), "{err}");
}

#[test]
fn missing_job_file_exits_2() {
    let out = flashlab(&["run", "no-such-file.fio"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no-such-file.fio"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn unknown_preset_exits_2_listing_presets() {
    let job = job_file("preset.fio", SMALL_JOB);
    let out = flashlab(&["run", &job, "--device", "no-such-drive"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("no-such-drive"), "{err}");
    let first_preset = preset_names(&stdout(&flashlab(&["devices"])), "drives:")
        .into_iter()
        .next()
        .expect("a preset");
    assert!(err.contains(&first_preset), "{err}");
}

#[test]
fn malformed_set_exits_2() {
    let job = job_file("set.fio", SMALL_JOB);
    let out = flashlab(&["run", &job, "--set", "no-equals-sign"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("KEY=VALUE"), "{}", stderr(&out));
}

#[test]
fn unknown_output_format_is_a_usage_error() {
    let out = flashlab(&["run", "x.fio", "--output-format", "xml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("json+"), "{}", stderr(&out));
}

#[test]
fn devices_and_describe_work() {
    let out = flashlab(&["devices"]);
    assert!(out.status.success());
    let listing = stdout(&out);
    assert!(listing.contains("(default)"), "{listing}");
    // Drives and storage systems each under their own heading, every name usable as --device.
    let drives = preset_names(&listing, "drives:");
    let systems = preset_names(&listing, "systems");
    assert!(drives.iter().any(|n| n == "tiny-test-1gb"), "{listing}");
    assert!(
        systems.iter().any(|n| n == "workstation-raid0"),
        "{listing}"
    );
    assert!(!drives.iter().any(|n| systems.contains(n)), "{listing}");
    for name in &systems {
        let out = flashlab(&["describe", name]);
        assert!(
            stderr(&out).contains("is a storage system"),
            "{name}: {}",
            stderr(&out)
        );
    }
    let device = test_device();
    let out = flashlab(&["describe", &device]);
    assert!(out.status.success(), "{}", stderr(&out));
    // A time shown with its unit (us, ms) carries no `_ns` in its name; JSON keeps the unit.
    let text = stdout(&out);
    let t_read = text
        .lines()
        .find(|l| l.trim_start().starts_with("t_read"))
        .unwrap_or_else(|| panic!("no t_read line: {text}"));
    assert!(t_read.trim_start().starts_with("t_read "), "{t_read}");
    assert!(
        t_read.ends_with(" us") || t_read.ends_with(" ms"),
        "{t_read}"
    );
    assert!(!text.contains("_ns "), "{text}");
    let out = flashlab(&["describe", &device, "--output-format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(json["nand"]["t_read_ns"].is_u64(), "{json}");
}

#[test]
fn suite_options_for_other_suites_are_refused() {
    for (args, said) in [
        (
            vec!["suite", "precondition", "--vms", "4"],
            "--vms does not apply to suite precondition: it is for oltp",
        ),
        (
            vec!["suite", "qos", "--size", "1GiB"],
            "it is for transfer-sweep, desktop, compression-sweep",
        ),
        (
            vec!["suite", "wsat", "--hir-bursts", "3"],
            "--hir-bursts does not apply to suite wsat: it is for recovery",
        ),
    ] {
        let out = flashlab(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(said), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn describe_of_a_system_names_its_ssds() {
    let out = flashlab(&["describe", "workstation-raid0"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("is a storage system"), "{err}");
    assert!(err.contains("cpu0 (micron-3400-512gb)"), "{err}");
}

#[test]
fn json_plus_has_latency_bins_and_rate_shortfall_is_reported() {
    // The tiny drive reads unwritten data fast; a 1 ms think time keeps one clone well under
    // its 5,000 IOPS target, so the flashlab object must say the rate was not met.
    let job = job_file(
        "rate-plus.fio",
        "[paced]\nrw=randread\nbs=4k\nrate_iops=5000\nthinktime=1ms\nruntime=20ms\ntime_based=1\n",
    );
    let device = test_device();
    let out = flashlab(&["run", &job, "--device", &device, "--output-format", "json+"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON output");
    assert!(v["jobs"][0]["read"]["clat_ns"]["bins"].is_object());
    let read = &v["flashlab"]["rate"][0]["directions"]["read"];
    assert_eq!(read["target_iops"], 5000);
    assert_eq!(read["met"], false);
    assert!(read["achieved_iops"].as_f64().unwrap() <= 1000.0, "{read}");
}

#[test]
fn io_size_percentage_is_a_share_of_the_job_region() {
    // As fio 3.33 does: `size=50%` with `io_size=25%` transfers a quarter of the region (an
    // eighth of the drive), and with a region in bytes a quarter of those bytes.
    let job = job_file(
        "io-size-pct.fio",
        "[global]\nrw=read\nbs=1m\n\
         [quarter-of-half]\nsize=50%\nio_size=25%\n\
         [half]\nstonewall\nsize=50%\n\
         [quarter-of-8m]\nstonewall\nbs=4k\nsize=8m\nio_limit=25%\n",
    );
    let out = run_json(&job, "1");
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON output");
    let bytes = |i: usize| v["jobs"][i]["read"]["io_bytes"].as_u64().unwrap();
    let (quarter, half) = (bytes(0), bytes(1));
    // Rounded down to whole logical blocks.
    assert!(
        quarter <= half / 4 && half / 4 - quarter < 4096,
        "{quarter} of {half}"
    );
    assert_eq!(bytes(2), 2 << 20);
    assert_eq!(v["jobs"][0]["job options"]["io_size"], "25%");
}

/// A drive worn out in the run: the job whose write it refuses stops with fio's `error` set
/// (EROFS), the results are written all the same, and the exit code is 1 with the reason on
/// stderr; the health log shows the spare gone and the drive read-only.
#[test]
fn a_drive_worn_out_mid_run_reports_results_and_exits_1() {
    let path = job_file(
        "worn.fio",
        "[global]\nioengine=libaio\nbs=4k\niodepth=32\nnorandommap=1\n[w]\nrw=randwrite\nloops=40\n",
    );
    let out = flashlab(&[
        "run",
        &path,
        "--device",
        "tiny-test-1gb",
        "--set",
        "nand.pe_cycles=30",
        "--set",
        "nand.bad_block_reserve=0.03",
        "--set",
        "capacity.user=900MB",
        "--output-format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("job 'w'") && err.contains("read-only") && err.contains("failed with wear"),
        "{err}"
    );
    let j: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("fio JSON");
    assert_eq!(j["jobs"][0]["error"], 30);
    assert!(j["jobs"][0]["write"]["total_ios"].as_u64().unwrap() > 1_000_000);
    assert_eq!(j["flashlab"]["io_errors"][0]["errno"], 30);
    let h = &j["flashlab"]["device_counters"]["health"];
    assert_eq!(h["read_only"], true);
    assert_eq!(h["available_spare"], 0);
    assert_eq!(h["critical_warning"], 13);
}

/// Durations that add up past what the simulated clock can carry (four phases of 55-year
/// start delays; a thinktime of 55 years between four I/Os) stop with a bad-input error
/// naming the options, quickly (one duration past it is refused where it is written:
/// `bounds.rs`). Unchecked, they would run forever: the clock would saturate and the
/// device's additions to it overflow, or the sample windows be stepped through one by one.
#[test]
fn durations_past_the_simulated_clock_are_bad_input_not_a_hang() {
    let device = test_device();
    let mut phases = String::new();
    for name in ["a", "b", "c", "d"] {
        phases += &format!("[{name}]\nrw=write\nbs=4k\nsize=16k\nstartdelay=20000d\nstonewall\n");
    }
    let think = "[j]\nrw=write\nbs=4k\nsize=16k\nthinktime=20000d\n";
    for (name, text) in [("startdelays.fio", phases.as_str()), ("think.fio", think)] {
        let job = job_file(name, text);
        let start = std::time::Instant::now();
        let out = flashlab(&["run", &job, "--device", &device]);
        assert!(start.elapsed().as_secs() < 60, "{name}");
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("146 years") && err.contains("thinktime"),
            "{err}"
        );
    }
}

/// A run of a few simulated weeks (long think times) reports power windows for the meters'
/// 11.5 days and no more: one JSON entry per simulated second grew without bound (a
/// thinktime of 100000 h aborted allocating 43 GB).
#[test]
fn power_windows_of_a_long_run_are_bounded() {
    let device = test_device();
    let job = job_file(
        "weeks.fio",
        "[j]\nrw=write\nbs=4k\nsize=16k\nthinktime=10d\n",
    );
    let out = flashlab(&["run", &job, "--device", &device, "--output-format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let p = &v["flashlab"]["device_counters"]["power"];
    assert!(p["duration_ns"].as_u64().unwrap() > 30 * 86_400 * 1_000_000_000);
    assert_eq!(p["windows_w"].as_array().unwrap().len(), 1_000_000);
}

/// A reader that goes away (`flashlab ... | head`) ends the run quietly, as it ends other
/// command-line tools: by SIGPIPE, not a panic at the next print.
#[test]
fn a_closed_output_pipe_ends_the_run_without_a_panic() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};
    // 40 jobs' JSON, about 240 KB: more than a pipe holds, so the run meets the closed pipe
    // whenever it starts printing.
    let mut job = String::from("[global]\nrw=randread\nbs=4k\nsize=1m\n");
    for i in 0..40 {
        job.push_str(&format!("[j{i}]\n"));
    }
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("closed-pipe.fio");
    std::fs::write(&path, job).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["run", path.to_str().unwrap(), "--device", "tiny-test-1gb"])
        .args(["--output-format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(!e.contains("panicked"), "{e}");
    // SIGPIPE is 13 on Linux.
    assert_eq!(out.status.signal(), Some(13), "{:?}: {e}", out.status);
}
