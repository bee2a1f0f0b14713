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
//! Figures in tables and prose come from the program the same way, through named sources:
//!
//! - `source NAME` as a field of a run block's marker keeps what the block prints (its whole
//!   output, before any `shown:` filter) as source NAME; `<!-- docs: source NAME: COMMAND -->`
//!   on a line of its own runs COMMAND (in the page's scratch directory, after the page's
//!   blocks) for it. A source that prints JSON is read as JSON.
//! - `<!-- docs: long source NAME: COMMAND -->`: the same for a run too long for this test.
//!   The figures filled from NAME are left to `long::long_figures_are_what_flashlab_prints`
//!   (which `.ci/run` runs with the other long tests, and the update command below rewrites),
//!   and this test leaves them alone; their templates read long sources only.
//! - `<!-- docs: figures NAME` then template lines then `-->`: the lines after the comment, up
//!   to `<!-- docs: end -->`, are the template filled from source NAME (a table, a paragraph).
//! - `<!-- docs: figure NAME TEMPLATE -->TEXT<!-- docs: end -->` inside a line: TEXT is the
//!   one-line TEMPLATE filled from NAME (a figure in prose).
//!
//! A template holds placeholders. From a JSON source, `{PATH}` is the value at the dotted
//! PATH (`options.runtime`, `devices.0.results.KEY`; a bare result name is looked up in the
//! first device's `results`), `{PATH/1e6}` divides it and `{PATH:,.1}` formats it (`,`:
//! thousands separated; `.N`: N decimals; a whole number otherwise prints whole;
//! `{PATH:time}` reads nanoseconds and prints µs, ms or s). From a
//! text source, `{ROW|COLUMN}` is the cell of the table line whose first cell is ROW, in the
//! column whose header (cells are separated by two or more spaces) is COLUMN, and `{KEY}` the
//! second cell of the line whose first is KEY (a `KEY  VALUE` listing); from CSV lines,
//! `{A,B}` is the cell after the leading cells `A,B`. Any of these with `:FORMAT` formats the
//! cell's leading number as above (`{scan_pass1_time_s|hdd-2tb:.0}`), and `{CELL / CELL:FORMAT}`
//! their ratio.
//!
//! - `<!-- docs: checked by PATH -->` on a line of its own, up to `<!-- docs: end -->`: a
//!   table that the test at PATH (a file of the repository, which names the page) measures
//!   and compares with the page, too long a run for this test (the untimed path's agreement,
//!   the calibration's results).
//!
//! Figures of prose outside these regions (numbers with decimals or thousands separated, in
//! thousands, or before a unit of measured output) are counted per page, and a page may hold
//! no more than [`UNCHECKED_FIGURES`] allows it, with the reason (published figures, runs
//! too long for this test): a new figure of the program's output comes through a region.
//!
//! When a change to the model moves a figure that a page shows, one command rewrites every
//! checked page from what the program prints (the masked real paragraphs and the `...` lines
//! are kept):
//!
//! ```text
//! FLASHLAB_UPDATE_DOCS=1 cargo test --workspace --locked --test integration docs:: -- --include-ignored
//! ```
//!
//! (figures and tables included: each region is rewritten from its template).
//! `FLASHLAB_DOCS_PAGES=docs/a.md,docs/b.md` limits the long test to those pages.
//!
//! Then reread the prose around each changed block: it interprets the figures. The picture
//! of the README (docs/report-qos.png) comes from `docs/report-qos.sh`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The pages whose shown output this test checks; [`every_shown_output_is_checked`] fails
/// when another page shows output.
const PAGES: [&str; 15] = [
    "README.md",
    "docs/explain-power.md",
    "docs/fit.md",
    "docs/systems.md",
    "docs/tutorial.md",
    "docs/sweeps.md",
    "docs/state.md",
    "docs/placement.md",
    "docs/suites.md",
    "docs/suites-systems.md",
    "docs/explain-host.md",
    "docs/explain-reads.md",
    "docs/explain-wear.md",
    "docs/explain-gc.md",
    "docs/explain-slc-cache.md",
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
    /// `source NAME`: what the block prints is source NAME of the page's figures.
    source: Option<String>,
}

