//! Hostile and mistaken inputs through the binary: every read, allocation and queue sized by
//! input has a stated bound (docs/limits.md), and going past one is bad input (exit 2) with
//! a short message naming the limit, never memory growing until the machine runs out.
//!
//! Each run here is under an address-space limit, so a build without these bounds fails the
//! test (an allocation refused) instead of exhausting the machine.

mod common;
use common::{job_file, stderr};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Address space a test run may use (KiB for `ulimit -v`): the bounded runs need a few
/// hundred MB.
const RUN_LIMIT_KIB: u64 = 3 << 20;

/// Run `flashlab` with `args` in the scratch directory under [`RUN_LIMIT_KIB`].
fn bounded(args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {RUN_LIMIT_KIB} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_flashlab"))
        .args(args)
        .current_dir(env!("CARGO_TARGET_TMPDIR"))
        .output()
        .expect("the flashlab binary runs")
}

fn scratch(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// Exit 2, and stderr (returned) is short: the input is never echoed whole.
fn bad_input(out: &Output) -> String {
    let e = stderr(out);
    assert_eq!(out.status.code(), Some(2), "stderr: {e}");
    assert!(e.len() < 1_000, "{} bytes of message: {e:.300}", e.len());
    e
}

fn run(job: &str, extra: &[&str]) -> Output {
    let mut args = vec!["run", job, "--device", "tiny-test-1gb"];
    args.extend_from_slice(extra);
    bounded(&args)
}

#[test]
fn includes_of_devices_are_refused_before_reading() {
    for dev in ["/dev/zero", "/dev/urandom"] {
        let job = job_file(
            "include-dev.fio",
            &format!("[j]\nrw=read\nsize=1m\ninclude {dev}\n"),
        );
        let e = bad_input(&run(&job, &[]));
        assert!(
            e.contains("include-dev.fio:4") && e.contains(dev) && e.contains("character device"),
            "{e}"
        );
    }
    let e = bad_input(&bounded(&["run", "/dev/zero"]));
    assert!(
        e.contains("/dev/zero") && e.contains("character device"),
        "{e}"
    );
    let e = bad_input(&bounded(&["run", "/"]));
    assert!(e.contains("directory"), "{e}");
}

#[test]
fn a_drive_description_linked_to_a_device_is_refused() {
    let link = scratch("zero-link.toml");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    let job = job_file("small.fio", "[j]\nrw=read\nsize=1m\n");
    let out = bounded(&["run", &job, "--device", link.to_str().unwrap()]);
    let e = bad_input(&out);
    assert!(
        e.contains("zero-link.toml") && e.contains("character device"),
        "{e}"
    );
}

#[test]
fn files_past_their_size_limit_are_refused() {
    // An included file over the 1 MiB job-file limit.
    let big = scratch("big-include.fio");
    std::fs::write(&big, "# padding\n".repeat(120_000)).unwrap();
    let job = job_file(
        "includes-big.fio",
        &format!("[j]\nrw=read\nsize=1m\ninclude {}\n", big.display()),
    );
    let e = bad_input(&run(&job, &[]));
    assert!(e.contains("larger than 1048576 bytes"), "{e}");
    // Includes of one small file add up: 4 MiB over all of them.
    let part = scratch("part.fio");
    std::fs::write(&part, "# padding\n".repeat(90_000)).unwrap();
    let many: String = (0..6)
        .map(|_| format!("include {}\n", part.display()))
        .collect();
    let job = job_file(
        "includes-many.fio",
        &format!("[j]\nrw=read\nsize=1m\n{many}"),
    );
    let e = bad_input(&run(&job, &[]));
    assert!(e.contains("all job files and includes together"), "{e}");
    // A drive description over 1 MiB.
    let toml = scratch("big-drive.toml");
    std::fs::write(&toml, "# padding\n".repeat(120_000)).unwrap();
    let job = job_file("small.fio", "[j]\nrw=read\nsize=1m\n");
    let e = bad_input(&bounded(&["run", &job, "--device", toml.to_str().unwrap()]));
    assert!(e.contains("larger than 1048576 bytes"), "{e}");
}

#[test]
fn a_huge_unknown_key_is_answered_at_once_and_not_echoed() {
    let key = "k".repeat(900_000);
    let job = job_file("huge-key.fio", &format!("[j]\nrw=read\n{key}=1\n"));
    let start = Instant::now();
    let e = bad_input(&run(&job, &[]));
    assert!(
        e.contains("unknown fio option kkkk") && e.contains('…'),
        "{e}"
    );
    assert!(start.elapsed() < Duration::from_secs(30));
    let toml = scratch("huge-key.toml");
    std::fs::write(&toml, format!("name = \"x\"\n[nand]\n{key} = 1\n")).unwrap();
    let job = job_file("small.fio", "[j]\nrw=read\nsize=1m\n");
    let e = bad_input(&bounded(&["run", &job, "--device", toml.to_str().unwrap()]));
    assert!(e.contains("unknown key") && e.contains('…'), "{e}");
}

#[test]
fn jobs_and_clones_are_capped_at_4096() {
    let job = job_file("numjobs.fio", "[j]\nrw=read\nsize=4k\nnumjobs=65536\n");
    let e = bad_input(&run(&job, &[]));
    assert!(e.contains("numjobs.fio:4") && e.contains("4096"), "{e}");
    let sections: String = (0..5_000)
        .map(|i| format!("[j{i}]\nrw=read\nsize=4k\n"))
        .collect();
    let job = job_file("sections.fio", &sections);
    let e = bad_input(&run(&job, &[]));
    assert!(e.contains("job j4096") && e.contains("4096"), "{e}");
    // Clones of several sections count together.
    let job = job_file(
        "clones.fio",
        "[global]\nrw=read\nsize=4k\n[a]\nnumjobs=4000\n[b]\nnumjobs=97\n",
    );
    let e = bad_input(&run(&job, &[]));
    assert!(e.contains("clones.fio:7") && e.contains("job b"), "{e}");
}

#[test]
fn a_closed_loop_depth_beyond_the_host_queue_is_refused() {
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/traces/sample-disksim.trace"
    );
    let out = bounded(&[
        "replay",
        trace,
        "--format",
        "disksim",
        "--mode",
        "closed",
        "--qd",
        "4294967295",
    ]);
    let e = bad_input(&out);
    assert!(
        e.contains("--qd 4294967295") && e.contains("1048576"),
        "{e}"
    );
    assert!(!e.contains("open-loop"), "{e}");
}

