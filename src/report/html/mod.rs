//! The HTML report of `rtload report RESULT.json... --html OUT.html`: one self-contained
//! page (inline CSS and SVG, no external resources) with charts and a metrics table per
//! result document.
//!
//! Results of the same workload kind (two or more) also get a comparison section first:
//! their distributions and time series overlaid on shared axes, one line per file; each
//! file's own section keeps its summary, its kind's charts and its metrics table.
//!
//! Pure rendering: parsed JSON documents and their interval logs in, a `String` out; the
//! caller reads and writes files. A document that is not recognised gets a section saying
//! so and never fails the report; [`render`] fails only when no document at all could be
//! rendered. The page carries a tiny inline script that measures every chart's drawn
//! marks, and lists every text that leaves its chart, into `body[data-chartcheck]`, so a
//! headless browser can prove the charts are drawn and nothing is clipped.

pub mod cdf;
pub mod charts;
mod overlay;
mod page;
pub mod summary;
pub mod svg;
#[cfg(test)]
mod tests;
pub mod timeseries;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use svg::{esc, fmt_num};

use crate::workload::catalogue::Direction;

/// Why no report could be rendered.
#[derive(Debug, thiserror::Error)]
pub enum HtmlError {
    /// The caller passed no documents.
    #[error("no result documents to render")]
    NoDocuments,
    /// Every document was unrecognised; the message lists each file and why.
    #[error("no document could be rendered: {0}")]
    NothingRecognized(String),
}

/// A result's interval log (`.hlog`, same name beside the JSON) as the caller found it.
#[derive(Debug, Clone)]
pub enum IntervalLog {
    /// There is no such file (or the caller has none): no time-series panel, said so.
    Absent,
    /// The file exists but could not be read or parsed; why.
    Unreadable(String),
    /// Its intervals, in file order.
    Read(Vec<crate::util::histlog::Interval>),
}

impl IntervalLog {
    /// The intervals, when the log was read.
    pub fn intervals(&self) -> Option<&[crate::util::histlog::Interval]> {
        match self {
            IntervalLog::Read(iv) => Some(iv),
            _ => None,
        }
    }
}

/// One result to render.
#[derive(Debug, Clone)]
pub struct Input {
    /// The file name, as the page shows it.
    pub name: String,
    /// The parsed result document.
    pub doc: Value,
    /// Its interval log.
    pub log: IntervalLog,
}

/// The kinds of result document the report knows how to chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocKind {
    /// Video cadence result: `"benchmark": "lingbot_world_realtime"`.
    Video,
    /// Duplex result: `"backend": "openai-realtime-duplex"`.
    Duplex,
    /// Sweep result: a top-level `"sweep"` object.
    Sweep,
    /// Any other rtload result (an `rtload.metrics` object): the metrics table with the
    /// units and directions of its `rtload.metrics_catalogue`.
    Generic,
}

impl DocKind {
    fn name(self) -> &'static str {
        match self {
            DocKind::Video => "video",
            DocKind::Duplex => "duplex",
            DocKind::Sweep => "sweep",
            DocKind::Generic => "rtload result",
        }
    }
}

