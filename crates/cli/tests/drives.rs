//! `flashlab suite --drives N`: N identical drives per device, each measuring exactly what a
//! single-drive run with its derived seed measures, plus their aggregate.

mod common;

use common::{flashlab, stderr, stdout};
use serde_json::Value;

const DEVICE: &str = "tiny-test-1gb";
const QOS: [&str; 12] = [
    "qos",
    "--device",
    DEVICE,
    "--depths",
    "1,8",
    "--runtime",
    "200ms",
    "--round",
    "200ms",
    "--max-rounds",
    "5",
    "--output-format",
];

fn suite(extra: &[&str], format: &str) -> String {
    let mut all = vec!["suite"];
    all.extend_from_slice(&QOS);
    all.push(format);
    all.extend_from_slice(extra);
    let out = flashlab(&all);
    assert!(out.status.success(), "{all:?}: {}", stderr(&out));
    stdout(&out)
}

fn suite_json(extra: &[&str]) -> Value {
    serde_json::from_str(&suite(extra, "json")).expect("suite JSON parses")
}

#[test]
fn each_drive_measures_what_a_single_run_with_its_seed_does() {
    let seed = 7u64;
    let doc = suite_json(&["--drives", "3", "--seed", &seed.to_string()]);
    let devices = doc["devices"].as_array().unwrap();
    let names: Vec<&str> = devices
        .iter()
        .map(|d| d["device"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "tiny-test-1gb#1",
            "tiny-test-1gb#2",
            "tiny-test-1gb#3",
            "tiny-test-1gb#all"
        ]
    );
    assert_eq!(doc["options"]["seed"], seed);
    for drive in 1..=3 {
        let drive_seed = flashlab_suite::drive_seed(seed, drive);
        let single = suite_json(&["--seed", &drive_seed.to_string()]);
        let one = &single["devices"][0];
        let many = &devices[drive - 1];
        assert_eq!(many["results"], one["results"], "drive {drive}");
        assert_eq!(many["steps"], one["steps"], "drive {drive}");
        assert_eq!(many["steady_state"], one["steady_state"], "drive {drive}");
        let note = format!("drive {drive} of 3, seed {drive_seed}");
        assert_eq!(many["scale"].as_str(), Some(note.as_str()));
    }
    // Drive 1 keeps the suite seed; the others draw their own streams.
    assert_eq!(flashlab_suite::drive_seed(seed, 1), seed);
    assert_ne!(devices[1]["results"], devices[2]["results"]);

    // The aggregate: throughput summed, latency the worst drive's, every drive measured it.
    let agg = devices[3]["results"].as_object().unwrap();
    for key in ["steady_write_iops", "qd8_iops", "qd8_read_iops"] {
        let sum: f64 = (0..3)
            .map(|d| devices[d]["results"][key].as_f64().unwrap())
            .sum();
        let got = agg[key].as_f64().unwrap();
        assert!(
            (got - sum).abs() <= 1e-9 * sum.abs().max(1.0),
            "{key}: {got} vs {sum}"
        );
    }
    for (key, value) in agg.iter().filter(|(k, _)| k.ends_with("_ns")) {
        let worst = (0..3)
            .map(|d| devices[d]["results"][key].as_f64().unwrap())
            .fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(value.as_f64().unwrap(), worst, "{key}");
    }
    assert!(devices[3]["scale"]
        .as_str()
        .unwrap()
        .contains("3 identical drives"));
}

#[test]
fn one_drive_is_todays_run_unchanged() {
    assert_eq!(suite(&["--drives", "1"], "normal"), suite(&[], "normal"));
}

#[test]
fn drive_counts_out_of_range_exit_2_naming_the_option() {
    for n in ["0", "100000"] {
        let out = flashlab(&["suite", "qos", "--device", DEVICE, "--drives", n]);
        assert_eq!(out.status.code(), Some(2), "--drives {n}");
        let err = stderr(&out);
        assert!(
            err.contains("--drives") && err.contains("1 to 256"),
            "{err}"
        );
    }
}
