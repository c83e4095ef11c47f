//! Tests of `report`.

use super::*;
use crate::workload::video::metrics::{MetricsConfig, aggregate, compute_metrics};

fn records(gaps: &[f64]) -> Vec<ChunkRecord> {
    let mut t = 0.0;
    gaps.iter()
        .enumerate()
        .map(|(i, gap)| {
            t += gap;
            ChunkRecord {
                index: i as u64,
                arrival_s: t,
                inter_arrival_s: *gap,
                byte_length: 1000 + i as u64,
                num_frames: if i == 0 { 9 } else { 12 },
            }
        })
        .collect()
}

fn input(sessions: &[&[f64]], warmup: u32) -> ReportInput {
    let cfg = MetricsConfig {
        fps: 16.0,
        warmup_chunks: warmup,
        slo_ms: None,
        buffer_chunks: 1,
    };
    let reports: Vec<SessionReport> = sessions
        .iter()
        .enumerate()
        .map(|(i, g)| SessionReport {
            session_index: i,
            video_start_ms: Some(12.5),
            metrics: compute_metrics(&records(g), &cfg, Some(g[0]), None).unwrap(),
        })
        .collect();
    let metrics: Vec<SessionMetrics> = reports.iter().map(|r| r.metrics.clone()).collect();
    ReportInput {
        endpoint: "ws://127.0.0.1:8000/v1/realtime/video".into(),
        model: "robbyant/lingbot-world-v2-14b-causal-fast-diffusers".into(),
        num_chunks: 5,
        num_frames: 57,
        width: 832,
        height: 480,
        mux_fps: 16,
        target_fps: 16.0,
        warmup_sessions: 1,
        warmup_chunks: warmup,
        chunk_slo_ms: None,
        playback_buffer_chunks: 1,
        sessions: reports,
        failures: Vec::new(),
        aggregate: Some(aggregate(&metrics).unwrap()),
    }
}

#[test]
fn snapshot_single_session() {
    let expected = "\
================= rtload: LingBot-World realtime video cadence =================
Endpoint:         ws://127.0.0.1:8000/v1/realtime/video
Model:            robbyant/lingbot-world-v2-14b-causal-fast-diffusers
Workload:         5 chunks, 57 frames, 832x480
Frame rate:       mux label 16 fps; real-time basis 16 fps
Sessions:         1 measured, 1 warm-up
Warm-up chunks:   0 (excluded from steady state)
Chunk deadline:   750.0 ms (12 frames at 16 fps)
Playback buffer:  1 chunk(s)
----------------------------------- Sessions -----------------------------------
RTF = wall s / video s at 16 fps (lower is better; below 1 is real time)
  #   ttfc ms  start ms  all/stdy  steady ms     RTF stdy RTF  in SLO underruns
  0    1000.0      12.5       4/3     1000.0   1.263    1.333   66.7%         1
---------------------------- Aggregate (1 session) -----------------------------
Chunks received                                                        5
Warm-up chunks                                                         0
Steady chunks (intervals)                                              3
Steady state reached                                                 yes
Total frames                                                          57
Total bytes                                                         5010
Video seconds at 16 fps                                           3.5625
Wall seconds                                                       4.500
TTFC                                                           1000.0 ms
Video RTF at 16 fps (wall/video, lower is better)                  1.263
Video RTFx at 16 fps (video/wall)                                  0.792
Steady video RTF at 16 fps                                         1.333
Steady video RTFx at 16 fps                                        0.750
Frames per wall second                                             12.67
Chunk deadline                                                  750.0 ms
SLO attainment (steady chunks within deadline)                     66.7%
SLO violations                                                         1
------------------------- Inter-arrival intervals (ms) -------------------------
block     count    mean  median     std     min     p90     p95     p99     max
all           4   875.0   500.0   750.0   500.0  1550.0  1775.0  1955.0  2000.0
steady        3  1000.0   500.0   866.0   500.0  1700.0  1850.0  1970.0  2000.0
----------------------------- Playback simulation ------------------------------
Starts after 1 chunk(s) have arrived, then plays at 16 fps
  #  underruns   stall ms    span s  stall ratio  first underrun
  0          1      937.5     4.500       20.83%               3
------------------------------------ Notes -------------------------------------
Note: interval_all has fewer than 100 intervals; tail percentiles are descriptive, not reliable tail estimates.
Note: interval_steady has fewer than 100 intervals; tail percentiles are descriptive, not reliable tail estimates.
================================================================================
";
    let got = render_report(&input(&[&[1.0, 0.5, 0.5, 2.0, 0.5]], 0));
    assert_eq!(got, expected, "\n--- got ---\n{got}");
}

