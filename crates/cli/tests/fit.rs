//! `flashlab fit`: the plan, its simulated run, the fit's preset (deterministic, with a
//! provenance entry per key), its HTML report in a browser, and bad input: an output
//! missing, cut short, of another capacity or of another job, and an output path that is
//! an input, each refused with exit 2 naming the file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

fn flashlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("flashlab runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("fit")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
    dir
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The plan run once on tiny-test-1gb: every test copies what it changes.
fn plan_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = scratch("tiny-plan");
        let out = flashlab(&[
            "fit",
            "run",
            "--device",
            "tiny-test-1gb",
            "--outdir",
            dir.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", text(&out));
        dir
    })
}

fn copy_of(name: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(plan_dir()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    dir
}

fn refused(dir: &Path, expect: &[&str]) {
    let out_file = dir.with_extension("toml");
    let out = flashlab(&[
        "fit",
        dir.to_str().unwrap(),
        "--output",
        out_file.to_str().unwrap(),
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    for e in expect {
        assert!(said.contains(e), "{e:?} not in {said}");
    }
    assert!(!out_file.exists(), "a refused fit wrote its output");
}

#[test]
fn a_missing_output_is_named_with_the_job_it_belongs_to() {
    let dir = copy_of("missing");
    std::fs::remove_file(dir.join("steady-half.json")).unwrap();
    refused(&dir, &["steady-half.json: missing", "steady-half.fio"]);
    let dir = copy_of("missing-gc-onset");
    std::fs::remove_file(dir.join("gc-onset.json")).unwrap();
    refused(&dir, &["gc-onset.json: missing", "gc-onset.fio"]);
}

#[test]
fn a_cut_json_document_and_a_cut_log_are_refused() {
    let dir = copy_of("cut-json");
    let json = std::fs::read_to_string(dir.join("randread-qd8.json")).unwrap();
    std::fs::write(dir.join("randread-qd8.json"), &json[..json.len() / 2]).unwrap();
    refused(&dir, &["randread-qd8.json: not a whole fio JSON document"]);

    let dir = copy_of("cut-log");
    cut_to_a_quarter(&dir.join("seq-fill_bw.1.log"));
    refused(&dir, &["seq-fill_bw.1.log", "cut short"]);

    // The IOPS log GC's onset is read from, cut to its first quarter.
    let dir = copy_of("cut-gc-onset");
    cut_to_a_quarter(&dir.join("gc-onset_iops.1.log"));
    refused(&dir, &["gc-onset_iops.1.log", "cut short"]);
}

/// Keeps the first quarter of a log's lines.
fn cut_to_a_quarter(log: &Path) {
    let text = std::fs::read_to_string(log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(log, lines[..lines.len() / 4].join("\n")).unwrap();
}

/// A set without `seq-fill` and without every job after `seq-read` (the steady-state and
/// mixed jobs): the fit simulates the plan up to `seq-read` only, so this is also where the
/// fit's independence of its thread count is checked, on two runs that cost seconds.
#[test]
fn a_partial_set_fits_with_the_keys_of_its_missing_jobs_at_class_defaults_on_any_threads() {
    let dir = copy_of("partial");
    // In the order the fit names them.
    let unmeasured = [
        "seq-fill",
        "write-buffer",
        "read-under-write",
        "mixed-qd4",
        "mixed-qd16",
        "gc-onset",
        "steady-full",
        "steady-half",
        "chunk-settle",
        "chunk-write",
    ];
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap();
        let job = name.split(['.', '_']).next().unwrap();
        if unmeasured.contains(&job) && !name.ends_with(".fio") {
            std::fs::remove_file(&path).unwrap();
        }
    }
    refused(&dir, &["seq-fill.json: missing"]);
    let fit = |threads: &str| {
        // The same file name on both runs: the preset's name is the file's.
        let out_dir = scratch(&format!("partial-on-{threads}"));
        std::fs::create_dir_all(&out_dir).unwrap();
        let preset = out_dir.join("partial.toml");
        let out = flashlab(&[
            "fit",
            dir.to_str().unwrap(),
            "--partial",
            "--threads",
            threads,
            "--output",
            preset.to_str().unwrap(),
        ]);
        let said = text(&out);
        assert!(out.status.success(), "{said}");
        (std::fs::read_to_string(&preset).unwrap(), said)
    };
    let (preset, said) = fit("2");
    let (again, _) = fit("1");
    assert_eq!(
        preset, again,
        "the same outputs gave another preset on one thread"
    );
    assert!(
        said.contains(&format!("Not measured: {}\n", unmeasured.join(", "))),
        "{said}"
    );
    let defaults = said
        .lines()
        .find_map(|l| l.strip_prefix("At class defaults: "))
        .unwrap_or_else(|| panic!("no class defaults line: {said}"));
    for key in ["nand.planes_per_die", "nand.t_prog", "nand.slc_t_prog"] {
        assert!(defaults.contains(key), "{key} not in {defaults}");
    }
    assert!(!defaults.contains("nand.t_read"), "{defaults}");
    let table: toml::Table = toml::from_str(&preset).unwrap();
    let prov = table["provenance"].as_table().unwrap();
    let t_prog = prov["nand.t_prog"].as_table().unwrap();
    assert_eq!(t_prog["kind"].as_str(), Some("default"));
    assert!(t_prog["reason"]
        .as_str()
        .unwrap()
        .contains("no seq-fill output"));
    assert_eq!(prov["nand.t_read"]["kind"].as_str(), Some("fitted"));
    assert_eq!(table["nand"]["t_prog"].as_str(), Some("600.0us"));
    assert_eq!(table["nand"]["planes_per_die"].as_integer(), Some(4));
}

#[test]
fn outputs_of_another_job_or_capacity_are_refused() {
    let dir = copy_of("other-job");
    std::fs::copy(dir.join("randread-qd2.json"), dir.join("randread-qd1.json")).unwrap();
    refused(
        &dir,
        &["randread-qd1.json", "expected the plan's job randread-qd1"],
    );

    // The outputs of a 1 GB drive beside the manifest of a 2 GB plan.
    let dir = copy_of("other-capacity");
    let plan2 = scratch("plan-2g");
    let out = flashlab(&[
        "fit",
        "plan",
        "--outdir",
        plan2.to_str().unwrap(),
        "--capacity",
        "2GB",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    std::fs::copy(plan2.join("manifest.json"), dir.join("manifest.json")).unwrap();
    refused(
        &dir,
        &["randread-qd1.json", "size=999997440", "another capacity"],
    );
}

#[test]
fn a_fit_never_writes_over_its_inputs() {
    let dir = copy_of("over-inputs");
    let input = dir.join("seq-fill.json");
    let before = std::fs::read(&input).unwrap();
    let out = flashlab(&[
        "fit",
        dir.to_str().unwrap(),
        "--output",
        input.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("it is also the run's plan output"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read(&input).unwrap(), before);
    // Nor does a run write over outputs already there.
    let out = flashlab(&[
        "fit",
        "run",
        "--device",
        "tiny-test-1gb",
        "--outdir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("already there"), "{}", text(&out));
}

/// The browser that opens the report; without one a notice, unless
/// FLASHLAB_REQUIRE_BROWSER=1.
fn browser() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let found = ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert_ne!(
            std::env::var("FLASHLAB_REQUIRE_BROWSER").as_deref(),
            Ok("1"),
            "no chromium"
        );
        eprintln!("SKIPPED: no chromium on PATH; the fit report was not opened in a browser");
    }
    found
}

/// A whole fit's preset has every key keyed by provenance, and its report draws every chart.
/// The whole tiny plan's fit is docs/fit.md's `flashlab fit my-drive --output my-drive.toml
/// --report fit.html`, which the docs test runs and then checks with this.
pub(crate) fn check_whole_fit(output: &Path, report: &Path) {
    let preset = std::fs::read_to_string(output).unwrap();
    let table: toml::Table = toml::from_str(&preset).unwrap();
    let provenance = table["provenance"].as_table().unwrap();
    let mut keys = 0;
    for (section, value) in &table {
        let Some(values) = value.as_table() else {
            continue;
        };
        if section == "provenance" {
            continue;
        }
        for key in values.keys() {
            keys += 1;
            let entry = provenance
                .get(&format!("{section}.{key}"))
                .and_then(|e| e.as_table())
                .unwrap_or_else(|| panic!("{section}.{key} has no provenance"));
            let kind = entry["kind"].as_str().unwrap();
            let needs: &[&str] = match kind {
                "measured" => &["job", "figure"],
                "fitted" => &["figure"],
                "inferred" => &["relation"],
                "default" => &["reason"],
                other => panic!("{section}.{key}: kind {other}"),
            };
            for n in needs {
                assert!(
                    entry.contains_key(*n),
                    "{section}.{key}: {kind} without {n}"
                );
            }
        }
    }
    assert_eq!(
        keys,
        provenance.len(),
        "provenance of keys the preset does not set"
    );

    let Some(browser) = browser() else { return };
    let profile = scratch("chromium-profile");
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("file://{}", report.display()))
        .stdin(Stdio::null())
        .output()
        .expect("the browser runs");
    let dom = String::from_utf8_lossy(&out.stdout);
    let at = dom
        .find("id=\"chart-check\"")
        .expect("the page's chart check");
    let check = &dom[at..at + dom[at..].find("</output>").unwrap()];
    assert!(check.contains("data-status=\"ok\""), "{check}");
    for id in [
        "cache-cliff",
        "iops-over-depth",
        "random-write-settling",
        "job-errors",
    ] {
        assert!(
            check.contains(&format!("\n{id} ")) || check.contains(&format!(">{id} ")),
            "{id} not drawn: {check}"
        );
    }
}
