//! Helpers shared by the integration tests: run the `flashlab` binary in the test scratch
//! directory and read what it printed. Each test binary uses a subset of them.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// Run `flashlab` with `args` in the scratch directory (log files land there).
pub fn flashlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(args)
        .current_dir(env!("CARGO_TARGET_TMPDIR"))
        // Suites keep preconditioned drives in the state cache: the tests' own, not the
        // user's.
        .env(
            "XDG_CACHE_HOME",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache"),
        )
        .output()
        .expect("the flashlab binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Write a job file under the test scratch directory and return its path.
pub fn job_file(name: &str, text: &str) -> String {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, text).expect("write job file");
    path.to_string_lossy().into_owned()
}

/// Write the job file `name` holding `text` and run it on `device` with `--output-format
/// format`.
pub fn run_job(name: &str, text: &str, device: &str, format: &str) -> Output {
    let path = job_file(name, text);
    flashlab(&["run", &path, "--device", device, "--output-format", format])
}