fn parse_marker(page: &str, line: usize, text: &str) -> Option<Marker> {
    let body = text
        .trim()
        .strip_prefix("<!-- docs:")?
        .strip_suffix("-->")?
        .trim();
    // Figures' markers say nothing of the fenced block after them.
    if body == "end"
        || body.starts_with("source ")
        || body.starts_with("long source ")
        || body.starts_with("figure")
    {
        return None;
    }
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
        } else if let Some(name) = field.strip_prefix("source ") {
            m.source = Some(name.trim().to_string());
        } else {
            panic!(
                "{page}:{line}: unknown marker field `{field}`: expected run, exit N, \
                 needs fio, real: NAME, file NAME, source NAME or (last) shown: FILTER"
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
fn check_page(page: &str) -> PathBuf {
    let doc = std::fs::read_to_string(repo().join(page))
        .unwrap_or_else(|e| panic!("{page} is readable: {e}"));
    let fences = fences(page, &doc);
    assert!(
        fences
            .iter()
            .any(|f| f.marker.as_ref().is_some_and(|m| m.expect_code.is_some()))
            || doc.contains("<!-- docs: figure"),
        "{page}: no marked block to run and no figures"
    );
    let mut sources: HashMap<String, String> = HashMap::new();
    let (dir, path) = page_dir(page, Phase::Quick);
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
        if let Some(name) = &m.source {
            sources.insert(name.clone(), printed.clone());
        }
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
    let (text, figure_failures) =
        check_figures(page, &text, &mut sources, &dir, &path, Phase::Quick);
    settle(page, text, replacements.len(), figure_failures, failures);
    dir
}

/// The figures of `page` whose sources are long (`<!-- docs: long source NAME: COMMAND -->`:
/// runs too long for the docs test), checked or, in the update mode, rewritten.
fn check_long_figures(page: &str) {
    let doc = std::fs::read_to_string(repo().join(page))
        .unwrap_or_else(|e| panic!("{page} is readable: {e}"));
    let (dir, path) = page_dir(page, Phase::Long);
    let mut sources = HashMap::new();
    let (text, figure_failures) = check_figures(page, &doc, &mut sources, &dir, &path, Phase::Long);
    settle(page, text, 0, figure_failures, Vec::new());
}

/// Which figures a check runs: those of the docs test's sources, or those of the long ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Quick,
    Long,
}

/// A fresh directory for `page`'s blocks (with `jobs/` and `scripts/` in it) and the `PATH` that finds the
/// flashlab under test first.
fn page_dir(page: &str, phase: Phase) -> (PathBuf, String) {
    scratch_dir(
        if phase == Phase::Long {
            "docs-long"
        } else {
            "docs"
        },
        page,
    )
}

/// [`page_dir`] under `kind` (tests that run a page's sources side by side keep apart).
fn scratch_dir(kind: &str, page: &str) -> (PathBuf, String) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(kind)
        .join(page.replace('/', "-"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for shared in ["jobs", "scripts"] {
        std::os::unix::fs::symlink(repo().join(shared), dir.join(shared)).unwrap();
    }
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_flashlab")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (dir, path)
}

/// Rewrite `page` as `text` in the update mode where anything differed; otherwise fail with
/// every difference.
fn settle(
    page: &str,
    text: String,
    replaced_blocks: usize,
    figure_failures: Vec<String>,
    mut failures: Vec<String>,
) {
    let update = std::env::var("FLASHLAB_UPDATE_DOCS").as_deref() == Ok("1");
    if update && (replaced_blocks > 0 || !figure_failures.is_empty()) {
        std::fs::write(repo().join(page), text).unwrap();
        eprintln!(
            "{page}: rewrote {replaced_blocks} output block(s) and {} figure region(s)",
            figure_failures.len()
        );
    } else {
        failures.extend(figure_failures);
    }
    assert!(
        failures.is_empty(),
        "{}\n\nIf the program is right, rewrite the pages with \
         FLASHLAB_UPDATE_DOCS=1 cargo test --workspace --locked --test integration docs:: \
         -- --include-ignored, \
         then reread the prose around each changed block.",
        failures.join("\n\n")
    );
}

/// The page `doc` with each figure region checked against its template filled from its
/// source: the page as the program would write it, and a failure per region that differs.
/// Sources of their own (`<!-- docs: source NAME: COMMAND -->`) run here, once each; in
/// [`Phase::Long`] only the long ones (`<!-- docs: long source NAME: COMMAND -->`) run and
/// only their figures are checked, in [`Phase::Quick`] only the others.
fn check_figures(
    page: &str,
    doc: &str,
    sources: &mut HashMap<String, String>,
    dir: &Path,
    path: &str,
    phase: Phase,
) -> (String, Vec<String>) {
    let mut long_sources = Vec::new();
    let mut to_run = Vec::new();
    for (n, line) in doc.lines().enumerate() {
        let t = line.trim();
        let (body, source_phase) = match t.strip_prefix("<!-- docs: long source ") {
            Some(body) => (body, Phase::Long),
            None => match t.strip_prefix("<!-- docs: source ") {
                Some(body) => (body, Phase::Quick),
                None => continue,
            },
        };
        let Some(body) = body.strip_suffix("-->") else {
            continue;
        };
        let (name, command) = body
            .split_once(':')
            .unwrap_or_else(|| panic!("{page}:{}: expected source NAME: COMMAND", n + 1));
        if source_phase == Phase::Long {
            long_sources.push(name.trim().to_string());
        }
        if source_phase != phase {
            continue;
        }
        to_run.push((n + 1, name.trim(), command.trim()));
    }
    for (name, printed) in run_sources(page, &to_run, dir, path, phase) {
        sources.insert(name, printed);
    }
    // A figure is checked in the phase of its source: the long test checks the long ones.
    let in_phase = |name: &str| long_sources.iter().any(|l| l == name) == (phase == Phase::Long);
    let lines: Vec<&str> = doc.lines().collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut failures = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let Some(name) = line.trim().strip_prefix("<!-- docs: figures ") else {
            out.push(inline_figures(
                page,
                i + 1,
                line,
                sources,
                &in_phase,
                &mut failures,
            ));
            i += 1;
            continue;
        };
        let close = (i + 1..lines.len())
            .find(|&j| lines[j].trim() == "-->")
            .unwrap_or_else(|| panic!("{page}:{}: figures template without -->", i + 1));
        let end = (close + 1..lines.len())
            .find(|&j| lines[j].trim() == "<!-- docs: end -->")
            .unwrap_or_else(|| panic!("{page}:{}: figures without <!-- docs: end -->", i + 1));
        if !in_phase(name.trim()) {
            out.extend(lines[i..=end].iter().map(|l| l.to_string()));
            i = end + 1;
            continue;
        }
        let template = lines[i + 1..close].join("\n");
        let source = source_of(page, i + 1, name.trim(), sources);
        let filled =
            fill(&template, source, sources).unwrap_or_else(|e| panic!("{page}:{}: {e}", i + 1));
        let shown = lines[close + 1..end].join("\n");
        out.extend(lines[i..=close].iter().map(|l| l.to_string()));
        if shown != filled {
            failures.push(format!(
                "{page}:{}: the figures shown are not what source {} gives.\n--- shown\n{shown}\n--- printed\n{filled}",
                close + 2,
                name.trim()
            ));
        }
        out.push(filled);
        out.push(lines[end].to_string());
        i = end + 1;
    }
    let mut text = out.join("\n");
    text.push('\n');
    (text, failures)
}

/// Runs the `(line, name, command)` sources of a page: the quick ones one after another (the
/// docs test's pages already run side by side), the long ones on every core (they are
/// independent runs, each writing its own directory, and the long tests are CI's critical
/// path).
fn run_sources(
    page: &str,
    to_run: &[(usize, &str, &str)],
    dir: &Path,
    path: &str,
    phase: Phase,
) -> Vec<(String, String)> {
    let run = |&(line, name, command): &(usize, &str, &str)| {
        let printed = run_source(page, line, name, command, dir, path, phase);
        (name.to_string(), printed)
    };
    let workers = match phase {
        Phase::Quick => 1,
        Phase::Long => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    if workers == 1 || to_run.len() < 2 {
        return to_run.iter().map(run).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::Mutex::new(vec![None; to_run.len()]);
    std::thread::scope(|scope| {
        for _ in 0..workers.min(to_run.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(source) = to_run.get(i) else { break };
                let result = run(source);
                done.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(result);
            });
        }
    });
    done.into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.expect("every source ran"))
        .collect()
}

/// What source `name` (`command`, at `page`:`line`) prints. A long source's command that
/// another page runs too runs once: the long test's time is CI's.
fn run_source(
    page: &str,
    line: usize,
    name: &str,
    command: &str,
    dir: &Path,
    path: &str,
    phase: Phase,
) -> String {
    static RAN: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());
    if phase == Phase::Long {
        let ran = RAN.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, printed)) = ran.iter().find(|(c, _)| c == command) {
            return printed.clone();
        }
    }
    let (code, printed) = run_script(&format!("{command}\n"), dir, path);
    assert_eq!(code, Some(0), "{page}:{line}: source {name}:\n{printed}");
    if phase == Phase::Long {
        let mut ran = RAN.lock().unwrap_or_else(|e| e.into_inner());
        ran.push((command.to_string(), printed.clone()));
    }
    printed
}