#[test]
fn multi_session_failures_and_unsteady_notes() {
    let mut multi = input(&[&[1.0, 0.5, 0.5, 2.0, 0.5], &[1.0; 5]], 6);
    multi.sessions[1].session_index = 2;
    multi.failures.push(SessionFailure {
        session_index: 1,
        message: "boom".into(),
    });
    let text = render_report(&multi);
    let lines: Vec<&str> = text.lines().collect();
    let failed = lines.iter().position(|l| *l == "  1 FAILED: boom").unwrap();
    assert!(lines[failed - 1].starts_with("  0 "));
    assert!(lines[failed + 1].starts_with("  2 "));
    assert!(text.contains("Sessions:         3 measured (1 failed), 1 warm-up\n"));
    assert!(text.contains("Aggregate (2 sessions)"));
    assert!(text.contains(&format!(
        "{:<52}{:>20}\n",
        "Steady interval mean (pooled)", "-"
    )));
    assert!(text.contains("Note: interval_all in session(s) 0, 2 has fewer than 100 intervals; tail percentiles are descriptive, not reliable tail estimates.\n"));
    assert!(!text.contains("Note: interval_steady"));
    assert!(text.contains("Note: steady state was not reached in session(s) 0, 2:"));
    assert!(text.contains("Use more than 7 chunks per session (warm-up chunks + 1).\n"));
    assert!(text.contains("#2 steady     0       -       -"));
}

#[test]
fn no_aggregate_and_explicit_slo() {
    let mut none = input(&[&[1.0, 0.5]], 6);
    none.sessions.clear();
    none.aggregate = None;
    none.chunk_slo_ms = Some(900.0);
    none.target_fps = 12.5;
    let text = render_report(&none);
    assert!(text.contains("Chunk deadline:   900.0 ms (explicit chunk SLO)\n"));
    assert!(text.contains("real-time basis 12.5 fps\n"));
    assert!(text.contains("No measured session completed"));
    assert!(!text.contains("Note:"));
}

#[test]
fn chunk_line() {
    assert_eq!(
        render_chunk_line(0, &records(&[1.0, 0.5])[1]),
        "  session  0  chunk   1  t=   1.500s  interval=   500.0ms  frames= 12  bytes=1001"
    );
}

#[test]
fn fps_labels() {
    assert_eq!(fmt_fps(16.0), "16");
    assert_eq!(fmt_fps(12.5), "12.5");
    assert_eq!(fmt_fps(23.976), "23.976");
}

#[test]
fn chunk_throughput_counts_completed_chunks_per_second_of_run() {
    use crate::workload::video::names::{CHUNK_THROUGHPUT, all_names, catalogue, chunk_throughput};
    // Two completed sessions of 24 chunks each over a 4 s run: 12 chunks/s.
    assert_eq!(chunk_throughput(2, 48, 4.0), Some(12.0));
    // No completed session, or no run time: missing, never zero.
    assert_eq!(chunk_throughput(0, 0, 4.0), None);
    assert_eq!(chunk_throughput(2, 48, 0.0), None);
    assert!(all_names().contains(&CHUNK_THROUGHPUT.to_string()));
    let cat = catalogue();
    let unit = cat.unit_rate().expect("video declares a unit rate");
    assert_eq!(
        (unit.metric.as_str(), unit.unit.as_str()),
        (CHUNK_THROUGHPUT, "chunks/s")
    );
    assert_eq!(
        cat.get(CHUNK_THROUGHPUT).map(|m| m.unit.as_str()),
        Some("chunks/s")
    );
}
