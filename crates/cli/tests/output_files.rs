//! Files a user names are theirs: every file flashlab writes is checked before the work
//! (a regular file or nothing, in a directory that takes a new file, not an input of the
//! same run), written beside and renamed only over a regular file, and nothing is left behind
//! on failure. The FIFO and link cases run in a temporary directory, never on /dev.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const JOB: &str = "[w]\nrw=write\nbs=4k\nsize=4m\n";

fn flashlab() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_flashlab"));
    command.env(
        "XDG_CACHE_HOME",
        concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache"),
    );
    command
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("flashlab-outfiles-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn mkfifo(p: &Path) {
    assert!(Command::new("mkfifo").arg(p).status().unwrap().success());
}

fn run_saving(job: &Path, save: &Path, extra: &[&str]) -> Output {
    saving(flashlab(), job, save, extra)
}

/// `command` (flashlab, or a wrapper that runs it) with a `run` of `job` saving to `save`.
fn saving(command: Command, job: &Path, save: &Path, extra: &[&str]) -> Output {
    saving_command(command, job, save, extra).output().unwrap()
}

/// `command` set up for [`saving`], not started.
fn saving_command(mut command: Command, job: &Path, save: &Path, extra: &[&str]) -> Command {
    command
        .args([
            "run",
            "--device",
            "tiny-test-1gb",
            "--output-format",
            "terse",
        ])
        .args(extra)
        .arg("--save-state")
        .arg(save)
        .arg(job);
    command
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn is_fifo(p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(p).unwrap().file_type().is_fifo()
}

/// `--save-state` renamed the state over whatever was at the path (a FIFO, a device, a
/// link): each is refused before the run with exit 2 and left as it was.
#[test]
fn save_state_never_replaces_a_fifo_a_directory_or_a_link_to_one() {
    let d = dir("kinds");
    let job = d.join("w.fio");
    std::fs::write(&job, JOB).unwrap();
    let fifo = d.join("fifo");
    mkfifo(&fifo);
    let link = d.join("link-to-fifo");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    let sub = d.join("sub");
    std::fs::create_dir(&sub).unwrap();
    for (path, says) in [
        (&fifo, "it is a FIFO"),
        (&link, "a link to a FIFO"),
        (&sub, "it is a directory"),
    ] {
        let out = run_saving(&job, path, &[]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
        assert!(out.stdout.is_empty(), "the run went ahead");
    }
    assert!(is_fifo(&fifo));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(sub.is_dir());
    // A link to a regular file: the file gets the state, the link stays a link.
    let real = d.join("real.state");
    std::fs::write(&real, "old").unwrap();
    let link = d.join("link.state");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = run_saving(&job, &link, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::read(&real).unwrap().starts_with(b"FLSTATE"));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    // Nothing else was left in the directory.
    let mut names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "fifo",
            "link-to-fifo",
            "link.state",
            "real.state",
            "sub",
            "w.fio"
        ]
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// An unwritable `--save-state` failed only after the whole run, with exit 1 and no
/// results: it is refused first, with exit 2, naming the option and the path.
#[test]
fn an_unwritable_save_is_refused_before_the_run() {
    let d = dir("before");
    let job = d.join("w.fio");
    std::fs::write(&job, JOB).unwrap();
    let out = run_saving(&job, Path::new("/nonexistent-flashlab-dir/x.state"), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--save-state /nonexistent-flashlab-dir/x.state"),
        "{}",
        stderr(&out)
    );
    let out = flashlab()
        .args(["run", "--device", "tiny-test-1gb", "--output"])
        .arg(d.join("no-such-dir").join("out.txt"))
        .arg(&job)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--output"), "{}", stderr(&out));
    std::fs::remove_dir_all(&d).unwrap();
}

/// A save that fails after the run (here the file-size limit, `ulimit -f`, which the
/// check before the run cannot foresee): the run's results still reach stdout, the error
/// names the option and the path, the exit code is 1, and no state or partial file is left.
#[test]
fn a_save_that_fails_after_the_run_keeps_the_results_and_leaves_nothing() {
    let d = dir("after");
    let job = d.join("w.fio");
    std::fs::write(&job, JOB).unwrap();
    let save = d.join("x.state");
    // The shell ignores SIGXFSZ (so a write past the limit fails with EFBIG rather than
    // killing the process) and limits files to 50 blocks; a tiny drive's state is megabytes.
    let mut limited = Command::new("sh");
    limited
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 50; exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_flashlab"))
        .env(
            "XDG_CACHE_HOME",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache"),
        );
    let out = saving(limited, &job, &save, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let results = String::from_utf8_lossy(&out.stdout);
    assert!(
        results.starts_with("3;"),
        "no terse results on stdout: {results}"
    );
    assert!(
        stderr(&out).contains(&format!("--save-state {}", save.display())),
        "{}",
        stderr(&out)
    );
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["w.fio"], "files left beside the job");
    std::fs::remove_dir_all(&d).unwrap();
}

/// A path that is also an input of the run: the job file as `--save-state` or `--output`,
/// serve's `--backing` as `--stats` or `--save-state` (which replaced the served disk's
/// data at exit). Exit 2, and the input is left as it was.
#[test]
fn an_output_that_is_also_an_input_is_refused() {
    let d = dir("same");
    let job = d.join("w.fio");
    std::fs::write(&job, JOB).unwrap();
    let out = run_saving(&job, &job, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("also the run's job file"),
        "{}",
        stderr(&out)
    );
    let out = flashlab()
        .args(["run", "--device", "tiny-test-1gb", "--output"])
        .arg(d.join(".").join("w.fio"))
        .arg(&job)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&job).unwrap(), JOB);

    let backing = d.join("disk.img");
    std::fs::write(&backing, b"the user's data").unwrap();
    for option in ["--stats", "--save-state"] {
        let out = flashlab()
            .args(["serve", "--device", "tiny-test-1gb", "--socket"])
            .arg(d.join("s.sock"))
            .arg("--backing")
            .arg(&backing)
            .arg(option)
            .arg(&backing)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{option}: {}", stderr(&out));
        assert!(stderr(&out).contains("--backing"), "{}", stderr(&out));
        assert_eq!(std::fs::read(&backing).unwrap(), b"the user's data");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// `--load-state` from a FIFO said the file did not start with the state magic (its
/// length, 0, was taken from the FIFO); a socket already in use and a socket path too long
/// for a socket address exited 1 where a path the user named that cannot be used is 2.
#[test]
fn a_fifo_state_and_unusable_sockets_are_bad_input() {
    let d = dir("sock");
    let job = d.join("w.fio");
    std::fs::write(&job, JOB).unwrap();
    let fifo = d.join("state.fifo");
    mkfifo(&fifo);
    let out = flashlab()
        .args(["run", "--device", "tiny-test-1gb", "--load-state"])
        .arg(&fifo)
        .arg(&job)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not a regular file"),
        "{}",
        stderr(&out)
    );

    let sock = d.join("in-use.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let long = d.join("x".repeat(200));
    for path in [&sock, &long] {
        let out = flashlab()
            .args(["serve", "--device", "tiny-test-1gb", "--socket"])
            .arg(path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// Echoed input was neither bounded nor escaped everywhere: `serve --time-scale 1e300`
/// printed 300 digits, and a trace line's terminal escapes reached the terminal raw.
#[test]
fn echoed_input_is_cut_and_escaped() {
    let d = dir("echo");
    let out = flashlab()
        .args([
            "serve",
            "--device",
            "tiny-test-1gb",
            "--time-scale",
            "1e300",
            "--socket",
        ])
        .arg(d.join("s.sock"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(out.stderr.len() < 400, "{}", stderr(&out));
    let trace = d.join("t.trace");
    std::fs::write(&trace, "\x1b]0;title\x07 \x1b[2J bad line\n").unwrap();
    let out = flashlab()
        .args(["replay", "--device", "tiny-test-1gb", "--format", "disksim"])
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        !out.stderr.iter().any(|&b| b == 0x1b || b == 0x07),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("\\x1b"), "{}", stderr(&out));
    std::fs::remove_dir_all(&d).unwrap();
}

/// A suite's `--outdir` was found unusable only after the whole suite had run (exit 1): a
/// regular file, a FIFO or a path under a file is bad input before any step runs.
#[test]
fn a_suite_outdir_that_is_no_directory_is_refused_before_the_run() {
    let d = dir("suite-outdir");
    let file = d.join("a-file");
    std::fs::write(&file, "mine").unwrap();
    let fifo = d.join("fifo");
    mkfifo(&fifo);
    for (bad, word) in [
        (file.clone(), "a regular file"),
        (fifo.clone(), "a FIFO"),
        (file.join("sub"), "cannot make the directory"),
    ] {
        let start = std::time::Instant::now();
        let out = flashlab()
            .args([
                "suite",
                "app-profiles",
                "--device",
                "tiny-test-1gb",
                "--outdir",
            ])
            .arg(&bad)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("--outdir") && stderr(&out).contains(word),
            "{}",
            stderr(&out)
        );
        assert!(start.elapsed() < std::time::Duration::from_secs(10));
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    assert!(is_fifo(&fifo));
    std::fs::remove_dir_all(&d).unwrap();
}

/// Runs `flashlab run` of `job` in `cwd` (where fio's log prefixes are relative to),
/// failing the test if it has not ended within 120 s (a FIFO opened for writing blocks).
fn run_in(cwd: &Path, job: &str) -> Output {
    let mut child = flashlab()
        .current_dir(cwd)
        .args([
            "run",
            "--device",
            "tiny-test-1gb",
            "--output-format",
            "terse",
            job,
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            panic!("flashlab run hung on a log file");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// fio's per-I/O logs were written in place after the run: a FIFO at a log's name blocked
/// the run for ever, a directory failed it after the work. Each log file is checked before
/// the run by the rule of every output (exit 2 naming the job's option and the file, the
/// FIFO and the user's other files untouched, nothing left beside them), and written
/// beside and renamed; the job file is never a log.
#[test]
fn log_files_follow_the_output_rule() {
    let d = dir("logs");
    std::fs::write(
        d.join("w.fio"),
        "[w]\nrw=write\nbs=4k\nsize=4m\nwrite_lat_log=x\nwrite_bw_log=x\nwrite_hist_log=x\n",
    )
    .unwrap();
    let mine = d.join("x_lat.1.log");
    std::fs::write(&mine, "mine").unwrap();
    let fifo = d.join("x_clat.1.log");
    mkfifo(&fifo);
    let out = run_in(&d, "w.fio");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    for says in ["job w: write_lat_log x_clat.1.log", "it is a FIFO"] {
        assert!(stderr(&out).contains(says), "{says}: {}", stderr(&out));
    }
    assert!(out.stdout.is_empty(), "the run went ahead");
    assert!(is_fifo(&fifo));
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "mine");
    std::fs::remove_file(&fifo).unwrap();
    let sub = d.join("x_clat_hist.1.log");
    std::fs::create_dir(&sub).unwrap();
    let out = run_in(&d, "w.fio");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    for says in ["write_hist_log x_clat_hist.1.log", "it is a directory"] {
        assert!(stderr(&out).contains(says), "{says}: {}", stderr(&out));
    }
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "mine");
    std::fs::remove_dir(&sub).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["w.fio", "x_lat.1.log"], "nothing left behind");
    // A log named as the job file is refused; then the run writes every log.
    std::fs::write(
        d.join("j.fio"),
        "[w]\nrw=write\nbs=4k\nsize=4m\nwrite_iolog=j.fio\n",
    )
    .unwrap();
    let out = run_in(&d, "j.fio");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("write_iolog j.fio: it is also the run's job file j.fio"),
        "{}",
        stderr(&out)
    );
    let out = run_in(&d, "w.fio");
    assert!(out.status.success(), "{}", stderr(&out));
    for name in [
        "x_slat.1.log",
        "x_clat.1.log",
        "x_bw.1.log",
        "x_clat_hist.1.log",
    ] {
        assert!(d.join(name).is_file(), "{name}");
    }
    let lat = std::fs::read_to_string(&mine).unwrap();
    assert!(lat.lines().count() > 10, "{lat}");
    let _ = std::fs::remove_dir_all(&d);
}

/// An output of `run`: where it is named (an option, or a job's log option) and the suffix
/// a log option adds to its prefix.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Out {
    Option(&'static str),
    Log(&'static str, &'static str),
}

const RUN_OUTPUTS: [Out; 8] = [
    Out::Option("--output"),
    Out::Option("--report"),
    Out::Option("--save-state"),
    Out::Log("write_iolog", ""),
    Out::Log("write_bw_log", "_bw.1.log"),
    Out::Log("write_lat_log", "_lat.1.log"),
    Out::Log("write_iops_log", "_iops.1.log"),
    Out::Log("write_hist_log", "_clat_hist.1.log"),
];

impl Out {
    fn name(self) -> &'static str {
        match self {
            Out::Option(o) | Out::Log(o, _) => o,
        }
    }

    /// What aims this output at `file`: command-line arguments, or a job-file line. None
    /// when a log's name cannot be `file` (it ends otherwise).
    fn aim(self, file: &Path) -> Option<(Vec<String>, String)> {
        let file = file.to_str().unwrap();
        match self {
            Out::Option(o) => Some((vec![o.to_string(), file.to_string()], String::new())),
            Out::Log(o, suffix) => {
                let prefix = file.strip_suffix(suffix)?;
                Some((Vec::new(), format!("{o}={prefix}\n")))
            }
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            Out::Option(_) => "",
            Out::Log(_, s) => s,
        }
    }
}

const RUN_INPUTS: [&str; 4] = ["job file", "included job file", "--device", "--load-state"];

/// Runs `run` with `input` (a kind of `RUN_INPUTS`) at `file` and the `outs` aimed at
/// `target`.
fn run_colliding(d: &Path, input: &str, file: &Path, outs: &[Out], target: &Path) -> Output {
    let mut args: Vec<String> = Vec::new();
    let mut job = JOB.to_string();
    for out in outs {
        let (a, line) = out.aim(target).unwrap();
        args.extend(a);
        job.push_str(&line);
    }
    let main = d.join("main.fio");
    let mut device = "tiny-test-1gb".to_string();
    let job_path = match input {
        "job file" => {
            std::fs::write(file, &job).unwrap();
            file.to_path_buf()
        }
        "included job file" => {
            std::fs::write(file, "[global]\nbs=4k\n").unwrap();
            let text = format!("include {}\n{job}", file.display());
            std::fs::write(&main, text).unwrap();
            main
        }
        _ => {
            std::fs::write(file, "the user's file\n").unwrap();
            std::fs::write(&main, &job).unwrap();
            if input == "--device" {
                device = file.display().to_string();
            } else {
                args.extend([input.to_string(), file.display().to_string()]);
            }
            main
        }
    };
    flashlab()
        .args(["run", "--device", &device])
        .args(&args)
        .arg(&job_path)
        .output()
        .unwrap()
}

fn assert_refused(out: &Output, names: &[&str], file: &Path, before: &[u8], case: &str) {
    let e = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{case}: {e}");
    for name in names {
        assert!(
            e.contains(&format!("{name} ")),
            "{case}: {name} not named: {e}"
        );
    }
    assert!(e.contains("it is also the run's"), "{case}: {e}");
    assert_eq!(
        std::fs::read(file).unwrap(),
        before,
        "{case}: the file changed"
    );
}

/// Every output of `run` (results, report, state, each log option) against every input
/// (the job file, an included file, the device's file, the loaded state) and every other
/// output: aimed at one file, the run is refused before it starts, both named, the file
/// as it was.
#[test]
fn every_run_input_and_output_pair_collides() {
    let d = dir("pairs-run");
    for input in RUN_INPUTS {
        for out in RUN_OUTPUTS {
            let file = d.join(format!("f{}", out.suffix()));
            let result = run_colliding(&d, input, &file, &[out], &file);
            let before = std::fs::read(&file).unwrap();
            let case = format!("{input} / {}", out.name());
            assert_refused(&result, &[out.name(), input], &file, &before, &case);
            let _ = std::fs::remove_file(&file);
        }
    }
    for (i, a) in RUN_OUTPUTS.iter().enumerate() {
        for b in &RUN_OUTPUTS[i + 1..] {
            let suffix = if a.suffix().is_empty() {
                b.suffix()
            } else {
                a.suffix()
            };
            let file = d.join(format!("g{suffix}"));
            if a.aim(&file).is_none() || b.aim(&file).is_none() {
                continue; // two log options of different suffixes never name one file
            }
            std::fs::write(&file, "the user's file\n").unwrap();
            let state = d.join("s.state");
            let result = run_colliding(&d, "--load-state", &state, &[*a, *b], &file);
            let case = format!("{} / {}", a.name(), b.name());
            assert_refused(
                &result,
                &[a.name(), b.name()],
                &file,
                b"the user's file\n",
                &case,
            );
        }
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// A case of a command's input and output at one file: its name, the file and what it
/// holds, the arguments, and the two names the message must give.
type Case<'a> = (&'a str, &'a Path, Vec<u8>, Vec<String>, [&'a str; 2]);

/// The other commands' inputs and outputs, pair by pair: `fio`'s job file, `replay`'s
/// trace, device and state, a sweep's plan and job file against its point files, the
/// point files `sweep collect` reads against its tables, a suite's device and state, and
/// `serve`'s backing file, state and socket; and each command's two outputs at one path.
#[test]
fn every_other_command_input_and_output_pair_collides() {
    let d = dir("pairs-other");
    let trace = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/traces/sample-msr.csv"
    ))
    .unwrap();
    let user = b"the user's file\n".to_vec();
    let od = d.join("od");
    std::fs::create_dir_all(&od).unwrap();
    let point = od.join("point-000000.json");
    let plan_text = "job = \"rw.fio\"\ndevice = \"tiny-test-1gb\"\n[env]\nRUNTIME = \"1ms\"\n[axes]\nseed = [1, 2]\n";
    let s = |p: &Path| p.display().to_string();
    let f = d.join("f");
    // (case, the file and its contents, the arguments, the names the message must give)
    let cases: Vec<Case> = vec![
        (
            "fio job file / --output",
            &f,
            JOB.into(),
            vec!["fio".into(), format!("--output={}", s(&f)), s(&f)],
            ["--output", "job file"],
        ),
        (
            "fio job file / --save-state",
            &f,
            JOB.into(),
            vec!["fio".into(), "--save-state".into(), s(&f), s(&f)],
            ["--save-state", "job file"],
        ),
        (
            "fio job file / write_iolog",
            &f,
            JOB.into(),
            vec![
                "fio".into(),
                s(&f),
                "--name=x".into(),
                "--rw=read".into(),
                "--size=1m".into(),
                format!("--write_iolog={}", s(&f)),
            ],
            ["write_iolog", "job file"],
        ),
        (
            "replay trace / --output",
            &f,
            trace.clone(),
            vec![
                "replay".into(),
                "--format".into(),
                "msr".into(),
                s(&f),
                "--output".into(),
                s(&f),
            ],
            ["--output", "trace"],
        ),
        (
            "replay trace / --save-state",
            &f,
            trace.clone(),
            vec![
                "replay".into(),
                "--format".into(),
                "msr".into(),
                s(&f),
                "--save-state".into(),
                s(&f),
            ],
            ["--save-state", "trace"],
        ),
        (
            "replay --device / --output",
            &f,
            user.clone(),
            vec![
                "replay".into(),
                "--format".into(),
                "msr".into(),
                s(&d.join("t.csv")),
                "--device".into(),
                s(&f),
                "--output".into(),
                s(&f),
            ],
            ["--output", "--device"],
        ),
        (
            "replay --load-state / --save-state",
            &f,
            user.clone(),
            vec![
                "replay".into(),
                "--format".into(),
                "msr".into(),
                s(&d.join("t.csv")),
                "--load-state".into(),
                s(&f),
                "--save-state".into(),
                s(&f),
            ],
            ["--save-state", "--load-state"],
        ),
        (
            "replay --output / --save-state",
            &f,
            user.clone(),
            vec![
                "replay".into(),
                "--format".into(),
                "msr".into(),
                s(&d.join("t.csv")),
                "--output".into(),
                s(&f),
                "--save-state".into(),
                s(&f),
            ],
            ["--save-state", "--output"],
        ),
        (
            "sweep plan / point file",
            &point,
            // The plan in the output directory names the job beside it.
            plan_text.replace("rw.fio", "../rw.fio").into(),
            vec!["sweep".into(), s(&point), "--outdir".into(), s(&od)],
            ["--outdir", "plan"],
        ),
        (
            "sweep job file / point file",
            &point,
            JOB.into(),
            vec![
                "sweep".into(),
                s(&d.join("p.toml")),
                "--outdir".into(),
                s(&od),
            ],
            ["--outdir", "plan's job file"],
        ),
        (
            "collect point file / --csv",
            &point,
            b"{}".to_vec(),
            vec![
                "sweep".into(),
                "collect".into(),
                s(&od),
                "--csv".into(),
                s(&od.join("point-000003.json")),
            ],
            ["--csv", "point files in"],
        ),
        (
            "collect point file / --parquet",
            &point,
            b"{}".to_vec(),
            vec![
                "sweep".into(),
                "collect".into(),
                s(&od),
                "--parquet".into(),
                s(&point),
            ],
            ["--parquet", "point files in"],
        ),
        (
            "collect --csv / --parquet",
            &f,
            user.clone(),
            vec![
                "sweep".into(),
                "collect".into(),
                s(&od),
                "--parquet".into(),
                s(&f),
                "--csv".into(),
                s(&f),
            ],
            ["--csv", "--parquet"],
        ),
        (
            "suite --device / --report",
            &f,
            user.clone(),
            vec![
                "suite".into(),
                "four-corners".into(),
                "--no-state-cache".into(),
                "--device".into(),
                s(&f),
                "--report".into(),
                s(&f),
            ],
            ["--report", "--device"],
        ),
        (
            "suite --load-state / --report",
            &f,
            user.clone(),
            vec![
                "suite".into(),
                "four-corners".into(),
                "--no-state-cache".into(),
                "--load-state".into(),
                s(&f),
                "--report".into(),
                s(&f),
            ],
            ["--report", "--load-state"],
        ),
        (
            "suite --load-state / --save-state",
            &f,
            user.clone(),
            vec![
                "suite".into(),
                "four-corners".into(),
                "--no-state-cache".into(),
                "--load-state".into(),
                s(&f),
                "--save-state".into(),
                s(&f),
            ],
            ["--save-state", "--load-state"],
        ),
        (
            "suite --report / --save-state",
            &f,
            user.clone(),
            vec![
                "suite".into(),
                "four-corners".into(),
                "--no-state-cache".into(),
                "--report".into(),
                s(&f),
                "--save-state".into(),
                s(&f),
            ],
            ["--save-state", "--report"],
        ),
        (
            "serve --backing / --stats",
            &f,
            user.clone(),
            vec![
                "serve".into(),
                "--socket".into(),
                s(&d.join("s.sock")),
                "--backing".into(),
                s(&f),
                "--stats".into(),
                s(&f),
            ],
            ["--stats", "--backing"],
        ),
        (
            "serve --load-state / --save-state",
            &f,
            user.clone(),
            vec![
                "serve".into(),
                "--socket".into(),
                s(&d.join("s.sock")),
                "--load-state".into(),
                s(&f),
                "--save-state".into(),
                s(&f),
            ],
            ["--save-state", "--load-state"],
        ),
        (
            "serve --socket / --stats",
            &f,
            user.clone(),
            vec![
                "serve".into(),
                "--socket".into(),
                s(&f),
                "--stats".into(),
                s(&f),
            ],
            ["--stats", "--socket"],
        ),
        (
            "serve --stats / --save-state",
            &f,
            user.clone(),
            vec![
                "serve".into(),
                "--socket".into(),
                s(&d.join("s.sock")),
                "--stats".into(),
                s(&f),
                "--save-state".into(),
                s(&f),
            ],
            ["--save-state", "--stats"],
        ),
    ];
    std::fs::write(d.join("t.csv"), &trace).unwrap();
    std::fs::write(d.join("rw.fio"), JOB).unwrap();
    std::fs::write(
        d.join("p.toml"),
        plan_text.replace("rw.fio", "od/point-000000.json"),
    )
    .unwrap();
    run_cases(cases);
    std::fs::remove_dir_all(&d).unwrap();
}

/// Each case run under a time limit (a server or suite that started by mistake is stopped):
/// refused before the work, both named, the file as it was.
fn run_cases(cases: Vec<Case>) {
    for (case, file, contents, args, names) in cases {
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(file, &contents).unwrap();
        let out = Command::new("timeout")
            .args(["30", env!("CARGO_BIN_EXE_flashlab")])
            .args(&args)
            .env(
                "XDG_CACHE_HOME",
                concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache"),
            )
            .output()
            .unwrap();
        assert_refused(&out, &names, file, &contents, case);
    }
}

/// An output of a suite: a file an option names, or a file a directory option writes
/// (the option, and the file's path under the directory).
#[derive(Clone, Copy, Debug)]
enum SuiteOut {
    File(&'static str),
    In(&'static str, &'static str),
}

/// Every kind of file `flashlab suite` writes.
const SUITE_OUTPUTS: [SuiteOut; 10] = [
    SuiteOut::File("--report"),
    SuiteOut::File("--save-state"),
    SuiteOut::In("--outdir", "four-corners.csv"),
    SuiteOut::In("--outdir", "four-corners-tidy.csv"),
    SuiteOut::In("--outdir", "figures.csv"),
    SuiteOut::In("--outdir", "1-tiny-test-1gb/01-randread-4k.json"),
    SuiteOut::In("--outdir", "1-tiny-test-1gb/01-randread-4k.fio"),
    SuiteOut::In("--figures", "qos-iops.svg"),
    SuiteOut::In("--figures", "qos-iops.png"),
    SuiteOut::In("--state-cache", "0123456789abcdef.state"),
];

/// Every kind of file `flashlab suite` reads (`--target` is real storage fio writes).
const SUITE_INPUTS: [&str; 3] = ["--device", "--load-state", "--target"];

impl SuiteOut {
    fn option(self) -> &'static str {
        match self {
            SuiteOut::File(o) | SuiteOut::In(o, _) => o,
        }
    }

    /// Where this output is aimed at in `d` for a file of its kind.
    fn file(self, d: &Path) -> PathBuf {
        match self {
            SuiteOut::File(_) => d.join("f"),
            SuiteOut::In(o, rel) => d.join(o.trim_start_matches('-')).join(rel),
        }
    }

    /// The arguments that aim this output at `file`; none when it cannot write there.
    fn aim(self, file: &Path) -> Option<Vec<String>> {
        let path = file.to_str().unwrap();
        match self {
            SuiteOut::File(o) => Some(vec![o.into(), path.into()]),
            SuiteOut::In(o, rel) => {
                let dir = path.strip_suffix(rel)?.strip_suffix('/')?;
                Some(vec![o.into(), dir.into()])
            }
        }
    }
}

/// `flashlab suite four-corners` with `args` (and no state cache unless it is aimed at).
fn suite_args(args: Vec<String>) -> Vec<String> {
    let mut all: Vec<String> = ["suite", "four-corners", "--runtime", "10ms"]
        .map(String::from)
        .into();
    if !args.iter().any(|a| a == "--state-cache") {
        all.push("--no-state-cache".into());
    }
    all.extend(args);
    all
}

/// Every input of a suite (a device's file, a loaded state, real storage) against every
/// file it writes (report, state, each kind of `--outdir` file, each chart of `--figures`,
/// a state-cache entry), and every two outputs that can name one file: refused before the
/// work, both named, the file as it was. A loaded state uses no state cache, so that pair
/// has no file in common.
#[test]
fn every_suite_input_and_output_pair_collides() {
    let d = dir("pairs-suite");
    let user = b"the user's file\n".to_vec();
    let mut files: Vec<(String, PathBuf, Vec<String>, [&str; 2])> = Vec::new();
    for input in SUITE_INPUTS {
        for out in SUITE_OUTPUTS {
            if input == "--load-state" && out.option() == "--state-cache" {
                continue;
            }
            let file = out.file(&d.join(format!("in{}", files.len())));
            let mut args = vec![input.to_string(), file.display().to_string()];
            args.extend(out.aim(&file).unwrap());
            let case = format!("{input} / {out:?}");
            files.push((case, file, args, [out.option(), input]));
        }
    }
    for (i, a) in SUITE_OUTPUTS.iter().enumerate() {
        for b in &SUITE_OUTPUTS[i + 1..] {
            let at = d.join(format!("out{}", files.len()));
            let file = match (a, b) {
                (SuiteOut::In(..), _) => a.file(&at),
                _ => b.file(&at),
            };
            let (Some(mut args), Some(more)) = (a.aim(&file), b.aim(&file)) else {
                continue; // two directories' files of different names never meet
            };
            args.extend(more);
            let case = format!("{a:?} / {b:?}");
            files.push((case, file, args, [a.option(), b.option()]));
        }
    }
    assert!(files.len() >= 40, "{} pairs", files.len());
    let cases: Vec<Case> = files
        .iter()
        .map(|(case, file, args, names)| {
            (
                case.as_str(),
                file.as_path(),
                user.clone(),
                suite_args(args.clone()),
                *names,
            )
        })
        .collect();
    run_cases(cases);
    std::fs::remove_dir_all(&d).unwrap();
}

/// The temporary files beside `path` (`.<name>.<host>-<pid>-<n>.partial`).
fn partials(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".partial"))
        .collect()
}

