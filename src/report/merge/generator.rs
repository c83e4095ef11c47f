//! The merged generator block (`rtload.queue_wait`, `send_lateness`, `failures_by_kind`,
//! `resources`, built per run by the runner): summaries re-derived from the merged
//! `.hlog` histograms and exact shard values, failure kinds, outcome classes
//! (`rtload.outcomes`) and resources summed; the wire block merged exactly
//! ([`super::wire`]); each shard's soak block kept, labelled (`rtload.soak_by_shard`).

use serde_json::{Map, Value, json};

use super::ShardInput;
use super::metrics::{Hists, percentile_ms};

/// Replace the generator keys of the merged `rtload` object `rt`.
pub fn merge_into(rt: &mut Map<String, Value>, inputs: &[ShardInput], merged: &Hists) {
    let rts: Vec<&Value> = inputs.iter().filter_map(|s| s.doc.get("rtload")).collect();
    for (key, tag) in [
        ("queue_wait", "queue_wait_ms"),
        ("send_lateness", "send_lateness_ms"),
    ] {
        if rts.iter().any(|r| r.get(key).is_some()) {
            rt.insert(key.into(), summary(&rts, key, merged.get(tag)));
        }
    }
    if rts.iter().any(|r| r.get("failures_by_kind").is_some()) {
        let mut kinds: Map<String, Value> = Map::new();
        for r in &rts {
            for (k, n) in r["failures_by_kind"].as_object().into_iter().flatten() {
                let sum =
                    kinds.get(k).and_then(Value::as_u64).unwrap_or(0) + n.as_u64().unwrap_or(0);
                kinds.insert(k.clone(), json!(sum));
            }
        }
        rt.insert("failures_by_kind".into(), Value::Object(kinds));
    }
    if let Some(w) = super::wire::merge(&rts) {
        rt.insert("wire".into(), w);
    }
    // A soak's slices hold percentiles by session age, which the shards' values do not
    // carry apart: each shard's block is kept whole, labelled, rather than guessed at.
    let soaks: Vec<Value> = (inputs.iter())
        .filter_map(|s| {
            let soak = s.doc.pointer("/rtload/soak")?;
            Some(json!({"shard": s.tag.index, "soak": soak}))
        })
        .collect();
    if !soaks.is_empty() {
        rt.insert("soak_by_shard".into(), Value::Array(soaks));
    }
    if rts.iter().any(|r| r.get("outcomes").is_some()) {
        rt.insert("outcomes".into(), outcomes(&rts));
    }
    if rts.iter().any(|r| r.get("resources").is_some()) {
        rt.insert("resources".into(), resources(&rts));
    }
    if rts.iter().all(|r| r.get("phase_cpu").is_some()) && !rts.is_empty() {
        let live = rt
            .get("resources")
            .and_then(|r| r["live_session_s"].as_f64());
        rt.insert("phase_cpu".into(), phase_cpu(&rts, live));
    }
    // Each shard judged its own generator with the one rule; the merged run was
    // generator-bound where any shard was, and says which.
    let bound: Vec<String> = inputs
        .iter()
        .filter_map(|s| {
            let why = s.doc.pointer("/rtload/generator_bound")?.as_str()?;
            Some(format!("shard {}: {why}", s.tag.index))
        })
        .collect();
    rt.insert(
        "generator_bound".into(),
        if bound.is_empty() {
            Value::Null
        } else {
            json!(bound.join("; "))
        },
    );
}

/// `{count, max_ms, mean_ms, p99_ms}` over every shard: count from the merged
/// histogram, max the largest shard max, mean count-weighted, p99 from the histogram.
fn summary(rts: &[&Value], key: &str, hist: Option<&hdrhistogram::Histogram<u64>>) -> Value {
    let parts: Vec<(f64, f64, f64)> = rts
        .iter()
        .filter_map(|r| {
            let s = r.get(key)?;
            Some((
                s.get("count")?.as_f64()?,
                s.get("max_ms").and_then(Value::as_f64).unwrap_or(f64::NAN),
                s.get("mean_ms").and_then(Value::as_f64).unwrap_or(f64::NAN),
            ))
        })
        .collect();
    let n: f64 = parts.iter().map(|p| p.0).sum();
    let with_values: Vec<&(f64, f64, f64)> = parts.iter().filter(|p| p.0 > 0.0).collect();
    let max = with_values.iter().map(|p| p.1).reduce(f64::max);
    let mean = (n > 0.0).then(|| with_values.iter().map(|p| p.0 * p.2).sum::<f64>() / n);
    let p99 = hist
        .filter(|h| !h.is_empty())
        .map(|h| percentile_ms(h, 99.0));
    json!({"count": n as u64, "max_ms": max, "mean_ms": mean, "p99_ms": p99})
}

