//! The human terminal report for the LingBot-World video workload, and the
//! `--print-chunks` line format.
//!
//! Plain text, fixed-width columns, no colour, no IO: values in, a `String` out. Every
//! real-time factor is printed next to the frame-rate basis it was computed against.

use super::metrics::{
    AggregateMetrics, ChunkRecord, IntervalSummary, MultiSessionMetrics, SessionMetrics,
    chunk_deadline_ms,
};

/// Width of the report's rule lines.
const WIDTH: usize = 80;
/// Interval blocks smaller than this get the tail-percentile warning.
const RELIABLE_TAIL_COUNT: f64 = 100.0;

/// Everything the report shows, as plain data.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportInput {
    /// The resolved WebSocket URL.
    pub endpoint: String,
    /// Model name sent in `session.start`.
    pub model: String,
    /// Chunks requested per session.
    pub num_chunks: u64,
    /// `num_frames` requested per session.
    pub num_frames: u64,
    /// Frame width.
    pub width: u32,
    /// Frame height.
    pub height: u32,
    /// Integer fps label sent to the server (mux label).
    pub mux_fps: u32,
    /// Real-time basis for RTF, the deadline and playback.
    pub target_fps: f64,
    /// Unmeasured sessions run first.
    pub warmup_sessions: u32,
    /// Chunks excluded from steady state.
    pub warmup_chunks: u32,
    /// Explicit chunk SLO, if configured (else 12 frames at `target_fps`).
    pub chunk_slo_ms: Option<f64>,
    /// Chunks buffered before simulated playback starts.
    pub playback_buffer_chunks: u32,
    /// Measured sessions that completed, in run order.
    pub sessions: Vec<SessionReport>,
    /// Measured sessions that failed (their numbers are not in the aggregate).
    pub failures: Vec<SessionFailure>,
    /// Aggregate of `sessions` (`None` when no session completed).
    pub aggregate: Option<AggregateMetrics>,
}

/// One completed measured session.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionReport {
    /// Measured-session index (0-based).
    pub session_index: usize,
    /// Milliseconds from `session.start` to `video.start`, if it came.
    pub video_start_ms: Option<f64>,
    /// The session's metrics.
    pub metrics: SessionMetrics,
}

/// One failed measured session.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionFailure {
    /// Measured-session index (0-based).
    pub session_index: usize,
    /// Why it failed.
    pub message: String,
}

