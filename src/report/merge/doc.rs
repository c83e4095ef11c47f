//! The merged result document: the first shard's document with every number replaced
//! by its merged value (or removed when it has none), per-sample arrays concatenated in
//! shard order, and an `rtload_merge` record (sources, the union of the intended release
//! times, the run's wall-clock span, and how each metric was obtained).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::metrics::{How, is_count_name, is_quantile_name};
use super::{MERGE_KEY, SHARD_KEY, ShardInput, TARGET_METRICS_KEY};

/// `rtload.metrics` of a result as a flat map (`null`s, i.e. NaN, absent).
pub fn flat_metrics(doc: &Value) -> BTreeMap<String, f64> {
    doc.pointer("/rtload/metrics")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_f64().map(|x| (k.clone(), x)))
                .collect()
        })
        .unwrap_or_default()
}

/// Names the workload's metric catalogue (`rtload.metrics_catalogue`) lists with unit
/// `count`: summed like any count.
pub fn catalogue_counts(doc: &Value) -> std::collections::BTreeSet<String> {
    doc.pointer("/rtload/metrics_catalogue")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|m| m["unit"] == "count")
        .filter_map(|m| m["name"].as_str().map(str::to_owned))
        .collect()
}

/// The `rtload` keys a workload declares about itself (its catalogue, headline names,
/// unit rate, aliases and charts): one copy in a merged result.
const CATALOGUE_KEYS: [&str; 5] = [
    "metrics_catalogue",
    "headline_metrics",
    "unit_rate",
    "metric_aliases",
    "charts",
];

/// Build the merged document.
pub fn merged_doc(
    inputs: &[ShardInput],
    merged: &super::Merged,
    values: Option<&BTreeMap<String, Vec<f64>>>,
) -> Value {
    let (metrics, how) = (&merged.metrics, &merged.how);
    let docs: Vec<&Value> = inputs.iter().map(|s| &s.doc).collect();
    // A top-level key the workload declares as another name of a metric (its
    // `rtload.metric_aliases`, e.g. vLLM's `p99_ttft_ms`) is that merged metric.
    let mut aliased = metrics.clone();
    let aliases = docs[0]
        .pointer("/rtload/metric_aliases")
        .and_then(Value::as_object);
    for (legacy, name) in aliases.into_iter().flatten() {
        if let Some(&v) = name.as_str().and_then(|n| metrics.get(n)) {
            aliased.entry(legacy.clone()).or_insert(v);
        }
    }
    let mut out = merge_object(&docs, &aliased);
    if let Value::Object(top) = &mut out {
        top.extend(super::restated::restated(&docs, metrics));
        // A workload's top-level `duration_s` is its run's (first intended release to
        // the last end): the merged run's is the shards' span, as the metric's rule.
        if docs[0].get("duration_s").is_some_and(Value::is_number)
            && let Some((a, b)) = span(inputs)
        {
            top.insert("duration_s".into(), json!(b - a));
        }
    }
    let rts: Vec<&Value> = docs.iter().filter_map(|d| d.get("rtload")).collect();
    if let (Value::Object(top), Value::Object(mut rt)) = (&mut out, merge_object(&rts, metrics)) {
        rt.insert("metrics".into(), json!(metrics));
        // What the workload declares about itself is the same in every shard: the first
        // shard's, once (concatenating would repeat every entry per shard).
        for key in CATALOGUE_KEYS {
            match rts.first().and_then(|r| r.get(key)) {
                Some(v) => rt.insert(key.into(), v.clone()),
                None => rt.remove(key),
            };
        }
        if let Some(v) = values {
            rt.insert(crate::workload::results::DISTRIBUTIONS_KEY.into(), json!(v));
        }
        super::generator::merge_into(&mut rt, inputs, &merged.hists);
        if let Some(d) = span(inputs).map(|(a, b)| b - a) {
            rt.insert("duration_s".into(), json!(d));
        }
        let verdict = crate::report::verdict::block(
            &merged.verdicts,
            merged.passed(),
            merged.interrupted,
            merged.counts,
        );
        if let Value::Object(v) = verdict {
            rt.extend(v);
        }
        rt.insert("warnings".into(), json!(merged.warnings));
        top.insert("rtload".into(), Value::Object(rt));
    }
    if let Value::Object(top) = &mut out {
        top.remove(SHARD_KEY);
        // Each shard scraped the target itself: keep every shard's timeline, labelled.
        let scraped: Vec<Value> = inputs
            .iter()
            .filter_map(|s| {
                let mut tl = s.doc.get(TARGET_METRICS_KEY)?.clone();
                tl.as_object_mut()?
                    .insert("shard".into(), json!(s.tag.index));
                Some(tl)
            })
            .collect();
        if !scraped.is_empty() {
            top.insert(TARGET_METRICS_KEY.into(), Value::Array(scraped));
        }
        let gone = dropped_keys(&inputs[0].doc, &Value::Object(top.clone()));
        top.insert(MERGE_KEY.into(), merge_record(inputs, how, gone));
    }
    out
}

