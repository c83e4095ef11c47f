//! The session timeline: one row per `rtload.timeline` row (`{session, label, start_s,
//! end_s, error, spans: [{kind, label, start_s, end_s}]}`), sorted by session number.
//! Each row's extent fills lane 0 (red when the session failed); each span sits on the
//! lane its kind declares, coloured by the kind's position in the declaration (a kind the
//! chart does not declare goes on the last lane as "other").

use std::fmt::Write as _;

use serde_json::Value;

use super::super::svg::{Axis, Plot, RowAxis, fmt_num};
use super::{arr, f, figure, legend, num};
use crate::workload::catalogue::chart::{Chart, SpanKind};

/// One row as read (lenient: what is malformed is left out).
struct Row {
    name: String,
    start: f64,
    end: f64,
    error: Option<String>,
    spans: Vec<(String, String, f64, f64)>,
}

fn read(rows: &[Value]) -> Vec<Row> {
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let mut out: Vec<(f64, Row)> = rows
        .iter()
        .filter(|r| r.is_object())
        .enumerate()
        .map(|(i, r)| {
            let n = num(r, "session");
            let name = match (n, s(r, "label")) {
                (Some(n), Some(l)) => format!("session {n} ({l})"),
                (Some(n), None) => format!("session {n}"),
                (None, Some(l)) => l,
                (None, None) => format!("row {i}"),
            };
            let spans = arr(r, "spans")
                .iter()
                .map(|sp| {
                    let kind = s(sp, "kind").unwrap_or_else(|| "other".into());
                    let label = s(sp, "label").unwrap_or_else(|| kind.clone());
                    (kind, label, f(sp, "start_s"), f(sp, "end_s"))
                })
                .collect();
            let row = Row {
                name,
                start: f(r, "start_s"),
                end: f(r, "end_s"),
                error: s(r, "error").filter(|e| !e.is_empty()),
                spans,
            };
            (n.unwrap_or(f64::INFINITY), row)
        })
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out.into_iter().map(|(_, r)| r).collect()
}

/// The row label on the chart: the session number alone (the full name on hover).
fn short(name: &str) -> String {
    name.split(" (").next().unwrap_or(name).to_string()
}

/// The figure of timeline chart `chart` (its `lanes` and span `kinds`) over `rows` (the
/// result's `rtload.timeline`).
pub fn figure_of(chart: &Chart, lanes: &[String], kinds: &[SpanKind], rows: &[Value]) -> String {
    let rows = read(rows);
    let n_lanes = lanes.len().max(1);
    let mut caption = format!(
        "{}; lane 1: the session, connect → end (red: it failed; the errors table has each message)",
        chart.title
    );
    for (i, l) in lanes.iter().enumerate().skip(1) {
        let _ = write!(caption, "; lane {}: {l}", i + 1);
    }
    caption.push_str("; hover a span for its times");
    let times = rows.iter().flat_map(|r| {
        let spans = r.spans.iter().flat_map(|s| [s.2, s.3]);
        [r.start, r.end]
            .into_iter()
            .chain(spans)
            .collect::<Vec<_>>()
    });
    let mut other = false;
    let svg = Axis::fit("run time (s)", times, false)
        .filter(|_| !rows.is_empty())
        .map(|x| {
            let labels = rows.iter().map(|r| short(&r.name)).collect();
            let row_px = (12.0 + 10.0 * n_lanes as f64).max(22.0);
            let axis = RowAxis {
                labels,
                title: String::new(),
            };
            let mut p = Plot::rows(&chart.id, &chart.title, x, axis, row_px);
            for (i, r) in rows.iter().enumerate() {
                draw_row(&mut p, i, r, (n_lanes, kinds), &mut other);
            }
            p.finish()
        });
    let mut items: Vec<(String, String)> = vec![
        ("extent".into(), "session".into()),
        ("failed".into(), "failed session".into()),
    ];
    items.extend(
        kinds
            .iter()
            .enumerate()
            .map(|(i, k)| (format!("k{}", i % 8), k.label.clone())),
    );
    if other {
        items.push((
            "kx".into(),
            "other (a span kind the chart does not declare)".into(),
        ));
    }
    figure(svg, &caption, &legend(&items))
}

/// Row `i`: its extent on lane 0, then its spans in the declared kinds' order (later
/// kinds on top), undeclared kinds last on the last lane.
fn draw_row(
    p: &mut Plot,
    i: usize,
    r: &Row,
    (lanes, kinds): (usize, &[SpanKind]),
    other: &mut bool,
) {
    let secs = |a: f64, b: f64| fmt_num(b - a, 3);
    let (class, tip) = match &r.error {
        Some(e) => (
            "failed",
            format!("{} failed after {} s: {e}", r.name, secs(r.start, r.end)),
        ),
        None => (
            "extent",
            format!(
                "{}: {} s → {} s ({} s)",
                r.name,
                fmt_num(r.start, 3),
                fmt_num(r.end, 3),
                secs(r.start, r.end)
            ),
        ),
    };
    let end = if r.end.is_finite() { r.end } else { r.start };
    p.span(i, 0, lanes, r.start, end, class, &tip);
    let rank = |kind: &str| kinds.iter().position(|k| k.kind == kind);
    let mut spans: Vec<&(String, String, f64, f64)> = r.spans.iter().collect();
    spans.sort_by_key(|s| rank(&s.0).unwrap_or(usize::MAX));
    for (kind, label, a, b) in spans {
        let (lane, class) = match rank(kind) {
            Some(k) => (kinds[k].lane, format!("k{}", k % 8)),
            None => {
                *other = true;
                (lanes - 1, "kx".to_string())
            }
        };
        let tip = format!(
            "{}: {label}: {} s → {} s ({} ms)",
            r.name,
            fmt_num(*a, 3),
            fmt_num(*b, 3),
            fmt_num((b - a) * 1000.0, 1)
        );
        p.span(i, lane, lanes, *a, *b, &class, &tip);
    }
}
