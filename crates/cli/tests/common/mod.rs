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

/// The repository's root (presets, jobs, docs).
pub fn repo() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The text at `key` of a table row; `ctx` names the row in the panic.
pub fn toml_text(t: &toml::Table, key: &str, ctx: &str) -> String {
    t.get(key)
        .and_then(|v| v.as_str())
        .unwrap_or_else(|| panic!("{ctx}: `{key}` (text) is required"))
        .to_string()
}

/// `run` on every item on two worker threads (runs of the binary are independent and each
/// single-threaded), results in item order.
pub fn on_two_workers<T: Sync, R: Send>(
    items: &[T],
    run: impl Fn(usize, &T) -> R + Sync,
) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= items.len() {
                    break;
                }
                let r = run(i, &items[i]);
                results.lock().unwrap()[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every item was run"))
        .collect()
}

/// The end of a table a test writes into a page.
pub const TABLE_END: &str = "<!-- end of rows -->\n";

/// `doc` with the text between `begin` and the next [`TABLE_END`] replaced by `body`.
pub fn splice(doc: &str, begin: &str, body: &str) -> String {
    let start = doc
        .find(begin)
        .unwrap_or_else(|| panic!("the page has no marker {begin:?}"))
        + begin.len();
    let end = start
        + doc[start..]
            .find(TABLE_END)
            .expect("the page closes each table with its end marker");
    format!("{}{}{}", &doc[..start], body, &doc[end..])
}

/// Whether `page` (a path under the repository) holds each `(begin marker, table)`; with
/// `update_var=1` in the environment, writes them in instead. `Some(why)` when it differs.
pub fn page_holds(
    page: &str,
    tables: &[(&str, &str)],
    update_var: &str,
    source: &str,
) -> Option<String> {
    let path = repo().join(page);
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{page}: {e}"));
    let want = tables
        .iter()
        .fold(doc.clone(), |d, (begin, body)| splice(&d, begin, body));
    if std::env::var(update_var).as_deref() == Ok("1") {
        std::fs::write(&path, &want).unwrap_or_else(|e| panic!("{page}: {e}"));
        return None;
    }
    (doc != want)
        .then(|| format!("{page}'s tables differ from {source}: run the test with {update_var}=1"))
}
