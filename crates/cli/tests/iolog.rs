//! fio's `write_iolog` through the binary: a run records the I/Os it issued as a fio
//! version 3 iolog, which `flashlab replay --format fio-iolog` plays back I/O for I/O.

mod common;
use common::{flashlab, job_file, run_job, stderr};
use std::path::PathBuf;

fn counts(json: &[u8]) -> (u64, u64, u64) {
    let v: serde_json::Value = serde_json::from_slice(json).expect("JSON output");
    let j = &v["jobs"][0];
    let n = |d: &str| j[d]["total_ios"].as_u64().unwrap_or(0);
    (n("read"), n("write"), n("sync"))
}

#[test]
fn a_recorded_run_replays_the_same_ios() {
    let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("iolog-out/rw.iolog");
    let _ = std::fs::remove_file(&log);
    // As fio, flashlab writes logs into directories that exist.
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    let text = "[rw]\nioengine=libaio\nrw=randrw\nrwmixread=70\nbs=4k\niodepth=4\nnumber_ios=2000\nfsync=100\n\
         write_iolog=iolog-out/rw.iolog\n";
    let out = run_job("iolog.fio", text, "tiny-test-1gb", "json");
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let ran = counts(&out.stdout);
    let text = std::fs::read_to_string(&log).expect("the iolog was written");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..3],
        ["fio version 3 iolog", "0 rw.0.0 add", "0 rw.0.0 open"]
    );
    assert!(lines.last().unwrap().ends_with(" rw.0.0 close"));
    // Header, add, open, close and one line per I/O (syncs included).
    assert_eq!(lines.len() as u64, 4 + ran.0 + ran.1 + ran.2);
    assert_eq!(ran.0 + ran.1, 2000);
    // Time stamps (µs since the job started) never go back.
    let times: Vec<u64> = lines[1..]
        .iter()
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    let out = flashlab(&[
        "replay",
        log.to_str().unwrap(),
        "--format",
        "fio-iolog",
        "--device",
        "tiny-test-1gb",
        "--output-format",
        "json",
    ]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(counts(&out.stdout), ran);
}

#[test]
fn an_iolog_shared_by_clones_or_on_a_slice_is_refused() {
    for (name, text, set, needle) in [
        (
            "iolog-clones.fio",
            "numjobs=2\n",
            "sim.scale=1",
            "numjobs=1",
        ),
        ("iolog-slice.fio", "", "sim.scale=0.5", "full scale"),
    ] {
        let job = job_file(
            name,
            &format!("[j]\nrw=randread\nnumber_ios=10\nwrite_iolog=x.iolog\n{text}"),
        );
        let out = flashlab(&["run", &job, "--device", "generic-tlc-256gb", "--set", set]);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{name}: {}", stderr(&out));
    }
}
