//! Drive state: "run A then B" on one device and "run A, save, load, run B" give the same
//! bytes, for every kind of device; damaged, foreign and old-version states are refused with
//! exit 2 saying what is wrong.

use std::process::Command;

use flashlab_device::Ssd;
use flashlab_engine::{BlockDevice, Continued, SeedTree, SimTime};
use flashlab_system::System;

const SEED: u64 = 7;

/// Fills part of the device, then rewrites some of it at random (GC and the SLC cache at
/// work, the write buffer left holding data).
const JOB_A: &str = "[global]\nioengine=libaio\ndirect=1\nbs=4k\n\
[fill]\nrw=write\nsize=48m\niodepth=8\n\
[rewrite]\nstonewall\nrw=randwrite\nsize=48m\nio_size=24m\niodepth=16\n";
/// Mixed reads and writes over what A wrote, after an idle gap (background work).
const JOB_B: &str = "[global]\nioengine=libaio\ndirect=1\nbs=4k\n\
[idle]\nrw=read\nsize=4k\nio_size=4k\nthinktime=50ms\nthinktime_blocks=1\n\
[mixed]\nstonewall\nrw=randrw\nrwmixread=70\nsize=48m\nio_size=16m\niodepth=32\n";

fn job(text: &str, name: &str) -> flashlab_workload::JobFile {
    flashlab_workload::parse_str(text, name, &|_| None).expect("job parses")
}

/// Runs `text` on `device` from device time `at_ns`: the fio JSON and where the run ended.
fn run(device: &mut dyn BlockDevice, text: &str, at_ns: SimTime) -> (String, SimTime) {
    let options = flashlab_runner::RunOptions::new(SEED, "dev");
    let mut dev = Continued::new(device, at_ns);
    let result = flashlab_runner::run_jobs(&job(text, "job.fio"), &mut dev, &options, &mut |_| {})
        .expect("run completes");
    (
        flashlab_report::render_json(&result, false),
        dev.horizon_ns(),
    )
}

trait Saved: BlockDevice + Sized {
    fn save(&self, clock_ns: SimTime) -> Vec<u8>;
    fn counters(&self) -> String;
}

impl Saved for Ssd {
    fn save(&self, clock_ns: SimTime) -> Vec<u8> {
        let mut out = Vec::new();
        self.save_state(&mut out, clock_ns).expect("saves");
        out
    }
    fn counters(&self) -> String {
        self.counters_json().to_string()
    }
}

impl Saved for System {
    fn save(&self, clock_ns: SimTime) -> Vec<u8> {
        let mut out = Vec::new();
        self.save_state(&mut out, clock_ns).expect("saves");
        out
    }
    fn counters(&self) -> String {
        self.counters_json().to_string()
    }
}

/// A then B on one device, against A, save, load, B: same results, same counters, and the
/// same state afterwards, byte for byte.
fn continues_identically<D: Saved>(build: impl Fn() -> D, load: impl Fn(&[u8]) -> (D, SimTime)) {
    let mut straight = build();
    let (_, after_a) = run(&mut straight, JOB_A, 0);
    let (b_straight, end_straight) = run(&mut straight, JOB_B, after_a);

    let mut first = build();
    let (_, saved_at) = run(&mut first, JOB_A, 0);
    assert_eq!(saved_at, after_a);
    let bytes = first.save(saved_at);
    drop(first);
    let (mut loaded, clock_ns) = load(&bytes);
    assert_eq!(
        clock_ns, after_a,
        "the state carries the time the next run starts"
    );
    let (b_loaded, end_loaded) = run(&mut loaded, JOB_B, clock_ns);

    assert_eq!(b_straight, b_loaded, "run B's results differ after a load");
    assert_eq!(end_straight, end_loaded);
    assert_eq!(straight.counters(), loaded.counters());
    assert!(
        straight.save(end_straight) == loaded.save(end_loaded),
        "the device's whole state differs after run B"
    );
}

fn drive_check(preset: &str, sets: &[(&str, &str)]) {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let config = flashlab_device::load_device_config(preset, &sets).expect("preset loads");
    continues_identically(
        || Ssd::new(&config, SeedTree::new(SEED).child("device")).expect("builds"),
        |bytes| Ssd::load_state(&config, bytes, bytes.len() as u64).expect("loads"),
    );
}

fn system_check(name: &str, text: &str) {
    let config = flashlab_system::parse_system_config(name, text).expect("system parses");
    continues_identically(
        || System::build(&config, SeedTree::new(SEED).child("device")).expect("builds"),
        |bytes| System::load_state(&config, bytes, bytes.len() as u64).expect("loads"),
    );
}

#[test]
fn nand_drive_with_an_slc_cache_continues_identically() {
    drive_check("tiny-test-1gb", &[]);
}

#[test]
fn nand_drive_without_slc_with_a_paged_map_and_reordering_continues_identically() {
    drive_check(
        "tiny-test-1gb",
        &[
            ("slc_cache.dynamic", "false"),
            ("controller.map_cache", "64KiB"),
            ("scheduler.read_priority", "true"),
        ],
    );
}

