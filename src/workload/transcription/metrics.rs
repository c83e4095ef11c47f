//! The transcription metric formulas, per session and over a run. Pure code: a session's
//! [`Record`] (times in seconds since its socket opened) in, numbers out; missing values
//! are absent, never zero.
//!
//! * `ttft_ms`: first non-empty delta − first audio sent (its intended send time).
//! * `finalization_ms`: `transcription.done` − final commit sent.
//! * `itl_ms`: gaps between consecutive non-empty deltas.
//! * `rtf`: (done − first audio sent) / audio duration.
//! * `streaming_lag_ms`: for each non-empty delta, receipt − the speech front (the
//!   moment the audio streamed so far ends on the pacing clock): how far the transcript
//!   trails the speech. It can be negative by up to one chunk when a delta arrives before
//!   the last append's audio would have finished playing.
//! * `wer`: word error rate against the reference (see [`super::wer`]); absent without one.
//! * tokens: `transcription.done.usage`.

use std::collections::BTreeMap;

use super::protocol::{Record, Usage};
use super::wer::{self, WerCount};
use crate::util::stats;
use crate::workload::catalogue::{Catalogue, Direction::*, Family};

/// Distribution summaries written for every latency-like metric.
pub const PCTS: [(f64, &str); 5] = [
    (0.5, "p50"),
    (0.9, "p90"),
    (0.95, "p95"),
    (0.99, "p99"),
    (1.0, "max"),
];

/// Distribution metrics (each gets `.mean` and the [`PCTS`] suffixes).
pub const DISTRIBUTIONS: [&str; 5] = [
    "ttft_ms",
    "finalization_ms",
    "itl_ms",
    "rtf",
    "streaming_lag_ms",
];

/// Single-number metrics of a run.
pub const SCALARS: [&str; 10] = [
    "wer",
    "wer.mean",
    "prompt_tokens.total",
    "completion_tokens.total",
    "total_tokens.total",
    "pacing_max_lag_ms.max",
    "failed",
    "completed",
    "audio_s.total",
    AUDIO_THROUGHPUT,
];

/// The transcription workload's unit of work: seconds of audio transcribed by completed
/// sessions per second of run (`audio s/s`). Audio is what a speech-to-text server
/// consumes, so this is its throughput whatever the clip lengths; transcripts/s would
/// only repeat the sweep's completed sessions/s (one transcript per session).
pub const AUDIO_THROUGHPUT: &str = "audio_throughput";

/// `audio_throughput` of a run: `metrics`' `audio_s.total` (present only with completed
/// sessions) per second of `duration_s`; `None` when either is missing.
pub fn audio_throughput(metrics: &BTreeMap<String, f64>, duration_s: f64) -> Option<f64> {
    crate::workload::catalogue::per_second(*metrics.get("audio_s.total")?, duration_s)
}

/// The metric catalogue: every name [`run_metrics`] produces belongs to one family.
pub const FAMILIES: &[Family] = &[
    Family::new("failed", "sessions", Lower, "measured sessions that failed"),
    Family::new(
        "completed",
        "sessions",
        Higher,
        "measured sessions that completed",
    ),
    Family::new(
        "ttft_ms",
        "ms",
        Lower,
        "first non-empty transcription.delta after the first audio sent",
    ),
    Family::new(
        "finalization_ms",
        "ms",
        Lower,
        "final commit sent to transcription.done",
    ),
    Family::new(
        "itl_ms",
        "ms",
        Lower,
        "gap between consecutive non-empty deltas",
    ),
    Family::new(
        "rtf",
        "",
        Lower,
        "(done - first audio sent) / audio duration",
    ),
    Family::new(
        "streaming_lag_ms",
        "ms",
        Lower,
        "delta receipt minus the speech front (end of the audio sent so far on the pacing clock)",
    ),
    Family::new(
        "wer",
        "",
        Lower,
        "word error rate against the reference (corpus; .mean: per file)",
    ),
    Family::new(
        "prompt_tokens",
        "tokens",
        NotAScore,
        "usage.prompt_tokens summed over sessions",
    ),
    Family::new(
        "completion_tokens",
        "tokens",
        NotAScore,
        "usage.completion_tokens summed over sessions",
    ),
    Family::new(
        "total_tokens",
        "tokens",
        NotAScore,
        "usage.total_tokens summed over sessions",
    ),
    Family::new(
        "pacing_max_lag_ms",
        "ms",
        Lower,
        "largest time an append was handed over after its schedule",
    ),
    Family::new(
        AUDIO_THROUGHPUT,
        "audio s/s",
        Higher,
        "seconds of audio transcribed by completed sessions per second of run",
    ),
    Family::new(
        "audio_s",
        "s",
        NotAScore,
        "seconds of audio streamed by completed sessions",
    ),
];

/// The metrics shown first (progress, sweeps, comparisons).
pub const HEADLINE: &[&str] = &["ttft_ms.p50", "ttft_ms.p99", "finalization_ms.p99", "wer"];

/// The catalogue of a transcription run.
pub fn catalogue() -> Catalogue {
    Catalogue::build(metric_names(), FAMILIES, HEADLINE)
        .with_unit_rate(AUDIO_THROUGHPUT, "audio s/s")
}

/// One session's numbers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionMetrics {
    /// First non-empty delta − first audio sent, ms.
    pub ttft_ms: Option<f64>,
    /// Done − final commit, ms.
    pub finalization_ms: Option<f64>,
    /// Gaps between consecutive non-empty deltas, ms.
    pub itl_ms: Vec<f64>,
    /// (Done − first audio) / audio seconds.
    pub rtf: Option<f64>,
    /// Per non-empty delta: receipt − speech front, ms.
    pub streaming_lag_ms: Vec<f64>,
    /// Edits against the reference, when there is one with words.
    pub wer: Option<WerCount>,
    /// Token counts.
    pub usage: Usage,
}