/// Why a block the shards disagree on is left out of a merged result.
const NO_RULE: &str =
    "the shards' values differ and no exact rule merges them: each shard's result has its own";

/// Why `ptr` is left out of a merged result, where a rule names it.
fn why_dropped(ptr: &str) -> &'static str {
    if ptr == "/rtload/soak" {
        "percentiles by session age need the shards' values together, which results do not \
         carry: each shard's block is kept in rtload.soak_by_shard"
    } else if ptr.starts_with("/rtload/resources/") {
        "each shard is its own process: see rtload.resources (CPU summed, the largest \
         shard's peak RSS)"
    } else {
        NO_RULE
    }
}

/// Every key of the first shard's document, its `rtload` block and that block's objects
/// (as JSON pointers) that the merged document lacks: listed, never silently lost.
fn dropped_keys(first: &Value, merged: &Value) -> BTreeMap<String, &'static str> {
    let mut out = BTreeMap::new();
    let keys = |v: &Value| -> Vec<String> {
        v.as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k.clone())
            .collect()
    };
    for k in keys(first) {
        if k != SHARD_KEY && merged.get(&k).is_none() {
            out.insert(format!("/{k}"), NO_RULE);
        }
    }
    let (Some(rt), Some(mrt)) = (first.get("rtload"), merged.get("rtload")) else {
        return out;
    };
    for k in keys(rt) {
        let Some(m) = mrt.get(&k) else {
            let ptr = format!("/rtload/{k}");
            out.insert(ptr.clone(), why_dropped(&ptr));
            continue;
        };
        // A metric left out is listed under `dropped` with its own reason.
        if k == "metrics" {
            continue;
        }
        for sub in keys(&rt[&k]) {
            if m.get(&sub).is_none() {
                let ptr = format!("/rtload/{k}/{sub}");
                out.insert(ptr.clone(), why_dropped(&ptr));
            }
        }
    }
    out
}

/// Earliest first release and latest end over the shards (unix seconds).
pub fn span(inputs: &[ShardInput]) -> Option<(f64, f64)> {
    let start = inputs
        .iter()
        .filter_map(|s| s.tag.started_unix_s)
        .reduce(f64::min)?;
    let end = inputs
        .iter()
        .filter_map(|s| s.tag.ended_unix_s)
        .reduce(f64::max)?;
    Some((start, end))
}

