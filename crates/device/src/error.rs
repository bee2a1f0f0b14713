//! Errors of a device description: a value a check refuses ([`KeyError`], without its
//! place) and the error a user sees ([`ConfigError`], naming the file, line or option). The
//! loader and the drive both return them, so they live apart from either.

use flashlab_engine::input::{excerpt, tame};

/// A value that is out of range or inconsistent with another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyError {
    /// Dotted key ("nand.channels").
    pub key: String,
    pub value: String,
    pub message: String,
    pub valid: String,
}

/// A device description that cannot be used. Each message names where (file:line or the
/// `--set` option), the key, and what would be valid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "unknown device {:?}: not a preset name and not a readable .toml file; presets: {presets}",
        excerpt(name)
    )]
    UnknownDevice { name: String, presets: String },
    #[error("{}: cannot read: {message}", excerpt(path))]
    Io { path: String, message: String },
    #[error("{}: {}", excerpt(origin), tame(message))]
    Parse { origin: String, message: String },
    #[error("{}: unknown key `{}`{}; valid keys here: {valid}", excerpt(origin), excerpt(key), did_you_mean(.suggestion))]
    UnknownKey {
        origin: String,
        key: String,
        suggestion: Option<String>,
        valid: String,
    },
    #[error(
        "{}: {} = {}: {}; valid: {}",
        excerpt(origin),
        excerpt(key),
        excerpt(value),
        tame(message),
        tame(valid)
    )]
    Invalid {
        origin: String,
        key: String,
        value: String,
        message: String,
        valid: String,
    },
}

fn did_you_mean(s: &Option<String>) -> String {
    match s {
        Some(s) => format!(" (did you mean `{s}`?)"),
        None => String::new(),
    }
}

impl ConfigError {
    pub(crate) fn from_key_error(origin: String, e: KeyError) -> ConfigError {
        ConfigError::Invalid {
            origin,
            key: e.key,
            value: e.value,
            message: e.message,
            valid: e.valid,
        }
    }
}
