//! Whole-crate tests: statistics of synthetic jobs, the JSON schema against fio's reference
//! output, and golden renderings (`FLASHLAB_UPDATE_GOLDEN=1` rewrites the golden files).

use std::path::PathBuf;

use serde_json::Value;

use crate::*;

const MS: u64 = 1_000_000;

fn config(name: &str, groupid: u32, job_index: u32, logs: LogConfig) -> JobStatsConfig {
    JobStatsConfig {
        jobname: name.to_string(),
        groupid,
        job_index,
        job_options: vec![
            ("rw".into(), "randrw".into()),
            ("bs".into(), "4k".into()),
            ("iodepth".into(), "4".into()),
        ],
        percentile_list: Vec::new(),
        percentile_precision: 2,
        percentiles: Default::default(),
        logs,
        description: None,
    }
}

/// A reproducible stream of latencies (xorshift), spread over ns to ms.
struct Lat(u64);
impl Lat {
    fn next(&mut self, scale: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % scale
    }
}

/// A closed-loop job: one I/O after another for `run_ms` after a 100 ms ramp, alternating
/// 3 reads and 1 write; every 1000th I/O is slow.
fn synthetic_job(cfg: JobStatsConfig, seed: u64, run_ms: u64) -> JobResult {
    synthetic_job_reported(cfg, seed, run_ms, Unified::None)
}

/// [`synthetic_job`] under `unified_rw_reporting`.
fn synthetic_job_reported(
    cfg: JobStatsConfig,
    seed: u64,
    run_ms: u64,
    unified: Unified,
) -> JobResult {
    let mut st = JobStats::new(cfg);
    st.set_unified(unified);
    let mut lat = Lat(seed | 1);
    let ramp_end = 100 * MS;
    let end = ramp_end + run_ms * MS;
    let mut t = 0u64;
    let mut n = 0u64;
    let mut measuring = false;
    while t < end {
        if !measuring && t >= ramp_end {
            st.start_measuring(ramp_end);
            measuring = true;
        }
        let slat = 500 + lat.next(3_000);
        let mut clat = 20_000 + lat.next(200_000);
        if n % 1000 == 999 {
            clat += 4 * MS;
        }
        let ddir = if n % 4 == 3 { DDIR_WRITE } else { DDIR_READ };
        st.record_depth(1 + (n % 3) as u32);
        let done = t + slat + clat;
        if done > end {
            break;
        }
        st.record(ddir, t, t + slat, done, 4096, n * 4096);
        if n.is_multiple_of(500) {
            st.record_sync(done, done + 30_000);
        }
        t = done;
        n += 1;
    }
    st.finish(end)
}

fn synthetic_run() -> RunResult {
    let a = synthetic_job(config("mix", 0, 1, LogConfig::default()), 7, 2000);
    let b = synthetic_job(config("mix", 0, 2, LogConfig::default()), 11, 2000);
    let mut merged = a.clone();
    merged.merge(&b);
    let logs = LogConfig {
        bw_prefix: Some("logs/seq".into()),
        lat_prefix: Some("logs/seq".into()),
        iops_prefix: Some("logs/seq".into()),
        log_avg_msec: 500,
        ..LogConfig::default()
    };
    let c = synthetic_job(config("seq", 1, 3, logs), 23, 1500);
    let flashlab = serde_json::json!({ "seed": 1, "device": { "name": "test", "waf": 1.25 } });
    RunResult::new(
        vec![
            ("direct".into(), "1".into()),
            ("time_based".into(), "1".into()),
        ],
        vec![merged, c],
        flashlab,
    )
}

#[test]
fn bandwidth_and_iops_samples_every_500ms() {
    // Exactly 1000 I/Os of 4 KiB per second, 1 ms apart, for 2 s.
    let mut st = JobStats::new(config("r", 0, 1, LogConfig::default()));
    st.start_measuring(10 * MS);
    for i in 0..2000u64 {
        let issue = 10 * MS + i * MS;
        st.record(DDIR_READ, issue, issue + 1000, issue + 900_000, 4096, 0);
    }
    let r = st.finish(2010 * MS);
    let bw = r.bw_samples_kib(DDIR_READ).unwrap();
    let iops = r.iops_samples(DDIR_READ).unwrap();
    // 500 I/Os per window: 500 * 4096 B / 0.5 s = 4000 KiB/s, 1000 IOPS.
    assert_eq!((bw.min, bw.max, bw.stddev), (4000, 4000, 0.0));
    assert_eq!((iops.min, iops.max), (1000, 1000));
    assert_eq!(r.dirs[DDIR_READ].bw.samples, 4);
    assert_eq!(r.runtime_ms(DDIR_READ), 2000);
    assert_eq!(r.runtime_ms(DDIR_WRITE), 0);
    assert_eq!(r.total_ios(DDIR_READ), 2000);
    assert_eq!(r.bw_bytes_per_s(DDIR_READ), 2000 * 4096 / 2);
    assert_eq!(r.iops(DDIR_READ), 1000.0);
    let clat = r.clat_ns(DDIR_READ).unwrap();
    assert_eq!((clat.min, clat.max), (899_000, 899_000));
    assert_eq!(r.slat_ns(DDIR_READ).unwrap().mean, 1000.0);
    assert_eq!(r.lat_ns(DDIR_READ).unwrap().mean, 900_000.0);
}

