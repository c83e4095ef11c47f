//! The summary every result section opens with, before any chart: the verdict, each
//! threshold with its measured value, the sample counts, the headline metrics, and the
//! generator's health with the run's own "results may be generator-bound" verdict.
//!
//! One number, one source: every figure is read from the result as the run wrote it —
//! the headline values are `rtload.metrics` entries, the generator-bound banner is
//! `rtload.generator_bound` (never re-judged here against another threshold), peak
//! concurrency and the start rate are `rtload.achieved`. Anything missing is left out or
//! shown as `–`, never as zero.

use std::fmt::Write as _;

use serde_json::Value;

use super::svg::esc;
use crate::workload::catalogue::Catalogue;

/// The summary block for `doc` (empty when the document has no `rtload` block); `cat`
/// gives the headline metrics their units and measurement origins.
pub fn summary(doc: &Value, cat: Option<&Catalogue>) -> String {
    let Some(rt) = doc.get("rtload").filter(|r| r.is_object()) else {
        return String::new();
    };
    let mut s = String::from("<div class=\"summary\">\n");
    s.push_str(&verdict(doc, rt));
    s.push_str(&thresholds(rt));
    s.push_str(&headline_table(rt, cat));
    s.push_str(&generator(rt));
    s.push_str("</div>\n");
    s
}

fn num(v: &Value, ptr: &str) -> Option<f64> {
    v.pointer(ptr)
        .and_then(Value::as_f64)
        .filter(|x| x.is_finite())
}

/// A number for a table cell: integers as such, others with 2 decimals (4 below 1);
/// `–` when missing.
pub fn cell(v: Option<f64>) -> String {
    match v {
        None => "–".into(),
        Some(v) if v.fract() == 0.0 && v.abs() < 1e15 => format!("{v:.0}"),
        Some(v) if v.abs() < 1.0 => format!("{v:.4}"),
        Some(v) => format!("{v:.2}"),
    }
}

/// A sweep section's opening line: the verdict its run's exit code gave, the point
/// counts and the capacity (nothing for a document whose sweep cannot be read).
pub fn sweep_verdict(doc: &Value) -> String {
    let Some((sw, points)) = crate::report::sweep::from_json(doc) else {
        return String::new();
    };
    let interrupted = doc.get("interrupted").and_then(Value::as_bool) == Some(true);
    let (word, rest) = crate::report::sweep::verdict(&sw, &points, interrupted);
    let class = if word == "passed" { "pass" } else { "fail" };
    format!(
        "<p class=\"verdict {class}\">verdict: <strong>{word}</strong> — {}</p>\n",
        esc(&rest)
    )
}

fn verdict(doc: &Value, rt: &Value) -> String {
    let word = rt
        .get("verdict")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            doc.get("interrupted")
                .and_then(Value::as_bool)
                .filter(|i| *i)
                .map(|_| "interrupted".to_string())
        })
        .unwrap_or_else(|| "unknown (no verdict recorded)".into());
    let class = match word.as_str() {
        "passed" => "pass",
        "failed" | "interrupted" => "fail",
        _ => "unknown",
    };
    let mut s = format!(
        "<p class=\"verdict {class}\">verdict: <strong>{}</strong>",
        esc(&word)
    );
    let c = |k: &str| num(rt, &format!("/sample_counts/{k}"));
    if let Some(m) = c("measured") {
        let _ = write!(
            s,
            " — {} measured: {} completed, {} failed",
            cell(Some(m)),
            cell(c("completed")),
            cell(c("failed"))
        );
        let kinds: Vec<String> = rt
            .get("failures_by_kind")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter(|(_, n)| n.as_u64().unwrap_or(0) > 0)
                    .map(|(k, n)| format!("{k}: {n}"))
                    .collect()
            })
            .unwrap_or_default();
        if !kinds.is_empty() {
            let _ = write!(s, " ({})", esc(&kinds.join(", ")));
        }
        if c("cancelled").is_some_and(|n| n > 0.0) {
            let _ = write!(s, ", {} cancelled", cell(c("cancelled")));
        }
        let _ = write!(s, "; {} warm-up", cell(c("warmup")));
    }
    s.push_str(&outcomes(rt));
    s.push_str("</p>\n");
    s
}

/// `; sessions: 3 good, 1 degraded, 2 rejected, 0 failed` from `rtload.outcomes` (the
/// JSON's own counts; empty for a result written before outcome classes).
fn outcomes(rt: &Value) -> String {
    let Some(o) = rt.get("outcomes").filter(|o| o.is_object()) else {
        return String::new();
    };
    let counts = crate::workload::outcome::ClassCounts::from_json(o);
    format!("; sessions: {}", esc(&counts.render()))
}

fn thresholds(rt: &Value) -> String {
    let Some(list) = rt.get("thresholds").and_then(Value::as_array) else {
        return String::new();
    };
    if list.is_empty() {
        return "<p class=\"nodata\">no thresholds set</p>\n".into();
    }
    let mut s = String::from(
        "<table class=\"thresholds\"><caption>Thresholds</caption><tr><th>metric</th><th>threshold</th><th>measured</th><th>result</th></tr>",
    );
    for t in list {
        let passed = t.get("passed").and_then(Value::as_bool).unwrap_or(false);
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td></tr>",
            esc(t.get("metric").and_then(Value::as_str).unwrap_or("?")),
            esc(t.get("expr").and_then(Value::as_str).unwrap_or("?")),
            cell(num(t, "/measured")),
            if passed { "pass" } else { "fail" },
            if passed { "pass" } else { "FAIL" },
        );
    }
    s.push_str("</table>\n");
    s
}

