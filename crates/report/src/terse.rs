//! fio's terse output, version 3 (`--output-format=terse`, `--minimal`): one line of
//! `;`-separated fields per job (per merged group with group_reporting), in the order fio's
//! HOWTO lists them. Latencies are in µs, bandwidth in KiB/s.
//!
//! The quantities are the JSON renderer's (same runtime, bytes, statistics, histogram and
//! distributions); only their units and rounding follow fio's terse printer. Like the JSON
//! and normal renderers, the trailing disk utilization fields are left out: there is no host
//! block device, and fio itself ends the line there when it has no disk statistics.

use std::fmt::Write;

use crate::dist::{calc_dist, calc_lat};
use crate::histogram::PERCENTILE_LIST_MAX_LEN;
use crate::result::DirStats;
use crate::result::{GroupStats, JobResult, RunResult};
use crate::stats::IoStat;
use crate::{Unified, DDIR_READ, DDIR_WRITE};

/// fio's default `--terse-version`; version 3 reports reads and writes, not trims.
const TERSE_VERSION: u32 = 3;

const NS_PER_US: u64 = 1_000;

/// C's `%f`. Non-finite values print as 0, as in the JSON renderer.
fn fmt_f(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.6}")
    } else {
        "0.000000".to_string()
    }
}

/// `;min;max;mean;stddev` of a latency in µs. Min and max are whole µs, truncated, as fio
/// divides the integer ns; zeros without samples.
fn push_lat_us(out: &mut String, st: &IoStat) {
    let s = st.summary_or_zero();
    let _ = write!(
        out,
        ";{};{};{};{}",
        s.min / NS_PER_US,
        s.max / NS_PER_US,
        fmt_f(s.mean / NS_PER_US as f64),
        fmt_f(s.stddev / NS_PER_US as f64)
    );
}

/// The terse line's share of the group's aggregate bandwidth. Unlike the JSON and normal
/// outputs, fio's terse printer keeps the mean's fraction and divides by the aggregate in
/// whole KiB/s; an aggregate under 1 KiB/s divides by zero there and is capped, as here, at
/// 100%.
fn terse_percent_of_agg(mean_kib: f64, agg_bytes_per_s: u64) -> f64 {
    if agg_bytes_per_s == 0 {
        return 100.0;
    }
    let p = mean_kib * 100.0 / (agg_bytes_per_s / 1024) as f64;
    if p.is_nan() || p > 100.0 {
        100.0
    } else {
        p
    }
}

/// Latency percentiles in whole µs (truncated), always 20 fields: fio pads the list with
/// `0%=0`. They are the total latency's with `lat_percentiles`, else the completion
/// latency's, and all padding with `clat_percentiles=0` (fio's `show_ddir_status_terse`).
/// A direction without samples still lists its percentiles, at 0.
fn push_percentiles_us(out: &mut String, job: &JobResult, d: &DirStats) {
    let kinds = job.percentiles;
    let source = if kinds.lat {
        d.lat_hist.as_ref().map(|h| (h, d.lat.samples))
    } else if kinds.clat {
        Some((&d.clat_hist, d.clat.samples))
    } else {
        None
    };
    let list = match source {
        Some(_) => &job.percentile_list[..job.percentile_list.len().min(PERCENTILE_LIST_MAX_LEN)],
        None => &[],
    };
    let vals_ns = match source {
        Some((h, n)) if n > 0 => h.percentiles(n, list),
        _ => vec![0; list.len()],
    };
    for (pct, v_ns) in list.iter().zip(&vals_ns) {
        let _ = write!(out, ";{}%={}", fmt_f(*pct), v_ns / NS_PER_US);
    }
    for _ in list.len()..PERCENTILE_LIST_MAX_LEN {
        out.push_str(";0%=0");
    }
}

