//! The integration tests of the `flashlab` command, one module per file of this directory, in
//! one test binary: a binary per file would link the workspace once per file, and one binary lets
//! the test harness run a long test of one file beside the short tests of the others.
//! Run one file's tests with its module name as the filter, e.g.
//! `cargo test -p flashlab --test integration fio_layout::`; the long tests (modules named
//! `long`, which `cargo test` leaves to `.ci/run`) with `-- --ignored`, e.g.
//! `cargo test -p flashlab --test integration calibration:: -- --ignored`.

// Each file declares the helpers it uses (`mod common;`) as when it was a binary of its own.
#![allow(clippy::duplicate_mod)]

#[path = "app_profiles.rs"]
mod app_profiles;
#[path = "bounds.rs"]
mod bounds;
#[path = "calibration.rs"]
mod calibration;
#[path = "cli.rs"]
mod cli;
#[path = "devices.rs"]
mod devices;
#[path = "docs.rs"]
mod docs;
#[path = "drives.rs"]
mod drives;
#[path = "fio_command_line.rs"]
mod fio_command_line;
#[path = "fio_layout.rs"]
mod fio_layout;
#[path = "fio_reporting_options.rs"]
mod fio_reporting_options;
#[path = "fit.rs"]
mod fit;
#[path = "fit_nbd.rs"]
mod fit_nbd;
#[path = "fit_published.rs"]
mod fit_published;
#[path = "full_drive.rs"]
mod full_drive;
#[path = "hints.rs"]
mod hints;
#[path = "hist_log.rs"]
mod hist_log;
#[path = "iolog.rs"]
mod iolog;
#[path = "latency_target.rs"]
mod latency_target;
#[path = "layout.rs"]
mod layout;
#[path = "output_files.rs"]
mod output_files;
#[path = "placement.rs"]
mod placement;
#[path = "progress.rs"]
mod progress;
#[path = "provenance.rs"]
mod provenance;
#[path = "qos_tail.rs"]
mod qos_tail;
#[path = "rate_min.rs"]
mod rate_min;
#[path = "real_fio.rs"]
mod real_fio;
#[path = "replay.rs"]
mod replay;
#[path = "report.rs"]
mod report;
#[path = "scale.rs"]
mod scale;
#[path = "serve.rs"]
mod serve;
#[path = "state.rs"]
mod state;
#[path = "state_cache.rs"]
mod state_cache;
#[path = "steadystate.rs"]
mod steadystate;
#[path = "suite.rs"]
mod suite;
#[path = "suite_state.rs"]
mod suite_state;
#[path = "suite_tests.rs"]
mod suite_tests;
#[path = "sweep.rs"]
mod sweep;
#[path = "systems_acceptance.rs"]
mod systems_acceptance;
#[path = "terse.rs"]
mod terse;
#[path = "threads.rs"]
mod threads;
#[path = "untimed.rs"]
mod untimed;
#[path = "validation.rs"]
mod validation;
#[path = "verify.rs"]
mod verify;
#[path = "zoned.rs"]
mod zoned;

/// A crate with `autotests = false` runs only the test binaries its Cargo.toml lists: every
/// `tests/*.rs` of every crate of the workspace is one of them or a module of one.
#[test]
fn every_test_file_is_in_a_test_binary() {
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut missing = Vec::new();
    for krate in std::fs::read_dir(&crates).expect("crates/ is readable") {
        let dir = krate.expect("a directory entry").path();
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        let manifest: toml::Table = manifest.parse().expect("a crate's Cargo.toml is TOML");
        let package = manifest["package"].as_table().expect("[package]");
        if package.get("autotests").and_then(|v| v.as_bool()) != Some(false) {
            continue;
        }
        let binaries: Vec<String> = manifest
            .get("test")
            .and_then(|t| t.as_array())
            .map_or(&[][..], |t| t.as_slice())
            .iter()
            .filter_map(|t| t.get("path").and_then(|p| p.as_str()).map(str::to_string))
            .collect();
        let roots: Vec<String> = binaries
            .iter()
            .map(|p| std::fs::read_to_string(dir.join(p)).unwrap_or_default())
            .collect();
        let Ok(files) = std::fs::read_dir(dir.join("tests")) else {
            continue;
        };
        for file in files {
            let name = file.expect("a directory entry").file_name();
            let name = name.to_string_lossy();
            let Some(stem) = name.strip_suffix(".rs") else {
                continue;
            };
            let module = format!("#[path = \"{name}\"]\nmod {stem};");
            let runs = binaries.contains(&format!("tests/{name}"))
                || roots.iter().any(|root| root.contains(&module));
            if !runs {
                missing.push(format!("{}/tests/{name}", dir.display()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{missing:?} run in no test binary: add `#[path = \"NAME.rs\"] mod NAME;` to the \
         crate's test binary (its Cargo.toml's [[test]] path)"
    );
}
