//! fio's JSON and json+ output: the same keys in the same order, printed the way fio's own
//! JSON printer prints (`"key" : value`, two-space indents, floats with six decimals).

use crate::dist::{calc_dist, calc_lat, LAT_RANGES};
use crate::histogram::Histogram;
use crate::result::{percent_of_agg, DirStats, GroupStats, JobResult, RunResult};
use crate::stats::IoStat;
use crate::{Unified, DDIR_READ, DDIR_TRIM, DDIR_WRITE};

/// A JSON value in fio's printing model.
#[derive(Debug, Clone)]
pub(crate) enum J {
    Int(i128),
    Float(f64),
    Str(String),
    /// A number or literal of the `"flashlab"` object, printed as serde_json prints it.
    Lit(serde_json::Value),
    Obj(Obj),
    Arr(Vec<J>),
}

/// An object with keys in insertion order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Obj(Vec<(String, J)>);

impl Obj {
    fn int(&mut self, k: &str, v: impl Into<i128>) {
        self.0.push((k.to_string(), J::Int(v.into())));
    }
    fn float(&mut self, k: &str, v: f64) {
        self.0.push((k.to_string(), J::Float(v)));
    }
    /// fio drops a string pair whose value is empty (its escaper returns NULL for "").
    fn str(&mut self, k: &str, v: &str) {
        if !v.is_empty() {
            self.0.push((k.to_string(), J::Str(v.to_string())));
        }
    }
    fn obj(&mut self, k: &str, v: Obj) {
        self.0.push((k.to_string(), J::Obj(v)));
    }
    fn val(&mut self, k: &str, v: J) {
        self.0.push((k.to_string(), v));
    }
}

fn indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

fn quote(out: &mut String, s: &str) {
    // serde_json escapes exactly what JSON requires; for ordinary text this is fio's output.
    out.push_str(&serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string()));
}

/// Print `v`, which sits at nesting `level`, as fio's `json_print_value` does.
fn print(out: &mut String, v: &J, level: usize) {
    match v {
        J::Int(i) => out.push_str(&i.to_string()),
        J::Float(f) => out.push_str(&fmt_f(*f)),
        J::Str(s) => quote(out, s),
        J::Lit(v) => out.push_str(&v.to_string()),
        J::Obj(o) => {
            out.push_str("{\n");
            for (i, (k, v)) in o.0.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(out, level + 1);
                quote(out, k);
                out.push_str(" : ");
                print(out, v, level + 1);
            }
            out.push('\n');
            indent(out, level);
            out.push('}');
        }
        J::Arr(a) => {
            out.push_str("[\n");
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(out, level + 1);
                print(out, v, level + 1);
            }
            out.push('\n');
            indent(out, level);
            out.push(']');
        }
    }
}

/// C's `%f`. Non-finite values cannot appear in JSON; they print as 0.
fn fmt_f(f: f64) -> String {
    if f.is_finite() {
        format!("{f:.6}")
    } else {
        "0.000000".to_string()
    }
}

/// `f` as fio's JSON reports it (six decimals): what a reader of the JSON gets, for figures
/// drawn from a run that must equal those drawn from its JSON.
pub fn as_reported(f: f64) -> f64 {
    fmt_f(f).parse().unwrap_or(0.0)
}

fn from_serde(v: &serde_json::Value) -> J {
    match v {
        serde_json::Value::Null | serde_json::Value::Bool(_) | serde_json::Value::Number(_) => {
            J::Lit(v.clone())
        }
        serde_json::Value::String(s) => J::Str(s.clone()),
        serde_json::Value::Array(a) => J::Arr(a.iter().map(from_serde).collect()),
        serde_json::Value::Object(m) => J::Obj(Obj(m
            .iter()
            .map(|(k, v)| (k.clone(), from_serde(v)))
            .collect())),
    }
}

/// fio's `ctime()` text of a Unix time, in UTC (no time zone lookup keeps output
/// reproducible): `Thu Jan  1 00:00:00 1970`.
pub(crate) fn ctime_utc(t: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = t / 86_400;
    let secs = t % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        DAYS[(days % 7) as usize],
        MONTHS[(m - 1) as usize],
        d,
        secs / 3600,
        secs % 3600 / 60,
        secs % 60,
        y
    )
}