#[test]
fn hard_disk_continues_identically() {
    system_check(
        "hdd.toml",
        "name = \"hdd\"\ndescription = \"d\"\n[drive.hdd]\npreset = \"toshiba-dt01aca200-2tb\"\n",
    );
}

#[test]
fn xpoint_cache_tier_over_a_disk_continues_identically() {
    let text = flashlab_system::load_system_config("optane-16gb-hdd-2tb").map(|_| ());
    assert!(text.is_ok());
    system_check(
        "tier.toml",
        "name = \"tier\"\ndescription = \"d\"\n\
         [drive.optane]\npreset = \"intel-optane-memory-16gb\"\n\
         [drive.hdd]\npreset = \"toshiba-dt01aca200-2tb\"\n\
         [cache.tier]\ncache = \"optane\"\nbacking = \"hdd\"\nmode = \"write-back\"\n\
         line = \"64KiB\"\nadmit_read_miss = true\nadmit_write = true\nadmit_after = 1\n\
         eviction = \"frequency\"\n",
    );
}

#[test]
fn raid5_of_drives_behind_a_shared_link_continues_identically() {
    system_check(
        "raid.toml",
        "name = \"raid\"\ndescription = \"d\"\n\
         [drive.a]\npreset = \"tiny-test-1gb\"\n[drive.b]\npreset = \"tiny-test-1gb\"\n\
         [drive.c]\npreset = \"tiny-test-1gb\"\n\
         [link.up]\nkind = \"pcie-gen4-x4\"\nlatency = \"500ns\"\ndevices = [\"b\", \"c\"]\n\
         [raid.array]\nlevel = 5\nchunk = \"64KiB\"\nmembers = [\"a\", \"b\", \"c\"]\n",
    );
}

