//! Every result says what made it: the flashlab version and commit, the `--set` overrides
//! and each device's resolved configuration, in the JSON's `"flashlab"` object (fio's own
//! fields and the other output formats unchanged).

mod common;
use common::{flashlab, stderr, stdout};

const FIO: [&str; 8] = [
    "fio",
    "--device",
    "tiny-test-1gb",
    "--name=rr",
    "--rw=randread",
    "--bs=4k",
    "--size=10%",
    "--number_ios=2000",
];

#[test]
fn fio_json_records_the_build_the_overrides_and_the_resolved_drive() {
    let out = flashlab(
        &[
            &FIO[..],
            &["--set", "nand.pages_per_block=192", "--output-format=json"],
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "fio version",
            "timestamp",
            "timestamp_ms",
            "time",
            "jobs",
            "flashlab"
        ]
    );
    let p = &v["flashlab"]["provenance"];
    assert_eq!(p["version"], env!("CARGO_PKG_VERSION"));
    assert!(p["commit"].as_str().is_some_and(|c| !c.is_empty()), "{p}");
    assert_eq!(
        p["overrides"],
        serde_json::json!(["nand.pages_per_block=192"])
    );
    assert_eq!(p["devices"][0]["name"], "tiny-test-1gb");
    assert_eq!(p["devices"][0]["config"]["nand"]["pages_per_block"], 192);
    // The terse line carries none of it.
    let terse = flashlab(&[&FIO[..], &["--output-format=terse"]].concat());
    assert_eq!(stdout(&terse).lines().count(), 1, "{}", stdout(&terse));
    assert!(!stdout(&terse).contains("provenance"));
}

#[test]
fn suite_json_starts_with_the_provenance_and_keeps_the_report() {
    let out = flashlab(&[
        "suite",
        "transfer-sweep",
        "--device",
        "tiny-test-1gb",
        "--runtime",
        "50ms",
        "--output-format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("{\n  \"flashlab\": {\n    \"version\": "),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let p = &v["flashlab"];
    assert_eq!(p["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(p["overrides"], serde_json::json!([]));
    assert_eq!(p["devices"][0]["config"]["name"], "tiny-test-1gb");
    assert_eq!(v["suite"], "transfer-sweep");
    assert!(v["devices"][0]["results"].is_array() || v["devices"][0]["results"].is_object());
}
