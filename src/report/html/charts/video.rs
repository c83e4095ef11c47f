//! Video result charts: chunk cadence per session and the session timeline from
//! `rtload.samples[]`; the steady-interval and TTFC distributions for the percentile plots.

use std::fmt::Write as _;

use serde_json::Value;

use super::super::svg::{Axis, Plot, RowAxis, fmt_num};
use super::dist::Dist;
use super::{arr, f, figure, legend, num};

/// The chunk deadline (ms) and warm-up chunk count of a video result.
fn deadline_and_warmup(doc: &Value) -> (Option<f64>, f64) {
    let metrics = doc.get("metrics").unwrap_or(&Value::Null);
    let config = doc.get("config").unwrap_or(&Value::Null);
    let first_session_metrics = arr(doc, "sessions")
        .first()
        .and_then(|s| s.get("metrics"))
        .unwrap_or(&Value::Null);
    let deadline = num(metrics, "chunk_deadline_ms")
        .or_else(|| num(first_session_metrics, "chunk_deadline_ms"))
        .or_else(|| num(config, "chunk_slo_ms"));
    let warmup = num(config, "warmup_chunks")
        .or_else(|| num(metrics, "warmup_chunks"))
        .unwrap_or(0.0);
    (deadline, warmup)
}

/// Video result: chunk cadence and the session timeline (its distributions come from
/// `distributions`).
pub fn video(doc: &Value) -> String {
    let (deadline, warmup) = deadline_and_warmup(doc);
    let mut out = cadence(arr(doc, "sessions"), deadline, warmup);
    out.push_str(&sample_timeline(doc));
    out
}

/// A video result's distributions: steady inter-arrival intervals (with the chunk
/// deadline as reference) and TTFC per session.
pub fn distributions(doc: &Value) -> Vec<Dist> {
    let sessions = arr(doc, "sessions");
    let (deadline, warmup) = deadline_and_warmup(doc);
    let steady: Vec<f64> = sessions
        .iter()
        .flat_map(|s| steady_intervals(s, warmup))
        .collect();
    let ttfc: Vec<f64> = sessions.iter().map(ttfc_ms).collect();
    vec![
        Dist {
            what: "steady inter-arrival interval".into(),
            reference: deadline.map(|d| (d, "deadline".to_string())),
            ..Dist::from_values("steady_interval_ms", &steady)
        },
        Dist {
            what: "time to first chunk (TTFC)".into(),
            ..Dist::from_values("ttfc_ms", &ttfc)
        },
    ]
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
