//! flashlab-kit's `charts` module on the registered suites.

use flashlab_kit::charts::*;
use flashlab_kit::{DeviceReport, JobFigures, StepRecord, SuiteOptions};
use flashlab_report::html::FigureKind;
use flashlab_suite::*;

/// The figures of one job step (`rwmixread=70` for a mixed one).
fn fio_json(rw: &str, bs: &str, iodepth: u32, read_iops: f64, write_iops: f64) -> JobFigures {
    let dir = |iops: f64, lat_ns: f64| DirectionFigures {
        ios: (iops * 2.0) as u64,
        iops,
        bw_bytes_per_s: iops * 4096.0,
        clat_mean_ns: lat_ns,
        percentiles: vec![(50.0, lat_ns), (99.0, lat_ns * 3.0), (99.99, lat_ns * 5.0)],
    };
    let lat = 1000.0 * f64::from(iodepth);
    let bs_bytes = match bs.strip_suffix('k') {
        Some(k) => k.parse::<u64>().unwrap() << 10,
        None => bs.trim_end_matches('m').parse::<u64>().unwrap() << 20,
    };
    let workload = if matches!(rw, "randrw" | "rw") {
        format!("{bs} {rw} 70/30")
    } else {
        format!("{bs} {rw}")
    };
    JobFigures {
        workload,
        random: rw.starts_with("rand"),
        bs_bytes,
        iodepth,
        numjobs: 1,
        read: dir(read_iops, lat),
        write: dir(write_iops, lat * 2.0),
        distribution: vec![
            (2.0, 0.0),
            (1000.0, 0.0),
            (2000.0, 10.0),
            (4000.0, 40.0),
            (10_000.0, 50.0),
            (2e6, 0.0),
        ],
    }
}

fn step(name: &str, figures: JobFigures) -> StepRecord {
    StepRecord {
        name: name.into(),
        kind: StepKind::Job,
        job_text: Some("[x]".into()),
        fio_json: Some("{}".into()),
        figures: Some(figures),
        health: None,
        end_ns: 1,
        measures: Vec::new(),
    }
}

fn device(name: &str, steps: Vec<StepRecord>) -> DeviceReport {
    DeviceReport {
        device: name.into(),
        scale_note: None,
        steps,
        steady: None,
        results: Vec::new(),
        charts: Vec::new(),
    }
}

fn report(kind: &str, devices: Vec<DeviceReport>) -> SuiteReport {
    SuiteReport {
        suite: suite(kind).unwrap(),
        options: SuiteOptions::default(),
        devices,
    }
}

#[test]
fn one_workload_at_several_depths_is_a_latency_curve_per_drive() {
    let steps = |scale: f64| {
        vec![
            step("fill", fio_json("write", "128k", 32, 0.0, 900.0)),
            step("qos-qd1", fio_json("randrw", "4k", 1, 700.0 * scale, 300.0)),
            step(
                "qos-qd8",
                fio_json("randrw", "4k", 8, 2100.0 * scale, 900.0),
            ),
        ]
    };
    let r = report(
        "qos",
        vec![device("a", steps(1.0)), device("b", steps(2.0))],
    );
    let figs = report_figures(&r).figures;
    let ids: Vec<&str> = figs.iter().map(|f| f.chart.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "latency-iops-4k-randrw-70-30",
            "latency-percentiles-at-each-queue-depth-4k-randrw-70-30",
            "latency-cdf-at-each-queue-depth-4k-randrw-70-30"
        ]
    );
    let curve = &figs[0];
    let names: Vec<&str> = curve.chart.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "a: mean",
            "a: 99th percentile",
            "b: mean",
            "b: 99th percentile"
        ]
    );
    // x is total IOPS, y the N-weighted mean of both directions, points by depth.
    assert_eq!(curve.chart.series[2].points[0].0, 1400.0 + 300.0);
    let (r_ios, w_ios) = (2800.0, 600.0);
    let mean = (r_ios * 1000.0 + w_ios * 2000.0) / (r_ios + w_ios);
    assert!((curve.chart.series[2].points[0].1 - mean).abs() < 1e-6);
    assert_eq!(curve.labels[0], ["QD1", "QD8"]);
    assert_eq!(curve.colours, [0, 0, 1, 1]);
    assert_eq!(curve.secondary, [1, 3]);
    // Percentiles on the nines axis: 99 % at 2, 99.99 % at 4.
    let pct = &figs[1];
    assert_eq!(pct.chart.series.len(), 4);
    let xs: Vec<f64> = pct.chart.series[0].points.iter().map(|p| p.0).collect();
    assert!(
        (xs[1] - 2.0).abs() < 1e-9 && (xs[2] - 4.0).abs() < 1e-9,
        "{xs:?}"
    );
    let ticks: Vec<&str> = pct.x_ticks.iter().map(|t| t.1.as_str()).collect();
    assert_eq!(ticks, ["50", "90", "99", "99.9", "99.99"]);
    // The CDF starts at 0 below the first bucket and ends at 100 %.
    let cdf = &figs[2].chart.series[0].points;
    assert_eq!(cdf.first(), Some(&(1000.0, 0.0)));
    assert_eq!(cdf.last(), Some(&(10_000.0, 100.0)));
    // The JSON and CSV carry the same points.
    let j = figure_json(curve);
    assert_eq!(j["series"][0]["labels"][1], "QD8");
    assert_eq!(j["series"][1]["secondary"], true);
    let csv = figures_csv(&figs);
    assert!(csv.starts_with("figure,series,x,x_name,y,label\n"));
    assert!(
        csv.contains("latency-iops-4k-randrw-70-30,a: mean,1000,,"),
        "{csv}"
    );
}