/// I/Os years apart: the windows between them moved nothing and are skipped at once (one
/// loop step per 500 ms window spun for minutes on a job with days of thinktime), with the
/// same samples as stepping through them.
#[test]
fn sample_windows_between_ios_years_apart_are_skipped() {
    let year = 365 * 86_400 * 1_000 * MS;
    let mut st = JobStats::new(config("r", 0, 1, LogConfig::default()));
    st.start_measuring(0);
    for i in 0..4u64 {
        // Two I/Os 1 ms apart, then 100 years of nothing.
        for j in 0..2 {
            let issue = i * 100 * year + j * MS;
            st.record(DDIR_READ, issue, issue, issue + MS / 2, 4096, 0);
        }
    }
    let start = std::time::Instant::now();
    let r = st.finish(300 * year + 600 * MS);
    assert!(start.elapsed().as_secs() < 5);
    // One sample per window holding I/Os: 2 × 4 KiB in 0.5 s = 16 KiB/s, 4 IOPS.
    let bw = r.bw_samples_kib(DDIR_READ).unwrap();
    assert_eq!((bw.min, bw.max), (16, 16));
    assert_eq!(r.dirs[DDIR_READ].bw.samples, 4);
    assert_eq!(r.iops_samples(DDIR_READ).unwrap().max, 4);
}

#[test]
fn runtime_rounds_up_like_fio_and_ramp_is_discarded() {
    let mut st = JobStats::new(config("r", 0, 1, LogConfig::default()));
    st.record(DDIR_WRITE, 0, 10, 1000, 4096, 0);
    st.record_depth(8);
    st.start_measuring(1_000_000_000);
    st.record(
        DDIR_READ,
        1_000_000_000,
        1_000_000_100,
        1_000_050_000,
        8192,
        0,
    );
    let r = st.finish(3_000_400_000);
    assert_eq!(r.total_ios(DDIR_WRITE), 0, "ramp records are discarded");
    assert_eq!(r.io_u_map, [0; 7]);
    assert_eq!(r.runtime_ms(DDIR_READ), 2001);
    assert_eq!(r.total_run_time_ms, 2000);
}

#[test]
fn merge_pools_latency_and_sums_rates() {
    let a = synthetic_job(config("m", 0, 1, LogConfig::default()), 3, 1000);
    let b = synthetic_job(config("m", 0, 2, LogConfig::default()), 5, 1000);
    let mut m = a.clone();
    m.merge(&b);
    let (ca, cb, cm) = (
        a.clat_ns(DDIR_READ).unwrap(),
        b.clat_ns(DDIR_READ).unwrap(),
        m.clat_ns(DDIR_READ).unwrap(),
    );
    assert_eq!(cm.min, ca.min.min(cb.min));
    assert_eq!(cm.max, ca.max.max(cb.max));
    let (na, nb) = (a.total_ios(DDIR_READ) as f64, b.total_ios(DDIR_READ) as f64);
    assert!((cm.mean - (ca.mean * na + cb.mean * nb) / (na + nb)).abs() < 1e-6);
    assert_eq!(
        m.total_ios(DDIR_READ),
        a.total_ios(DDIR_READ) + b.total_ios(DDIR_READ)
    );
    assert_eq!(
        m.io_bytes(DDIR_WRITE),
        a.io_bytes(DDIR_WRITE) + b.io_bytes(DDIR_WRITE)
    );
    assert_eq!(m.members(), 2);
    assert_eq!(m.runtime_ms(DDIR_READ), a.runtime_ms(DDIR_READ));
    let (ba, bb, bm) = (
        a.bw_samples_kib(DDIR_READ).unwrap(),
        b.bw_samples_kib(DDIR_READ).unwrap(),
        m.bw_samples_kib(DDIR_READ).unwrap(),
    );
    assert_eq!(bm.min, ba.min + bb.min);
    assert!((bm.mean - (ba.mean + bb.mean)).abs() < 1e-9);
    assert_eq!(m.dirs[0].clat_hist.total(), m.total_ios(DDIR_READ));
    // The percentiles of the merge come from the summed histogram.
    let p = m.clat_percentiles_ns(DDIR_READ);
    assert_eq!(p.len(), 17);
    assert!(p.windows(2).all(|w| w[0].1 <= w[1].1));
}

