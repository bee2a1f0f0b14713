//! The precondition cache: a suite run with a warm cache prints byte for byte what a cold
//! run and an uncached run print; suites sharing a preconditioning share its entry; a
//! damaged entry is reported and rebuilt; `--save-state-after` saves the preconditioned
//! drive; independent drives on threads give the sequential results.

use std::path::{Path, PathBuf};
use std::process::Command;

const DEVICE: &str = "tiny-test-1gb";
const HIT: &str = "preconditioning from the state cache";

fn dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "flashlab-state-cache-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `flashlab suite NAME` on the tiny drive with short steps and `extra`: exit code, standard
/// output and standard error.
fn suite(name: &str, extra: &[&str]) -> (Option<i32>, String, String) {
    suite_for(name, "200ms", extra)
}

/// `--runtime`, for the suites that read it (the others run to their own length and refuse
/// it).
fn runtime_args<'a>(suite: &str, runtime: &'a str) -> Vec<&'a str> {
    const OWN_LENGTH: [&str; 5] = [
        "wsat",
        "recovery",
        "op-sweep",
        "endurance",
        "sustained-write",
    ];
    if OWN_LENGTH.contains(&suite) {
        Vec::new()
    } else {
        vec!["--runtime", runtime]
    }
}

/// [`suite`] with measured steps of `runtime`.
fn suite_for(name: &str, runtime: &str, extra: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["suite", name, "--device", DEVICE])
        .args(runtime_args(name, runtime))
        .args(["--output-format", "json"])
        .args(if name == "qos" {
            &["--depths", "1,32"][..]
        } else {
            &[]
        })
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn cached(name: &str, cache: &Path) -> (String, String) {
    let (code, out, err) = suite(name, &["--state-cache", cache.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    (out, err)
}

fn entries(cache: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "state"))
        .collect();
    v.sort();
    v
}

#[test]
fn a_warm_cache_gives_the_cold_and_uncached_output() {
    let cache = dir("warm").join("states");
    let (code, uncached, _) = suite("qos", &["--no-state-cache"]);
    assert_eq!(code, Some(0));
    let (cold, err) = cached("qos", &cache);
    assert!(!err.contains(HIT), "{err}");
    // The fill and the rounds: one entry each.
    assert_eq!(entries(&cache).len(), 2);
    let (warm, err) = cached("qos", &cache);
    assert!(err.contains(HIT), "{err}");
    assert_eq!(cold, uncached);
    assert_eq!(warm, cold);
    // precondition runs qos's preconditioning: it reads both entries, writes none.
    let (code, uncached, _) = suite("precondition", &["--no-state-cache"]);
    assert_eq!(code, Some(0));
    let (warm, err) = cached("precondition", &cache);
    assert_eq!(err.matches(HIT).count(), 2, "{err}");
    assert_eq!(warm, uncached);
    // four-corners shares the fill; its rounds, after its measured steps, are an entry of
    // their own.
    let (code, uncached, _) = suite("four-corners", &["--no-state-cache"]);
    assert_eq!(code, Some(0));
    let (warm, err) = cached("four-corners", &cache);
    assert_eq!(err.matches(HIT).count(), 1, "{err}");
    assert_eq!(warm, uncached);
    assert_eq!(entries(&cache).len(), 3);
    // Another seed is another drive: no entry fits.
    let (code, _, err) = suite(
        "qos",
        &["--state-cache", cache.to_str().unwrap(), "--seed", "9"],
    );
    assert_eq!(code, Some(0));
    assert!(!err.contains(HIT), "{err}");
    assert_eq!(entries(&cache).len(), 5);
    let _ = std::fs::remove_dir_all(cache.parent().unwrap());
}

