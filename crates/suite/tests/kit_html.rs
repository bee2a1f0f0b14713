//! flashlab-kit's `html` module on the registered suites.

use flashlab_kit::html::*;
use flashlab_kit::steady::{SteadyVerdict, WindowCheck};
use flashlab_kit::{Axis, Measure, SteadyReport, StepRecord, SuiteOptions, Unit};
use flashlab_report::Made;
use flashlab_suite::suite;
use flashlab_suite::*;

/// A drive's health log with the fields the tests look at set.
fn health(media_bytes_written: u64, timed_workload_minutes: u64) -> flashlab_device::HealthLog {
    let config = flashlab_device::load_device_config("tiny-test-1gb", &[]).unwrap();
    let ssd = flashlab_device::Ssd::new(&config, flashlab_engine::SeedTree::new(1)).unwrap();
    let mut h = ssd.health_log();
    h.media_bytes_written = media_bytes_written;
    h.percentage_used = 3;
    h.write_amplification = 4.0671;
    h.buffer_wait_ns = 4630554509775;
    h.timed_workload_minutes = timed_workload_minutes;
    h
}

fn device(name: &str, iops: f64) -> DeviceReport {
    DeviceReport {
        device: name.into(),
        scale_note: Some("slice of 1/4".into()),
        steps: vec![
            StepRecord {
                name: "purge".into(),
                kind: flashlab_suite::StepKind::Purge,
                job_text: None,
                fio_json: None,
                figures: None,
                health: None,
                end_ns: 1,
                measures: Vec::new(),
            },
            StepRecord {
                name: "round-05".into(),
                kind: flashlab_suite::StepKind::Job,
                job_text: Some("[x]".into()),
                fio_json: Some("{}".into()),
                figures: None,
                health: Some(health(14293745664, 5)),
                end_ns: 2,
                measures: Vec::new(),
            },
        ],
        steady: Some(SteadyReport {
            rounds_iops: vec![iops; 5],
            verdict: SteadyVerdict {
                round: Some(5),
                window: Some(WindowCheck {
                    mean: iops,
                    range: 0.0,
                    excursion: 0.0,
                    steady: true,
                }),
            },
        }),
        results: vec![Measure::new("steady_write_iops", Unit::Iops, iops)],
        charts: vec![Chart {
            id: "steady-rounds".into(),
            title: "Rounds".into(),
            x: Axis::linear("round", Unit::Count),
            y: Axis::linear("write IOPS", Unit::Iops),
            series: vec![Series {
                name: "write IOPS".into(),
                points: (1..=5).map(|r| (f64::from(r), iops)).collect(),
            }],
            band: Some((1.0, 5.0)),
        }],
    }
}

fn report(devices: Vec<DeviceReport>) -> SuiteReport {
    SuiteReport {
        suite: suite("precondition").unwrap(),
        options: SuiteOptions::default(),
        devices,
    }
}

#[test]
fn several_devices_share_one_figure_per_chart_id() {
    let r = report(vec![device("a", 1000.0), device("b", 2000.0)]);
    let figs = merged_figures(&r);
    assert_eq!(figs.len(), 1);
    let names: Vec<&str> = figs[0]
        .chart
        .series
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["a: write IOPS", "b: write IOPS"]);
    assert_eq!(figs[0].bands.len(), 2);
    assert_eq!(figs[0].bands[1].series, Some(1));
    assert_eq!(figs[0].bands[1].label, "b: round 1–5");
    let html = render_html(&r);
    assert_eq!(html.matches("data-chart-id=\"steady-rounds\"").count(), 1);
    assert!(html.contains("data-points=\"10\""));
}

#[test]
fn page_has_results_verdict_health_and_scale_note() {
    let r = report(vec![device("a<1>", 1234.0)]);
    let html = render_html(&r);
    assert_eq!(html, render_html(&r));
    assert!(html.contains("<td class=\"num\">1234 IOPS</td>"), "{html}");
    assert!(html.contains("a&lt;1&gt;: slice of 1/4."));
    assert!(!html.contains("simulated as a slice"));
    assert!(html.contains("<td>round 5</td>"));
    assert!(html.contains("rounds 1–5"));
    assert!(html.contains("After the only step, round-05."));
    assert!(html.contains("14,293,745,664 (14.29 GB)"), "{html}");
    assert!(html.contains("4,630,554,509,775 (4630.55 s)"), "{html}");
    assert!(html.contains("<td class=\"num\">4.067</td>"));
    // A single device keeps its own series names and its band grey.
    assert!(html.contains("write IOPS") && !html.contains("a&lt;1&gt;: write IOPS"));
}

