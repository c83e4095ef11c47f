//! LingBot-World realtime video cadence metrics (spec §5.3): interval summaries, the
//! playback-stall simulation, per-session metrics, multi-session aggregation and the flat
//! name → value map used by thresholds.
//!
//! Pure functions over [`ChunkRecord`]s. The JSON shapes (keys, absent vs `null` vs `{}`)
//! are the reference client's, so a `serde_json::Value` of these types is the reference's
//! `metrics` document.

#[cfg(test)]
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::util::stats::{self, StatsError};
use crate::workload::playback::{self, PlayUnit, PlaybackConfig, StreamPlayback};

/// Chunks excluded from steady state by default: the attention window saturates after 6.
pub const DEFAULT_WARMUP_CHUNKS: u32 = 6;

/// Pixel frames in every chunk after the first (3 latent frames × 4).
pub const STEADY_CHUNK_FRAMES: u32 = 12;

/// One media chunk as the client observed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkRecord {
    /// `generation_chunk_index` from the chunk's metadata.
    pub index: u64,
    /// Seconds from `session.start` being sent to this chunk's bytes arriving.
    pub arrival_s: f64,
    /// Seconds since the previous media chunk; for chunk 0 this equals `arrival_s` (TTFC).
    pub inter_arrival_s: f64,
    /// Length of the binary frame actually received.
    pub byte_length: u64,
    /// Pixel frames the metadata declared (9 for chunk 0, then 12).
    pub num_frames: u32,
}

/// A chunk as the reference's `--output-json` writes it (`inter_arrival_ms`, not seconds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkOutput {
    /// Chunk index.
    pub index: u64,
    /// Seconds since `session.start` was sent.
    pub arrival_s: f64,
    /// Milliseconds since the previous chunk (chunk 0: the TTFC).
    pub inter_arrival_ms: f64,
    /// Bytes received.
    pub byte_length: u64,
    /// Pixel frames.
    pub num_frames: u32,
}

impl From<&ChunkRecord> for ChunkOutput {
    fn from(r: &ChunkRecord) -> Self {
        ChunkOutput {
            index: r.index,
            arrival_s: r.arrival_s,
            inter_arrival_ms: r.inter_arrival_s * 1000.0,
            byte_length: r.byte_length,
            num_frames: r.num_frames,
        }
    }
}

/// How one session's records are judged.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsConfig {
    /// Real-time basis (target fps): RTF, the default deadline and playback use it.
    pub fps: f64,
    /// Chunks with a smaller index never count as steady state.
    pub warmup_chunks: u32,
    /// Explicit steady-chunk deadline; `None` → `12 / fps · 1000`.
    pub slo_ms: Option<f64>,
    /// Chunks that must have arrived before simulated playback starts (≥ 1).
    pub buffer_chunks: u32,
}

/// Millisecond summary of a set of inter-arrival intervals (the reference's non-empty dict).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalSummary {
    /// Number of intervals (a float in the reference's JSON).
    pub count: f64,
    /// Arithmetic mean.
    pub mean_ms: f64,
    /// 50th percentile.
    pub median_ms: f64,
    /// Sample standard deviation (n − 1); 0 for a single interval.
    pub std_ms: f64,
    /// Smallest interval.
    pub min_ms: f64,
    /// Linear-interpolated 90th percentile.
    pub p90_ms: f64,
    /// Linear-interpolated 95th percentile.
    pub p95_ms: f64,
    /// Linear-interpolated 99th percentile.
    pub p99_ms: f64,
    /// Largest interval.
    pub max_ms: f64,
}

/// What a simulated viewer saw (spec §5.3.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlaybackSummary {
    /// Times the player ran dry.
    pub underrun_count: u64,
    /// Total time spent stalled, ms.
    pub total_stall_ms: f64,
    /// Seconds from playback start to the end of the last chunk's video.
    pub playback_span_s: f64,
    /// `stall / span` (0 when the span is 0).
    pub stall_ratio: f64,
    /// Index of the first chunk that arrived late (`null` when none did).
    pub first_underrun_chunk: Option<u64>,
    /// Start buffer, in chunks.
    pub buffer_chunks: u32,
}

