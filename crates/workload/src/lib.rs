//! Workloads: fio job files (parser, option table, typed jobs) and I/O generators.
pub mod job;
pub use job::*;
