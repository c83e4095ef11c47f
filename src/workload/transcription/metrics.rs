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
use crate::util::stats::STANDARD_PERCENTILES;
use crate::workload::catalogue::{Catalogue, Direction::*, Family, Merge};
use crate::workload::results::Recorded;

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
    Family::new("failed", "sessions", Lower, "measured sessions that failed")
        .origin("measured sessions whose outcome was a failure")
        .merged(Merge::Sum),
    Family::new(
        "completed",
        "sessions",
        Higher,
        "measured sessions that completed",
    )
    .origin("measured sessions that reached transcription.done without a failure")
    .merged(Merge::Sum),
    Family::new(
        "ttft_ms",
        "ms",
        Lower,
        "first non-empty transcription.delta after the first audio sent",
    )
    .origin("first input_audio_buffer.append's intended send → first non-empty transcription.delta received")
    .dist(),
    Family::new(
        "finalization_ms",
        "ms",
        Lower,
        "final commit sent to transcription.done",
    )
    .origin("final input_audio_buffer.commit's intended send → transcription.done received")
    .dist(),
    Family::new(
        "itl_ms",
        "ms",
        Lower,
        "gap between consecutive non-empty deltas",
    )
    .origin("a non-empty transcription.delta received → the next one received")
    .dist(),
    Family::new(
        "rtf",
        "ratio",
        Lower,
        "(done - first audio sent) / audio duration",
    )
    .origin("first append's intended send → transcription.done received, over the file's audio duration")
    .dist(),
    Family::new(
        "streaming_lag_ms",
        "ms",
        Lower,
        "delta receipt minus the speech front (end of the audio sent so far on the pacing clock)",
    )
    .origin("end of the audio sent so far, on the pacing clock → each non-empty transcription.delta received")
    .dist(),
    Family::new(
        "wer",
        "ratio",
        Lower,
        "word error rate against the reference, over the corpus (all files' edits / all reference words)",
    )
    .origin("transcription.done text (else the deltas joined) against the reference transcript")
    .merged(Merge::Ratio("wer_edits.total", "wer_words.total")),
    Family::new(
        "file_wer",
        "ratio",
        Lower,
        "word error rate of each file against its reference",
    )
    .origin("one file's transcription.done text (else its deltas joined) against its reference")
    .dist(),
    Family::new(
        "wer_edits",
        "words",
        NotAScore,
        "word edits against the references, summed over files",
    )
    .origin("word-level edit distance to each reference, summed")
    .merged(Merge::Sum),
    Family::new(
        "wer_words",
        "words",
        NotAScore,
        "reference words, summed over files with a reference",
    )
    .origin("words of each file's reference, summed")
    .merged(Merge::Sum),
    Family::new(
        "prompt_tokens",
        "tokens",
        NotAScore,
        "usage.prompt_tokens summed over sessions",
    )
    .origin("transcription.done usage.prompt_tokens, summed")
    .merged(Merge::Sum),
    Family::new(
        "completion_tokens",
        "tokens",
        NotAScore,
        "usage.completion_tokens summed over sessions",
    )
    .origin("transcription.done usage.completion_tokens, summed")
    .merged(Merge::Sum),
    Family::new(
        "total_tokens",
        "tokens",
        NotAScore,
        "usage.total_tokens summed over sessions",
    )
    .origin("transcription.done usage.total_tokens, summed")
    .merged(Merge::Sum),
    Family::new(
        "pacing_max_lag_ms",
        "ms",
        Lower,
        "largest time an append was handed over after its schedule",
    )
    .origin("an append's intended send → handed to the socket, the largest")
    .merged(Merge::Max),
    Family::new(
        AUDIO_THROUGHPUT,
        "audio s/s",
        Higher,
        "seconds of audio transcribed by completed sessions per second of run",
    )
    .origin("audio seconds of completed sessions ÷ first measured release → last measured end")
    .merged(Merge::PerSecond("audio_s.total")),
    Family::new(
        "audio_s",
        "s",
        NotAScore,
        "seconds of audio streamed by completed sessions",
    )
    .origin("audio duration of each completed session's file, summed")
    .merged(Merge::Sum),
];

/// Scalar names in [`FAMILIES`] (the distributions publish `<name>.<stat>`).
const SCALARS: [&str; 11] = [
    "failed",
    "completed",
    "wer",
    "wer_edits.total",
    "wer_words.total",
    "prompt_tokens.total",
    "completion_tokens.total",
    "total_tokens.total",
    "pacing_max_lag_ms.max",
    "audio_s.total",
    AUDIO_THROUGHPUT,
];