/// Render the full terminal report (ends with a newline).
pub fn render_report(input: &ReportInput) -> String {
    let mut out = Vec::new();
    let fps = fmt_fps(input.target_fps);
    header(input, &fps, &mut out);
    sessions_table(input, &fps, &mut out);
    match &input.aggregate {
        Some(AggregateMetrics::Single { metrics, .. }) => single_block(metrics, &fps, &mut out),
        Some(AggregateMetrics::Multi(m)) => multi_block(m, &fps, &mut out),
        None => {
            out.push(rule(" Aggregate ", '-'));
            out.push("No measured session completed; there are no aggregate metrics.".into());
        }
    }
    interval_block(input, &mut out);
    playback_block(input, &fps, &mut out);
    notes(input, &mut out);
    out.push("=".repeat(WIDTH));
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// One `--print-chunks` line for a received media chunk.
pub fn render_chunk_line(session_index: usize, r: &ChunkRecord) -> String {
    format!(
        "  session {session_index:>2}  chunk {:>3}  t={:>8.3}s  interval={:>8.1}ms  frames={:>3}  bytes={}",
        r.index,
        r.arrival_s,
        r.inter_arrival_s * 1000.0,
        r.num_frames,
        r.byte_length
    )
}

fn header(input: &ReportInput, fps: &str, out: &mut Vec<String>) {
    let deadline = chunk_deadline_ms(input.target_fps, input.chunk_slo_ms);
    let deadline_basis = match input.chunk_slo_ms {
        Some(_) => "explicit chunk SLO".to_string(),
        None => format!("12 frames at {fps} fps"),
    };
    let measured = input.sessions.len() + input.failures.len();
    let failed = match input.failures.len() {
        0 => String::new(),
        n => format!(" ({n} failed)"),
    };
    out.push(rule(" rtload: LingBot-World realtime video cadence ", '='));
    let rows = [
        ("Endpoint:", input.endpoint.clone()),
        ("Model:", input.model.clone()),
        (
            "Workload:",
            format!(
                "{} chunks, {} frames, {}x{}",
                input.num_chunks, input.num_frames, input.width, input.height
            ),
        ),
        (
            "Frame rate:",
            format!("mux label {} fps; real-time basis {fps} fps", input.mux_fps),
        ),
        (
            "Sessions:",
            format!(
                "{measured} measured{failed}, {} warm-up",
                input.warmup_sessions
            ),
        ),
        (
            "Warm-up chunks:",
            format!("{} (excluded from steady state)", input.warmup_chunks),
        ),
        (
            "Chunk deadline:",
            format!("{deadline:.1} ms ({deadline_basis})"),
        ),
        (
            "Playback buffer:",
            format!("{} chunk(s)", input.playback_buffer_chunks),
        ),
    ];
    for (label, value) in rows {
        out.push(format!("{label:<18}{value}"));
    }
}

fn sessions_table(input: &ReportInput, fps: &str, out: &mut Vec<String>) {
    out.push(rule(" Sessions ", '-'));
    out.push(format!(
        "RTF = wall s / video s at {fps} fps (lower is better; below 1 is real time)"
    ));
    out.push(format!(
        "{:>3} {:>9} {:>9} {:>9} {:>10} {:>7} {:>8} {:>7} {:>9}",
        "#",
        "ttfc ms",
        "start ms",
        "all/stdy",
        "steady ms",
        "RTF",
        "stdy RTF",
        "in SLO",
        "underruns"
    ));
    let mut rows: Vec<(usize, String)> = Vec::new();
    for s in &input.sessions {
        let m = &s.metrics;
        let counts = format!(
            "{}/{}",
            m.interval_all.as_ref().map_or(0.0, |b| b.count),
            m.steady_chunks
        );
        rows.push((
            s.session_index,
            format!(
                "{:>3} {:>9} {:>9} {:>9} {:>10} {:>7.3} {:>8} {:>7} {:>9}",
                s.session_index,
                opt(m.ttfc_ms, |v| format!("{v:.1}")),
                opt(s.video_start_ms, |v| format!("{v:.1}")),
                counts,
                opt(m.interval_steady.as_ref().map(|b| b.mean_ms), |v| format!(
                    "{v:.1}"
                )),
                m.video_rtf,
                opt(m.steady_video_rtf, |v| format!("{v:.3}")),
                opt(m.slo_attainment, |v| format!("{:.1}%", v * 100.0)),
                m.playback.underrun_count,
            ),
        ));
    }
    for f in &input.failures {
        rows.push((
            f.session_index,
            format!("{:>3} FAILED: {}", f.session_index, f.message),
        ));
    }
    rows.sort_by_key(|(i, _)| *i);
    out.extend(rows.into_iter().map(|(_, line)| line));
}

fn single_block(m: &SessionMetrics, fps: &str, out: &mut Vec<String>) {
    out.push(rule(" Aggregate (1 session) ", '-'));
    let rows = [
        ("Chunks received".to_string(), m.chunks_received.to_string()),
        ("Warm-up chunks".into(), m.warmup_chunks.to_string()),
        (
            "Steady chunks (intervals)".into(),
            m.steady_chunks.to_string(),
        ),
        (
            "Steady state reached".into(),
            if m.steady_state_reached { "yes" } else { "no" }.into(),
        ),
        ("Total frames".into(), m.total_frames.to_string()),
        ("Total bytes".into(), m.total_bytes.to_string()),
        (
            format!("Video seconds at {fps} fps"),
            format!("{:.4}", m.video_seconds),
        ),
        ("Wall seconds".into(), format!("{:.3}", m.wall_seconds)),
        ("TTFC".into(), opt(m.ttfc_ms, |v| format!("{v:.1} ms"))),
        (
            format!("Video RTF at {fps} fps (wall/video, lower is better)"),
            format!("{:.3}", m.video_rtf),
        ),
        (
            format!("Video RTFx at {fps} fps (video/wall)"),
            format!("{:.3}", m.video_rtfx),
        ),
        (
            format!("Steady video RTF at {fps} fps"),
            opt(m.steady_video_rtf, |v| format!("{v:.3}")),
        ),
        (
            format!("Steady video RTFx at {fps} fps"),
            opt(m.steady_video_rtfx, |v| format!("{v:.3}")),
        ),
        (
            "Frames per wall second".into(),
            format!("{:.2}", m.frames_per_second),
        ),
        (
            "Chunk deadline".into(),
            format!("{:.1} ms", m.chunk_deadline_ms),
        ),
        (
            "SLO attainment (steady chunks within deadline)".into(),
            opt(m.slo_attainment, |v| format!("{:.1}%", v * 100.0)),
        ),
        (
            "SLO violations".into(),
            opt(m.slo_violations, |v| v.to_string()),
        ),
    ];
    out.extend(rows.iter().map(|(l, v)| row(l, v)));
}

fn multi_block(m: &MultiSessionMetrics, fps: &str, out: &mut Vec<String>) {
    out.push(rule(&format!(" Aggregate ({} sessions) ", m.sessions), '-'));
    let rows = [
        ("Sessions".to_string(), m.sessions.to_string()),
        (
            "Chunks received (sum)".into(),
            m.chunks_received.to_string(),
        ),
        ("Total frames (sum)".into(), m.total_frames.to_string()),
        (
            format!("Video seconds at {fps} fps (sum)"),
            format!("{:.4}", m.video_seconds),
        ),
        (
            "Wall seconds (sum)".into(),
            format!("{:.3}", m.wall_seconds),
        ),
        (
            format!("Video RTF at {fps} fps mean (lower is better)"),
            format!("{:.3}", m.video_rtf_mean),
        ),
        (
            format!("Video RTF at {fps} fps best / worst"),
            format!("{:.3} / {:.3}", m.video_rtf_best, m.video_rtf_worst),
        ),
        (
            "TTFC mean".into(),
            opt(m.ttfc_ms_mean, |v| format!("{v:.1} ms")),
        ),
        (
            "TTFC max".into(),
            opt(m.ttfc_ms_max, |v| format!("{v:.1} ms")),
        ),
        (
            "Steady interval mean (pooled)".into(),
            opt(m.steady_interval_ms_mean, |v| format!("{v:.1} ms")),
        ),
        (
            "Steady interval spread (max - min of means)".into(),
            opt(m.steady_interval_ms_spread, |v| format!("{v:.1} ms")),
        ),
        ("Underruns (sum)".into(), m.underrun_count.to_string()),
        (
            "Chunk deadline".into(),
            format!("{:.1} ms", m.chunk_deadline_ms),
        ),
    ];
    out.extend(rows.iter().map(|(l, v)| row(l, v)));
}

fn interval_block(input: &ReportInput, out: &mut Vec<String>) {
    out.push(rule(" Inter-arrival intervals (ms) ", '-'));
    out.push(format!(
        "{:<10}{:>5}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}",
        "block", "count", "mean", "median", "std", "min", "p90", "p95", "p99", "max"
    ));
    let multi = input.sessions.len() > 1;
    for s in &input.sessions {
        let blocks = [
            ("all", &s.metrics.interval_all),
            ("steady", &s.metrics.interval_steady),
        ];
        for (name, block) in blocks {
            let label = if multi {
                format!("#{} {name}", s.session_index)
            } else {
                name.to_string()
            };
            out.push(interval_row(&label, block.as_ref()));
        }
    }
}

fn interval_row(label: &str, b: Option<&IntervalSummary>) -> String {
    let Some(b) = b else {
        let dashes = format!("{:>8}", "-").repeat(8);
        return format!("{label:<10}{:>5}{dashes}", 0);
    };
    let stats = [
        b.mean_ms,
        b.median_ms,
        b.std_ms,
        b.min_ms,
        b.p90_ms,
        b.p95_ms,
        b.p99_ms,
        b.max_ms,
    ];
    let cells: String = stats.iter().map(|v| format!("{v:>8.1}")).collect();
    format!("{label:<10}{:>5}{cells}", b.count)
}

fn playback_block(input: &ReportInput, fps: &str, out: &mut Vec<String>) {
    out.push(rule(" Playback simulation ", '-'));
    out.push(format!(
        "Starts after {} chunk(s) have arrived, then plays at {fps} fps",
        input.playback_buffer_chunks
    ));
    out.push(format!(
        "{:>3} {:>10} {:>10} {:>9} {:>12} {:>15}",
        "#", "underruns", "stall ms", "span s", "stall ratio", "first underrun"
    ));
    for s in &input.sessions {
        let p = &s.metrics.playback;
        out.push(format!(
            "{:>3} {:>10} {:>10.1} {:>9.3} {:>12} {:>15}",
            s.session_index,
            p.underrun_count,
            p.total_stall_ms,
            p.playback_span_s,
            format!("{:.2}%", p.stall_ratio * 100.0),
            opt(p.first_underrun_chunk, |v| v.to_string()),
        ));
    }
}

fn notes(input: &ReportInput, out: &mut Vec<String>) {
    let multi = input.sessions.len() > 1;
    let mut lines = Vec::new();
    for name in ["interval_all", "interval_steady"] {
        let small: Vec<String> = input
            .sessions
            .iter()
            .filter(|s| {
                let block = match name {
                    "interval_all" => &s.metrics.interval_all,
                    _ => &s.metrics.interval_steady,
                };
                block
                    .as_ref()
                    .is_some_and(|b| b.count < RELIABLE_TAIL_COUNT)
            })
            .map(|s| s.session_index.to_string())
            .collect();
        if small.is_empty() {
            continue;
        }
        let scope = if multi {
            format!(" in session(s) {}", small.join(", "))
        } else {
            String::new()
        };
        lines.push(format!(
            "Note: {name}{scope} has fewer than 100 intervals; tail percentiles are descriptive, not reliable tail estimates."
        ));
    }
    let unsteady: Vec<String> = input
        .sessions
        .iter()
        .filter(|s| !s.metrics.steady_state_reached)
        .map(|s| s.session_index.to_string())
        .collect();
    if !unsteady.is_empty() {
        let scope = if multi {
            format!(" in session(s) {}", unsteady.join(", "))
        } else {
            String::new()
        };
        let first_steady = input.warmup_chunks.max(1);
        lines.push(format!(
            "Note: steady state was not reached{scope}: no chunk at index >= {first_steady} arrived before the terminal chunk, so steady RTF and SLO attainment are absent. Use more than {} chunks per session (warm-up chunks + 1).",
            u64::from(first_steady) + 1
        ));
    }
    if !lines.is_empty() {
        out.push(rule(" Notes ", '-'));
        out.extend(lines);
    }
}

fn rule(title: &str, fill: char) -> String {
    let n = title.chars().count();
    let left = WIDTH.saturating_sub(n) / 2;
    let right = WIDTH.saturating_sub(n + left);
    format!(
        "{}{title}{}",
        fill.to_string().repeat(left),
        fill.to_string().repeat(right)
    )
}

fn row(label: &str, value: &str) -> String {
    format!("{label:<52}{value:>20}")
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map_or_else(|| "-".to_string(), f)
}

/// Frame rate as Python's `{:g}` would print a typical value: `16`, `12.5`, `23.976`.
fn fmt_fps(fps: f64) -> String {
    if fps.fract() == 0.0 && fps.abs() < 1e15 {
        format!("{fps:.0}")
    } else {
        let s = format!("{fps:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
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
}
