//! Top-level summary objects that restate a metric: a transcription result's
//! `"rtf": {"count", "mean", "p99", …}` holds the very numbers of `rtload.metrics`'
//! `rtf.count`, `rtf.mean`, `rtf.p99` (and its `tokens` object the `*.total` counts). The
//! shards' objects differ, so the generic merge would leave them out; where every
//! shard's object states its own metrics, field by field, the merged object is rebuilt
//! from the merged metrics (one number, one source).
//! An object that does not (another percentile rule, a field with no metric) is left
//! out as before and listed under `rtload_merge.dropped_keys`.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::doc::flat_metrics;

/// The top-level objects of `docs` (the first document's keys) that restate metrics in
/// every shard, each rebuilt from `merged` (the merged flat metrics).
pub fn restated(docs: &[&Value], merged: &BTreeMap<String, f64>) -> Map<String, Value> {
    let mut out = Map::new();
    let Some(first) = docs.first().and_then(|d| d.as_object()) else {
        return out;
    };
    let flats: Vec<BTreeMap<String, f64>> = docs.iter().map(|d| flat_metrics(d)).collect();
    for (key, v) in first {
        let Some(fields) = v.as_object().filter(|o| !o.is_empty()) else {
            continue;
        };
        // Each field's metric, named by the first shard; every shard must state it.
        let names: Option<Vec<(&String, String)>> = fields
            .iter()
            .map(|(f, x)| Some((f, metric_of(key, f, x.as_f64()?, &flats[0])?)))
            .collect();
        let Some(names) = names else { continue };
        let states = |(doc, flat): (&&Value, &BTreeMap<String, f64>)| {
            let o = doc.get(key).and_then(Value::as_object);
            o.is_some_and(|o| {
                o.len() == names.len()
                    && (names.iter()).all(|(f, m)| {
                        let x = o.get(*f).and_then(Value::as_f64);
                        x.zip(flat.get(m)).is_some_and(|(x, &y)| same(x, y))
                    })
            })
        };
        if !docs.iter().zip(&flats).all(states) {
            continue;
        }
        let rebuilt: Option<Map<String, Value>> = (names.iter())
            .map(|(f, m)| {
                let x = *merged.get(m)?;
                let ints = docs.iter().all(|d| d[key][*f].is_u64());
                let n = if ints && x.fract() == 0.0 && x >= 0.0 {
                    json!(x as u64)
                } else {
                    json!(x)
                };
                Some(((*f).clone(), n))
            })
            .collect();
        if let Some(o) = rebuilt {
            out.insert(key.clone(), Value::Object(o));
        }
    }
    out
}

/// The metric field `f` of the object `key` restates in one shard (`flat`): `key.f`
/// (`rtf.p99`), else `f.total` (`tokens.prompt_tokens` is `prompt_tokens.total`), when
/// it holds the field's value `x`.
fn metric_of(key: &str, f: &str, x: f64, flat: &BTreeMap<String, f64>) -> Option<String> {
    [format!("{key}.{f}"), format!("{f}.total")]
        .into_iter()
        .find(|m| flat.get(m).is_some_and(|&y| same(x, y)))
}

fn same(x: f64, y: f64) -> bool {
    (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0)
}

#[cfg(test)]
#[path = "restated_tests.rs"]
mod tests;
