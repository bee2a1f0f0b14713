//! fio's normal (human) text output: one block per job, then the "Run status group" lines.
//! fio's "Disk stats" section is left out (there is no host disk).

use std::fmt::Write;

use crate::dist::{calc_dist, calc_lat, LAT_RANGES};
use crate::histogram::Histogram;
use crate::json::ctime_utc;
use crate::result::{percent_of_agg, DirStats, GroupStats, JobResult, RunResult};
use crate::stats::IoStat;
use crate::{Unified, DDIR_READ};

/// Units for [`num2str`] (fio's `enum n2s_unit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Units {
    None,
    PerSec,
    Byte,
    Bit,
    BytePerSec,
    BitPerSec,
}

/// fio's `num2str`: `num` (in units of `base`) with at most `maxlen` digits (the '.'
/// counts), scaled by 1000 (`pow2 = false`, k/M/G) or 1024 (`pow2 = true`, Ki/Mi/Gi), with
/// fio's rounding: one decimal digit fewer than room allows, carried into the integer part.
pub fn num2str(num: u64, maxlen: usize, base: u64, pow2: bool, units: Units) -> String {
    const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let prefixes = if pow2 { &IEC } else { &SI };
    let unit = match units {
        Units::None => "",
        Units::PerSec => "/s",
        Units::Byte => "B",
        Units::Bit => "bit",
        Units::BytePerSec => "B/s",
        Units::BitPerSec => "bit/s",
    };
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let mut num = num;
    if matches!(units, Units::Bit | Units::BitPerSec) {
        num = num.wrapping_mul(8);
    }
    let mut post = 0usize;
    let mut b = base;
    while b > 1 {
        b /= thousand;
        post += 1;
    }
    let mut modulo: Option<u64> = None;
    let mut carry = false;
    while post < prefixes.len() {
        if num.to_string().len() <= maxlen {
            break;
        }
        let m = num % thousand;
        num /= thousand;
        carry = m >= thousand / 2;
        modulo = Some(m);
        post += 1;
    }
    if post >= prefixes.len() {
        post = 0;
    }
    let Some(m) = modulo else {
        return format!("{num}{}{unit}", prefixes[post]);
    };
    let digits = num.to_string().len();
    if maxlen as i64 - digits as i64 <= 1 {
        if carry {
            num += 1;
        }
        return format!("{num}{}{unit}", prefixes[post]);
    }
    let decimals = maxlen - digits - 1;
    let frac = format!("{:.*}", decimals, m as f64 / thousand as f64);
    if frac.starts_with('1') {
        num += 1;
    }
    format!("{num}.{}{}{unit}", &frac[2..], prefixes[post])
}

/// fio's `display_lat`: ns, scaled to µs or ms when the numbers are large enough.
fn display_lat(out: &mut String, name: &str, st: &IoStat) {
    let Some(s) = st.summary() else { return };
    let (mut min, mut max, mut mean, mut dev) = (s.min, s.max, s.mean, s.stddev);
    let base = if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        min /= 1_000_000;
        max /= 1_000_000;
        mean /= 1_000_000.0;
        dev /= 1_000_000.0;
        "(msec)"
    } else if min > 2000 && max > 99_999 && dev > 1000.0 {
        min /= 1000;
        max /= 1000;
        mean /= 1000.0;
        dev /= 1000.0;
        "(usec)"
    } else {
        "(nsec)"
    };
    let minp = num2str(min, 6, 1, false, Units::None);
    let maxp = num2str(max, 6, 1, false, Units::None);
    let _ = writeln!(
        out,
        "    {name} {base}: min={minp}, max={maxp}, avg={mean:5.2}, stdev={dev:5.2}"
    );
}