fn flashlab() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_flashlab"));
    // Suites keep preconditioned drives in the state cache: the tests' own, not the user's.
    command.env(
        "XDG_CACHE_HOME",
        concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache"),
    );
    command
}

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("flashlab-state-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The command line: `run --save-state` then `fio --load-state` gives what the library's
/// continued run gives; bad states exit 2 naming the file and the fault.
#[test]
fn command_line_saves_loads_and_refuses_bad_states() {
    let job_a = tmp("a.fio");
    std::fs::write(&job_a, JOB_A).unwrap();
    let state = tmp("a.state");
    let out = flashlab()
        .args([
            "run",
            "--device",
            "tiny-test-1gb",
            "--seed",
            "7",
            "--output-format",
            "json",
        ])
        .arg("--save-state")
        .arg(&state)
        .arg(&job_a)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&state).unwrap();
    assert_eq!(&bytes[..8], flashlab_engine::state::MAGIC.as_slice());

    let refused = |path: &std::path::Path, sets: &[&str], why: &str| {
        let mut cmd = flashlab();
        cmd.args(["fio", "--device", "tiny-test-1gb"]);
        for s in sets {
            cmd.args(["--set", s]);
        }
        let out = cmd
            .arg(format!("--load-state={}", path.display()))
            .args(["--name=r", "--rw=randread", "--size=4m", "--bs=4k"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{why}: {err}");
        assert!(err.contains(&path.display().to_string()), "{why}: {err}");
        err.into_owned()
    };

    // Another configuration.
    let err = refused(&state, &["buffer.size=4MiB"], "foreign");
    assert!(err.contains("another device configuration"), "{err}");
    // Another format version.
    let old = tmp("old.state");
    let mut b = bytes.clone();
    b[8..12].copy_from_slice(&0u32.to_le_bytes());
    std::fs::write(&old, &b).unwrap();
    let err = refused(&old, &[], "old version");
    assert!(err.contains("format version 0"), "{err}");
    // A flipped bit in the maps.
    let corrupt = tmp("corrupt.state");
    let mut b = bytes.clone();
    let mid = b.len() / 2;
    b[mid] ^= 0x01;
    std::fs::write(&corrupt, &b).unwrap();
    let err = refused(&corrupt, &[], "corrupt");
    assert!(err.contains("corrupt"), "{err}");
    // Cut short.
    let cut = tmp("cut.state");
    std::fs::write(&cut, &bytes[..bytes.len() / 3]).unwrap();
    let err = refused(&cut, &[], "truncated");
    assert!(err.contains("truncated"), "{err}");
    // Not a state at all, and a system's state for a drive.
    let err = refused(&job_a, &[], "not a state");
    assert!(err.contains("not a flashlab state file"), "{err}");

    // The loaded run equals the library's continued run.
    let out = flashlab()
        .args([
            "run",
            "--device",
            "tiny-test-1gb",
            "--seed",
            "7",
            "--output-format",
            "json",
        ])
        .arg("--load-state")
        .arg(&state)
        .arg(&job_a)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let config = flashlab_device::load_device_config("tiny-test-1gb", &[]).unwrap();
    let mut ssd = Ssd::new(&config, SeedTree::new(SEED).child("device")).unwrap();
    let options = flashlab_runner::RunOptions::new(SEED, config.name.clone());
    let mut at = 0;
    let mut last = None;
    for _ in 0..2 {
        let mut dev = Continued::new(&mut ssd, at);
        let r = flashlab_runner::run_jobs(&job(JOB_A, "a.fio"), &mut dev, &options, &mut |_| {})
            .unwrap();
        at = dev.horizon_ns();
        last = Some(r);
    }
    let mut expected = last.unwrap();
    if let serde_json::Value::Object(extra) = &mut expected.flashlab {
        extra.insert("device_counters".into(), ssd.counters_json());
    }
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let want: serde_json::Value =
        serde_json::from_str(&flashlab_report::render_json(&expected, false)).unwrap();
    assert_eq!(got["jobs"], want["jobs"]);
    assert_eq!(
        got["flashlab"]["device_counters"],
        want["flashlab"]["device_counters"]
    );
}

/// Save and load throughput of a whole 1 TB drive's state (docs/benchmarks-suites.md, "Drive state"):
/// `cargo test -p flashlab --release --test integration -- --ignored --nocapture
/// state::throughput`.
#[test]
#[ignore = "a benchmark: builds a whole 1 TB drive (about 2 GB of maps)"]
fn throughput_of_a_1tb_drive_state() {
    let sets = [("sim.scale".to_string(), "1".to_string())];
    let config = flashlab_device::load_device_config("wd-sn850-1tb", &sets).unwrap();
    let mut ssd = Ssd::new(&config, SeedTree::new(SEED).child("device")).unwrap();
    let (_, at) = run(
        &mut ssd,
        "[w]\nrw=randwrite\nbs=4k\nsize=64m\niodepth=8\n",
        0,
    );
    let path = tmp("1tb.state");
    let start = std::time::Instant::now();
    ssd.save_state(std::io::sink(), at).unwrap();
    let encode_s = start.elapsed().as_secs_f64();
    let start = std::time::Instant::now();
    let file = std::fs::File::create(&path).unwrap();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    let bytes = ssd.save_state(&mut out, at).unwrap();
    let file = out.into_inner().unwrap();
    let save_s = start.elapsed().as_secs_f64();
    file.sync_all().unwrap();
    let sync_s = start.elapsed().as_secs_f64() - save_s;
    drop(ssd);
    let start = std::time::Instant::now();
    let file = std::fs::File::open(&path).unwrap();
    let len = file.metadata().unwrap().len();
    let (_, clock) = Ssd::load_state(
        &config,
        std::io::BufReader::with_capacity(1 << 20, file),
        len,
    )
    .unwrap();
    let load_s = start.elapsed().as_secs_f64();
    assert_eq!(clock, at);
    let gb = bytes as f64 / 1e9;
    println!(
        "state of wd-sn850-1tb at sim.scale=1: {gb:.2} GB; encoding alone {encode_s:.2} s; save {save_s:.2} s = {:.2} GB/s (then fsync {sync_s:.2} s); load (building the drive included) {load_s:.2} s = {:.2} GB/s",
        gb / save_s,
        gb / load_s
    );
    std::fs::remove_file(&path).unwrap();
}

/// `serve --load-state` serves the saved drive (its counters carry the run that made it) and
/// `serve --save-state` saves it on exit, a state `run --load-state` takes.
#[test]
fn serve_loads_a_state_and_saves_one_on_exit() {
    use std::io::BufRead;
    let job_a = tmp("serve-a.fio");
    std::fs::write(&job_a, JOB_A).unwrap();
    let state = tmp("serve-a.state");
    let out = flashlab()
        .args([
            "run",
            "--device",
            "tiny-test-1gb",
            "--output-format",
            "json",
        ])
        .arg("--save-state")
        .arg(&state)
        .arg(&job_a)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let written = &run["flashlab"]["device_counters"]["namespaces"][0]["bytes_written"];
    assert!(written.as_u64().is_some_and(|b| b > 0), "{written}");

    let saved = tmp("serve-b.state");
    let stats = tmp("serve-stats.json");
    let mut child = flashlab()
        .args(["serve", "--device", "tiny-test-1gb", "--socket"])
        .arg(tmp("serve.sock"))
        .arg("--stats")
        .arg(&stats)
        .arg("--load-state")
        .arg(&state)
        .arg("--save-state")
        .arg(&saved)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("nbd+unix://"), "serve printed '{line}'");
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let served: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(
        &served["device_counters"]["namespaces"][0]["bytes_written"],
        written
    );

    let out = flashlab()
        .args(["fio", "--device", "tiny-test-1gb", "--output-format=json"])
        .arg(format!("--load-state={}", saved.display()))
        .args(["--name=r", "--rw=randread", "--size=4m", "--bs=4k"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