fn lat_object(st: &IoStat, hist: Option<(&Histogram, &[f64])>, plus: bool) -> Obj {
    let s = st.summary_or_zero();
    let mut o = Obj::default();
    o.int("min", s.min);
    o.int("max", s.max);
    o.float("mean", s.mean);
    o.float("stddev", s.stddev);
    o.int("N", st.samples);
    if let Some((h, list)) = hist {
        if st.samples > 0 && !list.is_empty() {
            let vals = h.percentiles(st.samples, list);
            let mut p = Obj::default();
            for (pct, v) in list.iter().zip(vals) {
                p.int(&format!("{pct:.6}"), v);
            }
            o.obj("percentile", p);
            if plus {
                let mut b = Obj::default();
                for (v, c) in h.nonzero() {
                    b.int(&v.to_string(), c);
                }
                o.obj("bins", b);
            }
        }
    }
    o
}

/// A direction's object; `ddir` picks the group aggregate its `bw_agg` is a share of (the
/// read slot's for a `mixed` direction, as in fio).
fn ddir_object(
    job: &JobResult,
    d: &DirStats,
    ddir: usize,
    group: Option<&GroupStats>,
    plus: bool,
) -> Obj {
    let mut o = Obj::default();
    o.int("io_bytes", d.io_bytes);
    o.int("io_kbytes", d.io_bytes >> 10);
    o.int("bw_bytes", d.bw_bytes_per_s());
    o.int("bw", d.bw_bytes_per_s() / 1024);
    o.float("iops", d.iops());
    o.int("runtime", d.runtime_ms);
    o.int("total_ios", d.total_ios);
    o.int("short_ios", d.short_ios);
    o.int("drop_ios", d.drop_ios);
    let list = job.percentile_list.as_slice();
    let kinds = job.percentiles;
    fn with<'a>(
        h: Option<&'a Histogram>,
        on: bool,
        list: &'a [f64],
    ) -> Option<(&'a Histogram, &'a [f64])> {
        h.filter(|_| on).map(|h| (h, list))
    }
    o.obj(
        "slat_ns",
        lat_object(&d.slat, with(d.slat_hist.as_ref(), kinds.slat, list), plus),
    );
    o.obj(
        "clat_ns",
        lat_object(&d.clat, with(Some(&d.clat_hist), kinds.clat, list), plus),
    );
    o.obj(
        "lat_ns",
        lat_object(&d.lat, with(d.lat_hist.as_ref(), kinds.lat, list), plus),
    );
    let (min, max, agg, mean, dev) = match d.bw.summary() {
        Some(s) => {
            let agg = group.map_or(0, |g| g.agg_bytes_per_s[ddir]);
            (s.min, s.max, percent_of_agg(s.mean, agg), s.mean, s.stddev)
        }
        None => (0, 0, 0.0, 0.0, 0.0),
    };
    o.int("bw_min", min);
    o.int("bw_max", max);
    o.float("bw_agg", agg);
    o.float("bw_mean", mean);
    o.float("bw_dev", dev);
    o.int("bw_samples", d.bw.samples);
    let s = d.iops.summary_or_zero();
    o.int("iops_min", s.min);
    o.int("iops_max", s.max);
    o.float("iops_mean", s.mean);
    o.float("iops_stddev", s.stddev);
    o.int("iops_samples", d.iops.samples);
    o
}

