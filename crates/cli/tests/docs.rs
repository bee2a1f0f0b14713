//! Shown output is tested output: every command whose output README.md or a page of docs/
//! shows runs here, and what it prints is compared with the page. A page's fenced `sh`
//! blocks run in order, in one scratch directory per page that sees the repository's
//! `jobs/`, with the built `flashlab` first on `PATH` and a fresh state cache (what a
//! first-time reader sees). A marker comment on the line before a block says what to do
//! with it, as `;`-separated fields:
//!
//! - `<!-- docs: run -->`: the `sh` block must exit 0; `<!-- docs: exit 2 -->`: it must exit 2
//!   (bad input). The first `text` block after it (prose between is fine; another fenced
//!   block is not) is what it prints: standard error and output together, byte for byte
//!   (simulated runs are deterministic), without the plain progress lines printed off a
//!   terminal.
//! - `shown: FILTER` (the last field: the filter may hold `;`): the page shows part of the
//!   output, the part this shell filter (reading the printed output) picks, e.g.
//!   `shown: tail -n 8`. A line `...` in the `text`
//!   block stands for what the filter left out and is not compared.
//! - `needs fio`: the block runs real fio on real storage (`--target`); skipped with a notice
//!   when fio is missing, unless FLASHLAB_REQUIRE_TOOLS=1, where a missing fio fails the
//!   test. `real: NAME`: the paragraphs of the output (blank-line separated) that name NAME
//!   are that real storage's: their figures are this machine's, so every word holding a
//!   digit is masked on both sides; the simulated paragraphs are compared whole.
//! - `<!-- docs: file NAME -->` before any fenced block: its text is written to NAME in the
//!   scratch directory before the next `sh` block runs (a plan or job file the page shows).
//!
//! Every `text` block of README.md and docs/*.md must be the output of a marked block, so a
//! page cannot show output that nothing checks; text that is not output uses another fence
//! (`console`, none).
//!
//! When a change to the model moves a figure that a page shows, one command rewrites every
//! checked page from what the program prints (the masked real paragraphs and the `...` lines
//! are kept):
//!
//! ```text
//! FLASHLAB_UPDATE_DOCS=1 cargo test -p flashlab --release --test docs
//! ```
//!
//! Then reread the prose around each changed block: it interprets the figures. The picture
//! of the README (docs/report-qos.png) comes from `docs/report-qos.sh`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The pages whose shown output this test checks; [`every_shown_output_is_checked`] fails
/// when another page shows output.
const PAGES: [&str; 7] = [
    "README.md",
    "docs/fit.md",
    "docs/tutorial.md",
    "docs/sweeps.md",
    "docs/state.md",
    "docs/placement.md",
    "docs/suites.md",
];

/// What a marker asks of the fenced block after it.
#[derive(Debug, Default, Clone)]
struct Marker {
    /// `Some(code)` for a block to run; `None` for a file.
    expect_code: Option<i32>,
    file: Option<String>,
    needs_fio: bool,
    shown: Option<String>,
    real: Option<String>,
}

fn parse_marker(page: &str, line: usize, text: &str) -> Option<Marker> {
    let body = text
        .trim()
        .strip_prefix("<!-- docs:")?
        .strip_suffix("-->")?
        .trim();
    let mut m = Marker::default();
    // `shown:` comes last and takes the rest: a shell filter may hold `;`.
    let (body, shown) = match body.find("shown:") {
        Some(at) => (&body[..at], Some(body[at + "shown:".len()..].trim())),
        None => (body, None),
    };
    m.shown = shown.map(str::to_string);
    for field in body.split(';').map(str::trim).filter(|f| !f.is_empty()) {
        if field == "run" {
            m.expect_code = Some(0);
        } else if let Some(code) = field.strip_prefix("exit ") {
            m.expect_code =
                Some(code.trim().parse().unwrap_or_else(|_| {
                    panic!("{page}:{line}: `exit {code}`: expected an exit code")
                }));
        } else if field == "needs fio" {
            m.needs_fio = true;
        } else if let Some(r) = field.strip_prefix("real:") {
            m.real = Some(r.trim().to_string());
        } else if let Some(f) = field.strip_prefix("file ") {
            m.file = Some(f.trim().to_string());
        } else {
            panic!(
                "{page}:{line}: unknown marker field `{field}`: expected run, exit N, \
                 needs fio, real: NAME, file NAME or (last) shown: FILTER"
            );
        }
    }
    assert!(
        m.expect_code.is_some() != m.file.is_some(),
        "{page}:{line}: a marker either runs a block (run, exit N) or names a file"
    );
    Some(m)
}

