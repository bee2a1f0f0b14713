//! Every built-in suite writes at random offsets the way the methods it follows do: uniform
//! random with repeats (`norandommap=1`), never with fio's random map, which writes each block
//! once per pass and leaves garbage collection too little to copy (docs/explain-gc.md,
//! "Random writes with repeats"). Each suite runs on the tiny drive with the shortest settings
//! it takes; every job step it records is parsed again and checked. Its output is checked for
//! the suite's grids too (`flashlab_suite::grid_titles`).

use crate::common;

use crate::common::run_on_device;
use flashlab_device::load_device_config;
use flashlab_engine::NS_PER_MS;
use flashlab_suite::{
    grid_titles, render_table, suite, DeviceReport, EnduranceWorkload, PreconditionKind,
    RecoveryVariant, StepKind, StepRecord, SuiteKind, SuiteOptions, SuiteReport,
};
use flashlab_workload::{RandomDistribution, RwPattern};

fn short() -> SuiteOptions {
    common::short_options(20 * NS_PER_MS)
}

/// Random writes, trims and mixes: the patterns whose offsets change what GC finds.
fn writes_randomly(rw: RwPattern) -> bool {
    matches!(
        rw,
        RwPattern::RandWrite | RwPattern::RandTrim | RwPattern::RandRw | RwPattern::RandTrimWrite
    )
}

/// Names of the jobs in `d`'s recorded steps that write uniformly at random with fio's random
/// map, and how many random-write jobs were seen.
fn random_map_writers(d: &DeviceReport) -> (Vec<String>, usize) {
    let mut bad = Vec::new();
    let mut seen = 0;
    for step in &d.steps {
        let Some(text) = &step.job_text else { continue };
        let file = flashlab_workload::parse_str(text, &format!("{}.fio", step.name), &|_| None)
            .unwrap_or_else(|e| panic!("step {} does not parse: {e}", step.name));
        for job in &file.jobs {
            if !writes_randomly(job.io.rw) {
                continue;
            }
            seen += 1;
            // Skewed distributions draw every offset independently anyway.
            if job.io.random_distribution != RandomDistribution::Random {
                continue;
            }
            let visible = job
                .id
                .options_as_written
                .iter()
                .any(|(k, v)| k == "norandommap" && v == "1");
            if !job.io.norandommap || !visible {
                bad.push(format!("{}/{}", step.name, job.id.name));
            }
        }
    }
    (bad, seen)
}

/// Runs `kind` on the tiny drive; returns the random-write jobs seen and the terminal table.
fn check(kind: SuiteKind, o: &SuiteOptions) -> (usize, String) {
    let config = load_device_config("tiny-test-1gb", &[]).unwrap();
    let d = run_on_device(kind, &config, o).unwrap_or_else(|e| panic!("{}: {e}", kind.name()));
    let (bad, seen) = random_map_writers(&d);
    assert!(
        bad.is_empty(),
        "{}: random writes with fio's random map: {bad:?}",
        kind.name()
    );
    let table = render_table(&SuiteReport {
        suite: kind,
        options: o.clone(),
        devices: vec![d],
    });
    // The grids are found among the results by their families and row axes: a figure
    // renamed or placed on other axes in a suite would make its grid vanish without this.
    // (A variant may lay out one grid of several: recovery's dirty drive or host idle
    // recovery.)
    let titles = grid_titles(kind);
    assert!(
        titles.is_empty() || titles.iter().any(|t| has_grid(&table, t)),
        "{}: none of the grids {titles:?} in\n{table}",
        kind.name()
    );
    (seen, table)
}

/// Whether `table` lays out the grid `title` with at least one row.
fn has_grid(table: &str, title: &str) -> bool {
    table
        .split("\n\n")
        .any(|block| block.starts_with(title) && block.lines().count() >= 3)
}

#[test]
fn every_suite_writes_uniformly_at_random_with_repeats() {
    let o = short();
    // Suites without random writes (sequential, reads) still run: a random write added to
    // one later is checked.
    let mut writers = Vec::new();
    for &kind in flashlab_suite::SUITES {
        if check(kind, &o).0 > 0 {
            writers.push(kind.name());
        }
    }
    // The variants with generators of their own.
    let mut hir = o.clone();
    hir.own_mut::<flashlab_suite::RecoveryOptions>().variant = RecoveryVariant::Hir;
    let (_, table) = check(suite("recovery").unwrap(), &hir);
    assert!(has_grid(
        &table,
        "Host idle recovery: bursts after each idle time"
    ));
    let mut random = o.clone();
    random
        .own_mut::<flashlab_suite::EnduranceOptions>()
        .workload = EnduranceWorkload::Random4k;
    check(suite("endurance").unwrap(), &random);
    let mut showdown = o.clone();
    showdown.precondition.kind = PreconditionKind::Showdown;
    check(suite("app-profiles").unwrap(), &showdown);
    // The check saw the suites that write at random (it would pass vacuously otherwise).
    for name in [
        "precondition",
        "four-corners",
        "qos",
        "pts-iops",
        "pts-latency",
        "desktop",
        "wsat",
        "op-sweep",
        "raid-scaling",
        "write-pressure",
        "noisy-neighbor",
        "power",
        "app-profiles",
    ] {
        assert!(writers.contains(&name), "{name} not among {writers:?}");
    }
}

#[test]
fn the_check_names_a_random_write_with_the_random_map() {
    let step = |name: &str, text: &str| StepRecord {
        name: name.into(),
        kind: StepKind::Job,
        job_text: Some(text.into()),
        fio_json: None,
        figures: None,
        health: None,
        end_ns: 0,
        measures: Vec::new(),
    };
    let d = DeviceReport {
        device: "x".into(),
        scale_note: None,
        steps: vec![
            step("mapped", "[w]\nrw=randwrite\nbs=4k\nsize=100%\n"),
            step(
                "repeats",
                "[w]\nrw=randrw\nnorandommap=1\nbs=4k\nsize=100%\n",
            ),
            // Set in [global] only: it applies, but the job's own options do not show it.
            step(
                "hidden",
                "[global]\nnorandommap=1\n[w]\nrw=randwrite\nsize=100%\n",
            ),
            step(
                "zipf",
                "[w]\nrw=randwrite\nrandom_distribution=zipf:1.2\nsize=100%\n",
            ),
            step("reads", "[r]\nrw=randread\nsize=100%\n"),
        ],
        steady: None,
        results: Vec::new(),
        charts: Vec::new(),
    };
    let (bad, seen) = random_map_writers(&d);
    assert_eq!(bad, ["mapped/w", "hidden/w"]);
    assert_eq!(seen, 4);
}
