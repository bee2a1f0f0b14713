//! Tests of fio job-file parsing: the shared helpers here, the tests by theme in the
//! submodules.

use std::path::PathBuf;

use super::*;
use crate::job::*;

mod bounds;
mod io;
mod reporting;
mod syntax;
mod table;

fn jobs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/jobs")
}

fn no_env(_: &str) -> Option<String> {
    None
}

fn parse(text: &str) -> Result<JobFile, ParseError> {
    parse_str(text, "t.fio", &no_env)
}

fn kind(text: &str) -> ParseErrorKind {
    parse(text).expect_err("expected an error").kind
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}
