//! fio's completion-latency histogram log (`write_hist_log`) through the binary: fio 3.33's
//! line format (time, direction, block size, 1,856 bins), one line per window, and bins
//! that are the run's own latency histogram cut into windows.

mod common;
use common::{run_job, stderr};
use flashlab_report::histogram::plat_idx_to_val;
use std::path::PathBuf;

const JOB: &str =
    "[rr]\nioengine=libaio\nrw=randread\nbs=4k\niodepth=16\nsize=256m\ntime_based\nruntime=3\n\
                   write_hist_log=hist-test\nlog_hist_msec=500\n";

fn rows(path: &PathBuf) -> Vec<Vec<u64>> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| l.split(", ").map(|f| f.parse().unwrap()).collect())
        .collect()
}

/// `shared/reference/fio-3.33/NAME` in an ancestor of the repository, when present.
fn reference(name: &str) -> Option<PathBuf> {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/reference/fio-3.33").join(name))
        .find(|p| p.exists())
}

#[test]
fn the_histogram_log_has_fio_s_lines_and_the_run_s_latencies() {
    let out = run_job("hist.fio", JOB, "tiny-test-1gb", "json+");
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hist-test_clat_hist.1.log");
    let rows = rows(&log);
    // One line per 500 ms window closed before the 3 s runtime ended (no partial window).
    let times: Vec<u64> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(times, [501, 1001, 1501, 2001, 2501]);
    for r in &rows {
        assert_eq!((r[1], r[2], r.len()), (0, 4096, 3 + 1856));
    }
    if let Some(reference) = reference("logs2/h_clat_hist.1.log") {
        let fio = &self::rows(&reference)[0];
        assert_eq!(fio.len(), rows[0].len(), "fio's column count");
    }
    // Summed over the windows, each bin holds at most the run's count in that bin (json+).
    let bins = v["jobs"][0]["read"]["clat_ns"]["bins"].as_object().unwrap();
    let mut run_hist = vec![0u64; 1856];
    for (ns, count) in bins {
        let ns: u64 = ns.parse().unwrap();
        let i = (0..1856)
            .find(|&i| rows.iter().any(|r| r[3 + i] > 0) && plat_idx_to_val(i) == ns)
            .unwrap_or(usize::MAX);
        if i < 1856 {
            run_hist[i] = count.as_u64().unwrap();
        }
    }
    let total: u64 = v["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    let logged: u64 = rows.iter().map(|r| r[3..].iter().sum::<u64>()).sum();
    assert!(
        logged > total * 3 / 4 && logged <= total,
        "{logged} of {total}"
    );
    for i in 0..1856 {
        let in_log: u64 = rows.iter().map(|r| r[3 + i]).sum();
        assert!(
            in_log <= run_hist[i],
            "bin {i}: {in_log} logged, {} in the run",
            run_hist[i]
        );
    }
}

#[test]
fn log_offset_lines_carry_the_offset_as_fio_s_do() {
    let job = "[lo]\nrw=randread\nbs=4k\nnumber_ios=50\nwrite_lat_log=lo-test\nlog_offset=1\n";
    let out = run_job("log-offset.fio", job, "tiny-test-1gb", "json");
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("lo-test_clat.1.log");
    let rows = rows(&log);
    assert_eq!(rows.len(), 50);
    let width = reference("logs2/lo_clat.1.log").map_or(6, |r| self::rows(&r)[0].len());
    for r in &rows {
        assert_eq!(r.len(), width, "time, value, ddir, bs, offset, prio");
        assert_eq!((r[2], r[3], r[4] % 4096, r[5]), (0, 4096, 0, 0));
    }
    // Random reads: the offsets differ.
    assert!(rows.windows(2).any(|w| w[0][4] != w[1][4]));
}

#[test]
fn per_job_logs_off_shares_one_file_per_prefix() {
    let job = "[pj]\nrw=randread\nbs=4k\nnumber_ios=20\nnumjobs=2\nwrite_lat_log=pj-test\n\
               per_job_logs=0\n";
    let out = run_job("per-job-logs.fio", job, "tiny-test-1gb", "json");
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    // Both clones' lines in one file named without a job number.
    assert_eq!(rows(&dir.join("pj-test_clat.log")).len(), 40);
    assert!(!dir.join("pj-test_clat.1.log").exists());
    assert!(!dir.join("pj-test_clat.2.log").exists());
}