#[test]
fn group_stats_aggregate_jobs() {
    let run = synthetic_run();
    let g = run.group_stats();
    assert_eq!(g.len(), 2);
    let j = &run.jobs[0];
    assert_eq!(g[0].io_bytes[DDIR_READ], j.io_bytes(DDIR_READ));
    assert_eq!(g[0].max_run_ms[DDIR_READ], 2000);
    assert_eq!(
        g[0].agg_bytes_per_s[DDIR_READ],
        j.io_bytes(DDIR_READ) * 1000 / 2000
    );
    assert_eq!(g[1].max_run_ms[DDIR_WRITE], 1500);
    assert_eq!(run.elapsed_s, 3);
}

#[test]
fn windowed_logs_and_files() {
    let run = synthetic_run();
    let job = &run.jobs[1];
    let logs = &job.logs[0];
    assert_eq!(logs.job_index, 3);
    let names: Vec<String> = logs.series.iter().map(|s| s.file_name(3)).collect();
    assert_eq!(
        names,
        [
            "logs/seq_bw.3.log",
            "logs/seq_lat.3.log",
            "logs/seq_clat.3.log",
            "logs/seq_slat.3.log",
            "logs/seq_iops.3.log"
        ]
    );
    let bw = &logs.series[0];
    // One sample per 500 ms window and direction with I/O: 3 windows, reads and writes.
    assert_eq!(bw.entries.len(), 6);
    assert!(bw.entries.iter().all(|e| e.time_ms % 500 == 0 && e.bs == 0));
    let dir = std::env::temp_dir().join(format!("flashlab-report-logs-{}", std::process::id()));
    // As fio, the logs' directory must exist; writing without it names the file.
    let _ = std::fs::remove_dir_all(&dir);
    let e = write_logs(&run, &dir).unwrap_err().to_string();
    assert!(e.contains("logs/seq_bw.3.log"), "{e}");
    std::fs::create_dir_all(dir.join("logs")).unwrap();
    write_logs(&run, &dir).unwrap();
    let text = std::fs::read_to_string(dir.join("logs/seq_bw.3.log")).unwrap();
    assert_eq!(text, bw.render());
    assert!(text.starts_with("500, "));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn per_io_logs_make_per_io_bw_samples() {
    let logs = LogConfig {
        bw_prefix: Some("b".into()),
        iops_prefix: Some("b".into()),
        lat_prefix: Some("b".into()),
        log_avg_msec: 0,
        ..LogConfig::default()
    };
    let mut st = JobStats::new(config("p", 0, 1, logs));
    st.start_measuring(0);
    st.record(DDIR_READ, 0, 100, 100_100, 4096, 0);
    st.record(DDIR_WRITE, 50, 2_000_000, 2_400_000, 8192, 4096);
    let r = st.finish(3 * MS);
    let s = &r.logs[0].series;
    // bw: bytes * 10^6 / clat_ns, per I/O.
    assert_eq!(
        s[0].render(),
        "0, 40960, 0, 4096, 0\n2, 20480, 1, 8192, 0\n"
    );
    assert_eq!(
        s[1].render(),
        "0, 100100, 0, 4096, 0\n2, 2399950, 1, 8192, 0\n"
    );
    assert_eq!(
        s[3].render(),
        "0, 100, 0, 4096, 0\n2, 1999950, 1, 8192, 0\n"
    );
    assert_eq!(s[4].render(), "0, 1, 0, 4096, 0\n2, 1, 1, 8192, 0\n");
    assert_eq!(r.dirs[0].bw.samples, 1);
    assert_eq!(r.dirs[1].iops.summary().unwrap().mean, 1.0);
}

/// Flatten a JSON value into `path: kind` lines in document order; object keys under
/// `generic` parents (option lists, percentiles, bins) become `*`, repeated ones once.
fn key_tree(v: &Value, path: &str, out: &mut Vec<String>) {
    const GENERIC: [&str; 4] = ["job options", "global options", "percentile", "bins"];
    match v {
        Value::Object(m) => {
            let parent = path.rsplit('.').next().unwrap_or("");
            let generic = GENERIC.contains(&parent);
            for (k, v) in m {
                let key = if generic { "*" } else { k.as_str() };
                let p = if path.is_empty() {
                    key.to_string()
                } else {
                    format!("{path}.{key}")
                };
                key_tree(v, &p, out);
            }
        }
        Value::Array(a) => {
            for v in a {
                key_tree(v, &format!("{path}[]"), out);
            }
        }
        Value::Number(n) => out.push(format!(
            "{path}: {}",
            if n.is_f64() { "float" } else { "int" }
        )),
        Value::String(_) => out.push(format!("{path}: str")),
        Value::Bool(_) => out.push(format!("{path}: bool")),
        Value::Null => out.push(format!("{path}: null")),
    }
    out.dedup();
}

/// Copies of fio 3.33's own output (JSON and json+) kept next to the golden files.
fn reference_dir() -> PathBuf {
    golden_dir().join("fio-3.33")
}

fn tree_of(text: &str, drop_top: &[&str]) -> Vec<String> {
    let mut v: Value = serde_json::from_str(text).expect("valid JSON");
    for k in drop_top {
        v.as_object_mut().unwrap().remove(*k);
    }
    // Keep one job: the trees of all jobs are the same.
    let jobs = v["jobs"].as_array().unwrap().clone();
    v["jobs"] = Value::Array(jobs.into_iter().take(1).collect());
    let mut out = Vec::new();
    key_tree(&v, "", &mut out);
    out
}

#[test]
fn json_key_tree_matches_fio() {
    let run = synthetic_run();
    for (file, plus) in [
        ("fio-mixed.json", false),
        ("fio-randread-4k-libaio.jsonplus.json", true),
    ] {
        let reference = std::fs::read_to_string(reference_dir().join(file)).unwrap();
        let want = tree_of(&reference, &["disk_util"]);
        let mut ours_run = run.clone();
        if !reference.contains("\"global options\"") {
            ours_run.global_options.clear();
        }
        let ours = tree_of(&render_json(&ours_run, plus), &["flashlab"]);
        // The reference read-only job has bins only for reads; ours has them for writes too,
        // and a sync section with percentiles: compare the reference's keys in order.
        let filtered: Vec<&String> = ours.iter().filter(|k| want.contains(k)).collect();
        let want_refs: Vec<&String> = want.iter().collect();
        assert_eq!(filtered, want_refs, "key order differs from {file}");
        let missing: Vec<&String> = want.iter().filter(|k| !ours.contains(k)).collect();
        assert!(missing.is_empty(), "missing keys vs {file}: {missing:?}");
        let extra: Vec<&String> = ours
            .iter()
            .filter(|k| !want.contains(k))
            .filter(|k| !k.contains(".percentile.") && !k.contains(".bins."))
            .collect();
        assert!(
            extra.is_empty(),
            "keys fio does not have vs {file}: {extra:?}"
        );
    }
}

#[test]
fn json_parses_and_is_deterministic() {
    let a = render_json(&synthetic_run(), true);
    let b = render_json(&synthetic_run(), true);
    assert_eq!(a, b);
    let v: Value = serde_json::from_str(&a).unwrap();
    assert_eq!(v["fio version"], "fio-3.33");
    assert_eq!(v["time"], "Thu Jan  1 00:00:00 1970");
    assert_eq!(v["flashlab"]["device"]["waf"], 1.25);
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "fio version",
            "timestamp",
            "timestamp_ms",
            "time",
            "global options",
            "jobs",
            "flashlab"
        ]
    );
    let job = &v["jobs"][0];
    let read = &job["read"];
    assert_eq!(read["clat_ns"]["N"], read["total_ios"]);
    let pct = read["clat_ns"]["percentile"].as_object().unwrap();
    assert_eq!(pct.keys().next().unwrap(), "1.000000");
    assert!(pct.contains_key("99.990000"));
    let bins: u64 = read["clat_ns"]["bins"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(bins, read["total_ios"].as_u64().unwrap());
    assert_eq!(job["latency_depth"], 4);
    // Floats print with six decimals, as fio's "%f".
    assert!(a.contains("\"bw_agg\" : 100.000000"));
    assert!(!render_json(&synthetic_run(), false).contains("\"bins\""));
}

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/golden")
}