/// fio's `show_clat_percentiles`: labels with `precision` decimals (`%{p+3}.{p}f`; fio's
/// `percentile_precision`, 2 for the default list), as many per line as fit 80 columns.
fn show_percentiles(
    out: &mut String,
    hist: &Histogram,
    n: u64,
    list: &[f64],
    precision: u32,
    pre: &str,
) {
    if n == 0 || list.is_empty() {
        return;
    }
    let precision = precision as usize;
    let mut vals = hist.percentiles(n, list);
    let minv = vals.iter().copied().min().unwrap_or(0);
    let maxv = vals.iter().copied().max().unwrap_or(0);
    let (scale_down, divisor, unit) = if minv > 2_000_000 && maxv > 99_999_999 {
        (2, 1_000_000u64, "msec")
    } else if minv > 2000 && maxv > 99_999 {
        (1, 1000, "usec")
    } else {
        (0, 1, "nsec")
    };
    let _ = write!(out, "    {pre} percentiles ({unit}):\n     |");
    let scaled = maxv / divisor;
    let digits = if scaled == 0 {
        0
    } else {
        (scaled as f64).log10() as i64 + 1
    };
    let width = digits.max(5) as usize;
    let per_line = (80 - 7) / (precision + 10 + width);
    let len = vals.len();
    for j in 0..len {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        let is_last = j == len - 1;
        for _ in 0..scale_down {
            vals[j] = vals[j].div_ceil(1000);
        }
        let _ = write!(
            out,
            " {:w$.p$}th=[{:width$}]{}",
            list[j],
            vals[j],
            if is_last { '\n' } else { ',' },
            w = precision + 3,
            p = precision,
        );
        if is_last {
            break;
        }
        if j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

/// fio's `unit_base`: bandwidths in bytes, or in bits with `unit_base=1`.
fn rate_units(bits: bool) -> Units {
    if bits {
        Units::BitPerSec
    } else {
        Units::BytePerSec
    }
}

/// How a direction's block is headed: its name, the group aggregate its `per=` is a share
/// of, and whether it is fio 3.33's `unified_rw_reporting=both` block, whose first line
/// prints no I/O and a bare bandwidth (`mixed: IOPS=0, BW=0 (0)(0B/2000msec)`, its
/// latencies and samples right; the JSON and terse outputs carry the I/O).
struct DdirHead {
    name: &'static str,
    ddir: usize,
    no_io: bool,
}

fn show_ddir(out: &mut String, job: &JobResult, ddir: usize, group: Option<&GroupStats>) {
    let name = if job.unified == Unified::Mixed {
        "mixed"
    } else {
        ["read", "write", "trim"][ddir]
    };
    let head = DdirHead {
        name,
        ddir,
        no_io: false,
    };
    show_dir(out, job, &job.dirs[ddir], &head, group);
}

fn show_dir(
    out: &mut String,
    job: &JobResult,
    d: &DirStats,
    head: &DdirHead,
    group: Option<&GroupStats>,
) {
    let runt = d.runtime_ms;
    if runt == 0 {
        return;
    }
    let (io_bytes, total_ios) = if head.no_io {
        (0, 0)
    } else {
        (d.io_bytes, d.total_ios)
    };
    let bw = ((1000u128 * io_bytes as u128) / runt as u128) as u64;
    let sf = job.sig_figs;
    // fio's copy of the job for that block leaves its unit base unset: a bare number.
    let bw_units = if head.no_io {
        Units::None
    } else {
        rate_units(job.unit_bits)
    };
    let io_p = num2str(io_bytes, sf, 1, true, Units::Byte);
    let bw_p = num2str(bw, sf, 1, true, bw_units);
    let bw_alt = num2str(bw, sf, 1, false, bw_units);
    let iops = ((1000u128 * total_ios as u128) / runt as u128) as u64;
    let iops_p = num2str(iops, sf, 1, false, Units::None);
    // fio 3.33 reports zone resets on every write line.
    let post = if head.name == "write" {
        format!("; {} zone resets", job.zone_resets.unwrap_or(0))
    } else {
        String::new()
    };
    let name = head.name;
    let _ = writeln!(
        out,
        "  {name}: IOPS={iops_p}, BW={bw_p} ({bw_alt})({io_p}/{runt}msec){post}"
    );
    display_lat(out, "slat", &d.slat);
    display_lat(out, "clat", &d.clat);
    display_lat(out, " lat", &d.lat);
    let kinds = job.percentiles;
    for (on, hist, n, pre) in [
        (kinds.slat, d.slat_hist.as_ref(), d.slat.samples, "slat"),
        (kinds.clat, Some(&d.clat_hist), d.clat.samples, "clat"),
        (kinds.lat, d.lat_hist.as_ref(), d.lat.samples, " lat"),
    ] {
        if let Some(h) = hist.filter(|_| on) {
            show_percentiles(
                out,
                h,
                n,
                &job.percentile_list,
                job.percentile_precision,
                pre,
            );
        }
    }
    if let Some(s) = d.bw.summary() {
        let agg = group.map_or(0, |g| g.agg_bytes_per_s[head.ddir]);
        let p_of_agg = percent_of_agg(s.mean, agg);
        // In bytes whatever `unit_base` says: fio 3.33 prints `bw (  KiB/s)` with
        // unit_base=1 too.
        let (mut min, mut max, mut mean, mut dev) = (s.min, s.max, s.mean, s.stddev);
        let mut unit = "KiB";
        if mean > 1024.0 * 1024.0 {
            min = (min as f64 / 1024.0) as u64;
            max = (max as f64 / 1024.0) as u64;
            mean /= 1024.0;
            dev /= 1024.0;
            unit = "MiB";
        }
        let _ = writeln!(
            out,
            "   bw ({unit:>5}/s): min={min:5}, max={max:5}, per={p_of_agg:3.2}%, avg={mean:5.2}, stdev={dev:5.2}, samples={}",
            d.bw.samples
        );
    }
    if let Some(s) = d.iops.summary() {
        let _ = writeln!(
            out,
            "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}",
            s.min, s.max, s.mean, s.stddev, d.iops.samples
        );
    }
}

fn show_lat(out: &mut String, vals: &[f64], msg: &str) {
    let mut new_line = true;
    let mut shown = false;
    let mut line = 0;
    for (i, v) in vals.iter().enumerate() {
        if *v <= 0.0 {
            continue;
        }
        shown = true;
        if new_line {
            if line > 0 {
                out.push('\n');
            }
            let _ = write!(out, "  lat ({msg})   : ");
            new_line = false;
            line = 0;
        }
        if line > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{}={:3.2}%", LAT_RANGES[i], v);
        line += 1;
        if line == 5 {
            new_line = true;
        }
    }
    if shown {
        out.push('\n');
    }
}

fn show_job(out: &mut String, run: &RunResult, job: &JobResult, groups: &[GroupStats]) {
    let total_ios: u64 = job.dirs.iter().map(|d| d.total_ios).sum();
    let total_bytes: u64 = job.dirs.iter().map(|d| d.io_bytes).sum();
    if total_ios == 0 && total_bytes == 0 {
        return;
    }
    let group = groups.get(job.groupid as usize);
    // fio prints the first clone's pid; a simulation has none.
    let _ = writeln!(
        out,
        "{}: (groupid={}, jobs={}): err={:2}: pid=0: {}",
        job.jobname,
        job.groupid,
        job.members,
        job.error,
        ctime_utc(run.timestamp_s)
    );
    if !job.description.is_empty() {
        let _ = writeln!(out, "  Description  : [{}]", job.description);
    }
    for ddir in 0..3 {
        if job.dirs[ddir].io_bytes > 0 {
            show_ddir(out, job, ddir, group);
        }
    }
    if let Some(m) = job.mixed.as_ref().filter(|_| job.unified == Unified::Both) {
        let head = DdirHead {
            name: "mixed",
            ddir: DDIR_READ,
            no_io: true,
        };
        show_dir(out, job, m, &head, group);
    }
    show_lat(out, &calc_lat(&job.lat_n, total_ios), "nsec");
    show_lat(out, &calc_lat(&job.lat_u, total_ios), "usec");
    show_lat(out, &calc_lat(&job.lat_m, total_ios), "msec");
    // fio 3.33's label (later versions add "/syncfs"); shown under `mixed` too.
    if job.sync.samples > 0 {
        out.push_str("  fsync/fdatasync/sync_file_range:\n");
        display_lat(out, "sync", &job.sync);
        show_percentiles(
            out,
            &job.sync_hist,
            job.sync.samples,
            &job.percentile_list,
            job.percentile_precision,
            "sync",
        );
    }
    let (usr, sys) = job.cpu_percent();
    let _ = writeln!(
        out,
        "  cpu          : usr={usr:3.2}%, sys={sys:3.2}%, ctx={}, majf={}, minf={}",
        job.ctx, job.majf, job.minf
    );
    let d = calc_dist(&job.io_u_map, total_ios);
    let _ = writeln!(
        out,
        "  IO depths    : 1={:3.1}%, 2={:3.1}%, 4={:3.1}%, 8={:3.1}%, 16={:3.1}%, 32={:3.1}%, >=64={:3.1}%",
        d[0], d[1], d[2], d[3], d[4], d[5], d[6]
    );
    for (label, map, total) in [
        ("submit    ", &job.io_u_submit, job.total_submit),
        ("complete  ", &job.io_u_complete, job.total_complete),
    ] {
        let d = calc_dist(map, total);
        let _ = writeln!(
            out,
            "     {label}: 0={:3.1}%, 4={:3.1}%, 8={:3.1}%, 16={:3.1}%, 32={:3.1}%, 64={:3.1}%, >=64={:3.1}%",
            d[0], d[1], d[2], d[3], d[4], d[5], d[6]
        );
    }
    let t = |i: usize| job.dirs[i].total_ios;
    let s = |i: usize| job.dirs[i].short_ios;
    let dr = |i: usize| job.dirs[i].drop_ios;
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},{},{} short={},{},{},0 dropped={},{},{},0",
        t(0),
        t(1),
        t(2),
        job.sync_total,
        s(0),
        s(1),
        s(2),
        dr(0),
        dr(1),
        dr(2)
    );
    if job.latency_depth > 0 {
        let _ = writeln!(
            out,
            "     latency   : target={}, window={}, percentile={:.2}%, depth={}",
            job.latency_target, job.latency_window, job.latency_percentile, job.latency_depth
        );
    }
    if let Some(ss) = &job.steadystate {
        let bw = ss.bw_mean();
        let _ = writeln!(
            out,
            "  steadystate  : attained={}, bw={} ({}), iops={}, {}{}={:.3}{}",
            if ss.attained { "yes" } else { "no" },
            num2str(bw, job.sig_figs, 1, true, Units::BytePerSec),
            num2str(bw, job.sig_figs, 1, false, Units::BytePerSec),
            num2str(ss.iops_mean(), job.sig_figs, 1, false, Units::None),
            if ss.iops_metric { "iops" } else { "bw" },
            if ss.slope_metric {
                " slope"
            } else {
                " mean dev"
            },
            ss.criterion,
            if ss.percent { "%" } else { "" }
        );
    }
}

