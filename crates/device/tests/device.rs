//! The integration tests of flashlab-device, one module per file of this directory, in one test
//! binary: a binary per file would link the crate and its dependencies once per file.
//! Run one file's tests with its module name as the filter, e.g.
//! `cargo test -p flashlab-device --test device bad_blocks::`.

// Each file declares the helpers it uses (`mod common;`) as when it was a binary of its own.
#![allow(clippy::duplicate_mod)]

#[path = "bad_blocks.rs"]
mod bad_blocks;
#[path = "busy_gc.rs"]
mod busy_gc;
#[path = "channel_merge.rs"]
mod channel_merge;
#[path = "checker.rs"]
mod checker;
#[path = "checker_zoned.rs"]
mod checker_zoned;
#[path = "compression.rs"]
mod compression;
#[path = "config_no_panic.rs"]
mod config_no_panic;
#[path = "controller.rs"]
mod controller;
#[path = "host_allocation.rs"]
mod host_allocation;
#[path = "idle_work.rs"]
mod idle_work;
#[path = "link.rs"]
mod link;
#[path = "mapcache.rs"]
mod mapcache;
#[path = "namespaces.rs"]
mod namespaces;
#[path = "pacing.rs"]
mod pacing;
#[path = "parity.rs"]
mod parity;
#[path = "power.rs"]
mod power;
#[path = "queued_erase.rs"]
mod queued_erase;
#[path = "readbuf.rs"]
mod readbuf;
#[path = "scale.rs"]
mod scale;
#[path = "scheduler.rs"]
mod scheduler;
#[path = "ssd.rs"]
mod ssd;
#[path = "thermal.rs"]
mod thermal;
#[path = "timed_workload.rs"]
mod timed_workload;
#[path = "untimed.rs"]
mod untimed;
#[path = "wear_out.rs"]
mod wear_out;
#[path = "zoned.rs"]
mod zoned;

/// A test file of this directory in no binary would never run (Cargo.toml lists the test
/// binaries): every `tests/*.rs` is a module of this one or a binary of its own.
#[test]
fn every_test_file_is_in_a_test_binary() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let this = include_str!("device.rs");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root.join("tests")).expect("tests/ is readable") {
        let name = entry.expect("a directory entry").file_name();
        let name = name.to_string_lossy();
        let Some(stem) = name.strip_suffix(".rs") else {
            continue;
        };
        let module = format!("#[path = \"{name}\"]\nmod {stem};");
        let binary = format!("path = \"tests/{name}\"");
        if !this.contains(&module) && !manifest.contains(&binary) {
            missing.push(name.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "tests/{missing:?} run nowhere: add `#[path = \"NAME.rs\"] mod NAME;` to tests/device.rs"
    );
}