fn check_golden(name: &str, actual: &str) {
    let path = golden_dir().join(name);
    if std::env::var_os("FLASHLAB_UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden_dir()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with FLASHLAB_UPDATE_GOLDEN=1 to create it",
            path.display()
        )
    });
    assert!(
        want == actual,
        "{} differs from the rendering; if the change is intended, rerun with FLASHLAB_UPDATE_GOLDEN=1 and review the diff",
        path.display()
    );
}

#[test]
fn golden_renderings() {
    let run = synthetic_run();
    check_golden("report-synthetic.json", &render_json(&run, false));
    check_golden("report-synthetic.jsonplus.json", &render_json(&run, true));
    check_golden("report-synthetic.normal.txt", &render_normal(&run));
    check_golden(
        "report-synthetic_bw.3.log",
        &run.jobs[1].logs[0].series[0].render(),
    );
    check_golden(
        "report-synthetic_clat.3.log",
        &run.jobs[1].logs[0].series[2].render(),
    );
}

/// fio 3.33's own steady-state sample (`ss=iops:20% ss_dur=3 ss_ramp=1`): the same window
/// gives the same `"steadystate"` object, key for key and value for value.
#[test]
fn steadystate_object_matches_fio() {
    let reference =
        std::fs::read_to_string(reference_dir().join("fio-steadystate-iops20pct.json")).unwrap();
    let want: Value = serde_json::from_str(&reference).unwrap();
    let want = &want["jobs"][0]["steadystate"];
    let mut run = synthetic_run();
    let ss = crate::SteadyStateReport {
        ss: "iops:20.000000%".into(),
        duration_s: 3,
        attained: true,
        criterion: 100.0 * 1120.0 / 61_301.0,
        percent: true,
        iops_metric: true,
        slope_metric: false,
        max_deviation: 1120.0,
        slope: 0.0,
        iops: vec![60_492, 60_990, 62_421],
        bw_bytes_per_s: vec![247_777_249, 249_819_099, 255_678_142],
    };
    run.jobs[0].set_steadystate(ss.clone());
    let ours: Value = serde_json::from_str(&render_json(&run, false)).unwrap();
    let ours = &ours["jobs"][0]["steadystate"];
    assert_eq!(ours, want);
    let keys = |v: &Value| {
        let mut out = Vec::new();
        key_tree(v, "", &mut out);
        out
    };
    assert_eq!(keys(ours), keys(want), "key order");
    // It is the job's last key, as in fio's output.
    let job: Value = serde_json::from_str(&render_json(&run, false)).unwrap();
    let last = job["jobs"][0]
        .as_object()
        .unwrap()
        .keys()
        .next_back()
        .cloned();
    assert_eq!(last.as_deref(), Some("steadystate"));
    // fio's normal output: one line after the job's I/O depths.
    let text = render_normal(&run);
    assert!(
        text.contains(
            "  steadystate  : attained=yes, bw=239MiB/s (251MB/s), iops=61.3k, iops mean dev=1.827%\n"
        ),
        "{text}"
    );
    // Parsed back from fio's JSON (real-target runs) as it was.
    let parsed = crate::parse_fio_json(&reference).unwrap();
    let back = parsed.jobs[0].steadystate().unwrap();
    assert_eq!(
        (back.attained, back.iops_mean(), back.bw_mean()),
        (true, 61_301, 251_091_496)
    );
    assert!(back.iops_metric && !back.slope_metric && back.percent);
}

