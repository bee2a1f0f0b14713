//! fio's verify phase through the binary: a write job with `verify=` reads back what it wrote,
//! and the JSON's read block holds those reads, as fio's does.

mod common;
use common::{run_job, stderr};

#[test]
fn a_verifying_write_job_reports_its_read_back_as_reads() {
    let text =
        "[global]\nioengine=libaio\n[w]\nrw=randwrite\nbs=4k\nsize=4m\niodepth=8\nverify=crc32c\n\
                [plain]\nstonewall\nrw=randwrite\nbs=4k\nsize=4m\niodepth=8\n";
    let out = run_job("verify.fio", text, "tiny-test-1gb", "json");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let job = &v["jobs"][0];
    assert_eq!(job["error"], 0);
    assert_eq!(job["write"]["total_ios"], 1024);
    assert_eq!(job["read"]["total_ios"], 1024);
    assert_eq!(job["read"]["io_bytes"], 4 << 20);
    assert!(job["read"]["runtime"].as_u64().unwrap() > 0);
    assert!(job["read"]["lat_ns"]["mean"].as_f64().unwrap() > 0.0);
    // The same writes without verify read nothing.
    assert_eq!(v["jobs"][1]["read"]["total_ios"], 0);
}

#[test]
fn a_verify_workload_flashlab_cannot_reproduce_is_refused() {
    let text =
        "[w]\nioengine=libaio\nrw=write\nsize=4m\nverify=md5\nverify_backlog=64\niodepth=4\n";
    let out = run_job("verify-backlog.fio", text, "tiny-test-1gb", "json");
    assert_eq!(out.status.code(), Some(2), "stderr: {}", stderr(&out));
    assert!(stderr(&out).contains("verify_backlog"), "{}", stderr(&out));
}

#[test]
fn verify_backlog_reads_while_writing_and_time_based_warns() {
    let text = "[w]\nrw=randwrite\nbs=4k\nsize=4m\nverify=crc32c\nverify_backlog=16\n\
                verify_backlog_batch=8\n";
    let out = run_job("verify-backlog.fio", text, "tiny-test-1gb", "json");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let job = &v["jobs"][0];
    assert_eq!(job["write"]["total_ios"], 1024);
    assert_eq!(job["read"]["total_ios"], 1024);

    let text = "[w]\nrw=randwrite\nbs=4k\nsize=4m\nverify=crc32c\ntime_based\nruntime=20ms\n";
    let out = run_job("verify-time.fio", text, "tiny-test-1gb", "json");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "fio: verification read phase will never start because write phase uses all of runtime"
        ),
        "{}",
        stderr(&out)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 0);
    assert!(v["jobs"][0]["write"]["total_ios"].as_u64().unwrap() > 0);
}