#[test]
fn families_of_results_come_as_grids_before_the_key_list() {
    let mut d = device("a", 1.0);
    d.results.push(
        Measure::new("read_lat_avg_ns", Unit::Ns, 250_000.0)
            .under(&[flashlab_suite::Coord::Depth(8)]),
    );
    let mut r = report(vec![d]);
    r.suite = suite("qos").unwrap();
    let html = render_html(&r);
    let grid = html
        .find("<h3>IOPS and read latency per queue depth</h3>")
        .expect("the qos grid");
    let keys = html
        .find("<h2>Every result by key</h2>\n<details>\n<summary>")
        .expect("the key list, folded");
    assert!(grid < keys);
    // A column of numbers has its heading on the right.
    assert!(html.contains("<th class=\"num\">read avg</th><"), "{html}");
    assert!(
        html.contains("<td>8</td><td class=\"num\">250.0 us</td>"),
        "{html}"
    );
    // Without a family there is only the key list, under no heading of its own.
    r.suite = suite("precondition").unwrap();
    assert!(!render_html(&r).contains("Every result by key"));
}

/// The desktop suite's summary names the test file size the run used (`--size`), in
/// the page and the terminal's table, not the default's.
#[test]
fn the_desktop_summary_names_the_test_file_size_used() {
    let mut r = report(vec![device("a", 1000.0)]);
    r.suite = suite("desktop").unwrap();
    assert!(render_html(&r).contains("on a 1 GiB test file"));
    r.options.client.size_bytes = Some(256 << 20);
    for page in [render_html(&r), flashlab_kit::output::render_table(&r)] {
        assert!(
            page.contains("CrystalDiskMark 8 test sets on a 256 MiB test file"),
            "{page}"
        );
        assert!(!page.contains("1 GiB"), "{page}");
    }
}

#[test]
fn summary_comes_first_then_charts_then_tables() {
    let r = report(vec![device("a", 1000.0)]);
    let made = Made {
        command: Some("flashlab suite precondition --device a"),
        commit: None,
        date: None,
    };
    let html = render_html_with(&r, &made);
    let at = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("{needle}"));
    let summary = at("<h2>Summary</h2>");
    let charts = at("<h2>Charts</h2>");
    let results = at("<h2>Results</h2>");
    assert!(summary < charts && charts < results, "{html}");
    let made = at(&format!(
        "Made by flashlab {} with: flashlab suite precondition --device a",
        env!("CARGO_PKG_VERSION")
    ));
    assert!(summary < made && made < charts);
    assert!(at("Device: a.") < charts);
    assert!(at("Steady state: a: round 5.") < charts);
    // The charts as files: the page's own, standalone.
    let svgs = render_figures_svg(&r);
    assert_eq!(svgs.len(), 1);
    assert_eq!(svgs[0].0, "steady-rounds");
    assert!(svgs[0].1.starts_with("<svg"), "{}", svgs[0].1);
}

#[test]
fn health_shows_what_changed_and_sentinels_as_not_available() {
    let mut d = device("a", 1.0);
    d.steps.push(StepRecord {
        name: "round-06".into(),
        kind: flashlab_suite::StepKind::Job,
        job_text: Some("[x]".into()),
        fio_json: Some("{}".into()),
        figures: None,
        health: Some(health(20_000_000_000, 65535)),
        end_ns: 3,
        measures: Vec::new(),
    });
    let html = render_html(&report(vec![d]));
    assert!(html.contains("from the first step (round-05) to the last (round-06)"));
    assert!(html.contains(
        "<tr><td>media_bytes_written</td><td class=\"num\">14,293,745,664 (14.29 GB)</td><td class=\"num\">20,000,000,000 (20.00 GB)</td></tr>"
    ), "{html}");
    assert!(
        html.contains(
            "<tr><td>timed_workload_minutes</td><td class=\"num\">5</td><td>not available</td></tr>"
        ),
        "{html}"
    );
    assert!(!html.contains("65,535"));
    // Unchanged fields are one line, not rows.
    assert!(html.contains("Unchanged: "), "{html}");
    assert!(html.contains("; percentage_used 3;"), "{html}");
    assert!(html.contains("; write_amplification 4.067;"), "{html}");
    assert!(!html.contains("<td>percentage_used</td>"));
}

#[test]
fn missing_health_log_is_said() {
    let mut d = device("a", 1.0);
    d.steps.truncate(1);
    let html = render_html(&report(vec![d]));
    assert!(html.contains("No health log was recorded"));
}

#[test]
fn options_name_preconditioning_rounds_only_where_they_ran() {
    let with = render_html_with(&report(vec![device("a", 1000.0)]), &Made::default());
    assert!(with.contains("preconditioning rounds of"), "{with}");
    let mut d = device("a", 1000.0);
    d.steady = None;
    let without = render_html_with(&report(vec![d]), &Made::default());
    assert!(without.contains("Options: seed "), "{without}");
    assert!(!without.contains("preconditioning rounds"), "{without}");
    assert!(!without.contains("at most "), "{without}");
}
