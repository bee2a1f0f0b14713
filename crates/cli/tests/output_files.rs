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
    flashlab()
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
