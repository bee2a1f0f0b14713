//! fio's steady-state job termination through the binary: a job that reaches steady state
//! stops early and reports its window in fio's JSON and normal output; one that never does
//! runs its runtime; bad options exit 2.

mod common;
use common::{run_job, stderr, stdout};

const FILL_THEN_STEADY: &str = "
[global]
direct=1
ioengine=libaio
[fill]
rw=write
bs=128k
iodepth=32
size=100%
[steady]
stonewall
rw=randwrite
bs=4k
iodepth=32
time_based
runtime=600
";

fn run_json(name: &str, ss: &str) -> serde_json::Value {
    let out = run_job(
        name,
        &format!("{FILL_THEN_STEADY}{ss}"),
        "tiny-test-1gb",
        "json",
    );
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("JSON output")
}

#[test]
fn a_job_reaching_steady_state_stops_and_reports_its_window() {
    let v = run_json(
        "ss-slope.fio",
        "ss=iops_slope:0.5%\nss_dur=30\nss_ramp=10\n",
    );
    let job = &v["jobs"][1];
    let ss = &job["steadystate"];
    assert_eq!(ss["ss"], "iops_slope:0.500000%");
    assert_eq!(ss["duration"], 30);
    assert_eq!(ss["attained"], 1);
    // It ran at least the ramp and one window, and stopped well before its runtime.
    let runtime_ms = job["write"]["runtime"].as_u64().unwrap();
    assert!((40_000..600_000).contains(&runtime_ms), "{runtime_ms}");
    let iops: Vec<f64> = ss["data"]["iops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(iops.len(), 30);
    // The criterion is the window's least-squares slope as a share of its mean.
    let n = iops.len() as f64;
    let mean = iops.iter().sum::<f64>() / n;
    let mx = (n - 1.0) / 2.0;
    let slope = iops
        .iter()
        .enumerate()
        .map(|(i, y)| (i as f64 - mx) * (y - mean))
        .sum::<f64>()
        / (0..iops.len())
            .map(|i| (i as f64 - mx).powi(2))
            .sum::<f64>();
    assert!((ss["slope"].as_f64().unwrap() - slope).abs() < 1e-3 * slope.abs().max(1.0));
    let criterion: f64 = ss["criterion"]
        .as_str()
        .unwrap()
        .trim_end_matches('%')
        .parse()
        .unwrap();
    assert!(
        (criterion - 100.0 * slope / mean).abs() < 1e-4,
        "{criterion}"
    );
    assert!(criterion.abs() < 0.5);
    assert_eq!(ss["data"]["iops_mean"].as_u64().unwrap(), (mean as u64));
    // fio's key order: the report is the job's last member.
    let keys: Vec<&String> = job.as_object().unwrap().keys().collect();
    assert_eq!(keys.last().map(|k| k.as_str()), Some("steadystate"));
}

#[test]
fn a_job_never_steady_runs_its_runtime_and_the_normal_output_says_so() {
    let ss = "runtime=20\nss=iops:0%\nss_dur=5\n";
    let v = run_json("ss-never.fio", ss);
    let job = &v["jobs"][1];
    assert_eq!(job["steadystate"]["attained"], 0);
    assert_eq!(job["write"]["runtime"], 20_000);
    let text = format!("{FILL_THEN_STEADY}{ss}");
    let out = run_job("ss-never-normal.fio", &text, "tiny-test-1gb", "normal");
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.starts_with("  steadystate  : "))
        .unwrap_or_else(|| panic!("no steadystate line in\n{text}"));
    assert!(
        line.starts_with("  steadystate  : attained=no, bw="),
        "{line}"
    );
    assert!(line.contains(", iops mean dev="), "{line}");
}

#[test]
fn bad_steadystate_options_exit_2_naming_the_line() {
    for (text, needle) in [
        ("ss=iops_slope:1%\nss_dur=1\n", "at least 2 samples"),
        ("ss=latency:1%\nss_dur=10\n", "unknown criterion"),
        ("ss=iops:5%\nss_dur=0.5\n", "a whole number of seconds"),
    ] {
        let job = format!("{FILL_THEN_STEADY}{text}");
        let out = run_job("ss-bad.fio", &job, "tiny-test-1gb", "normal");
        assert_eq!(out.status.code(), Some(2), "{text}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("ss-bad.fio:") && err.contains(needle),
            "{text}: {err}"
        );
    }
}