fn show_group(out: &mut String, g: &GroupStats) {
    let _ = writeln!(out, "\nRun status group {} (all jobs):", g.groupid);
    const NAMES: [&str; 3] = ["   READ", "  WRITE", "   TRIM"];
    // The group's `unified_rw_reporting` codes or-ed: exactly 1 (mixed) names every line
    // MIXED, exactly 2 (both) adds the MIXED line.
    let mixed_names = g.unified_bits == Unified::Mixed.code();
    let mut mix = (0u64, 0u64, u64::MAX, 0u64, u64::MAX, 0u64);
    for (ddir, dir_name) in NAMES.iter().enumerate() {
        if g.max_run_ms[ddir] == 0 {
            continue;
        }
        group_line(
            out,
            g,
            if mixed_names { "  MIXED" } else { dir_name },
            (
                g.io_bytes[ddir],
                g.agg_bytes_per_s[ddir],
                g.min_bw_bytes_per_s[ddir],
                g.max_bw_bytes_per_s[ddir],
                g.min_run_ms[ddir],
                g.max_run_ms[ddir],
            ),
        );
        mix = (
            mix.0 + g.io_bytes[ddir],
            mix.1 + g.agg_bytes_per_s[ddir],
            mix.2.min(g.min_bw_bytes_per_s[ddir]),
            mix.3.max(g.max_bw_bytes_per_s[ddir]),
            mix.4.min(g.min_run_ms[ddir]),
            mix.5.max(g.max_run_ms[ddir]),
        );
    }
    if g.unified_bits == Unified::Both.code() {
        group_line(out, g, "  MIXED", mix);
    }
}

