//! fio job files: the value grammar, the option table and the parser.

mod complex;
mod error;
mod options;
mod parser;
pub(crate) mod value;

#[cfg(test)]
mod tests;

pub use error::{ParseError, ParseErrorKind};
pub use options::{find_option, option_table, OptionClass, OptionDef, OptionType};
pub use parser::{
    parse_command_line, parse_file, parse_str, CommandLine, CommandLineItem, MAX_INCLUDE_DEPTH,
    MAX_JOBS, MAX_OUTSTANDING_IOS,
};
pub use value::TimeUnit;
