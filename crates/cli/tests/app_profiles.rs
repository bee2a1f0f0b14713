//! `flashlab suite app-profiles`: options checked before anything runs, the results, files
//! and charts of a short run on the tiny drive, and the same suite through the real fio on a
//! file (skipped with a notice without fio, unless FLASHLAB_REQUIRE_TOOLS=1).

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{flashlab, stderr, stdout};
use serde_json::Value;

const SHORT: [&str; 8] = [
    "--runtime",
    "200ms",
    "--round",
    "200ms",
    "--max-rounds",
    "5",
    "--loads",
    "1,8",
];

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("app_profiles");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    let _ = std::fs::remove_dir_all(&p);
    let _ = std::fs::remove_file(&p);
    p
}

#[test]
fn an_unknown_profile_or_bad_loads_exit_2_naming_what_is_valid() {
    let out = flashlab(&["suite", "app-profiles", "--profiles", "sql,mysql-oltp"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("--profiles") && err.contains("mysql-oltp"),
        "{err}"
    );
    assert!(
        err.contains(
            "sql, sql-90-10, sql-80-20, oracle, oracle-90-10, oracle-80-20, vdi-full-boot, \
             vdi-full-login, vdi-full-monday, vdi-linked-boot, vdi-linked-login, \
             vdi-linked-monday"
        ),
        "{err}"
    );

    let out = flashlab(&["suite", "app-profiles", "--loads", "8,4"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("ascending"), "{}", stderr(&out));

    let out = flashlab(&["suite", "app-profiles", "--jobs", "4", "--loads", "1,2,6"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("multiples of --jobs 4"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_short_run_reports_points_knees_tops_charts_and_step_files() {
    let outdir = scratch("out");
    let mut args = vec![
        "suite",
        "app-profiles",
        "--device",
        "tiny-test-1gb",
        "--profiles",
        "oracle-90-10,vdi-linked-login",
        "--jobs",
        "2",
        "--output-format",
        "json",
        "--outdir",
        outdir.to_str().unwrap(),
    ];
    args.extend_from_slice(&SHORT);
    let out = flashlab(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["suite"], "app-profiles");
    let o = &doc["options"]["app_profiles"];
    assert_eq!(o["loads"], serde_json::json!([1, 8]));
    assert!(
        o["precondition"].as_str().unwrap().contains("random-write"),
        "{o}"
    );

    let d = &doc["devices"][0];
    let r = &d["results"];
    for key in [
        "oracle_90_10_load1_iops",
        "oracle_90_10_load1_read_iops",
        "oracle_90_10_load1_write_iops",
        "oracle_90_10_load1_lat_avg_ns",
        "oracle_90_10_load1_lat_p99_ns",
        "oracle_90_10_knee_iops",
        "oracle_90_10_knee_load",
        "oracle_90_10_knee_lat_avg_ns",
        "oracle_90_10_knee_lat_p99_ns",
        "oracle_90_10_knee_reached",
        "oracle_90_10_top_iops",
        "oracle_90_10_top_load",
        "oracle_90_10_top_lat_avg_ns",
        "oracle_90_10_top_lat_p99_ns",
        "vdi_linked_login_load1_iops",
        "precondition_rounds",
    ] {
        assert!(r[key].is_number(), "{key} missing: {r}");
    }
    let ids: Vec<&str> = d["charts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "steady-rounds",
            "app-profiles-oracle",
            "app-profiles-vdi-linked"
        ]
    );
    let chart = &d["charts"][1];
    assert_eq!(chart["x"]["unit"], "IOPS");
    assert_eq!(chart["y"]["unit"], "ns");
    assert_eq!(chart["series"][0]["name"], "oracle-90-10");

    // Load 8 with --jobs 2: two clones at depth 4, as the step's job file says.
    let csv = std::fs::read_to_string(outdir.join("app-profiles.csv")).unwrap();
    assert!(csv.contains("oracle_90_10_load1_iops"), "{csv}");
    let dev_dir = std::fs::read_dir(&outdir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .expect("a directory per device");
    let files: Vec<String> = std::fs::read_dir(&dev_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let job = files
        .iter()
        .find(|f| f.ends_with("-oracle-90-10-load1.fio"))
        .unwrap_or_else(|| panic!("{files:?}"));
    let text = std::fs::read_to_string(dev_dir.join(job)).unwrap();
    assert!(text.contains("rwmixread=90"), "{text}");
    // Every load runs, the highest too.
    let job8 = files
        .iter()
        .find(|f| f.ends_with("-oracle-90-10-load8.fio"))
        .unwrap_or_else(|| panic!("{files:?}"));
    let text = std::fs::read_to_string(dev_dir.join(job8)).unwrap();
    assert!(text.contains("iodepth=4\nnumjobs=2"), "{text}");
    assert!(
        files
            .iter()
            .any(|f| f.ends_with("-oracle-90-10-load1.json")),
        "{files:?}"
    );
}

#[test]
fn runs_through_fio_on_a_file() {
    let ok = Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("FLASHLAB_REQUIRE_TOOLS").as_deref() != Ok("1"),
            "fio missing; FLASHLAB_REQUIRE_TOOLS=1 requires it"
        );
        eprintln!("SKIPPED: fio missing (apt-get install fio)");
        return;
    }
    let target = scratch("target.dat");
    let mut args = vec![
        "suite",
        "app-profiles",
        "--target",
        target.to_str().unwrap(),
        "--target-size",
        "64MiB",
        "--max-idle",
        "0",
        "--profiles",
        "vdi-full-boot",
        "--output-format",
        "json",
    ];
    args.extend_from_slice(&SHORT);
    let out = flashlab(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let r = &doc["devices"][0]["results"];
    assert!(r["vdi_full_boot_load1_iops"].as_f64().unwrap() > 0.0, "{r}");
    assert!(
        r["vdi_full_boot_load1_read_iops"].as_f64().unwrap() > 0.0,
        "{r}"
    );
}