#[test]
fn rounds_after_measured_steps_are_cached_under_the_whole_chain() {
    let cache = dir("chain");
    let (code, uncached, _) = suite("four-corners", &["--no-state-cache"]);
    assert_eq!(code, Some(0));
    // four-corners measures three windows between its fill and its random-write rounds:
    // the rounds' key holds those steps too, so a repeat reads both checkpoints back.
    let (cold, err) = cached("four-corners", &cache);
    assert!(!err.contains(HIT), "{err}");
    assert_eq!(entries(&cache).len(), 2);
    let (warm, err) = cached("four-corners", &cache);
    assert_eq!(err.matches(HIT).count(), 2, "{err}");
    assert_eq!(cold, uncached);
    assert_eq!(warm, cold);
    // Another measured window before the rounds is another chain: the fill is shared, the
    // rounds run again under a key of their own.
    let (code, other, err) = suite_for(
        "four-corners",
        "300ms",
        &["--state-cache", cache.to_str().unwrap()],
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(err.matches(HIT).count(), 1, "{err}");
    assert_ne!(other, cold);
    assert_eq!(entries(&cache).len(), 3);
    // qos begins with the rounds on the fill: its rounds are not four-corners'.
    let (_, err) = cached("qos", &cache);
    assert_eq!(err.matches(HIT).count(), 1, "{err}");
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn pts_iops_rounds_are_read_back_with_their_cells() {
    let cache = dir("pts-iops");
    let (code, uncached, _) = suite_for("pts-iops", "20ms", &["--no-state-cache"]);
    assert_eq!(code, Some(0));
    let with_cache = ["--state-cache", cache.to_str().unwrap()];
    let (code, cold, err) = suite_for("pts-iops", "20ms", &with_cache);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains(HIT), "{err}");
    // The fill, then the matrix's rounds with every cell's IOPS.
    assert_eq!(entries(&cache).len(), 2);
    let (code, warm, err) = suite_for("pts-iops", "20ms", &with_cache);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(err.matches(HIT).count(), 2, "{err}");
    assert_eq!(cold, uncached);
    assert_eq!(warm, cold);
    // Other cells' length: the same fill, other rounds.
    let (code, other, err) = suite_for("pts-iops", "30ms", &with_cache);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(err.matches(HIT).count(), 1, "{err}");
    assert_ne!(other, cold);
    assert_eq!(entries(&cache).len(), 3);
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn wsat_intervals_are_read_back_with_their_figures() {
    let d = dir("wsat");
    let cache = d.join("entries");
    let p = |p: &Path| p.to_str().unwrap().to_string();
    // Half a drive fill in intervals of 5% of the capacity: 10 intervals, each a step file.
    let wsat = |multiple: &str, interval: &str, extra: &[&str]| {
        let (code, out, err) = suite(
            "wsat",
            &[
                &["--write-multiple", multiple, "--interval", interval][..],
                extra,
            ]
            .concat(),
        );
        assert_eq!(code, Some(0), "{err}");
        (out, err)
    };
    let run = |name: &str, cached: bool| {
        let outdir = d.join(name);
        let cache_args = if cached {
            vec!["--state-cache".to_string(), p(&cache)]
        } else {
            vec!["--no-state-cache".to_string()]
        };
        let outdir_arg = p(&outdir);
        let mut extra: Vec<&str> = cache_args.iter().map(String::as_str).collect();
        extra.extend(["--outdir", &outdir_arg]);
        let (out, err) = wsat("0.5", "5%", &extra);
        (out, files_under(&outdir), err)
    };
    let (uncached, uncached_files, _) = run("uncached", false);
    let (cold, cold_files, err) = run("cold", true);
    assert!(!err.contains(HIT), "{err}");
    // The purge and the intervals are one checkpoint, kept with every interval's figures.
    assert_eq!(entries(&cache).len(), 1);
    let (warm, warm_files, err) = run("warm", true);
    assert_eq!(err.matches(HIT).count(), 1, "{err}");
    assert_eq!(cold, uncached);
    assert_eq!(warm, cold);
    assert!(cold_files.len() > 10, "{} step files", cold_files.len());
    assert!(
        cold_files == uncached_files,
        "the step files differ with a cache"
    );
    assert!(warm_files == cold_files, "the warm run's step files differ");
    // The write-saturated drive is the preconditioning: saved after it, it is the drive at
    // the suite's end.
    let (after, end) = (d.join("after.state"), d.join("end.state"));
    let c = p(&cache);
    wsat(
        "0.5",
        "5%",
        &[
            "--state-cache",
            &c,
            "--save-state",
            &p(&after),
            "--save-state-after",
            "precondition",
        ],
    );
    wsat("0.5", "5%", &["--no-state-cache", "--save-state", &p(&end)]);
    assert!(std::fs::read(&after).unwrap() == std::fs::read(&end).unwrap());
    // Another amount written or another interval is another write stream: an entry of its own.
    let (other, err) = wsat("0.6", "5%", &["--state-cache", &c]);
    assert!(!err.contains(HIT), "{err}");
    assert_ne!(other, cold);
    assert_eq!(entries(&cache).len(), 2);
    let (other, err) = wsat("0.5", "10%", &["--state-cache", &c]);
    assert!(!err.contains(HIT), "{err}");
    assert_ne!(other, cold);
    assert_eq!(entries(&cache).len(), 3);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn endurance_reads_its_fill_and_rounds_back() {
    let cache = dir("endurance");
    let (code, uncached, _) = suite("endurance", &["--no-state-cache"]);
    assert_eq!(code, Some(0));
    let with_cache = ["--state-cache", cache.to_str().unwrap()];
    let (code, cold, err) = suite("endurance", &with_cache);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains(HIT), "{err}");
    // The fill, then the rounds to steady state with their wear; the measured interval runs.
    assert_eq!(entries(&cache).len(), 2);
    let (code, warm, err) = suite("endurance", &with_cache);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(err.matches(HIT).count(), 2, "{err}");
    assert_eq!(cold, uncached);
    assert_eq!(warm, cold);
    // Another workload shares the fill only.
    let (code, _, err) = suite(
        "endurance",
        &[&with_cache[..], &["--workload", "random-4k"]].concat(),
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(err.matches(HIT).count(), 1, "{err}");
    assert_eq!(entries(&cache).len(), 3);
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn suites_that_build_their_own_drive_keep_its_preconditioning() {
    // noisy-neighbor splits the drive into namespaces; power builds one drive per power
    // state: each is a fresh drive of its own description, with entries of its own.
    for (name, hits) in [("noisy-neighbor", 2), ("power", 1)] {
        let cache = dir(name);
        let (code, uncached, _) = suite(name, &["--no-state-cache"]);
        assert_eq!(code, Some(0));
        let (cold, err) = cached(name, &cache);
        assert!(!err.contains(HIT), "{name}: {err}");
        assert_eq!(entries(&cache).len(), hits, "{name}");
        let (warm, err) = cached(name, &cache);
        assert_eq!(err.matches(HIT).count(), hits, "{name}: {err}");
        assert_eq!(cold, uncached, "{name}");
        assert_eq!(warm, cold, "{name}");
        let _ = std::fs::remove_dir_all(&cache);
    }
}

/// Every file under `dir`, by path relative to it, with its bytes.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                pending.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.push((p.strip_prefix(dir).unwrap().to_path_buf(), bytes));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_warm_run_writes_the_cold_runs_step_files() {
    // The step files carry the device counters (memory included) of every step: a drive
    // read back from the cache must report what the drive that ran to that point did.
    let cache = dir("outdir");
    let out = |run: &str| {
        let outdir = cache.join(run);
        let (code, _, err) = suite(
            "four-corners",
            &[
                "--state-cache",
                cache.join("entries").to_str().unwrap(),
                "--outdir",
                outdir.to_str().unwrap(),
            ],
        );
        assert_eq!(code, Some(0), "{err}");
        (files_under(&outdir), err)
    };
    let (cold, err) = out("cold");
    assert!(!err.contains(HIT), "{err}");
    let (warm, err) = out("warm");
    assert_eq!(err.matches(HIT).count(), 2, "{err}");
    assert!(cold.len() > 3, "{} step files", cold.len());
    assert_eq!(
        cold.iter().map(|f| &f.0).collect::<Vec<_>>(),
        warm.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for ((path, c), (_, w)) in cold.iter().zip(&warm) {
        assert!(
            c == w,
            "{} differs between the cold and the warm run",
            path.display()
        );
    }
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn a_damaged_or_foreign_entry_is_reported_and_rebuilt() {
    let cache = dir("damaged");
    let (cold, _) = cached("qos", &cache);
    let files = entries(&cache);
    assert_eq!(files.len(), 2);
    // One entry damaged in its device part, the other replaced by the first's bytes (an
    // entry of another key under its name).
    let mut bytes = std::fs::read(&files[0]).unwrap();
    let at = bytes.len() - 100;
    bytes[at] ^= 1;
    std::fs::write(&files[0], &bytes).unwrap();
    bytes[at] ^= 1;
    std::fs::write(&files[1], &bytes).unwrap();
    let (out, err) = cached("qos", &cache);
    assert_eq!(err.matches("not used").count(), 2, "{err}");
    assert!(!err.contains(HIT), "{err}");
    assert_eq!(out, cold);
    // Rebuilt: the next run reads both.
    let (out, err) = cached("qos", &cache);
    assert_eq!(err.matches(HIT).count(), 2, "{err}");
    assert_eq!(out, cold);
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn save_state_after_precondition_is_the_preconditioned_drive() {
    let d = dir("after");
    let cache = d.join("states");
    let after = d.join("after.state");
    let end = d.join("end.state");
    let p = |p: &Path| p.to_str().unwrap().to_string();
    // qos saved after its preconditioning, with a cold and then a warm cache, is the drive
    // precondition leaves at its end.
    for _ in 0..2 {
        let (code, _, err) = suite(
            "qos",
            &[
                "--state-cache",
                &p(&cache),
                "--save-state",
                &p(&after),
                "--save-state-after",
                "precondition",
            ],
        );
        assert_eq!(code, Some(0), "{err}");
        let (code, _, err) = suite(
            "precondition",
            &["--no-state-cache", "--save-state", &p(&end)],
        );
        assert_eq!(code, Some(0), "{err}");
        assert!(std::fs::read(&after).unwrap() == std::fs::read(&end).unwrap());
    }
    // A step by its report name.
    let (code, _, err) = suite(
        "qos",
        &["--save-state", &p(&after), "--save-state-after", "fill"],
    );
    assert_eq!(code, Some(0), "{err}");
    // A step name of 10 KB is echoed cut to 80 characters, not whole.
    let long = format!("flil{}", "x".repeat(10_000));
    let (code, _, err) = suite(
        "qos",
        &["--save-state", &p(&after), "--save-state-after", &long],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--save-state-after flilxxx")
            && err.contains("valid steps: precondition, purge, fill, round-01")
            && err.len() < 1_000,
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn spare_points_on_threads_give_the_sequential_results() {
    let cache = dir("threads");
    let args = |j: &'static str| {
        vec![
            "--op",
            "0,0.2",
            "--run-minutes",
            "0.05",
            "--round",
            "50%",
            "-j",
            j,
        ]
    };
    let (code, one, err) = suite(
        "op-sweep",
        &[&args("1")[..], &["--no-state-cache"]].concat(),
    );
    assert_eq!(code, Some(0), "{err}");
    let c = cache.to_str().unwrap();
    let (code, two, err) = suite(
        "op-sweep",
        &[&args("2")[..], &["--state-cache", c]].concat(),
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(one, two);
    // Each spare point's preconditioning is cached: the warm run reads them all.
    let (code, warm, err) = suite(
        "op-sweep",
        &[&args("2")[..], &["--state-cache", c]].concat(),
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(err.matches(HIT).count(), 4, "{err}");
    assert_eq!(warm, one);
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn raid_sets_on_threads_and_from_the_cache_give_the_sequential_results() {
    let cache = dir("raid");
    let c = cache.to_str().unwrap();
    let args = |j: &'static str| vec!["--members", "1,3", "--state", "full", "-j", j];
    let (code, one, err) = suite(
        "raid-scaling",
        &[&args("1")[..], &["--no-state-cache"]].concat(),
    );
    assert_eq!(code, Some(0), "{err}");
    let (code, cold, err) = suite(
        "raid-scaling",
        &[&args("3")[..], &["--state-cache", c]].concat(),
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(cold, one);
    // Each set's fill is a system's cached checkpoint.
    let (code, warm, err) = suite(
        "raid-scaling",
        &[&args("2")[..], &["--state-cache", c]].concat(),
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(err.matches(HIT).count(), 3, "{err}");
    assert_eq!(warm, one);
    let _ = std::fs::remove_dir_all(&cache);
}
