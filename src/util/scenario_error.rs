//! Scenario errors: every one names the file, the line and column where there is one (or
//! the flag that set the value), the bad value and the fix. Positions come from the
//! parsed document (`scenario_doc`); here only the error type and serde's words.

use std::ops::Range;
use std::path::{Path, PathBuf};

/// A problem with a scenario file or an override flag.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("{}: cannot read scenario: {msg}", path.display())]
    Read {
        /// The scenario path.
        path: PathBuf,
        /// The OS error text.
        msg: String,
    },
    /// A problem at a position in the file.
    #[error("{}:{line}:{col}: {msg}", path.display())]
    At {
        /// The scenario path.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What is wrong, the bad value and the fix.
        msg: String,
    },
    /// A problem with a command-line flag that overrides the file.
    #[error("{flag}: {msg}")]
    Flag {
        /// The flag as typed, e.g. `--target-fps`.
        flag: String,
        /// What is wrong, the bad value and the fix.
        msg: String,
    },
    /// A problem with the file as a whole (no single position).
    #[error("{}: {msg}", path.display())]
    File {
        /// The scenario path.
        path: PathBuf,
        /// What is wrong and the fix.
        msg: String,
    },
}

impl ScenarioError {
    /// An error at byte range `span` of `src`.
    pub fn at(path: &Path, src: &str, span: Range<usize>, msg: impl Into<String>) -> Self {
        let (line, col) = line_col(src, span.start);
        Self::At {
            path: path.to_path_buf(),
            line,
            col,
            msg: msg.into(),
        }
    }

    /// An error about the whole file.
    pub fn file(path: &Path, msg: impl Into<String>) -> Self {
        Self::File {
            path: path.to_path_buf(),
            msg: msg.into(),
        }
    }

    /// A TOML syntax error (the text did not parse), positioned.
    pub fn syntax(path: &Path, src: &str, err: &toml::de::Error) -> Self {
        let msg = err.message().trim_end().to_string();
        match err.span() {
            Some(span) => Self::at(path, src, span, msg),
            None => Self::file(path, msg),
        }
    }

    /// Whether this is a shape error from deserializing (a wrong type, an unknown key or
    /// variant) at a key, which says nothing about the file's other keys: `rtload check`
    /// sets such a key aside and reads on, to list every error of the file at once.
    pub fn is_shape_error(&self) -> bool {
        let Self::At { msg, .. } = self else {
            return false;
        };
        // After `[table] ` and `key: ` (see `with_key`), serde's own words.
        let rest = msg
            .strip_prefix('[')
            .and_then(|m| m.split_once("] "))
            .map_or(msg.as_str(), |(_, r)| r);
        let rest = rest
            .split_once(": ")
            .filter(|(key, _)| !key.contains(' '))
            .map_or(rest, |(_, r)| r);
        [
            "expected ",
            "invalid type",
            "invalid value",
            "invalid length",
            "unknown field",
            "unknown variant",
        ]
        .iter()
        .any(|p| rest.starts_with(p))
    }
}

/// serde's message about the value at `keys`, naming them (`[load] max_concurrency: …`)
/// and its types in words ("expected an integer, got the string "ten"").
pub(crate) fn with_key(keys: &[String], msg: &str) -> String {
    let Some((key, table)) = keys.split_last() else {
        return msg.to_string();
    };
    let table = if table.is_empty() {
        String::new()
    } else {
        format!("[{}] ", table.join("."))
    };
    if msg.contains(&format!("`{key}`")) {
        return format!("{table}{msg}");
    }
    format!("{table}{key}: {}", in_words(msg))
}

/// `invalid type: string "ten", expected i64` → `expected an integer, got the string "ten"`.
pub(crate) fn in_words(msg: &str) -> String {
    let Some(rest) = msg
        .strip_prefix("invalid type: ")
        .or_else(|| msg.strip_prefix("invalid value: "))
    else {
        return msg.to_string();
    };
    let Some((got, expected)) = rest.rsplit_once(", expected ") else {
        return msg.to_string();
    };
    let expected = match expected {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number ≥ 0".to_string(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "an integer".to_string(),
        "f32" | "f64" => "a number".to_string(),
        "a boolean" | "bool" => "true or false".to_string(),
        "a sequence" => "an array".to_string(),
        "a map" => "a table".to_string(),
        other => other.to_string(),
    };
    format!("expected {expected}, got the {got}")
}

pub use crate::util::textpos::line_col;

#[cfg(test)]
#[path = "scenario_error_tests.rs"]
mod tests;