/// Recognise `doc`, or say (in words for the report) why it is not recognised.
pub fn classify(doc: &Value) -> Result<DocKind, String> {
    let Some(obj) = doc.as_object() else {
        return Err(format!("not a JSON object (found {})", json_type(doc)));
    };
    let s = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    if obj.get("sweep").is_some_and(Value::is_object) {
        return Ok(DocKind::Sweep);
    }
    if s(obj.get("benchmark")).as_deref() == Some("lingbot_world_realtime") {
        return Ok(DocKind::Video);
    }
    if s(obj.get("backend")).as_deref() == Some("openai-realtime-duplex") {
        return Ok(DocKind::Duplex);
    }
    if doc.pointer("/rtload/metrics").is_some_and(Value::is_object) {
        return Ok(DocKind::Generic);
    }
    let keys: Vec<&str> = obj.keys().map(String::as_str).take(12).collect();
    Err(format!(
        "no `sweep` object, `benchmark = \"lingbot_world_realtime\"`, `backend = \"openai-realtime-duplex\"` or `rtload.metrics` object; top-level keys: {}",
        if keys.is_empty() {
            "(none)".to_string()
        } else {
            keys.join(", ")
        }
    ))
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// [`render`] for documents without interval logs (every log [`IntervalLog::Absent`]).
pub fn render_html(docs: &[(String, Value)]) -> Result<String, HtmlError> {
    let inputs: Vec<Input> = docs
        .iter()
        .map(|(name, doc)| Input {
            name: name.clone(),
            doc: doc.clone(),
            log: IntervalLog::Absent,
        })
        .collect();
    render(&inputs)
}

/// Render one self-contained HTML page for `inputs`, in the order given: a comparison
/// section per group of comparable results, then one section per result. Same input,
/// same bytes.
pub fn render(inputs: &[Input]) -> Result<String, HtmlError> {
    if inputs.is_empty() {
        return Err(HtmlError::NoDocuments);
    }
    let kinds: Vec<Result<DocKind, String>> = inputs.iter().map(|i| classify(&i.doc)).collect();
    if kinds.iter().all(Result::is_err) {
        let why: Vec<String> = inputs
            .iter()
            .zip(&kinds)
            .filter_map(|(i, k)| k.as_ref().err().map(|e| format!("{}: {e}", i.name)))
            .collect();
        return Err(HtmlError::NothingRecognized(why.join("; ")));
    }
    let groups = overlay::groups(inputs, &kinds);
    let mut out = String::from(page::HEAD);
    out.push_str("<h1>rtload report</h1>\n<nav><ul>");
    for (g, (key, members)) in groups.iter().enumerate() {
        let _ = write!(
            out,
            "<li><a href=\"#cmp-{g}\">comparison: {}</a> ({} results overlaid)</li>",
            esc(key),
            members.len()
        );
    }
    for (i, (input, kind)) in inputs.iter().zip(&kinds).enumerate() {
        let k = kind.as_ref().map_or("not recognized", |k| k.name());
        let _ = write!(
            out,
            "<li><a href=\"#doc-{i}\">{}</a> ({k})</li>",
            esc(&input.name)
        );
    }
    out.push_str("</ul></nav>\n");
    for (g, (key, members)) in groups.iter().enumerate() {
        out.push_str(&overlay::section(g, key, inputs, &kinds, members));
    }
    for (i, (input, kind)) in inputs.iter().zip(&kinds).enumerate() {
        let overlaid = groups.iter().any(|(_, m)| m.contains(&i));
        out.push_str(&section(i, input, kind, overlaid));
    }
    out.push_str(page::TAIL);
    Ok(out)
}

fn section(i: usize, input: &Input, kind: &Result<DocKind, String>, overlaid: bool) -> String {
    let (name, doc) = (&input.name, &input.doc);
    let mut s = format!("<section class=\"doc\" id=\"doc-{i}\">\n<h2>{}", esc(name));
    let k = match kind {
        Err(why) => {
            let _ = write!(
                s,
                " <span class=\"kind unknown\">not recognized</span></h2>\n<p class=\"unknown\">This document was not recognized, so it has no charts: {}.</p>\n</section>\n",
                esc(why)
            );
            return s;
        }
        Ok(k) => *k,
    };
    let _ = writeln!(s, " <span class=\"kind\">{}</span></h2>", k.name());
    s.push_str(&meta(doc));
    if k == DocKind::Sweep {
        s.push_str(&summary::sweep_verdict(doc));
        s.push_str(&charts::sweep(doc));
    } else {
        s.push_str(&summary::summary(doc));
        s.push_str(&match k {
            DocKind::Video => charts::video(doc),
            DocKind::Duplex => charts::duplex(doc),
            _ => String::new(),
        });
        if overlaid {
            s.push_str("<p class=\"nodata\">Distributions and time series: overlaid with the comparable results in the comparison above.</p>\n");
        } else {
            let dists = charts::distributions(doc, k == DocKind::Video, input.log.intervals());
            s.push_str(&charts::dist_figures(&dists));
            let run = charts::overtime::Run {
                name,
                colour: 0,
                doc,
                log: &input.log,
            };
            s.push_str(&charts::overtime::panel(&[run], false));
        }
    }
    s.push_str(&metrics_table(doc));
    s.push_str("</section>\n");
    s
}

/// Identifying string fields of a document, when present.
fn meta(doc: &Value) -> String {
    const KEYS: [&str; 10] = [
        "benchmark",
        "backend",
        "endpoint",
        "model",
        "model_id",
        "label",
        "timestamp",
        "date",
        "hostname",
        "git_revision",
    ];
    let mut s = String::from("<dl class=\"meta\">");
    for key in KEYS {
        if let Some(v) = doc
            .get(key)
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
        {
            let _ = write!(s, "<dt>{key}</dt><dd>{}</dd>", esc(v));
        }
    }
    s.push_str("</dl>\n");
    s
}

/// The metrics table: `rtload.metrics` (flat name → number), sorted by name. Without it,
/// the numeric leaves of the top-level `metrics` object, flattened with dots.
fn metrics_table(doc: &Value) -> String {
    let mut rows: BTreeMap<String, Option<f64>> = BTreeMap::new();
    let source = match doc.pointer("/rtload/metrics").and_then(Value::as_object) {
        Some(m) => {
            for (k, v) in m {
                rows.insert(k.clone(), v.as_f64().filter(|x| x.is_finite()));
            }
            "rtload.metrics"
        }
        None => {
            if let Some(m) = doc.get("metrics").filter(|m| m.is_object()) {
                flatten(&mut rows, "", m);
            }
            "metrics (flattened; no rtload.metrics in this file)"
        }
    };
    if rows.is_empty() {
        return "<p class=\"nodata\">no metrics in this file</p>\n".into();
    }
    let names: Vec<&str> = rows.keys().map(String::as_str).collect();
    let cat = crate::config::registry::result_catalogue(doc, &names).unwrap_or_default();
    let mut s = format!(
        "<table class=\"metrics\"><caption>Metrics ({})</caption><tr><th>metric</th><th>unit</th><th>better</th><th>value</th></tr>",
        esc(source)
    );
    for (k, v) in &rows {
        let info = cat.get(k);
        let better = match info.map(|m| m.direction) {
            Some(Direction::Lower) => "lower",
            Some(Direction::Higher) => "higher",
            _ => "–",
        };
        let _ = write!(
            s,
            "<tr{}><td>{}</td><td>{}</td><td>{better}</td><td>{}</td></tr>",
            info.map_or_else(String::new, |m| format!(
                " title=\"{}\"",
                esc(&m.description)
            )),
            esc(k),
            esc(info.map_or("", |m| m.unit.as_str())),
            v.map_or_else(|| "–".to_string(), metric_value)
        );
    }
    s.push_str("</table>\n");
    s
}

fn flatten(out: &mut BTreeMap<String, Option<f64>>, prefix: &str, v: &Value) {
    match v {
        Value::Number(n) => {
            out.insert(prefix.to_string(), n.as_f64().filter(|x| x.is_finite()));
        }
        Value::Object(m) => {
            for (k, v) in m {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(out, &name, v);
            }
        }
        _ => {}
    }
}

/// A table value: integers as integers, others with 3 decimals (more below 1).
fn metric_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        fmt_num(v, 0)
    } else if v.abs() < 1.0 {
        fmt_num(v, 6)
    } else {
        fmt_num(v, 3)
    }
}