/// CPU seconds and live session-seconds summed, µs per session-second recomputed, and
/// the largest shard's peak RSS and RSS per session in flight (each shard is its own
/// process, so neither adds up).
fn resources(rts: &[&Value]) -> Value {
    let sum = |k: &str| -> Option<f64> {
        let vals: Vec<f64> = rts
            .iter()
            .filter_map(|r| r.pointer(&format!("/resources/{k}"))?.as_f64())
            .collect();
        (vals.len() == rts.len()).then(|| vals.iter().sum())
    };
    let (cpu, live) = (sum("cpu_s"), sum("live_session_s"));
    let largest = |k: &str| {
        rts.iter()
            .filter_map(|r| r.pointer(&format!("/resources/{k}"))?.as_f64())
            .reduce(f64::max)
    };
    json!({
        "cpu_s": cpu,
        "live_session_s": live,
        "cpu_us_per_session_s": cpu.zip(live).filter(|(_, l)| *l > 0.0).map(|(c, l)| c * 1e6 / l),
        "peak_rss_mib_max_shard": largest("peak_rss_mib"),
        "rss_per_session_kib_max_shard": largest("rss_per_session_kib"),
    })
}

/// `rtload.phase_cpu` of the merged run: each phase's CPU seconds and sessions summed over
/// the shards (each its own process), per session recomputed, and the CPU through
/// publication per merged live session-second (`live_session_s`); null where any shard
/// lacks a reading.
fn phase_cpu(rts: &[&Value], live_session_s: Option<f64>) -> Value {
    let sum = |ptr: &str| -> Option<f64> {
        let vals: Vec<f64> = rts
            .iter()
            .filter_map(|r| r.pointer(ptr)?.as_f64())
            .collect();
        (vals.len() == rts.len()).then(|| vals.iter().sum())
    };
    let per = |cpu: Option<f64>, n: Option<f64>| {
        cpu.zip(n.filter(|n| *n > 0.0)).map(|(c, n)| c * 1e6 / n)
    };
    let sessions = sum("/phase_cpu/sessions");
    let setup_sessions = sum("/phase_cpu/setup/sessions");
    let [before, setup, publication, through] =
        ["before_live", "setup", "publication", "through_publication"]
            .map(|k| sum(&format!("/phase_cpu/{k}/cpu_s")));
    json!({
        "before_live": {"cpu_s": before, "cpu_us_per_session": per(before, sessions)},
        "setup": {
            "cpu_s": setup,
            "sessions": setup_sessions.map(|n| n as u64),
            "cpu_us_per_session": per(setup, setup_sessions),
        },
        "publication": {"cpu_s": publication, "cpu_us_per_session": per(publication, sessions)},
        "through_publication": {
            "cpu_s": through,
            "cpu_us_per_session_s": per(through, live_session_s),
        },
        "sessions": sessions.map(|n| n as u64),
    })
}

/// `rtload.outcomes` of the merged run: each class's count summed over the shards, their
/// per-session rows joined in session order (sessions are numbered across shards).
fn outcomes(rts: &[&Value]) -> Value {
    let mut total = crate::workload::outcome::ClassCounts::default();
    let mut sessions: Vec<Value> = Vec::new();
    for o in rts.iter().filter_map(|r| r.get("outcomes")) {
        total = total.plus(crate::workload::outcome::ClassCounts::from_json(o));
        sessions.extend(o["sessions"].as_array().into_iter().flatten().cloned());
    }
    sessions.sort_by_key(|s| s["session"].as_u64());
    let mut out = total.to_json();
    out["sessions"] = Value::Array(sessions);
    out
}

#[cfg(test)]
#[path = "generator_tests.rs"]
mod tests;