/// A fenced block of a page.
#[derive(Debug)]
struct Fence {
    /// 0-based line of the opening fence.
    start: usize,
    /// 0-based line of the closing fence.
    end: usize,
    lang: String,
    text: String,
    marker: Option<Marker>,
}

fn fences(page: &str, doc: &str) -> Vec<Fence> {
    let lines: Vec<&str> = doc.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(lang) = lines[i].trim_end().strip_prefix("```") else {
            i += 1;
            continue;
        };
        let end = (i + 1..lines.len())
            .find(|&j| lines[j].trim_end() == "```")
            .unwrap_or_else(|| panic!("{page}:{}: block not closed", i + 1));
        let marker = lines[..i]
            .iter()
            .rev()
            .find(|l| !l.trim().is_empty())
            .and_then(|l| parse_marker(page, i, l));
        let text: String = lines[i + 1..end].iter().map(|l| format!("{l}\n")).collect();
        out.push(Fence {
            start: i,
            end,
            lang: lang.to_string(),
            text,
            marker,
        });
        i = end + 1;
    }
    out
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn have_fio() -> bool {
    let ok = Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("FLASHLAB_REQUIRE_TOOLS").as_deref() != Ok("1"),
            "fio missing; FLASHLAB_REQUIRE_TOOLS=1 requires it"
        );
        eprintln!("SKIPPED: a docs block on real storage: fio missing (apt-get install fio)");
    }
    ok
}