/// fio's `lat_percentiles=1`, `slat_percentiles=1` and `clat_percentiles=0`: the latencies
/// asked for get a percentile object (and json+ bins) and a normal-output block; the one
/// turned off loses both.
#[test]
fn percentile_switches_choose_which_latencies_report_percentiles() {
    let mut cfg = config("p", 0, 1, LogConfig::default());
    cfg.percentiles = crate::PercentileKinds {
        clat: false,
        lat: true,
        slat: true,
    };
    let job = synthetic_job(cfg, 7, 500);
    let run = RunResult::new(Vec::new(), vec![job], Value::Null);
    let v: Value = serde_json::from_str(&render_json(&run, true)).unwrap();
    let read = &v["jobs"][0]["read"];
    assert!(read["clat_ns"].get("percentile").is_none());
    assert!(read["clat_ns"].get("bins").is_none());
    for key in ["lat_ns", "slat_ns"] {
        let p = read[key]["percentile"].as_object().expect(key);
        assert_eq!(p.len(), DEFAULT_PERCENTILES.len(), "{key}");
        // Ordered, and within the latency's own range.
        let vals: Vec<u64> = p.values().map(|x| x.as_u64().unwrap()).collect();
        assert!(vals.windows(2).all(|w| w[0] <= w[1]), "{key}: {vals:?}");
        let bins: u64 = read[key]["bins"]
            .as_object()
            .unwrap()
            .values()
            .map(|c| c.as_u64().unwrap())
            .sum();
        assert_eq!(bins, read[key]["N"].as_u64().unwrap(), "{key}");
    }
    // Total latency is submission plus completion: its median lies above the slat median.
    let median = |k: &str| read[k]["percentile"]["50.000000"].as_u64().unwrap();
    assert!(median("lat_ns") > median("slat_ns"));
    let text = render_normal(&run);
    assert!(!text.contains("clat percentiles"), "{text}");
    let slat = text.find("    slat percentiles (").expect("slat block");
    let lat = text.find("     lat percentiles (").expect("lat block");
    assert!(slat < lat);
    // The default keeps clat alone.
    let job = synthetic_job(config("d", 0, 1, LogConfig::default()), 7, 500);
    let run = RunResult::new(Vec::new(), vec![job], Value::Null);
    let text = render_normal(&run);
    assert!(text.contains("    clat percentiles (") && !text.contains(" lat percentiles ("));
}

