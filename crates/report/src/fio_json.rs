//! Reading the JSON (or json+) report of a real fio 3.x back into a [`RunResult`], so that
//! results measured on real hardware feed the same measures, tables and charts as simulated
//! ones.
//!
//! What the JSON keeps comes back exactly: bytes, I/O counts, runtimes, latency and sample
//! statistics (min, max, mean, deviation, count). Percentiles need json+: its `bins` refill
//! the latency histogram, from which percentiles are recomputed for the job's list. The
//! latency and depth distributions are percentages in the JSON and come back as counts
//! rounded from them.

use serde_json::{Map, Value};

use crate::histogram::{percentile_precision, Histogram};
use crate::result::{fio_description, DirStats, JobResult, SteadyStateReport};
use crate::stats::IoStat;
use crate::{RunResult, Unified};

/// Why a fio report could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FioJsonError {
    #[error("fio output holds no JSON object (it should start with '{{')")]
    NoJson,
    #[error("fio output is not valid JSON: {0}")]
    Syntax(String),
    #[error("fio JSON: {0}")]
    Shape(String),
}

/// Parse fio's `--output-format=json` or `json+` report. Text before the first `{` (fio
/// prints warnings there) is skipped.
pub fn parse_fio_json(text: &str) -> Result<RunResult, FioJsonError> {
    let start = text.find('{').ok_or(FioJsonError::NoJson)?;
    let mut de = serde_json::Deserializer::from_str(&text[start..]);
    let root: Value = serde::Deserialize::deserialize(&mut de)
        .map_err(|e| FioJsonError::Syntax(e.to_string()))?;
    let root = root
        .as_object()
        .ok_or_else(|| shape("the top level is not an object"))?;
    let globals = options(root.get("global options"));
    let jobs = root
        .get("jobs")
        .and_then(Value::as_array)
        .ok_or_else(|| shape("no \"jobs\" array"))?
        .iter()
        .enumerate()
        .map(|(i, j)| read_job(i, j, &globals))
        .collect::<Result<Vec<_>, _>>()?;
    let mut run = RunResult::new(globals, jobs, Value::Null);
    run.flashlab = Value::Object(Map::new());
    if let Some(v) = root.get("fio version").and_then(Value::as_str) {
        run.fio_version = v.to_string();
    }
    run.timestamp_s = uint(root.get("timestamp"));
    run.timestamp_ms = uint(root.get("timestamp_ms"));
    // fio repeats the run's elapsed seconds in every job.
    if let Some(e) = root
        .get("jobs")
        .and_then(|j| j.get(0))
        .and_then(|j| j.get("elapsed"))
    {
        run.elapsed_s = uint(Some(e));
    }
    Ok(run)
}

fn shape(what: &str) -> FioJsonError {
    FioJsonError::Shape(what.to_string())
}

fn uint(v: Option<&Value>) -> u64 {
    match v {
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| n.as_f64().map(|f| f.max(0.0).round() as u64))
            .unwrap_or(0),
        _ => 0,
    }
}

fn float(v: Option<&Value>) -> f64 {
    v.and_then(Value::as_f64).unwrap_or(0.0)
}

/// `"job options"` / `"global options"`: string values, fio's order.
fn options(v: Option<&Value>) -> Vec<(String, String)> {
    let Some(Value::Object(m)) = v else {
        return Vec::new();
    };
    m.iter()
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), v)
        })
        .collect()
}

/// A statistic from its summary: fio's JSON gives min, max, mean, deviation and count, which
/// is all an [`IoStat`] holds (the squared deviations come back from the deviation).
fn stat(min: u64, max: u64, mean: f64, stddev: f64, n: u64) -> IoStat {
    if n == 0 {
        return IoStat::new();
    }
    IoStat {
        min,
        max,
        samples: n,
        mean,
        s: stddev * stddev * (n.saturating_sub(1)) as f64,
    }
}

fn lat_stat(v: Option<&Value>) -> IoStat {
    let Some(v) = v else {
        return IoStat::new();
    };
    stat(
        uint(v.get("min")),
        uint(v.get("max")),
        float(v.get("mean")),
        float(v.get("stddev")),
        uint(v.get("N")),
    )
}