fn merge_record(
    inputs: &[ShardInput],
    how: &BTreeMap<String, How>,
    dropped_keys: BTreeMap<String, &'static str>,
) -> Value {
    let mut releases: Vec<(usize, f64)> = inputs
        .iter()
        .flat_map(|s| {
            s.tag
                .samples
                .iter()
                .copied()
                .zip(s.tag.intended_release_s.iter().copied())
        })
        .collect();
    releases.sort_by_key(|&(k, _)| k);
    let names = |want: fn(&How) -> bool| -> Vec<&String> {
        how.iter()
            .filter(|(_, h)| want(h))
            .map(|(n, _)| n)
            .collect()
    };
    let dropped: BTreeMap<&String, &String> = how
        .iter()
        .filter_map(|(n, h)| match h {
            How::Dropped(why) => Some((n, why)),
            _ => None,
        })
        .collect();
    let first = &inputs[0].tag;
    json!({
        "count": first.count,
        "scenario": first.scenario,
        "sources": inputs.iter().map(|s| json!({
            "file": s.path.display().to_string(),
            "index": s.tag.index,
            "measured": s.tag.measured,
            "failed": s.tag.failed,
        })).collect::<Vec<_>>(),
        "start_at_unix_s": first.start_at_unix_s,
        "started_unix_s": span(inputs).map(|s| s.0),
        "ended_unix_s": span(inputs).map(|s| s.1),
        "measured": inputs.iter().map(|s| s.tag.measured).sum::<usize>(),
        "failed": inputs.iter().map(|s| s.tag.failed).sum::<usize>(),
        "samples": releases.iter().map(|r| r.0).collect::<Vec<_>>(),
        "intended_release_s": releases.iter().map(|r| r.1).collect::<Vec<_>>(),
        "thresholds": first.thresholds,
        "from_histograms": names(|h| matches!(h, How::Histogram)),
        "exact": names(|h| matches!(h, How::Exact)),
        "summed": names(|h| matches!(h, How::Summed)),
        "same_in_every_shard": names(|h| matches!(h, How::Same)),
        "dropped": dropped,
        "dropped_keys": dropped_keys,
    })
}

/// Merge the objects `docs` key by key (the first one's key order): arrays concatenated,
/// numbers merged ([`merge_number`]), equal values kept, differing objects dropped, other
/// differing values taken from the first.
fn merge_object(docs: &[&Value], metrics: &BTreeMap<String, f64>) -> Value {
    let Some(first) = docs.first().and_then(|d| d.as_object()) else {
        return Value::Null;
    };
    let mut out = Map::new();
    for (key, v) in first {
        let all: Vec<&Value> = docs.iter().filter_map(|d| d.get(key)).collect();
        let same = all.len() == docs.len() && all.iter().all(|x| *x == v);
        let merged = match v {
            _ if key == "metrics" && v.is_object() => merge_metric_object(v, metrics),
            Value::Array(_) => Some(Value::Array(
                all.iter()
                    .filter_map(|x| x.as_array())
                    .flatten()
                    .cloned()
                    .collect(),
            )),
            Value::Number(_) => merge_number(key, &all, same, metrics),
            Value::Object(_) if !same => None,
            _ => Some(v.clone()),
        };
        if let Some(m) = merged {
            out.insert(key.clone(), m);
        }
    }
    Value::Object(out)
}

/// A top-level `metrics` object (a workload's own summary): each entry replaced by the
/// merged metric of the same name, removed when there is none.
fn merge_metric_object(v: &Value, metrics: &BTreeMap<String, f64>) -> Option<Value> {
    let m = v.as_object()?;
    Some(Value::Object(
        m.keys()
            .filter_map(|k| metrics.get(k).map(|x| (k.clone(), json!(x))))
            .collect(),
    ))
}

/// A number outside the metric maps: the merged metric of the same name, else kept when
/// equal in every shard, else summed when it is a count, else removed (never guessed).
fn merge_number(
    key: &str,
    all: &[&Value],
    same: bool,
    metrics: &BTreeMap<String, f64>,
) -> Option<Value> {
    if let Some(&x) = metrics.get(key) {
        // Keep integers integers (`"completed": 3`, as the shards wrote them).
        let ints = all.iter().all(|v| v.is_u64());
        return Some(if ints && x.fract() == 0.0 && x >= 0.0 {
            json!(x as u64)
        } else {
            json!(x)
        });
    }
    if same && !is_quantile_name(key) {
        return all.first().map(|v| (*v).clone());
    }
    if !is_count_name(key) {
        return None;
    }
    if let Some(ints) = all.iter().map(|v| v.as_u64()).collect::<Option<Vec<u64>>>() {
        return Some(json!(ints.iter().sum::<u64>()));
    }
    Some(json!(all.iter().filter_map(|v| v.as_f64()).sum::<f64>()))
}
