//! Flat metric names of a video run that do not depend on the session count, for
//! thresholds, comparisons and sweeps: `ttfc_ms.*`, `video_rtf.*`, `chunk_interval_ms.*`
//! (steady intervals pooled across sessions), `slo_attainment`, `underrun_count`,
//! `failed`, `completed` — next to the reference-shaped keys of the JSON `metrics`.

use std::collections::BTreeMap;

use super::metrics::{self, ChunkRecord, MetricsConfig, SessionMetrics};
use crate::util::stats;

/// Percentiles reported for pooled intervals.
const PCTS: [(f64, &str); 5] = [
    (0.5, "p50"),
    (0.9, "p90"),
    (0.95, "p95"),
    (0.99, "p99"),
    (1.0, "max"),
];

/// Normalized metrics over the completed sessions (`records` per session, index order).
pub fn normalized(
    sessions: &[(&SessionMetrics, &[ChunkRecord])],
    cfg: &MetricsConfig,
    failed: usize,
) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    m.insert("failed".into(), failed as f64);
    m.insert("completed".into(), sessions.len() as f64);
    let put_dist = |m: &mut BTreeMap<String, f64>, name: &str, v: &[f64]| {
        if let Ok(mean) = stats::mean(v) {
            m.insert(format!("{name}.mean"), mean);
            for (f, label) in PCTS {
                if let Ok(x) = stats::percentile(v, f) {
                    m.insert(format!("{name}.{label}"), x);
                }
            }
        }
    };
    let ttfc: Vec<f64> = sessions.iter().filter_map(|(s, _)| s.ttfc_ms).collect();
    put_dist(&mut m, "ttfc_ms", &ttfc);
    let rtf: Vec<f64> = sessions.iter().map(|(s, _)| s.video_rtf).collect();
    put_dist(&mut m, "video_rtf", &rtf);
    let steady_rtf: Vec<f64> = sessions
        .iter()
        .filter_map(|(s, _)| s.steady_video_rtf)
        .collect();
    if let Ok(v) = stats::mean(&steady_rtf) {
        m.insert("video_rtf.steady".into(), v);
    }
    let (mut steady, mut all) = (Vec::new(), Vec::new());
    for (_, recs) in sessions {
        steady.extend(steady_intervals_ms(recs, cfg.warmup_chunks));
        all.extend(
            recs.iter()
                .filter(|r| r.index != 0)
                .map(|r| r.inter_arrival_s * 1000.0),
        );
    }
    put_dist(&mut m, "chunk_interval_ms", &steady);
    put_dist(&mut m, "chunk_interval_all_ms", &all);
    if !steady.is_empty() {
        let deadline = metrics::chunk_deadline_ms(cfg.fps, cfg.slo_ms);
        let within = steady.iter().filter(|v| **v <= deadline).count();
        m.insert("slo_attainment".into(), within as f64 / steady.len() as f64);
        m.insert("slo_violations".into(), (steady.len() - within) as f64);
    }
    if !sessions.is_empty() {
        let underruns: u64 = sessions
            .iter()
            .map(|(s, _)| s.playback.underrun_count)
            .sum();
        let stall: f64 = sessions
            .iter()
            .map(|(s, _)| s.playback.total_stall_ms)
            .sum();
        m.insert("underrun_count".into(), underruns as f64);
        m.insert("stall_ms.total".into(), stall);
    }
    m
}

/// Steady intervals of one session (§5.3.1): indices ≥ warm-up, not the terminal chunk,
/// not index 0.
fn steady_intervals_ms(records: &[ChunkRecord], warmup: u32) -> Vec<f64> {
    let last = records.iter().map(|r| r.index).max();
    records
        .iter()
        .filter(|r| r.index >= u64::from(warmup) && Some(r.index) != last && r.index != 0)
        .map(|r| r.inter_arrival_s * 1000.0)
        .collect()
}

/// Every name a video report can produce (normalized names plus the reference-shaped
/// keys of one- and several-session aggregates).
pub fn all_names(cfg: &MetricsConfig) -> Vec<String> {
    // A synthetic session with steady state, so every optional key exists.
    let recs: Vec<ChunkRecord> = (0..cfg.warmup_chunks.max(1) as u64 + 3)
        .map(|i| ChunkRecord {
            index: i,
            arrival_s: 1.0 + i as f64,
            inter_arrival_s: 1.0,
            byte_length: 1,
            num_frames: if i == 0 { 9 } else { 12 },
        })
        .collect();
    let mut names: Vec<String> = Vec::new();
    if let Ok(s) = metrics::compute_metrics(
        &recs,
        &MetricsConfig {
            buffer_chunks: 1,
            ..*cfg
        },
        Some(1.0),
        None,
    ) {
        names.extend(normalized(&[(&s, &recs)], cfg, 0).into_keys());
        for n in [1, 2] {
            if let Ok(agg) = metrics::aggregate(&vec![s.clone(); n]) {
                names.extend(metrics::flat_metrics(&agg).into_keys());
            }
        }
    }
    names.push(CHUNK_THROUGHPUT.to_string());
    names.sort();
    names.dedup();
    names
}

/// The video workload's unit of work: chunks received per second of run. A chunk is
/// what the server must produce on cadence, so chunks/s is the throughput a load tester
/// reads against the cadence (frames/s is the same number times the frames per chunk).
pub const CHUNK_THROUGHPUT: &str = "chunk_throughput";

/// `chunk_throughput`: chunks received by the completed sessions (`chunks`) per second
/// of run (`duration_s`); `None` without completed sessions or a positive duration.
pub fn chunk_throughput(completed: usize, chunks: u64, duration_s: f64) -> Option<f64> {
    (completed > 0)
        .then(|| crate::workload::catalogue::per_second(chunks as f64, duration_s))
        .flatten()
}