/// One session's metrics (spec §5.3.3); optional keys are absent, not zero.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionMetrics {
    /// Media chunks received.
    pub chunks_received: u64,
    /// Warm-up chunks excluded from steady state.
    pub warmup_chunks: u32,
    /// Number of steady intervals.
    pub steady_chunks: u64,
    /// `steady_chunks > 0`.
    pub steady_state_reached: bool,
    /// Σ pixel frames.
    pub total_frames: u64,
    /// Σ bytes received.
    pub total_bytes: u64,
    /// `total_frames / fps`.
    pub video_seconds: f64,
    /// Session wall time if given, else the last chunk's arrival.
    pub wall_seconds: f64,
    /// `wall / video` (a cost; lower is better; 0 if no video).
    pub video_rtf: f64,
    /// `video / wall` (0 if no wall time).
    pub video_rtfx: f64,
    /// `total_frames / wall` (0 if no wall time).
    pub frames_per_second: f64,
    /// The steady-chunk deadline in ms.
    pub chunk_deadline_ms: f64,
    /// Every interval after chunk 0 (`{}` when there is none).
    #[serde(with = "summary_or_empty")]
    pub interval_all: Option<IntervalSummary>,
    /// Steady intervals only (`{}` when there is none).
    #[serde(with = "summary_or_empty")]
    pub interval_steady: Option<IntervalSummary>,
    /// Time to first chunk, ms (only when known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttfc_ms: Option<f64>,
    /// Σ steady intervals / steady video seconds (only with steady intervals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_video_rtf: Option<f64>,
    /// Reciprocal of `steady_video_rtf` (only with steady intervals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_video_rtfx: Option<f64>,
    /// Fraction of steady intervals within the deadline (only with steady intervals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_attainment: Option<f64>,
    /// Steady intervals over the deadline (only with steady intervals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_violations: Option<u64>,
    /// Playback simulation.
    pub playback: PlaybackSummary,
}

/// The §5.3.6 summary of several sessions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MultiSessionMetrics {
    /// Number of sessions.
    pub sessions: u64,
    /// Σ chunks received.
    pub chunks_received: u64,
    /// Σ frames.
    pub total_frames: u64,
    /// Σ video seconds.
    pub video_seconds: f64,
    /// Σ wall seconds.
    pub wall_seconds: f64,
    /// Mean of per-session `video_rtf`.
    pub video_rtf_mean: f64,
    /// Lowest (best) per-session `video_rtf`.
    pub video_rtf_best: f64,
    /// Highest (worst) per-session `video_rtf`.
    pub video_rtf_worst: f64,
    /// Mean TTFC over sessions that have one (`null` if none).
    pub ttfc_ms_mean: Option<f64>,
    /// Largest TTFC (`null` if none).
    pub ttfc_ms_max: Option<f64>,
    /// Pooled steady mean Σ(mean·count)/Σcount (`null` if no session has steady intervals).
    pub steady_interval_ms_mean: Option<f64>,
    /// max − min of per-session steady means (`null` if none).
    pub steady_interval_ms_spread: Option<f64>,
    /// Σ playback underruns.
    pub underrun_count: u64,
    /// The common chunk deadline.
    pub chunk_deadline_ms: f64,
}

/// The run's `metrics` document: one session's metrics plus `sessions: 1`, or the
/// multi-session summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AggregateMetrics {
    /// Exactly one measured session.
    Single {
        /// That session's metrics (flattened into the same object).
        #[serde(flatten)]
        metrics: Box<SessionMetrics>,
        /// Always 1.
        sessions: u64,
    },
    /// Two or more sessions.
    Multi(MultiSessionMetrics),
}

