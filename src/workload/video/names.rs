//! The flat metrics of a video run, for thresholds, comparisons and sweeps, next to the
//! reference-shaped keys of the JSON `metrics`: distributions recorded once per run
//! (`ttfc_ms`, `video_rtf`, `steady_video_rtf`, `chunk_interval_ms` — steady intervals
//! pooled across sessions — and `chunk_interval_all_ms`, every interval) and scalars
//! (`slo_attainment`, `underrun_count`, `failed`, `completed`, …). The reference's own
//! aggregate keys (`ttfc_ms_mean`, `video_rtf_worst`, …) are accepted as aliases.

use std::collections::BTreeMap;

use super::metrics::{self, ChunkRecord, MetricsConfig, SessionMetrics};
use crate::util::stats::STANDARD_PERCENTILES;
use crate::workload::results::Recorded;

/// One completed session: its metrics, its chunk records (index order) and when its
/// socket opened (seconds since the run start; record times are relative to it).
pub type Done<'a> = (&'a SessionMetrics, &'a [ChunkRecord], f64);

/// The run's scalars and recorded distributions over the completed sessions.
pub fn normalized(
    sessions: &[Done<'_>],
    cfg: &MetricsConfig,
    failed: usize,
) -> (BTreeMap<String, f64>, Recorded) {
    let mut m = BTreeMap::new();
    m.insert("failed".into(), failed as f64);
    m.insert("completed".into(), sessions.len() as f64);
    m.insert(
        "chunk_deadline_ms".into(),
        metrics::chunk_deadline_ms(cfg.fps, cfg.slo_ms),
    );
    let mut rec = Recorded::declaring(FAMILIES, &STANDARD_PERCENTILES);
    let deadline = metrics::chunk_deadline_ms(cfg.fps, cfg.slo_ms);
    let (mut met, mut steady_n) = (0u64, 0u64);
    for (s, recs, open) in sessions {
        let end = open + recs.iter().map(|r| r.arrival_s).fold(0.0, f64::max);
        if let (Some(t), Some(first)) = (s.ttfc_ms, recs.iter().find(|r| r.index == 0)) {
            rec.push("ttfc_ms", open + first.arrival_s, t);
        }
        rec.push("video_rtf", end, s.video_rtf);
        if let Some(v) = s.steady_video_rtf {
            rec.push("steady_video_rtf", end, v);
        }
        let steady = steady_records(recs, cfg.warmup_chunks);
        for r in &steady {
            let v = r.inter_arrival_s * 1000.0;
            rec.push("chunk_interval_ms", open + r.arrival_s, v);
            steady_n += 1;
            met += u64::from(v <= deadline);
        }
        if let Some(mean) = s.interval_steady.as_ref().map(|b| b.mean_ms) {
            rec.push("session_steady_interval_ms", end, mean);
        }
        for r in recs.iter().filter(|r| r.index != 0) {
            rec.push(
                "chunk_interval_all_ms",
                open + r.arrival_s,
                r.inter_arrival_s * 1000.0,
            );
        }
        rec.push("session_stall_ms", end, s.playback.total_stall_ms);
    }
    if steady_n > 0 {
        m.insert("slo_attainment".into(), met as f64 / steady_n as f64);
        m.insert("slo_met".into(), met as f64);
        m.insert("slo_violations".into(), (steady_n - met) as f64);
    }
    if !sessions.is_empty() {
        let sum = |f: &dyn Fn(&SessionMetrics) -> f64| sessions.iter().map(|(s, _, _)| f(s)).sum();
        m.insert(
            "underrun_count".into(),
            sum(&|s| s.playback.underrun_count as f64),
        );
        m.insert("stall_ms.total".into(), sum(&|s| s.playback.total_stall_ms));
        m.insert("chunks_received".into(), sum(&|s| s.chunks_received as f64));
        m.insert("total_frames".into(), sum(&|s| s.total_frames as f64));
        m.insert("video_seconds".into(), sum(&|s| s.video_seconds));
        let means = rec.values("session_steady_interval_ms");
        if let (Some(lo), Some(hi)) = (
            means.iter().copied().reduce(f64::min),
            means.iter().copied().reduce(f64::max),
        ) {
            m.insert("steady_interval_ms_spread".into(), hi - lo);
        }
    }
    (m, rec)
}

/// Steady records of one session (§5.3.1): indices ≥ warm-up, not the terminal chunk,
/// not index 0.
fn steady_records(records: &[ChunkRecord], warmup: u32) -> Vec<&ChunkRecord> {
    let last = records.iter().map(|r| r.index).max();
    records
        .iter()
        .filter(|r| r.index >= u64::from(warmup) && Some(r.index) != last && r.index != 0)
        .collect()
}

/// Scalar names in [`FAMILIES`] (the distributions publish `<name>.<stat>`).
const SCALARS: [&str; 13] = [
    "failed",
    "completed",
    "chunk_deadline_ms",
    "slo_attainment",
    "slo_met",
    "slo_violations",
    "underrun_count",
    "stall_ms.total",
    "chunks_received",
    "total_frames",
    "video_seconds",
    "steady_interval_ms_spread",
    CHUNK_THROUGHPUT,
];

/// The reference's aggregate keys (one session, several) and older rtload names, read as
/// the flat metric each stands for.
pub const ALIASES: &[(&str, &str)] = &[
    ("ttfc_ms", "ttfc_ms.mean"),
    ("ttfc_ms_mean", "ttfc_ms.mean"),
    ("ttfc_ms_max", "ttfc_ms.max"),
    ("video_rtf", "video_rtf.mean"),
    ("video_rtf_mean", "video_rtf.mean"),
    ("video_rtf_best", "video_rtf.min"),
    ("video_rtf_worst", "video_rtf.max"),
    ("video_rtf.steady", "steady_video_rtf.mean"),
    ("steady_video_rtf", "steady_video_rtf.mean"),
    ("steady_interval_ms_mean", "chunk_interval_ms.mean"),
    ("playback.underrun_count", "underrun_count"),
    ("playback.total_stall_ms", "stall_ms.total"),
    // One session's interval blocks (the pooled metrics over one session).
    ("interval_steady.count", "chunk_interval_ms.count"),
    ("interval_steady.mean_ms", "chunk_interval_ms.mean"),
    ("interval_steady.median_ms", "chunk_interval_ms.p50"),
    ("interval_steady.min_ms", "chunk_interval_ms.min"),
    ("interval_steady.p90_ms", "chunk_interval_ms.p90"),
    ("interval_steady.p95_ms", "chunk_interval_ms.p95"),
    ("interval_steady.p99_ms", "chunk_interval_ms.p99"),
    ("interval_steady.max_ms", "chunk_interval_ms.max"),
    ("interval_all.count", "chunk_interval_all_ms.count"),
    ("interval_all.mean_ms", "chunk_interval_all_ms.mean"),
    ("interval_all.median_ms", "chunk_interval_all_ms.p50"),
    ("interval_all.min_ms", "chunk_interval_all_ms.min"),
    ("interval_all.p90_ms", "chunk_interval_all_ms.p90"),
    ("interval_all.p95_ms", "chunk_interval_all_ms.p95"),
    ("interval_all.p99_ms", "chunk_interval_all_ms.p99"),
    ("interval_all.max_ms", "chunk_interval_all_ms.max"),
];

/// Every name a video report can produce.
pub fn all_names() -> Vec<String> {
    let dists: Vec<_> = FAMILIES.iter().filter(|f| f.is_dist()).cloned().collect();
    let mut names =
        crate::workload::catalogue::Catalogue::of(&dists, &STANDARD_PERCENTILES, &[]).names();
    names.extend(SCALARS.iter().map(|s| (*s).to_string()));
    names.sort();
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

use crate::workload::catalogue::{Catalogue, Direction::*, Family, Merge, chart};

/// What every video metric means. The longest covering prefix wins.
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
    .origin("measured sessions with metrics (the terminal chunk arrived)")
    .merged(Merge::Sum),
    Family::new(
        "ttfc_ms",
        "ms",
        Lower,
        "time to first chunk after the opening message",
    )
    .origin("session.start sent → first media chunk received, per session")
    .dist(),
    Family::new(
        "video_rtf",
        "ratio",
        Lower,
        "wall time / video time (below 1 keeps real time)",
    )
    .origin("session.start sent → terminal chunk received, over the video seconds received at the real-time fps, per session")
    .dist(),
    Family::new(
        "steady_video_rtf",
        "ratio",
        Lower,
        "video RTF over steady chunks",
    )
    .origin("first steady chunk → terminal chunk received, over their video seconds, per session")
    .dist(),
    Family::new(
        "chunk_interval_ms",
        "ms",
        Lower,
        "steady chunk inter-arrival, pooled over sessions",
    )
    .origin("a steady chunk's predecessor received → the chunk received (warm-up, first and terminal chunks excluded)")
    .dist(),
    Family::new(
        "chunk_interval_all_ms",
        "ms",
        Lower,
        "every chunk inter-arrival, pooled over sessions",
    )
    .origin("a chunk's predecessor received → the chunk received (every chunk after the first)")
    .dist(),
    Family::new(
        "session_steady_interval_ms",
        "ms",
        Lower,
        "mean steady inter-arrival of each session",
    )
    .origin("mean of one session's steady chunk inter-arrivals")
    .dist(),
    Family::new(
        "session_stall_ms",
        "ms",
        Lower,
        "time one session's simulated viewer stalled",
    )
    .origin("playback start (after the buffer chunks) → end of the last chunk's video, time spent waiting for a chunk, per session")
    .dist(),
    Family::new(
        "steady_interval_ms_spread",
        "ms",
        Lower,
        "max − min of per-session steady means",
    )
    .origin("largest minus smallest session_steady_interval_ms")
    .merged(Merge::Spread("session_steady_interval_ms")),
    Family::new(
        "slo_attainment",
        "ratio",
        Higher,
        "share of steady intervals within the chunk deadline",
    )
    .origin("steady intervals at or under chunk_deadline_ms ÷ steady intervals")
    .merged(Merge::Ratio(
        "slo_met",
        "chunk_interval_ms.count",
    )),
    Family::new(
        "slo_met",
        "intervals",
        Higher,
        "steady intervals within the chunk deadline",
    )
    .origin("steady intervals at or under chunk_deadline_ms")
    .merged(Merge::Sum),
    Family::new(
        "slo_violations",
        "intervals",
        Lower,
        "steady intervals past the chunk deadline",
    )
    .origin("steady intervals over chunk_deadline_ms")
    .merged(Merge::Sum),
    Family::new(
        "underrun_count",
        "underruns",
        Lower,
        "times a viewer's playback ran dry",
    )
    .origin("chunks that arrived after the simulated viewer needed them, summed over sessions")
    .merged(Merge::Sum),
    Family::new("stall_ms", "ms", Lower, "time a viewer's playback stalled")
        .origin("time the simulated viewers waited for chunks, summed over sessions")
        .merged(Merge::Sum),
    Family::new(
        CHUNK_THROUGHPUT,
        "chunks/s",
        Higher,
        "chunks received by completed sessions per second of run",
    )
    .origin("chunks received by completed sessions ÷ first measured release → last measured end")
    .merged(Merge::PerSecond("chunks_received")),
    Family::new("chunks_received", "chunks", NotAScore, "chunks received")
        .origin("media chunks received by completed sessions")
        .merged(Merge::Sum),
    Family::new("total_frames", "frames", NotAScore, "frames received")
        .origin("frames of the chunks received by completed sessions")
        .merged(Merge::Sum),
    Family::new("video_seconds", "s", NotAScore, "video time received")
        .origin("frames received by completed sessions ÷ the real-time fps")
        .merged(Merge::Sum),
    Family::new(
        "chunk_deadline_ms",
        "ms",
        NotAScore,
        "real-time chunk deadline (configuration)",
    )
    .origin("chunk_slo_ms, else 12 frames at the real-time fps")
    .merged(Merge::Same),
];

/// The summary-row metrics, in display order (the first is the sweep's featured curve).
pub const HEADLINE: &[&str] = &[
    "ttfc_ms.mean",
    "chunk_interval_ms.p99",
    "video_rtf.mean",
    "slo_attainment",
];

/// The series name of the chunk cadence rows in `rtload.session_series`.
pub const CADENCE_SERIES: &str = "chunk_cadence";

/// What a video result draws besides a plot of each distribution: each session's chunk
/// cadence and the session timeline, and the inter-arrival distributions against the
/// chunk deadline.
pub fn charts() -> Vec<chart::Chart> {
    let deadline = || {
        Some(chart::Reference {
            metric: "chunk_deadline_ms".into(),
            label: "deadline".into(),
        })
    };
    vec![
        chart::Chart {
            id: CADENCE_SERIES.into(),
            title: "Chunk cadence: inter-arrival time per chunk and session (chunk 0, whose value is the TTFC, is left out)".into(),
            draw: chart::Draw::SessionSeries {
                series: CADENCE_SERIES.into(),
                x: chart::Scale { label: "chunk index".into(), unit: String::new(), integer: true },
                y: chart::Scale { label: "inter-arrival".into(), unit: "ms".into(), integer: false },
                reference: deadline(),
                band: Some("warm-up".into()),
            },
        },
        chart::timeline("Session timeline: one row per measured session", &["session"], Vec::new()),
        chart::distribution("chunk_interval_ms", deadline()),
        chart::distribution("chunk_interval_all_ms", deadline()),
    ]
}

/// The catalogue of a video run.
pub fn catalogue() -> Catalogue {
    Catalogue::build(all_names(), FAMILIES, HEADLINE)
        .with_unit_rate(CHUNK_THROUGHPUT, "chunks/s")
        .with_aliases(ALIASES)
        .with_charts(charts())
}
