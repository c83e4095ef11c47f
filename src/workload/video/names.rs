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
    names.sort();
    names.dedup();
    names
}