/// Starts a run saving a large state (about 240 MB) to `save` and waits until its temporary file is
/// there (the save under way): the child, or None when the save ended first.
fn saving_run(d: &Path, save: &Path) -> Option<std::process::Child> {
    let job = d.join("w.fio");
    std::fs::write(&job, "[w]\nrw=write\nbs=128k\nsize=100%\nio_size=4m\n").unwrap();
    let mut child = flashlab()
        .args(["run", "--device", "wd-sn850-1tb", "--set", "sim.scale=0.05"])
        .args(["--output-format", "terse"])
        .arg("--save-state")
        .arg(save)
        .arg(&job)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while started.elapsed() < std::time::Duration::from_secs(120) {
        if !partials(d).is_empty() {
            return Some(child);
        }
        if child.try_wait().unwrap().is_some() {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    panic!("no save started within 120 s");
}

/// SIGINT or SIGTERM during a save left a hidden temporary file of hundreds of MB that
/// nothing removed: the interrupt now removes it, the process ends by the signal, and the
/// state saved before is whole. A temporary file a killed process left is removed by the
/// next run that writes in its directory.
#[test]
fn an_interrupted_save_leaves_no_temporary_file() {
    use std::os::unix::process::ExitStatusExt;
    let d = dir("interrupt");
    let save = d.join("big.state");
    std::fs::write(&save, b"the state saved before").unwrap();
    let mut interrupted = 0;
    for signal in ["-INT", "-TERM"] {
        let Some(mut child) = saving_run(&d, &save) else {
            continue;
        };
        let id = child.id().to_string();
        assert!(Command::new("kill")
            .args([signal, &id])
            .status()
            .unwrap()
            .success());
        let status = child.wait().unwrap();
        assert!(status.signal().is_some(), "{signal}: {status:?}");
        assert_eq!(partials(&d), Vec::<String>::new(), "{signal}");
        assert_eq!(std::fs::read(&save).unwrap(), b"the state saved before");
        interrupted += 1;
    }
    assert!(interrupted > 0, "every save ended before its signal");
    // SIGKILL cannot be caught: its temporary file stays until the next run here.
    if let Some(mut child) = saving_run(&d, &save) {
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(partials(&d).len(), 1);
        let job = d.join("small.fio");
        std::fs::write(&job, JOB).unwrap();
        let out = run_saving(&job, &d.join("other.state"), &[]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(partials(&d), Vec::<String>::new());
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// A legal 246-character `--save-state` name was refused ("File name too long"): its
/// temporary file's name added the suffix past 255 bytes.
#[test]
fn a_long_legal_state_name_is_saved() {
    let d = dir("long-name");
    let job = d.join("w.fio");
    std::fs::write(&job, JOB).unwrap();
    let save = d.join(format!("{}.state", "s".repeat(240)));
    let out = run_saving(&job, &save, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(std::fs::metadata(&save).unwrap().len() > 0);
    std::fs::remove_dir_all(&d).unwrap();
}

/// Four runs saving to one path at once all exited 0, each replacing the others' state
/// without a word: a run whose file another process wrote while it ran is not replaced
/// and fails saying so.
///
/// A run that starts after another has saved replaces that file by design (it saw it at
/// its start), so the four must overlap: each runs about a second, and an attempt in which
/// more than one saved (a run held back past another's end, on a loaded machine) is run
/// again, three attempts at most. Without the check every attempt saves four times.
#[test]
fn concurrent_runs_saving_to_one_path_do_not_overwrite_each_other_silently() {
    let d = dir("concurrent");
    let job = d.join("w.fio");
    std::fs::write(&job, "[w]\nrw=randwrite\nbs=4k\nsize=256m\nio_size=24g\n").unwrap();
    let save = d.join("one.state");
    let mut attempts = Vec::new();
    for _ in 0..3 {
        let _ = std::fs::remove_file(&save);
        let children: Vec<_> = (0..4)
            .map(|_| {
                saving_command(flashlab(), &job, &save, &[])
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let outs: Vec<_> = children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect();
        for out in outs.iter().filter(|o| o.status.code() != Some(0)) {
            assert_eq!(out.status.code(), Some(1), "{}", stderr(out));
            assert!(
                stderr(out).contains("another process wrote it while this one ran"),
                "{}",
                stderr(out)
            );
        }
        let saved = outs.iter().filter(|o| o.status.code() == Some(0)).count();
        attempts.push(saved);
        if saved == 1 {
            break;
        }
    }
    assert_eq!(
        attempts.last(),
        Some(&1),
        "runs that saved in each attempt: {attempts:?}"
    );
    assert_eq!(partials(&d), Vec::<String>::new());
    std::fs::remove_dir_all(&d).unwrap();
}

/// Command-line words of `line` (paths under the temporary directory have no spaces).
fn words(line: String) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

/// The files of a sweep with a `[precondition]`: its job file against a state-cache entry,
/// its device's file against a point file.
#[test]
fn every_sweep_input_and_output_pair_collides() {
    let d = dir("pairs-sweep");
    let tiny = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../presets/tiny-test-1gb.toml"
    ))
    .unwrap();
    let (cd, od) = (d.join("cd"), d.join("od"));
    let (entry, point) = (
        cd.join("0123456789abcdef.state"),
        od.join("point-000000.json"),
    );
    let pre = "job = \"cd/0123456789abcdef.state\"\ndevice = \"tiny-test-1gb\"\n\
               [precondition]\nmax-rounds = 1\n[axes]\nseed = [1, 2]\n";
    std::fs::write(d.join("pre.toml"), pre).unwrap();
    std::fs::write(d.join("rw.fio"), JOB).unwrap();
    let dev = "job = \"rw.fio\"\ndevice = \"od/point-000000.json\"\n[axes]\nseed = [1, 2]\n";
    std::fs::write(d.join("dev.toml"), dev).unwrap();
    let p = |name: &str| d.join(name).display().to_string();
    let cases: Vec<Case> = vec![
        (
            "sweep job file / --state-cache entry",
            &entry,
            JOB.into(),
            words(format!(
                "sweep {} --outdir {} --state-cache {}",
                p("pre.toml"),
                p("o2"),
                p("cd")
            )),
            ["--state-cache", "plan's job file"],
        ),
        (
            "sweep device / point file",
            &point,
            tiny,
            words(format!("sweep {} --outdir {}", p("dev.toml"), p("od"))),
            ["--outdir", "plan's device"],
        ),
    ];
    run_cases(cases);
    std::fs::remove_dir_all(&d).unwrap();
}

/// The files of `fit`: a drive's file against the plan's job files and outputs `fit run`
/// writes; the plan's outputs and manifest `fit DIR` reads (from a plan `fit plan` wrote)
/// against `--output` and `--report`, and those two against each other.
#[test]
fn every_fit_input_and_output_pair_collides() {
    let d = dir("pairs-fit");
    let tiny = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../presets/tiny-test-1gb.toml"
    ))
    .unwrap();
    let (fr, fp) = (d.join("fr"), d.join("fp"));
    let planned = flashlab()
        .args(["fit", "plan", "--outdir"])
        .arg(&fp)
        .output()
        .unwrap();
    assert!(planned.status.success(), "{}", stderr(&planned));
    let (fr_job, fr_log) = (fr.join("qd1-write.fio"), fr.join("seq-fill_bw.1.log"));
    let (fp_out, fp_manifest, f) = (fp.join("trim.json"), fp.join("manifest.json"), d.join("f"));
    let s = |p: &Path| p.display().to_string();
    let run = |device: &Path| {
        words(format!(
            "fit run --outdir {} --device {}",
            s(&fr),
            s(device)
        ))
    };
    let fit = |rest: String| words(format!("fit {} {rest}", s(&fp)));
    let user = b"the user's file\n".to_vec();
    let cases: Vec<Case> = vec![
        (
            "fit run --device / job file",
            &fr_job,
            tiny.clone(),
            run(&fr_job),
            ["--outdir", "--device"],
        ),
        (
            "fit run --device / output",
            &fr_log,
            tiny,
            run(&fr_log),
            ["--outdir", "--device"],
        ),
        (
            "fit plan output / --output",
            &fp_out,
            user.clone(),
            fit(format!("--output {}", s(&fp_out))),
            ["--output", "plan output"],
        ),
        (
            "fit manifest / --report",
            &fp_manifest,
            std::fs::read(&fp_manifest).unwrap(),
            fit(format!(
                "--output {} --report {}",
                s(&d.join("o.toml")),
                s(&fp_manifest)
            )),
            ["--report", "plan output"],
        ),
        (
            "fit --output / --report",
            &f,
            user,
            fit(format!("--output {} --report {}", s(&f), s(&f))),
            ["--report", "--output"],
        ),
    ];
    run_cases(cases);
    std::fs::remove_dir_all(&d).unwrap();
}

/// Starts a suite whose precondition cache in `cache` takes entries of tens of MB, and
/// waits until one of its temporary files is there (a cache write under way): the child
/// and the temporary file's name, or None when the suite ended first.
fn caching_suite(cache: &Path) -> Option<(std::process::Child, String)> {
    let mut child = flashlab()
        .args(["suite", "precondition", "--device", "wd-sn850-1tb"])
        .args(["--set", "sim.scale=0.02", "--output-format", "json"])
        .arg("--state-cache")
        .arg(cache)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while started.elapsed() < std::time::Duration::from_secs(120) {
        if let Some(name) = partials(cache).pop() {
            return Some((child, name));
        }
        if child.try_wait().unwrap().is_some() {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    panic!("no cache write started within 120 s");
}

/// SIGINT or SIGTERM during a precondition-cache write left its temporary file of tens
/// of MB: the interrupt removes it now. One a killed process left (SIGKILL cannot be
/// caught) is removed by the next run that writes an entry there.
#[test]
fn an_interrupted_cache_write_leaves_no_temporary_file() {
    use std::os::unix::process::ExitStatusExt;
    let cache = dir("cache-interrupt");
    let mut interrupted = 0;
    for signal in ["-INT", "-TERM"] {
        let Some((mut child, _)) = caching_suite(&cache) else {
            continue;
        };
        let id = child.id().to_string();
        assert!(Command::new("kill")
            .args([signal, &id])
            .status()
            .unwrap()
            .success());
        let status = child.wait().unwrap();
        assert!(status.signal().is_some(), "{signal}: {status:?}");
        assert_eq!(partials(&cache), Vec::<String>::new(), "{signal}");
        interrupted += 1;
    }
    assert!(interrupted > 0, "every cache write ended before its signal");
    if let Some((mut child, stale)) = caching_suite(&cache) {
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(cache.join(&stale).exists(), "{stale}");
        // The next run writes an entry (the killed one's was never renamed into place).
        let (mut next, _) = caching_suite(&cache).expect("a second cache write");
        let entry_written = std::time::Instant::now();
        while cache.join(&stale).exists() && entry_written.elapsed().as_secs() < 120 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        next.kill().unwrap();
        next.wait().unwrap();
        assert!(!cache.join(&stale).exists(), "{stale} left");
    }
    let _ = std::fs::remove_dir_all(&cache);
}
