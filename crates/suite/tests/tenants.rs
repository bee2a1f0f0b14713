//! The write-pressure, noisy-neighbor and power suites end to end on the tiny test drive with
//! short steps: the direction of the effects they exist to show.

use crate::common::run_on_device;
use flashlab_device::{load_device_config, DeviceConfig};
use flashlab_engine::NS_PER_MS;
use flashlab_suite::{suite, DeviceReport, RoundLength, SuiteOptions, TenantOptions};

fn config(sets: &[(&str, &str)]) -> DeviceConfig {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    load_device_config("tiny-test-1gb", &sets).expect("preset loads")
}

fn value(d: &DeviceReport, key: &str) -> f64 {
    d.results
        .iter()
        .find(|m| m.key() == key)
        .unwrap_or_else(|| panic!("no result {key}"))
        .value
}

/// One-second rounds and steps, the fewest rounds the rule allows.
fn short() -> SuiteOptions {
    SuiteOptions {
        round: RoundLength::TimeNs(1000 * NS_PER_MS),
        max_rounds: 5,
        runtime_ns: Some(1000 * NS_PER_MS),
        ..Default::default()
    }
    .with(TenantOptions {
        write_bs_bytes: vec![8 << 10],
        start_bytes_per_s: 4_000_000,
        step_bytes_per_s: 4_000_000,
        ..Default::default()
    })
}

#[test]
fn write_pressure_finds_a_ceiling_and_suspend_shortens_the_read_tail() {
    let run = |on: &str| {
        let c = config(&[
            ("scheduler.read_priority", on),
            ("scheduler.program_suspend", on),
            ("scheduler.erase_suspend", on),
        ]);
        run_on_device(suite("write-pressure").unwrap(), &c, &short()).expect("suite runs")
    };
    let (fcfs, suspend) = (run("false"), run("true"));
    for d in [&fcfs, &suspend] {
        assert_eq!(value(d, "bs8k_ceiling_found"), 1.0);
        let ceiling = value(d, "bs8k_ceiling_write_bw_bytes_per_s");
        assert!(ceiling >= 0.95 * 4e6, "{ceiling}");
        assert_eq!(d.charts[0].id, "write-pressure-read-latency");
        assert!(!d.charts[0].series[0].points.is_empty());
    }
    // At the first target both keep up; reads overtaking programs and erases cut the tail.
    let key = "bs8k_step001_read_lat_p99_99_ns";
    let (a, b) = (value(&fcfs, key), value(&suspend, key));
    assert!(b < a, "p99.99 with suspend {b} ns, without {a} ns");
    // What a read waited for, per read by cause: a die without a scheduler books its reads
    // behind whatever it holds; with suspend, reads wait for suspensions to take effect and
    // for the work a suspension cannot stop. Each step's parts stay within the mean latency.
    let wait =
        |d: &DeviceReport, cause: &str| value(d, &format!("bs8k_step001_read_wait_{cause}_ns"));
    assert!(wait(&fcfs, "die_busy") > 0.0);
    assert_eq!(wait(&fcfs, "suspend_latency"), 0.0);
    assert_eq!(wait(&suspend, "die_busy"), 0.0);
    assert!(wait(&suspend, "suspend_latency") > 0.0);
    for d in [&fcfs, &suspend] {
        let causes = [
            "host_reads",
            "internal_reads",
            "programs",
            "erases",
            "suspending",
            "suspend_step",
            "suspend_latency",
            "die_busy",
            "channel",
            "power_cap",
        ];
        let total: f64 = causes.iter().map(|c| wait(d, c)).sum();
        let mean = value(d, "bs8k_step001_read_lat_avg_ns");
        assert!(
            total > 0.0 && total < mean,
            "waits {total} ns of a mean {mean} ns"
        );
    }
    // The reads' median is in the results too.
    assert!(value(&suspend, "bs8k_step001_read_lat_p50_ns") > 0.0);
}

#[test]
fn noisy_neighbours_raise_the_quiet_tenants_read_tail() {
    let d = run_on_device(
        suite("noisy-neighbor").unwrap(),
        &config(&[]),
        &SuiteOptions {
            qd: Some(4),
            ..short()
        },
    )
    .expect("suite runs");
    // Six namespaces: readers on ns4 to ns6.
    assert!(value(&d, "alone_ns6_read_iops") > 0.0);
    assert_eq!(value(&d, "alone_neighbour_iops"), 0.0);
    assert!(value(&d, "neighbours_neighbour_iops") > 0.0);
    for key in ["read_lat_avg_ns", "read_lat_p99_99_ns"] {
        let alone = value(&d, &format!("alone_worst_quiet_{key}"));
        let busy = value(&d, &format!("neighbours_worst_quiet_{key}"));
        assert!(busy > alone, "{key}: alone {alone}, with neighbours {busy}");
    }
}

#[test]
fn noisy_neighbor_refuses_a_drive_with_one_namespace() {
    let c = config(&[("namespaces", "[\"900MB\"]")]);
    let e = run_on_device(suite("noisy-neighbor").unwrap(), &c, &short()).unwrap_err();
    assert!(e.is_bad_input());
    assert!(e.to_string().contains("namespaces"), "{e}");
}

#[test]
fn power_states_hold_their_caps_and_a_cap_costs_throughput() {
    let c = config(&[("power.states", "[\"none\", \"3.3W\"]")]);
    // Power is averaged over whole 1-second windows: a step asked for 1 s runs long enough
    // to hold three (a 1-second read step held none, and read as 0 W under any cap).
    let opts = SuiteOptions {
        runtime_ns: Some(1000 * NS_PER_MS),
        ..short()
    };
    let d = run_on_device(suite("power").unwrap(), &c, &opts).expect("suite runs");
    assert_eq!(value(&d, "ps1_cap_w"), 3.3);
    assert_eq!(value(&d, "ps1_all_peaks_under_cap"), 1.0);
    for t in [
        "seq_read_128k",
        "seq_write_128k",
        "rand_read_4k",
        "rand_write_4k",
    ] {
        assert!(value(&d, &format!("ps1_{t}_peak_power_w")) <= 3.3 + 1e-6);
        assert!(value(&d, &format!("ps0_{t}_avg_power_w")) > 0.0);
        assert!(value(&d, &format!("ps0_{t}_power_windows")) >= 3.0);
    }
    // Uncapped, sequential reads draw more than the cap allows: the cap must slow them.
    assert!(value(&d, "ps0_seq_read_128k_avg_power_w") > 3.3);
    assert!(
        value(&d, "ps1_seq_read_128k_bw_bytes_per_s")
            < value(&d, "ps0_seq_read_128k_bw_bytes_per_s")
    );
    assert_eq!(d.charts[0].series.len(), 2);
}