#[test]
fn an_explicit_scale_past_max_memory_is_refused_with_the_largest_that_fits() {
    let job = job_file("small.fio", "[j]\nrw=read\nsize=1m\n");
    let out = bounded(&[
        "run",
        &job,
        "--device",
        "solidigm-d5-p5430-30.72tb",
        "--set",
        "sim.scale=0.48",
    ]);
    let e = bad_input(&out);
    assert!(
        e.contains("sim.scale") && e.contains("at most 0.") && e.contains("sim.max_memory"),
        "{e}"
    );
}

#[test]
fn trace_devices_overflowing_ranges_and_non_utf8_lines_are_bad_input() {
    let e = bad_input(&bounded(&["replay", "/dev/zero", "--format", "disksim"]));
    assert!(e.contains("character device"), "{e}");
    let msr = scratch("overflow.msr");
    std::fs::write(
        &msr,
        "128166372003061629,h,0,Write,0,4096,0\n128166372003061630,h,0,Write,18446744073709547520,1048576,0\n",
    )
    .unwrap();
    let e = bad_input(&bounded(&[
        "replay",
        msr.to_str().unwrap(),
        "--format",
        "msr",
    ]));
    assert!(e.contains("overflow.msr:2") && e.contains("2^64"), "{e}");
    let out = bounded(&[
        "replay",
        msr.to_str().unwrap(),
        "--format",
        "msr",
        "--skip-bad-lines",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 malformed lines skipped (first: line 2)")
    );
    let bin = scratch("binary.trace");
    std::fs::write(&bin, b"0 0 0 8 1\n1 0 \xff\xfe 8 1\n").unwrap();
    let e = bad_input(&bounded(&[
        "replay",
        bin.to_str().unwrap(),
        "--format",
        "disksim",
    ]));
    assert!(e.contains("binary.trace:2") && e.contains("UTF-8"), "{e}");
    assert_eq!(e.matches("stream did not contain").count(), 0, "{e}");
}

#[test]
fn huge_durations_are_refused_where_written() {
    for option in ["runtime", "ramp_time", "startdelay"] {
        let job = job_file(
            "long.fio",
            &format!("[j]\nrw=read\nsize=1m\ntime_based=1\n{option}=100000d\n"),
        );
        let e = bad_input(&run(&job, &[]));
        assert!(
            e.contains("long.fio:5") && e.contains("at most 53375d"),
            "{option}: {e}"
        );
    }
}

#[test]
fn fio_expressions_and_exponents_say_what_is_not_supported() {
    for value in ["$ncpus", "(2*4)"] {
        let job = job_file(
            "expr.fio",
            &format!("[j]\nrw=read\nsize=1m\nnumjobs={value}\n"),
        );
        let e = bad_input(&run(&job, &[]));
        assert!(
            e.contains("expressions") && e.contains("not supported"),
            "{value}: {e}"
        );
    }
    let job = job_file(
        "zipf.fio",
        "[j]\nrw=randread\nsize=1m\nrandom_distribution=zipf:1e300\n",
    );
    let e = bad_input(&run(&job, &[]));
    assert!(e.contains("no exponent"), "{e}");
}

#[test]
fn a_log_in_a_missing_directory_is_refused_before_the_run() {
    for option in ["write_bw_log", "write_hist_log", "write_iolog"] {
        let job = job_file(
            "logdir.fio",
            &format!("[j]\nrw=read\nsize=1m\n{option}=no-such-dir/x\n"),
        );
        let e = bad_input(&run(&job, &[]));
        assert!(
            e.contains(&format!("{option}=no-such-dir/x")) && e.contains("does not exist"),
            "{e}"
        );
        assert!(!scratch("no-such-dir").exists());
    }
}

#[test]
fn messages_state_the_value_written() {
    let job = job_file("small.fio", "[j]\nrw=read\nsize=1m\n");
    // The tiny drive with no spare area asked for.
    let preset = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../presets/tiny-test-1gb.toml"
    ))
    .unwrap();
    let toml = scratch("no-spare.toml");
    std::fs::write(
        &toml,
        // The key is gone, so is its provenance entry.
        preset
            .replace("user = \"1GB\"", "spare_factor = 0.0")
            .lines()
            .filter(|l| !l.starts_with("\"capacity.user\" = "))
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .unwrap();
    let e = bad_input(&bounded(&["run", &job, "--device", toml.to_str().unwrap()]));
    assert!(
        e.contains("capacity.spare_factor = 0:") && e.contains("a spare factor of at least 0.0"),
        "{e}"
    );
    let e = bad_input(&bounded(&[
        "run",
        &job,
        "--device",
        "generic-tlc-256gb",
        "--set",
        "power.states=[\"3.0000001W\"]",
    ]));
    assert!(e.contains("whole µW"), "{e}");
}

