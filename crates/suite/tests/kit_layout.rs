//! flashlab-kit's `layout` module on the registered suites.

use flashlab_kit::layout::*;
use flashlab_kit::measure::Coord;
use flashlab_suite::suite;
use flashlab_suite::SuiteOptions;
use flashlab_suite::*;

fn device(name: &str, results: Vec<Measure>) -> DeviceReport {
    DeviceReport {
        device: name.into(),
        scale_note: None,
        steps: Vec::new(),
        steady: None,
        results,
        charts: Vec::new(),
    }
}

fn report(suite: SuiteKind, devices: Vec<DeviceReport>) -> SuiteReport {
    SuiteReport {
        suite,
        options: SuiteOptions::default(),
        devices,
    }
}

fn at(family: &'static str, unit: Unit, value: f64, row: &[Coord]) -> Measure {
    Measure::new(family, unit, value).under(row)
}

fn rows(g: &Grid) -> Vec<String> {
    g.rows.iter().map(|r| g.spec.label(r)).collect()
}

#[test]
fn qos_rows_are_the_depths_and_other_figures_make_no_rows() {
    let (qd1, qd32) = ([Coord::Depth(1)], [Coord::Depth(32)]);
    let p99_9 = Coord::Percentile(99.9);
    let d = device(
        "a",
        vec![
            Measure::new("steady_write_iops", Unit::Iops, 9.0),
            at("iops", Unit::Iops, 100.0, &qd1),
            at("read_iops", Unit::Iops, 70.0, &qd1),
            at("read_lat_ns", Unit::Ns, 2_500_000.0, &qd1).col(p99_9),
            at("iops", Unit::Iops, 900.0, &qd32),
            at("read_iops", Unit::Iops, 630.0, &qd32),
            at("read_lat_ns", Unit::Ns, 9_000_000.0, &qd32).col(p99_9),
        ],
    );
    assert_eq!(d.results[3].key(), "qd1_read_lat_p99_9_ns");
    let r = report(suite("qos").unwrap(), vec![d]);
    let g = grids(&r);
    assert_eq!(g.len(), 1);
    assert_eq!(rows(&g[0]), ["1", "32"]);
    let t = g[0].table(&r.devices[0]).expect("cells");
    // Columns with no value (write IOPS, the other percentiles) are left out.
    // IOPS are said once, in the heading; latencies keep their own units.
    assert_eq!(t.header, ["queue depth", "IOPS", "read IOPS", "p99.9"]);
    assert_eq!(
        t.rows,
        [
            ["1", "100", "70", "2.50 ms"],
            ["32", "900", "630", "9.00 ms"],
        ]
    );
}

#[test]
fn pts_iops_is_a_matrix_of_block_sizes_by_mix() {
    let cell = |mix, bs, v| at("iops", Unit::Iops, v, &[Coord::Mix(mix), Coord::Block(bs)]);
    let tracked = [Coord::Phase("tracked"), Coord::Mix(0), Coord::Block(4096)];
    let d = device(
        "a",
        vec![
            at("iops", Unit::Iops, 5.0, &tracked),
            cell(100, 128 << 10, 1.0),
            cell(100, 4096, 2.0),
            cell(0, 128 << 10, 3.0),
            cell(0, 4096, 4.0),
        ],
    );
    assert_eq!(d.results[0].key(), "tracked_r0w100_4k_iops");
    let r = report(suite("pts-iops").unwrap(), vec![d]);
    let g = grids(&r);
    assert_eq!(rows(&g[0]), ["128k", "4k"]);
    let t = g[0].table(&r.devices[0]).unwrap();
    // Every column in IOPS, and the title says so: the headings are the mixes alone.
    assert_eq!(t.header, ["block size", "100/0", "0/100"]);
    assert_eq!(t.rows[1], ["4k", "2", "4"]);
}

#[test]
fn a_row_needs_every_axis_of_its_family() {
    let step = [Coord::WriteSize(8192), Coord::Step(1)];
    let wp = device(
        "a",
        vec![
            at("target_write_bw_bytes_per_s", Unit::BytesPerS, 1e8, &step),
            at("write_bw_bytes_per_s", Unit::BytesPerS, 9e7, &step),
            at(
                "ceiling_write_bw_bytes_per_s",
                Unit::BytesPerS,
                1e8,
                &[Coord::WriteSize(8192)],
            ),
        ],
    );
    let g = grids(&report(suite("write-pressure").unwrap(), vec![wp]));
    assert_eq!(rows(&g[0]), ["bs8k step001"]);
    let sql = Coord::Profile("sql");
    let app = device(
        "a",
        vec![
            at("iops", Unit::Iops, 1.0, &[sql, Coord::Load(1)]),
            at("read_lat_avg_ns", Unit::Ns, 1.0, &[sql, Coord::Load(1)]),
            at(
                "lat_avg_ns",
                Unit::Ns,
                1.0,
                &[Coord::Profile("sql-90-10"), Coord::Load(16)],
            ),
            at("knee_iops", Unit::Iops, 1.0, &[sql]),
        ],
    );
    let g = grids(&report(suite("app-profiles").unwrap(), vec![app]));
    assert_eq!(rows(&g[0]), ["sql load1", "sql 90 10 load16"]);
    // The knee and the highest load: a row per profile.
    assert_eq!(rows(&g[1]), ["sql"]);
}

#[test]
fn devices_share_the_rows_and_each_shows_only_its_own() {
    let iops = |d, v| at("iops", Unit::Iops, v, &[Coord::Depth(d)]);
    let a = device("a", vec![iops(1, 1.0)]);
    let b = device("b", vec![iops(1, 2.0), iops(8, 3.0)]);
    let r = report(suite("qos").unwrap(), vec![a, b]);
    let g = grids(&r);
    assert_eq!(rows(&g[0]), ["1", "8"]);
    assert_eq!(g[0].table(&r.devices[0]).unwrap().rows.len(), 1);
    assert_eq!(g[0].table(&r.devices[1]).unwrap().rows.len(), 2);
    assert_eq!(
        grid_title(g[0].spec.title, &r, &r.devices[1]),
        "IOPS and read latency per queue depth: b"
    );
}

#[test]
fn health_fields_are_rows_and_before_and_after_columns() {
    let d = device(
        "a",
        vec![
            at(
                "percentage_used",
                Unit::Percent,
                1.0,
                &[Coord::Phase("before")],
            ),
            at(
                "percentage_used",
                Unit::Percent,
                3.0,
                &[Coord::Phase("after")],
            ),
            Measure::new("write_amplification", Unit::Ratio, 2.0),
        ],
    );
    let r = report(suite("endurance").unwrap(), vec![d]);
    let t = grids(&r)[0].table(&r.devices[0]).unwrap();
    assert_eq!(t.header, ["field", "before", "after"]);
    assert_eq!(t.rows, [["percentage_used", "1.000 %", "3.000 %"]]);
}

#[test]
fn a_suite_without_the_family_has_no_grid() {
    let d = device(
        "a",
        vec![Measure::new("steady_write_iops", Unit::Iops, 1.0)],
    );
    assert!(grids(&report(suite("qos").unwrap(), vec![d.clone()])).is_empty());
    assert!(grids(&report(suite("four-corners").unwrap(), vec![d])).is_empty());
}
