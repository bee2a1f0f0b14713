//! The integration tests of flashlab-suite, one module per file of this directory, in one test
//! binary: a binary per file would link the crate and its dependencies once per file.
//! `slices.rs` and `untimed_precondition.rs` are binaries of their own (Cargo.toml). Run one
//! file's tests with its module name as the filter, e.g.
//! `cargo test -p flashlab-suite --test suite app_profiles::`.

#[path = "app_profiles.rs"]
mod app_profiles;
#[path = "client_pts.rs"]
mod client_pts;
#[path = "common/mod.rs"]
mod common;
#[path = "kit_args.rs"]
mod kit_args;
#[path = "kit_charts.rs"]
mod kit_charts;
#[path = "kit_client_options.rs"]
mod kit_client_options;
#[path = "kit_html.rs"]
mod kit_html;
#[path = "kit_layout.rs"]
mod kit_layout;
#[path = "kit_names_no_suite.rs"]
mod kit_names_no_suite;
#[path = "kit_options.rs"]
mod kit_options;
#[path = "kit_output.rs"]
mod kit_output;
#[path = "long_suites.rs"]
mod long_suites;
#[path = "module_graph.rs"]
mod module_graph;
#[path = "oltp.rs"]
mod oltp;
#[path = "option_reference.rs"]
mod option_reference;
#[path = "random_writes.rs"]
mod random_writes;
#[path = "registry.rs"]
mod registry;
#[path = "showdown.rs"]
mod showdown;
#[path = "suite_lists.rs"]
mod suite_lists;
#[path = "system_suites.rs"]
mod system_suites;
#[path = "systems_acceptance.rs"]
mod systems_acceptance;
#[path = "tenants.rs"]
mod tenants;

/// A test file of this directory in no binary would never run (Cargo.toml lists the test
/// binaries): every `tests/*.rs` is a module of this one or a binary of its own.
#[test]
fn every_test_file_is_in_a_test_binary() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let this = include_str!("suite.rs");
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
        "tests/{missing:?} run nowhere: add `#[path = \"NAME.rs\"] mod NAME;` to tests/suite.rs"
    );
}
