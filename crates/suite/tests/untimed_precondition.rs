//! Preconditioning at the speed of the mapping (docs/explain-preconditioning.md): the suites'
//! fills run without the timing model unless `--timed-precondition` asks for it, and what is
//! measured after them agrees with what the timed fills give. For the suites whose
//! preconditioning is the shared one (purge, two 128 KiB sequential passes, 4 KiB random
//! rounds to the SNIA steady state) on the default drive, the D5-P5430 15.36 TB and the
//! PM981a, each as a slice: every IOPS and bandwidth within 2%, every write amplification
//! within 1%, every latency within 5%.
//!
//! The rounds are the suites' own (a quarter of the capacity, to steady state), the measured
//! windows 1 s of the drive's time.

mod common;

use crate::common::run_on_device;
use flashlab_device::{load_device_config, DeviceConfig};
use flashlab_engine::NS_PER_S;
use flashlab_suite::{DeviceReport, Measure, StepKind, SuiteOptions, Unit};

/// The drives and the slices they run as: the smallest that keep every die (a few dozen
/// blocks per plane more than the 64 a capacity cut keeps at least), where random writes
/// are simulated as on the whole drive (docs/scale.md).
const DRIVES: [(&str, &str); 3] = [
    ("generic-tlc-256gb", "0.1"),
    ("solidigm-d5-p5430-15.36tb", "0.02"),
    ("samsung-pm981a-256gb", "0.16"),
];

/// `four-corners` measures after the fill (sequential and random reads and writes) and at the
/// steady state the rounds reach; `qos` the latency percentiles of a mix on the steady drive.
/// `precondition` measures what `four-corners`' rounds measure.
const SUITES: [&str; 2] = ["four-corners", "qos"];

fn drive(name: &str, scale: &str) -> DeviceConfig {
    load_device_config(name, &[("sim.scale".to_string(), scale.to_string())])
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn options(timed: bool) -> SuiteOptions {
    let mut o = common::short_options(NS_PER_S);
    o.round = flashlab_suite::RoundLength::CapacityFraction(0.25);
    o.max_rounds = 25;
    o.timed_precondition = timed;
    o
}

/// What a figure may move by between the two paths, by what it measures; `None`: not a
/// measured figure of the drive (counts of rounds, depths, the steady window's spreads, a
/// single round's IOPS on the way to steady state).
fn tolerance(m: &Measure) -> Option<f64> {
    if m.key().contains("round") || m.family.starts_with("window_") {
        return None;
    }
    match m.unit {
        Unit::Iops | Unit::BytesPerS => Some(0.02),
        Unit::Ns => Some(0.05),
        _ if m.family.contains("wa") => Some(0.01),
        _ => None,
    }
}

/// (figure, timed, untimed, allowed) of every figure out of tolerance.
fn misses(timed: &DeviceReport, fast: &DeviceReport) -> Vec<(String, f64, f64, f64)> {
    let mut out = Vec::new();
    for m in &timed.results {
        let Some(tol) = tolerance(m) else { continue };
        let other = fast.results.iter().find(|f| f.key() == m.key());
        let Some(other) = other else {
            out.push((m.key(), m.value, f64::NAN, tol));
            continue;
        };
        if (other.value - m.value).abs() > tol * m.value.abs() {
            out.push((m.key(), m.value, other.value, tol));
        }
    }
    out
}

/// Both suites on drive `index` of [`DRIVES`], timed and untimed: every figure out of
/// tolerance, as lines.
fn disagreements(index: usize) -> Vec<String> {
    let (name, scale) = DRIVES[index];
    let config = drive(name, scale);
    let mut failed = Vec::new();
    for suite in SUITES {
        let kind = flashlab_suite::suite(suite).unwrap();
        let run = |timed| {
            run_on_device(kind, &config, &options(timed))
                .unwrap_or_else(|e| panic!("{suite} on {name}: {e}"))
        };
        let (timed, fast) = (run(true), run(false));
        // The untimed path ran: its fill is a driven step, the timed one's a job.
        let fill_kind =
            |d: &DeviceReport| d.steps.iter().find(|s| s.name == "fill").map(|s| s.kind);
        assert_eq!(fill_kind(&timed), Some(StepKind::Job), "{suite} on {name}");
        assert_eq!(
            fill_kind(&fast),
            Some(StepKind::Driven),
            "{suite} on {name}"
        );
        for miss in misses(&timed, &fast) {
            failed.push(format!("{suite} on {name}: {miss:?}"));
        }
    }
    failed
}

fn check(index: usize) {
    let failed = disagreements(index);
    assert!(
        failed.is_empty(),
        "(figure, timed, untimed, tolerance):\n{}",
        failed.join("\n")
    );
}

#[test]
fn the_default_drive_measures_the_same_after_untimed_fills() {
    check(0);
}

#[test]
fn the_d5_p5430_measures_the_same_after_untimed_fills() {
    check(1);
}

#[test]
fn the_pm981a_measures_the_same_after_untimed_fills() {
    check(2);
}