/// The headline metrics, in the result's order: each one's value exactly as
/// `rtload.metrics` has it, and for a distribution statistic its distribution's p50 /
/// p90 / p99 / max (also `rtload.metrics` entries; `–` when absent, never recomputed).
fn headline_table(rt: &Value, cat: Option<&Catalogue>) -> String {
    let Some(names) = rt.get("headline_metrics").and_then(Value::as_array) else {
        return String::new();
    };
    let get = |k: &str| {
        num(
            rt,
            &format!("/metrics/{}", k.replace('~', "~0").replace('/', "~1")),
        )
    };
    let mut s = String::from(
        "<table class=\"headline\"><caption>Headline metrics</caption><tr><th>metric</th><th>unit</th><th>measured from → to</th><th>p50</th><th>p90</th><th>p99</th><th>max</th><th>value</th></tr>",
    );
    for n in names.iter().filter_map(Value::as_str) {
        let info = cat.and_then(|c| c.get(n));
        let dist = info.and_then(|i| i.distribution.as_deref());
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td class=\"origin\">{}</td>",
            esc(n),
            esc(info.map_or("", |i| i.unit.as_str())),
            esc(info.map_or("", |i| i.origin.as_str()))
        );
        for st in ["p50", "p90", "p99", "max"] {
            let v = dist.and_then(|d| get(&format!("{d}.{st}")));
            let _ = write!(
                s,
                "<td>{}</td>",
                v.map_or_else(|| "–".into(), super::metrics::value)
            );
        }
        let _ = write!(
            s,
            "<td class=\"value\">{}</td></tr>",
            get(n).map_or_else(|| "–".into(), super::metrics::value)
        );
    }
    s.push_str("</table>\n");
    s
}

/// The generator's health: the run's own generator-bound verdict as a banner, then its
/// numbers.
fn generator(rt: &Value) -> String {
    let mut s = String::new();
    if let Some(why) = rt
        .get("generator_bound")
        .and_then(Value::as_str)
        .filter(|w| !w.is_empty())
    {
        let _ = writeln!(
            s,
            "<p class=\"banner\">{}. Latencies include the generator's own delay.</p>",
            esc(&capitalised(why))
        );
    }
    let rows = generator_rows(rt);
    if rows.iter().all(|(_, v, _)| v.is_none()) {
        return s;
    }
    // An achieved block without a start rate: the starts spanned under a second.
    let burst = rt.get("achieved").is_some_and(Value::is_object);
    s.push_str("<table class=\"generator\"><caption>Generator health</caption><tr><th>measure</th><th>unit</th><th>value</th></tr>");
    for (k, v, u) in rows {
        let shown = match v {
            None if burst && k == "sessions started/s" => {
                "— (a burst: the starts spanned under a second)".to_string()
            }
            v => cell(v),
        };
        let _ = write!(s, "<tr><td>{k}</td><td>{u}</td><td>{shown}</td></tr>");
    }
    s.push_str("</table>\n");
    s
}

/// The generator-health rows of `rt`: label, value (missing when absent), unit.
fn generator_rows(rt: &Value) -> [(&'static str, Option<f64>, &'static str); 12] {
    [
        ("send lateness p99", num(rt, "/send_lateness/p99_ms"), "ms"),
        ("queue wait p99", num(rt, "/queue_wait/p99_ms"), "ms"),
        (
            "receipt reader delay p99 (kernel stamp → reader)",
            num(rt, "/wire/receipts/reader_delay/p99_ms"),
            "ms",
        ),
        ("generator CPU", num(rt, "/resources/cpu_s"), "s"),
        (
            "generator CPU per live session-second",
            num(rt, "/resources/cpu_us_per_session_s"),
            "µs",
        ),
        (
            "setup CPU per session (connect, handshake, opening messages)",
            num(rt, "/phase_cpu/setup/cpu_us_per_session"),
            "µs",
        ),
        (
            "publication CPU per session (report and artifacts)",
            num(rt, "/phase_cpu/publication/cpu_us_per_session"),
            "µs",
        ),
        (
            "generator CPU through publication per live session-second",
            num(rt, "/phase_cpu/through_publication/cpu_us_per_session_s"),
            "µs",
        ),
        (
            "generator peak RSS",
            num(rt, "/resources/peak_rss_mib"),
            "MiB",
        ),
        (
            "generator RSS per session in flight",
            num(rt, "/resources/rss_per_session_kib"),
            "KiB",
        ),
        (
            "peak concurrent sessions",
            num(rt, "/achieved/concurrency"),
            "",
        ),
        (
            "sessions started/s",
            num(rt, "/achieved/request_rate"),
            "1/s",
        ),
    ]
}

/// `s` with its first letter upper-case.
fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
}