#[test]
fn a_power_cap_below_one_operation_per_window_is_refused() {
    let job = job_file("small.fio", "[j]\nrw=read\nsize=1m\n");
    let out = bounded(&[
        "run",
        &job,
        "--device",
        "generic-tlc-256gb",
        "--set",
        "power.active_power=1W",
        "--set",
        "power.idle_power=0W",
        "--set",
        "power.states=[\"1.001W\"]",
    ]);
    let e = bad_input(&out);
    assert!(
        e.contains("less than one operation") && e.contains("at least"),
        "{e}"
    );
}

/// A 120 KB `--set` value came back whole from the device's unit parser (240 KB on stderr),
/// and a terminal escape in a value reached the terminal raw from the TOML parser's
/// message: each quotes at most 80 characters, escaped.
#[test]
fn set_values_are_echoed_cut_and_escaped() {
    let job = job_file("set-echo.fio", "[j]\nrw=read\nsize=1m\n");
    let huge = "9".repeat(120_000);
    for value in [huge.clone(), format!("1{huge}us"), format!("\"{huge}\"")] {
        let set = format!("nand.t_prog={value}");
        let e = bad_input(&run(&job, &["--set", &set]));
        assert!(e.contains("nand.t_prog") && e.contains('…'), "{e}");
    }
    let e = bad_input(&run(&job, &["--set", "nand.cell=x\u{1b}[2J\u{9b}"]));
    assert!(!e.contains('\u{1b}') && !e.contains('\u{9b}'), "{e:?}");
    assert!(e.contains("x\\x1b[2J\\u{9b}"), "{e}");
    let e = bad_input(&run(&job, &["--set", &format!("nand.cell={huge}")]));
    assert!(e.contains('…'), "{e}");
}

/// A replay's queues grow with the requests that wait, up to their bounds: a 1,000-line
/// trace on a 4 GiB drive runs in 64 MiB of address space (it needs about 20 MB of RSS, as
/// `run` of a job on the same drive). Sized up front by the host queue's 2^20-request bound,
/// it took about 175 MB before reading a line, and here it would fail to allocate.
#[test]
fn a_small_replay_holds_little_memory() {
    let mut text = String::new();
    let (mut t, mut x) = (0u64, 12345u64);
    for _ in 0..1000 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        t += 1000 + (x >> 40) % 100_000;
        let lba = (x >> 20) % 7_000_000;
        text.push_str(&format!(
            "{t} 0 {lba} {} {}\n",
            8 << ((x >> 8) % 3),
            (x >> 4) & 1
        ));
    }
    let trace = scratch("small-replay.trace");
    std::fs::write(&trace, text).unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 65536 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_flashlab"))
        .args(["replay", trace.to_str().unwrap(), "--format", "disksim"])
        .args(["--device", "tiny-test-1gb", "--set", "capacity.user=4GiB"])
        .args(["--set", "nand.blocks_per_plane=352"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("replayed 1000 requests")
            || stderr(&out).contains("replayed 1000 requests"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
