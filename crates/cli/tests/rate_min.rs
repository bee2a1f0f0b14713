//! fio's minimum rates through the binary: a drive that cannot hold `rate_iops_min` stops
//! the job with fio's EIO (exit 1, the results still written).

mod common;
use common::{run_job, stderr};

#[test]
fn a_minimum_the_drive_cannot_hold_stops_the_job() {
    let text = "[global]\nioengine=libaio\n[fill]\nrw=write\nbs=128k\niodepth=32\nsize=100%\n\
                [floor]\nstonewall\nrw=randwrite\nbs=4k\niodepth=32\ntime_based\nruntime=30\n\
                rate_iops_min=1000000\n";
    let out = run_job("rate-min.fio", text, "tiny-test-1gb", "json");
    assert_eq!(out.status.code(), Some(1), "stderr: {}", stderr(&out));
    assert!(
        stderr(&out).contains("rate_iops_min=1000000 not met"),
        "{}",
        stderr(&out)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let job = &v["jobs"][1];
    assert_eq!(job["error"], 5);
    // Two seconds of settling, then the first one-second cycle falls short (judged at the
    // first completion past it; the I/Os in flight then complete).
    let runtime_ms = job["write"]["runtime"].as_u64().unwrap();
    assert!((3_000..3_100).contains(&runtime_ms), "{runtime_ms}");
    assert_eq!(v["flashlab"]["io_errors"][0]["errno"], 5);
}
