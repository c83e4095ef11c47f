//! A scenario file parsed once: its path, its text and its spanned TOML tree. Every
//! section parser gets its subtree from here ([`ScenarioDoc::section`]) and every error
//! its position from the same tree (no parser reads the text again).
//!
//! Command-line values that override a section's keys are typed [`Patch`]es applied to
//! the section's subtree before it is deserialized once. A patched value is placed at a
//! position past the end of the text, so an error about it (serde's or the section's own
//! range checks) names the flag that set it instead of a line of the file.

use std::borrow::Cow;
use std::ops::Range;
use std::path::Path;

use serde::de::DeserializeOwned;
use toml::Spanned;
use toml::de::{DeTable, DeValue, ValueDeserializer};

use crate::util::scenario_error::{ScenarioError, in_words, with_key};
use crate::util::textpos;

#[cfg(test)]
thread_local! {
    /// How many scenario texts this thread has parsed (tests count parses per load).
    static PARSES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many scenario texts this thread has parsed so far (for tests).
#[cfg(test)]
pub(crate) fn parses() -> usize {
    PARSES.with(std::cell::Cell::get)
}

/// A scenario file parsed into its spanned tree.
#[derive(Debug, Clone)]
pub struct ScenarioDoc<'i> {
    path: &'i Path,
    src: &'i str,
    root: Spanned<DeTable<'i>>,
}

/// A value the command line sets for one key of a section, typed, with the flag that set
/// it (which every error about the value names).
#[derive(Debug, Clone, PartialEq)]
pub struct Patch {
    /// The key in the section, as in the file (`timeout_s`).
    pub key: String,
    /// The flag as typed, with its dashes (`--omniinteract-timeout-s`).
    pub flag: String,
    /// The typed value.
    pub value: toml::Value,
    /// `value` as TOML text (what the patched subtree borrows).
    text: String,
}

impl Patch {
    /// `key = value`, set by `flag`.
    pub fn new(key: impl Into<String>, flag: impl Into<String>, value: toml::Value) -> Self {
        let text = value.to_string();
        Self {
            key: key.into(),
            flag: flag.into(),
            value,
            text,
        }
    }
}

impl<'i> ScenarioDoc<'i> {
    /// Parse scenario text `src` (named `path` in errors). A syntax error is positioned.
    pub fn parse(path: &'i Path, src: &'i str) -> Result<Self, ScenarioError> {
        #[cfg(test)]
        PARSES.with(|c| c.set(c.get() + 1));
        let root = DeTable::parse(src).map_err(|e| ScenarioError::syntax(path, src, &e))?;
        Ok(Self { path, src, root })
    }

    /// The file the text came from.
    pub fn path(&self) -> &'i Path {
        self.path
    }

    /// The text.
    pub fn src(&self) -> &'i str {
        self.src
    }

    /// The top-level table.
    pub fn root(&self) -> &DeTable<'i> {
        self.root.get_ref()
    }

    /// Byte span of the value at `keys` (`["target", "ca_cert"]`), when the file has it.
    pub fn value_span(&self, keys: &[&str]) -> Option<Range<usize>> {
        textpos::value_span_in(self.root(), keys)
    }

    /// An error at byte range `span` of the text.
    pub fn at(&self, span: Range<usize>, msg: impl Into<String>) -> ScenarioError {
        ScenarioError::at(self.path, self.src, span, msg)
    }

    /// An error about the whole file.
    pub fn file_error(&self, msg: impl Into<String>) -> ScenarioError {
        ScenarioError::file(self.path, msg)
    }

    /// An error about the value at `keys`: positioned at the value when the file has it,
    /// else about the file, naming the table.
    pub fn key_error(&self, keys: &[&str], msg: impl Into<String>) -> ScenarioError {
        match self.value_span(keys) {
            Some(span) => self.at(span, msg),
            None => {
                let table = keys
                    .split_last()
                    .map_or(String::new(), |(_, t)| t.join("."));
                self.file_error(format!("[{table}]: {}", msg.into()))
            }
        }
    }

    /// A deserialization error, positioned and naming its key in words
    /// (`[load] max_concurrency: expected an integer, got the string "ten"`).
    pub fn de_error(&self, err: &toml::de::Error) -> ScenarioError {
        let msg = textpos::suggest_unknown_field(err.message().trim_end());
        match err.span() {
            Some(span) => {
                let msg = match textpos::entry_at(self.root(), span.start) {
                    Some((keys, _)) => with_key(&keys, &msg),
                    None => msg,
                };
                self.at(span, msg)
            }
            None => self.file_error(msg),
        }
    }

    /// Deserialize the whole document into `P` (positions kept).
    pub fn deserialize<P: DeserializeOwned>(&self) -> Result<P, ScenarioError> {
        let root = Spanned::new(self.root.span(), DeValue::Table(self.root().clone()));
        P::deserialize(ValueDeserializer::from(root)).map_err(|e| self.de_error(&e))
    }

    /// The top-level table `name` as written (absent when the file has none).
    pub fn section<'d>(&'d self, name: &'d str) -> Section<'d> {
        self.section_with(name, &[])
    }

    /// The top-level table `name` with the command line's `patches` applied.
    pub fn section_with<'d>(&'d self, name: &'d str, patches: &'d [Patch]) -> Section<'d> {
        let written = self.root().get(name).cloned();
        if patches.is_empty() {
            return Section::new(self, name, written, patches);
        }
        let end = self.src.len();
        let (span, mut table) = match written {
            None => (end..end, DeTable::new()),
            Some(v) => {
                let span = v.span();
                match v.into_inner() {
                    DeValue::Table(t) => (span, t),
                    // Not a table: `Section::deserialize` says so.
                    other => {
                        return Section::new(self, name, Some(Spanned::new(span, other)), patches);
                    }
                }
            }
        };
        for (i, p) in patches.iter().enumerate() {
            let at = flag_span(end, i);
            if let Some(v) = patch_value(p, &at) {
                table.insert(Spanned::new(at, Cow::Borrowed(p.key.as_str())), v);
            }
        }
        Section::new(
            self,
            name,
            Some(Spanned::new(span, DeValue::Table(table))),
            patches,
        )
    }

    /// This document without the entry holding byte `pos` (see
    /// [`textpos::remove_entry_at`]); `None` when `pos` is in no entry.
    pub(crate) fn without_entry_at(&self, pos: usize) -> Option<Self> {
        let mut doc = self.clone();
        textpos::remove_entry_at(doc.root.get_mut(), pos).then_some(doc)
    }
}

