//! Video result charts: chunk cadence per session, steady-interval and TTFC histograms,
//! and the session timeline from `rtload.samples[]`.

use std::fmt::Write as _;

use serde_json::Value;

use super::super::svg::{Axis, Plot, RowAxis, fmt_num};
use super::{arr, f, figure, histogram_figure, legend, num};

/// Video result: chunk cadence, steady-interval and TTFC histograms, session timeline.
pub fn video(doc: &Value) -> String {
    let sessions = arr(doc, "sessions");
    let metrics = doc.get("metrics").unwrap_or(&Value::Null);
    let config = doc.get("config").unwrap_or(&Value::Null);
    let first_session_metrics = sessions
        .first()
        .and_then(|s| s.get("metrics"))
        .unwrap_or(&Value::Null);
    let deadline = num(metrics, "chunk_deadline_ms")
        .or_else(|| num(first_session_metrics, "chunk_deadline_ms"))
        .or_else(|| num(config, "chunk_slo_ms"));
    let warmup = num(config, "warmup_chunks")
        .or_else(|| num(metrics, "warmup_chunks"))
        .unwrap_or(0.0);
    let mut out = cadence(sessions, deadline, warmup);
    let steady: Vec<f64> = sessions
        .iter()
        .flat_map(|s| steady_intervals(s, warmup))
        .collect();
    out.push_str(&histogram_figure(
        "steady-intervals",
        &steady,
        "Steady inter-arrival interval",
        "ms",
        0,
        deadline.map(|d| (d, "deadline")),
    ));
    let ttfc: Vec<f64> = sessions.iter().map(ttfc_ms).collect();
    out.push_str(&histogram_figure(
        "ttfc",
        &ttfc,
        "Time to first chunk (TTFC)",
        "ms",
        1,
        None,
    ));
    out.push_str(&sample_timeline(doc));
    out
}

/// (index, inter-arrival ms) per chunk of `session`, sorted by index; missing → NaN.
fn chunk_points(session: &Value) -> Vec<(f64, f64)> {
    let mut pts: Vec<(f64, f64)> = arr(session, "chunks")
        .iter()
        .filter_map(|c| Some((num(c, "index")?, f(c, "inter_arrival_ms"))))
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    pts
}

/// Steady intervals of one session, by the metrics rule: index ≥ warm-up, index > 0, and
/// not the terminal chunk.
fn steady_intervals(session: &Value, warmup: f64) -> Vec<f64> {
    let pts = chunk_points(session);
    let last = pts.len().saturating_sub(1);
    pts[..last]
        .iter()
        .filter(|(i, v)| *i >= warmup && *i > 0.0 && v.is_finite())
        .map(|(_, v)| *v)
        .collect()
}

/// TTFC of one session: `metrics.ttfc_ms`, else chunk 0's inter-arrival (which is TTFC).
fn ttfc_ms(session: &Value) -> f64 {
    session
        .get("metrics")
        .and_then(|m| num(m, "ttfc_ms"))
        .or_else(|| {
            chunk_points(session)
                .iter()
                .find(|(i, _)| *i == 0.0)
                .map(|p| p.1)
        })
        .unwrap_or(f64::NAN)
}

fn session_name(s: &Value, i: usize) -> String {
    format!(
        "session {}",
        num(s, "session_index").map_or(i as f64, |v| v)
    )
}

fn cadence(sessions: &[Value], deadline: Option<f64>, warmup: f64) -> String {
    let series: Vec<(String, Vec<(f64, f64)>)> = sessions
        .iter()
        .enumerate()
        .map(|(i, s)| {
            (
                session_name(s, i),
                chunk_points(s).into_iter().filter(|p| p.0 >= 1.0).collect(),
            )
        })
        .collect();
    let finite = || {
        series
            .iter()
            .flat_map(|(_, p)| p.iter())
            .filter(|p| p.1.is_finite())
    };
    let mut caption = String::from(
        "Chunk cadence: inter-arrival time per chunk and session (chunk 0, whose value is the TTFC, is omitted)",
    );
    if let Some(d) = deadline {
        let _ = write!(
            caption,
            "; dashed line: chunk deadline {} ms",
            fmt_num(d, 1)
        );
    }
    if warmup > 0.0 {
        let _ = write!(
            caption,
            "; shaded: warm-up chunks (index < {}), excluded from steady state",
            fmt_num(warmup, 0)
        );
    }
    let svg = (finite().count() > 0).then_some(()).and_then(|()| {
        let x = Axis::fit("chunk index", finite().map(|p| p.0).chain([1.0]), true)?;
        let y = Axis::fit(
            "inter-arrival (ms)",
            finite().map(|p| p.1).chain([0.0]).chain(deadline),
            false,
        )?;
        let mut p = Plot::linear("cadence", "chunk cadence", x, y);
        if warmup > 1.0 {
            p.band(f64::NEG_INFINITY, warmup - 0.5, "warm-up");
        }
        if let Some(d) = deadline {
            p.hline(d, "deadline");
        }
        for (i, (name, pts)) in series.iter().enumerate() {
            p.line(pts, i, name);
        }
        Some(p.finish())
    });
    let items: Vec<(String, String)> = series
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (format!("s{}", i % 8), n.clone()))
        .collect();
    figure(svg, &caption, &legend(&items))
}

/// Video session timeline from `rtload.samples[]`: queue wait, then the session span.
fn sample_timeline(doc: &Value) -> String {
    let samples = doc.get("rtload").map_or(&[][..], |r| arr(r, "samples"));
    let caption = "Session timeline: one row per measured sample; grey = queue wait (scheduled → started), blue = session (started → ended), red = failed session (hover for the error)";
    let times = samples
        .iter()
        .flat_map(|s| [f(s, "scheduled_s"), f(s, "started_s"), f(s, "ended_s")]);
    let svg = Axis::fit("run time (s)", times, false).map(|x| {
        let labels = samples
            .iter()
            .enumerate()
            .map(|(i, s)| session_name(s, i))
            .collect();
        let rows = RowAxis {
            labels,
            title: String::new(),
        };
        let mut p = Plot::rows("session-timeline", "session timeline", x, rows, 22.0);
        for (row, s) in samples.iter().enumerate() {
            let name = session_name(s, row);
            let (sch, st, end) = (f(s, "scheduled_s"), f(s, "started_s"), f(s, "ended_s"));
            let error = s
                .get("error")
                .and_then(Value::as_str)
                .filter(|e| !e.is_empty());
            let wait = num(s, "queue_wait_ms").unwrap_or((st - sch) * 1000.0);
            p.span(
                row,
                0,
                1,
                sch,
                st,
                "queue",
                &format!("{name}: queue wait {} ms", fmt_num(wait, 3)),
            );
            let (class, tip) = match error {
                Some(e) => (
                    "failed",
                    format!("{name} failed after {} s: {e}", fmt_num(end - st, 3)),
                ),
                None => (
                    "session",
                    format!(
                        "{name}: {} s → {} s ({} s)",
                        fmt_num(st, 3),
                        fmt_num(end, 3),
                        fmt_num(end - st, 3)
                    ),
                ),
            };
            let end = if end.is_finite() { end } else { st };
            p.span(row, 0, 1, st, end, class, &tip);
        }
        p.finish()
    });
    let items = [
        ("queue", "queue wait"),
        ("session", "session"),
        ("failed", "failed"),
    ]
    .map(|(c, l)| (c.to_string(), l.to_string()));
    figure(
        svg.filter(|_| !samples.is_empty()),
        caption,
        &legend(&items),
    )
}
