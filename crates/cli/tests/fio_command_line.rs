//! `flashlab fio`: fio command lines run as fio 3.33 runs them. The rules were checked against
//! fio 3.33 (`--ioengine=null` runs and `--parse-only`):
//! - `--opt=value` and `--opt value` both work (getopt's required argument), `-opt=value` too
//!   (getopt_long_only); fio's STR_SET options (`--time_based`, `--group_reporting`, ...)
//!   take no separate value: `fio --norandommap 1` opens "1" as a job file.
//! - Options before the first `--name` are global (JSON "global options"); `--name=X` opens a
//!   job and is also its `name` option (JSON "job options" list `"name" : "X"`).
//! - Job files given with command-line jobs run after them, whatever their position.
//! - `--output-format=normal,json` prints terse, then JSON, then normal, whatever the order
//!   given; the last of `--minimal` and `--output-format` wins.
//! - With `--section`, the options after a skipped `--name` go to the global section.
//! - An unknown option is an error (exit 1 in fio) with a "did you mean".
//! - getopt_long_only takes a unique prefix of a long option (`--runtim=1`, `--group_rep`);
//!   an ambiguous one fails listing the possibilities (`--iodep=1`: '--iodepth'
//!   '--iodepth_batch' ...), even when they are a name and its alias (`--nr`: nrfiles,
//!   nr_files). Job files take no abbreviations.

mod common;
use common::*;

const DEVICE: &str = "tiny-test-1gb";

fn fio(args: &[&str]) -> std::process::Output {
    let mut all = vec!["fio", "--device", DEVICE];
    all.extend_from_slice(args);
    flashlab(&all)
}

