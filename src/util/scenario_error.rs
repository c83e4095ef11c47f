//! Scenario errors: every one names the file, the line and column where there is one, the
//! bad value and the fix. Also the helper that deserializes one scenario section with spans.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

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

    /// Turn a `toml` deserialization error into a positioned error that names its key:
    /// `[load] max_concurrency: expected an integer, got the string "ten"`.
    pub fn from_toml(path: &Path, src: &str, err: &toml::de::Error) -> Self {
        let msg = crate::util::textpos::suggest_unknown_field(err.message().trim_end());
        match err.span() {
            Some(span) => {
                let msg = match crate::util::textpos::entry_at(src, span.start) {
                    Some((keys, _)) => with_key(&keys, &msg),
                    None => msg,
                };
                Self::at(path, src, span, msg)
            }
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
fn with_key(keys: &[String], msg: &str) -> String {
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
fn in_words(msg: &str) -> String {
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

/// Byte span of the value of `key` inside top-level table `[section]` of `src` (`""` =
/// the top level), from the TOML parser's spans.
pub fn key_span(src: &str, section: &str, key: &str) -> Option<Range<usize>> {
    if section.is_empty() {
        crate::util::textpos::value_span(src, &[key])
    } else {
        crate::util::textpos::value_span(src, &[section, key])
    }
}

/// An error about the value at `path` (e.g. `["server", "video", "chunk_bytes"]`):
/// positioned at the value when the file has it, else about the file, naming the table.
pub fn key_error(file: &Path, src: &str, path: &[&str], msg: String) -> ScenarioError {
    match crate::util::textpos::value_span(src, path) {
        Some(span) => ScenarioError::at(file, src, span, msg),
        None => {
            let table = path
                .split_last()
                .map_or(String::new(), |(_, t)| t.join("."));
            ScenarioError::file(file, format!("[{table}]: {msg}"))
        }
    }
}

/// An error about `[section] key` of a table that command-line flags also set
/// (`overrides`, keys as in the file): a flag error when the flag set it, else
/// positioned at the key in the file.
pub fn override_key_error(
    file: &Path,
    src: &str,
    section: &str,
    overrides: &toml::Table,
    key: &str,
    msg: String,
) -> ScenarioError {
    if overrides.contains_key(key) {
        return ScenarioError::Flag {
            flag: format!("--{}", key.replace('_', "-")),
            msg,
        };
    }
    key_error(file, src, &[section, key], msg)
}

/// Deserialize the top-level table `key` of a scenario into `P` (which should use
/// `#[serde(deny_unknown_fields)]` and `toml::Spanned` on fields with semantic checks),
/// then apply `overrides` (keys as in the file; the flag name is derived for errors).
/// An absent table deserializes from an empty one.
pub fn parse_section<P>(
    path: &Path,
    src: &str,
    key: &str,
    overrides: &toml::Table,
) -> Result<P, ScenarioError>
where
    P: DeserializeOwned + Serialize,
{
    let doc: toml::Table =
        toml::from_str(src).map_err(|e| ScenarioError::from_toml(path, src, &e))?;
    let parsed = match doc.get(key) {
        None => P::deserialize(toml::Value::Table(toml::Table::new()))
            .map_err(|e| ScenarioError::file(path, format!("[{key}]: {}", e.message())))?,
        // Deserialize from the source text so errors keep their positions.
        Some(toml::Value::Table(_)) => section_from_src::<P>(path, src, key)?.0,
        Some(other) => {
            return Err(ScenarioError::file(
                path,
                format!(
                    "`{key}` must be a table (got {}); write it as `[{key}]`",
                    other.type_str()
                ),
            ));
        }
    };
    apply_overrides(parsed, overrides)
}

struct Section<P>(P);

fn section_from_src<P: DeserializeOwned>(
    path: &Path,
    src: &str,
    key: &str,
) -> Result<Section<P>, ScenarioError> {
    use serde::de::{IgnoredAny, MapAccess, Visitor};
    use std::fmt;
    use std::marker::PhantomData;

    struct V<'k, P>(&'k str, PhantomData<P>);
    impl<'de, P: DeserializeOwned> Visitor<'de> for V<'_, P> {
        type Value = Option<P>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a scenario table")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = None;
            while let Some(k) = map.next_key::<String>()? {
                if k == self.0 {
                    out = Some(map.next_value::<P>()?);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(out)
        }
    }
    struct Seed<'k, P>(&'k str, PhantomData<P>);
    impl<'de, P: DeserializeOwned> serde::de::DeserializeSeed<'de> for Seed<'_, P> {
        type Value = Option<P>;
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_map(V(self.0, PhantomData))
        }
    }
    let de =
        toml::de::Deserializer::parse(src).map_err(|e| ScenarioError::from_toml(path, src, &e))?;
    let got = serde::de::DeserializeSeed::deserialize(Seed::<P>(key, PhantomData), de)
        .map_err(|e| ScenarioError::from_toml(path, src, &e))?;
    got.map(Section)
        .ok_or_else(|| ScenarioError::file(path, format!("missing [{key}] table")))
}

