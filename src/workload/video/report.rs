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
#[path = "report_tests.rs"]
mod tests;
