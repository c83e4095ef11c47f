//! Stage-0 token metrics: search order, defaults, nearest-rank vectors, TPOT/ITL
//! projection and Python rounding.

use super::*;
use serde_json::json;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[track_caller]
fn check_vec(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(close(*g, *w), "{got:?} vs {want:?}");
    }
}

fn block(count: u64, tpot: Option<f64>, itls: &[f64]) -> Stage0Tokens {
    Stage0Tokens {
        source: "engine_stage_metrics",
        output_token_count: count,
        ttft_ms: 0.0,
        tpot_ms: tpot,
        itls_ms: itls.to_vec(),
        inter_token_interval_ms: nearest_rank_summary(itls),
    }
}

#[test]
fn stage_metrics_search_order() {
    let sm = |tag: &str| json!({"0": {"num_tokens_out": 1}, "tag": tag});
    let all = json!({
        "vllm_omni": {"stage_metrics": sm("a")},
        "metadata": {"stage_metrics": sm("b"), "vllm_omni": {"stage_metrics": sm("c")}},
        "response": {"metadata": {"stage_metrics": sm("d"), "vllm_omni": {"stage_metrics": sm("e")}}}
    });
    let tag = |e: &Value| stage_metrics(e).and_then(|m| m.get("tag")).cloned();
    assert_eq!(tag(&all), Some(json!("a")));
    let mut e = all.clone();
    e.as_object_mut().map(|o| o.remove("vllm_omni"));
    assert_eq!(tag(&e), Some(json!("b")));
    e["metadata"]
        .as_object_mut()
        .map(|o| o.remove("stage_metrics"));
    assert_eq!(tag(&e), Some(json!("c")));
    e.as_object_mut().map(|o| o.remove("metadata"));
    assert_eq!(tag(&e), Some(json!("d")));
    e["response"]["metadata"]
        .as_object_mut()
        .map(|o| o.remove("stage_metrics"));
    assert_eq!(tag(&e), Some(json!("e")));
    // A non-object candidate is skipped, not a stop.
    let e = json!({"vllm_omni": {"stage_metrics": [1]}, "metadata": {"stage_metrics": sm("b")}});
    assert_eq!(tag(&e), Some(json!("b")));
    assert!(stage_metrics(&json!({"type": "x"})).is_none());
    assert!(stage0_metrics(&json!({"vllm_omni": {"stage_metrics": {"1": {}}}})).is_none());
}

#[test]
fn stage0_block_defaults_and_filtering() {
    let m = json!({"num_tokens_out": 3.9, "vllm_ttft_ms": -1, "vllm_tpot_ms": 12.5,
                   "vllm_itls_ms": [10, -1, "x", 20.0, null]});
    let b = stage0_tokens(m.as_object().unwrap());
    assert_eq!(b.output_token_count, 3);
    assert_eq!(b.ttft_ms, 0.0);
    assert_eq!(b.tpot_ms, Some(12.5));
    check_vec(&b.itls_ms, &[10.0, 20.0]);
    let empty = stage0_tokens(json!({"num_tokens_out": true}).as_object().unwrap());
    assert_eq!(empty.output_token_count, 0);
    assert_eq!(empty.tpot_ms, None);
    assert!(empty.itls_ms.is_empty());
    let v = serde_json::to_value(&empty).unwrap();
    assert_eq!(v["tpot_ms"], Value::Null);
    assert_eq!(
        v["inter_token_interval_ms"],
        json!({"count": 0, "mean": 0.0, "p50": 0.0, "p95": 0.0, "max": 0.0})
    );
}

#[test]
fn nearest_rank_vectors() {
    let s = nearest_rank_summary(&[10.0, 14.0, 18.0]);
    assert_eq!(
        s,
        IntervalSummary {
            count: 3,
            mean: 14.0,
            p50: 14.0,
            p95: 18.0,
            max: 18.0
        }
    );
    // Intervals 50 and 110: p50 = index ceil(1.0)-1 = 0, p95 = index ceil(1.9)-1 = 1.
    let s = nearest_rank_summary(&[110.0, 50.0]);
    assert_eq!(
        (s.count, s.mean, s.p50, s.p95, s.max),
        (2, 80.0, 50.0, 110.0, 110.0)
    );
    // Rounded to 3 decimals before ranking; NaN and negatives dropped.
    let s = nearest_rank_summary(&[1.00049, 2.0006, f64::NAN, -3.0]);
    assert_eq!((s.count, s.p50, s.max), (2, 1.0, 2.001));
    let twenty: Vec<f64> = (1..=20).map(f64::from).collect();
    let s = nearest_rank_summary(&twenty);
    assert_eq!((s.p50, s.p95, s.max), (10.0, 19.0, 20.0));
}

#[test]
fn projection_exact_itl() {
    let (a, b) = (block(3, None, &[10.0, 20.0]), block(2, None, &[30.0]));
    let t = project_token_timing(&[Some(&a), Some(&b)], 5, 0.1);
    check_vec(&t.itl_s, &[0.01, 0.02, 0.03]);
    assert!(close(t.text_latency_s, 0.16));
    assert!(t.tpot_measured);
}

#[test]
fn projection_weighted_tpot() {
    let (a, b) = (block(3, Some(10.0), &[]), block(2, Some(40.0), &[]));
    let t = project_token_timing(&[Some(&a), Some(&b)], 5, 0.1);
    assert!(t.itl_s.is_empty());
    assert!(close(t.text_latency_s, 0.18));
    assert!(t.tpot_measured);
    // Incomplete ITL in one row falls back to the weighted TPOT.
    let (a, b) = (block(3, Some(10.0), &[10.0]), block(2, Some(40.0), &[30.0]));
    let t = project_token_timing(&[Some(&a), Some(&b)], 5, 0.1);
    assert!(t.itl_s.is_empty() && close(t.text_latency_s, 0.18) && t.tpot_measured);
}

#[test]
fn projection_zero_tpot_is_measured() {
    let (a, b) = (block(3, Some(0.0), &[]), block(2, Some(0.0), &[]));
    let t = project_token_timing(&[Some(&a), Some(&b)], 5, 0.1);
    assert!(close(t.text_latency_s, 0.1));
    assert!(t.tpot_measured);
}

#[test]
fn projection_unmeasured_cases() {
    let a = block(3, Some(10.0), &[]);
    let b = block(2, None, &[]);
    let unmeasured =
        |t: TokenTiming| t.itl_s.is_empty() && close(t.text_latency_s, 0.1) && !t.tpot_measured;
    // No usable timing on one timed row.
    assert!(unmeasured(project_token_timing(
        &[Some(&a), Some(&b)],
        5,
        0.1
    )));
    // Sum mismatch.
    assert!(unmeasured(project_token_timing(&[Some(&a)], 5, 0.1)));
    // A row without a block.
    assert!(unmeasured(project_token_timing(&[Some(&a), None], 3, 0.1)));
    // No row needs timing.
    let one = block(1, None, &[]);
    assert!(unmeasured(project_token_timing(
        &[Some(&one), Some(&one)],
        2,
        0.1
    )));
    assert!(unmeasured(project_token_timing(&[], 0, 0.1)));
}

#[test]
fn python_rounding() {
    assert_eq!(round_dp(0.125, 2), 0.12);
    assert_eq!(round_dp(2.675, 2), 2.67);
    assert_eq!(round_dp(100.00000000001, 3), 100.0);
    assert!(round_dp(f64::NAN, 3).is_nan());
}