fn read_dir(v: Option<&Value>) -> Result<DirStats, FioJsonError> {
    let mut d = DirStats::new();
    let Some(v) = v else {
        return Ok(d);
    };
    d.io_bytes = uint(v.get("io_bytes"));
    d.total_ios = uint(v.get("total_ios"));
    d.short_ios = uint(v.get("short_ios"));
    d.drop_ios = uint(v.get("drop_ios"));
    d.runtime_ms = uint(v.get("runtime"));
    d.slat = lat_stat(v.get("slat_ns"));
    d.clat = lat_stat(v.get("clat_ns"));
    d.lat = lat_stat(v.get("lat_ns"));
    d.bw = stat(
        uint(v.get("bw_min")),
        uint(v.get("bw_max")),
        float(v.get("bw_mean")),
        float(v.get("bw_dev")),
        uint(v.get("bw_samples")),
    );
    d.iops = stat(
        uint(v.get("iops_min")),
        uint(v.get("iops_max")),
        float(v.get("iops_mean")),
        float(v.get("iops_stddev")),
        uint(v.get("iops_samples")),
    );
    if let Some(Value::Object(bins)) = v.get("clat_ns").and_then(|c| c.get("bins")) {
        fill_hist(&mut d.clat_hist, bins)?;
    }
    Ok(d)
}

/// json+ `bins`: bucket value (a string key) → count.
fn fill_hist(h: &mut Histogram, bins: &Map<String, Value>) -> Result<(), FioJsonError> {
    for (k, c) in bins {
        let val: u64 = k
            .parse()
            .map_err(|_| shape(&format!("histogram bin '{k}' is not a latency in ns")))?;
        h.record_n(val, uint(Some(c)));
    }
    Ok(())
}

/// Percentages of a distribution object back to counts out of `total`, in `keys` order.
fn dist<const N: usize>(v: Option<&Value>, keys: &[&str; N], total: u64) -> [u64; N] {
    let mut out = [0u64; N];
    for (o, k) in out.iter_mut().zip(keys) {
        let pct = float(v.and_then(|m| m.get(*k)));
        *o = (pct * total as f64 / 100.0).round() as u64;
    }
    out
}

const DEPTH_KEYS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
const LAT_KEYS: [&str; 10] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
];
const LAT_MS_KEYS: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];

/// The label decimals fio printed: from `percentile_list` as the job or the global section
/// wrote it, else the fewest decimals that show the reported percentiles (the JSON keys
/// always carry six, so digits written beyond the value, as in `50.10`, are lost).
fn label_precision(
    job_options: &[(String, String)],
    globals: &[(String, String)],
    list: &[f64],
) -> u32 {
    let written = |opts: &[(String, String)]| {
        opts.iter()
            .rev()
            .find(|(k, _)| k == "percentile_list" || k == "percentiles")
            .map(|(_, v)| percentile_precision(v))
    };
    written(job_options)
        .or_else(|| written(globals))
        .unwrap_or_else(|| {
            list.iter()
                .map(|p| {
                    let s = p.to_string();
                    s.split_once('.').map_or(0, |(_, f)| f.len() as u32)
                })
                .max()
                .unwrap_or(0)
        })
}

/// The job's percentile list, from the keys fio reported (any direction with samples),
/// ascending; fio's default list when it reported none.
fn percentile_list(j: &Value) -> Vec<f64> {
    let mut list: Vec<f64> = ["read", "write", "trim", "mixed"]
        .iter()
        .filter_map(|d| j.get(*d)?.get("clat_ns")?.get("percentile")?.as_object())
        .find(|m| !m.is_empty())
        .map(|m| m.keys().filter_map(|k| k.parse::<f64>().ok()).collect())
        .unwrap_or_default();
    if list.is_empty() {
        list = crate::DEFAULT_PERCENTILES.to_vec();
    }
    list.sort_by(|a, b| a.total_cmp(b));
    list
}

/// The job's `"sync"` object: latency, its histogram (json+ bins) and the count.
fn read_sync(j: &Value) -> Result<(IoStat, Histogram, u64), FioJsonError> {
    let mut sync = IoStat::new();
    let mut sync_hist = Histogram::new();
    let mut sync_total = 0;
    if let Some(s) = j.get("sync") {
        sync = lat_stat(s.get("lat_ns"));
        sync_total = uint(s.get("total_ios"));
        if let Some(Value::Object(bins)) = s.get("lat_ns").and_then(|l| l.get("bins")) {
            fill_hist(&mut sync_hist, bins)?;
        }
    }
    Ok((sync, sync_hist, sync_total))
}