/// fio 3.33 with `--description="my desc"` prints it in every format: a line under the
/// job's header (normal), `"desc"` after the latency-target keys (JSON), the last field
/// (terse). fio keeps 255 bytes of it.
#[test]
fn description_in_every_format() {
    let mut cfg = config("d", 0, 1, LogConfig::default());
    cfg.description = Some("my desc".into());
    let run = RunResult::new(Vec::new(), vec![synthetic_job(cfg, 3, 200)], Value::Null);
    let normal = render_normal(&run);
    let lines: Vec<&str> = normal.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("d: (groupid=0, jobs=1)"))
        .unwrap();
    assert_eq!(lines[at + 1], "  Description  : [my desc]");
    assert!(lines[at + 2].starts_with("  read: IOPS="));

    let json: Value = serde_json::from_str(&render_json(&run, false)).unwrap();
    let job = json["jobs"][0].as_object().unwrap();
    let keys: Vec<&str> = job.keys().map(String::as_str).collect();
    let desc = keys.iter().position(|k| *k == "desc").unwrap();
    assert_eq!(keys[desc - 1], "latency_window");
    assert_eq!(job["desc"], "my desc");
    // Read back from fio's JSON.
    let parsed = crate::parse_fio_json(&render_json(&run, false)).unwrap();
    assert!(render_normal(&parsed).contains("\n  Description  : [my desc]\n"));

    assert!(render_terse(&run).ends_with(";my desc\n"));

    // Without one, no line, key or field.
    let plain = RunResult::new(
        Vec::new(),
        vec![synthetic_job(
            config("d", 0, 1, LogConfig::default()),
            3,
            200,
        )],
        Value::Null,
    );
    assert!(!render_normal(&plain).contains("Description"));
    assert!(!render_json(&plain, false).contains("\"desc\""));
    assert!(render_terse(&plain).ends_with("%\n"));

    let mut cfg = config("d", 0, 1, LogConfig::default());
    cfg.description = Some("é".repeat(200));
    let job = JobStats::new(cfg).finish(0);
    assert_eq!(job.description.len(), 254);
}

/// fio's JSON keeps the percentile list only as six-decimal keys; the label decimals come
/// from `percentile_list` as the job options wrote it, else from the values.
#[test]
fn fio_json_keeps_label_decimals() {
    let labels = |options: Vec<(String, String)>, list: Vec<f64>| {
        let mut cfg = config("p", 0, 1, LogConfig::default());
        cfg.job_options = options;
        cfg.percentile_list = list;
        let run = RunResult::new(Vec::new(), vec![synthetic_job(cfg, 5, 200)], Value::Null);
        let parsed = crate::parse_fio_json(&render_json(&run, false)).unwrap();
        let text = render_normal(&parsed);
        let at = text.find("clat percentiles").unwrap();
        text[at..].lines().nth(1).unwrap().to_string()
    };
    let written = vec![("percentile_list".to_string(), "50.10:99".to_string())];
    assert!(labels(written, vec![50.1, 99.0]).starts_with("     | 50.10th=["));
    assert!(labels(Vec::new(), vec![50.0, 99.0]).starts_with("     |  50th=["));
    assert!(labels(Vec::new(), vec![50.0, 99.999]).starts_with("     | 50.000th=["));
    assert!(labels(Vec::new(), Vec::new()).starts_with("     |  1.00th=["));
}

