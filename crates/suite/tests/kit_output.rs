//! flashlab-kit's `output` module on the registered suites.

use flashlab_kit::steady::{SteadyVerdict, WindowCheck};
use flashlab_kit::{SteadyReport, SuiteOptions};
use flashlab_suite::suite;
use flashlab_suite::Coord;
use flashlab_suite::Unit;
use flashlab_suite::*;
use serde_json::Value;

fn report() -> SuiteReport {
    let dev = |name: &str, iops: f64, reached: bool| DeviceReport {
        device: name.into(),
        scale_note: None,
        steps: Vec::new(),
        charts: Vec::new(),
        steady: Some(SteadyReport {
            rounds_iops: vec![iops; 5],
            verdict: SteadyVerdict {
                round: reached.then_some(5),
                window: Some(WindowCheck {
                    mean: iops,
                    range: 0.0,
                    excursion: 0.0,
                    steady: reached,
                }),
            },
        }),
        results: vec![Measure::new("rand_write_4k_iops", Unit::Iops, iops)],
    };
    SuiteReport {
        suite: suite("four-corners").unwrap(),
        options: SuiteOptions::default(),
        devices: vec![dev("a,b", 1234.4, true), dev("c", 99.0, false)],
    }
}

#[test]
fn table_puts_devices_side_by_side() {
    let t = render_table(&report());
    let row = t
        .lines()
        .find(|l| l.starts_with("rand_write_4k_iops"))
        .unwrap();
    assert!(row.contains("1234 IOPS") && row.contains("99 IOPS"), "{t}");
    let steady = t.lines().find(|l| l.starts_with("steady state")).unwrap();
    assert!(steady.contains("round 5") && steady.contains("not reached (5 rounds)"));
}

#[test]
fn table_ends_with_each_devices_grids() {
    let mut r = report();
    r.suite = suite("qos").unwrap();
    for (d, v) in r.devices.iter_mut().zip([250_000.0, 1_500_000.0]) {
        d.results
            .push(Measure::new("read_lat_avg_ns", Unit::Ns, v).under(&[Coord::Depth(8)]));
    }
    let t = render_table(&r);
    let tail: Vec<&str> = t.lines().skip_while(|l| !l.is_empty()).collect();
    assert_eq!(
        tail,
        [
            "",
            "IOPS and read latency per queue depth: a,b",
            "queue depth  read avg",
            "8            250.0 us",
            "",
            "IOPS and read latency per queue depth: c",
            "queue depth  read avg",
            "8             1.50 ms",
        ],
        "{t}"
    );
}

#[test]
fn csv_quotes_and_lists_every_result() {
    let c = render_csv(&report());
    assert_eq!(
        c,
        "device,metric,unit,value\n\"a,b\",steady_state_round,,5\n\"a,b\",rand_write_4k_iops,IOPS,1234.4\nc,steady_state_round,,\nc,rand_write_4k_iops,IOPS,99\n"
    );
}

#[test]
fn tidy_csv_has_a_column_per_axis_used_and_a_row_per_result() {
    let mut r = report();
    r.suite = suite("qos").unwrap();
    for (d, v) in r.devices.iter_mut().zip([250_000.0, 1_500_000.0]) {
        d.results.push(
            Measure::new("read_lat_ns", Unit::Ns, v)
                .col(Coord::Percentile(99.9))
                .under(&[Coord::Depth(32)]),
        );
    }
    let c = render_tidy_csv(&r);
    assert_eq!(
        c,
        "device,metric,family,queue_depth,percentile,unit,value\n\
         \"a,b\",rand_write_4k_iops,rand_write_4k_iops,,,IOPS,1234.4\n\
         \"a,b\",qd32_read_lat_p99_9_ns,read_lat_ns,32,99.9,ns,250000\n\
         c,rand_write_4k_iops,rand_write_4k_iops,,,IOPS,99\n\
         c,qd32_read_lat_p99_9_ns,read_lat_ns,32,99.9,ns,1500000\n"
    );
}

#[test]
fn json_holds_devices_in_order_with_verdicts() {
    let v: Value = serde_json::from_str(&render_json(&report())).unwrap();
    assert_eq!(v["suite"], "four-corners");
    assert_eq!(v["devices"][0]["device"], "a,b");
    assert_eq!(v["devices"][0]["steady_state"]["round"], 5);
    assert_eq!(v["devices"][1]["steady_state"]["reached"], false);
    assert_eq!(v["devices"][1]["results"]["rand_write_4k_iops"], 99.0);
    assert_eq!(v["units"]["rand_write_4k_iops"], "IOPS");
}
