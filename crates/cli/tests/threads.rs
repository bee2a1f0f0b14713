//! `--threads`: one simulation on 1, 2 and 4 threads gives the same output byte for byte, fio's
//! JSON (json+, with every latency's bins) and every log file, on jobs that exercise what the
//! statistics thread is handed: mixed directions, rate limits, think time, batches, fsync,
//! ramp time, and per-I/O and windowed logs.

mod common;
use common::{flashlab, job_file, stderr};
use std::path::PathBuf;

/// (name, job file): each writes its logs under `LOGDIR`, a directory of the run's own.
const JOBS: &[(&str, &str)] = &[
    (
        "mixed",
        "[global]\nioengine=libaio\ntime_based=1\nruntime=400ms\nramp_time=50ms\n\
         lat_percentiles=1\nslat_percentiles=1\n\
         [m]\nrw=randrw\nrwmixread=70\nbs=4k\niodepth=16\nnumjobs=2\ngroup_reporting=1\n\
         write_lat_log=LOGDIR/mixed\nwrite_bw_log=LOGDIR/mixed\nwrite_iops_log=LOGDIR/mixed\nlog_avg_msec=20\n\
         write_hist_log=LOGDIR/mixed\nlog_hist_msec=50\n",
    ),
    (
        "rated",
        "[global]\nioengine=libaio\ntime_based=1\nruntime=300ms\n\
         [r]\nrw=randrw\nbs=4k\niodepth=8\nrate_iops=4000,1000\nrate_process=poisson\n\
         write_lat_log=LOGDIR/rated\nlog_avg_msec=0\n\
         [w]\nrw=write\nbs=64k\niodepth=4\nrate=20m\nfsync=8\n\
         write_bw_log=LOGDIR/rated\nwrite_iops_log=LOGDIR/rated\nlog_avg_msec=10\n",
    ),
    (
        "think",
        "[global]\nioengine=io_uring\nsize=32m\n\
         [t]\nrw=randread\nbs=4k\niodepth=8\nthinktime=200\nthinktime_blocks=4\n\
         iodepth_batch_submit=4\niodepth_batch_complete_min=2\n\
         write_lat_log=LOGDIR/think\nwrite_iops_log=LOGDIR/think\nlog_avg_msec=0\nlog_offset=1\n\
         [s]\nstonewall\nrw=write\nbs=16k\niodepth=1\nioengine=psync\nnumber_ios=400\n\
         write_lat_log=LOGDIR/think\n",
    ),
];

/// The run's JSON and its log files (name and bytes, sorted), on `threads` threads. The job
/// file and the log directory are the same for every thread count: the JSON names both.
fn run(name: &str, text: &str, threads: &str) -> (Vec<u8>, Vec<(String, Vec<u8>)>) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("threads-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let text = text.replace("LOGDIR", &dir.to_string_lossy());
    let path = job_file(&format!("threads-{name}.fio"), &text);
    let out = flashlab(&[
        "fio",
        "--device",
        "tiny-test-1gb",
        "--threads",
        threads,
        "--output-format=json+",
        &path,
    ]);
    assert!(
        out.status.success(),
        "{name} on {threads}: {}",
        stderr(&out)
    );
    let mut logs: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .expect("log directory")
        .map(|e| {
            let e = e.expect("log file");
            let bytes = std::fs::read(e.path()).expect("log file");
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    logs.sort();
    (out.stdout, logs)
}

#[test]
fn one_two_and_four_threads_give_the_same_json_and_logs() {
    for &(name, text) in JOBS {
        let (json, logs) = run(name, text, "1");
        let v: serde_json::Value = serde_json::from_slice(&json).expect("fio JSON");
        let ios: u64 = v["jobs"]
            .as_array()
            .expect("jobs")
            .iter()
            .map(|j| {
                j["read"]["total_ios"].as_u64().unwrap() + j["write"]["total_ios"].as_u64().unwrap()
            })
            .sum();
        assert!(ios > 100, "{name}: a run that measures I/O ({ios})");
        assert!(
            logs.iter().filter(|(_, b)| !b.is_empty()).count() >= 2,
            "{name}: logs written: {:?}",
            logs.iter().map(|(n, b)| (n, b.len())).collect::<Vec<_>>()
        );
        for threads in ["2", "4"] {
            let (json_n, logs_n) = run(name, text, threads);
            assert!(
                json_n == json,
                "{name}: the JSON on {threads} threads differs from one"
            );
            let names: Vec<&String> = logs.iter().map(|(n, _)| n).collect();
            let names_n: Vec<&String> = logs_n.iter().map(|(n, _)| n).collect();
            assert_eq!(names_n, names, "{name}: log files on {threads} threads");
            for ((file, one), (_, n)) in logs.iter().zip(&logs_n) {
                assert!(
                    n == one,
                    "{name}: {file} on {threads} threads differs from one"
                );
            }
        }
    }
}

#[test]
fn threads_out_of_range_are_refused_with_the_range() {
    for bad in ["0", "x", "100000"] {
        let out = flashlab(&[
            "fio",
            "--threads",
            bad,
            "--name=a",
            "--rw=read",
            "--size=1m",
        ]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "--threads {bad}: {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("expected a whole number 1 to 1024"),
            "{}",
            stderr(&out)
        );
        let job = job_file("threads-bad.fio", "[a]\nrw=read\nsize=1m\n");
        let out = flashlab(&["run", &job, "--threads", bad]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "run --threads {bad}: {}",
            stderr(&out)
        );
        assert!(stderr(&out).contains("--threads"), "{}", stderr(&out));
    }
}
