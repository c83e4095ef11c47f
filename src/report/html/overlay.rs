//! The comparison section of a report over several results: results of the same
//! workload (the `rtload.workload` they carry; sweeps, capacity searches and results
//! without it never)
//! are comparable, and each group of two or more gets one section with a side-by-side
//! verdict table, every distribution overlaid on one set of axes (one line or dot row
//! per file, the legend naming the file) and the time-series panel overlaid likewise.
//! Results of different kinds are not overlaid: they keep one section each.

use std::fmt::Write as _;

use serde_json::Value;

use super::charts::dist::{Dist, Line, dist_figure};
use super::charts::overtime::{Run, panel};
use super::charts::{Declared, LEGEND_CHARS, distributions};
use super::summary::cell;
use super::svg::{ellipsize_middle, esc};
use super::{DocKind, Input};

/// Headline metrics shown side by side in the comparison table, at most.
const TABLE_HEADLINES: usize = 4;

/// What makes two results comparable: the workload that wrote them.
fn key(doc: &Value, kind: DocKind) -> Option<String> {
    if kind != DocKind::Run {
        return None;
    }
    doc.pointer("/rtload/workload")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Groups of two or more comparable results: (kind key, indices into `inputs`), in the
/// order their first member appears.
pub fn groups(inputs: &[Input], kinds: &[Result<DocKind, String>]) -> Vec<(String, Vec<usize>)> {
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, (input, kind)) in inputs.iter().zip(kinds).enumerate() {
        let Some(k) = kind.as_ref().ok().and_then(|k| key(&input.doc, *k)) else {
            continue;
        };
        match out.iter_mut().find(|(g, _)| *g == k) {
            Some((_, m)) => m.push(i),
            None => out.push((k, vec![i])),
        }
    }
    out.retain(|(_, m)| m.len() >= 2);
    out
}

/// The comparison section `g` for `members` (indices into `inputs`) of kind `key`.
pub fn section(g: usize, key: &str, inputs: &[Input], members: &[usize]) -> String {
    let mut s = format!(
        "<section class=\"doc compare\" id=\"cmp-{g}\">\n<h2>Comparison: {} <span class=\"kind\">{} results overlaid</span></h2>\n",
        esc(key),
        members.len()
    );
    let picked: Vec<&Input> = members.iter().map(|&i| &inputs[i]).collect();
    s.push_str(&table(&picked));
    let dists: Vec<Vec<Dist>> = members
        .iter()
        .map(|&i| {
            let doc = &inputs[i].doc;
            distributions(doc, &Declared::of(doc), inputs[i].log.intervals())
        })
        .collect();
    let mut keys: Vec<&str> = Vec::new();
    for d in dists.iter().flatten() {
        if !keys.contains(&d.key.as_str()) {
            keys.push(&d.key);
        }
    }
    for k in keys {
        let mut lines = Vec::new();
        let mut missing = Vec::new();
        for (colour, (input, ds)) in picked.iter().zip(&dists).enumerate() {
            match ds.iter().find(|d| d.key == k) {
                Some(dist) => lines.push(Line {
                    name: &input.name,
                    colour,
                    dist,
                }),
                None => missing.push(input.name.as_str()),
            }
        }
        s.push_str(&dist_figure(&lines, &missing, true));
    }
    let runs: Vec<Run<'_>> = picked
        .iter()
        .enumerate()
        .map(|(colour, i)| Run {
            name: &i.name,
            colour,
            doc: &i.doc,
            log: &i.log,
        })
        .collect();
    s.push_str(&panel(&runs, true));
    s.push_str("</section>\n");
    s
}

/// One row per result: verdict, sample counts and the first headline metrics.
fn table(inputs: &[&Input]) -> String {
    let mut heads: Vec<&str> = Vec::new();
    for i in inputs {
        let names = i
            .doc
            .pointer("/rtload/headline_metrics")
            .and_then(Value::as_array);
        for h in names.into_iter().flatten().filter_map(Value::as_str) {
            if !heads.contains(&h) && heads.len() < TABLE_HEADLINES {
                heads.push(h);
            }
        }
    }
    let mut s = String::from(
        "<table class=\"compare\"><caption>Results compared</caption><tr><th>file</th><th>verdict</th><th>measured</th><th>completed</th><th>failed</th>",
    );
    for h in &heads {
        let _ = write!(s, "<th>{}</th>", esc(h));
    }
    s.push_str("</tr>");
    for i in inputs {
        let rt = i.doc.get("rtload").unwrap_or(&Value::Null);
        let n = |ptr: &str| {
            cell(
                rt.pointer(ptr)
                    .and_then(Value::as_f64)
                    .filter(|v| v.is_finite()),
            )
        };
        let short = ellipsize_middle(&i.name, LEGEND_CHARS);
        let _ = write!(
            s,
            "<tr><td title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            esc(&i.name),
            esc(&short),
            esc(rt.get("verdict").and_then(Value::as_str).unwrap_or("–")),
            n("/sample_counts/measured"),
            n("/sample_counts/completed"),
            n("/sample_counts/failed")
        );
        for h in &heads {
            let v = rt
                .get("metrics")
                .and_then(|m| m.get(*h))
                .and_then(Value::as_f64)
                .filter(|v| v.is_finite());
            let _ = write!(
                s,
                "<td>{}</td>",
                v.map_or_else(|| "–".into(), super::metrics::value)
            );
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>\n");
    s
}

#[cfg(test)]
#[path = "overlay_tests.rs"]
mod tests;
