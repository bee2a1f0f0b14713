//! `flashlab fit` end to end through the real fio: a drive whose description the fit never
//! reads is served over NBD (`flashlab serve`), the plan runs on it with `fit run --target
//! nbd+unix:///?socket=...` (fio's nbd engine), the fit reads fio's outputs, and the fitted
//! drive is compared with the served one on a job the plan does not hold. It skips with a
//! notice without fio, unless FLASHLAB_REQUIRE_TOOLS=1, where a missing fio fails it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

fn flashlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("flashlab runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
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
        eprintln!("SKIPPED: fio missing (apt-get install fio)");
    }
    ok
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fit-nbd");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    let _ = std::fs::remove_dir_all(&p);
    let _ = std::fs::remove_file(&p);
    p
}

/// The hidden drive: the tiny preset cut to 256 MiB, with 1.5 MiB blocks, ~12% spare and a
/// slower program than the class default.
const HIDDEN: [&str; 10] = [
    "--device",
    "tiny-test-1gb",
    "--set",
    "capacity.user=256MiB",
    "--set",
    "nand.pages_per_block=96",
    "--set",
    "nand.blocks_per_plane=50",
    "--set",
    "nand.t_prog=800us",
];

/// A `flashlab serve` of the hidden drive on a Unix socket, stopped when dropped.
struct Served {
    child: Child,
    uri: String,
}

impl Served {
    fn start(name: &str) -> Served {
        let socket = scratch(&format!("{name}.sock"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
            .args(["serve", "--socket", socket.to_str().unwrap()])
            .args(HIDDEN)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("flashlab serve starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("read the URI");
        assert!(line.starts_with("nbd+unix://"), "serve printed '{line}'");
        Served {
            child,
            uri: line.trim().to_string(),
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The held-out job: the whole drive written, then 4 KiB random 70/30 reads and writes at
/// QD8 (the plan's mixed job is 50/50 at QD16).
fn held_out(engine: &str) -> String {
    format!(
        "[global]\n{engine}\nsize=256MiB\n\n[fill]\nrw=write\nbs=128k\niodepth=32\n\n\
         [mix]\nstonewall\nrw=randrw\nrwmixread=70\nbs=4k\niodepth=8\nnumber_ios=10000\n"
    )
}

/// The mix's IOPS (reads and writes) in a fio JSON document, printed after any lines the
/// nbd engine prints first.
fn mix_iops(json: &str) -> f64 {
    let v: serde_json::Value = serde_json::from_str(&json[json.find('{').unwrap()..]).unwrap();
    let job = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == "mix")
        .unwrap();
    job["read"]["iops"].as_f64().unwrap() + job["write"]["iops"].as_f64().unwrap()
}

fn write_job(name: &str, text: &str) -> PathBuf {
    let path = scratch(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
#[ignore = "about three minutes of real time: the plan's idle delays and steady writes run at the served drive's pace"]
fn a_drive_served_over_nbd_is_fitted_through_fio_and_predicts_a_held_out_job() {
    if !have_fio() {
        return;
    }
    let dir = scratch("plan");
    let preset = scratch("fitted.toml");
    {
        let served = Served::start("plan");
        let out = flashlab(&[
            "fit",
            "run",
            "--target",
            &served.uri,
            "--target-size",
            "256MiB",
            "--destroy-data",
            "--outdir",
            dir.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", text(&out));
    }
    let out = flashlab(&[
        "fit",
        dir.to_str().unwrap(),
        "--output",
        preset.to_str().unwrap(),
    ]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    eprintln!("{said}");

    // The held-out job on a fresh serve of the hidden drive through fio, and on the fitted
    // drive through `flashlab run`.
    let served = Served::start("held-out");
    let job = write_job(
        "held-out-nbd.fio",
        &held_out(&format!("ioengine=nbd\nuri={}", served.uri)),
    );
    let o = Command::new("fio")
        .args(["--output-format=json", job.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    drop(served);
    let measured = mix_iops(&String::from_utf8_lossy(&o.stdout));
    let job = write_job("held-out-sim.fio", &held_out("ioengine=libaio\ndirect=1"));
    let o = flashlab(&[
        "run",
        job.to_str().unwrap(),
        "--device",
        preset.to_str().unwrap(),
        "--output-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let predicted = mix_iops(&String::from_utf8_lossy(&o.stdout));
    let error = predicted / measured - 1.0;
    eprintln!(
        "held-out 70/30 QD8 mix: served drive through fio {measured:.0} IOPS, fitted drive {predicted:.0} IOPS, error {:+.1}%",
        error * 100.0
    );
    assert!(error.abs() <= 0.15, "held-out error {:+.1}%", error * 100.0);
}

#[test]
fn an_nbd_target_needs_destroy_data_and_its_size() {
    let dir = scratch("refused");
    let uri = "nbd+unix:///?socket=/nonexistent.sock";
    let o = flashlab(&[
        "fit",
        "run",
        "--target",
        uri,
        "--outdir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--destroy-data"), "{}", text(&o));
    let o = flashlab(&[
        "fit",
        "run",
        "--target",
        uri,
        "--destroy-data",
        "--outdir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--target-size"), "{}", text(&o));
    assert!(!Path::new(&dir).join("manifest.json").exists());
}