fn source_of<'a>(
    page: &str,
    line: usize,
    name: &str,
    sources: &'a HashMap<String, String>,
) -> &'a str {
    sources.get(name).map(String::as_str).unwrap_or_else(|| {
        panic!("{page}:{line}: no source {name}: mark a run block `source {name}` or add <!-- docs: source {name}: COMMAND -->")
    })
}

/// `line` with each `<!-- docs: figure NAME TEMPLATE -->TEXT<!-- docs: end -->` holding its
/// filled template (a failure for each TEXT that differed).
fn inline_figures(
    page: &str,
    line_no: usize,
    line: &str,
    sources: &HashMap<String, String>,
    in_phase: &dyn Fn(&str) -> bool,
    failures: &mut Vec<String>,
) -> String {
    const OPEN: &str = "<!-- docs: figure ";
    const END: &str = "<!-- docs: end -->";
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find(OPEN) {
        let after = &rest[at + OPEN.len()..];
        let close = after
            .find("-->")
            .unwrap_or_else(|| panic!("{page}:{line_no}: figure without -->"));
        let (name, template) = after[..close]
            .trim()
            .split_once(' ')
            .unwrap_or_else(|| panic!("{page}:{line_no}: expected figure NAME TEMPLATE"));
        let shown_at = close + 3;
        let end = after[shown_at..]
            .find(END)
            .unwrap_or_else(|| panic!("{page}:{line_no}: figure without {END}"));
        let shown = &after[shown_at..shown_at + end];
        if !in_phase(name) {
            out.push_str(&rest[..at + OPEN.len() + shown_at + end + END.len()]);
            rest = &after[shown_at + end + END.len()..];
            continue;
        }
        let filled = fill(
            template.trim(),
            source_of(page, line_no, name, sources),
            sources,
        )
        .unwrap_or_else(|e| panic!("{page}:{line_no}: {e}"));
        if shown != filled {
            failures.push(format!(
                "{page}:{line_no}: the figure shown, {shown:?}, is not what source {name} gives: {filled:?}"
            ));
        }
        out.push_str(&rest[..at + OPEN.len() + shown_at]);
        out.push_str(&filled);
        out.push_str(END);
        rest = &after[shown_at + end + END.len()..];
    }
    out.push_str(rest);
    out
}

/// `template` with each `{...}` placeholder filled from `source` (JSON or text), or from
/// the source a `{NAME#...}` placeholder names.
fn fill(template: &str, source: &str, sources: &HashMap<String, String>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let close = rest[open..]
            .find('}')
            .map(|c| open + c)
            .ok_or_else(|| format!("unclosed {{ in {template:?}"))?;
        out.push_str(&rest[..open]);
        let inner = &rest[open + 1..close];
        if let Some(ratio) = json_ratio(inner, source, sources)? {
            out.push_str(&ratio);
            rest = &rest[close + 1..];
            continue;
        }
        let (from, inner) = named_source(inner, source, sources)?;
        let value = match serde_json::from_str::<serde_json::Value>(from) {
            Ok(doc) => json_figure(&doc, inner)?,
            Err(_) => text_figure(from, inner)?,
        };
        out.push_str(&value);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The source a placeholder's `spec` reads (`NAME#REST`: source NAME; otherwise `source`)
/// and the rest of it.
fn named_source<'a>(
    spec: &'a str,
    source: &'a str,
    sources: &'a HashMap<String, String>,
) -> Result<(&'a str, &'a str), String> {
    match spec.split_once('#') {
        Some((name, rest)) => sources
            .get(name)
            .map(|s| (s.as_str(), rest))
            .ok_or_else(|| format!("{{{spec}}}: no source {name}")),
        None => Ok((source, spec)),
    }
}

/// `{A / B[:FORMAT]}` where A and B are figures of JSON sources (`PATH` of `source`, or
/// `NAME#PATH` of source NAME, either divided by a number as `PATH/N`): their ratio. `None` where either side is no JSON source's
/// figure (a text source's ratio of cells is [`text_figure`]'s).
fn json_ratio(
    inner: &str,
    source: &str,
    sources: &HashMap<String, String>,
) -> Result<Option<String>, String> {
    let (expr, format) = inner.rsplit_once(':').unwrap_or((inner, ""));
    let Some((a, b)) = expr.split_once(" / ") else {
        return Ok(None);
    };
    let side = |side: &str| -> Result<Option<f64>, String> {
        // A number is itself: a published figure the program's is set against.
        if let Ok(constant) = side.trim().parse::<f64>() {
            return Ok(Some(constant));
        }
        // `PATH/N`: the figure in units of N (bytes in IUs of 4,096: `.../4096`).
        let (side, divisor) = match side.trim().split_once('/') {
            Some((path, n)) => (
                path,
                n.trim()
                    .parse::<f64>()
                    .map_err(|_| format!("{{{inner}}}: bad divisor {n}"))?,
            ),
            None => (side.trim(), 1.0),
        };
        let (from, path) = named_source(side, source, sources)?;
        match serde_json::from_str::<serde_json::Value>(from) {
            Ok(doc) => json_value(&doc, path).map(|x| Some(x / divisor)),
            Err(_) => Ok(None),
        }
    };
    match (side(a)?, side(b)?) {
        (Some(x), Some(y)) => Ok(Some(format_number(x / y, format))),
        _ => Ok(None),
    }
}

/// The number at dotted `path` of `doc` (or of its first device's results).
fn json_value(doc: &serde_json::Value, path: &str) -> Result<f64, String> {
    json_at(doc, path)
        .and_then(|v| v.as_f64())
        .ok_or_else(|| format!("{{{path}}}: no number at {path} in the source"))
}

/// The value at dotted `path` of `doc`, or of its first device's results.
fn json_at(doc: &serde_json::Value, path: &str) -> Option<serde_json::Value> {
    let at = |doc: &serde_json::Value| {
        path.trim()
            .split('.')
            .try_fold(doc.clone(), |v, key| match key.parse::<usize>() {
                Ok(i) => v.get(i).cloned(),
                Err(_) => v.get(key).cloned(),
            })
    };
    at(doc).or_else(|| at(&doc["devices"][0]["results"]))
}

/// `{PATH[/DIVISOR][:FORMAT]}` of a JSON document.
fn json_figure(doc: &serde_json::Value, inner: &str) -> Result<String, String> {
    let (path, format) = inner.split_once(':').unwrap_or((inner, ""));
    let (path, divisor) = match path.split_once('/') {
        Some((p, d)) => (
            p,
            d.trim()
                .parse::<f64>()
                .map_err(|_| format!("{{{inner}}}: bad divisor"))?,
        ),
        None => (path, 1.0),
    };
    let value =
        json_at(doc, path).ok_or_else(|| format!("{{{inner}}}: no {path} in the source"))?;
    let Some(x) = value.as_f64() else {
        return value
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("{{{inner}}}: {value} is neither a number nor text"));
    };
    if format == "time" {
        return Ok(format_time_ns(x / divisor));
    }
    Ok(format_number(x / divisor, format))
}

