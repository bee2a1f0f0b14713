//! Parse errors: every one names the file and line, and says what would have been valid.
//! Input echoed back (a line, a key, a value) is cut to a short excerpt.

use flashlab_engine::input::excerpt;

/// A job file could not be parsed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {kind}", place(file, *line))]
pub struct ParseError {
    /// The file the bad line is in (an included file when the error is there).
    pub file: String,
    /// 1-based line number; 0 when the error concerns the file as a whole.
    pub line: usize,
    pub kind: ParseErrorKind,
}

/// `file:line`, or just `file` when the error concerns the whole file (line 0).
fn place(file: &str, line: usize) -> String {
    let file = excerpt(file);
    if line == 0 {
        file.into_owned()
    } else {
        format!("{file}:{line}")
    }
}

/// What is wrong with the line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParseErrorKind {
    #[error("cannot read {}: {message}", excerpt(path))]
    Io { path: String, message: String },
    #[error(
        "includes nest deeper than {max_depth} files (include {})",
        excerpt(path)
    )]
    IncludeTooDeep { path: String, max_depth: usize },
    #[error("include cycle: {} is already being read", excerpt(path))]
    IncludeCycle { path: String },
    #[error(
        "environment variable {0} is not set (used as ${{{0}}})",
        excerpt(name)
    )]
    UnsetEnv { name: String },
    #[error("unterminated ${{...}}: expected ${{NAME}}")]
    UnterminatedEnv,
    #[error("malformed section header {:?}: expected [name]", excerpt(text))]
    BadSection { text: String },
    #[error(
        "cannot read line {:?}: expected key=value, a bare option, [section] or include FILE",
        excerpt(text)
    )]
    BadLine { text: String },
    #[error(
        "option {} appears before any [section]: put it under [global] or a job",
        excerpt(option)
    )]
    OutsideSection { option: String },
    #[error("unknown fio option {}{}; `flashlab fio-options` lists the options flashlab knows", excerpt(option), suggestion.as_ref().map(|s| format!(" (did you mean {s}?)")).unwrap_or_default())]
    UnknownOption {
        option: String,
        suggestion: Option<String>,
    },
    #[error("fio option {option} is not simulated by flashlab ({what})")]
    NotSimulated { option: String, what: String },
    #[error("option {option} needs a value (e.g. {option}={example})")]
    MissingValue { option: String, example: String },
    #[error("invalid value {:?} for {option}: expected {expected}", excerpt(value))]
    InvalidValue {
        option: String,
        value: String,
        expected: String,
    },
    #[error("job {job} brings the run past {limit} jobs (numjobs clones counted, as fio counts them); valid: at most {limit} in all")]
    TooManyJobs { job: String, limit: u64 },
    #[error("job {job} brings the I/Os the run keeps in flight (iodepth × numjobs, summed over the jobs) past {limit}; valid: at most {limit} in all")]
    TooManyOutstanding { job: String, limit: u64 },
    #[error("the job file defines no jobs: add a [name] section after [global]")]
    NoJobs,
}
