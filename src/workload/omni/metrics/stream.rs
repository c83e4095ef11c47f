//! vLLM-Omni 0.30.0's session stream window and distribution summaries
//! (`benchmarks/duplex_session_metrics.py`, `clients/duplex.py`
//! `EventCollector.global_timing_summary`, `clients/utils.py` `distribution_summary`):
//! the session's `stream_*` values, measured from the stream start (the client's instant
//! just before the first input append) across every created response, and the
//! `{count, mean, p50, p99}` nearest-rank summaries of the session and run levels.

use std::collections::HashMap;

use serde::Serialize;

use super::{Acc, SessionSummary};
use crate::workload::omni::tokens::round_dp;

/// `stream_measurement_origin.ttft`.
pub const STREAM_TTFT_ORIGIN: &str = "input stream start to first non-empty text delta";
/// `stream_measurement_origin.ttfp`.
pub const STREAM_TTFP_ORIGIN: &str = "input stream start to first audio packet";
/// `stream_measurement_origin.rtf`.
pub const STREAM_RTF_ORIGIN: &str = "input stream start-to-last-audio receive time divided by total emitted audio duration; \
     includes concurrent realtime input";

/// What the session's `stream_*` values are measured from and to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StreamOrigin {
    /// See [`STREAM_TTFT_ORIGIN`].
    pub ttft: &'static str,
    /// See [`STREAM_TTFP_ORIGIN`].
    pub ttfp: &'static str,
    /// See [`STREAM_RTF_ORIGIN`].
    pub rtf: &'static str,
}

/// The session's stream window (present only when a created response sent audio after
/// the stream start), flattened into `duplex_session_metrics`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StreamWindow {
    /// Stream start → first non-empty text delta of any created response, ms, 3 decimals.
    pub stream_ttft_ms: Option<f64>,
    /// Stream start → first non-empty audio delta of any created response, ms, 3 decimals.
    pub stream_ttfp_ms: f64,
    /// `stream_audio_generation_ms / stream_audio_duration_ms` of the rounded values,
    /// 6 decimals; null for zero duration.
    pub stream_rtf: Option<f64>,
    /// `max(0, last audio delta − stream start)`, ms, 3 decimals.
    pub stream_audio_generation_ms: f64,
    /// Σ over created responses of their emitted audio, ms, 3 decimals: the largest
    /// non-negative `metadata.audio_duration_ms` of a counted delta, else decoded bytes.
    pub stream_audio_duration_ms: f64,
    /// The origins.
    pub stream_measurement_origin: StreamOrigin,
}

/// The window of the responses in `order` (every created one) from their accumulators.
pub(super) fn window(
    order: &[String],
    accs: &HashMap<String, Acc>,
    rate_hz: u64,
    stream_start_s: f64,
) -> Option<StreamWindow> {
    let created = || order.iter().filter_map(|r| accs.get(r));
    let min = |v: Option<f64>, x: Option<f64>| match (v, x) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let first_audio = created().map(|a| a.first_audio).fold(None, min)?;
    let last_audio = created()
        .filter_map(|a| a.last_audio)
        .fold(first_audio, f64::max);
    let first_text = created().map(|a| a.first_text).fold(None, min);
    let duration_ms: f64 = created()
        .map(|a| {
            a.stream_duration_ms
                .unwrap_or_else(|| a.decoded_bytes as f64 * 1000.0 / (rate_hz as f64 * 2.0))
        })
        .sum();
    let generation_ms = round_dp(((last_audio - stream_start_s) * 1000.0).max(0.0), 3);
    let duration_ms = round_dp(duration_ms, 3);
    Some(StreamWindow {
        stream_ttft_ms: first_text.map(|t| round_dp((t - stream_start_s) * 1000.0, 3)),
        stream_ttfp_ms: round_dp((first_audio - stream_start_s) * 1000.0, 3),
        stream_rtf: (duration_ms > 0.0).then(|| round_dp(generation_ms / duration_ms, 6)),
        stream_audio_generation_ms: generation_ms,
        stream_audio_duration_ms: duration_ms,
        stream_measurement_origin: StreamOrigin {
            ttft: STREAM_TTFT_ORIGIN,
            ttfp: STREAM_TTFP_ORIGIN,
            rtf: STREAM_RTF_ORIGIN,
        },
    })
}

