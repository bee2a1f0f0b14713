//! Parse errors: every one names the file and line, and says what would have been valid.

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
    if line == 0 {
        file.to_string()
    } else {
        format!("{file}:{line}")
    }
}

/// What is wrong with the line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParseErrorKind {
    #[error("cannot read {path}: {message}")]
    Io { path: String, message: String },
    #[error("includes nest deeper than {max_depth} files (include {path})")]
    IncludeTooDeep { path: String, max_depth: usize },
    #[error("include cycle: {path} is already being read")]
    IncludeCycle { path: String },
    #[error("environment variable {name} is not set (used as ${{{name}}})")]
    UnsetEnv { name: String },
    #[error("unterminated ${{...}}: expected ${{NAME}}")]
    UnterminatedEnv,
    #[error("malformed section header {text:?}: expected [name]")]
    BadSection { text: String },
    #[error(
        "cannot read line {text:?}: expected key=value, a bare option, [section] or include FILE"
    )]
    BadLine { text: String },
    #[error("option {option} appears before any [section]: put it under [global] or a job")]
    OutsideSection { option: String },
    #[error("unknown fio option {option}{}; `flashlab fio-options` lists the options flashlab knows", suggestion.as_ref().map(|s| format!(" (did you mean {s}?)")).unwrap_or_default())]
    UnknownOption {
        option: String,
        suggestion: Option<String>,
    },
    #[error("fio option {option} is not simulated by flashlab ({what})")]
    NotSimulated { option: String, what: String },
    #[error("option {option} needs a value (e.g. {option}={example})")]
    MissingValue { option: String, example: String },
    #[error("invalid value {value:?} for {option}: expected {expected}")]
    InvalidValue {
        option: String,
        value: String,
        expected: String,
    },
    #[error("the job file defines no jobs: add a [name] section after [global]")]
    NoJobs,
}