/// One "Run status group" line: (bytes, aggregate, slowest and fastest job's bandwidth,
/// shortest and longest runtime).
fn group_line(out: &mut String, g: &GroupStats, label: &str, v: (u64, u64, u64, u64, u64, u64)) {
    let (io, agg, min_bw, max_bw, min_run, max_run) = v;
    let n = |v: u64, pow2: bool, u: Units| num2str(v, g.sig_figs, 1, pow2, u);
    let bw_units = rate_units(g.unit_bits);
    let _ = writeln!(
        out,
        "{label}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={min_run}-{max_run}msec",
        n(agg, true, bw_units),
        n(agg, false, bw_units),
        n(min_bw, true, bw_units),
        n(max_bw, true, bw_units),
        n(min_bw, false, bw_units),
        n(max_bw, false, bw_units),
        n(io, true, Units::Byte),
        n(io, false, Units::Byte),
    );
}

/// fio's normal text output, from the blank line that opens fio's final report to the last
/// "Run status group" block. The lines fio prints when jobs start (job summaries, version,
/// "Starting N processes") belong to the caller.
pub fn render_normal(run: &RunResult) -> String {
    let groups = run.group_stats();
    let mut out = String::from("\n");
    for job in &run.jobs {
        show_job(&mut out, run, job, &groups);
    }
    for g in &groups {
        show_group(&mut out, g);
    }
    // A drive with Flexible Data Placement adds its FDP logs (nothing otherwise).
    if let Some(fdp) = crate::fdp::render_fdp(run) {
        out.push_str(&fdp);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn num2str_matches_fio_samples() {
        // Values and strings from fio 3.33's normal output.
        assert_eq!(num2str(55_107, 4, 1, false, Units::None), "55.1k");
        assert_eq!(num2str(399, 4, 1, false, Units::None), "399");
        assert_eq!(num2str(4_352_700, 6, 1, false, Units::None), "4352.7k");
        assert_eq!(num2str(29_202_000, 6, 1, false, Units::None), "29202k");
        assert_eq!(
            num2str(52_468_101, 4, 1, true, Units::BytePerSec),
            "50.0MiB/s"
        );
        assert_eq!(
            num2str(52_468_101, 4, 1, false, Units::BytePerSec),
            "52.5MB/s"
        );
        assert_eq!(
            num2str(8_200_657, 4, 1, true, Units::BytePerSec),
            "8008KiB/s"
        );
        assert_eq!(
            num2str(8_200_657, 4, 1, false, Units::BytePerSec),
            "8201kB/s"
        );
        assert_eq!(num2str(104_857_600, 4, 1, true, Units::Byte), "100MiB");
        assert_eq!(num2str(104_857_600, 4, 1, false, Units::Byte), "105MB");
        assert_eq!(num2str(0, 4, 1, true, Units::Byte), "0B");
        // significant_figures=6 unit_base=1: fio 3.33 printed `BW=818791Kibit/s
        // (838442kbit/s)(204800KiB/2001msec)` (104805197 B/s).
        assert_eq!(
            num2str(104_805_197, 6, 1, true, Units::BitPerSec),
            "818791Kibit/s"
        );
        assert_eq!(
            num2str(104_805_197, 6, 1, false, Units::BitPerSec),
            "838442kbit/s"
        );
        assert_eq!(num2str(209_715_200, 6, 1, true, Units::Byte), "204800KiB");
        // significant_figures=2: `BW=100MiB/s (0GB/s)(0GiB/2001msec)`.
        assert_eq!(
            num2str(104_805_197, 2, 1, true, Units::BytePerSec),
            "100MiB/s"
        );
        assert_eq!(
            num2str(104_805_197, 2, 1, false, Units::BytePerSec),
            "0GB/s"
        );
        assert_eq!(num2str(209_715_200, 2, 1, true, Units::Byte), "0GiB");
        // A fraction that rounds up to 1.0 carries into the integer part.
        assert_eq!(num2str(1_999_999, 4, 1, false, Units::None), "2000k");
        assert_eq!(num2str(1_999_999, 6, 1, false, Units::None), "2000.0k");
        assert_eq!(num2str(u64::MAX, 4, 1, false, Units::None), "18.4E");
    }

    #[test]
    fn percent_of_group_aggregate_like_fio() {
        // fio-rate-numjobs2-nogroup: mean 1025.67 KiB/s of a 4194304-byte, 2001 ms group.
        let agg = 4_194_304u64 * 1000 / 2001;
        assert_eq!(
            format!("{:.6}", percent_of_agg(1025.666667, agg)),
            "50.073875"
        );
        // fio-steadystate-iops20pct: 99.829839.
        let agg = 1_228_910_592u64 * 1000 / 4894;
        assert_eq!(
            format!("{:.6}", percent_of_agg(244803.555556, agg)),
            "99.829839"
        );
        assert_eq!(percent_of_agg(5000.0, 1000), 100.0);
    }

    #[test]
    fn percentile_table_layout() {
        let mut h = Histogram::new();
        for v in [400_000u64, 500_000, 3_620_000] {
            h.record(v);
        }
        let mut out = String::new();
        show_percentiles(&mut out, &h, 3, &[50.0, 90.0, 99.0, 99.9, 99.99], 2, "clat");
        assert_eq!(
            out,
            "    clat percentiles (usec):\n     | 50.00th=[  502], 90.00th=[ 3621], 99.00th=[ 3621], 99.90th=[ 3621],\n     | 99.99th=[ 3621]\n"
        );
    }

    /// The label rule of fio 3.33 (`percentile_precision`: the most decimals written in
    /// `percentile_list`), with the lines fio 3.33 printed for the same lists (ioengine=null,
    /// 4 KiB reads): the latencies here are chosen to give the same values.
    #[test]
    fn percentile_labels_take_the_written_decimals() {
        let table = |samples: &[(u64, u64)], text: &str| {
            let mut h = Histogram::new();
            let mut n = 0;
            for &(v, c) in samples {
                h.record_n(v, c);
                n += c;
            }
            let list: Vec<f64> = text.split(':').map(|p| p.parse().unwrap()).collect();
            let list = crate::histogram::normalize_percentile_list(&list);
            let mut out = String::new();
            let precision = crate::histogram::percentile_precision(text);
            show_percentiles(&mut out, &h, n, &list, precision, "clat");
            out
        };
        let head = "    clat percentiles (nsec):\n";
        // `--percentile_list=50:99`: integers print without a decimal point.
        assert_eq!(
            table(&[(30, 50), (31, 50)], "50:99"),
            format!("{head}     |  50th=[   30],  99th=[   31]\n")
        );
        // `50:99.999`: three decimals for every label.
        assert_eq!(
            table(&[(30, 199_997), (10_048, 3)], "50:99.999"),
            format!("{head}     | 50.000th=[   30], 99.999th=[10048]\n")
        );
        // `99.5:50` sorts; one decimal.
        assert_eq!(
            table(&[(20, 100)], "99.5:50"),
            format!("{head}     | 50.0th=[   20], 99.5th=[   20]\n")
        );
        assert_eq!(
            table(&[(20, 100)], "1:5:99.9"),
            format!("{head}     |  1.0th=[   20],  5.0th=[   20], 99.9th=[   20]\n")
        );
        // Trailing zeros count as written.
        assert_eq!(
            table(&[(30, 100)], "50.10:99"),
            format!("{head}     | 50.10th=[   30], 99.00th=[   30]\n")
        );
        // Wider labels fit fewer to a line: (80 - 7) / (precision + 10 + width).
        assert_eq!(
            table(&[(10, 25), (20, 75)], "10.0000000:20:30:40:50"),
            format!(
                "{head}     | 10.0000000th=[   10], 20.0000000th=[   10], 30.0000000th=[   20],\n     | 40.0000000th=[   20], 50.0000000th=[   20]\n"
            )
        );
        assert_eq!(
            table(&[(10, 25), (20, 75)], "10:20:30:40:50:60:70:80:90"),
            format!(
                "{head}     |  10th=[   10],  20th=[   10],  30th=[   20],  40th=[   20],\n     |  50th=[   20],  60th=[   20],  70th=[   20],  80th=[   20],\n     |  90th=[   20]\n"
            )
        );
        // fio's default list has two decimals.
        let default = "1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99";
        assert_eq!(crate::histogram::percentile_precision(default), 2);
        assert!(table(&[(10, 100)], default)
            .contains("|  1.00th=[   10],  5.00th=[   10], 10.00th=[   10], 20.00th=[   10],\n"));
    }

    #[test]
    fn lat_lines_wrap_after_five() {
        let mut out = String::new();
        let v = [0.0, 0.0, 0.0, 0.0, 0.01, 0.13, 3.72, 88.0, 6.96, 0.18];
        show_lat(&mut out, &v, "usec");
        assert_eq!(
            out,
            "  lat (usec)   : 50=0.01%, 100=0.13%, 250=3.72%, 500=88.00%, 750=6.96%\n  lat (usec)   : 1000=0.18%\n"
        );
    }
}