/// fio 3.33's `__show_run_stats` copies the percentile settings and the option list from each
/// member of a reporting group in turn: two jobs with `percentile_list=50:99.5` and
/// `percentile_list=10:90:99.99` print `10.00th=`, `90.00th=`, `99.99th=` and the second
/// job's options in JSON, under the first job's name.
#[test]
fn merge_takes_the_last_members_percentiles_and_options() {
    let mut first = config("a", 0, 1, LogConfig::default());
    first.percentile_list = vec![50.0, 99.5];
    first.percentile_precision = 1;
    first.percentiles.clat = false;
    let mut last = config("b", 0, 2, LogConfig::default());
    last.percentile_list = vec![10.0, 90.0, 99.99];
    last.job_options = vec![("percentile_list".into(), "10:90:99.99".into())];
    let (a, b) = (synthetic_job(first, 3, 500), synthetic_job(last, 5, 500));
    let mut m = a.clone();
    m.merge(&b);
    assert_eq!(m.jobname(), "a");
    assert_eq!(m.percentile_list, [10.0, 90.0, 99.99]);
    assert_eq!(m.percentile_precision, 2);
    assert!(m.percentiles.clat);
    assert_eq!(m.job_options, b.job_options);
    let p = m.clat_percentiles_ns(DDIR_READ);
    assert_eq!(
        p.iter().map(|x| x.0).collect::<Vec<_>>(),
        [10.0, 90.0, 99.99]
    );
    // And the other way round: the last member's clat_percentiles=0 leaves none.
    let mut m = b.clone();
    m.merge(&a);
    assert!(!m.percentiles.clat);
    assert_eq!(m.percentile_list, [50.0, 99.5]);
    assert_eq!(m.percentile_precision, 1);
}

