//! The integration tests of flashlab-suite, one module per file of this directory, in one test
//! binary: a binary per file would link the crate and its dependencies once per file.
//! Run one file's tests with its module name as the filter, e.g.
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
#[path = "slices.rs"]
mod slices;
#[path = "suite_lists.rs"]
mod suite_lists;
#[path = "system_suites.rs"]
mod system_suites;
#[path = "systems_acceptance.rs"]
mod systems_acceptance;
#[path = "tenants.rs"]
mod tenants;
#[path = "untimed_precondition.rs"]
mod untimed_precondition;