/// `output` with every word holding a digit masked in the paragraphs that name `real`, and
/// runs of spaces there made one (a wider figure moves the columns).
fn mask_real(output: &str, real: &str) -> String {
    output
        .split("\n\n")
        .map(|para| {
            if !para.contains(real) {
                return para.to_string();
            }
            para.lines()
                .map(|l| {
                    l.split_whitespace()
                        .map(|w| {
                            if w.chars().any(|c| c.is_ascii_digit()) && !w.contains(real) {
                                "#"
                            } else {
                                w
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The shown lines of a `text` block, without the `...` lines.
fn without_ellipses(shown: &str) -> String {
    shown
        .split_inclusive('\n')
        .filter(|l| l.trim_end() != "...")
        .collect()
}

/// `printed` with the `...` lines of `shown` at the same places, for a rewrite.
fn with_ellipses(shown: &str, printed: &str) -> String {
    let mut lines: Vec<&str> = printed.lines().collect();
    for (i, l) in shown.lines().enumerate() {
        if l.trim_end() == "..." && i <= lines.len() {
            lines.insert(i, "...");
        }
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// Run `script` in `dir`; its exit code and what it printed (standard error and output in
/// one stream, in the order written, as a terminal shows them).
fn run_script(script: &str, dir: &Path, path: &str) -> (Option<i32>, String) {
    let script = format!("{{\n{script}}} 2>&1");
    let out = Command::new("bash")
        .args(["-e", "-o", "pipefail", "-c", &script])
        .current_dir(dir)
        .env("PATH", path)
        .env("XDG_CACHE_HOME", dir.join("xdg-cache"))
        .output()
        .expect("bash runs");
    // Off a terminal, progress comes as plain lines every few wall seconds; on the reader's
    // terminal it is one redrawn line, cleared at the end.
    let printed = String::from_utf8_lossy(&out.stdout)
        .split_inclusive('\n')
        .filter(|l| !l.starts_with("flashlab: ["))
        .collect();
    (out.status.code(), printed)
}

/// `printed` through the shell filter `filter`.
fn filtered(printed: &str, filter: &str, dir: &Path) -> String {
    use std::io::Write;
    let mut child = Command::new("bash")
        .args(["-c", filter])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("bash runs");
    let mut stdin = child.stdin.take().unwrap();
    let input = printed.to_string();
    // The filter may stop reading early (`head`): write from another thread.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().expect("the filter runs");
    writer.join().unwrap();
    assert!(out.status.success(), "the filter `{filter}` failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Run the marked blocks of `page` and compare what they print with what it shows; with
/// FLASHLAB_UPDATE_DOCS=1, write what they print into the page instead.
fn check_page(page: &str) {
    let doc = std::fs::read_to_string(repo().join(page))
        .unwrap_or_else(|e| panic!("{page} is readable: {e}"));
    let fences = fences(page, &doc);
    assert!(
        fences
            .iter()
            .any(|f| f.marker.as_ref().is_some_and(|m| m.expect_code.is_some())),
        "{page}: no marked block to run"
    );

    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("docs")
        .join(page.replace('/', "-"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(repo().join("jobs"), dir.join("jobs")).unwrap();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_flashlab")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let fio = !fences
        .iter()
        .any(|f| f.marker.as_ref().is_some_and(|m| m.needs_fio))
        || have_fio();
    let update = std::env::var("FLASHLAB_UPDATE_DOCS").as_deref() == Ok("1");

    let lines: Vec<&str> = doc.lines().collect();
    // (first line, line after the last) of each `text` block to replace, and its new text.
    let mut replacements: Vec<(usize, usize, String)> = Vec::new();
    let mut failures = Vec::new();
    for (n, f) in fences.iter().enumerate() {
        let Some(m) = &f.marker else { continue };
        if let Some(name) = &m.file {
            std::fs::write(dir.join(name), &f.text).unwrap();
            continue;
        }
        assert_eq!(
            f.lang,
            "sh",
            "{page}:{}: a marked block to run is `sh`",
            f.start + 1
        );
        if m.needs_fio && !fio {
            continue;
        }
        let (code, printed) = run_script(&f.text, &dir, &path);
        assert_eq!(
            code,
            m.expect_code,
            "{page}:{}: exit status; it printed:\n{printed}",
            f.start + 1
        );
        let Some(out) = fences.get(n + 1).filter(|o| o.lang == "text") else {
            continue;
        };
        let printed = match &m.shown {
            Some(filter) => filtered(&printed, filter, &dir),
            None => printed,
        };
        let mask = |s: &str| match &m.real {
            Some(real) => mask_real(s, real),
            None => s.to_string(),
        };
        let shown = without_ellipses(&out.text);
        if mask(&printed) != mask(&shown) {
            if update {
                replacements.push((out.start + 1, out.end, with_ellipses(&out.text, &printed)));
            } else {
                failures.push(format!(
                    "{page}:{}: the output shown is not what the block at line {} prints.\n\
                     --- shown\n{shown}--- printed\n{printed}",
                    out.start + 1,
                    f.start + 1
                ));
            }
        }
    }
    if update && !replacements.is_empty() {
        let mut text = String::new();
        let mut at = 0;
        for (from, to, new) in &replacements {
            for l in &lines[at..*from] {
                text.push_str(l);
                text.push('\n');
            }
            text.push_str(new);
            at = *to;
        }
        for l in &lines[at..] {
            text.push_str(l);
            text.push('\n');
        }
        std::fs::write(repo().join(page), text).unwrap();
        eprintln!("{page}: rewrote {} output block(s)", replacements.len());
    }
    assert!(
        failures.is_empty(),
        "{}\n\nIf the program is right, rewrite the pages with \
         FLASHLAB_UPDATE_DOCS=1 cargo test -p flashlab --release --test docs, \
         then reread the prose around each changed block.",
        failures.join("\n\n")
    );
}

#[test]
fn readme_shows_what_flashlab_prints() {
    check_page("README.md");
}

#[test]
fn the_tutorial_runs_as_written() {
    let doc = std::fs::read_to_string(repo().join("docs/tutorial.md")).unwrap();
    let fences = fences("docs/tutorial.md", &doc);
    // The tutorial goes from a preset to a real drive: a rewrite that drops its markers must
    // not pass by running nothing.
    let runs = |fio: bool| {
        fences
            .iter()
            .filter_map(|f| f.marker.as_ref())
            .filter(|m| m.expect_code.is_some() && m.needs_fio == fio)
            .count()
    };
    assert!(
        runs(false) >= 6,
        "docs/tutorial.md has fewer than six blocks to run"
    );
    assert!(runs(true) >= 1, "docs/tutorial.md has no real-storage step");
    // Every command of the tutorial is one a reader types: none goes unrun.
    for f in fences.iter().filter(|f| f.lang == "sh") {
        assert!(
            f.marker.is_some(),
            "docs/tutorial.md:{}: a sh block needs a marker (<!-- docs: run -->)",
            f.start + 1
        );
    }
    check_page("docs/tutorial.md");
}

#[test]
fn sweeps_page_shows_what_flashlab_prints() {
    check_page("docs/sweeps.md");
}

#[test]
fn state_page_shows_what_flashlab_prints() {
    check_page("docs/state.md");
}

#[test]
fn placement_page_shows_what_flashlab_prints() {
    check_page("docs/placement.md");
}

#[test]
fn fit_page_shows_what_flashlab_prints() {
    check_page("docs/fit.md");
}

#[test]
fn suites_page_shows_what_flashlab_prints() {
    check_page("docs/suites.md");
}

/// Every `text` block of README.md and docs/*.md is the output of a marked block of a page
/// in [`PAGES`].
#[test]
fn every_shown_output_is_checked() {
    let mut pages = vec!["README.md".to_string()];
    for e in std::fs::read_dir(repo().join("docs")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            pages.push(format!("docs/{name}"));
        }
    }
    for page in &pages {
        let doc = std::fs::read_to_string(repo().join(page)).unwrap();
        let fences = fences(page, &doc);
        for (n, f) in fences.iter().enumerate() {
            if f.lang != "text" {
                continue;
            }
            let runs = n > 0
                && fences[n - 1]
                    .marker
                    .as_ref()
                    .is_some_and(|m| m.expect_code.is_some());
            assert!(
                runs && PAGES.contains(&page.as_str()),
                "{page}:{}: a `text` block is shown output, so a test must check it: mark \
                 the `sh` block before it (<!-- docs: run -->) and list the page in \
                 crates/cli/tests/docs.rs; text that is not output takes another fence",
                f.start + 1
            );
        }
    }
}

#[test]
fn masks_and_ellipses() {
    let real = "sim\n1 2\n\nscratch.dat\nseq1m  803.6   766\n";
    let other = "sim\n1 2\n\nscratch.dat\nseq1m 1803.6 7\n";
    assert_eq!(
        mask_real(real, "scratch.dat"),
        mask_real(other, "scratch.dat")
    );
    assert_ne!(
        mask_real("sim\n1 2\n\nscratch.dat\n", "scratch.dat"),
        mask_real("sim\n1 3\n\nscratch.dat\n", "scratch.dat")
    );
    assert_eq!(without_ellipses("a\n...\nb\n"), "a\nb\n");
    assert_eq!(with_ellipses("a\n...\nb\n", "x\ny\n"), "x\n...\ny\n");
}

/// Run a check in `scripts/` and fail with what it printed and how to mend it.
fn script_passes(script: &str, mend: &str) {
    let out = std::process::Command::new("python3")
        .arg(repo().join("scripts").join(script))
        .output()
        .unwrap_or_else(|e| panic!("python3 runs scripts/{script}: {e}"));
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "scripts/{script}: {mend}\n{printed}");
}

/// ARCHITECTURE.md's rule that functions do one thing: none outside tests runs over 120
/// lines unless `scripts/long-functions.py` accepts it, with its reason.
#[test]
fn no_function_over_120_lines_but_the_accepted() {
    script_passes(
        "long-functions.py",
        "functions over 120 lines it does not accept: split each where a name explains the \
         part, or add it to ACCEPTED with why",
    );
}

/// ARCHITECTURE.md: no module of a crate imports, directly or through others, a module that
/// imports it back (a circle makes the two one unit to read and change).
#[test]
fn no_import_circles_inside_crates() {
    script_passes(
        "import-circles.py",
        "modules that import each other: move what both need into a module of its own",
    );
}
