//! Restated summary objects: rebuilt from the merged metrics only where every shard's
//! object states its own metrics.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::restated;

fn shard(rtf: Value, metrics: Value) -> Value {
    json!({"rtf": rtf, "rtload": {"metrics": metrics}})
}

fn merged(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
    pairs.iter().map(|(k, v)| ((*k).to_string(), *v)).collect()
}

#[test]
fn an_object_every_shard_states_is_rebuilt_from_the_merged_metrics() {
    let a = shard(
        json!({"count": 2, "p99": 0.5}),
        json!({"rtf.count": 2, "rtf.p99": 0.5, "rtf.min": 0.1}),
    );
    let b = shard(
        json!({"count": 3, "p99": 0.9}),
        json!({"rtf.count": 3, "rtf.p99": 0.9}),
    );
    let m = merged(&[("rtf.count", 5.0), ("rtf.p99", 0.85)]);
    let out = restated(&[&a, &b], &m);
    // The count stays an integer, as the shards wrote it; every number is the merge's.
    assert_eq!(out["rtf"], json!({"count": 5, "p99": 0.85}));
    assert!(!out.contains_key("rtload"), "not a restatement: {out:?}");
}

#[test]
fn an_object_one_shard_does_not_state_is_left_out() {
    let a = shard(json!({"p99": 0.5}), json!({"rtf.p99": 0.5}));
    // Another percentile rule: the shard's object is not its metric.
    let b = shard(json!({"p99": 0.91}), json!({"rtf.p99": 0.9}));
    let m = merged(&[("rtf.p99", 0.85)]);
    assert!(restated(&[&a, &b], &m).is_empty());
    // A field with no metric of its name, in any shard.
    let c = shard(json!({"p99": 0.5, "n": 1}), json!({"rtf.p99": 0.5}));
    assert!(restated(&[&c, &c], &m).is_empty());
}

#[test]
fn an_object_the_merge_has_no_metric_for_is_left_out() {
    let a = shard(json!({"p99": 0.5}), json!({"rtf.p99": 0.5}));
    assert!(restated(&[&a, &a], &BTreeMap::new()).is_empty());
}

#[test]
fn an_object_of_totals_restates_the_total_metrics() {
    let doc = |n: u64| json!({"tokens": {"prompt_tokens": n}, "rtload": {"metrics": {"prompt_tokens.total": n}}});
    let (a, b) = (doc(2), doc(5));
    let out = restated(&[&a, &b], &merged(&[("prompt_tokens.total", 7.0)]));
    assert_eq!(out["tokens"], json!({"prompt_tokens": 7}));
}
