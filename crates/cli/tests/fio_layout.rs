//! flashlab's outputs laid out as the real fio 3.33 lays them out for the same command line.
//! Each case runs fio itself (the `null` engine: no device, no data) and `flashlab fio` with
//! the same arguments, and compares what does not depend on the figures: the normal output's
//! lines (labels, keys and units kinds, with numbers and unit prefixes masked), the JSON's
//! keys, and the terse line's field count. Needs fio (installed by .ci/run); skips with a
//! notice when it is missing, unless FLASHLAB_REQUIRE_TOOLS=1.

mod common;

use std::process::Command;

use common::{flashlab, stderr, stdout};
use serde_json::Value;

fn have_fio() -> bool {
    let ok = Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains("3.33"));
    if !ok {
        assert!(
            std::env::var("FLASHLAB_REQUIRE_TOOLS").as_deref() != Ok("1"),
            "fio 3.33 missing; FLASHLAB_REQUIRE_TOOLS=1 requires it"
        );
        eprintln!("SKIPPED: fio 3.33 missing (apt-get install fio)");
    }
    ok
}

/// The same arguments to fio and to flashlab: a short run with bandwidth samples (two
/// seconds at a fixed rate), so the sample lines appear in both. The `null` engine queues
/// I/Os at a depth above 1, as libaio does, so fio measures submission latency as flashlab
/// does (at depth 1, or with a synchronous engine such as fio's default psync, fio records
/// none).
fn run_both(index: usize, args: &[&str], format: &str) -> (String, String) {
    // The output format first: fio prints a job's start line in the format in force when
    // it reads the job.
    let fmt = format!("--output-format={format}");
    let mut common = vec![
        fmt.as_str(),
        "--ioengine=null",
        "--iodepth=4",
        "--size=64m",
        "--bs=4k",
        "--time_based",
        "--runtime=2",
        "--rate_iops=500",
    ];
    // A synchronous engine needs a file: each case and output format its own, as they run
    // at once.
    let file = std::env::temp_dir().join(format!(
        "flashlab-fio-layout-{}-{format}-{index}",
        std::process::id()
    ));
    let file_arg = format!("--filename={}", file.display());
    common.extend(args.iter().map(|&a| {
        if a == "--filename=TMP" {
            file_arg.as_str()
        } else {
            a
        }
    }));
    let fio = Command::new("fio")
        .args(&common)
        .output()
        .expect("fio runs");
    let _ = std::fs::remove_file(&file);
    assert!(
        fio.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&fio.stderr)
    );
    let mut ours = vec!["fio", "--device", "tiny-test-1gb"];
    ours.extend_from_slice(&common);
    let o = flashlab(&ours);
    assert!(o.status.success(), "flashlab: {}", stderr(&o));
    (
        String::from_utf8_lossy(&fio.stdout).into_owned(),
        stdout(&o),
    )
}

/// Every case in `format`, in the order of [`CASES`]. A case spends its two seconds waiting
/// on fio's rate (and the simulation of two seconds at 500 IOPS is short), so the cases run
/// six at a time.
fn run_cases(format: &str) -> Vec<(String, String)> {
    const AT_ONCE: usize = 6;
    let mut outputs = Vec::new();
    for (round, cases) in CASES.chunks(AT_ONCE).enumerate() {
        std::thread::scope(|s| {
            let runs: Vec<_> = cases
                .iter()
                .enumerate()
                .map(|(i, case)| s.spawn(move || run_both(round * AT_ONCE + i, case, format)))
                .collect();
            outputs.extend(runs.into_iter().map(|r| r.join().expect("the case ran")));
        });
    }
    outputs
}

/// A normal-output line with what depends on the figures masked: numbers (with fio's k/M
/// suffixes) become `9`, time units `t`, byte prefixes dropped, runs of spaces one.
fn shape(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            while chars
                .peek()
                .is_some_and(|d| d.is_ascii_digit() || *d == '.')
            {
                chars.next();
            }
            // fio's k/M/G count suffix (`IOPS=33.3k`), not a unit prefix (`9MiB`, `9MB`).
            let mut ahead = chars.clone();
            if ahead.next().is_some_and(|d| matches!(d, 'k' | 'M' | 'G'))
                && !ahead.next().is_some_and(|d| matches!(d, 'i' | 'B' | 'b'))
            {
                chars.next();
            }
            out.push('9');
        } else if c == ' ' {
            if !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
    // fio pads some figures to a width (`avg= 9.50`): the padding follows the value.
    let mut s = out.replace("= ", "=");
    for unit in ["nsec", "usec", "msec"] {
        s = s.replace(unit, "t");
    }
    for prefix in ["Ki", "Mi", "Gi", "k", "M", "G"] {
        for unit in ["B/s", "B)", "B/", "B,", "B "] {
            s = s.replace(&format!("9{prefix}{unit}"), &format!("9{unit}"));
        }
    }
    s
}