#[test]
fn tests_at_one_depth_each_give_distributions_per_drive_not_curves() {
    let steps = vec![
        step("seq-read-128k", fio_json("read", "128k", 32, 100.0, 0.0)),
        step("rand-read-4k", fio_json("randread", "4k", 32, 5000.0, 0.0)),
    ];
    let r = report(
        "precondition",
        vec![device("a", steps.clone()), device("b", steps)],
    );
    let ids: Vec<String> = report_figures(&r)
        .figures
        .into_iter()
        .map(|f| f.chart.id)
        .collect();
    assert_eq!(
        ids,
        [
            "latency-percentiles-of-each-test-a",
            "latency-cdf-of-each-test-a",
            "latency-percentiles-of-each-test-b",
            "latency-cdf-of-each-test-b"
        ]
    );
}

#[test]
fn four_corners_are_bars_beside_the_published_figures() {
    let steps = vec![
        step("seq-read-128k", fio_json("read", "128k", 32, 50_000.0, 0.0)),
        step(
            "seq-write-128k",
            fio_json("write", "128k", 32, 0.0, 25_000.0),
        ),
        step(
            "rand-read-4k",
            fio_json("randread", "4k", 32, 800_000.0, 0.0),
        ),
    ];
    let r = report(
        "four-corners",
        vec![
            device("samsung-pm9a3-7.68tb", steps.clone()),
            device("x", steps),
        ],
    );
    let figs = report_figures(&r).figures;
    assert_eq!(figs[0].chart.id, "four-corners-sequential-128-kib");
    assert_eq!(figs[1].chart.id, "four-corners-random-4-kib");
    assert!(figs.iter().take(2).all(|f| f.kind == FigureKind::Bars));
    let seq = &figs[0];
    let names: Vec<&str> = seq.chart.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "samsung-pm9a3-7.68tb: measured",
            "samsung-pm9a3-7.68tb: published",
            "x: measured"
        ]
    );
    assert_eq!(seq.secondary, [1]);
    assert_eq!(seq.colours, [0, 0, 1]);
    // The published 6,500 MB/s read, in bytes per second, at the read category.
    assert_eq!(seq.chart.series[1].points[0], (0.0, 6.5e9));
    assert_eq!(seq.chart.series[0].points[0], (0.0, 50_000.0 * 4096.0));
    let note = seq.note.as_deref().unwrap();
    assert!(note.contains("heise.de/-4720224"), "{note}");
    assert!(!note.contains("controller."), "{note}");
    // Without steady-state rounds there is no random-write bar.
    assert_eq!(figs[1].chart.series[0].points.len(), 1);
}

#[test]
fn desktop_tests_are_bars_of_the_best_measured_run() {
    let mut steps = vec![step("test-file", fio_json("write", "1m", 1, 0.0, 50.0))];
    for (run, iops) in [(0, 900.0), (1, 200.0), (2, 300.0)] {
        steps.push(step(
            &format!("seq1m-q8t1-read-{run}"),
            fio_json("read", "1m", 8, iops, 0.0),
        ));
    }
    let r = report("desktop", vec![device("a", steps.clone())]);
    let rf = report_figures(&r);
    assert_eq!(rf.replaces, ["desktop-tests"]);
    let ids: Vec<&str> = rf.figures.iter().map(|f| f.chart.id.as_str()).collect();
    assert_eq!(ids[0], "desktop-read");
    let read = &rf.figures[0];
    assert_eq!(read.x_ticks, [(0.0, "SEQ1M Q8T1".to_string())]);
    // Run 0 prepares: the best of runs 1 and 2.
    assert_eq!(read.chart.series[0].points, [(0.0, 300.0 * 4096.0)]);
    // The test file is written once: not a test, so no write figure.
    assert!(!ids.contains(&"desktop-write"));

    // Writes in the suite's order, after the test file (1 MiB at QD1, SEQ1M Q1T1's
    // shape, and faster than any run here): it is neither a run nor first in the order.
    for (test, qd, runs) in [
        ("seq1m-q8t1", 8, [70.0, 20.0, 30.0]),
        ("seq1m-q1t1", 1, [60.0, 10.0, 15.0]),
    ] {
        for (run, iops) in runs.into_iter().enumerate() {
            steps.push(step(
                &format!("{test}-write-{run}"),
                fio_json("write", "1m", qd, 0.0, iops),
            ));
        }
    }
    let r = report("desktop", vec![device("a", steps)]);
    let figs = report_figures(&r).figures;
    let write = figs.iter().find(|f| f.chart.id == "desktop-write").unwrap();
    let ticks: Vec<&str> = write.x_ticks.iter().map(|t| t.1.as_str()).collect();
    assert_eq!(ticks, ["SEQ1M Q8T1", "SEQ1M Q1T1"]);
    assert_eq!(
        write.chart.series[0].points,
        [(0.0, 30.0 * 4096.0), (1.0, 15.0 * 4096.0)]
    );
}