fn job_object(run: &RunResult, job: &JobResult, groups: &[GroupStats], plus: bool) -> Obj {
    let group = groups.get(job.groupid as usize);
    let mut o = Obj::default();
    o.str("jobname", &job.jobname);
    o.int("groupid", job.groupid);
    o.int("error", job.error);
    o.int("eta", 0);
    o.int("elapsed", run.elapsed_s);
    if !job.job_options.is_empty() {
        let mut opts = Obj::default();
        for (k, v) in &job.job_options {
            opts.str(k, v);
        }
        o.obj("job options", opts);
    }
    if job.unified == Unified::Mixed {
        // fio prints the fold, kept in the read slot, as the only direction (no sync).
        o.obj(
            "mixed",
            ddir_object(job, &job.dirs[DDIR_READ], DDIR_READ, group, plus),
        );
    } else {
        for (name, ddir) in [
            ("read", DDIR_READ),
            ("write", DDIR_WRITE),
            ("trim", DDIR_TRIM),
        ] {
            o.obj(name, ddir_object(job, &job.dirs[ddir], ddir, group, plus));
        }
        let mut sync = Obj::default();
        sync.int("total_ios", job.sync_total);
        let list = job.percentile_list.as_slice();
        sync.obj(
            "lat_ns",
            lat_object(&job.sync, Some((&job.sync_hist, list)), plus),
        );
        o.obj("sync", sync);
        if let Some(m) = job.mixed.as_ref().filter(|_| job.unified == Unified::Both) {
            o.obj("mixed", ddir_object(job, m, DDIR_READ, group, plus));
        }
    }

    let rt = job.total_run_time_ms;
    let (usr, sys) = job.cpu_percent();
    o.int("job_runtime", rt);
    o.float("usr_cpu", usr);
    o.float("sys_cpu", sys);
    o.int("ctx", job.ctx);
    o.int("majf", job.majf);
    o.int("minf", job.minf);

    let total_ios: u64 = job.dirs.iter().map(|d| d.total_ios).sum();
    let mut lvl = Obj::default();
    let dist = calc_dist(&job.io_u_map, total_ios);
    for (i, v) in dist.iter().enumerate() {
        let name = if i < 6 {
            (1u32 << i).to_string()
        } else {
            ">=64".to_string()
        };
        lvl.float(&name, *v);
    }
    o.obj("iodepth_level", lvl);
    for (key, map, total) in [
        ("iodepth_submit", &job.io_u_submit, job.total_submit),
        ("iodepth_complete", &job.io_u_complete, job.total_complete),
    ] {
        let mut x = Obj::default();
        for (i, v) in calc_dist(map, total).iter().enumerate() {
            let name = match i {
                0 => "0".to_string(),
                1..=5 => (1u32 << (i + 1)).to_string(),
                _ => ">=64".to_string(),
            };
            x.float(&name, *v);
        }
        o.obj(key, x);
    }
    let mut n = Obj::default();
    for (i, v) in calc_lat(&job.lat_n, total_ios).iter().enumerate() {
        n.float(LAT_RANGES[i], *v);
    }
    o.obj("latency_ns", n);
    let mut u = Obj::default();
    for (i, v) in calc_lat(&job.lat_u, total_ios).iter().enumerate() {
        u.float(LAT_RANGES[i], *v);
    }
    o.obj("latency_us", u);
    let mut m = Obj::default();
    for (i, v) in calc_lat(&job.lat_m, total_ios).iter().enumerate() {
        m.float(LAT_RANGES[i], *v);
    }
    o.obj("latency_ms", m);
    if job.latency_depth > 0 {
        o.int("latency_depth", job.latency_depth);
        o.int("latency_target", job.latency_target);
        o.float("latency_percentile", job.latency_percentile);
        o.int("latency_window", job.latency_window);
    }
    // Only a job with a description has the key (`str` leaves out an empty value).
    o.str("desc", &job.description);
    if let Some(ss) = &job.steadystate {
        o.obj("steadystate", steadystate_json(ss));
    }
    // fio reports zone resets of a zonemode=zbd job that writes or trims (its key since
    // fio 3.42; flashlab's JSON is otherwise fio 3.33's).
    if let Some(r) = job.zone_resets {
        o.int("zone_resets", r);
    }
    o
}

/// fio's `"steadystate"` object; fio prints the limit and the criterion through a
/// single-precision float.
fn steadystate_json(ss: &crate::SteadyStateReport) -> Obj {
    let mut o = Obj::default();
    o.str("ss", &ss.ss);
    o.int("duration", ss.duration_s);
    o.int("attained", u8::from(ss.attained));
    let pct = if ss.percent { "%" } else { "" };
    o.str("criterion", &format!("{:.6}{pct}", ss.criterion as f32));
    o.float("max_deviation", ss.max_deviation);
    o.float("slope", ss.slope);
    let mut data = Obj::default();
    data.int("bw_mean", ss.bw_mean());
    data.int("iops_mean", ss.iops_mean());
    let ints = |v: &[u64]| J::Arr(v.iter().map(|&x| J::Int(x.into())).collect());
    data.val("iops", ints(&ss.iops));
    data.val("bw", ints(&ss.bw_bytes_per_s));
    o.obj("data", data);
    o
}

