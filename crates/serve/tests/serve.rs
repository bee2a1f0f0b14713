//! The integration tests of flashlab-serve, one module per file of this directory, in one test
//! binary: a binary per file would link the crate and its dependencies once per file.
//! Run one file's tests with its module name as the filter, e.g.
//! `cargo test -p flashlab-serve --test serve fairness::`.

// Each file declares the helpers it uses (`mod common;`) as when it was a binary of its own.
#![allow(clippy::duplicate_mod)]

#[path = "fairness.rs"]
mod fairness;
#[path = "hostile.rs"]
mod hostile;
#[path = "protocol.rs"]
mod protocol;