fn read_job(
    index: usize,
    j: &Value,
    globals: &[(String, String)],
) -> Result<JobResult, FioJsonError> {
    let jobname = j
        .get("jobname")
        .and_then(Value::as_str)
        .ok_or_else(|| shape(&format!("job {index} has no \"jobname\"")))?
        .to_string();
    // unified_rw_reporting: `mixed` alone (the fold in the read slot), or after the
    // directions (both).
    let (unified, mixed) = match (j.get("mixed"), j.get("read")) {
        (Some(m), None) => (Unified::Mixed, Some(m)),
        (Some(m), Some(_)) => (Unified::Both, Some(m)),
        (None, _) => (Unified::None, None),
    };
    let dirs = [
        read_dir(if unified == Unified::Mixed {
            mixed
        } else {
            j.get("read")
        })?,
        read_dir(j.get("write"))?,
        read_dir(j.get("trim"))?,
    ];
    let mixed = match (unified, mixed) {
        (Unified::Both, Some(m)) => Some(read_dir(Some(m))?),
        _ => None,
    };
    let percentile_list = percentile_list(j);
    let (sync, sync_hist, sync_total) = read_sync(j)?;
    let total_ios: u64 = dirs.iter().map(|d| d.total_ios).sum();
    let run_ms = uint(j.get("job_runtime"));
    let cpu_ms = |key: &str| (float(j.get(key)) * run_ms as f64 / 100.0).round() as u64;
    let io_u_map = dist(j.get("iodepth_level"), &DEPTH_KEYS, total_ios);
    let job_options = options(j.get("job options"));
    let percentile_precision = label_precision(&job_options, globals, &percentile_list);
    let mut res = JobResult {
        jobname,
        groupid: uint(j.get("groupid")) as u32,
        job_index: index as u32 + 1,
        members: 1,
        error: j.get("error").and_then(Value::as_i64).unwrap_or(0) as i32,
        job_options,
        percentile_list,
        percentile_precision,
        description: fio_description(j.get("desc").and_then(Value::as_str).unwrap_or("")),
        percentiles: crate::PercentileKinds::default(),
        dirs,
        sync,
        sync_hist,
        sync_total,
        usr_time_ms: cpu_ms("usr_cpu"),
        sys_time_ms: cpu_ms("sys_cpu"),
        ctx: uint(j.get("ctx")),
        majf: uint(j.get("majf")),
        minf: uint(j.get("minf")),
        io_u_map,
        io_u_submit: dist(j.get("iodepth_submit"), &SUBMIT_KEYS, total_ios),
        io_u_complete: dist(j.get("iodepth_complete"), &SUBMIT_KEYS, total_ios),
        total_submit: total_ios,
        total_complete: total_ios,
        lat_n: dist(j.get("latency_ns"), &LAT_KEYS, total_ios),
        lat_u: dist(j.get("latency_us"), &LAT_KEYS, total_ios),
        lat_m: dist(j.get("latency_ms"), &LAT_MS_KEYS, total_ios),
        total_run_time_ms: run_ms,
        latency_depth: uint(j.get("latency_depth")) as u32,
        sig_figs: crate::result::DEFAULT_SIG_FIGS,
        unit_bits: false,
        latency_target: uint(j.get("latency_target")),
        latency_percentile: j
            .get("latency_percentile")
            .and_then(Value::as_f64)
            .unwrap_or(100.0),
        latency_window: uint(j.get("latency_window")),
        end_ns: run_ms.saturating_mul(1_000_000),
        logs: Vec::new(),
        steadystate: j.get("steadystate").map(steadystate),
        zone_resets: j.get("zone_resets").and_then(Value::as_u64),
        unified,
        mixed,
    };
    // The presentation options a real fio run was given, job's over global.
    let written = |key: &str| {
        let find = |opts: &[(String, String)]| {
            opts.iter()
                .rev()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
        };
        find(&res.job_options).or_else(|| find(globals))
    };
    if let Some(sf) = written("significant_figures").and_then(|v| v.parse::<usize>().ok()) {
        res.sig_figs = sf.clamp(1, 10);
    }
    res.unit_bits = written("unit_base").as_deref() == Some("1");
    if res.latency_depth == 0 {
        res.latency_depth = 1;
    }
    Ok(res)
}