/// fio's `--output-format=json` (`plus = false`) or `json+` (`plus = true`). `disk_util` is
/// left out (there is no host disk); a `"flashlab"` object follows `jobs` unless
/// [`RunResult::flashlab`] is null.
pub fn render_json(run: &RunResult, plus: bool) -> String {
    let mut out = String::with_capacity(16 * 1024);
    print(&mut out, &J::Obj(document(run, plus)), 0);
    out.push('\n');
    out
}

/// The document [`render_json`] prints, as a JSON value equal to what reading that text
/// gives (every float at fio's six decimals), for a caller that embeds the result in a
/// document of its own without printing and reading it back.
pub fn json_value(run: &RunResult, plus: bool) -> serde_json::Value {
    to_serde(J::Obj(document(run, plus)))
}

fn document(run: &RunResult, plus: bool) -> Obj {
    let groups = run.group_stats();
    let mut root = Obj::default();
    root.str("fio version", &run.fio_version);
    root.int("timestamp", run.timestamp_s);
    root.int("timestamp_ms", run.timestamp_ms);
    root.str("time", &ctime_utc(run.timestamp_s));
    if !run.global_options.is_empty() {
        let mut g = Obj::default();
        for (k, v) in &run.global_options {
            g.str(k, v);
        }
        root.obj("global options", g);
    }
    let jobs = run
        .jobs
        .iter()
        .map(|j| J::Obj(job_object(run, j, &groups, plus)))
        .collect();
    root.val("jobs", J::Arr(jobs));
    if !run.flashlab.is_null() {
        root.val("flashlab", from_serde(&run.flashlab));
    }
    root
}

/// `v` as the value reading its printed text gives: integers as integers (a float past
/// 64 bits, as a JSON reader makes of one), floats at six decimals.
fn to_serde(v: J) -> serde_json::Value {
    use serde_json::Value;
    match v {
        J::Int(i) => {
            if let Ok(u) = u64::try_from(i) {
                Value::from(u)
            } else if let Ok(s) = i64::try_from(i) {
                Value::from(s)
            } else {
                float_value(i as f64)
            }
        }
        J::Float(f) => float_value(as_reported(f)),
        J::Str(s) => Value::String(s),
        J::Lit(v) => v,
        J::Obj(o) => Value::Object(o.0.into_iter().map(|(k, v)| (k, to_serde(v))).collect()),
        J::Arr(a) => Value::Array(a.into_iter().map(to_serde).collect()),
    }
}

fn float_value(f: f64) -> serde_json::Value {
    serde_json::Number::from_f64(f).map_or(serde_json::Value::Null, serde_json::Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctime_matches_c() {
        assert_eq!(ctime_utc(0), "Thu Jan  1 00:00:00 1970");
        // From fio's reference sample: 1795264511 is Sat Nov 21 2026, 12:35:11 in UTC.
        assert_eq!(ctime_utc(1_795_264_511), "Sat Nov 21 12:35:11 2026");
        assert_eq!(ctime_utc(951_782_400), "Tue Feb 29 00:00:00 2000");
    }

    #[test]
    fn printer_matches_fio_layout() {
        let mut inner = Obj::default();
        inner.int("a", 1);
        inner.float("b", 0.5);
        let mut root = Obj::default();
        root.str("s", "x\"y");
        root.str("empty", "");
        root.val("arr", J::Arr(vec![J::Obj(inner), J::Int(3)]));
        root.obj("none", Obj::default());
        let mut out = String::new();
        print(&mut out, &J::Obj(root), 0);
        let want = "{\n  \"s\" : \"x\\\"y\",\n  \"arr\" : [\n    {\n      \"a\" : 1,\n      \"b\" : 0.500000\n    },\n    3\n  ],\n  \"none\" : {\n\n  }\n}";
        assert_eq!(out, want);
    }

    #[test]
    fn distributions_floor_small_buckets() {
        let d = calc_dist(&[1, 0, 0, 0, 9999, 0, 0], 10_000);
        assert_eq!(d[0], 0.1);
        assert!((d[4] - 99.99).abs() < 1e-9);
        let l = calc_lat(&[1u64, 0, 5000], 1_000_000);
        assert_eq!(l, [0.01, 0.0, 0.5]);
        assert_eq!(calc_lat(&[3u64], 0), [0.0]);
    }
}
