//! The HTML report of `rtload report RESULT.json... --html OUT.html`: one self-contained
//! page (inline CSS and SVG, no external resources) with charts and a metrics table per
//! result document.
//!
//! Pure rendering: parsed JSON documents in, a `String` out; the caller reads and writes
//! files. A document that is not recognised gets a section saying so and never fails the
//! report; [`render_html`] fails only when no document at all could be rendered. The page
//! carries a tiny inline script that measures every chart's drawn marks into
//! `body[data-chartcheck]`, so a headless browser can prove the charts are drawn.

pub mod charts;
pub mod svg;
#[cfg(test)]
mod tests;

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

/// Render one self-contained HTML page for `docs` (file name, parsed result JSON), in the
/// order given. Same input, same bytes.
pub fn render_html(docs: &[(String, Value)]) -> Result<String, HtmlError> {
    if docs.is_empty() {
        return Err(HtmlError::NoDocuments);
    }
    let kinds: Vec<Result<DocKind, String>> = docs.iter().map(|(_, d)| classify(d)).collect();
    if kinds.iter().all(Result::is_err) {
        let why: Vec<String> = docs
            .iter()
            .zip(&kinds)
            .filter_map(|((name, _), k)| k.as_ref().err().map(|e| format!("{name}: {e}")))
            .collect();
        return Err(HtmlError::NothingRecognized(why.join("; ")));
    }
    let mut page = String::from(HEAD);
    page.push_str("<h1>rtload report</h1>\n<nav><ul>");
    for (i, ((name, _), kind)) in docs.iter().zip(&kinds).enumerate() {
        let k = kind.as_ref().map_or("not recognized", |k| k.name());
        let _ = write!(
            page,
            "<li><a href=\"#doc-{i}\">{}</a> ({k})</li>",
            esc(name)
        );
    }
    page.push_str("</ul></nav>\n");
    for (i, ((name, doc), kind)) in docs.iter().zip(&kinds).enumerate() {
        page.push_str(&section(i, name, doc, kind));
    }
    page.push_str(TAIL);
    Ok(page)
}

fn section(i: usize, name: &str, doc: &Value, kind: &Result<DocKind, String>) -> String {
    let mut s = format!("<section class=\"doc\" id=\"doc-{i}\">\n<h2>{}", esc(name));
    match kind {
        Err(why) => {
            let _ = write!(
                s,
                " <span class=\"kind unknown\">not recognized</span></h2>\n<p class=\"unknown\">This document was not recognized, so it has no charts: {}.</p>\n</section>\n",
                esc(why)
            );
            return s;
        }
        Ok(k) => {
            let _ = writeln!(s, " <span class=\"kind\">{}</span></h2>", k.name());
        }
    }
    s.push_str(&meta(doc));
    s.push_str(&match kind {
        Ok(DocKind::Video) => charts::video(doc),
        Ok(DocKind::Duplex) => charts::duplex(doc),
        Ok(DocKind::Generic) => charts::distributions(doc),
        _ => charts::sweep(doc),
    });
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

const HEAD: &str = r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>rtload report</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#222;max-width:1000px;margin:24px auto;padding:0 16px}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:36px}
.kind{font-size:12px;font-weight:normal;background:#eef;border-radius:4px;padding:1px 6px;margin-left:8px}
.kind.unknown,.unknown{background:#fee}
p.unknown{padding:8px;border-radius:4px}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:0 12px;font-size:12px;color:#555}dl.meta dd{margin:0}
figure{margin:16px 0;border:1px solid #e3e3e3;border-radius:6px;padding:8px 8px 4px}
figcaption{font-size:12px;color:#555;margin-top:4px}
.nodata{color:#888;font-style:italic}
svg.chart{display:block;width:100%;height:auto}
svg text{font-size:11px;fill:#444}svg .axis-title{font-size:12px;fill:#222}
.grid{stroke:#eee}.frame{stroke:#888;fill:none}
.s0{--c:#1f77b4}.s1{--c:#ff7f0e}.s2{--c:#2ca02c}.s3{--c:#9467bd}.s4{--c:#8c564b}.s5{--c:#e377c2}.s6{--c:#17becf}.s7{--c:#bcbd22}
.mark.line{fill:none;stroke:var(--c);stroke-width:1.8}.mark.dot{fill:var(--c)}.mark.bar{fill:var(--c);opacity:.85}
.mark.hl{fill:none;stroke:#2ca02c;stroke-width:3}.mark.fail{fill:#fff;stroke:#d62728;stroke-width:2}
.queue{--c:#b0b0b0}.session{--c:#1f77b4}.failed{--c:#d62728}.extent{--c:#cfd8e3}
.k-input{--c:#6baed6}.k-response{--c:#ff7f0e}.k-playback{--c:#a1d99b}.k-audio{--c:#2ca02c}.k-other{--c:#9467bd}
.mark.span{fill:var(--c)}
.ref{stroke:#d62728;stroke-dasharray:6 4;stroke-width:1.5}svg .ref-label{fill:#d62728}
.ref.cap{stroke:#2ca02c}svg .ref-label.cap{fill:#2ca02c}
.band{fill:#f3f3f3}svg .band-label{fill:#888}
ul.legend{list-style:none;padding:0;margin:4px 0;font-size:12px;display:flex;flex-wrap:wrap;gap:4px 14px}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;background:var(--c)}
table{border-collapse:collapse;font-size:12px;margin:12px 0}caption{text-align:left;font-weight:600;padding:4px 0;white-space:nowrap}
td,th{border:1px solid #e3e3e3;padding:2px 8px;text-align:left}td:last-child{text-align:right;font-variant-numeric:tabular-nums}
td.pass{color:#2ca02c}td.fail{color:#d62728}
</style></head><body>
"#;

/// Layout self-check: measure every chart's marks into `body[data-chartcheck]`.
const TAIL: &str = r#"<script>
(function(){var out=[];document.querySelectorAll('svg.chart').forEach(function(s){
var m=s.querySelectorAll('path.mark,rect.mark,circle.mark,line.mark'),x0=1/0,y0=1/0,x1=-1/0,y1=-1/0;
m.forEach(function(e){var b=e.getBBox();x0=Math.min(x0,b.x);y0=Math.min(y0,b.y);x1=Math.max(x1,b.x+b.width);y1=Math.max(y1,b.y+b.height);});
var v=s.viewBox.baseVal,n=m.length;
out.push({chart:s.getAttribute('data-chart'),marks:n,width:n?x1-x0:0,height:n?y1-y0:0,
inside:n>0&&x0>=v.x-1&&y0>=v.y-1&&x1<=v.x+v.width+1&&y1<=v.y+v.height+1});});
document.body.setAttribute('data-chartcheck',JSON.stringify(out));})();
</script>
</body></html>
"#;
