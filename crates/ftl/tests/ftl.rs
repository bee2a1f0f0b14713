//! The integration tests of flashlab-ftl, one module per file of this directory, in one test
//! binary: a binary per file would link the crate and its dependencies once per file.
//! Run one file's tests with its module name as the filter, e.g.
//! `cargo test -p flashlab-ftl --test ftl model::`.

#[path = "model.rs"]
mod model;
#[path = "physics.rs"]
mod physics;