/// Names older results used (`wer.mean` was the per-file mean) and the result's
/// top-level keys that restate a metric (`wer_mean`, `pacing_max_lag_ms`): a merge
/// writes each from the merged metric.
pub const ALIASES: &[(&str, &str)] = &[
    ("wer.mean", "file_wer.mean"),
    ("wer_mean", "file_wer.mean"),
    ("pacing_max_lag_ms", "pacing_max_lag_ms.max"),
];

/// The metrics shown first (progress, sweeps, comparisons).
pub const HEADLINE: &[&str] = &["ttft_ms.p50", "ttft_ms.p99", "finalization_ms.p99", "wer"];

/// The catalogue of a transcription run.
pub fn catalogue() -> Catalogue {
    let dists: Vec<Family> = FAMILIES.iter().filter(|f| f.is_dist()).cloned().collect();
    let mut names = Catalogue::of(&dists, &STANDARD_PERCENTILES, &[]).names();
    names.extend(SCALARS.iter().map(|s| (*s).to_string()));
    Catalogue::build(names, FAMILIES, HEADLINE)
        .with_unit_rate(AUDIO_THROUGHPUT, "audio s/s")
        .with_aliases(ALIASES)
        .with_charts(super::report::charts())
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

/// One completed session: its numbers, its record and when its socket opened (seconds
/// since the run start: the record's times are relative to it).
pub type Done<'a> = (&'a SessionMetrics, &'a Record, f64);

/// Run metrics over the completed sessions (plus the failure count): the scalars, and
/// every distribution's values stamped with when each was observed on the run clock.
pub fn run_metrics(done: &[Done<'_>], failed: usize) -> (BTreeMap<String, f64>, Recorded) {
    let mut m = BTreeMap::new();
    m.insert("failed".into(), failed as f64);
    m.insert("completed".into(), done.len() as f64);
    let mut rec = Recorded::declaring(FAMILIES, &STANDARD_PERCENTILES);
    for (s, r, open) in done {
        record_session(&mut rec, s, r, *open);
    }
    let counts: Vec<WerCount> = done.iter().filter_map(|(s, _, _)| s.wer).collect();
    if let Some(w) = wer::pooled(&counts) {
        m.insert("wer".into(), w);
        let sum = |f: fn(&WerCount) -> usize| counts.iter().map(f).sum::<usize>() as f64;
        m.insert("wer_edits.total".into(), sum(|c| c.edits));
        m.insert("wer_words.total".into(), sum(|c| c.ref_words));
    }
    let token_sum = |f: fn(&Usage) -> Option<u64>| -> Option<f64> {
        let v: Vec<u64> = done.iter().filter_map(|(s, _, _)| f(&s.usage)).collect();
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
            .map(|(_, r, _)| r.pacing_max_lag_s)
            .fold(0.0, f64::max);
        m.insert("pacing_max_lag_ms.max".into(), lag * 1000.0);
        m.insert(
            "audio_s.total".into(),
            done.iter().map(|(_, r, _)| r.audio_s).sum(),
        );
    }
    (m, rec)
}

/// One completed session's values, each at the run time its end event was received.
fn record_session(rec: &mut Recorded, s: &SessionMetrics, r: &Record, open: f64) {
    let deltas: Vec<f64> = r
        .deltas
        .iter()
        .filter(|d| !d.text.is_empty())
        .map(|d| open + d.at_s)
        .collect();
    let done_at = r.done_s.map_or(open, |d| open + d);
    if let (Some(v), Some(at)) = (s.ttft_ms, deltas.first()) {
        rec.push("ttft_ms", *at, v);
    }
    if let Some(v) = s.finalization_ms {
        rec.push("finalization_ms", done_at, v);
    }
    for (v, at) in s.itl_ms.iter().zip(deltas.iter().skip(1)) {
        rec.push("itl_ms", *at, *v);
    }
    if let Some(v) = s.rtf {
        rec.push("rtf", done_at, v);
    }
    let fronts = r
        .deltas
        .iter()
        .filter(|d| !d.text.is_empty() && d.front_s.is_some());
    for (v, d) in s.streaming_lag_ms.iter().zip(fronts) {
        rec.push("streaming_lag_ms", open + d.at_s, *v);
    }
    if let Some(w) = s.wer_rate() {
        rec.push("file_wer", done_at, w);
    }
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