/// fio's `"steadystate"` object. Its criterion is a string (`1.827050%`); which metric and
/// rule it judged comes from the `"ss"` string (`iops_slope:0.3%`).
fn steadystate(v: &Value) -> SteadyStateReport {
    let text = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let ss = text("ss");
    let criterion = text("criterion");
    let samples = |k: &str| -> Vec<u64> {
        match v.get("data").and_then(|d| d.get(k)) {
            Some(Value::Array(a)) => a.iter().map(|x| uint(Some(x))).collect(),
            _ => Vec::new(),
        }
    };
    SteadyStateReport {
        iops_metric: !ss.starts_with("bw"),
        slope_metric: ss.contains("_slope"),
        percent: criterion.ends_with('%'),
        criterion: criterion.trim_end_matches('%').parse().unwrap_or(0.0),
        ss,
        duration_s: uint(v.get("duration")) as u32,
        attained: uint(v.get("attained")) > 0,
        max_deviation: float(v.get("max_deviation")),
        slope: float(v.get("slope")),
        iops: samples("iops"),
        bw_bytes_per_s: samples("bw"),
    }
}

/// fio's submit/complete distributions: 0, 4, 8, 16, 32, 64, >=64 I/Os per call.
const SUBMIT_KEYS: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{render_json, DDIR_READ, DDIR_WRITE};

    fn reference(name: &str) -> String {
        let path = format!(
            "{}/../../testdata/golden/fio-3.33/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn json_plus_reads_back_figures_and_percentiles() {
        let text = reference("fio-randread-4k-libaio.jsonplus.json");
        let run = parse_fio_json(&text).unwrap();
        assert_eq!(run.fio_version, "fio-3.33");
        let j = &run.jobs[0];
        assert_eq!(j.jobname(), "rr");
        assert_eq!(j.io_bytes(DDIR_READ), 418_009_088);
        assert_eq!(j.total_ios(DDIR_READ), 102_053);
        assert_eq!(j.runtime_ms(DDIR_READ), 2001);
        assert_eq!(j.bw_bytes_per_s(DDIR_READ), 208_900_093);
        assert!((j.iops(DDIR_READ) - 51_000.999_5).abs() < 1e-3);
        let clat = j.clat_ns(DDIR_READ).unwrap();
        assert_eq!((clat.min, clat.max), (36_905, 5_943_036));
        assert!((clat.stddev - 144_990.985_583).abs() < 1e-3);
        // Percentiles recomputed from the bins equal fio's own.
        let p: Vec<(f64, u64)> = j.clat_percentiles_ns(DDIR_READ);
        assert_eq!(p.len(), 17);
        assert_eq!(p[6], (50.0, 138_240));
        assert_eq!(p[12], (99.0, 317_440));
        assert_eq!(p[16], (99.99, 5_799_936));
        assert_eq!(j.total_ios(DDIR_WRITE), 0);
        // Rendering again gives fio's figures back.
        let again: Value = serde_json::from_str(&render_json(&run, true)).unwrap();
        let orig: Value = serde_json::from_str(&text).unwrap();
        for key in ["io_bytes", "bw_bytes", "runtime", "total_ios"] {
            assert_eq!(
                again["jobs"][0]["read"][key], orig["jobs"][0]["read"][key],
                "{key}"
            );
        }
        assert_eq!(
            again["jobs"][0]["read"]["clat_ns"]["percentile"],
            orig["jobs"][0]["read"]["clat_ns"]["percentile"]
        );
    }

    #[test]
    fn plain_json_with_leading_warnings_reads_without_bins() {
        let text = format!("fio: warning: something\n{}", reference("fio-mixed.json"));
        let run = parse_fio_json(&text).unwrap();
        assert_eq!(run.jobs.len(), 3);
        assert!(run.jobs[0].iops(DDIR_READ) > 0.0);
        assert!(run.jobs[0].iops(DDIR_WRITE) > 0.0);
    }

    #[test]
    fn bad_output_is_a_typed_error() {
        assert!(matches!(
            parse_fio_json("fio: engine libaio not loadable"),
            Err(FioJsonError::NoJson)
        ));
        assert!(matches!(
            parse_fio_json("{\"jobs\": [ {"),
            Err(FioJsonError::Syntax(_))
        ));
        let e = parse_fio_json("{\"fio version\": \"fio-3.33\"}").unwrap_err();
        assert!(e.to_string().contains("no \"jobs\" array"), "{e}");
    }
}
