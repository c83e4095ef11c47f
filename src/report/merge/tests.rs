//! Merging shard results: percentiles from the combined histograms, concatenated samples
//! over the wall clock, incomplete or mixed shard sets refused.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde_json::json;

use super::*;
use crate::util::histlog::{Series, write_interval_log};

fn tag(index: usize, count: usize, samples: Vec<usize>) -> ShardTag {
    ShardTag {
        index,
        count,
        scenario: "s".into(),
        start_at_unix_s: Some(100.0),
        started_unix_s: Some(100.0 + index as f64),
        ended_unix_s: Some(110.0 + index as f64),
        intended_release_s: samples.iter().map(|&k| k as f64 * 0.5).collect(),
        measured: samples.len(),
        failed: index,
        samples,
        thresholds: vec![ThresholdTag {
            metric: "ttfc_ms.p99".into(),
            op: "<".into(),
            bound: 500.0,
            expr: "< 500".into(),
        }],
    }
}

/// A shard whose `ttfc_ms` values are `vals`: histograms through a real `.hlog` round trip.
fn shard(index: usize, count: usize, vals: &[f64]) -> ShardInput {
    let series = vec![Series::micros(
        "ttfc_ms",
        vals.iter()
            .enumerate()
            .map(|(i, v)| (i as f64, *v))
            .collect(),
    )];
    let mut log = Vec::new();
    write_interval_log(&mut log, 1000.0, 1.0, &series).unwrap();
    let hists = metrics::read_hlog(&log).unwrap();
    let (start_unix_s, intervals) = crate::util::histlog::read_log(&log).unwrap();
    let max = vals.iter().copied().fold(f64::MIN, f64::max);
    let mean = vals.iter().sum::<f64>() / vals.len() as f64;
    let samples: Vec<usize> = (index..vals.len() * count).step_by(count).collect();
    ShardInput {
        path: format!("shard{index}.json").into(),
        doc: json!({
            "benchmark": "b",
            "timestamp": format!("t{index}"),
            "config": {"target_fps": 16},
            "metrics": {"ttfc_ms_mean": mean, "sessions": vals.len()},
            "rtload": {
                "duration_s": 3.0 + index as f64,
                "failed_sessions": index,
                "samples": vals.iter().map(|v| json!({"ttfc_ms": v})).collect::<Vec<_>>(),
                "metrics": {
                    "ttfc_ms.p50": 0.0, "ttfc_ms.p99": 0.0, "ttfc_ms.max": max,
                    "ttfc_ms.mean": mean, "sessions": vals.len() as f64,
                    "chunk_deadline_ms": 750.0, "slo_attainment": 1.0 / (index as f64 + 1.0),
                    "video_rtf.p50": 0.5,
                },
            },
            SHARD_KEY: serde_json::to_value(tag(index, count, samples)).unwrap(),
        }),
        tag: tag(
            index,
            count,
            (index..vals.len() * count).step_by(count).collect(),
        ),
        hists,
        log: hlog::ShardLog {
            start_unix_s,
            intervals,
        },
    }
}

#[test]
fn merged_percentiles_come_from_the_histogram_of_all_values() {
    let a = [10.0, 20.0, 30.0, 400.0];
    let b = [15.0, 25.0, 35.0, 45.0];
    let m = merge(&[shard(1, 2, &b), shard(0, 2, &a)], None).unwrap();
    let mut all: Histogram<u64> = Histogram::new(3).unwrap();
    for v in a.iter().chain(&b) {
        all.record((v * 1000.0).round() as u64).unwrap();
    }
    for q in [50.0, 99.0] {
        assert_eq!(
            m.metrics[&format!("ttfc_ms.p{q}")],
            metrics::percentile_ms(&all, q)
        );
    }
    assert_eq!(m.metrics["ttfc_ms.max"], 400.0);
    let mean = a.iter().chain(&b).sum::<f64>() / 8.0;
    assert!((m.metrics["ttfc_ms.mean"] - mean).abs() < 1e-9);
    assert_eq!(m.metrics["sessions"], 8.0);
    assert_eq!(m.metrics["chunk_deadline_ms"], 750.0);
    assert!(!m.metrics.contains_key("slo_attainment"));
    assert!(matches!(m.how["slo_attainment"], How::Dropped(_)));
    // Equal in every shard, but a percentile with no histogram: not carried over.
    assert!(!m.metrics.contains_key("video_rtf.p50"));
    assert_eq!((m.counts.measured, m.counts.failed), (8, 1));
    assert_eq!(m.verdicts.len(), 1);
    // The merged document carries the merged verdict: a failed sample fails the run.
    assert_eq!(m.doc["rtload"]["verdict"], "failed");
    assert_eq!(m.doc["rtload"]["sample_counts"]["measured"], 8);
}

#[test]
fn merged_document_concatenates_samples_and_spans_the_wall_clock() {
    let m = merge(&[shard(0, 2, &[1.0, 2.0]), shard(1, 2, &[3.0])], None).unwrap();
    let d = &m.doc;
    assert_eq!(d["rtload"]["samples"].as_array().unwrap().len(), 3);
    assert_eq!(d["rtload"]["duration_s"], json!(11.0));
    assert_eq!(d["rtload"]["failed_sessions"], json!(1));
    assert_eq!(d["metrics"]["sessions"], json!(3.0));
    assert!(d["metrics"].get("ttfc_ms_mean").is_none(), "{d}");
    assert_eq!(d["config"]["target_fps"], json!(16));
    assert!(d.get(SHARD_KEY).is_none());
    let rec = &d[MERGE_KEY];
    assert_eq!(rec["samples"], json!([0, 1, 2]));
    assert_eq!(rec["intended_release_s"], json!([0.0, 0.5, 1.0]));
    assert_eq!(flat_after(d)["sessions"], 3.0);
}

