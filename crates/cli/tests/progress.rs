//! Progress on standard error off a terminal (as in a CI log): `--progress` on suites and
//! runs, fio's `--eta*` on `flashlab fio`. Progress never changes standard output.

mod common;

use common::{flashlab, job_file, stderr, stdout};

const DEVICE: &str = "tiny-test-1gb";

const JOB: &str = "\
[w]
ioengine=libaio
rw=randwrite
bs=4k
iodepth=8
size=64m
";

/// The plain progress lines of a run's standard error.
fn progress_lines(err: &str) -> Vec<&str> {
    err.lines()
        .filter(|l| l.starts_with("flashlab: [") && l.contains("simulated"))
        .collect()
}

/// A wall time as the display prints it: `0m05s` or `1h02m`.
fn has_duration_after(line: &str, label: &str) -> bool {
    line.split(label).skip(1).any(|rest| {
        let t: Vec<char> = rest.chars().take(5).collect();
        t.len() == 5
            && t[0].is_ascii_digit()
            && (t[1] == 'm' || t[1] == 'h' || t[1].is_ascii_digit())
            && t.iter().filter(|c| c.is_ascii_digit()).count() >= 3
    })
}

fn four_corners(progress: &[&str]) -> std::process::Output {
    let mut args = vec![
        "suite",
        "four-corners",
        "--device",
        DEVICE,
        "--runtime",
        "1s",
        // Every step runs: none is taken from the state cache.
        "--no-state-cache",
    ];
    args.extend_from_slice(progress);
    let out = flashlab(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

#[test]
fn a_suite_off_a_terminal_logs_step_share_and_eta_and_never_changes_stdout() {
    let logged = four_corners(&["--progress", "always", "--progress-interval", "50ms"]);
    let err = stderr(&logged);
    let lines = progress_lines(&err);
    // always: a first line, a last one, and one every 50 ms between.
    assert!(lines.len() >= 2, "{err}");
    for line in &lines {
        assert!(line.contains(&format!("{DEVICE}: step ")), "{line}");
        assert!(line.contains('%'), "{line}");
        assert!(line.contains("simulated "), "{line}");
        assert!(line.contains("ETA"), "{line}");
    }
    let first = lines[0];
    assert!(first.contains("step 1 purge"), "{first}");
    // four-corners plans its steps, the random-write rounds at their most until they end.
    assert!(
        first.contains("suite at least 0% of its steps (rounds counted at their most)"),
        "{first}"
    );
    let last = lines[lines.len() - 1];
    assert!(
        last.contains("suite 100% of its steps, ") && has_duration_after(last, "ETA ~"),
        "{last}"
    );
    assert!(lines.iter().all(|l| !l.contains("not known")), "{err}");
    // The share never goes back.
    let shares: Vec<u32> = lines
        .iter()
        .map(|l| {
            let rest = l.split("suite ").nth(1).expect(l);
            let rest = rest.trim_start_matches("at least ");
            rest[..rest.find('%').expect(l)].parse().expect(l)
        })
        .collect();
    assert!(shares.windows(2).all(|w| w[0] <= w[1]), "{err}");

    let quiet = four_corners(&["--progress", "never"]);
    assert_eq!(stderr(&quiet), "");
    // Progress goes to standard error only: the results are the same bytes either way.
    assert_eq!(logged.stdout, quiet.stdout);
    let default = four_corners(&[]);
    assert_eq!(default.stdout, quiet.stdout);
}

#[test]
fn a_suite_that_knows_its_length_gives_the_suite_share_and_eta() {
    // cache-passes reports the share of its four passes.
    let out = flashlab(&[
        "suite",
        "cache-passes",
        "--device",
        DEVICE,
        // The review's system's sizes do not fit the 1 GB drive.
        "--size",
        "64MiB",
        "--app-region",
        "64MiB",
        "--scan-set",
        "256MiB",
        "--progress",
        "always",
        "--progress-interval",
        "1h",
    ]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let lines = progress_lines(&err);
    assert_eq!(lines.len(), 2, "the first and the last line only: {err}");
    let last = lines[1];
    assert!(last.contains("suite 100%, ETA 0m00s"), "{last}");
}

#[test]
fn a_run_logs_phase_share_simulated_time_and_eta() {
    let path = job_file("progress-run.fio", JOB);
    let run = |progress: &[&str]| {
        let mut args = vec!["run", path.as_str(), "--device", DEVICE];
        args.extend_from_slice(progress);
        let out = flashlab(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        out
    };
    let logged = run(&["--progress", "always", "--progress-interval", "1h"]);
    let err = stderr(&logged);
    let lines = progress_lines(&err);
    assert_eq!(lines.len(), 2, "{err}");
    assert!(lines[0].contains("[1/1] w: "), "{}", lines[0]);
    assert!(
        lines[1].contains("100.0% done, simulated ") && lines[1].ends_with("ETA 0m00s"),
        "{}",
        lines[1]
    );
    // auto off a terminal: a line every interval only, none in a run shorter than it.
    let auto = run(&["--progress-interval", "1h"]);
    assert_eq!(stderr(&auto), "");
    assert_eq!(logged.stdout, auto.stdout);
}

#[test]
fn fio_eta_options_keep_fio_meanings() {
    let fio = |extra: &[&str]| {
        let mut args = vec![
            "fio",
            "--device",
            DEVICE,
            "--name=w",
            "--ioengine=libaio",
            "--rw=randwrite",
            "--bs=4k",
            "--size=32m",
        ];
        args.extend_from_slice(extra);
        let out = flashlab(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        out
    };
    // fio's default (auto) shows its ETA on a terminal only.
    let plain = fio(&[]);
    assert_eq!(stderr(&plain), "");
    let never = fio(&["--eta=never", "--eta-newline=1ms"]);
    assert_eq!(stderr(&never), "");
    // always: lines off a terminal too, every --eta-newline.
    let always = fio(&["--eta=always", "--eta-newline=1ms"]);
    let err = stderr(&always);
    let lines = progress_lines(&err);
    assert!(!lines.is_empty(), "{err}");
    assert!(lines.iter().all(|l| l.contains("% done")), "{err}");
    assert_eq!(plain.stdout, always.stdout);
    // flashlab's own --progress wins over --eta.
    let own = fio(&[
        "--eta=never",
        "--progress",
        "always",
        "--progress-interval=1h",
    ]);
    assert_eq!(progress_lines(&stderr(&own)).len(), 2, "{}", stderr(&own));
}

#[test]
fn bad_progress_options_exit_2_saying_what_is_valid() {
    let out = flashlab(&["suite", "four-corners", "--progress-interval", "0s"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("expected a time from 1ms to 24h"),
        "{}",
        stderr(&out)
    );
    let out = flashlab(&["run", "x.fio", "--progress", "sometimes"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("auto, always, never"),
        "{}",
        stderr(&out)
    );
    let out = flashlab(&[
        "fio",
        "--name=w",
        "--rw=read",
        "--size=1m",
        "--eta-interval=soon",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("--eta-interval") && err.contains("expected a time"),
        "{err}"
    );
    assert!(stdout(&out).is_empty());
}

#[test]
fn a_sweep_logs_each_point_with_share_and_eta_unless_told_not_to() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("progress-sweep");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("w.fio"), JOB).unwrap();
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        "job = \"w.fio\"\ndevice = \"tiny-test-1gb\"\n[axes]\n\"set.capacity.spare_factor\" = [0.1, 0.2]\n",
    )
    .unwrap();
    let sweep = |progress: &str, out: &str| {
        let outdir = dir.join(out);
        let o = flashlab(&[
            "sweep",
            plan.to_str().unwrap(),
            "--outdir",
            outdir.to_str().unwrap(),
            "--progress",
            progress,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let logged = sweep("always", "a");
    let points: Vec<&str> = logged
        .lines()
        .filter(|l| l.starts_with("flashlab: sweep point"))
        .collect();
    assert_eq!(points.len(), 2, "{logged}");
    assert!(points[0].contains("(1/2, 50%, ETA "), "{logged}");
    assert!(points[1].contains("(2/2, 100%, ETA 0m00s)"), "{logged}");
    let quiet = sweep("never", "b");
    assert!(!quiet.contains("sweep point"), "{quiet}");
    assert!(quiet.contains("2 ran, 0 skipped, 0 failed"), "{quiet}");
}

/// What a terminal of `cols` columns shows after a program's output: enough of a VT100 for
/// the redrawn lines (text, CR, LF, cursor up and down, erase in line and display), with
/// the terminal's own wrap at the last column, so a line too long for it is seen wrapping.
struct Terminal {
    cols: usize,
    rows: Vec<Vec<char>>,
    row: usize,
    col: usize,
    /// Lines a printed line ran past the last column.
    wraps: usize,
    /// The most rows that held text at once.
    most_rows: usize,
}

impl Terminal {
    fn new(cols: usize) -> Self {
        Self {
            cols,
            rows: vec![Vec::new()],
            row: 0,
            col: 0,
            wraps: 0,
            most_rows: 0,
        }
    }

    fn line_feed(&mut self) {
        self.row += 1;
        if self.row == self.rows.len() {
            self.rows.push(Vec::new());
        }
    }

    fn put(&mut self, c: char) {
        if self.col == self.cols {
            self.wraps += 1;
            self.col = 0;
            self.line_feed();
        }
        let line = &mut self.rows[self.row];
        if line.len() <= self.col {
            line.resize(self.col + 1, ' ');
        }
        line[self.col] = c;
        self.col += 1;
    }

    /// A control sequence `ESC [ params final`.
    fn csi(&mut self, params: &str, fin: char) {
        let n = params.trim_start_matches('?').parse::<usize>().ok();
        match fin {
            'A' => self.row = self.row.saturating_sub(n.unwrap_or(1).max(1)),
            'B' => {
                for _ in 0..n.unwrap_or(1).max(1) {
                    self.line_feed();
                }
            }
            'G' => self.col = n.unwrap_or(1).max(1) - 1,
            'K' => {
                let line = &mut self.rows[self.row];
                match n.unwrap_or(0) {
                    0 => line.truncate(self.col),
                    1 => line.iter_mut().take(self.col + 1).for_each(|c| *c = ' '),
                    _ => line.clear(),
                }
            }
            'J' => {
                self.rows[self.row].truncate(self.col);
                self.rows.truncate(self.row + 1);
            }
            _ => {}
        }
    }

    fn feed(&mut self, text: &str) {
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\r' => self.col = 0,
                '\n' => self.line_feed(),
                '\x1b' if chars.peek() == Some(&'[') => {
                    chars.next();
                    let mut params = String::new();
                    for p in chars.by_ref() {
                        if p.is_ascii_alphabetic() {
                            self.csi(&params, p);
                            break;
                        }
                        params.push(p);
                    }
                }
                c if c.is_control() => {}
                c => self.put(c),
            }
            let shown = self.shown().len();
            self.most_rows = self.most_rows.max(shown);
        }
    }

    /// The rows with text on them.
    fn shown(&self) -> Vec<String> {
        self.rows
            .iter()
            .map(|r| r.iter().collect::<String>().trim_end().to_string())
            .filter(|r| !r.is_empty())
            .collect()
    }
}

/// Standard error of `flashlab ARGS` on a terminal `cols` wide (by `script`, standard output
/// to a file), or None without `script` (unless FLASHLAB_REQUIRE_TOOLS=1, which fails).
fn on_terminal(cols: usize, args: &[&str]) -> Option<String> {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("progress-tty");
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join(format!("{cols}-{}.log", args[0]));
    let command = format!(
        "stty cols {cols} rows 24; exec {} {} > /dev/null",
        env!("CARGO_BIN_EXE_flashlab"),
        args.join(" ")
    );
    let ran = std::process::Command::new("script")
        .args(["-q", "-e", "-c", &command])
        .arg(&log)
        .current_dir(&dir)
        .env("XDG_CACHE_HOME", dir.join("xdg-cache"))
        .stdout(std::process::Stdio::null())
        .status();
    let Ok(status) = ran else {
        assert!(
            std::env::var("FLASHLAB_REQUIRE_TOOLS").as_deref() != Ok("1"),
            "script (util-linux) missing; FLASHLAB_REQUIRE_TOOLS=1 requires it"
        );
        eprintln!("skipped: no `script` to run flashlab on a terminal");
        return None;
    };
    assert!(
        status.success(),
        "flashlab {args:?} on a terminal: {status}"
    );
    let text = String::from_utf8(std::fs::read(&log).unwrap()).unwrap();
    // `script` frames the session with a line before and one after.
    let body = match text.split_once('\n') {
        Some((first, rest)) if first.starts_with("Script started") => rest,
        _ => &text,
    };
    let body = body.rfind("\nScript done").map_or(body, |at| &body[..at]);
    Some(body.to_string())
}

#[test]
fn redrawn_lines_fit_80_columns_one_per_drive_and_leave_nothing_behind() {
    // Two drives at once: a line each, redrawn in place. The run must last several of the
    // 250 ms redraws for both lines to be drawn: the tiny drive at four times its size,
    // rounds of its whole capacity timed whole and 1 s corners take about 1.5 s (the tiny
    // drive with 200 ms corners took 0.2 s, and the second line was never drawn), run
    // whole (`sim.scale=1`: a suite would slice a drive of more than 256 blocks per plane).
    let Some(err) = on_terminal(
        80,
        &[
            "suite",
            "four-corners",
            "--device",
            DEVICE,
            "--drives",
            "2",
            "--runtime",
            "1s",
            "--round",
            "100%",
            "--round-timed",
            "100%",
            "--set",
            "nand.blocks_per_plane=352",
            "--set",
            "capacity.user=4GB",
            "--set",
            "sim.scale=1",
            "--no-state-cache",
        ],
    ) else {
        return;
    };
    let mut term = Terminal::new(80);
    term.feed(&err);
    assert!(err.contains(&format!("{DEVICE}#2: ")), "{err:?}");
    assert_eq!(term.wraps, 0, "{err:?}");
    assert_eq!(term.most_rows, 2, "{err:?}");
    assert_eq!(term.shown(), Vec::<String>::new(), "{err:?}");

    // A run whose line is longer than the terminal: cut to fit, the figures kept.
    let long = "a-job-whose-name-alone-takes-most-of-an-eighty-column-terminal";
    let job = job_file(
        "progress-tty.fio",
        &format!("{JOB}\n[{long}-1]\nrw=randread\n[{long}-2]\nrw=randread\n"),
    );
    let Some(err) = on_terminal(80, &["run", &job, "--device", DEVICE]) else {
        return;
    };
    let mut term = Terminal::new(80);
    term.feed(&err);
    assert!(err.contains('…') && err.contains('%'), "{err:?}");
    assert_eq!(term.wraps, 0, "{err:?}");
    assert_eq!(term.most_rows, 1, "{err:?}");
    assert_eq!(term.shown(), Vec::<String>::new(), "{err:?}");
}