/// One direction's 41 fields: I/O, bandwidth, IOPS, runtime; slat, clat, percentiles, lat;
/// bandwidth samples.
fn push_ddir(out: &mut String, job: &JobResult, ddir: usize, group: Option<&GroupStats>) {
    push_dir(out, job, &job.dirs[ddir], ddir, group);
}

/// [`push_ddir`] of direction `d`, its bandwidth a share of the group's `ddir` aggregate.
fn push_dir(
    out: &mut String,
    job: &JobResult,
    d: &DirStats,
    ddir: usize,
    group: Option<&GroupStats>,
) {
    // fio's terse IOPS is the integer quotient; JSON prints the same ratio as a float.
    let iops = if d.runtime_ms > 0 {
        (1000u128 * d.total_ios as u128 / d.runtime_ms as u128) as u64
    } else {
        0
    };
    let _ = write!(
        out,
        ";{};{};{};{}",
        d.io_bytes >> 10,
        d.bw_bytes_per_s() / 1024,
        iops,
        d.runtime_ms
    );
    push_lat_us(out, &d.slat);
    push_lat_us(out, &d.clat);
    push_percentiles_us(out, job, d);
    push_lat_us(out, &d.lat);
    match d.bw.summary() {
        Some(s) => {
            let agg = group.map_or(0, |g| g.agg_bytes_per_s[ddir]);
            let _ = write!(
                out,
                ";{};{};{}%;{};{}",
                s.min,
                s.max,
                fmt_f(terse_percent_of_agg(s.mean, agg)),
                fmt_f(s.mean),
                fmt_f(s.stddev)
            );
        }
        None => out.push_str(";0;0;0.000000%;0.000000;0.000000"),
    }
}

fn job_line(out: &mut String, run: &RunResult, job: &JobResult, groups: &[GroupStats]) {
    let group = groups.get(job.groupid as usize);
    let _ = write!(
        out,
        "{TERSE_VERSION};{};{};{};{}",
        run.fio_version, job.jobname, job.groupid, job.error
    );
    // Under `mixed` the read slot holds the fold and fio prints it alone; under `both` the
    // fold follows the directions.
    push_ddir(out, job, DDIR_READ, group);
    if job.unified != Unified::Mixed {
        push_ddir(out, job, DDIR_WRITE, group);
    }
    if let Some(m) = job.mixed.as_ref().filter(|_| job.unified == Unified::Both) {
        push_dir(out, job, m, DDIR_READ, group);
    }

    let (usr, sys) = job.cpu_percent();
    let _ = write!(
        out,
        ";{}%;{}%;{};{};{}",
        fmt_f(usr),
        fmt_f(sys),
        job.ctx,
        job.majf,
        job.minf
    );

    let total_ios: u64 = job.dirs.iter().map(|d| d.total_ios).sum();
    for v in calc_dist(&job.io_u_map, total_ios) {
        let _ = write!(out, ";{v:3.1}%");
    }
    // Terse predates fio's ns buckets: the I/Os under 1 µs count in the first µs bucket
    // (<= 2 µs), unfloored.
    let mut lat_us_pct = calc_lat(&job.lat_u, total_ios);
    if total_ios > 0 {
        let under_1us: u64 = job.lat_n.iter().sum();
        lat_us_pct[0] += 100.0 * under_1us as f64 / total_ios as f64;
    }
    for (i, v) in lat_us_pct.iter().enumerate() {
        if i == 0 && total_ios == 0 {
            // fio's stat_calc_lat_nu adds 0/0 here for a job without I/O, and glibc prints
            // x86's default NaN (sign bit set) as "-nan".
            out.push_str(";-nan%");
        } else {
            let _ = write!(out, ";{v:3.2}%");
        }
    }
    for v in calc_lat(&job.lat_m, total_ios) {
        let _ = write!(out, ";{v:3.2}%");
    }
    // fio appends the job's description, when it has one, after the (absent) disk
    // utilization fields.
    if !job.description.is_empty() {
        let _ = write!(out, ";{}", job.description);
    }
    out.push('\n');
}