fn apply_overrides<P>(p: P, overrides: &toml::Table) -> Result<P, ScenarioError>
where
    P: DeserializeOwned + Serialize,
{
    if overrides.is_empty() {
        return Ok(p);
    }
    let flag_of = |k: &str| format!("--{}", k.replace('_', "-"));
    let mut table = toml::Table::try_from(&p).map_err(|e| ScenarioError::Flag {
        flag: "override".into(),
        msg: format!("cannot merge command-line overrides: {e}"),
    })?;
    for (k, v) in overrides {
        table.insert(k.clone(), v.clone());
    }
    P::deserialize(toml::Value::Table(table)).map_err(|e| {
        let msg = crate::util::textpos::suggest_unknown_field(e.message());
        let flag = overrides
            .keys()
            .find(|k| msg.contains(k.as_str()))
            .map_or_else(|| "override".to_string(), |k| flag_of(k));
        ScenarioError::Flag { flag, msg }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize, serde::Serialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct W {
        kind: String,
        #[serde(default)]
        n: u32,
    }

    #[test]
    fn key_span_finds_value_in_section() {
        let src = "[load]\nx = 1\n[workload]\nkind = \"v\"\n  x = -3\n";
        let span = key_span(src, "workload", "x").unwrap();
        assert_eq!(&src[span.clone()], "-3");
        assert_eq!(line_col(src, span.start), (5, 7));
        assert!(key_span(src, "workload", "y").is_none());
    }

    #[test]
    fn unknown_key_is_positioned() {
        let src = "name = \"x\"\n[workload]\nkind = \"v\"\nbogus = 1\n";
        let err = parse_section::<W>(Path::new("s.toml"), src, "workload", &toml::Table::new())
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("s.toml:4:1: [workload] unknown field `bogus`"),
            "{text}"
        );
    }

    #[test]
    fn a_type_error_names_its_key_in_words() {
        let src = "[workload]\nkind = \"v\"\nn = \"seven\"\n";
        let err = parse_section::<W>(Path::new("s.toml"), src, "workload", &toml::Table::new())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "s.toml:3:5: [workload] n: expected a whole number ≥ 0, got the string \"seven\""
        );
        assert!(err.is_shape_error());
        let range = ScenarioError::file(Path::new("s.toml"), "`n` must be ≥ 1");
        assert!(!range.is_shape_error());
    }

    #[test]
    fn overrides_win_and_bad_override_names_flag() {
        let src = "[workload]\nkind = \"v\"\nn = 1\n";
        let mut o = toml::Table::new();
        o.insert("n".into(), toml::Value::Integer(7));
        let w: W = parse_section(Path::new("s.toml"), src, "workload", &o).unwrap();
        assert_eq!(w.n, 7);
        o.insert("n".into(), toml::Value::String("x".into()));
        let err = parse_section::<W>(Path::new("s.toml"), src, "workload", &o).unwrap_err();
        assert!(matches!(err, ScenarioError::Flag { .. }), "{err}");
    }
}