fn flat_after(d: &Value) -> BTreeMap<String, f64> {
    doc::flat_metrics(d)
}

#[test]
fn incomplete_or_mixed_shard_sets_are_refused_with_the_missing_ones_named() {
    let e = merge(&[shard(0, 3, &[1.0]), shard(2, 3, &[1.0])], None).unwrap_err();
    assert!(e.to_string().contains("missing shard result(s) 1/3"), "{e}");
    let e = merge(&[shard(0, 2, &[1.0]), shard(0, 2, &[1.0])], None).unwrap_err();
    assert!(e.to_string().contains("given twice"), "{e}");
    let e = merge(&[shard(0, 2, &[1.0]), shard(1, 3, &[1.0])], None).unwrap_err();
    assert!(e.to_string().contains("merge the shards of one run"), "{e}");
}

/// A shard written since the results model: its catalogue carries merge rules and its
/// JSON the raw values of every distribution.
fn ruled_shard(index: usize, count: usize, ttfc: &[f64], met: f64, steady: &[f64]) -> ShardInput {
    use crate::workload::catalogue::{Catalogue, Direction, Family, Merge};
    use crate::workload::results::Recorded;
    let families = [
        Family::new("ttfc_ms", "ms", Direction::Lower, "").dist(),
        Family::new("chunk_interval_ms", "ms", Direction::Lower, "").dist(),
        Family::new("completed", "sessions", Direction::Higher, "").merged(Merge::Sum),
        Family::new("slo_met", "intervals", Direction::Higher, "").merged(Merge::Sum),
        Family::new("slo_attainment", "ratio", Direction::Higher, "")
            .merged(Merge::Ratio("slo_met", "chunk_interval_ms.count")),
        Family::new("chunk_throughput", "chunks/s", Direction::Higher, "")
            .merged(Merge::PerSecond("chunk_interval_ms.count")),
        Family::new("chunk_deadline_ms", "ms", Direction::NotAScore, "").merged(Merge::Same),
        Family::new("odd", "", Direction::NotAScore, "").merged(Merge::Unmergeable("no rule")),
    ];
    let mut rec = Recorded::default();
    rec.extend("ttfc_ms", 0.0, ttfc.iter().copied());
    rec.extend("chunk_interval_ms", 0.0, steady.iter().copied());
    let mut m = rec.flat();
    m.insert("completed".into(), ttfc.len() as f64);
    m.insert("slo_met".into(), met);
    m.insert("slo_attainment".into(), met / steady.len() as f64);
    m.insert("chunk_throughput".into(), 99.0);
    m.insert("chunk_deadline_ms".into(), 750.0 + index as f64);
    m.insert("odd".into(), 1.0);
    let mut doc = json!({"rtload": {
        "metrics": m,
        "distributions": rec.to_json(),
        "sample_counts": {"measured": ttfc.len(), "failed": 0, "cancelled": 0, "warmup": 0},
    }});
    Catalogue::of(&families, &crate::util::stats::STANDARD_PERCENTILES, &[]).write_into(&mut doc);
    let mut s = shard(index, count, ttfc);
    let tag = s.doc[SHARD_KEY].clone();
    doc[SHARD_KEY] = tag;
    s.doc = doc;
    s
}

#[test]
fn declared_rules_merge_exactly_from_the_raw_values() {
    let (a, b) = ([10.0, 20.0, 30.0, 400.0], [15.0, 25.0]);
    let m = merge(
        &[
            ruled_shard(0, 2, &a, 3.0, &[1.0, 2.0, 900.0]),
            ruled_shard(1, 2, &b, 2.0, &[4.0, 5.0]),
        ],
        None,
    )
    .unwrap();
    let all: Vec<f64> = a.iter().chain(&b).copied().collect();
    let want =
        crate::util::stats::Summary::of(&all, &crate::util::stats::STANDARD_PERCENTILES).unwrap();
    assert_eq!(m.metrics["ttfc_ms.p99"], want.percentile(99.0).unwrap());
    assert_eq!(m.metrics["ttfc_ms.p50"], want.percentile(50.0).unwrap());
    assert_eq!(m.metrics["ttfc_ms.count"], 6.0);
    assert_eq!(m.metrics["ttfc_ms.max"], 400.0);
    assert_eq!(m.metrics["completed"], 6.0);
    // Recomputed from their merged parts, never averaged.
    assert_eq!(m.metrics["slo_attainment"], 5.0 / 5.0);
    assert_eq!(m.metrics["chunk_throughput"], 5.0 / 11.0);
    assert!(matches!(m.how["chunk_deadline_ms"], How::Dropped(_)));
    assert!(matches!(&m.how["odd"], How::Dropped(w) if w == "no rule"));
    assert_eq!(m.doc["rtload"]["distributions"]["ttfc_ms"], json!(all));
    assert_eq!(m.doc["rtload"]["verdict"], "passed");
    assert_eq!(
        m.doc["rtload"]["thresholds"][0]["measured"],
        json!(want.percentile(99.0))
    );
    let th = [crate::config::thresholds::Threshold {
        metric: "ttfc_ms.p99".into(),
        op: crate::config::thresholds::Op::Lt,
        bound: 100.0,
        expr: "< 100".into(),
    }];
    let failed = merge(
        &[
            ruled_shard(0, 2, &a, 3.0, &[1.0]),
            ruled_shard(1, 2, &b, 2.0, &[4.0]),
        ],
        Some(&th),
    )
    .unwrap();
    assert!(!failed.passed());
    assert_eq!(failed.doc["rtload"]["verdict"], "failed");
}
