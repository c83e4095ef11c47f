//! The metrics table closing every result section: each flat metric of `rtload.metrics`
//! with its unit, which way is better, its value and the events it is measured between
//! (`measurement_origin`), from the result's catalogue.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::svg::{esc, fmt_num};
use crate::workload::catalogue::{Catalogue, Direction};

/// The metrics table: `rtload.metrics` (flat name → number), sorted by name, described by
/// `cat` (else the catalogue the registry finds for the file). Without `rtload.metrics`,
/// the numeric leaves of the top-level `metrics` object, flattened with dots.
pub fn table(doc: &Value, cat: Option<&Catalogue>) -> String {
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
    let found;
    let cat = match cat {
        Some(c) => c,
        None => {
            found = crate::config::registry::result_catalogue(doc, &names).unwrap_or_default();
            &found
        }
    };
    let mut s = format!(
        "<table class=\"metrics\"><caption>Metrics ({})</caption><tr><th>metric</th><th>unit</th><th>better</th><th>measured from → to</th><th>value</th></tr>",
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
            "<tr{}><td>{}</td><td>{}</td><td>{better}</td><td class=\"origin\">{}</td><td>{}</td></tr>",
            info.map_or_else(String::new, |m| format!(
                " title=\"{}\"",
                esc(&m.description)
            )),
            esc(k),
            esc(info.map_or("", |m| m.unit.as_str())),
            esc(info.map_or("", |m| m.origin.as_str())),
            v.map_or_else(|| "–".to_string(), value)
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

/// A metric value as every table of the page shows it: integers as integers, others with
/// 3 decimals (6 below 1).
pub fn value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        fmt_num(v, 0)
    } else if v.abs() < 1.0 {
        fmt_num(v, 6)
    } else {
        fmt_num(v, 3)
    }
}
