//! fio's latency-target mode through the binary: the search's depth in fio's JSON fields,
//! and a target no depth meets stopping the job with fio's ETIMEDOUT (exit 1).

mod common;
use common::{run_job, stderr};

fn job(target: &str) -> String {
    format!(
        "[global]\nioengine=libaio\n[fill]\nrw=write\nbs=1m\niodepth=8\nsize=100%\n\
         [qos]\nstonewall\nrw=randread\nbs=4k\niodepth=128\ntime_based\nruntime=60\n\
         latency_target={target}\nlatency_window=500ms\nlatency_percentile=99\n"
    )
}

#[test]
fn the_search_reports_the_depth_it_found_and_its_final_window() {
    let out = run_job("lt-search.fio", &job("200us"), "tiny-test-1gb", "json");
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let j = &v["jobs"][1];
    assert_eq!(j["latency_target"], 200_000);
    assert_eq!(j["latency_window"], 500_000);
    assert_eq!(j["latency_percentile"], 99.0);
    let depth = j["latency_depth"].as_u64().unwrap();
    assert!((1..=128).contains(&depth), "{depth}");
    // The reported run is the final window at that depth, not the search before it.
    let runtime_ms = j["read"]["runtime"].as_u64().unwrap();
    assert!((500..=600).contains(&runtime_ms), "{runtime_ms}");
    let p99 = j["read"]["clat_ns"]["percentile"]["99.000000"]
        .as_u64()
        .unwrap();
    assert!(p99 <= 210_000, "p99 {p99} against a 200 us target");
}

#[test]
fn a_target_no_depth_meets_is_an_io_error() {
    let text = job("1us").replace("latency_percentile=99\n", "");
    let out = run_job("lt-fatal.fio", &text, "tiny-test-1gb", "json");
    assert_eq!(out.status.code(), Some(1), "stderr: {}", stderr(&out));
    assert!(
        stderr(&out).contains("over the latency target of 1000 ns"),
        "{}",
        stderr(&out)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["jobs"][1]["error"], 110);
}