/// `unified_rw_reporting=mixed` and `both` as fio 3.33 prints them: the fold of a group's
/// members and directions in every output, checked against the directions it folds.
#[test]
fn unified_reporting_folds_directions_as_fio() {
    let job = |u: Unified, seed: u64, index: u32| {
        synthetic_job_reported(config("u", 0, index, LogConfig::default()), seed, 1500, u)
    };
    let plain = {
        let mut a = job(Unified::None, 7, 1);
        a.merge(&job(Unified::None, 11, 2));
        a
    };
    let run = |u: Unified| {
        let mut a = job(u, 7, 1);
        a.merge(&job(u, 11, 2));
        RunResult::new(Vec::new(), vec![a], Value::Null)
    };
    let (r, w) = (&plain.dirs[DDIR_READ], &plain.dirs[DDIR_WRITE]);
    assert!(r.total_ios > 0 && w.total_ios > 0);

    // mixed: one direction, the sums of both, in the read slot.
    let mixed = run(Unified::Mixed);
    let m = &mixed.jobs[0].dirs[DDIR_READ];
    assert_eq!(m.total_ios, r.total_ios + w.total_ios);
    assert_eq!(m.io_bytes, r.io_bytes + w.io_bytes);
    assert_eq!(m.runtime_ms, r.runtime_ms.max(w.runtime_ms));
    assert_eq!(m.clat.samples, r.clat.samples + w.clat.samples);
    assert_eq!(m.clat.min, r.clat.min.min(w.clat.min));
    assert_eq!(m.clat.max, r.clat.max.max(w.clat.max));
    let pooled = (r.clat.mean * r.clat.samples as f64 + w.clat.mean * w.clat.samples as f64)
        / (r.clat.samples + w.clat.samples) as f64;
    assert!((m.clat.mean - pooled).abs() < 1e-6 * pooled);
    // Bandwidth and IOPS samples add up (fio's pure sum), as in group reporting.
    assert_eq!(m.bw.samples, r.bw.samples + w.bw.samples);
    assert_eq!(m.bw.min, r.bw.min + w.bw.min);
    assert_eq!(mixed.jobs[0].total_ios(DDIR_WRITE), 0);
    let j: Value = serde_json::from_str(&render_json(&mixed, true)).unwrap();
    let jj = &j["jobs"][0];
    for gone in ["read", "write", "trim", "sync"] {
        assert!(jj.get(gone).is_none(), "{gone}");
    }
    assert_eq!(jj["mixed"]["total_ios"], m.total_ios);
    let bins: u64 = jj["mixed"]["clat_ns"]["bins"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(bins, m.clat.samples);
    let text = render_normal(&mixed);
    assert!(text.contains("\n  mixed: IOPS="), "{text}");
    assert!(
        !text.contains("  read:") && !text.contains("  write:"),
        "{text}"
    );
    assert!(text.contains(&format!("issued rwts: total={},0,0,", m.total_ios)));
    assert!(text.contains("\n  MIXED: bw="), "{text}");
    assert!(!text.contains("READ:"), "{text}");
    // Terse: one direction block (41 fields) instead of read's and write's.
    let fields = |t: &str| t.trim_end().split(';').count();
    let plain_run = RunResult::new(Vec::new(), vec![plain.clone()], Value::Null);
    assert_eq!(
        fields(&render_terse(&mixed)) + 41,
        fields(&render_terse(&plain_run))
    );

    // both: the directions as without it, then the fold.
    let both = run(Unified::Both);
    let j: Value = serde_json::from_str(&render_json(&both, false)).unwrap();
    let p: Value = serde_json::from_str(&render_json(&plain_run, false)).unwrap();
    let keys: Vec<&str> = j["jobs"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let at = |k: &str| keys.iter().position(|x| *x == k).unwrap();
    assert!(at("read") < at("write") && at("trim") < at("sync"));
    assert_eq!(at("mixed"), at("sync") + 1);
    assert_eq!(j["jobs"][0]["read"], p["jobs"][0]["read"]);
    assert_eq!(j["jobs"][0]["write"], p["jobs"][0]["write"]);
    assert_eq!(j["jobs"][0]["mixed"]["total_ios"], m.total_ios);
    assert_eq!(j["jobs"][0]["mixed"]["bw_min"], m.bw.min);
    let text = render_normal(&both);
    // fio 3.33's normal `both` block prints no I/O on its first line.
    assert!(
        text.contains(&format!(
            "\n  mixed: IOPS=0, BW=0 (0)(0B/{}msec)\n",
            m.runtime_ms
        )),
        "{text}"
    );
    assert!(text.contains("\n   READ: bw=") && text.contains("\n  WRITE: bw="));
    let group = &both.group_stats()[0];
    let agg = num2str(
        group.agg_bytes_per_s[DDIR_READ] + group.agg_bytes_per_s[DDIR_WRITE],
        4,
        1,
        true,
        normal::Units::BytePerSec,
    );
    assert!(text.contains(&format!("\n  MIXED: bw={agg} (")), "{text}");
    assert_eq!(
        fields(&render_terse(&both)),
        fields(&render_terse(&plain_run)) + 41
    );
    // Read back, each keeps its shape.
    for (r, u) in [(&mixed, Unified::Mixed), (&both, Unified::Both)] {
        let back = parse_fio_json(&render_json(r, true)).unwrap();
        assert_eq!(back.jobs[0].unified(), u);
        assert_eq!(
            back.jobs[0].total_ios(DDIR_READ),
            r.jobs[0].total_ios(DDIR_READ)
        );
    }
}

/// fio 3.33 ors a group's `unified_rw_reporting` codes: mixed with none reads MIXED on
/// every line, both with mixed (3) reads neither way.
#[test]
fn group_lines_or_the_jobs_unified_codes() {
    let lines = |a: Unified, b: Unified| {
        let ja = synthetic_job_reported(config("a", 0, 1, LogConfig::default()), 3, 800, a);
        let jb = synthetic_job_reported(config("b", 0, 2, LogConfig::default()), 5, 800, b);
        let text = render_normal(&RunResult::new(Vec::new(), vec![ja, jb], Value::Null));
        let group = text[text.find("Run status group").unwrap()..].to_string();
        group
            .lines()
            .skip(1)
            .map(|l| l.split(':').next().unwrap().trim().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(lines(Unified::Mixed, Unified::None), ["MIXED", "MIXED"]);
    assert_eq!(lines(Unified::Mixed, Unified::Mixed), ["MIXED"]);
    assert_eq!(
        lines(Unified::Both, Unified::Both),
        ["READ", "WRITE", "MIXED"]
    );
    assert_eq!(lines(Unified::Both, Unified::Mixed), ["READ", "WRITE"]);
}

#[test]
fn json_value_is_what_reading_the_printed_json_gives() {
    let mut run = synthetic_run();
    // Floats the printer rounds to six decimals and integers of every width.
    run.flashlab = serde_json::json!({
        "ratio": 1.0 / 3.0, "whole": 2.0, "big": u64::MAX, "neg": -5, "flag": true, "none": null
    });
    for plus in [false, true] {
        let printed: serde_json::Value =
            serde_json::from_str(&render_json(&run, plus)).expect("fio JSON");
        assert_eq!(crate::json_value(&run, plus), printed);
        // Equal values print the same (one float printed differently would show here).
        assert_eq!(
            serde_json::to_string(&crate::json_value(&run, plus)).unwrap(),
            serde_json::to_string(&printed).unwrap()
        );
    }
}
