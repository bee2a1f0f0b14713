//! Design-space sweeps. A plan (TOML) names a fio job file and axes — devices, device keys,
//! job-file variables, seeds — combined as a grid or zipped. Every point is an ordinary
//! simulation whose result is one JSON file; points run one at a time (`--point N`, the unit
//! a Slurm array task or a GNU parallel argument runs), on local threads, or on a Dask
//! cluster through the Python package; `collect` turns a directory of point results into one
//! tidy table. A point's file depends only on the plan, the point and the flashlab build, so
//! every way of running a plan gives the same table.
//!
//! A plan's `[precondition]` is run by the [`flashlab_host::Preconditioner`] its caller
//! gives (the CLI and the Python package give the suites' `SuitePreconditioner`, with the
//! precondition cache), so sweeps stand below the suites.

mod collect;
mod plan;
mod point;

use std::fmt;
use std::io::Read;
use std::path::Path;

pub use collect::{collect_dir, is_point_file_name, Table, TIDY_COLUMNS_AFTER_AXES};
pub use plan::{
    Axis, AxisKind, AxisValue, Combine, Plan, Point, Precondition, MAX_AXIS_VALUES, MAX_POINTS,
};
pub use point::{
    check_outdir, check_plan, plan_dir, point_file_name, provenance, run_plan, run_point,
    RunSummary, SweepError,
};

/// Largest plan or job file a plan reads.
pub const MAX_PLAN_BYTES: u64 = 1 << 20;

/// An error in a plan, with the line it is on (0: the plan as a whole).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}, line {}: {}", self.file, self.line, self.message)
        }
    }
}

impl std::error::Error for PlanError {}

/// A file's text, refused past `limit` bytes or when it is not a regular file (a device
/// such as /dev/zero never ends).
pub(crate) fn read_bounded(path: &Path, limit: u64) -> Result<String, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{shown} is not a regular file"));
    }
    if meta.len() > limit {
        return Err(format!(
            "{shown} is {} bytes, more than the {limit} a plan or job file may have",
            meta.len()
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(limit + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(format!("{shown} grew past {limit} bytes while read"));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "{shown} is not UTF-8 text (byte {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// Input echoed in a message: the one helper every message uses (cut to 80 characters,
/// control characters escaped).
pub(crate) fn shorten(text: &str) -> String {
    flashlab_engine::input::echo(text)
}
