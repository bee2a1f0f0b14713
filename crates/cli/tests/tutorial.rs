//! docs/tutorial.md runs as written: every `sh` block in it carries a marker comment, and
//! this test runs the marked blocks in order, in one scratch directory, with the built
//! `flashlab` first on `PATH` (the tutorial's commands use small slices, so the whole
//! tutorial takes seconds of simulation).
//!
//! - `<!-- tutorial: run -->`: the block must exit 0, and where a `text` block follows it
//!   directly, that is what it prints (standard error and output together, byte for byte:
//!   simulated runs are deterministic).
//! - `<!-- tutorial: exit 2 -->`: the block must exit 2 (bad input), printing the `text`
//!   block that follows.
//! - `<!-- tutorial: run, needs fio -->`: runs on real storage through fio, so only its exit
//!   code is checked; skipped with a notice when fio is missing, unless
//!   FLASHLAB_REQUIRE_TOOLS=1, where a missing fio fails the test.
//!
//! `FLASHLAB_UPDATE_TUTORIAL=1` writes what each block printed into the doc instead.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A fenced `sh` block of the tutorial and what the test expects of it.
struct Block {
    /// 1-based line of the opening fence, for messages.
    line: usize,
    script: String,
    expect_code: i32,
    needs_fio: bool,
    /// The `text` block right after it, if any.
    output: Option<String>,
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The fenced block whose opening fence is `lines[start]`: its text and the index of the
/// line after its closing fence.
fn fenced(lines: &[&str], start: usize) -> (String, usize) {
    let mut text = String::new();
    let mut i = start + 1;
    while i < lines.len() && lines[i].trim_end() != "```" {
        text.push_str(lines[i]);
        text.push('\n');
        i += 1;
    }
    assert!(
        i < lines.len(),
        "docs/tutorial.md:{}: block not closed",
        start + 1
    );
    (text, i + 1)
}

fn blocks(doc: &str) -> Vec<Block> {
    let lines: Vec<&str> = doc.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_end() != "```sh" {
            i += 1;
            continue;
        }
        let marker = lines[..i]
            .iter()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| l.trim())
            .unwrap_or("");
        let (expect_code, needs_fio) = match marker {
            "<!-- tutorial: run -->" => (0, false),
            "<!-- tutorial: exit 2 -->" => (2, false),
            "<!-- tutorial: run, needs fio -->" => (0, true),
            other => panic!(
                "docs/tutorial.md:{}: a sh block needs a marker line before it \
                 (<!-- tutorial: run -->, <!-- tutorial: exit 2 --> or \
                 <!-- tutorial: run, needs fio -->); found `{other}`",
                i + 1
            ),
        };
        let (script, next) = fenced(&lines, i);
        let mut j = next;
        while j < lines.len() && lines[j].trim().is_empty() {
            j += 1;
        }
        let line = i + 1;
        let output = if j < lines.len() && lines[j].trim_end() == "```text" {
            let (text, after) = fenced(&lines, j);
            i = after;
            Some(text)
        } else {
            i = next;
            None
        };
        out.push(Block {
            line,
            script,
            expect_code,
            needs_fio,
            output,
        });
    }
    out
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
        eprintln!("SKIPPED: the tutorial's real-storage step: fio missing (apt-get install fio)");
    }
    ok
}

#[test]
fn the_tutorial_runs_as_written() {
    let doc = std::fs::read_to_string(repo().join("docs/tutorial.md"))
        .expect("docs/tutorial.md is readable");
    let blocks = blocks(&doc);
    // The tutorial goes from a preset to a real drive: a rewrite that drops its markers
    // must not pass by running nothing.
    assert!(
        blocks.iter().filter(|b| b.expect_code == 0).count() >= 6,
        "docs/tutorial.md has fewer than six marked blocks to run"
    );
    assert!(blocks.iter().any(|b| b.needs_fio), "no real-storage step");

    // The tutorial runs in the repository's root; its files land in a scratch directory
    // that sees the repository's job files.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tutorial");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(repo().join("jobs"), dir.join("jobs")).unwrap();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_flashlab")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );

    let fio = blocks.iter().any(|b| b.needs_fio) && have_fio();
    // FLASHLAB_UPDATE_TUTORIAL=1 writes what each block printed into the doc's `text` blocks
    // instead of comparing (after a change to the model moves the figures shown).
    let update = std::env::var("FLASHLAB_UPDATE_TUTORIAL").as_deref() == Ok("1");
    let mut updated = doc.clone();
    for b in &blocks {
        if b.needs_fio && !fio {
            continue;
        }
        // Errors and output in one stream, in the order written, as a terminal shows them;
        // a failing command anywhere in a pipeline fails the block.
        let script = format!("{{\n{}}} 2>&1", b.script);
        let out = Command::new("bash")
            .args(["-e", "-o", "pipefail", "-c", &script])
            .current_dir(&dir)
            .env("PATH", &path)
            // A fresh state cache per run of the test: what a first-time reader sees.
            .env("XDG_CACHE_HOME", dir.join("xdg-cache"))
            .output()
            .expect("bash runs");
        // Off a terminal, progress comes as plain lines every few wall seconds; on the
        // reader's terminal it is one redrawn line, cleared at the end.
        let printed: String = String::from_utf8_lossy(&out.stdout)
            .split_inclusive('\n')
            .filter(|l| !l.starts_with("flashlab: ["))
            .collect();
        assert_eq!(
            out.status.code(),
            Some(b.expect_code),
            "docs/tutorial.md:{}: exit status; it printed:\n{printed}",
            b.line
        );
        if let (Some(expected), false) = (&b.output, b.needs_fio) {
            if update {
                updated = replace_output(&updated, b.line, &printed);
                continue;
            }
            assert_eq!(
                printed.as_str(),
                expected.as_str(),
                "docs/tutorial.md:{}: the output shown after the block is not what it prints",
                b.line
            );
        }
    }
    if update {
        std::fs::write(repo().join("docs/tutorial.md"), updated).unwrap();
    }
}

/// `doc` with the `text` block that follows the `sh` block opening at line `sh_line`
/// (1-based) holding `printed`.
fn replace_output(doc: &str, sh_line: usize, printed: &str) -> String {
    let lines: Vec<&str> = doc.lines().collect();
    let (_, after_sh) = fenced(&lines, sh_line - 1);
    let text_start = (after_sh..lines.len())
        .find(|&i| lines[i].trim_end() == "```text")
        .expect("a text block follows");
    let (_, after_text) = fenced(&lines, text_start);
    let mut out: Vec<String> = lines[..=text_start].iter().map(|l| l.to_string()).collect();
    out.extend(printed.lines().map(str::to_string));
    out.push("```".to_string());
    out.extend(lines[after_text..].iter().map(|l| l.to_string()));
    out.join("\n") + "\n"
}
