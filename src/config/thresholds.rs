//! The `[thresholds]` table of a scenario: parse `"metric" = "<op> <number>"` entries with
//! positions, check metric names against the ones a workload produces (with "did you
//! mean" hints), evaluate them against a run's flat metric map and render the verdicts.
//!
//! Pure: values in, values out. It never reads files and never decides exit codes; the
//! caller exits 1 when any verdict failed. A metric absent from a run fails its threshold
//! (missing is never a pass), and so does a NaN.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use toml::Spanned;

use crate::util::scenario_doc::{ScenarioDoc, Section};
use crate::util::scenario_error::ScenarioError;
use crate::util::textpos::{close_matches, line_col};

/// The accepted form, quoted in every expression error.
const FORM: &str = "expected `<op> <number>` with op one of <, <=, >, >=, ==, !=; e.g. \"< 500\"";

/// How many known names an unknown-name error lists when nothing is close.
const MAX_LISTED: usize = 6;

/// One `"metric" = "<op> <number>"` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// The flat metric name, e.g. `ttft_ms.p99` (dotted TOML keys are joined with `.`).
    pub metric: String,
    /// The comparison.
    pub op: Op,
    /// The right-hand side (always finite).
    pub bound: f64,
    /// The expression with normalized spacing and the number as written, e.g. `< 500`.
    pub expr: String,
}

/// A comparison operator: `measured <op> bound` must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==` (exact float equality; meant for counts such as `failed == 0`)
    Eq,
    /// `!=` (exact float inequality)
    Ne,
}

