//! `flashlab suite --target`: suites on real files and block devices through the real fio,
//! beside simulated devices, and the safety checks that refuse targets holding data. Tests
//! that need fio (or a loop device) skip with a notice when it is missing, unless
//! FLASHLAB_REQUIRE_TOOLS=1, where a missing tool fails them.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use common::{flashlab, stderr, stdout};
use serde_json::Value;

/// fio measures real hardware: one run at a time, so tests do not disturb each other.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Options that keep a suite to a few seconds on a small target.
const SHORT: [&str; 8] = [
    "--runtime",
    "200ms",
    "--round",
    "100ms",
    "--max-rounds",
    "5",
    "--max-idle",
    "0",
];
/// qos's depths, short.
const QOS_DEPTHS: [&str; 2] = ["--depths", "1,4"];

fn require_tools() -> bool {
    std::env::var("FLASHLAB_REQUIRE_TOOLS").as_deref() == Ok("1")
}

fn have_fio() -> bool {
    let ok = Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            !require_tools(),
            "fio missing; FLASHLAB_REQUIRE_TOOLS=1 requires it"
        );
        eprintln!("SKIPPED: fio missing (apt-get install fio)");
    }
    ok
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("real_fio");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    let _ = std::fs::remove_file(&p);
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A sparse file of `size` bytes with `magic` written at `offset`.
fn crafted(name: &str, size: u64, offset: u64, magic: &[u8]) -> PathBuf {
    use std::os::unix::fs::FileExt;
    let p = scratch(name);
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(size).unwrap();
    f.write_all_at(magic, offset).unwrap();
    p
}

#[test]
fn qos_on_a_file_beside_a_simulated_drive() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !have_fio() {
        return;
    }
    let target = scratch("qos.dat");
    let html = scratch("qos.html");
    let outdir = scratch("qos-out");
    let mut args = vec![
        "suite",
        "qos",
        "--device",
        "tiny-test-1gb",
        "--target",
        s(&target),
        "--target-size",
        "128MiB",
        "--report",
        s(&html),
        "--outdir",
        s(&outdir),
        "--output-format",
        "json",
    ];
    args.extend_from_slice(&SHORT);
    args.extend_from_slice(&QOS_DEPTHS);
    let out = flashlab(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let devices = doc["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 2);
    assert_eq!(devices[0]["device"], "tiny-test-1gb");
    assert_eq!(devices[1]["device"], s(&target));
    let real = &devices[1];
    // fio's figures come through the same measures as the simulation's.
    for key in ["qd1_read_iops", "qd4_iops", "qd4_read_lat_p99_ns"] {
        let v = real["results"][key].as_f64().unwrap_or(0.0);
        assert!(v > 0.0, "{key} = {v} in {real}");
    }
    let note = real["scale"].as_str().unwrap();
    assert!(note.contains("real file through fio"), "{note}");
    assert!(note.contains("purge approximated"), "{note}");
    let steps: Vec<&str> = real["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(steps[..3], ["purge", "fill", "round-01"]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains(s(&target)) && page.contains("tiny-test-1gb"));
    // The file flashlab created is gone again.
    assert!(!target.exists());
    // The step's fio JSON is fio's own report.
    let found = walk(&outdir)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with("qos-qd4.json"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .find(|t| t.contains("\"filename\""))
        .expect("fio JSON of qos-qd4 under --outdir");
    assert!(found.contains("\"bins\""), "json+ kept");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn file_with_an_ext4_superblock_is_refused_naming_it() {
    let p = crafted("ext4.img", 1 << 20, 1080, &[0x53, 0xEF]);
    let out = flashlab(&["suite", "qos", "--target", s(&p)]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("ext4") && err.contains("--destroy-data"),
        "{err}"
    );
    // The file is untouched.
    assert_eq!(std::fs::metadata(&p).unwrap().len(), 1 << 20);
}

#[test]
fn targets_that_are_missing_empty_of_data_or_foreign_are_refused() {
    let missing = scratch("missing.dat");
    let out = flashlab(&["suite", "qos", "--target", s(&missing)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--target-size"), "{}", stderr(&out));

    // A non-empty file flashlab did not create needs --destroy-data.
    let p = crafted("user.dat", 1 << 20, 0, b"hello");
    let out = flashlab(&["suite", "qos", "--target", s(&p)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not empty"), "{}", stderr(&out));

    let out = flashlab(&["suite", "qos", "--target", s(&p), "--max-idle", "soon"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--max-idle"), "{}", stderr(&out));
}

#[test]
fn fio_missing_or_suite_needing_counters_is_an_error() {
    let p = scratch("nofio.dat");
    let out = flashlab(&[
        "suite",
        "qos",
        "--target",
        s(&p),
        "--target-size",
        "16MiB",
        "--fio",
        "/nonexistent/fio",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("/nonexistent/fio"),
        "{}",
        stderr(&out)
    );
    if !have_fio() {
        return;
    }
    // Suites that need a simulated drive are refused by name, never started.
    for suite in [
        "wsat",
        "sustained-write",
        "cache-passes",
        "write-pressure",
        "noisy-neighbor",
        "power",
    ] {
        let p = scratch(&format!("{suite}.dat"));
        let out = flashlab(&["suite", suite, "--target", s(&p), "--target-size", "16MiB"]);
        assert_eq!(out.status.code(), Some(2), "{suite}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("needs a simulated drive"),
            "{suite}: {}",
            stderr(&out)
        );
    }
}

/// A loop device over a file, detached when dropped.
struct Loop(String);

impl Loop {
    fn attach(file: &Path) -> Option<Loop> {
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(file)
            .output();
        match out {
            Ok(o) if o.status.success() => {
                Some(Loop(String::from_utf8_lossy(&o.stdout).trim().to_string()))
            }
            other => {
                let why = match other {
                    Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_string(),
                    Err(e) => e.to_string(),
                };
                eprintln!("SKIPPED: no loop device ({why})");
                None
            }
        }
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

#[test]
fn loop_device_with_a_partition_table_is_refused_then_runs_when_clean() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !have_fio() {
        return;
    }
    let backing = crafted("loop.img", 64 << 20, 510, &[0x55, 0xAA]);
    let Some(dev) = Loop::attach(&backing) else {
        return;
    };
    let out = flashlab(&["suite", "qos", "--target", &dev.0]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("MBR partition table"),
        "{}",
        stderr(&out)
    );
    // --target-size is for files only.
    let out = flashlab(&["suite", "qos", "--target", &dev.0, "--target-size", "1MiB"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));

    // With --destroy-data it runs; the device's size comes from the device.
    let mut args = vec![
        "suite",
        "four-corners",
        "--target",
        &dev.0,
        "--destroy-data",
        "--output-format",
        "json",
    ];
    args.extend_from_slice(&SHORT);
    let out = flashlab(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let real = &doc["devices"][0];
    assert_eq!(real["device"], dev.0.as_str());
    let note = real["scale"].as_str().unwrap();
    assert!(
        note.contains("block device") && note.contains("67108864 bytes"),
        "{note}"
    );
    assert!(
        real["results"]["seq_read_128k_bw_bytes_per_s"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}
