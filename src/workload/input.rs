//! What a workload kind's builder reads and what it declares for the command line.
//!
//! A builder gets a [`WorkloadInput`]: the scenario's `[workload]` table from the file,
//! parsed once, with the command line's typed [`Patch`]es applied. A kind declares its
//! command-line options as data, one [`FlagSpec`] per `[workload]` key it lets a flag
//! set: the CLI builds its clap arguments and help from these tables, and an error about
//! a value a flag set names that flag (from the same table), an error about a value in
//! the file its line and column.

use std::path::Path;

use serde::de::DeserializeOwned;

pub use crate::util::scenario_doc::{Patch, Section};
use crate::util::scenario_error::ScenarioError;

/// How a workload flag's text becomes its `[workload]` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagKind {
    /// One string, as given.
    Text,
    /// A path, relative to the current directory (made absolute; a path in the file is
    /// relative to the scenario).
    Path,
    /// A URL (`http://`, `https://`, `data:`) as given, else a local file made absolute.
    UrlOrPath,
    /// A whole number (TOML integer).
    Int,
    /// A number (TOML float).
    Float,
    /// A switch: present means `true`.
    Switch,
    /// One or more strings (TOML array); the flag may repeat.
    List,
    /// A JSON object (TOML table).
    JsonObject,
}

/// One command-line option of a workload kind: the flag that sets `[workload] key`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlagSpec {
    /// The `[workload]` key it sets (`timeout_s`).
    pub key: &'static str,
    /// The long flag name without its dashes (`omniinteract-timeout-s`).
    pub flag: &'static str,
    /// One line of `--help`.
    pub help: &'static str,
    /// The value's placeholder in `--help` (`S`, `PATH`); unused for a switch.
    pub value_name: &'static str,
    /// How its text is typed.
    pub kind: FlagKind,
}

/// A workload flag as the command line gave it: its long name (no dashes) and its text
/// values (none for a switch). Which `[workload]` key it sets, and how its text is
/// typed, is up to the scenario's workload kind ([`FlagSpec`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadFlag {
    /// The long name without dashes (`num-chunks`).
    pub flag: String,
    /// What followed it, in order (every occurrence of a repeatable flag).
    pub values: Vec<String>,
}

impl FlagSpec {
    /// A row of a flag table: `--flag` sets `[workload] key`.
    pub const fn new(
        key: &'static str,
        flag: &'static str,
        help: &'static str,
        value_name: &'static str,
        kind: FlagKind,
    ) -> Self {
        Self {
            key,
            flag,
            help,
            value_name,
            kind,
        }
    }

    /// The flag as typed: `--omniinteract-timeout-s`.
    pub fn long(&self) -> String {
        format!("--{}", self.flag)
    }

    /// The typed `[workload]` value of the flag's text `values` (empty for a switch).
    pub fn value(&self, values: &[String]) -> Result<toml::Value, String> {
        let one = || {
            values
                .last()
                .cloned()
                .ok_or_else(|| format!("needs a value ({})", self.value_name))
        };
        Ok(match self.kind {
            FlagKind::Text => toml::Value::String(one()?),
            FlagKind::Path => toml::Value::String(absolute(Path::new(&one()?))),
            FlagKind::UrlOrPath => {
                let v = one()?;
                let is_url = ["http://", "https://", "data:"]
                    .iter()
                    .any(|p| v.starts_with(p));
                toml::Value::String(if is_url { v } else { absolute(Path::new(&v)) })
            }
            FlagKind::Int => {
                let v = one()?;
                toml::Value::Integer(v.trim().parse().map_err(|_| {
                    format!(
                        "expected a whole number, got {v:?}; e.g. `{} 3`",
                        self.long()
                    )
                })?)
            }
            FlagKind::Float => {
                let v = one()?;
                toml::Value::Float(v.trim().parse().map_err(|_| {
                    format!("expected a number, got {v:?}; e.g. `{} 2.5`", self.long())
                })?)
            }
            FlagKind::Switch => toml::Value::Boolean(true),
            FlagKind::List => {
                toml::Value::Array(values.iter().cloned().map(toml::Value::String).collect())
            }
            FlagKind::JsonObject => json_object(&one()?)?,
        })
    }

    /// The patch this flag makes with its text `values`; a value its kind refuses is an
    /// error naming the flag.
    pub fn patch(&self, values: &[String]) -> Result<Patch, ScenarioError> {
        let flag = self.long();
        match self.value(values) {
            Ok(v) => Ok(Patch::new(self.key, flag, v)),
            Err(msg) => Err(ScenarioError::Flag { flag, msg }),
        }
    }
}

