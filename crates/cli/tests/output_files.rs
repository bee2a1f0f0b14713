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
fn saving(mut command: Command, job: &Path, save: &Path, extra: &[&str]) -> Output {
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
        .arg(job)
        .output()
        .unwrap()
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
        stderr(&out).contains("write_iolog j.fio: it is also the job file"),
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