/// Why metrics could not be computed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum MetricsError {
    /// `compute_metrics` was given no records.
    #[error("compute_metrics() needs at least one chunk record")]
    NoRecords,
    /// `aggregate` was given no sessions.
    #[error("aggregate() needs at least one session")]
    NoSessions,
    /// The real-time basis must be positive.
    #[error("fps must be positive, got {0}")]
    NonPositiveFps(f64),
    /// The playback start buffer must be at least one chunk.
    #[error("buffer_chunks must be at least 1.")]
    ZeroBuffer,
    /// The start buffer is larger than the session.
    #[error("buffer_chunks={buffer} exceeds the {received} chunks received.")]
    BufferExceedsChunks {
        /// Requested start buffer.
        buffer: u32,
        /// Chunks actually received.
        received: usize,
    },
    /// Sessions judged against different deadlines cannot be pooled.
    #[error("Cannot aggregate sessions with different chunk deadlines.")]
    DeadlineMismatch,
    /// A statistic failed (cannot happen for non-empty inputs).
    #[error(transparent)]
    Stats(#[from] StatsError),
}

/// Steady-chunk deadline in ms: `slo_ms` if given, else 12 frames at `fps`.
pub fn chunk_deadline_ms(fps: f64, slo_ms: Option<f64>) -> f64 {
    slo_ms.unwrap_or(f64::from(STEADY_CHUNK_FRAMES) / fps * 1000.0)
}

/// Summarize intervals given in seconds as milliseconds; `None` (JSON `{}`) when empty.
pub fn interval_summary(intervals_s: &[f64]) -> Option<IntervalSummary> {
    let ms: Vec<f64> = intervals_s.iter().map(|s| s * 1000.0).collect();
    let mean_ms = stats::mean(&ms).ok()?;
    let mut sorted = ms.clone();
    sorted.sort_by(f64::total_cmp);
    let p = |f: f64| stats::percentile_sorted(&sorted, f).ok();
    Some(IntervalSummary {
        count: ms.len() as f64,
        mean_ms,
        median_ms: p(0.5)?,
        std_ms: stats::sample_std(&ms),
        min_ms: *sorted.first()?,
        p90_ms: p(0.90)?,
        p95_ms: p(0.95)?,
        p99_ms: p(0.99)?,
        max_ms: *sorted.last()?,
    })
}

/// Replay arrivals against a wall clock consuming video at `fps` after `buffer_chunks`
/// chunks have landed, counting stalls (spec §5.3.4), with the shared playback
/// simulation ([`playback::simulate`]). No records → all zeros.
pub fn simulate_playback(
    records: &[ChunkRecord],
    fps: f64,
    buffer_chunks: u32,
) -> Result<PlaybackSummary, MetricsError> {
    if fps.is_nan() || fps <= 0.0 {
        return Err(MetricsError::NonPositiveFps(fps));
    }
    if buffer_chunks < 1 {
        return Err(MetricsError::ZeroBuffer);
    }
    if records.len() < buffer_chunks as usize && !records.is_empty() {
        return Err(MetricsError::BufferExceedsChunks {
            buffer: buffer_chunks,
            received: records.len(),
        });
    }
    let units: Vec<PlayUnit> = records
        .iter()
        .map(|r| PlayUnit {
            stream: 0,
            index: r.index,
            arrival_s: r.arrival_s,
            duration_s: f64::from(r.num_frames) / fps,
        })
        .collect();
    let cfg = PlaybackConfig {
        buffer_units: buffer_chunks,
        prebuffer_s: 0.0,
    };
    let played = playback::simulate(&units, cfg);
    Ok(viewer_summary(played.streams.first(), buffer_chunks))
}

/// The viewer's summary in the reference's shape, from the shared simulation's single
/// stream (no stream: nothing played, all zeros).
pub fn viewer_summary(played: Option<&StreamPlayback>, buffer_chunks: u32) -> PlaybackSummary {
    let mut out = PlaybackSummary {
        underrun_count: 0,
        total_stall_ms: 0.0,
        playback_span_s: 0.0,
        stall_ratio: 0.0,
        first_underrun_chunk: None,
        buffer_chunks,
    };
    if let Some(p) = played {
        let (stall, span) = (p.total_stall_s, p.playback_span_s);
        out.underrun_count = p.stall_count;
        out.total_stall_ms = stall * 1000.0;
        out.playback_span_s = span;
        out.stall_ratio = if span > 0.0 { stall / span } else { 0.0 };
        out.first_underrun_chunk = p.first_stall_index;
    }
    out
}