/// The report's lines from the first job's header on, shaped, without the lines whose
/// presence depends on the figures (latency buckets in use) or the host (the date, disk
/// statistics); percentile rows joined, as their wrapping depends on the widest value.
fn normal_shape(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut started = false;
    let mut percentiles = String::new();
    for line in text.lines() {
        if !started {
            started = line.contains(": (groupid=");
            if !started {
                continue;
            }
        }
        if line.starts_with("Disk stats") {
            break;
        }
        let t = line.trim_start();
        if t.starts_with("lat (") && t.contains(")   :") {
            continue;
        }
        if let Some(row) = t.strip_prefix('|') {
            percentiles.push_str(row);
            percentiles.push(',');
            continue;
        }
        if !percentiles.is_empty() {
            let n = percentiles.matches("th=").count();
            lines.push(format!("| {n} percentiles"));
            percentiles.clear();
        }
        if line.contains(": (groupid=") {
            lines.push(line[..line.find("pid=").unwrap_or(line.len())].to_string());
        } else if !t.is_empty() {
            lines.push(shape(line));
        }
    }
    lines
}

/// Every key path of a JSON value, in order (array elements by index); `skip` names keys
/// whose content is not compared.
fn key_paths(v: &Value, at: &str, skip: &[&str], out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let path = format!("{at}/{k}");
                out.push(path.clone());
                if !skip.contains(&k.as_str()) {
                    key_paths(v, &path, skip, out);
                }
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                key_paths(v, &format!("{at}/{i}"), skip, out);
            }
        }
        _ => {}
    }
}

/// The cases: plain mixed I/O, fio's unified reporting both ways (and over a reporting group),
/// fsync and fdatasync (the sync block, with and without the fold), a reporting group of
/// clones, two stonewalled jobs, trims, mixed block sizes, fio's steady-state detection,
/// latency percentiles of each kind and list, the presentation options (description,
/// significant figures, bits), and a synchronous engine asked for a depth (fio's default
/// psync: one I/O in flight, no submission latency, the depth written still reported).
const CASES: [&[&str]; 18] = [
    &[
        "--name=t",
        "--rw=randrw",
        "--ioengine=psync",
        "--filename=TMP",
        // No disk statistics (a file has a disk; the null engine none).
        "--disk_util=0",
    ],
    &["--name=t", "--rw=randread", "--ss=iops:10%", "--ss_dur=1s"],
    &["--name=t", "--rw=randtrim"],
    &["--name=t", "--rw=randrw", "--bssplit=4k/50:64k/50"],
    &[
        "--name=t",
        "--rw=randwrite",
        "--numjobs=2",
        "--group_reporting",
        "--unified_rw_reporting=both",
    ],
    &["--name=t", "--rw=write", "--fdatasync=2"],
    &[
        "--name=a",
        "--rw=randread",
        "--name=b",
        "--rw=randwrite",
        "--stonewall",
    ],
    &["--name=t", "--rw=randread", "--description=a read test"],
    &[
        "--name=t",
        "--rw=randwrite",
        "--percentile_list=50:99.5",
        "--slat_percentiles=1",
    ],
    &[
        "--name=t",
        "--rw=randrw",
        "--significant_figures=6",
        "--unit_base=1",
    ],
    &["--name=t", "--rw=randread", "--clat_percentiles=0"],
    &["--name=t", "--rw=randrw"],
    &["--name=t", "--rw=randrw", "--unified_rw_reporting=mixed"],
    &["--name=t", "--rw=randrw", "--unified_rw_reporting=both"],
    &["--name=t", "--rw=randrw", "--fsync=4"],
    &[
        "--name=t",
        "--rw=randrw",
        "--fsync=4",
        "--unified_rw_reporting=mixed",
    ],
    &[
        "--name=t",
        "--rw=randwrite",
        "--numjobs=2",
        "--group_reporting",
    ],
    &["--name=t", "--rw=randread", "--lat_percentiles=1"],
];

#[test]
fn the_normal_output_has_fios_lines() {
    if !have_fio() {
        return;
    }
    for (case, (fio, ours)) in CASES.iter().zip(run_cases("normal")) {
        assert_eq!(
            normal_shape(&ours),
            normal_shape(&fio),
            "{case:?}\n--- fio:\n{fio}\n--- flashlab:\n{ours}"
        );
    }
}

#[test]
fn the_json_has_fios_keys() {
    if !have_fio() {
        return;
    }
    for (case, (fio, ours)) in CASES.iter().zip(run_cases("json+")) {
        // fio prints its notes ahead of the JSON (the synchronous engine's, here on
        // stdout as the output format came first); readers of fio's JSON skip them.
        let fio = &fio[fio.find('{').expect("fio's JSON")..];
        let (fio, ours): (Value, Value) = (
            serde_json::from_str(fio).expect("fio's JSON"),
            serde_json::from_str(&ours).expect("flashlab's JSON"),
        );
        // Values, not keys: the latency histogram's bins and the bucket keys in use
        // follow the figures; "flashlab" is flashlab's own object; time stamps are fio's.
        let skip = ["bins", "job options", "global options"];
        let paths = |v: &Value| {
            let mut out = Vec::new();
            key_paths(v, "", &skip, &mut out);
            out.retain(|p| !p.starts_with("/flashlab"));
            out
        };
        assert_eq!(paths(&ours), paths(&fio), "{case:?}");
    }
}

#[test]
fn the_terse_line_has_fios_fields() {
    if !have_fio() {
        return;
    }
    for (case, (fio, ours)) in CASES.iter().zip(run_cases("terse")) {
        let fields = |t: &str| -> Vec<usize> {
            t.lines()
                .filter(|l| l.starts_with("3;"))
                .map(|l| l.split(';').count())
                .collect()
        };
        assert_eq!(fields(&ours), fields(&fio), "{case:?}\n{fio}\n{ours}");
    }
}