/// `{count, mean, p50, p99}` of the finite values (nearest rank: index
/// `max(0, ceil(p·n) − 1)`), mean and ranks rounded to `digits`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Distribution {
    /// Finite values summarized.
    pub count: usize,
    /// Their mean.
    pub mean: f64,
    /// Nearest-rank median.
    pub p50: f64,
    /// Nearest-rank 99th percentile.
    pub p99: f64,
}

/// The reference's `distribution_summary`; `None` without a finite value.
pub fn distribution_summary(values: &[f64], digits: usize) -> Option<Distribution> {
    let mut clean: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if clean.is_empty() {
        return None;
    }
    clean.sort_by(f64::total_cmp);
    let n = clean.len();
    let rank = |p: f64| {
        clean[((p * n as f64).ceil() as usize)
            .saturating_sub(1)
            .min(n - 1)]
    };
    Some(Distribution {
        count: n,
        mean: round_dp(clean.iter().sum::<f64>() / n as f64, digits),
        p50: round_dp(rank(0.50), digits),
        p99: round_dp(rank(0.99), digits),
    })
}

/// Reads one value of a stream window.
type Pick = fn(&StreamWindow) -> Option<f64>;

/// The run-level `duplex_stream_ttft_ms`, `duplex_stream_ttfp_ms` and `duplex_stream_rtf`
/// (`duplex_stream_metrics`): each over the sessions' finite, non-negative values; a key
/// is absent when no session has one.
pub fn duplex_stream_metrics<'a>(
    sessions: impl IntoIterator<Item = &'a SessionSummary>,
) -> Vec<(&'static str, Distribution)> {
    let sessions: Vec<&SessionSummary> = sessions.into_iter().collect();
    let picks: [(&str, Pick, usize); 3] = [
        ("duplex_stream_ttft_ms", |w| w.stream_ttft_ms, 3),
        ("duplex_stream_ttfp_ms", |w| Some(w.stream_ttfp_ms), 3),
        ("duplex_stream_rtf", |w| w.stream_rtf, 6),
    ];
    picks
        .iter()
        .filter_map(|(key, pick, digits)| {
            let values: Vec<f64> = sessions
                .iter()
                .filter_map(|s| s.stream.as_ref().and_then(pick))
                .filter(|v| v.is_finite() && *v >= 0.0)
                .collect();
            distribution_summary(&values, *digits).map(|d| (*key, d))
        })
        .collect()
}

/// One stage's session roll-up (`summarize_stage_metrics`): `ttft_ms` over every row's
/// block, `tpot_ms` over the positive ones; a key is absent without a value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageSummary {
    /// The blocks' `ttft_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<Distribution>,
    /// The blocks' positive `tpot_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpot_ms: Option<Distribution>,
}

/// The session's `stages` as 0.30.0's `summarize_stage_metrics` makes it from rows that
/// carry `stage0_tokens` and no `stages` (rtload's rows): stage `"0"` only; `None` when
/// no row has a stage-0 block.
pub(super) fn stage_summaries(
    rows: &[super::ResponseRow],
) -> Option<std::collections::BTreeMap<&'static str, StageSummary>> {
    let blocks: Vec<&super::Stage0Tokens> = rows
        .iter()
        .filter_map(|r| r.stage0_tokens.as_ref())
        .collect();
    let ttft: Vec<f64> = blocks.iter().map(|b| b.ttft_ms).collect();
    let tpot: Vec<f64> = blocks
        .iter()
        .filter_map(|b| b.tpot_ms)
        .filter(|t| *t > 0.0)
        .collect();
    let s = StageSummary {
        ttft_ms: distribution_summary(&ttft, 3),
        tpot_ms: distribution_summary(&tpot, 3),
    };
    (s.ttft_ms.is_some() || s.tpot_ms.is_some()).then(|| [("0", s)].into_iter().collect())
}