/// One session's metrics (spec §5.3.1 and §5.3.3).
///
/// `ttfc_s` adds `ttfc_ms`; `session_wall_s` (loop exit time) replaces the last arrival as
/// the wall time.
pub fn compute_metrics(
    records: &[ChunkRecord],
    cfg: &MetricsConfig,
    ttfc_s: Option<f64>,
    session_wall_s: Option<f64>,
) -> Result<SessionMetrics, MetricsError> {
    if records.is_empty() {
        return Err(MetricsError::NoRecords);
    }
    let fps = cfg.fps;
    if fps.is_nan() || fps <= 0.0 {
        return Err(MetricsError::NonPositiveFps(fps));
    }
    let ordered = sorted_by_index(records);
    let deadline_ms = chunk_deadline_ms(fps, cfg.slo_ms);
    let last_pos = ordered.len() - 1;

    let all: Vec<f64> = ordered[1..].iter().map(|r| r.inter_arrival_s).collect();
    // Steady: index ≥ warm-up, not the terminal chunk, and not chunk 0 (its value is TTFC).
    let steady: Vec<&ChunkRecord> = ordered[..last_pos]
        .iter()
        .filter(|r| r.index >= u64::from(cfg.warmup_chunks) && r.index > 0)
        .copied()
        .collect();
    let steady_intervals: Vec<f64> = steady.iter().map(|r| r.inter_arrival_s).collect();

    let total_frames: u64 = ordered.iter().map(|r| u64::from(r.num_frames)).sum();
    let video_seconds = total_frames as f64 / fps;
    let wall_seconds = session_wall_s.unwrap_or(ordered[last_pos].arrival_s);
    let ratio = |num: f64, den: f64| if den > 0.0 { num / den } else { 0.0 };

    let mut m = SessionMetrics {
        chunks_received: ordered.len() as u64,
        warmup_chunks: cfg.warmup_chunks,
        steady_chunks: steady_intervals.len() as u64,
        steady_state_reached: !steady_intervals.is_empty(),
        total_frames,
        total_bytes: ordered.iter().map(|r| r.byte_length).sum(),
        video_seconds,
        wall_seconds,
        video_rtf: ratio(wall_seconds, video_seconds),
        video_rtfx: ratio(video_seconds, wall_seconds),
        frames_per_second: ratio(total_frames as f64, wall_seconds),
        chunk_deadline_ms: deadline_ms,
        interval_all: interval_summary(&all),
        interval_steady: interval_summary(&steady_intervals),
        ttfc_ms: ttfc_s.map(|t| t * 1000.0),
        steady_video_rtf: None,
        steady_video_rtfx: None,
        slo_attainment: None,
        slo_violations: None,
        playback: simulate_playback(records, fps, cfg.buffer_chunks)?,
    };
    if !steady_intervals.is_empty() {
        let steady_frames: u64 = steady.iter().map(|r| u64::from(r.num_frames)).sum();
        let steady_wall: f64 = steady_intervals.iter().sum();
        let steady_video = steady_frames as f64 / fps;
        let n = steady_intervals.len();
        let within = steady_intervals
            .iter()
            .filter(|v| **v * 1000.0 <= deadline_ms)
            .count();
        m.steady_video_rtf = Some(ratio(steady_wall, steady_video));
        m.steady_video_rtfx = Some(ratio(steady_video, steady_wall));
        m.slo_attainment = Some(within as f64 / n as f64);
        m.slo_violations = Some((n - within) as u64);
    }
    Ok(m)
}

