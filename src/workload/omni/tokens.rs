//! Stage-0 token metrics for the duplex workload (spec §1.3, §5.2): where a server event
//! carries its stage metrics, the `stage0_tokens` block built from them, the nearest-rank
//! interval summary, and the projection of per-response token timings onto one request
//! (`itl`, `text_latency`, `tpot_measured`) for the serving metrics.
//!
//! Pure code: JSON values in, typed values out. Nothing here reads a clock.

use serde::Serialize;
use serde_json::{Map, Value};

/// Return the first `stage_metrics` object found on `event`, searched in the reference's
/// order: `event.vllm_omni.stage_metrics`, `event.metadata.stage_metrics`,
/// `event.metadata.vllm_omni.stage_metrics`, `event.response.metadata.stage_metrics`,
/// `event.response.metadata.vllm_omni.stage_metrics`. Only an object counts.
pub fn stage_metrics(event: &Value) -> Option<&Map<String, Value>> {
    let metadata = event.get("metadata").filter(|m| m.is_object());
    let response_metadata = event
        .get("response")
        .and_then(|r| r.get("metadata"))
        .filter(|m| m.is_object());
    let candidates = [
        event.get("vllm_omni"),
        metadata,
        metadata.and_then(|m| m.get("vllm_omni")),
        response_metadata,
        response_metadata.and_then(|m| m.get("vllm_omni")),
    ];
    candidates
        .into_iter()
        .flatten()
        .filter_map(|c| c.as_object())
        .find_map(|c| c.get("stage_metrics").and_then(Value::as_object))
}

/// The stage `"0"` object of `event`'s stage metrics, when there is one.
pub fn stage0_metrics(event: &Value) -> Option<&Map<String, Value>> {
    stage_metrics(event)?.get("0")?.as_object()
}

/// Nearest-rank summary of a list of millisecond intervals (`inter_token_interval_ms`).
///
/// Values are rounded to 3 decimals first; non-finite and negative values are dropped.
/// Rank index is `ceil(p·n) − 1`. An empty input gives all zeros.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct IntervalSummary {
    /// Number of usable values.
    pub count: usize,
    /// Mean of the rounded values, rounded to 3 decimals.
    pub mean: f64,
    /// Nearest-rank 50th percentile.
    pub p50: f64,
    /// Nearest-rank 95th percentile.
    pub p95: f64,
    /// Largest value.
    pub max: f64,
}

/// Summarize `values` (ms) with the nearest-rank rule of [`IntervalSummary`].
pub fn nearest_rank_summary(values: &[f64]) -> IntervalSummary {
    let mut clean: Vec<f64> = values
        .iter()
        .filter(|v| v.is_finite() && **v >= 0.0)
        .map(|v| round_dp(*v, 3))
        .collect();
    clean.sort_by(f64::total_cmp);
    let n = clean.len();
    if n == 0 {
        return IntervalSummary {
            count: 0,
            mean: 0.0,
            p50: 0.0,
            p95: 0.0,
            max: 0.0,
        };
    }
    let rank = |p: f64| {
        let idx = ((p * n as f64).ceil() as usize).saturating_sub(1);
        clean[idx.min(n - 1)]
    };
    IntervalSummary {
        count: n,
        mean: round_dp(clean.iter().sum::<f64>() / n as f64, 3),
        p50: rank(0.50),
        p95: rank(0.95),
        max: clean[n - 1],
    }
}

/// Engine token metrics of one response, from the last event carrying stage-0 metrics.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stage0Tokens {
    /// `"engine_stage_metrics"`, as vLLM-Omni 0.30.0 labels an engine stage block.
    pub source: &'static str,
    /// `num_tokens_out` (finite, non-negative, truncated to an integer), else 0.
    pub output_token_count: u64,
    /// `vllm_ttft_ms` (finite, non-negative), else 0.
    pub ttft_ms: f64,
    /// `vllm_tpot_ms` (finite, non-negative), else `None` (serialized as null).
    pub tpot_ms: Option<f64>,
    /// The finite, non-negative entries of `vllm_itls_ms`, in order.
    pub itls_ms: Vec<f64>,
    /// Nearest-rank summary of `itls_ms`.
    pub inter_token_interval_ms: IntervalSummary,
}