/// fio's `--output-format=terse` (terse version 3): one line per job of `run`, in job order,
/// including jobs that did no I/O (fio prints those too, with zeros).
pub fn render_terse(run: &RunResult) -> String {
    let groups = run.group_stats();
    let mut out = String::with_capacity(run.jobs.len() * 1024);
    for job in &run.jobs {
        job_line(&mut out, run, job, &groups);
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::{render_json, JobStats, JobStatsConfig, LogConfig};

    const MS: u64 = 1_000_000;

    /// Fields of terse v3 without disk utilization: 5 general, 41 per direction (reads and
    /// writes), 5 CPU, 7 depths, 10 µs and 12 ms latency buckets.
    const FIELDS: usize = 5 + 2 * 41 + 5 + 7 + 10 + 12;
    /// Where the read and write blocks start (0-based field index).
    const READ_AT: usize = 5;
    const WRITE_AT: usize = READ_AT + 41;

    fn config(name: &str, groupid: u32, percentile_list: Vec<f64>) -> JobStatsConfig {
        JobStatsConfig {
            jobname: name.to_string(),
            groupid,
            job_index: 1,
            job_options: vec![("rw".into(), "randrw".into())],
            percentile_list,
            percentile_precision: 2,
            percentiles: Default::default(),
            logs: LogConfig::default(),
            description: None,
        }
    }

    /// Four reads and one write of 4 KiB over 1 s, latencies chosen to fall in known buckets.
    fn tiny_job(percentile_list: Vec<f64>) -> JobResult {
        let mut st = JobStats::new(config("tiny", 0, percentile_list));
        st.start_measuring(0);
        // (issue, slat, clat) in ns.
        let ios = [
            (0, 1_500, 800),
            (100 * MS, 2_500, 3_000),
            (200 * MS, 3_500, 150_000),
            (300 * MS, 4_500, 2_500_000),
        ];
        for (issue, slat, clat) in ios {
            st.record_depth(1);
            st.record(DDIR_READ, issue, issue + slat, issue + slat + clat, 4096, 0);
        }
        st.record_depth(2);
        st.record(DDIR_WRITE, 600 * MS, 600 * MS + 10_000, 601 * MS, 4096, 0);
        st.finish(1000 * MS)
    }

    fn fields(line: &str) -> Vec<&str> {
        line.trim_end_matches('\n').split(';').collect()
    }

    #[test]
    fn tiny_job_line_field_by_field() {
        let run = RunResult::new(Vec::new(), vec![tiny_job(vec![50.0, 99.0])], Value::Null);
        let text = render_terse(&run);
        assert!(text.ends_with('\n') && text.lines().count() == 1);
        let f = fields(&text);
        assert_eq!(f.len(), FIELDS);
        assert_eq!(&f[..5], ["3", "fio-3.33", "tiny", "0", "0"]);
        // 16 KiB of reads in 1000 ms: 16 KiB/s, 4 IOPS.
        assert_eq!(&f[READ_AT..READ_AT + 4], ["16", "16", "4", "1000"]);
        // slat 1.5-4.5 µs: whole µs truncated, mean 3 µs.
        assert_eq!(
            &f[READ_AT + 4..READ_AT + 8],
            ["1", "4", "3.000000", "1.290994"]
        );
        // clat 0.8 µs to 2.5 ms.
        assert_eq!(&f[READ_AT + 8..READ_AT + 10], ["0", "2500"]);
        assert_eq!(f[READ_AT + 10], "663.450000");
        // Two listed percentiles, then 18 pads. Values are the histogram's bucket values
        // (3000 ns falls in the bucket reported as 2992 ns, 2.5 ms in 2506752 ns), in
        // whole µs, truncated.
        assert_eq!(f[READ_AT + 12], "50.000000%=2");
        assert_eq!(f[READ_AT + 13], "99.000000%=2506");
        assert!(f[READ_AT + 14..READ_AT + 32].iter().all(|p| *p == "0%=0"));
        // lat = slat + clat.
        assert_eq!(&f[READ_AT + 32..READ_AT + 34], ["2", "2504"]);
        // One bandwidth sample of 16 KiB in the first 500 ms window: 32 KiB/s.
        assert_eq!(
            &f[READ_AT + 36..READ_AT + 41],
            ["32", "32", "100.000000%", "32.000000", "0.000000"]
        );
        assert_eq!(&f[WRITE_AT..WRITE_AT + 4], ["4", "4", "1", "1000"]);
        assert_eq!(&f[WRITE_AT + 8..WRITE_AT + 10], ["990", "990"]);
        // CPU: nothing simulated, as in the JSON and normal outputs.
        assert_eq!(&f[87..92], ["0.000000%", "0.000000%", "0", "0", "0"]);
        // Depths: 4 of 5 I/Os at depth 1, one at 2.
        assert_eq!(
            &f[92..99],
            ["80.0%", "20.0%", "0.0%", "0.0%", "0.0%", "0.0%", "0.0%"]
        );
        // The 0.8 µs read counts in the first µs bucket; 3 µs in <=4; 150 µs in <=250;
        // 990 µs in <=1000; 2.5 ms in the ms bucket <=4.
        assert_eq!(
            &f[99..109],
            [
                "20.00%", "20.00%", "0.00%", "0.00%", "0.00%", "0.00%", "20.00%", "0.00%", "0.00%",
                "20.00%"
            ]
        );
        assert_eq!(&f[109..111], ["0.00%", "20.00%"]);
        assert!(f[111..].iter().all(|p| *p == "0.00%"));
    }

    /// fio 3.33's line for a job that did no I/O (`fio --name=a --ioengine=null --rw=read
    /// --bs=4k --size=4k --exitall --name=b --ioengine=null --rw=read --size=64m
    /// --startdelay=2 --description="nothing done" --output-format=terse`: `a` ends the run
    /// before `b` starts). Zeros everywhere but the first µs latency bucket, where fio's
    /// stat_calc_lat_nu adds 0/0; the description last.
    const FIO_NO_IO_LINE: &str = "3;fio-3.33;b;0;0;0;0;0;0;0;0;0.000000;0.000000;0;0;0.000000;0.000000;1.000000%=0;5.000000%=0;10.000000%=0;20.000000%=0;30.000000%=0;40.000000%=0;50.000000%=0;60.000000%=0;70.000000%=0;80.000000%=0;90.000000%=0;95.000000%=0;99.000000%=0;99.500000%=0;99.900000%=0;99.950000%=0;99.990000%=0;0%=0;0%=0;0%=0;0;0;0.000000;0.000000;0;0;0.000000%;0.000000;0.000000;0;0;0;0;0;0;0.000000;0.000000;0;0;0.000000;0.000000;1.000000%=0;5.000000%=0;10.000000%=0;20.000000%=0;30.000000%=0;40.000000%=0;50.000000%=0;60.000000%=0;70.000000%=0;80.000000%=0;90.000000%=0;95.000000%=0;99.000000%=0;99.500000%=0;99.900000%=0;99.950000%=0;99.990000%=0;0%=0;0%=0;0%=0;0;0;0.000000;0.000000;0;0;0.000000%;0.000000;0.000000;0.000000%;0.000000%;0;0;0;0.0%;0.0%;0.0%;0.0%;0.0%;0.0%;0.0%;-nan%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;nothing done";

    #[test]
    fn job_without_io_prints_fios_line() {
        let mut cfg = config("b", 0, Vec::new());
        cfg.description = Some("nothing done".into());
        let run = RunResult::new(Vec::new(), vec![JobStats::new(cfg).finish(0)], Value::Null);
        assert_eq!(render_terse(&run), format!("{FIO_NO_IO_LINE}\n"));
    }

    #[test]
    fn direction_without_io_prints_fios_fields() {
        // Reads only: the write block is fio's block for a direction without I/O, the
        // first µs bucket a number again, and no description field.
        let mut st = JobStats::new(config("r", 0, Vec::new()));
        st.start_measuring(0);
        st.record_depth(1);
        st.record(DDIR_READ, 0, 1_000, 5_000, 4096, 0);
        let run = RunResult::new(Vec::new(), vec![st.finish(1000 * MS)], Value::Null);
        let text = render_terse(&run);
        let f = fields(&text);
        assert_eq!(f.len(), FIELDS);
        let fio = fields(FIO_NO_IO_LINE);
        assert_eq!(
            f[WRITE_AT..WRITE_AT + 41].join(";"),
            fio[WRITE_AT..WRITE_AT + 41].join(";")
        );
        assert_eq!(f[99], "0.00%");
    }

    /// fio picks the histogram behind the terse percentiles as its normal output does:
    /// total latency with `lat_percentiles`, none at all with `clat_percentiles=0` (checked
    /// against fio 3.33 with `--lat_percentiles=1` and `--clat_percentiles=0`).
    #[test]
    fn percentiles_follow_the_percentile_switches() {
        let job = |kinds: crate::PercentileKinds| {
            let mut cfg = config("k", 0, vec![50.0]);
            cfg.percentiles = kinds;
            let mut st = JobStats::new(cfg);
            st.start_measuring(0);
            st.record_depth(1);
            // slat 3 µs, clat 5 µs: lat 8 µs.
            st.record(DDIR_READ, 0, 3_000, 8_000, 4096, 0);
            let run = RunResult::new(Vec::new(), vec![st.finish(1000 * MS)], Value::Null);
            render_terse(&run)
        };
        let clat = job(Default::default());
        assert_eq!(fields(&clat)[READ_AT + 12], "50.000000%=5");
        let lat = job(crate::PercentileKinds {
            clat: true,
            lat: true,
            slat: false,
        });
        assert_eq!(fields(&lat)[READ_AT + 12], "50.000000%=8");
        let none = job(crate::PercentileKinds {
            clat: false,
            lat: false,
            slat: false,
        });
        assert!(fields(&none)[READ_AT + 12..READ_AT + 32]
            .iter()
            .all(|p| *p == "0%=0"));
    }

    #[test]
    fn idle_direction_and_empty_job_are_zeros() {
        // A job that did nothing still gets a full line, with its percentile labels.
        let st = JobStats::new(config("idle", 0, Vec::new()));
        let run = RunResult::new(Vec::new(), vec![st.finish(0)], Value::Null);
        let text = render_terse(&run);
        let f = fields(&text);
        assert_eq!(f.len(), FIELDS);
        assert_eq!(&f[READ_AT..READ_AT + 4], ["0", "0", "0", "0"]);
        assert_eq!(
            &f[READ_AT + 4..READ_AT + 8],
            ["0", "0", "0.000000", "0.000000"]
        );
        // Default list: 17 entries at 0, 3 pads.
        assert_eq!(f[READ_AT + 12], "1.000000%=0");
        assert_eq!(f[READ_AT + 28], "99.990000%=0");
        assert_eq!(f[READ_AT + 29], "0%=0");
        assert_eq!(
            &f[READ_AT + 36..READ_AT + 41],
            ["0", "0", "0.000000%", "0.000000", "0.000000"]
        );
        // fio's 0/0 in the first µs bucket; every other share 0.
        assert_eq!(f[99], "-nan%");
        assert!(f[92..]
            .iter()
            .enumerate()
            .all(|(i, p)| i == 7 || (p.starts_with("0.0") && p.ends_with('%'))));
    }

    #[test]
    fn percentile_list_is_cut_at_twenty_and_an_empty_list_pads_all() {
        let mut job = tiny_job(Vec::new());
        job.percentile_list = (1..=25).map(f64::from).collect();
        let run = RunResult::new(Vec::new(), vec![job.clone()], Value::Null);
        let text = render_terse(&run);
        let f = fields(&text);
        assert_eq!(f.len(), FIELDS);
        assert_eq!(f[READ_AT + 31], "20.000000%=0");
        job.percentile_list.clear();
        let run = RunResult::new(Vec::new(), vec![job], Value::Null);
        let text = render_terse(&run);
        let f = fields(&text);
        assert!(f[READ_AT + 12..READ_AT + 32].iter().all(|p| *p == "0%=0"));
    }

    #[test]
    fn percent_of_aggregate_keeps_the_fraction() {
        // 1025.67 KiB/s of a group moving 2096104 B/s (2046 whole KiB/s).
        assert_eq!(
            fmt_f(terse_percent_of_agg(1025.666667, 2_096_104)),
            "50.130336"
        );
        assert_eq!(terse_percent_of_agg(5000.0, 2_096_104), 100.0);
        assert_eq!(terse_percent_of_agg(10.0, 0), 100.0);
        // Under 1 KiB/s the divisor is 0. fio 3.33 prints 100% there even for a mean of
        // 0 (`--bs=512 --rate=512 --bwavgtime=1000 --runtime=4 --time_based`: samples of
        // 0 KiB/s, a 511 B/s aggregate, `0;0;100.000000%;0.000000;0.000000`).
        assert_eq!(terse_percent_of_agg(0.5, 1000), 100.0);
        assert_eq!(terse_percent_of_agg(0.0, 1000), 100.0);
    }

    /// What kind of value a field holds, to compare a line's layout with fio's.
    fn shape(field: &str) -> &'static str {
        if field.contains("%=") {
            "percentile"
        } else if field.ends_with('%') {
            "percent"
        } else if field.parse::<u64>().is_ok() {
            "int"
        } else if field.parse::<f64>().is_ok() {
            "float"
        } else {
            "text"
        }
    }

    /// The layout of fio 3.33's own terse lines (a job with reads and writes, one with writes
    /// only, one with reads only), field for field, up to the disk utilization fields that
    /// fio appends for the host's disk and this renderer leaves out.
    #[test]
    fn layout_matches_fio_reference() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/golden/fio-3.33/fio-mixed.terse.txt");
        let reference = std::fs::read_to_string(path).unwrap();
        let run = RunResult::new(Vec::new(), vec![tiny_job(Vec::new())], Value::Null);
        let text = render_terse(&run);
        let ours: Vec<&str> = fields(&text);
        for line in reference.lines() {
            let theirs = fields(line);
            // One disk: its name and eight figures.
            assert_eq!(theirs.len(), FIELDS + 9);
            assert_eq!(shape(theirs[FIELDS]), "text");
            let (a, b): (Vec<_>, Vec<_>) = (
                ours.iter().map(|f| shape(f)).collect(),
                theirs[..FIELDS].iter().map(|f| shape(f)).collect(),
            );
            assert_eq!(a, b, "layout differs from: {line}");
            assert_eq!(&theirs[..2], &ours[..2]);
        }
    }

    /// A run of two groups (one a group_reporting merge of two clones) built as the report
    /// crate's other tests build theirs: every terse field that also appears in the JSON
    /// output of the same run carries the same value, in the terse unit.
    #[test]
    fn fields_agree_with_the_json_of_the_same_run() {
        fn job(name: &str, groupid: u32, seed: u64, run_ms: u64) -> JobResult {
            let mut st = JobStats::new(config(name, groupid, Vec::new()));
            let mut x = seed | 1;
            let mut next = |scale: u64| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % scale
            };
            st.start_measuring(0);
            let (mut t, mut n) = (0u64, 0u64);
            while t < run_ms * MS {
                let slat = 500 + next(3_000);
                let clat = 200 + next(400_000) + if n % 997 == 0 { 3 * MS } else { 0 };
                let ddir = if n % 3 == 2 { DDIR_WRITE } else { DDIR_READ };
                st.record_depth(1 + (n % 5) as u32);
                st.record(ddir, t, t + slat, t + slat + clat, 4096, 0);
                t += slat + clat;
                n += 1;
            }
            st.finish(t)
        }
        let mut merged = job("mix", 0, 3, 1500);
        merged.merge(&job("mix", 0, 5, 1500));
        let run = RunResult::new(
            Vec::new(),
            vec![merged, job("solo", 1, 9, 800)],
            Value::Null,
        );
        let json: Value = serde_json::from_str(&render_json(&run, false)).unwrap();
        let text = render_terse(&run);
        assert_eq!(text.lines().count(), 2);
        let us = |v: &Value| v.as_u64().unwrap() / 1000;
        let us_f = |v: &Value| fmt_f(v.as_f64().unwrap() / 1000.0);
        for (line, j) in text.lines().zip(json["jobs"].as_array().unwrap()) {
            let f = fields(line);
            assert_eq!(f.len(), FIELDS);
            assert_eq!(f[2], j["jobname"].as_str().unwrap());
            assert_eq!(f[3], j["groupid"].to_string());
            for (at, dir) in [(READ_AT, "read"), (WRITE_AT, "write")] {
                let d = &j[dir];
                assert!(d["total_ios"].as_u64().unwrap() > 0);
                assert_eq!(f[at], d["io_kbytes"].to_string());
                assert_eq!(f[at + 1], d["bw"].to_string());
                assert_eq!(f[at + 2], (d["iops"].as_f64().unwrap() as u64).to_string());
                assert_eq!(f[at + 3], d["runtime"].to_string());
                for (off, key) in [(4, "slat_ns"), (8, "clat_ns"), (32, "lat_ns")] {
                    let l = &d[key];
                    assert_eq!(f[at + off], us(&l["min"]).to_string(), "{dir} {key}");
                    assert_eq!(f[at + off + 1], us(&l["max"]).to_string());
                    assert_eq!(f[at + off + 2], us_f(&l["mean"]));
                    assert_eq!(f[at + off + 3], us_f(&l["stddev"]));
                }
                let pct = d["clat_ns"]["percentile"].as_object().unwrap();
                assert_eq!(pct.len(), 17);
                for (i, (p, v)) in pct.iter().enumerate() {
                    assert_eq!(f[at + 12 + i], format!("{p}%={}", us(v)));
                }
                assert_eq!(f[at + 36], d["bw_min"].to_string());
                assert_eq!(f[at + 37], d["bw_max"].to_string());
                assert_eq!(f[at + 39], fmt_f(d["bw_mean"].as_f64().unwrap()));
                assert_eq!(f[at + 40], fmt_f(d["bw_dev"].as_f64().unwrap()));
            }
            assert_eq!(f[87], format!("{}%", fmt_f(j["usr_cpu"].as_f64().unwrap())));
            assert_eq!(f[89], j["ctx"].to_string());
            let depths = j["iodepth_level"].as_object().unwrap();
            for (i, v) in depths.values().enumerate() {
                assert_eq!(f[92 + i], format!("{:3.1}%", v.as_f64().unwrap()));
            }
            // The µs buckets add the ns ones into the first; the ms buckets are the JSON's.
            let ns_sum: f64 = j["latency_ns"]
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_f64().unwrap())
                .sum();
            assert!(ns_sum > 0.0, "the run should have sub-µs completions");
            for (i, v) in j["latency_us"].as_object().unwrap().values().enumerate() {
                let want = v.as_f64().unwrap();
                let got: f64 = f[99 + i].trim_end_matches('%').parse().unwrap();
                let tolerance = if i == 0 { ns_sum + 0.01 } else { 0.005 };
                assert!(
                    (got - want).abs() <= tolerance,
                    "us bucket {i}: {got} vs {want}"
                );
            }
            for (i, v) in j["latency_ms"].as_object().unwrap().values().enumerate() {
                assert_eq!(f[109 + i], format!("{:3.2}%", v.as_f64().unwrap()));
            }
        }
    }
}