/// The JSON without the `job_file` line, which names the job file or the command line.
fn without_job_file(json: &str) -> String {
    json.lines()
        .filter(|l| !l.trim_start().starts_with("\"job_file\""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn command_line_gives_the_job_files_json() {
    // fio records `--name=X` as the job's `name` option, so the job file equal to the command
    // line says `name=` too.
    let file = job_file(
        "fio_cl_equal.fio",
        "[global]\nrw=randread\nbs=4k\nsize=16m\n\n[reader]\nname=reader\niodepth=8\n\n\
         [writer]\nname=writer\nstonewall\nrw=write\nbssplit=4k/50:64k/50\n",
    );
    let from_file = flashlab(&["run", &file, "--device", DEVICE, "--output-format", "json"]);
    assert!(from_file.status.success(), "{}", stderr(&from_file));
    let from_args = fio(&[
        "--rw=randread",
        "--bs",
        "4k",
        "--size=16m",
        "--name=reader",
        "--iodepth",
        "8",
        "--name",
        "writer",
        "--stonewall",
        "--rw=write",
        "--bssplit=4k/50:64k/50",
        "--output-format=json",
    ]);
    assert!(from_args.status.success(), "{}", stderr(&from_args));
    let (a, b) = (stdout(&from_file), stdout(&from_args));
    assert_eq!(without_job_file(&a), without_job_file(&b));
    assert!(b.contains("\"job_file\" : \"command line\""), "{b}");
    // Two phases: the stonewall opened a second reporting group.
    assert!(b.contains("\"groupid\" : 1"), "{b}");
}

#[test]
fn global_options_apply_to_every_job_and_job_options_to_their_own() {
    let out = fio(&[
        "--size=8m",
        "--bs=64k",
        "--name=a",
        "--name=b",
        "--bs=4k",
        "--output-format=json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["global options"]["bs"], "64k");
    let ios = |i: usize| json["jobs"][i]["read"]["total_ios"].as_u64().unwrap();
    assert_eq!(ios(0), 128, "a: 8 MiB of 64 KiB");
    assert_eq!(ios(1), 2048, "b: 8 MiB of 4 KiB");
    assert_eq!(json["jobs"][1]["job options"]["bs"], "4k");
}

#[test]
fn section_runs_only_the_named_jobs() {
    let out = fio(&[
        "--size=4m",
        "--section=b",
        "--name=a",
        "--name=b",
        "--name=c",
        "--minimal",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let names: Vec<_> = text.lines().map(|l| l.split(';').nth(2).unwrap()).collect();
    assert_eq!(names, ["b"]);
    let out = fio(&["--size=4m", "--section=x", "--name=a"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--section x"), "{}", stderr(&out));
}

#[test]
fn parse_only_reports_a_bad_option_by_argument() {
    let out = fio(&["--name=a", "--bs=4q", "--parse-only"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    // --device and its value are arguments 1 and 2.
    assert!(err.contains("command line, argument 4 `--bs=4q`"), "{err}");
    assert!(err.contains("expected"), "{err}");
    assert!(!err.contains("panick"), "{err}");
    // A value given as the next argument: both are named.
    let out = fio(&["--name=a", "--iodepth", "deep"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("arguments 4-5 `--iodepth deep`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn parse_only_with_a_good_job_runs_nothing() {
    let out = fio(&[
        "--name=a",
        "--size=4m",
        "--write_bw_log=fio_cl_parse_only",
        "--parse-only",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let log = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fio_cl_parse_only_bw.1.log");
    assert!(!log.exists());
}

#[test]
fn output_format_list_prints_terse_json_normal_in_fios_order() {
    let args = ["--name=a", "--size=4m"];
    let one = |format: &str| {
        let mut a = args.to_vec();
        let f = format!("--output-format={format}");
        a.push(&f);
        let out = fio(&a);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let (normal, json, terse) = (one("normal"), one("json"), one("terse"));
    // fio 3.33 prints the JSON's closing brace and its newline, then the normal text (which
    // starts with a blank line); the terse line comes first.
    assert_eq!(one("normal,json"), format!("{json}{normal}"));
    assert_eq!(one("json,normal,terse"), format!("{terse}{json}{normal}"));
    // json+ includes json: one document.
    assert_eq!(one("json,json+"), one("json+"));
    // `run` takes the same list.
    let file = job_file("fio_cl_formats.fio", "[a]\nname=a\nsize=4m\n");
    let out = flashlab(&[
        "run",
        &file,
        "--device",
        DEVICE,
        "--output-format",
        "normal,json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        without_job_file(&stdout(&out)),
        without_job_file(&format!("{json}{normal}"))
    );
}

#[test]
fn minimal_is_terse_and_the_last_format_option_wins() {
    let terse = stdout(&fio(&["--name=a", "--size=4m", "--output-format=terse"]));
    assert!(terse.starts_with("3;fio-3.33;a;"), "{terse}");
    let minimal = fio(&["--name=a", "--size=4m", "--output-format=json", "--minimal"]);
    assert_eq!(stdout(&minimal), terse);
    let json = fio(&["--name=a", "--size=4m", "--minimal", "--output-format=json"]);
    assert!(stdout(&json).starts_with('{'));
}

#[test]
fn bare_flags_take_no_value_and_other_options_take_the_next_argument() {
    let out = fio(&[
        "--name=a",
        "--time_based",
        "--runtime",
        "50ms",
        "--group_reporting",
        "--numjobs",
        "2",
        "--description",
        "two words",
        "--output-format=json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let job = &json["jobs"][0];
    assert_eq!(job["job options"]["runtime"], "50ms");
    assert_eq!(job["job options"]["description"], "two words");
    assert_eq!(job["elapsed"], 1, "time_based ran for its runtime");
    assert_eq!(json["jobs"].as_array().unwrap().len(), 1, "group_reporting");
    // As in fio, a bare flag followed by a value leaves the value as a job file.
    let out = fio(&["--name=a", "--time_based", "1", "--runtime=1s"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot read 1"), "{}", stderr(&out));
}

#[test]
fn unknown_options_and_fio_run_options_are_refused_by_name() {
    let out = fio(&["--name=a", "--iodepht=4"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("argument 4 `--iodepht=4`"), "{err}");
    assert!(err.contains("did you mean iodepth?"), "{err}");
    let out = fio(&["--name=a", "--status-interval=1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--status-interval"),
        "{}",
        stderr(&out)
    );
    let out = fio(&["--name=a", "--readonly"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--readonly is a fio option"),
        "{}",
        stderr(&out)
    );
    let out = fio(&["--rw=read"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--name"), "{}", stderr(&out));
    // ETA options change nothing on standard output (progress goes to standard error).
    let out = fio(&[
        "--name=a",
        "--size=1m",
        "--eta=always",
        "--eta-newline=1",
        "--minimal",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let plain = fio(&["--name=a", "--size=1m", "--minimal"]);
    assert_eq!(stdout(&out), stdout(&plain));
}

#[test]
fn job_files_run_after_the_command_lines_jobs() {
    let file = job_file("fio_cl_after.fio", "[global]\nsize=2m\n[fa]\n[fb]\n");
    // Given first, the file still runs after the command line's job, with its globals.
    let out = flashlab(&[
        "fio",
        &file,
        "--device",
        DEVICE,
        "--bs=64k",
        "--name=c",
        "--size=1m",
        "--minimal",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(';').collect()).collect();
    let names: Vec<_> = rows.iter().map(|r| r[2]).collect();
    assert_eq!(names, ["c", "fa", "fb"]);
    // fa: 2 MiB (its file's global) in 64 KiB blocks (the command line's global).
    assert_eq!(rows[1][5], "2048");
    let out = flashlab(&[
        "fio",
        &file,
        "--device",
        DEVICE,
        "--bs=64k",
        "--name=c",
        "--output-format=json",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["jobs"][1]["read"]["total_ios"], 32);
    // A bad line in the file is named by file and line.
    let bad = job_file("fio_cl_bad.fio", "[fa]\nbs=4q\n");
    let out = flashlab(&["fio", "--device", DEVICE, "--name=c", &bad]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("fio_cl_bad.fio:2"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_unique_prefix_of_an_option_is_the_option() {
    let out = fio(&[
        "--name=a",
        "--rw=randread",
        "--size=16m",
        "--runtim=50ms",
        "--time_b",
        "-iodepth_lo",
        "2",
        "--output-f=json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let job = &json["jobs"][0];
    // fio records the option under its full name.
    assert_eq!(job["job options"]["runtime"], "50ms");
    assert_eq!(job["job options"]["iodepth_low"], "2");
    assert_eq!(job["elapsed"], 1, "time_based ran for its runtime");
    let out = fio(&[
        "--group_rep",
        "--rw=randread",
        "--size=4m",
        "--name=a",
        "--name=b",
        "--output-f=json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["jobs"].as_array().unwrap().len(), 1, "group_reporting");
}

#[test]
fn an_ambiguous_prefix_is_refused_with_the_possibilities() {
    let out = fio(&["--name=a", "--size=16m", "--iodep=1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("argument 5 `--iodep=1`"), "{err}");
    assert!(
        err.contains(
            "--iodepth, --iodepth_batch, --iodepth_batch_submit, --iodepth_batch_complete_min, \
             --iodepth_batch_complete, --iodepth_batch_complete_max, --iodepth_low"
        ),
        "{err}"
    );
    // getopt_long_only counts a name and its alias as two matches, and fio's table has two
    // `size` entries (the job option and the tiobench profile's).
    let out = fio(&["--name=a", "--size=16m", "-nr", "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("-nrfiles, -nr_files"),
        "{}",
        stderr(&out)
    );
    let out = fio(&["--name=a", "--siz=16m"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--size, --size"), "{}", stderr(&out));
    // An exact name is never a prefix (`bs` of `bssplit`), nor a run option's (`output` of
    // `output-format`).
    let out = fio(&["--name=a", "--size=16m", "--bs=8k", "--output-format=json"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn wait_for_names_a_job_before_this_one() {
    let out = fio(&[
        "--name=a",
        "--size=16m",
        "--name=b",
        "--size=16m",
        "--wait_for=zz",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("a job defined before this one"), "{err}");
    assert!(!err.contains("in the file"), "{err}");
    let out = fio(&[
        "--name=a",
        "--size=16m",
        "--name=b",
        "--size=16m",
        "--wait_for=a",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_synchronous_engine_runs_at_depth_one_as_in_fio() {
    // fio's default engine (psync) completes each I/O in the call: fio 3.33 runs
    // `--iodepth=8` at depth 1 ("IO depths : 1=100.0%"), samples no submission latency,
    // reports the depth written as the latency depth, and notes the cap once per clone
    // (on stderr with JSON output, where flashlab prints it with every format).
    let base = [
        "--name=t",
        "--rw=randread",
        "--size=1m",
        "--number_ios=50",
        "--output-format=json",
    ];
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        let o = fio(&a);
        assert!(o.status.success(), "{}", stderr(&o));
        let v = serde_json::from_str::<serde_json::Value>(&stdout(&o)).expect("JSON on stdout");
        (v["jobs"][0].clone(), stderr(&o))
    };
    let note = "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1\n";
    let depth1 = |job: &serde_json::Value| job["iodepth_level"]["1"].as_f64() == Some(100.0);
    for engine in [
        &[][..],
        &["--ioengine=sync"][..],
        &["--ioengine=pvsync2"][..],
    ] {
        let mut args = vec!["--iodepth=8", "--numjobs=2"];
        args.extend_from_slice(engine);
        let (job, e) = with(&args);
        assert_eq!(e, note.repeat(2), "{engine:?}");
        assert!(depth1(&job), "{engine:?}: {}", job["iodepth_level"]);
        assert_eq!(job["latency_depth"], 8, "{engine:?}");
        assert_eq!(job["read"]["slat_ns"]["N"], 0, "{engine:?}");
        assert!(job["read"]["clat_ns"]["mean"].as_f64().unwrap() > 0.0);
        assert_eq!(
            job["read"]["clat_ns"]["mean"], job["read"]["lat_ns"]["mean"],
            "{engine:?}: the call's whole time is completion latency"
        );
    }
    // psync at depth 1: no note, still no submission latency.
    let (job, e) = with(&["--iodepth=1"]);
    assert!(e.is_empty(), "{e}");
    assert_eq!(job["read"]["slat_ns"]["N"], 0);
    // An asynchronous engine keeps its depth and samples submission latency.
    let (job, e) = with(&["--iodepth=8", "--ioengine=libaio"]);
    assert!(e.is_empty(), "{e}");
    assert!(!depth1(&job), "{}", job["iodepth_level"]);
    assert_eq!(job["read"]["slat_ns"]["N"], 50);
}
