//! Drive state through suites: `suite A --save-state S` then `suite B --load-state S` runs B
//! on the drive A left (its writes, wear and clock), exactly as B runs right after A on one
//! drive; states and devices a suite cannot take are refused with exit 2.

use std::path::{Path, PathBuf};
use std::process::Command;

use flashlab_device::Ssd;
use flashlab_engine::SeedTree;

const DEVICE: &str = "tiny-test-1gb";
const SEED: u64 = 3;

fn flashlab() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_flashlab"));
    // Suites keep preconditioned drives in the state cache: the tests' own, not the user's.
    command.env(
        "XDG_CACHE_HOME",
        concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache"),
    );
    command
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flashlab-suite-state-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn options() -> flashlab_suite::SuiteOptions {
    flashlab_suite::SuiteOptions {
        seed: SEED,
        runtime_ns: Some(200_000_000),
        ..Default::default()
    }
}

/// `--runtime 200ms`, for the suites that read it (the others run to their own length and
/// refuse it).
fn runtime_args(suite: &str) -> Vec<&'static str> {
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
        vec!["--runtime", "200ms"]
    }
}

/// `flashlab suite NAME` on the tiny drive with a short runtime and `extra`: exit code,
/// standard output and standard error.
fn suite(name: &str, extra: &[&str]) -> (Option<i32>, String, String) {
    let out = flashlab()
        .args(["suite", name, "--device", DEVICE])
        .args(runtime_args(name))
        .args(["--seed", &SEED.to_string()])
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The media bytes the drive had written by the end of a four-corners' fill step, from its
/// `--outdir` JSON.
fn media_written_after_fill(outdir: &Path) -> u64 {
    let text = std::fs::read_to_string(outdir.join("1-tiny-test-1gb/02-fill.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["flashlab"]["device_counters"]["health"]["media_bytes_written"]
        .as_u64()
        .unwrap_or_else(|| panic!("no media_bytes_written in {text}"))
}

/// The library: precondition then four-corners on one drive gives the same report, and the
/// same drive afterwards, as precondition, save, load, four-corners.
#[test]
fn a_loaded_suite_continues_as_on_one_drive() {
    let config = flashlab_device::load_device_config(DEVICE, &[]).unwrap();
    let opts = options();
    let pre = flashlab_suite::suite("precondition").unwrap();
    let corners = flashlab_suite::suite("four-corners").unwrap();
    let new = || Ssd::new(&config, SeedTree::new(SEED).child("device")).unwrap();
    let run = |kind, ssd: &mut Ssd, at_ns| {
        let on = flashlab_suite::On::Device {
            dev: ssd,
            name: DEVICE,
            run: flashlab_suite::DeviceRun::starting_at(at_ns),
        };
        let ran = flashlab_suite::run(kind, on, &opts, &|_, _| {}).unwrap();
        ran.into_device().unwrap()
    };
    let json = |device| {
        flashlab_suite::render_json(&flashlab_suite::SuiteReport {
            suite: corners,
            options: opts.clone(),
            devices: vec![device],
        })
    };

    let mut straight = new();
    let (_, after_pre) = run(pre, &mut straight, 0);
    assert!(after_pre > 0);
    let (b_straight, end_straight) = run(corners, &mut straight, after_pre);

    let mut first = new();
    let (_, saved_at) = run(pre, &mut first, 0);
    let mut bytes = Vec::new();
    first.save_state(&mut bytes, saved_at).unwrap();
    let (mut loaded, clock_ns) = Ssd::load_state(&config, &bytes[..], bytes.len() as u64).unwrap();
    assert_eq!(clock_ns, after_pre);
    let (b_loaded, end_loaded) = run(corners, &mut loaded, clock_ns);

    assert_eq!(json(b_straight), json(b_loaded));
    assert_eq!(end_straight, end_loaded);
    let (mut s1, mut s2) = (Vec::new(), Vec::new());
    straight.save_state(&mut s1, end_straight).unwrap();
    loaded.save_state(&mut s2, end_loaded).unwrap();
    assert!(s1 == s2, "the drive's state differs after four-corners");
}

/// The command line: four-corners on precondition's saved drive starts at its clock and
/// carries its media writes; the saved clock is the last step's end.
#[test]
fn suite_saves_and_loads_a_drive() {
    let state = tmp("pre.state");
    let (code, pre_out, err) = suite(
        "precondition",
        &["--output-format", "json", "--save-state", path(&state)],
    );
    assert_eq!(code, Some(0), "{err}");
    let pre: serde_json::Value = serde_json::from_str(&pre_out).unwrap();
    let pre_end_ns = pre["devices"][0]["steps"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["end_ns"]
        .as_u64()
        .unwrap();
    // Without the flag, precondition prints the same report.
    let (_, plain_out, _) = suite("precondition", &["--output-format", "json"]);
    assert_eq!(pre_out, plain_out);

    let (fresh_dir, loaded_dir) = (tmp("fresh"), tmp("loaded"));
    let (code, fresh, err) = suite("four-corners", &["--outdir", path(&fresh_dir)]);
    assert_eq!(code, Some(0), "{err}");
    let (code, loaded, err) = suite(
        "four-corners",
        &["--load-state", path(&state), "--outdir", path(&loaded_dir)],
    );
    assert_eq!(code, Some(0), "{err}");
    // four-corners purges first, so its figures may match a fresh drive's; the drive's
    // media writes and clock show where it started.
    assert!(fresh.contains("rand_write_4k_iops") && loaded.contains("rand_write_4k_iops"));

    let fresh_media = media_written_after_fill(&fresh_dir);
    let loaded_media = media_written_after_fill(&loaded_dir);
    let pre_media: u64 = {
        let mut bytes = Vec::new();
        // The preconditioned drive's own count, read back from the state.
        let config = flashlab_device::load_device_config(DEVICE, &[]).unwrap();
        let file = std::fs::read(&state).unwrap();
        let (ssd, clock_ns) = Ssd::load_state(&config, &file[..], file.len() as u64).unwrap();
        assert_eq!(
            clock_ns, pre_end_ns,
            "the state's clock is the last step's end"
        );
        ssd.save_state(&mut bytes, clock_ns).unwrap();
        assert!(bytes == file, "a loaded state saves the same bytes");
        ssd.health_log().media_bytes_written
    };
    assert!(pre_media > 0);
    assert_eq!(loaded_media, fresh_media + pre_media);

    let (_, loaded_json, _) = suite(
        "four-corners",
        &["--load-state", path(&state), "--output-format", "json"],
    );
    let json: serde_json::Value = serde_json::from_str(&loaded_json).unwrap();
    let first_end_ns = json["devices"][0]["steps"][0]["end_ns"].as_u64().unwrap();
    assert!(first_end_ns >= pre_end_ns, "{first_end_ns} < {pre_end_ns}");
}

/// A state of another configuration, and devices with no one drive to load or save.
#[test]
fn suite_refuses_what_it_cannot_load_or_save() {
    let state = tmp("refuse.state");
    let (code, _, err) = suite("precondition", &["--save-state", path(&state)]);
    assert_eq!(code, Some(0), "{err}");

    let (code, _, err) = suite(
        "four-corners",
        &["--set", "buffer.size=4MiB", "--load-state", path(&state)],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(path(&state)), "{err}");
    assert!(err.contains("another device configuration"), "{err}");

    let refused = |args: &[&str], why: &str| {
        let out = flashlab()
            .args(args)
            .args(runtime_args(args[1]))
            .args(["--save-state", path(&tmp("no.state"))])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{why}: {err}");
        assert!(err.contains("--save-state"), "{why}: {err}");
        assert!(!tmp("no.state").exists(), "{why}: a state was written");
    };
    refused(
        &[
            "suite",
            "four-corners",
            "--device",
            DEVICE,
            "--device",
            DEVICE,
        ],
        "several devices",
    );
    refused(
        &["suite", "four-corners", "--device", DEVICE, "--drives", "2"],
        "several drives",
    );
    refused(&["suite", "op-sweep", "--device", DEVICE], "own drives");
}

/// A system (RAID 0 of two tiny drives) saves and loads through a suite; a drive's state
/// does not load into it.
#[test]
fn suite_saves_and_loads_a_system() {
    let system = tmp("raid0.toml");
    std::fs::write(
        &system,
        "name = \"tiny-raid0\"\n\
         [drive.a]\npreset = \"tiny-test-1gb\"\n[drive.b]\npreset = \"tiny-test-1gb\"\n\
         [raid.array]\nlevel = 0\nchunk = \"64KiB\"\nmembers = [\"a\", \"b\"]\n",
    )
    .unwrap();
    let run = |name: &str, extra: &[&str]| {
        let out = flashlab()
            .args([
                "suite",
                name,
                "--device",
                path(&system),
                "--runtime",
                "200ms",
            ])
            .args(["--output-format", "json"])
            .args(extra)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let state = tmp("raid0.state");
    let (code, pre, err) = run("precondition", &["--save-state", path(&state)]);
    assert_eq!(code, Some(0), "{err}");
    let pre: serde_json::Value = serde_json::from_str(&pre).unwrap();
    let steps = pre["devices"][0]["steps"].as_array().unwrap();
    let pre_end_ns = steps.last().unwrap()["end_ns"].as_u64().unwrap();

    let (code, loaded, err) = run("four-corners", &["--load-state", path(&state)]);
    assert_eq!(code, Some(0), "{err}");
    let loaded: serde_json::Value = serde_json::from_str(&loaded).unwrap();
    let first_end_ns = loaded["devices"][0]["steps"][0]["end_ns"].as_u64().unwrap();
    assert!(first_end_ns >= pre_end_ns, "{first_end_ns} < {pre_end_ns}");

    let drive_state = tmp("drive-for-system.state");
    let (code, _, err) = suite("precondition", &["--save-state", path(&drive_state)]);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = run("four-corners", &["--load-state", path(&drive_state)]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not a system"), "{err}");
}