impl Op {
    /// Two-character operators first so `<=` is not read as `<` followed by `=`.
    const ALL: [(Op, &'static str); 6] = [
        (Op::Le, "<="),
        (Op::Ge, ">="),
        (Op::Eq, "=="),
        (Op::Ne, "!="),
        (Op::Lt, "<"),
        (Op::Gt, ">"),
    ];

    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(op, _)| *op == self)
            .map_or("?", |(_, s)| s)
    }

    /// Whether `measured <op> bound` holds. NaN never holds, not even for `!=`.
    pub fn holds(self, measured: f64, bound: f64) -> bool {
        if measured.is_nan() || bound.is_nan() {
            return false;
        }
        match self {
            Op::Lt => measured < bound,
            Op::Le => measured <= bound,
            Op::Gt => measured > bound,
            Op::Ge => measured >= bound,
            Op::Eq => measured == bound,
            Op::Ne => measured != bound,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The outcome of one threshold on one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The threshold checked.
    pub threshold: Threshold,
    /// The run's value; `None` when the run has no such metric (which fails).
    pub measured: Option<f64>,
    /// Whether the threshold held.
    pub passed: bool,
}

/// The `[thresholds]` of a scenario file's text `src` (`path` names it in errors), as
/// `parse` reads them: `rtload merge --scenario` evaluates these on the merged result.
pub fn from_text(path: &Path, src: &str) -> Result<Vec<Threshold>, Vec<ScenarioError>> {
    let doc = ScenarioDoc::parse(path, src).map_err(|e| vec![e])?;
    parse(&doc.section("thresholds"))
}

/// Read a scenario's `[thresholds]` table (absent table = no thresholds), in file order.
/// Every malformed entry is reported, positioned at its value.
pub fn parse(section: &Section<'_>) -> Result<Vec<Threshold>, Vec<ScenarioError>> {
    let src = section.doc().src();
    let mut errors = Vec::new();
    let mut out = Vec::new();
    for entry in entries(section)? {
        let parsed = match &entry.value {
            Node::Expr(text) => parse_expr(text.as_str()).map_err(|why| {
                format!(
                    "bad threshold {text:?} for `{}`: {why}; {FORM}",
                    entry.metric
                )
            }),
            Node::Table(_) | Node::Other => Err(format!(
                "threshold for `{}` must be a quoted string (got {}); {FORM}",
                entry.metric,
                src.get(entry.value_span.clone())
                    .unwrap_or("a non-string")
                    .trim()
            )),
        };
        match parsed {
            Ok((op, bound, number)) => out.push(Threshold {
                metric: entry.metric,
                op,
                bound,
                expr: format!("{op} {number}"),
            }),
            Err(msg) => errors.push(section.doc().at(entry.value_span, msg)),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// Check every threshold's metric name against `known` (the names the scenario's
/// workload produces). An unknown name is an error positioned at its key, suggesting up
/// to three close matches or, when nothing is close, listing a few known names.
pub fn check_names(
    section: &Section<'_>,
    thresholds: &[Threshold],
    known: &[&str],
) -> Result<(), Vec<ScenarioError>> {
    let unknown: Vec<&Threshold> = thresholds
        .iter()
        .filter(|t| !known.contains(&t.metric.as_str()))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    let doc = section.doc();
    let spans: BTreeMap<String, Range<usize>> = entries(section)?
        .into_iter()
        .map(|e| (e.metric, e.key_span))
        .collect();
    let errors = unknown
        .into_iter()
        .map(|t| {
            let msg = unknown_metric_message(&t.metric, known, "[thresholds]");
            match spans.get(&t.metric) {
                Some(span) => doc.at(span.clone(), msg),
                None => doc.file_error(msg),
            }
        })
        .collect();
    Err(errors)
}

/// Check every threshold against a run's flat metric map. Missing and NaN values fail.
pub fn evaluate(thresholds: &[Threshold], metrics: &BTreeMap<String, f64>) -> Vec<Verdict> {
    thresholds
        .iter()
        .map(|t| {
            let measured = metrics.get(&t.metric).copied();
            Verdict {
                threshold: t.clone(),
                measured,
                passed: measured.is_some_and(|m| t.op.holds(m, t.bound)),
            }
        })
        .collect()
}

/// One line per verdict, `PASS` or `FAIL` first (greppable), then the metric and
/// expression (aligned), then the measured value or `missing: no samples`, e.g.
/// `FAIL  ttft_ms.p99 < 500  measured 612.400`. Empty input renders as "".
pub fn render(verdicts: &[Verdict]) -> String {
    let checks: Vec<String> = verdicts
        .iter()
        .map(|v| format!("{} {}", v.threshold.metric, v.threshold.expr))
        .collect();
    let width = checks.iter().map(|c| c.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    for (v, check) in verdicts.iter().zip(&checks) {
        let mark = if v.passed { "PASS" } else { "FAIL" };
        let value = match v.measured {
            Some(x) => format!("measured {}", format_value(x)),
            None => "missing: no samples".to_string(),
        };
        out.push_str(&format!("{mark}  {check:<width$}  {value}\n"));
    }
    out
}

/// A value for people: 3 decimals, scientific notation for tiny non-zero magnitudes.
pub(crate) fn format_value(x: f64) -> String {
    if x != 0.0 && x.abs() < 1e-3 {
        format!("{x:.3e}")
    } else {
        format!("{x:.3}")
    }
}

/// Parse `<op> <number>` (spacing free). Returns the op, the bound and the number as
/// written, or why not.
fn parse_expr(text: &str) -> Result<(Op, f64, &str), String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("the expression is empty".into());
    }
    let Some((op, rest)) = Op::ALL
        .iter()
        .find_map(|(op, s)| t.strip_prefix(s).map(|rest| (*op, rest)))
    else {
        return Err("it does not start with a comparison operator".into());
    };
    let number = rest.trim_start();
    if number.is_empty() {
        return Err(format!("no number after `{op}`"));
    }
    match number.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok((op, x, number)),
        Ok(_) => Err(format!("the bound `{number}` is not a finite number")),
        Err(_) => Err(format!("`{number}` is not a number")),
    }
}

/// "unknown metric `m` in `<where>`; did you mean …?" (or a few known names when nothing
/// is close): the message for any place a scenario names a metric.
pub fn unknown_metric_message(metric: &str, known: &[&str], place: &str) -> String {
    let close = close_matches(metric, known);
    if !close.is_empty() {
        let list = close
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let lead = if close.len() == 1 {
            "did you mean"
        } else {
            "did you mean one of"
        };
        return format!("unknown metric `{metric}` in {place}; {lead} {list}?");
    }
    let mut names: Vec<&str> = known.to_vec();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        return format!("unknown metric `{metric}` in {place}; this workload reports none");
    }
    let shown = names
        .iter()
        .take(MAX_LISTED)
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let more = names.len().saturating_sub(MAX_LISTED);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("unknown metric `{metric}` in {place}; known metrics include {shown}{tail}")
}

/// One leaf of the `[thresholds]` table with the positions errors point at.
struct Entry {
    metric: String,
    key_span: Range<usize>,
    value: Node,
    value_span: Range<usize>,
}

/// A `[thresholds]` value: an expression string, a nested table (from dotted keys such
/// as `ttft_ms.p99 = ...` or `[thresholds.ttft_ms]`) or anything else (an error).
enum Node {
    Expr(String),
    Table(Vec<(Spanned<String>, Spanned<Node>)>),
    Other,
}

/// Every leaf of `[thresholds]` in file order; nested keys joined with `.`. Duplicate
/// names (e.g. `"a.b"` and dotted `a.b`) are errors at the later key.
fn entries(section: &Section<'_>) -> Result<Vec<Entry>, Vec<ScenarioError>> {
    let (doc, src) = (section.doc(), section.doc().src());
    let Some(value) = section.value() else {
        return Ok(Vec::new());
    };
    let root = Spanned::<Node>::deserialize(toml::de::ValueDeserializer::from(value.clone()))
        .map_err(|e| vec![toml_error(section, &e)])?;
    let span = root.span();
    let Node::Table(items) = root.into_inner() else {
        let msg = "`thresholds` must be a table; write it as `[thresholds]` with lines like \
                   \"ttft_ms.p99\" = \"< 500\"";
        return Err(vec![doc.at(span, msg)]);
    };
    let mut out = Vec::new();
    flatten(src, "", None, items, &mut out);
    out.sort_by_key(|e| e.key_span.start);
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut errors = Vec::new();
    for e in &out {
        if let Some(first) = seen.insert(&e.metric, e.key_span.start) {
            let (line, _) = line_col(src, first);
            let msg = format!(
                "duplicate threshold for `{}` (first set on line {line}); keep one",
                e.metric
            );
            errors.push(doc.at(e.key_span.clone(), msg));
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// A deserialization error, positioned; a date-time value (which `toml` hands over as a
/// private map that our spanned keys reject) gets the ordinary "must be a quoted string"
/// message.
fn toml_error(section: &Section<'_>, err: &toml::de::Error) -> ScenarioError {
    let doc = section.doc();
    match err.span() {
        Some(span) if err.message().contains("$__toml_private_datetime") => {
            let got = doc.src().get(span.clone()).unwrap_or("a date-time").trim();
            let msg = format!("threshold values must be quoted strings (got {got}); {FORM}");
            doc.at(span, msg)
        }
        _ => section.error(err),
    }
}

/// Walk nested tables. A leaf's key span starts at the outermost key on the same line
/// (so `ttft.p99 = ...` points at `ttft`), else at its own key (`[thresholds.x]` tables).
fn flatten(
    src: &str,
    prefix: &str,
    outer: Option<Range<usize>>,
    items: Vec<(Spanned<String>, Spanned<Node>)>,
    out: &mut Vec<Entry>,
) {
    for (key, value) in items {
        let metric = if prefix.is_empty() {
            key.get_ref().clone()
        } else {
            format!("{prefix}.{}", key.get_ref())
        };
        let own = key.span();
        let key_span = match &outer {
            Some(o) if line_col(src, o.start).0 == line_col(src, own.start).0 => o.start..own.end,
            _ => own,
        };
        let value_span = value.span();
        match value.into_inner() {
            Node::Table(inner) => flatten(src, &metric, Some(key_span), inner, out),
            node => out.push(Entry {
                metric,
                key_span,
                value: node,
                value_span,
            }),
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a threshold expression string or a table of them")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Expr(v.to_string()))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Node, E> {
        Ok(Node::Other)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Node, E> {
        Ok(Node::Other)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Node, E> {
        Ok(Node::Other)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Node, E> {
        Ok(Node::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Node::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(key) = map.next_key::<Spanned<String>>()? {
            items.push((key, map.next_value::<Spanned<Node>>()?));
        }
        Ok(Node::Table(items))
    }
}

#[cfg(test)]
#[path = "thresholds_tests.rs"]
mod tests;
