//! The PTS and client suites end to end on the tiny test drive, with short cells: the shape
//! of their results and the behaviour they exist to show.

use crate::common::{run_on_device, run_suite_with};
use flashlab_device::{load_device_config, DeviceConfig};
use flashlab_engine::NS_PER_MS;
use flashlab_suite::{
    render_csv, render_json, suite, ClientOptions, DesktopOptions, DeviceReport, DriveState,
    SuiteKind, SuiteOptions, TransferSweepOptions,
};

const DEVICE: &str = "tiny-test-1gb";

fn config() -> DeviceConfig {
    load_device_config(DEVICE, &[]).expect("preset loads")
}

fn run(kind: SuiteKind, opts: &SuiteOptions) -> DeviceReport {
    run_on_device(kind, &config(), opts).expect("suite runs")
}

fn value(d: &DeviceReport, key: &str) -> f64 {
    d.results
        .iter()
        .find(|m| m.key() == key)
        .unwrap_or_else(|| panic!("no result {key}"))
        .value
}

/// Short cells and the fewest rounds the rule allows: these tests check the mechanics and the
/// direction of effects, not converged figures.
fn short(runtime_ms: u64) -> SuiteOptions {
    SuiteOptions {
        runtime_ns: Some(runtime_ms * NS_PER_MS),
        max_rounds: 5,
        ..Default::default()
    }
}