use crate::workload::catalogue::{Catalogue, Direction::*, Family};

/// What every video metric means: the normalized names, then the reference-shaped keys
/// of one session (§5.3.3) and of several (§5.3.6). The longest covering prefix wins.
pub const FAMILIES: &[Family] = &[
    Family::new("failed", "sessions", Lower, "measured sessions that failed"),
    Family::new(
        "completed",
        "sessions",
        Higher,
        "measured sessions that completed",
    ),
    Family::new(
        "ttfc_ms",
        "ms",
        Lower,
        "time to first chunk after the opening message",
    ),
    Family::new(
        "ttfc_ms_mean",
        "ms",
        Lower,
        "mean time to first chunk over sessions",
    ),
    Family::new("ttfc_ms_max", "ms", Lower, "largest time to first chunk"),
    Family::new(
        "video_rtf",
        "ratio",
        Lower,
        "wall time / video time (below 1 keeps real time)",
    ),
    Family::new(
        "video_rtf_mean",
        "ratio",
        Lower,
        "mean per-session video RTF",
    ),
    Family::new(
        "video_rtf_best",
        "ratio",
        Lower,
        "lowest per-session video RTF",
    ),
    Family::new(
        "video_rtf_worst",
        "ratio",
        Lower,
        "highest per-session video RTF",
    ),
    Family::new(
        "steady_video_rtf",
        "ratio",
        Lower,
        "video RTF over steady chunks",
    ),
    Family::new("video_rtfx", "ratio", Higher, "video time / wall time"),
    Family::new(
        "steady_video_rtfx",
        "ratio",
        Higher,
        "video RTFx over steady chunks",
    ),
    Family::new(
        "chunk_interval_ms",
        "ms",
        Lower,
        "steady chunk inter-arrival, pooled over sessions",
    ),
    Family::new(
        "chunk_interval_all_ms",
        "ms",
        Lower,
        "every chunk inter-arrival, pooled over sessions",
    ),
    Family::new(
        "interval_all",
        "ms",
        Lower,
        "one session's chunk inter-arrival summary",
    ),
    Family::new(
        "interval_steady",
        "ms",
        Lower,
        "one session's steady chunk inter-arrival summary",
    ),
    Family::new(
        "steady_interval_ms_mean",
        "ms",
        Lower,
        "pooled steady inter-arrival mean",
    ),
    Family::new(
        "steady_interval_ms_spread",
        "ms",
        Lower,
        "max − min of per-session steady means",
    ),
    Family::new(
        "slo_attainment",
        "ratio",
        Higher,
        "share of steady intervals within the chunk deadline",
    ),
    Family::new(
        "slo_violations",
        "intervals",
        Lower,
        "steady intervals past the chunk deadline",
    ),
    Family::new(
        "underrun_count",
        "underruns",
        Lower,
        "times a viewer's playback ran dry",
    ),
    Family::new("stall_ms", "ms", Lower, "time a viewer's playback stalled"),
    Family::new(
        "playback.underrun_count",
        "underruns",
        Lower,
        "times the viewer ran dry",
    ),
    Family::new(
        "playback.total_stall_ms",
        "ms",
        Lower,
        "time the viewer stalled",
    ),
    Family::new(
        "playback.stall_ratio",
        "ratio",
        Lower,
        "stall time / playback span",
    ),
    Family::new(
        "playback.playback_span_s",
        "s",
        NotAScore,
        "playback start to end of the last chunk",
    ),
    Family::new(
        "playback.first_underrun_chunk",
        "index",
        NotAScore,
        "first chunk that arrived late",
    ),
    Family::new(
        "playback.buffer_chunks",
        "chunks",
        NotAScore,
        "playback start buffer (configuration)",
    ),
    Family::new(
        CHUNK_THROUGHPUT,
        "chunks/s",
        Higher,
        "chunks received by completed sessions per second of run",
    ),
    Family::new(
        "frames_per_second",
        "fps",
        Higher,
        "frames received per wall second",
    ),
    Family::new(
        "steady_state_reached",
        "bool",
        Higher,
        "1 when steady chunks exist",
    ),
    Family::new("sessions", "sessions", NotAScore, "sessions aggregated"),
    Family::new("chunks_received", "chunks", NotAScore, "chunks received"),
    Family::new(
        "warmup_chunks",
        "chunks",
        NotAScore,
        "warm-up chunks excluded (configuration)",
    ),
    Family::new(
        "steady_chunks",
        "chunks",
        NotAScore,
        "chunks counted as steady",
    ),
    Family::new("total_frames", "frames", NotAScore, "frames received"),
    Family::new("total_bytes", "bytes", NotAScore, "bytes received"),
    Family::new("video_seconds", "s", NotAScore, "video time received"),
    Family::new("wall_seconds", "s", Lower, "wall time of the session"),
    Family::new(
        "chunk_deadline_ms",
        "ms",
        NotAScore,
        "real-time chunk deadline (configuration)",
    ),
];

/// The summary-row metrics, in display order (the first is the sweep's featured curve).
pub const HEADLINE: &[&str] = &[
    "ttfc_ms.mean",
    "chunk_interval_ms.p99",
    "video_rtf.mean",
    "slo_attainment",
];

/// The catalogue of a video run configured with `cfg`.
pub fn catalogue(cfg: &MetricsConfig) -> Catalogue {
    Catalogue::build(all_names(cfg), FAMILIES, HEADLINE)
        .with_unit_rate(CHUNK_THROUGHPUT, "chunks/s")
}