impl SessionMetrics {
    /// The word error rate of this session.
    pub fn wer_rate(&self) -> Option<f64> {
        self.wer.and_then(WerCount::rate)
    }
}

/// The formulas over one record. `reference` is the expected transcript, if known;
/// the hypothesis is `transcription.done.text`, else the deltas joined.
pub fn session_metrics(r: &Record, reference: Option<&str>) -> SessionMetrics {
    let deltas: Vec<_> = r.deltas.iter().filter(|d| !d.text.is_empty()).collect();
    let ms = |a: f64, b: f64| (a - b) * 1000.0;
    let ttft_ms = match (deltas.first(), r.first_audio_s) {
        (Some(d), Some(a)) => Some(ms(d.at_s, a)),
        _ => None,
    };
    let finalization_ms = match (r.done_s, r.final_commit_s) {
        (Some(d), Some(c)) => Some(ms(d, c)),
        _ => None,
    };
    let itl_ms = deltas
        .windows(2)
        .map(|w| ms(w[1].at_s, w[0].at_s))
        .collect();
    let rtf = match (r.done_s, r.first_audio_s) {
        (Some(d), Some(a)) if r.audio_s > 0.0 => Some((d - a) / r.audio_s),
        _ => None,
    };
    let streaming_lag_ms = deltas
        .iter()
        .filter_map(|d| Some(ms(d.at_s, d.front_s?)))
        .collect();
    let hypothesis = r
        .text
        .clone()
        .unwrap_or_else(|| r.deltas.iter().map(|d| d.text.as_str()).collect());
    let wer = reference
        .map(|reference| wer::count(reference, &hypothesis))
        .filter(|c| c.ref_words > 0);
    SessionMetrics {
        ttft_ms,
        finalization_ms,
        itl_ms,
        rtf,
        streaming_lag_ms,
        wer,
        usage: r.usage.unwrap_or_default(),
    }
}

/// Flat run metrics over the completed sessions (plus the failure count): every name
/// in [`metric_names`] that has a value.
pub fn run_metrics(done: &[(&SessionMetrics, &Record)], failed: usize) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    m.insert("failed".into(), failed as f64);
    m.insert("completed".into(), done.len() as f64);
    let collect = |f: &dyn Fn(&SessionMetrics) -> Vec<f64>| -> Vec<f64> {
        done.iter().flat_map(|(s, _)| f(s)).collect()
    };
    let series: [(&str, Vec<f64>); 5] = [
        ("ttft_ms", collect(&|s| s.ttft_ms.into_iter().collect())),
        (
            "finalization_ms",
            collect(&|s| s.finalization_ms.into_iter().collect()),
        ),
        ("itl_ms", collect(&|s| s.itl_ms.clone())),
        ("rtf", collect(&|s| s.rtf.into_iter().collect())),
        ("streaming_lag_ms", collect(&|s| s.streaming_lag_ms.clone())),
    ];
    for (name, v) in &series {
        put_distribution(&mut m, name, v);
    }
    let counts: Vec<WerCount> = done.iter().filter_map(|(s, _)| s.wer).collect();
    if let Some(w) = wer::pooled(&counts) {
        m.insert("wer".into(), w);
    }
    let rates: Vec<f64> = counts.iter().filter_map(|c| c.rate()).collect();
    if let Ok(w) = stats::mean(&rates) {
        m.insert("wer.mean".into(), w);
    }
    let token_sum = |f: fn(&Usage) -> Option<u64>| -> Option<f64> {
        let v: Vec<u64> = done.iter().filter_map(|(s, _)| f(&s.usage)).collect();
        (!v.is_empty()).then(|| v.iter().sum::<u64>() as f64)
    };
    for (name, f) in [
        (
            "prompt_tokens.total",
            (|u: &Usage| u.prompt_tokens) as fn(&Usage) -> Option<u64>,
        ),
        ("completion_tokens.total", |u: &Usage| u.completion_tokens),
        ("total_tokens.total", |u: &Usage| u.total_tokens),
    ] {
        if let Some(v) = token_sum(f) {
            m.insert(name.into(), v);
        }
    }
    if !done.is_empty() {
        let lag = done
            .iter()
            .map(|(_, r)| r.pacing_max_lag_s)
            .fold(0.0, f64::max);
        m.insert("pacing_max_lag_ms.max".into(), lag * 1000.0);
        m.insert(
            "audio_s.total".into(),
            done.iter().map(|(_, r)| r.audio_s).sum(),
        );
    }
    m
}

/// `name.mean` and `name.<pct>` of `v` (nothing when `v` is empty).
pub fn put_distribution(m: &mut BTreeMap<String, f64>, name: &str, v: &[f64]) {
    if let Ok(mean) = stats::mean(v) {
        m.insert(format!("{name}.mean"), mean);
        for (f, label) in PCTS {
            if let Ok(x) = stats::percentile(v, f) {
                m.insert(format!("{name}.{label}"), x);
            }
        }
    }
}

/// Every name [`run_metrics`] can produce, plus the report's [`AUDIO_THROUGHPUT`].
pub fn metric_names() -> Vec<String> {
    let mut names: Vec<String> = DISTRIBUTIONS
        .iter()
        .flat_map(|d| {
            std::iter::once(format!("{d}.mean"))
                .chain(PCTS.iter().map(move |(_, l)| format!("{d}.{l}")))
        })
        .collect();
    names.extend(SCALARS.iter().map(|s| (*s).to_owned()));
    names
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