/// Nanoseconds in the unit a reader takes in at a glance: whole µs below a millisecond, then
/// ms or s to three significant figures (`117 µs`, `2.21 ms`, `5.6 s`).
fn format_time_ns(ns: f64) -> String {
    let (value, unit) = match ns {
        t if t >= 1e9 => (t / 1e9, "s"),
        t if t >= 1e6 => (t / 1e6, "ms"),
        t => return format!("{} µs", format_number((t / 1e3).round(), ",")),
    };
    let decimals = match value {
        v if v < 9.995 => 2,
        v if v < 99.95 => 1,
        _ => 0,
    };
    format!("{} {unit}", format_number(value, &format!(",.{decimals}")))
}

/// `x` as FORMAT says: `,` separates thousands, `.N` gives N decimals; without `.N` a whole
/// number prints whole; `+%` takes `x` as a ratio and prints its difference from 1 as a
/// signed whole percentage (`+21%`, `−17%`, the minus the pages use).
fn format_number(x: f64, format: &str) -> String {
    if format == "+%" {
        let percent = ((x - 1.0) * 100.0).round();
        let sign = if percent < 0.0 { '\u{2212}' } else { '+' };
        return format!("{sign}{}%", percent.abs());
    }
    let decimals = format
        .split_once('.')
        .and_then(|(_, n)| n.parse::<usize>().ok());
    let text = match decimals {
        Some(n) => format!("{x:.n$}"),
        None if x.fract() == 0.0 => format!("{x:.0}"),
        None => format!("{x}"),
    };
    if !format.contains(',') {
        return text;
    }
    let (sign, digits) = text
        .strip_prefix('-')
        .map_or(("", text.as_str()), |d| ("-", d));
    let (whole, fraction) = digits.split_at(digits.find('.').unwrap_or(digits.len()));
    let mut grouped = String::new();
    for (k, c) in whole.chars().enumerate() {
        if k > 0 && (whole.len() - k) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{sign}{grouped}{fraction}")
}

/// `{CELL[:FORMAT]}` of a text source: the cell (see [`text_cell`]) as printed, or with a
/// FORMAT its leading number (`161.388`, `1,370 IOPS`) formatted as a JSON figure is.
/// `{CELL / CELL:FORMAT}` is the ratio of two cells' leading numbers (`4.5 times`).
fn text_figure(source: &str, inner: &str) -> Result<String, String> {
    let Some((cell, format)) = inner.rsplit_once(':') else {
        return text_cell(source, inner);
    };
    let number_of = |cell: &str| -> Result<f64, String> {
        let text = text_cell(source, cell)?;
        let number: String = text
            .trim()
            .chars()
            .take_while(|c| c.is_ascii_digit() || matches!(c, '.' | ',' | '-'))
            .filter(|c| *c != ',')
            .collect();
        number
            .parse::<f64>()
            .map_err(|_| format!("{{{inner}}}: `{text}` does not start with a number"))
    };
    let x = match cell.split_once(" / ") {
        Some((numerator, denominator)) => number_of(numerator)? / number_of(denominator)?,
        None => number_of(cell)?,
    };
    Ok(format_number(x, format))
}

/// The cells of a table line: separated by two or more spaces.
fn cells(line: &str) -> Vec<&str> {
    line.trim()
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

/// `{ROW|COLUMN}` of a text table: the line whose first cell is ROW, under the header above
/// it that names COLUMN. `{A,B,C}` of CSV lines: the cell after the line's leading cells
/// A, B and C.
fn text_cell(source: &str, inner: &str) -> Result<String, String> {
    let lines: Vec<&str> = source.lines().collect();
    if !inner.contains('|') && inner.contains(',') {
        let leading = format!("{},", inner.trim());
        return lines
            .iter()
            .find_map(|l| l.trim().strip_prefix(leading.as_str()))
            .map(|rest| rest.split(',').next().unwrap_or("").to_string())
            .ok_or_else(|| format!("{{{inner}}}: no CSV line starts with {leading}"));
    }
    let Some((row, column)) = inner.split_once('|') else {
        // `{KEY}`: the value of a `KEY  VALUE` line (as `describe` prints).
        return lines
            .iter()
            .map(|l| cells(l))
            .find(|c| c.first() == Some(&inner.trim()))
            .and_then(|c| c.get(1).map(|v| v.to_string()))
            .ok_or_else(|| format!("{{{inner}}}: no line `{inner}  VALUE` in the source"));
    };
    let at = lines
        .iter()
        .position(|l| cells(l).first() == Some(&row.trim()))
        .ok_or_else(|| format!("{{{inner}}}: no line starts with {row}"))?;
    let header = lines[..at]
        .iter()
        .rev()
        .map(|l| cells(l))
        .find(|c| c.contains(&column.trim()))
        .ok_or_else(|| format!("{{{inner}}}: no header names {column} above row {row}"))?;
    let k = header.iter().position(|c| *c == column.trim()).unwrap_or(0);
    cells(lines[at])
        .get(k)
        .map(|c| c.to_string())
        .ok_or_else(|| format!("{{{inner}}}: row {row} has no column {k}"))
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

/// Long (ARCHITECTURE.md, "Tests, and the time CI takes"): `cargo test` leaves it out.
mod long {
    #[test]
    #[ignore = "long: .ci/run runs it (cargo test --workspace -- --ignored long::)"]
    fn fit_page_shows_what_flashlab_prints() {
        super::fit_page_shows_what_flashlab_prints();
    }

    /// The figures of every page whose sources run too long for the docs test.
    #[test]
    #[ignore = "long: .ci/run runs it (cargo test --workspace -- --ignored long::)"]
    fn long_figures_are_what_flashlab_prints() {
        let pages: Vec<String> = super::all_pages()
            .into_iter()
            .filter(|p| {
                std::fs::read_to_string(super::repo().join(p))
                    .unwrap()
                    .contains("<!-- docs: long source ")
            })
            .collect();
        assert!(!pages.is_empty(), "no page has a long source");
        // While a page is written: `FLASHLAB_DOCS_PAGES=docs/a.md,docs/b.md` checks those.
        let only = std::env::var("FLASHLAB_DOCS_PAGES").unwrap_or_default();
        let pages: Vec<String> = pages
            .into_iter()
            .filter(|p| only.is_empty() || only.split(',').any(|o| o.trim() == p))
            .collect();
        for page in pages {
            super::check_long_figures(&page);
        }
    }
}

fn fit_page_shows_what_flashlab_prints() {
    let dir = check_page("docs/fit.md");
    // The page fits the whole tiny plan: the fit tests' checks of a whole fit run on it.
    crate::fit::check_whole_fit(&dir.join("my-drive.toml"), &dir.join("fit.html"));
}

#[test]
fn suites_page_shows_what_flashlab_prints() {
    check_page("docs/suites.md");
}

#[test]
fn suites_of_systems_page_shows_what_flashlab_prints() {
    check_page("docs/suites-systems.md");
}

#[test]
fn host_explanation_shows_what_flashlab_prints() {
    check_page("docs/explain-host.md");
}

#[test]
fn reads_explanation_shows_what_flashlab_prints() {
    check_page("docs/explain-reads.md");
}

#[test]
fn power_explanation_shows_what_flashlab_prints() {
    check_page("docs/explain-power.md");
}

#[test]
fn wear_explanation_shows_what_flashlab_prints() {
    check_page("docs/explain-wear.md");
}

#[test]
fn gc_explanation_shows_what_flashlab_prints() {
    check_page("docs/explain-gc.md");
}

#[test]
fn slc_cache_explanation_shows_what_flashlab_prints() {
    check_page("docs/explain-slc-cache.md");
}

#[test]
fn systems_page_shows_what_flashlab_prints() {
    check_page("docs/systems.md");
}

/// The README's picture (docs/report-qos.png) shows the report of the qos command the README
/// runs: `docs/report-qos.sh`, which draws it, runs that same command, so a change to the
/// command cannot leave the picture of another one. (The picture's figures are the command's,
/// which the README's text block checks; the script redraws it after they move.)
#[test]
fn the_readme_picture_is_drawn_from_the_readme_command() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let script = std::fs::read_to_string(repo().join("docs/report-qos.sh")).unwrap();
    assert!(
        readme.contains("(docs/report-qos.png)"),
        "README.md shows the picture"
    );
    let command = fences("README.md", &readme)
        .into_iter()
        .find(|f| f.marker.as_ref().and_then(|m| m.source.as_deref()) == Some("qos"))
        .expect("README.md runs its qos command as source qos")
        .text;
    let words = |s: &str| {
        s.split_whitespace()
            .filter(|w| *w != "\\")
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let args = words(
        command
            .trim()
            .strip_prefix("flashlab")
            .expect("a flashlab command"),
    );
    let drawn = words(&script);
    assert!(
        drawn.windows(args.len()).any(|w| w == args.as_slice()),
        "docs/report-qos.sh does not run the README's command {args:?}: change it to, then run \
         it to redraw docs/report-qos.png"
    );
}

/// The names of the long sources of page `doc` (`<!-- docs: long source NAME: COMMAND -->`).
fn long_source_names(doc: &str) -> Vec<String> {
    doc.lines()
        .filter_map(|l| l.trim().strip_prefix("<!-- docs: long source "))
        .filter_map(|body| body.split_once(':'))
        .map(|(name, _)| name.trim().to_string())
        .collect()
}

/// The source each figure region of page `doc` is filled from (`figures NAME`, `figure NAME`).
fn figure_source_names(doc: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in doc.lines() {
        if let Some(name) = line.trim().strip_prefix("<!-- docs: figures ") {
            names.push(name.trim().to_string());
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("<!-- docs: figure ") {
            rest = &rest[at + "<!-- docs: figure ".len()..];
            if let Some(name) = rest.split_whitespace().next() {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// README.md and every page of docs/, sorted.
fn all_pages() -> Vec<String> {
    let mut pages = vec!["README.md".to_string()];
    for e in std::fs::read_dir(repo().join("docs")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            pages.push(format!("docs/{name}"));
        }
    }
    pages.sort();
    pages
}

/// Every `text` block of README.md and docs/*.md is the output of a marked block of a page
/// in [`PAGES`].
#[test]
fn every_shown_output_is_checked() {
    let pages = all_pages();
    for page in &pages {
        let doc = std::fs::read_to_string(repo().join(page)).unwrap();
        // The long test checks the figures of long sources on any page; the others need
        // the docs test, which runs the pages it lists.
        let long = long_source_names(&doc);
        let quick: Vec<String> = figure_source_names(&doc)
            .into_iter()
            .filter(|name| !long.contains(name))
            .collect();
        assert!(
            quick.is_empty() || PAGES.contains(&page.as_str()),
            "{page}: its figures from {quick:?} come from the program only when a test \
             checks them: list the page in crates/cli/tests/docs.rs"
        );
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

/// The ratio of two JSON figures, of one source or of two.
#[test]
fn templates_fill_ratios_of_json_figures() {
    let mut sources = HashMap::new();
    sources.insert("a".to_string(), r#"{"x": {"iops": 300.0}}"#.to_string());
    sources.insert("b".to_string(), r#"{"x": {"iops": 200.0}}"#.to_string());
    let filled = |t| fill(t, &sources["a"], &sources).unwrap();
    assert_eq!(filled("{x.iops / b#x.iops:.2}x"), "1.50x");
    assert_eq!(filled("{b#x.iops / a#x.iops:.3}"), "0.667");
    assert!(fill("{x.iops / c#x.iops}", &sources["a"], &sources).is_err());
    // Against a published figure, as a signed change.
    assert_eq!(filled("{x.iops / 250:+%}"), "+20%");
    assert_eq!(filled("{b#x.iops / 250:+%} of 250"), "\u{2212}20% of 250");
    assert_eq!(filled("{x.iops / 300:+%}"), "+0%");
}

#[test]
fn templates_fill_from_json_and_text_tables() {
    let json = r#"{"options": {"runtime": "200ms"}, "devices": [{"results": {"iops": 27680.0, "bw": 328000000.0}}]}"#;
    let sources = HashMap::from([("other".to_string(), r#"{"x": 5}"#.to_string())]);
    let fill = |template: &str, source: &str| fill(template, source, &sources);
    assert_eq!(
        fill(
            "| {iops:,} IOPS | {bw/1e6:.1} MB/s | {options.runtime} |",
            json
        )
        .unwrap(),
        "| 27,680 IOPS | 328.0 MB/s | 200ms |"
    );
    assert_eq!(
        fill("{devices.0.results.iops/1e3:.1}K", json).unwrap(),
        "27.7K"
    );
    assert_eq!(fill("{other#x} of {iops}", json).unwrap(), "5 of 27680");
    assert!(fill("{nothing}", json).is_err());
    assert!(fill("{missing#x}", json).is_err());
    let text = "queue depth    IOPS  read avg       p99.99
1             10938  124.5 us  333.8 us
128          556522  320.6 us   4.15 ms
";
    assert_eq!(
        fill("{1|p99.99} to {128|p99.99}", text).unwrap(),
        "333.8 us to 4.15 ms"
    );
    let listing = "  dies                               16\n  seq_write_bound_bytes_per_s        419.43 MB/s\n";
    assert_eq!(
        fill("{dies} dies, {seq_write_bound_bytes_per_s}", listing).unwrap(),
        "16 dies, 419.43 MB/s"
    );
    assert!(fill("{nothing}", listing).is_err());
    assert_eq!(fill("{128|read avg:.0} us", text).unwrap(), "321 us");
    assert_eq!(fill("{1|IOPS:,}", text).unwrap(), "10,938");
    assert!(fill("{queue depth|IOPS:.0}", text).is_err());
    assert_eq!(format_number(1234567.891, ",.2"), "1,234,567.89");
    assert_eq!(format_number(-1234.0, ","), "-1,234");
    assert_eq!(format_number(0.5, ""), "0.5");
    assert_eq!(format_time_ns(117_400.0), "117 µs");
    assert_eq!(format_time_ns(2_214_000.0), "2.21 ms");
    assert_eq!(format_time_ns(28_442_624.0), "28.4 ms");
    assert_eq!(format_time_ns(5_600_000_000.0), "5.60 s");
    let json = r#"{"devices": [{"results": {"sql_knee_lat_avg_ns": 1056768.0}}]}"#;
    assert_eq!(fill("{sql_knee_lat_avg_ns:time}", json).unwrap(), "1.06 ms");
}

#[test]
fn a_changed_figure_in_a_table_or_in_prose_fails() {
    let mut sources = HashMap::new();
    sources.insert(
        "s".to_string(),
        r#"{"devices": [{"results": {"iops": 27680.0}}]}"#.to_string(),
    );
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let page = "| set | IOPS |\n<!-- docs: figures s\n| x1 | {iops:,} |\n-->\n| x1 | 27,680 |\n<!-- docs: end -->\nAt <!-- docs: figure s {iops:,} IOPS -->27,680 IOPS<!-- docs: end --> it holds.\n";
    let (text, failures) = check_figures("p.md", page, &mut sources, &dir, "", Phase::Quick);
    assert!(failures.is_empty(), "{failures:?}");
    assert_eq!(text, page);
    // One figure changed in the table, one in the prose: each fails, and the rewrite mends it.
    for changed in [
        page.replace("| x1 | 27,680 |", "| x1 | 27,681 |"),
        page.replace("-->27,680 IOPS<", "-->27,690 IOPS<"),
    ] {
        let (text, failures) =
            check_figures("p.md", &changed, &mut sources, &dir, "", Phase::Quick);
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert_eq!(text, page);
    }
    // The same for a latency read as a time and a value of a `KEY  VALUE` listing.
    sources.insert(
        "t".to_string(),
        r#"{"devices": [{"results": {"p99_ns": 1433600.0}}]}"#.to_string(),
    );
    sources.insert(
        "d".to_string(),
        "  dies          16\n  seq_write     419.43 MB/s\n".to_string(),
    );
    sources.insert(
        "c".to_string(),
        "0.1,slc,write_iops,8165.6\n0.4,slc,write_iops,36664.5\n".to_string(),
    );
    let page = "p99 <!-- docs: figure t {p99_ns:time} -->1.43 ms<!-- docs: end -->, \
                <!-- docs: figure d {seq_write} -->419.43 MB/s<!-- docs: end -->, \
                <!-- docs: figure c {0.4,slc,write_iops:,.0} IOPS -->36,664 IOPS<!-- docs: end -->, \
                <!-- docs: figure c {0.4,slc,write_iops / 0.1,slc,write_iops:.1} times -->4.5 \
                times<!-- docs: end -->.\n";
    let (text, failures) = check_figures("p.md", page, &mut sources, &dir, "", Phase::Quick);
    assert!(failures.is_empty(), "{failures:?}");
    assert_eq!(text, page);
    for changed in [
        page.replace("-->1.43 ms<", "-->1.44 ms<"),
        page.replace("-->419.43 MB/s<", "-->419 MB/s<"),
        page.replace("-->36,664 IOPS<", "-->36,665 IOPS<"),
        page.replace("-->4.5 times<", "-->4.4 times<"),
    ] {
        let (text, failures) =
            check_figures("p.md", &changed, &mut sources, &dir, "", Phase::Quick);
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert_eq!(text, page);
    }
}

/// A figure of a long source is left alone by the docs test and checked by the long one, and
/// the other way round.
#[test]
fn long_sources_are_checked_in_their_own_phase() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let page = "<!-- docs: long source l: echo '{\"iops\": 2}' -->\n\
                <!-- docs: source q: echo '{\"iops\": 3}' -->\n\
                <!-- docs: figures l\n| {iops} |\n-->\n| 2 |\n<!-- docs: end -->\n\
                <!-- docs: figure l {iops} IOPS -->2 IOPS<!-- docs: end -->, \
                <!-- docs: figure q {iops} IOPS -->3 IOPS<!-- docs: end -->\n";
    assert_eq!(long_source_names(page), ["l"]);
    assert_eq!(figure_source_names(page), ["l", "l", "q"]);
    let check = |doc: &str, phase| {
        check_figures(
            "p.md",
            doc,
            &mut HashMap::new(),
            &dir,
            "/bin:/usr/bin",
            phase,
        )
    };
    for phase in [Phase::Quick, Phase::Long] {
        let (text, failures) = check(page, phase);
        assert!(failures.is_empty(), "{phase:?}: {failures:?}");
        assert_eq!(text, page);
    }
    let long_changed = page
        .replace("| 2 |", "| 5 |")
        .replace("-->2 IOPS<", "-->5 IOPS<");
    let quick_changed = page.replace("-->3 IOPS<", "-->5 IOPS<");
    for (changed, phase, other) in [
        (long_changed, Phase::Long, Phase::Quick),
        (quick_changed, Phase::Quick, Phase::Long),
    ] {
        let (text, failures) = check(&changed, phase);
        assert!(!failures.is_empty(), "{phase:?} sees the change");
        assert_eq!(text, page, "{phase:?} mends it");
        let (text, failures) = check(&changed, other);
        assert!(failures.is_empty(), "{other:?} leaves it: {failures:?}");
        assert_eq!(text, changed);
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

/// Every relative link of README.md, ARCHITECTURE.md and docs/*.md names a file that exists,
/// and its `#anchor` a heading of that page.
#[test]
fn every_relative_link_resolves() {
    script_passes(
        "check-links.py",
        "links to a missing file or heading: point each at the page and heading that hold it now",
    );
}

/// A page is read for one purpose (tutorial, how-to, reference or explanation); a page over
/// 600 lines holds more than one and is split by purpose: the pages of docs/ and those at
/// the top of the repository.
#[test]
fn no_doc_page_over_600_lines() {
    let mut long = Vec::new();
    let pages = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .chain(
            std::fs::read_dir(repo())
                .unwrap()
                .map(|e| e.unwrap().path()),
        )
        .chain([repo().join("presets/README.md")]);
    for path in pages {
        if path.extension().is_some_and(|x| x == "md") {
            let lines = std::fs::read_to_string(&path).unwrap().lines().count();
            if lines > 600 {
                long.push(format!("{}: {lines} lines", path.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "split these pages by purpose:\n{}",
        long.join("\n")
    );
}

/// Words of measured output: a number directly before one of these is a figure.
const FIGURE_UNITS: [&str; 20] = [
    "IOPS", "MB/s", "GB/s", "KB/s", "MiB/s", "GiB/s", "us", "µs", "ms", "ns", "s", "W", "%", "°C",
    "TB", "GB", "MB", "PB", "days", "minutes",
];

/// The figures of `doc`'s prose that no check covers, with their 1-based lines: numbers
/// with decimals or thousands separated (`161.4`, `1,370`), counted in thousands (`85K`), or
/// followed by a unit of measured output (`56 s`, `20.7 W`), outside fenced blocks, code
/// spans, link targets, comments and the regions filled from sources.
fn unchecked_figures(doc: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_fence = false;
    let mut in_region = false;
    for (n, line) in doc.lines().enumerate() {
        let t = line.trim();
        if t.starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if t.starts_with("<!-- docs: figures ") || t.starts_with(CHECKED_BY) {
            in_region = true;
        }
        if in_region {
            in_region = t != "<!-- docs: end -->";
            continue;
        }
        let prose = strip_checked(line);
        out.extend(figures_in(&prose).into_iter().map(|f| (n + 1, f)));
    }
    out
}

/// `line` without its filled figures, other comments, code spans and link targets.
fn strip_checked(line: &str) -> String {
    let cut = |s: &str, open: &str, close: &str| {
        let mut out = String::new();
        let mut rest = s;
        while let Some(at) = rest.find(open) {
            out.push_str(&rest[..at]);
            match rest[at + open.len()..].find(close) {
                Some(end) => rest = &rest[at + open.len() + end + close.len()..],
                None => {
                    rest = "";
                }
            }
        }
        out.push_str(rest);
        out
    };
    let line = cut(line, "<!-- docs: figure ", "<!-- docs: end -->");
    let line = cut(&line, "<!--", "-->");
    let line = cut(&line, "`", "`");
    cut(&line, "](", ")")
}

/// The figures of a line of prose (see [`unchecked_figures`]).
fn figures_in(prose: &str) -> Vec<String> {
    let chars: Vec<char> = prose.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        if i > 0 && chars[i - 1].is_alphanumeric() {
            // The rest of a word holding digits (`QD32`, `p99.99`, `NAND04GW3B2`).
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
            continue;
        }
        let start = i;
        let mut separated = false;
        while i < chars.len() {
            let interior =
                matches!(chars[i], '.' | ',') && chars.get(i + 1).is_some_and(char::is_ascii_digit);
            if interior {
                separated = true;
            } else if !chars[i].is_ascii_digit() {
                break;
            }
            i += 1;
        }
        let number: String = chars[start..i].iter().collect();
        let rest: String = chars[i..].iter().collect();
        let unit = rest.strip_prefix(' ').unwrap_or(&rest);
        let thousands = rest.starts_with(['K', 'k', 'M'])
            && !rest[1..].starts_with(|c: char| c.is_alphanumeric());
        let with_unit = FIGURE_UNITS.iter().any(|u| {
            unit.strip_prefix(u)
                .is_some_and(|r| !r.starts_with(|c: char| c.is_alphanumeric()))
        });
        if separated || thousands || with_unit {
            out.push(number);
        }
        while i < chars.len() && chars[i].is_alphanumeric() {
            i += 1;
        }
    }
    out
}

/// On a page whose prose and tables read figures from its runs (docs/explain-host.md, its
/// sources taken from the output it shows), one figure changed in a table and one in prose
/// each fail, and the rewrite mends them.
#[test]
fn a_changed_figure_of_the_host_page_fails() {
    let page = "docs/explain-host.md";
    let doc = std::fs::read_to_string(repo().join(page)).unwrap();
    let fences = fences(page, &doc);
    let mut sources = HashMap::new();
    for pair in fences.windows(2) {
        if let (Some(name), "text") = (
            pair[0].marker.as_ref().and_then(|m| m.source.clone()),
            pair[1].lang.as_str(),
        ) {
            sources.insert(name, pair[1].text.clone());
        }
    }
    assert!(sources.len() >= 3, "{page}: its runs are sources");
    // The page's own sources run once; the changed pages read what they printed.
    let (dir, path) = scratch_dir("docs-changed", page);
    let (text, failures) = check_figures(page, &doc, &mut sources, &dir, &path, Phase::Quick);
    assert!(failures.is_empty(), "{failures:?}");
    assert_eq!(text, doc);
    let doc: String = doc
        .lines()
        .filter(|l| !l.trim_start().starts_with("<!-- docs: source "))
        .map(|l| format!("{l}\n"))
        .collect();
    let table = "| disk alone <!-- docs: figure scan {scan_pass1_time_s:.1} s -->161.4 s<";
    let prose = "{pass1_app_iops|optane-16gb-hdd-2tb:,} -->1,370<";
    for (shown, changed) in [(table, "161.4 s<", "161.5 s<"), (prose, "1,370<", "1,371<")]
        .map(|(at, from, to)| (at, at.replace(from, to)))
    {
        assert!(doc.contains(shown), "{page} shows {shown}");
        let (text, failures) = check_figures(
            page,
            &doc.replace(shown, &changed),
            &mut sources,
            &dir,
            "",
            Phase::Quick,
        );
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert_eq!(text, doc);
    }
}

/// Opens a region another test checks: `<!-- docs: checked by PATH -->`.
const CHECKED_BY: &str = "<!-- docs: checked by ";

/// The regions of `doc` another test checks: (1-based line, PATH), or why one is malformed.
fn checked_by_regions(doc: &str) -> Result<Vec<(usize, String)>, String> {
    let lines: Vec<&str> = doc.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.trim().strip_prefix(CHECKED_BY) else {
            continue;
        };
        let Some(path) = rest.strip_suffix("-->") else {
            return Err(format!("line {}: the marker does not end with -->", i + 1));
        };
        let ends = lines[i + 1..]
            .iter()
            .position(|l| l.trim() == "<!-- docs: end -->" || l.trim().starts_with(CHECKED_BY));
        match ends {
            Some(j) if lines[i + 1 + j].trim() == "<!-- docs: end -->" => {}
            _ => {
                return Err(format!(
                    "line {}: no <!-- docs: end --> before the next region",
                    i + 1
                ))
            }
        }
        out.push((i + 1, path.trim().to_string()));
    }
    Ok(out)
}

/// A region another test checks names a file of the repository that names the page: a test
/// that reads it. Its figures are left out of the page's unchecked count.
#[test]
fn checked_by_regions_name_a_test_that_reads_the_page() {
    let pages = all_pages();
    let mut wrong = Vec::new();
    let mut regions = 0;
    for page in &pages {
        let doc = std::fs::read_to_string(repo().join(page)).unwrap();
        match checked_by_regions(&doc) {
            Err(e) => wrong.push(format!("{page}: {e}")),
            Ok(found) => {
                for (line, path) in found {
                    regions += 1;
                    match std::fs::read_to_string(repo().join(&path)) {
                        Ok(test) if test.contains(page.as_str()) => {}
                        Ok(_) => wrong.push(format!("{page}:{line}: {path} does not name {page}")),
                        Err(e) => wrong.push(format!("{page}:{line}: {path}: {e}")),
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(
        regions >= 3,
        "the untimed path's tables are checked regions"
    );
    // A region without its end, or naming a file that does not read the page, is refused.
    assert!(checked_by_regions("<!-- docs: checked by x.rs -->\n| 1 |\n").is_err());
    let open = "<!-- docs: checked by README.md -->\n| 1,000 |\n<!-- docs: end -->\n2,000 IOPS\n";
    assert_eq!(
        checked_by_regions(open).unwrap(),
        [(1, "README.md".to_string())]
    );
    let found: Vec<String> = unchecked_figures(open)
        .into_iter()
        .map(|(_, f)| f)
        .collect();
    assert_eq!(found, ["2,000"]);
}

/// Why a page may keep figures outside checked regions.
const CITED: &str = "published figures (reviews, data sheets, papers), each with its source";
const SLOW: &str = "cited figures, and figures of runs longer than the docs test can afford, \
                    each with its command";
const TABLES: &str = "published figures the presets are fitted to or validated against, each \
                      with its source, and rows measured by a command too slow for the tests, \
                      whose recorded figures the validation test holds to their tolerances";
const SPEC: &str = "sizes, defaults and limits of the formats and options the page documents, \
                    not a run's output";
const TESTS: &str = "figures a device test prints (`crates/device/tests/scheduler.rs`), with \
                     its command";
const PYTHON: &str = "the first example's range and the command ceiling, which the Python \
                      package's tests check; the drive's published figure; the sweep docs/sweeps.md \
                      shows";
const POWER: &str = "figures of runs longer than the docs test can afford, each with its \
                     command, and the random-write sentence, which `crates/device/tests/power.rs` \
                     checks";
const CITED_AND_SPEC: &str = "published figures (specifications, product briefs, the review) \
                              and the presets' power settings";
const SWEEPS: &str = "the plan's spare factors, the cell types' default program times, the \
                      plan format's limits, and the wall time the plan takes (not reproducible)";
const SERVED: &str = "timings of a served drive under real fio, not reproducible run to run";

/// Per page, how many figures of its prose may stand outside checked regions (see
/// [`unchecked_figures`]), and why. A page not listed may have none. A figure added to
/// prose unchecked fails [`no_new_unchecked_figures`]; one moved into a checked region
/// leaves room that the count should give back (a ceiling rather than an exact count, so
/// pages that gain checks on other branches do not fail here).
const UNCHECKED_FIGURES: &[(&str, usize, &str)] = &[
    ("README.md", 10, SPEC),
    ("docs/benchmarks-suites.md", 1006, SLOW),
    ("docs/calibration.md", 184, TABLES),
    ("docs/explain-controller.md", 41, SLOW),
    ("docs/explain-gc.md", 240, SLOW),
    ("docs/explain-qlc-spare.md", 194, SLOW),
    ("docs/explain-host.md", 82, SLOW),
    ("docs/explain-power.md", 18, CITED_AND_SPEC),
    ("docs/explain-preconditioning.md", 183, SLOW),
    ("docs/explain-reads.md", 54, SLOW),
    ("docs/explain-slc-cache.md", 86, SLOW),
    ("docs/explain-wear.md", 47, SLOW),
    ("docs/fio.md", 51, SPEC),
    ("docs/fit.md", 103, SLOW),
    ("docs/fuzzing.md", 54, SPEC),
    ("docs/limits.md", 22, SPEC),
    ("docs/placement.md", 123, SLOW),
    ("docs/power.md", 41, POWER),
    ("docs/python.md", 9, PYTHON),
    ("docs/real.md", 1, SPEC),
    ("docs/reviews.md", 157, CITED),
    ("docs/scale.md", 433, SLOW),
    ("docs/scheduling.md", 18, TESTS),
    ("docs/serve.md", 50, SERVED),
    ("docs/state.md", 30, SLOW),
    ("docs/suite-options.md", 18, SPEC),
    ("docs/suite-output.md", 5, SPEC),
    ("docs/suites-systems.md", 56, SLOW),
    ("docs/suites.md", 78, SLOW),
    ("docs/sweeps.md", 12, SWEEPS),
    ("docs/systems.md", 44, SLOW),
    ("docs/time-model.md", 22, SPEC),
    ("docs/traces.md", 4, SPEC),
    ("docs/tutorial.md", 11, SLOW),
    ("docs/validation.md", 253, TABLES),
];

/// A figure a page adds to its prose or tables comes from the program through a checked
/// region, or is counted in [`UNCHECKED_FIGURES`] with its reason.
#[test]
fn no_new_unchecked_figures() {
    let pages = all_pages();
    let mut wrong = Vec::new();
    for page in &pages {
        let doc = std::fs::read_to_string(repo().join(page)).unwrap();
        let found = unchecked_figures(&doc);
        let allowed = UNCHECKED_FIGURES
            .iter()
            .find(|(p, _, _)| p == page)
            .map_or(0, |(_, n, _)| *n);
        if found.len() > allowed {
            let list: Vec<String> = found.iter().map(|(l, f)| format!("{l}: {f}")).collect();
            wrong.push(format!(
                "{page}: {} figures outside checked regions, {allowed} allowed. Fill a new \
                 figure from its command (<!-- docs: figure ... -->), or, for a published \
                 figure or a run too slow for this test, raise the page's count in \
                 UNCHECKED_FIGURES. The page's unchecked figures by line:\n{}",
                found.len(),
                list.join(", ")
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

#[test]
fn figures_in_prose_are_found() {
    let doc = "At 161.4 s and 1,370 IOPS, 85K writes, 56 s, QD32 and `sim.scale=0.02`\n\
               ```text\n9.99 s\n```\n\
               <!-- docs: figures s\n{x}\n-->\n3.5 s\n<!-- docs: end -->\n\
               a <!-- docs: figure s {x} -->2.5 s<!-- docs: end --> b, p99.99, 4 KiB, 20 W.\n";
    let found: Vec<String> = unchecked_figures(doc).into_iter().map(|(_, f)| f).collect();
    assert_eq!(found, ["161.4", "1,370", "85", "56", "20"]);
}