/// Combine measured sessions (spec §5.3.6).
pub fn aggregate(sessions: &[SessionMetrics]) -> Result<AggregateMetrics, MetricsError> {
    let (first, rest) = sessions.split_first().ok_or(MetricsError::NoSessions)?;
    if rest.is_empty() {
        return Ok(AggregateMetrics::Single {
            metrics: Box::new(first.clone()),
            sessions: 1,
        });
    }
    let deadline = first.chunk_deadline_ms;
    if rest.iter().any(|s| s.chunk_deadline_ms != deadline) {
        return Err(MetricsError::DeadlineMismatch);
    }
    let rtfs: Vec<f64> = sessions.iter().map(|s| s.video_rtf).collect();
    let ttfcs: Vec<f64> = sessions.iter().filter_map(|s| s.ttfc_ms).collect();
    let steady: Vec<&IntervalSummary> = sessions
        .iter()
        .filter_map(|s| s.interval_steady.as_ref())
        .filter(|s| s.count > 0.0)
        .collect();
    let pooled_count: f64 = steady.iter().map(|s| s.count).sum();
    let pooled_sum: f64 = steady.iter().map(|s| s.mean_ms * s.count).sum();
    let means = steady.iter().map(|s| s.mean_ms);
    Ok(AggregateMetrics::Multi(MultiSessionMetrics {
        sessions: sessions.len() as u64,
        chunks_received: sessions.iter().map(|s| s.chunks_received).sum(),
        total_frames: sessions.iter().map(|s| s.total_frames).sum(),
        video_seconds: sessions.iter().map(|s| s.video_seconds).sum(),
        wall_seconds: sessions.iter().map(|s| s.wall_seconds).sum(),
        video_rtf_mean: stats::mean(&rtfs)?,
        video_rtf_best: rtfs.iter().copied().fold(f64::INFINITY, f64::min),
        video_rtf_worst: rtfs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        ttfc_ms_mean: stats::mean(&ttfcs).ok(),
        ttfc_ms_max: ttfcs.iter().copied().reduce(f64::max),
        steady_interval_ms_mean: (pooled_count > 0.0).then(|| pooled_sum / pooled_count),
        steady_interval_ms_spread: means
            .clone()
            .reduce(f64::max)
            .zip(means.reduce(f64::min))
            .map(|(hi, lo)| hi - lo),
        underrun_count: sessions.iter().map(|s| s.playback.underrun_count).sum(),
        chunk_deadline_ms: deadline,
    }))
}

/// Every numeric field of the aggregate as a flat name → value map for thresholds.
///
/// Names are the JSON keys; nested blocks use a dot (`interval_steady.p99_ms`,
/// `playback.underrun_count`). Absent or `null` values are absent here. The boolean
/// `steady_state_reached` is included as 1.0 / 0.0.
#[cfg(test)]
pub fn flat_metrics(agg: &AggregateMetrics) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    if let Ok(value) = serde_json::to_value(agg) {
        flatten_into(&mut out, "", &value);
    }
    out
}

#[cfg(test)]
fn flatten_into(out: &mut BTreeMap<String, f64>, prefix: &str, value: &serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                out.insert(prefix.to_string(), x);
            }
        }
        Value::Bool(b) => {
            out.insert(prefix.to_string(), if *b { 1.0 } else { 0.0 });
        }
        Value::Object(map) => {
            for (key, v) in map {
                let name = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten_into(out, &name, v);
            }
        }
        Value::Null | Value::String(_) | Value::Array(_) => {}
    }
}

fn sorted_by_index(records: &[ChunkRecord]) -> Vec<&ChunkRecord> {
    let mut ordered: Vec<&ChunkRecord> = records.iter().collect();
    ordered.sort_by_key(|r| r.index);
    ordered
}

/// Serde adapter: `None` ⇄ `{}`, `Some(summary)` ⇄ the summary object.
mod summary_or_empty {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::IntervalSummary;

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    enum Repr {
        Full(IntervalSummary),
        Empty {},
    }

    /// `Some(summary)` as the summary object, `None` as `{}`.
    pub fn serialize<S: Serializer>(v: &Option<IntervalSummary>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(summary) => summary.serialize(s),
            None => Repr::Empty {}.serialize(s),
        }
    }

    /// The summary object back as `Some`, `{}` as `None`.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<IntervalSummary>, D::Error> {
        Ok(match Repr::deserialize(d)? {
            Repr::Full(summary) => Some(summary),
            Repr::Empty {} => None,
        })
    }
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
