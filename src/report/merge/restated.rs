//! Top-level summary objects that restate a metric: a transcription result's
//! `"rtf": {"count", "mean", "p99", …}` holds the very numbers of `rtload.metrics`'
//! `rtf.count`, `rtf.mean`, `rtf.p99`. The shards' objects differ, so the generic merge
//! would leave them out; where every shard's object states its own metrics, field by
//! field, the merged object is rebuilt from the merged metrics (one number, one source).
//! An object that does not (another percentile rule, a field with no metric) is left
//! out as before and listed under `rtload_merge.dropped_keys`.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::doc::flat_metrics;

/// The top-level objects of `docs` (the first document's keys) that restate a metric in
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
        let states = |(doc, flat): (&&Value, &BTreeMap<String, f64>)| {
            doc.get(key)
                .and_then(Value::as_object)
                .is_some_and(|o| o.len() == fields.len() && restates(key, o, flat))
        };
        if !docs.iter().zip(&flats).all(states) {
            continue;
        }
        let rebuilt: Option<Map<String, Value>> = fields
            .keys()
            .map(|f| {
                let x = *merged.get(&format!("{key}.{f}"))?;
                let ints = docs.iter().all(|d| d[key][f].is_u64());
                let n = if ints && x.fract() == 0.0 && x >= 0.0 {
                    json!(x as u64)
                } else {
                    json!(x)
                };
                Some((f.clone(), n))
            })
            .collect();
        if let Some(o) = rebuilt {
            out.insert(key.clone(), Value::Object(o));
        }
    }
    out
}

/// Every field `f` of `obj` is a number equal to the shard's own metric `key.f`.
fn restates(key: &str, obj: &Map<String, Value>, flat: &BTreeMap<String, f64>) -> bool {
    obj.iter().all(
        |(f, v)| match (v.as_f64(), flat.get(&format!("{key}.{f}"))) {
            (Some(x), Some(&m)) => (x - m).abs() <= 1e-9 * x.abs().max(m.abs()).max(1.0),
            _ => false,
        },
    )
}

#[cfg(test)]
#[path = "restated_tests.rs"]
mod tests;