/// Where patch `i` sits: past the text's end, one byte each.
fn flag_span(end: usize, i: usize) -> Range<usize> {
    end + 1 + i..end + 2 + i
}

/// The patch's value as a subtree, every node at `at`.
fn patch_value<'d>(p: &'d Patch, at: &Range<usize>) -> Option<Spanned<DeValue<'d>>> {
    let parsed = DeValue::parse(&p.text).ok()?;
    Some(placed(parsed, at))
}

fn placed<'d>(v: Spanned<DeValue<'d>>, at: &Range<usize>) -> Spanned<DeValue<'d>> {
    let value = match v.into_inner() {
        DeValue::Array(items) => DeValue::Array(items.into_iter().map(|i| placed(i, at)).collect()),
        DeValue::Table(t) => DeValue::Table(
            t.into_iter()
                .map(|(k, v)| (Spanned::new(at.clone(), k.into_inner()), placed(v, at)))
                .collect(),
        ),
        other => other,
    };
    Spanned::new(at.clone(), value)
}

/// One top-level table of a scenario (with the command line's patches, if any): what a
/// section's parser reads, and how its errors are positioned.
#[derive(Debug, Clone)]
pub struct Section<'d> {
    doc: &'d ScenarioDoc<'d>,
    name: &'d str,
    value: Option<Spanned<DeValue<'d>>>,
    patches: &'d [Patch],
}

impl<'d> Section<'d> {
    fn new(
        doc: &'d ScenarioDoc<'d>,
        name: &'d str,
        value: Option<Spanned<DeValue<'d>>>,
        patches: &'d [Patch],
    ) -> Self {
        Self {
            doc,
            name,
            value,
            patches,
        }
    }

    /// The document it belongs to.
    pub fn doc(&self) -> &'d ScenarioDoc<'d> {
        self.doc
    }

    /// The table's name (`workload`).
    pub fn name(&self) -> &str {
        self.name
    }

    /// The value as written (and patched); `None` when the file has no such table.
    pub fn value(&self) -> Option<&Spanned<DeValue<'d>>> {
        self.value.as_ref()
    }

    /// The table, when the section is one.
    pub fn table(&self) -> Option<&DeTable<'d>> {
        self.value.as_ref().and_then(|v| v.get_ref().as_table())
    }

    /// The value of `key` in the table.
    pub fn get(&self, key: &str) -> Option<&Spanned<DeValue<'d>>> {
        self.table().and_then(|t| t.get(key))
    }

    /// The flag that set `key`, if the command line set it.
    pub fn flag_of(&self, key: &str) -> Option<&'d str> {
        self.patches
            .iter()
            .rev()
            .find(|p| p.key == key)
            .map(|p| p.flag.as_str())
    }

    /// Deserialize the table into `P` (which should deny unknown fields); an absent table
    /// reads as an empty one, any other value is an error saying to write a table.
    pub fn deserialize<P: DeserializeOwned>(&self) -> Result<P, ScenarioError> {
        let value = match &self.value {
            None => Spanned::new(0..0, DeValue::Table(DeTable::new())),
            Some(v) if v.get_ref().is_table() => v.clone(),
            Some(v) => {
                let name = self.name;
                return Err(self.doc.at(
                    v.span(),
                    format!(
                        "`{name}` must be a table (got {}); write it as `[{name}]`",
                        v.get_ref().type_str()
                    ),
                ));
            }
        };
        P::deserialize(ValueDeserializer::from(value)).map_err(|e| self.error(&e))
    }

    /// A deserialization error: at the flag when it is about a patched value, else
    /// positioned in the file ([`ScenarioDoc::de_error`]).
    pub fn error(&self, err: &toml::de::Error) -> ScenarioError {
        let end = self.doc.src.len();
        let patch = err
            .span()
            .filter(|s| s.start > end)
            .and_then(|s| self.patches.get(s.start - end - 1));
        match patch {
            Some(p) => ScenarioError::Flag {
                flag: p.flag.clone(),
                msg: in_words(&textpos::suggest_unknown_field(err.message().trim_end())),
            },
            None => self.doc.de_error(err),
        }
    }

    /// An error about `key` of this table: at the flag when the command line set it,
    /// else at the key in the file (or about the table when the file lacks it).
    pub fn key_error(&self, key: &str, msg: impl Into<String>) -> ScenarioError {
        match self.flag_of(key) {
            Some(flag) => ScenarioError::Flag {
                flag: flag.to_string(),
                msg: msg.into(),
            },
            None => self.doc.key_error(&[self.name, key], msg),
        }
    }
}

#[cfg(test)]
#[path = "scenario_doc_tests.rs"]
mod tests;