/// Build the `stage0_tokens` block from a stage-`"0"` metrics object.
pub fn stage0_tokens(stage0: &Map<String, Value>) -> Stage0Tokens {
    let itls_ms: Vec<f64> = stage0
        .get("vllm_itls_ms")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(finite_nonneg).collect())
        .unwrap_or_default();
    Stage0Tokens {
        source: "engine_stage_metrics",
        output_token_count: stage0
            .get("num_tokens_out")
            .and_then(finite_nonneg)
            .map_or(0, |v| v.trunc() as u64),
        ttft_ms: stage0
            .get("vllm_ttft_ms")
            .and_then(finite_nonneg)
            .unwrap_or(0.0),
        tpot_ms: stage0.get("vllm_tpot_ms").and_then(finite_nonneg),
        inter_token_interval_ms: nearest_rank_summary(&itls_ms),
        itls_ms,
    }
}

/// A JSON number that is finite and ≥ 0 (booleans are not numbers here).
fn finite_nonneg(v: &Value) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite() && *x >= 0.0)
}

/// Round like Python's `round(x, dp)`: correctly rounded, ties to even.
pub(crate) fn round_dp(x: f64, dp: usize) -> f64 {
    if !x.is_finite() {
        return x;
    }
    format!("{x:.dp$}").parse().unwrap_or(x)
}

/// Token timing of one duplex request, projected from its responses' stage-0 blocks.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenTiming {
    /// Exact inter-token latencies in seconds (empty unless every timed response had them).
    pub itl_s: Vec<f64>,
    /// Seconds from the TTFT origin to the last token (equals `ttft_s` when unmeasured).
    pub text_latency_s: f64,
    /// True when TPOT can be derived from this timing.
    pub tpot_measured: bool,
}

/// Project the stage-0 blocks of one session's rows onto request-level token timing
/// (spec §5.2 "Token timing projection", PR-era rules).
///
/// `stage0` holds each row's block in row order (`None` for a row without one);
/// `output_tokens` is the request's token count and `ttft_s` its mapped TTFT.
/// 1. Every row must have a block and their counts must sum to `output_tokens`; rows
///    with more than one token need timing. Otherwise (or with no such row) unmeasured.
/// 2. Exact ITL when every timed row has `count − 1` intervals.
/// 3. Else token-weighted TPOT when every timed row has `tpot_ms` (zero accepted).
/// 4. Else unmeasured.
pub fn project_token_timing(
    stage0: &[Option<&Stage0Tokens>],
    output_tokens: u64,
    ttft_s: f64,
) -> TokenTiming {
    let unmeasured = TokenTiming {
        itl_s: Vec::new(),
        text_latency_s: ttft_s,
        tpot_measured: false,
    };
    let Some(blocks) = stage0
        .iter()
        .copied()
        .collect::<Option<Vec<&Stage0Tokens>>>()
    else {
        return unmeasured;
    };
    let sum: u64 = blocks.iter().map(|b| b.output_token_count).sum();
    if sum != output_tokens {
        return unmeasured;
    }
    let timed: Vec<&Stage0Tokens> = blocks
        .into_iter()
        .filter(|b| b.output_token_count > 1)
        .collect();
    if timed.is_empty() {
        return unmeasured;
    }
    let exact = timed.iter().all(|b| {
        b.itls_ms.len() as u64 == b.output_token_count - 1
            && b.itls_ms.iter().all(|v| v.is_finite() && *v >= 0.0)
    });
    if exact {
        let itl_s: Vec<f64> = timed
            .iter()
            .flat_map(|b| b.itls_ms.iter().map(|ms| ms / 1000.0))
            .collect();
        let text_latency_s = ttft_s + itl_s.iter().sum::<f64>();
        return TokenTiming {
            itl_s,
            text_latency_s,
            tpot_measured: true,
        };
    }
    let usable = |b: &&Stage0Tokens| b.tpot_ms.is_some_and(|t| t.is_finite() && t >= 0.0);
    if timed.iter().all(usable) {
        let (num, den) = timed.iter().fold((0.0, 0.0), |(num, den), b| {
            let gaps = (b.output_token_count - 1) as f64;
            (num + b.tpot_ms.unwrap_or(0.0) * gaps, den + gaps)
        });
        let tpot_w_s = num / den / 1000.0;
        let text_latency_s = ttft_s + tpot_w_s * (output_tokens.saturating_sub(1)) as f64;
        return TokenTiming {
            itl_s: Vec::new(),
            text_latency_s,
            tpot_measured: true,
        };
    }
    unmeasured
}

#[cfg(test)]
#[path = "tokens_tests.rs"]
mod tests;
