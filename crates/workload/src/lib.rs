//! Workloads: fio job files (parser, option table, typed jobs) and I/O generators.
//!
//! [`parse_file`] turns a fio job file into a [`JobFile`] of typed [`JobSpec`]s;
//! [`IoGenerator`] turns one clone of a job into the stream of I/Os it issues.

pub mod fio;
pub mod flow;
pub mod gen;
pub mod job;
pub mod placement;
pub mod trace;
pub mod zoned;

pub use fio::{
    option_table, parse_command_line, parse_file, parse_str, CommandLine, CommandLineItem,
    OptionClass, OptionDef, ParseError, ParseErrorKind,
};
pub use gen::{GeneratedIo, IoGenerator, JobError};
pub use job::*;