#[test]
fn pts_iops_reports_56_cells_and_small_writes_cost_read_modify_write() {
    // 300 ms cells: in steady state a 512 B write waits for the read of its 4 KiB IU, and
    // the tiny drive's dies serve reads in order behind queued programs; when a cell starts,
    // those are the 2 MiB write buffer's (plus their garbage collection) at the ~10 MB/s
    // the drive sustains, about 200 ms. In a 100 ms cell no 512 B write completes.
    let d = run(suite("pts-iops").unwrap(), &short(300));
    let cells: Vec<_> = d
        .results
        .iter()
        .filter(|m| m.key().starts_with('r') && m.key().ends_with("_iops"))
        .collect();
    assert_eq!(cells.len(), 56, "{:?}", d.results);
    assert!(cells.iter().all(|m| m.value > 0.0));
    assert!(value(&d, "r100w0_4k_iops") > value(&d, "r0w100_4k_iops"));
    // Half a 4 KiB IU written means reading the IU, merging and writing it whole.
    assert!(value(&d, "r0w100_512b_iops") < value(&d, "r0w100_4k_iops"));
    // 56 cells per round, after purge and fill.
    let rounds = value(&d, "rounds") as usize;
    assert_eq!(d.steps.len(), 2 + 56 * rounds);
    assert_eq!(d.steady.as_ref().unwrap().rounds_iops.len(), rounds);
    let ids: Vec<_> = d.charts.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["steady-rounds", "pts-iops-block-size"]);
    let by_bs = &d.charts[1];
    assert_eq!(by_bs.series.len(), 7);
    assert!(by_bs.x.log);
    // Block sizes ascending along x.
    let xs: Vec<f64> = by_bs.series[0].points.iter().map(|p| p.0).collect();
    assert_eq!(xs.first(), Some(&512.0));
    assert!(xs.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn pts_throughput_tracks_writes_for_both_block_sizes() {
    let d = run(suite("pts-throughput").unwrap(), &short(200));
    for bs in ["128k", "1024k"] {
        let read = value(&d, &format!("seq_{bs}_read_bw_bytes_per_s"));
        let write = value(&d, &format!("seq_{bs}_write_bw_bytes_per_s"));
        assert!(read > write && write > 0.0, "{bs}: {read} {write}");
        let chart = d
            .charts
            .iter()
            .find(|c| c.id == format!("steady-rounds-{bs}"))
            .unwrap();
        assert_eq!(chart.series.len(), 2);
    }
    // Each block size starts from its own purge.
    let purges = d
        .steps
        .iter()
        .filter(|s| s.kind == flashlab_kit::StepKind::Purge)
        .count();
    assert_eq!(purges, 2);
}

#[test]
fn pts_latency_reads_take_at_least_a_page_read() {
    let d = run(suite("pts-latency").unwrap(), &short(300));
    let t_read_ns = 50_000.0;
    for bs in ["8k", "4k", "512b"] {
        let mean = value(&d, &format!("r100w0_{bs}_lat_mean_ns"));
        let max = value(&d, &format!("r100w0_{bs}_lat_max_ns"));
        let tail = value(&d, &format!("r100w0_{bs}_lat_p99_999_ns"));
        assert!(mean >= t_read_ns, "{bs}: mean {mean}");
        assert!(
            max >= mean && tail >= t_read_ns,
            "{bs}: {mean} {tail} {max}"
        );
    }
    // Every job ran at QD1 with one job.
    assert!(d
        .steps
        .iter()
        .filter_map(|s| s.job_text.as_deref())
        .filter(|t| t.contains("[round-"))
        .all(|t| t.contains("iodepth=1\n") && t.contains("numjobs=1\n")));
    let cells = d
        .charts
        .iter()
        .find(|c| c.id == "pts-latency-cells")
        .unwrap();
    assert!(cells.y.log);
    assert_eq!(cells.series.len(), 3);
    assert!(cells.series.iter().all(|s| s.points.len() == 9));
}

#[test]
fn transfer_sweep_bandwidth_rises_with_size_then_flattens() {
    let opts = SuiteOptions {
        client: ClientOptions {
            size_bytes: Some(64 << 20),
            ..Default::default()
        },
        ..Default::default()
    }
    .with(TransferSweepOptions {
        max_bs_bytes: 8 << 20,
        ..Default::default()
    });
    let d = run(suite("transfer-sweep").unwrap(), &opts);
    let bw = |label: &str| value(&d, &format!("xfer_{label}_read_bw_bytes_per_s"));
    assert!(bw("512b") < bw("4k") && bw("4k") < bw("32k"));
    // Read-ahead and the read buffer spare 512 B reads the array read; each command's
    // overhead still keeps them far below the media bound.
    assert!(bw("512b") * 4.0 < bw("1024k"));
    // Past a few hundred KiB the drive is bandwidth-bound: no more than 20 % apart.
    let (a, b) = (bw("256k"), bw("8m"));
    assert!((a - b).abs() <= 0.2 * a.max(b), "{a} {b}");
    // 512 B to 8 MiB: 15 sizes, a write and a read each, after the purge.
    assert_eq!(d.steps.len(), 1 + 2 * 15);
    let chart = &d.charts[0];
    assert_eq!(chart.id, "transfer-sweep-bw");
    assert!(chart.x.log);
    assert_eq!(chart.series[0].points.len(), 15);
}

#[test]
fn desktop_writes_on_a_fresh_drive_land_in_the_slc_cache() {
    let opts = |state| {
        SuiteOptions {
            runtime_ns: Some(100 * NS_PER_MS),
            client: ClientOptions {
                size_bytes: Some(128 << 20),
                states: vec![state],
                ..Default::default()
            },
            ..Default::default()
        }
        .with(DesktopOptions {
            runs: 2,
            interval_ns: 500 * NS_PER_MS,
        })
    };
    let fresh = run(suite("desktop").unwrap(), &opts(DriveState::Fresh));
    let full = run(suite("desktop").unwrap(), &opts(DriveState::Full));
    let key = "seq1m_q8t1_write_bw_bytes_per_s";
    assert!(
        value(&fresh, key) > 1.5 * value(&full, key),
        "{} vs {}",
        value(&fresh, key),
        value(&full, key)
    );
    assert_eq!(fresh.results.len(), 16);
    // purge, test file, 8 tests × (warm-up + 2 runs), 7 intervals.
    assert_eq!(fresh.steps.len(), 2 + 8 * 3 + 7);
    let idle: Vec<_> = fresh
        .steps
        .iter()
        .filter(|s| s.name.starts_with("idle"))
        .collect();
    assert_eq!(idle.len(), 7);
    // The best run is reported: no measured run beat it.
    let best = value(&fresh, "rnd4k_q1t1_read_iops");
    let runs: Vec<f64> = fresh
        .steps
        .iter()
        .filter(|s| s.name == "rnd4k-q1t1-read-1" || s.name == "rnd4k-q1t1-read-2")
        .map(|s| s.measures.iter().find(|m| m.key() == "iops").unwrap().value)
        .collect();
    assert_eq!(runs.len(), 2);
    assert!(runs.iter().all(|&r| r <= best) && runs.contains(&best));
}

#[test]
fn new_suites_appear_in_json_and_csv_with_their_charts() {
    let opts = SuiteOptions {
        runtime_ns: Some(50 * NS_PER_MS),
        client: ClientOptions {
            size_bytes: Some(16 << 20),
            ..Default::default()
        },
        ..Default::default()
    }
    .with(DesktopOptions {
        runs: 1,
        interval_ns: 0,
    });
    let report = run_suite_with(suite("desktop").unwrap(), &[config()], &opts, &|_, _| {}).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&render_json(&report)).unwrap();
    assert_eq!(doc["suite"], "desktop");
    assert_eq!(doc["options"]["profile"], "default");
    assert_eq!(doc["options"]["state"], "fresh");
    assert_eq!(doc["devices"][0]["steady_state"], serde_json::Value::Null);
    assert_eq!(doc["devices"][0]["charts"][0]["id"], "desktop-tests");
    assert!(
        doc["devices"][0]["results"]["rnd4k_q32t1_write_iops"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    let csv = render_csv(&report);
    assert!(csv.contains(&format!("{DEVICE},seq1m_q1t1_read_bw_bytes_per_s,B/s,")));
    // No interval: no idle steps.
    assert!(report.devices[0]
        .steps
        .iter()
        .all(|s| !s.name.starts_with("idle")));
}

#[test]
fn pts_latency_tail_never_exceeds_the_largest_latency() {
    // fio's percentile is a histogram bucket's value and may lie above the largest sample:
    // on this drive the 65/35 512 B cell reported p99.999 651.3 us over a max of 650.1 us.
    let cfg = load_device_config(DEVICE, &[("capacity.user".into(), "500MB".into())]).unwrap();
    let d = run_on_device(suite("pts-latency").unwrap(), &cfg, &short(100)).unwrap();
    let mut cells = 0;
    for m in &d.results {
        let key = m.key();
        let Some(cell) = key.strip_suffix("_lat_max_ns") else {
            continue;
        };
        let tail = value(&d, &format!("{cell}_lat_p99_999_ns"));
        let mean = value(&d, &format!("{cell}_lat_mean_ns"));
        assert!(
            tail <= m.value,
            "{cell}: p99.999 {tail} above max {}",
            m.value
        );
        assert!(mean <= m.value, "{cell}: mean {mean} above max {}", m.value);
        cells += 1;
    }
    assert_eq!(cells, 9);
}
