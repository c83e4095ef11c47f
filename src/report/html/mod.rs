//! The HTML report of `rtload report RESULT.json... --html OUT.html`: one self-contained
//! page (inline CSS and SVG, no external resources) with charts and a metrics table per
//! result document.
//!
//! Every section is drawn from the result itself and knows no workload: the summary and
//! errors from its generic blocks (`rtload.verdict`, `thresholds`, `metrics`,
//! `headline_metrics`, `failures`, `warnings`, `generator_bound`, `achieved`), the charts
//! its workload declared (`rtload.charts`, see [`charts`]) over `rtload.distributions`,
//! `rtload.session_series` and `rtload.timeline`, the `.hlog` beside it, and the metrics
//! table with each metric's unit, direction and measurement origin from
//! `rtload.metrics_catalogue`.
//!
//! A sweep (`sweep.json`) and a capacity search (`capacity.json`) get pages of their own
//! ([`charts::sweep`], [`charts::capacity`]).
//!
//! Results of the same workload (two or more with one `rtload.workload`) also get a
//! comparison section first: their distributions and time series overlaid on shared
//! axes, one line per file; each file's own section keeps its summary, its other charts
//! and its metrics table.
//!
//! Pure rendering: parsed JSON documents and their interval logs in, a `String` out; the
//! caller reads and writes files. A document that is not recognised gets a section saying
//! so and never fails the report; [`render`] fails only when no document at all could be
//! rendered. The page carries a tiny inline script that measures every chart's drawn
//! marks, and lists every text that leaves its chart, into `body[data-chartcheck]`, so a
//! headless browser can prove the charts are drawn and nothing is clipped.

pub mod cdf;
pub mod charts;
mod errors;
mod metrics;
mod overlay;
mod page;
pub mod summary;
pub mod svg;
#[cfg(test)]
mod tests;
pub mod timeseries;

use std::fmt::Write as _;

use serde_json::Value;

use svg::esc;

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

/// The kinds of document the report knows how to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocKind {
    /// Sweep result: a top-level `"sweep"` object.
    Sweep,
    /// Capacity search (`capacity.json`): a top-level `"capacity"` object.
    Capacity,
    /// A run's result (an `rtload.metrics` object), of any workload: drawn from what it
    /// declares about itself.
    Run,
}

impl DocKind {
    fn name(self, doc: &Value) -> String {
        match self {
            DocKind::Sweep => "sweep".into(),
            DocKind::Capacity => "capacity search".into(),
            DocKind::Run => doc
                .pointer("/rtload/workload")
                .and_then(Value::as_str)
                .map_or_else(|| "rtload result".into(), str::to_string),
        }
    }
}

/// Recognise `doc`, or say (in words for the report) why it is not recognised.
pub fn classify(doc: &Value) -> Result<DocKind, String> {
    let Some(obj) = doc.as_object() else {
        return Err(format!("not a JSON object (found {})", json_type(doc)));
    };
    if obj.get("sweep").is_some_and(Value::is_object) {
        return Ok(DocKind::Sweep);
    }
    if obj.get("capacity").is_some_and(Value::is_object) {
        return Ok(DocKind::Capacity);
    }
    if doc.pointer("/rtload/metrics").is_some_and(Value::is_object) {
        return Ok(DocKind::Run);
    }
    let keys: Vec<&str> = obj.keys().map(String::as_str).take(12).collect();
    Err(format!(
        "no `sweep` or `capacity` object and no `rtload.metrics` object (not an rtload result); top-level keys: {}",
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
        let k = kind
            .as_ref()
            .map_or_else(|_| "not recognized".to_string(), |k| k.name(&input.doc));
        let _ = write!(
            out,
            "<li><a href=\"#doc-{i}\">{}</a> ({})</li>",
            esc(&input.name),
            esc(&k)
        );
    }
    out.push_str("</ul></nav>\n");
    for (g, (key, members)) in groups.iter().enumerate() {
        out.push_str(&overlay::section(g, key, inputs, members));
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
    let _ = writeln!(s, " <span class=\"kind\">{}</span></h2>", esc(&k.name(doc)));
    s.push_str(&meta(doc));
    if k == DocKind::Sweep {
        s.push_str(&summary::sweep_verdict(doc));
        s.push_str(&charts::sweep(doc));
        s.push_str(&metrics::table(doc, None));
        s.push_str("</section>\n");
        return s;
    }
    if k == DocKind::Capacity {
        s.push_str(&charts::capacity(doc));
        s.push_str("</section>\n");
        return s;
    }
    let declared = charts::Declared::of(doc);
    s.push_str(&summary::summary(doc, declared.catalogue.as_ref()));
    s.push_str(&errors::section(doc));
    s.push_str(&charts::other_figures(doc, &declared));
    if overlaid {
        s.push_str("<p class=\"nodata\">Distributions and time series: overlaid with the comparable results in the comparison above.</p>\n");
    } else {
        let dists = charts::distributions(doc, &declared, input.log.intervals());
        s.push_str(&charts::dist_figures(&dists));
        let run = charts::overtime::Run {
            name,
            colour: 0,
            doc,
            log: &input.log,
        };
        s.push_str(&charts::overtime::panel(&[run], false));
        s.push_str(&charts::soak(doc));
    }
    s.push_str(&metrics::table(doc, declared.catalogue.as_ref()));
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
