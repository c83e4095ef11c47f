//! The merged `rtload.wire` block: what every shard's connections did, added up exactly.
//! Settings (`tcp_nodelay`, the compression offered, retries allowed) are the shards'
//! when they agree and `null` when they do not; counts are summed (each agreed
//! extension's connections by its parameters); the receipts' reader delay is re-read
//! from the shards' histograms added together (`histogram_us`), its mean count-weighted
//! and its max the largest shard's: the same figures one process would have written.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

/// The merged `wire` block of the shards' `rtload` objects `rts`; `None` unless every
/// shard has one (a block some shards lack is dropped and listed, never half-merged).
pub fn merge(rts: &[&Value]) -> Option<Value> {
    let wires: Vec<&Value> = rts.iter().filter_map(|r| r.get("wire")).collect();
    if wires.is_empty() || wires.len() != rts.len() {
        return None;
    }
    Some(json!({
        "tcp_nodelay": same(&wires, "/tcp_nodelay"),
        "compression": {
            "setting": same(&wires, "/compression/setting"),
            "offered": same(&wires, "/compression/offered"),
            "connections": sum(&wires, "/compression/connections"),
            "negotiated": sum(&wires, "/compression/negotiated"),
            "agreed": agreed(&wires),
        },
        "retry_rejected": {
            "allowed": same(&wires, "/retry_rejected/allowed"),
            "retried": sum(&wires, "/retry_rejected/retried"),
        },
        "receipts": receipts(&wires),
    }))
}

/// The shards' value at `ptr` when all agree, else `null`.
fn same(wires: &[&Value], ptr: &str) -> Value {
    let first = wires[0].pointer(ptr).cloned().unwrap_or(Value::Null);
    let agree = wires.iter().all(|w| w.pointer(ptr) == Some(&first));
    if agree { first } else { Value::Null }
}

/// The shards' counts at `ptr` summed; `null` when a shard lacks it.
fn sum(wires: &[&Value], ptr: &str) -> Value {
    let vals: Option<Vec<u64>> = wires.iter().map(|w| w.pointer(ptr)?.as_u64()).collect();
    vals.map_or(Value::Null, |v| json!(v.iter().sum::<u64>()))
}

/// Each agreed extension (by its parameters) with its connections summed over the shards.
fn agreed(wires: &[&Value]) -> Value {
    let mut by: BTreeMap<String, (Map<String, Value>, u64)> = BTreeMap::new();
    for w in wires {
        let rows = w.pointer("/compression/agreed").and_then(Value::as_array);
        for row in rows.into_iter().flatten() {
            let Some(mut params) = row.as_object().cloned() else {
                continue;
            };
            let n = params
                .remove("connections")
                .and_then(|n| n.as_u64())
                .unwrap_or(0);
            let key = Value::Object(params.clone()).to_string();
            by.entry(key).or_insert((params, 0)).1 += n;
        }
    }
    Value::Array(
        by.into_values()
            .map(|(mut params, n)| {
                params.insert("connections".into(), json!(n));
                Value::Object(params)
            })
            .collect(),
    )
}

/// The receipts of every shard: counts summed, the reader delay from the added histograms
/// (quantiles `null` when a shard's block carries no histogram: not guessed).
fn receipts(wires: &[&Value]) -> Value {
    let blocks: Vec<&Value> = wires.iter().filter_map(|w| w.get("receipts")).collect();
    if blocks.len() != wires.len() {
        return Value::Null;
    }
    let count = |b: &Value, k: &str| b.get(k).and_then(Value::as_u64).unwrap_or(0);
    let delays: Vec<&Value> = blocks.iter().map(|b| &b["reader_delay"]).collect();
    let hist = merged_histogram(&delays);
    let n: u64 = delays.iter().map(|d| count(d, "count")).sum();
    let sum_ms: f64 = (delays.iter())
        .filter_map(|d| Some(d["mean_ms"].as_f64()? * count(d, "count") as f64))
        .sum();
    let max_ms = delays
        .iter()
        .filter_map(|d| d["max_ms"].as_f64())
        .reduce(f64::max);
    let reader_delay = match (&hist, max_ms) {
        (Some(h), Some(max)) if h.len() == n => {
            crate::engine::transport::receipts::delay_block(h, sum_ms, max)
        }
        _ if n == 0 => json!({"count": 0, "mean_ms": null, "p50_ms": null, "p99_ms": null,
            "max_ms": null, "histogram_us": null}),
        _ => json!({"count": n, "mean_ms": sum_ms / n as f64, "p50_ms": null, "p99_ms": null,
            "max_ms": max_ms, "histogram_us": null}),
    };
    json!({
        "kernel_stamped": blocks.iter().map(|b| count(b, "kernel_stamped")).sum::<u64>(),
        "stamped_at_read": blocks.iter().map(|b| count(b, "stamped_at_read")).sum::<u64>(),
        "reader_delay": reader_delay,
    })
}

/// The shards' reader-delay histograms added up; `None` when one is missing or unreadable.
fn merged_histogram(delays: &[&Value]) -> Option<hdrhistogram::Histogram<u64>> {
    let mut acc =
        hdrhistogram::Histogram::<u64>::new(crate::util::histlog::SIGNIFICANT_DIGITS).ok()?;
    acc.auto(true);
    for d in delays {
        let h = crate::util::histlog::decode_b64(d["histogram_us"].as_str()?).ok()?;
        acc.add(&h).ok()?;
    }
    Some(acc)
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
