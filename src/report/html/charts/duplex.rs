//! Duplex result charts: the per-session timeline from `rtload.timeline[]` (its
//! `rtload.distributions` are drawn like any result's, see [`super::dist`]).

use serde_json::Value;

use super::super::svg::{Axis, Plot, RowAxis, fmt_num};
use super::{arr, f, figure, legend};

/// Duplex result: the per-session timeline from `rtload.timeline`.
pub fn duplex(doc: &Value) -> String {
    let rt = doc.get("rtload").unwrap_or(&Value::Null);
    duplex_timeline(arr(rt, "timeline"))
}

/// Lane of a duplex span kind: 0 session extent, 1 input, 2 response + playback, 3 audio.
fn lane(kind: &str) -> (usize, &'static str) {
    match kind {
        "input" => (1, "k-input"),
        "response" => (2, "k-response"),
        "playback" => (2, "k-playback"),
        "audio" => (3, "k-audio"),
        _ => (3, "k-other"),
    }
}

fn duplex_timeline(rows: &[Value]) -> String {
    let caption = "Session timeline: one row per sample; top lane: whole session (red if it failed, hover for the error); then input streaming; then each response from created to first audio (orange) and on to playback end (light green); bottom lane: audio received (green)";
    let times = rows.iter().flat_map(|r| {
        let spans = arr(r, "spans")
            .iter()
            .flat_map(|s| [f(s, "start_s"), f(s, "end_s")]);
        [f(r, "start_s"), f(r, "end_s")]
            .into_iter()
            .chain(spans)
            .collect::<Vec<_>>()
    });
    let svg = Axis::fit("run time (s)", times, false).map(|x| {
        let labels = rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                r.get("label")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("sample {i}"), str::to_string)
            })
            .collect();
        let mut p = Plot::rows(
            "duplex-timeline",
            "duplex session timeline",
            x,
            RowAxis {
                labels,
                title: String::new(),
            },
            34.0,
        );
        for (row, r) in rows.iter().enumerate() {
            let (st, end) = (f(r, "start_s"), f(r, "end_s"));
            let (class, tip) = match r
                .get("error")
                .and_then(Value::as_str)
                .filter(|e| !e.is_empty())
            {
                Some(e) => ("failed", format!("failed: {e}")),
                None => (
                    "extent",
                    format!("session {} s → {} s", fmt_num(st, 3), fmt_num(end, 3)),
                ),
            };
            p.span(row, 0, 4, st, end, class, &tip);
            let mut spans: Vec<&Value> = arr(r, "spans").iter().collect();
            // Playback under response so the shorter response span stays visible.
            spans.sort_by_key(|s| s.get("kind").and_then(Value::as_str) != Some("playback"));
            for s in spans {
                let kind = s.get("kind").and_then(Value::as_str).unwrap_or("other");
                let label = s.get("label").and_then(Value::as_str).unwrap_or(kind);
                let (a, b) = (f(s, "start_s"), f(s, "end_s"));
                let (lane, class) = lane(kind);
                let tip = format!(
                    "{kind} {label}: {} s → {} s ({} ms)",
                    fmt_num(a, 3),
                    fmt_num(b, 3),
                    fmt_num((b - a) * 1000.0, 1)
                );
                p.span(row, lane, 4, a, b, class, &tip);
            }
        }
        p.finish()
    });
    let items = [
        ("extent", "session"),
        ("failed", "failed"),
        ("k-input", "input"),
        ("k-response", "created → first audio"),
        ("k-playback", "playback"),
        ("k-audio", "audio received"),
    ]
    .map(|(c, l)| (c.to_string(), l.to_string()));
    figure(svg.filter(|_| !rows.is_empty()), caption, &legend(&items))
}