/// The patches `flags` (each a flag name without `--` and its text values) make through
/// the flag table `specs`, for the workloads' flag tests.
#[cfg(test)]
pub(crate) fn patches_of(specs: &[FlagSpec], flags: &[(&str, &[&str])]) -> Vec<Patch> {
    flags
        .iter()
        .map(|(f, v)| {
            let spec = specs.iter().find(|s| s.flag == *f).expect(f);
            let values: Vec<String> = v.iter().map(|s| s.to_string()).collect();
            spec.patch(&values).unwrap()
        })
        .collect()
}

/// A JSON object as a TOML table.
fn json_object(json: &str) -> Result<toml::Value, String> {
    let v: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("not valid JSON ({e}): {json}"))?;
    toml::Value::try_from(&v)
        .ok()
        .filter(toml::Value::is_table)
        .ok_or_else(|| format!("must be a JSON object (got {json})"))
}

/// A command-line path made absolute (it is relative to the current directory, not to
/// the scenario).
fn absolute(p: &Path) -> String {
    std::path::absolute(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}

/// The knobs of `rtload dataset synth`; each kind's writer reads the ones it has.
#[derive(Debug, Clone, PartialEq)]
pub struct SynthOptions {
    /// Seed of all generated content.
    pub seed: u64,
    /// Also write an archive of the data tree.
    pub tar: bool,
    /// Write real MP4 cases instead of frames cases.
    pub mp4: bool,
    /// Cases per subset.
    pub cases_per_subset: usize,
    /// Audio length of each case, milliseconds.
    pub duration_ms: u32,
    /// Audio files to write.
    pub files: usize,
    /// Words per audio file.
    pub words: usize,
    /// Speaking rate, words per second.
    pub words_per_second: f64,
    /// Sample rate of the audio files, Hz.
    pub sample_rate: u32,
}

/// A small test dataset a kind can write (`rtload dataset synth --kind NAME DIR`), so
/// its scenarios run offline against the embedded server.
#[derive(Debug, Clone, Copy)]
pub struct DatasetSynth {
    /// The `--kind` value.
    pub name: &'static str,
    /// Write it into a directory; what to tell the user (paths to use in a scenario).
    pub write: fn(&Path, &SynthOptions) -> Result<Vec<String>, String>,
}

/// What a workload builder gets: its `[workload]` table (patched by the command line),
/// and the `[load]` facts a workload needs to choose its samples.
#[derive(Debug, Clone)]
pub struct WorkloadInput<'a> {
    /// The `[workload]` table, with the command line's patches applied.
    pub section: &'a Section<'a>,
    /// `[load] samples` / `--num-prompts` as given (`None` = not given).
    pub samples_requested: Option<usize>,
    /// `[load] seed` / `--seed` (also the dataset shuffle seed).
    pub seed: u64,
    /// `[load] duration_s`: hold each session this long, seconds (`None`: a session ends
    /// when its media does). A kind that reads it sets `Descriptor::holds_sessions`.
    pub hold_s: Option<f64>,
    /// `rtload check`: validate without writing anything (no archive extraction, no
    /// output directories); inputs known only after such writes may stay unresolved.
    pub check_only: bool,
}

impl<'a> WorkloadInput<'a> {
    /// The scenario file (for errors about it as a whole).
    pub fn path(&self) -> &'a Path {
        self.section.doc().path()
    }

    /// The scenario's folder: what paths in the file are relative to.
    pub fn base_dir(&self) -> &'a Path {
        self.path().parent().unwrap_or(Path::new("."))
    }

    /// The `[workload]` table as the kind's parameter type `P` (which denies unknown
    /// keys); a bad value is positioned in the file, or names the flag that set it.
    pub fn params<P: DeserializeOwned>(&self) -> Result<P, Vec<ScenarioError>> {
        self.section.deserialize().map_err(|e| vec![e])
    }

    /// An error about `[workload] key`: at the flag when the command line set it, else
    /// at the key in the file (the one helper every workload uses).
    pub fn key_error(&self, key: &str, msg: String) -> ScenarioError {
        self.section.key_error(key, msg)
    }

    /// An error about the scenario as a whole (a required key missing).
    pub fn file_error(&self, msg: impl Into<String>) -> ScenarioError {
        ScenarioError::file(self.path(), msg)
    }
}
