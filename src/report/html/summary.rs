//! The summary every result section opens with, before any chart: the verdict, each
//! threshold with its measured value, the sample counts, the headline metrics of the
//! metric catalogue as p50 / p90 / p99 / max, and the generator's health with a
//! "results may be generator-bound" banner when its own lateness or CPU says so.
//!
//! Reads only the result JSON (`rtload.verdict`, `rtload.thresholds`,
//! `rtload.sample_counts`, `rtload.headline_metrics`, `rtload.metrics`, the generator
//! block); anything missing is left out or shown as `–`, never as zero.

use std::fmt::Write as _;

use serde_json::Value;

use super::svg::esc;

/// Send lateness p99 above this (ms) means the generator could not keep its schedule.
pub const LATE_P99_MS: f64 = 10.0;
/// Generator CPU above this share of one core over the run means it may be saturated.
pub const CPU_SHARE: f64 = 0.8;

/// The summary block for `doc` (empty when the document has no `rtload` block).
pub fn summary(doc: &Value) -> String {
    let Some(rt) = doc.get("rtload").filter(|r| r.is_object()) else {
        return String::new();
    };
    let mut s = String::from("<div class=\"summary\">\n");
    s.push_str(&verdict(doc, rt));
    s.push_str(&thresholds(rt));
    s.push_str(&headline_table(rt));
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
    s.push_str("</p>\n");
    s
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

/// The headline metrics: one row per metric family, its percentiles when the result has
/// them; a metric without percentiles (a ratio, a count, a mean by definition) shows its
/// one value.
fn headline_table(rt: &Value) -> String {
    let Some(names) = rt.get("headline_metrics").and_then(Value::as_array) else {
        return String::new();
    };
    let metrics = rt.get("metrics").cloned().unwrap_or(Value::Null);
    let get = |k: &str| {
        metrics
            .get(k)
            .and_then(Value::as_f64)
            .filter(|x| x.is_finite())
    };
    let unit = |k: &str| {
        rt.pointer("/metrics_catalogue")
            .and_then(Value::as_array)
            .and_then(|c| {
                c.iter()
                    .find(|m| m.get("name").and_then(Value::as_str) == Some(k))
            })
            .and_then(|m| m.get("unit").and_then(Value::as_str))
            .unwrap_or("")
            .to_string()
    };
    let mut s = String::from(
        "<table class=\"headline\"><caption>Headline metrics</caption><tr><th>metric</th><th>unit</th><th>p50</th><th>p90</th><th>p99</th><th>max</th><th>value</th></tr>",
    );
    let mut seen: Vec<&str> = Vec::new();
    for n in names.iter().filter_map(Value::as_str) {
        let family = n.split_once('.').map_or(n, |(f, _)| f);
        if seen.contains(&family) {
            continue;
        }
        seen.push(family);
        let raw = raw_values(rt, family);
        let stat = |st: &str| {
            get(&format!("{family}.{st}"))
                .or_else(|| (st == "p50").then(|| get(&format!("{family}.median")))?)
                .or_else(|| raw_stat(&raw, st))
        };
        let pct = ["p50", "p90", "p99", "max"].map(stat);
        let has_pct = pct[..3].iter().any(Option::is_some);
        let value = if has_pct { None } else { get(n) };
        let name = if has_pct { family } else { n };
        let _ = write!(s, "<tr><td>{}</td><td>{}</td>", esc(name), esc(&unit(n)));
        for v in pct {
            let _ = write!(s, "<td>{}</td>", if has_pct { cell(v) } else { "–".into() });
        }
        let _ = write!(s, "<td>{}</td></tr>", cell(value));
    }
    s.push_str("</table>\n");
    s
}

/// The raw per-request values of `family` the result carries (`distributions`), sorted;
/// empty when it carries none.
fn raw_values(rt: &Value, family: &str) -> Vec<f64> {
    let mut v: Vec<f64> = rt
        .pointer(&format!("/distributions/{family}"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_f64)
                .filter(|x| x.is_finite())
                .collect()
        })
        .unwrap_or_default();
    v.sort_by(f64::total_cmp);
    v
}

/// A percentile (`p50`, `p90`, `p99`; linear interpolation, as the workloads compute
/// theirs) or the `max` of sorted raw values; `None` without values.
fn raw_stat(sorted: &[f64], st: &str) -> Option<f64> {
    let f = match st {
        "p50" => 0.5,
        "p90" => 0.9,
        "p99" => 0.99,
        "max" => return sorted.last().copied(),
        _ => return None,
    };
    crate::util::stats::percentile_sorted(sorted, f).ok()
}

/// Why the results may be generator-bound, if they may.
pub fn generator_bound(rt: &Value) -> Option<String> {
    let late = num(rt, "/send_lateness/p99_ms");
    let cpu = num(rt, "/resources/cpu_s");
    let dur = num(rt, "/duration_s").filter(|d| *d > 0.0);
    let mut why = Vec::new();
    if let Some(l) = late.filter(|l| *l > LATE_P99_MS) {
        why.push(format!(
            "send lateness p99 is {l:.1} ms (over {LATE_P99_MS} ms): messages left later than scheduled"
        ));
    }
    if let Some(share) = cpu.zip(dur).map(|(c, d)| c / d).filter(|s| *s > CPU_SHARE) {
        why.push(format!(
            "the generator used {:.0}% of a core over the run",
            share * 100.0
        ));
    }
    (!why.is_empty()).then(|| why.join("; "))
}

fn generator(rt: &Value) -> String {
    let mut s = String::new();
    if let Some(why) = generator_bound(rt) {
        let _ = writeln!(
            s,
            "<p class=\"banner\">Results may be generator-bound: {}. Latencies include the generator's own delay; run fewer sessions per process or more shards.</p>",
            esc(&why)
        );
    }
    let rows = [
        ("send lateness p99", num(rt, "/send_lateness/p99_ms"), "ms"),
        ("queue wait p99", num(rt, "/queue_wait/p99_ms"), "ms"),
        ("generator CPU", num(rt, "/resources/cpu_s"), "s"),
        (
            "generator CPU per live session-second",
            num(rt, "/resources/cpu_us_per_session_s"),
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
            "peak sessions in flight",
            num(rt, "/achieved/concurrency"),
            "",
        ),
        (
            "sessions started/s",
            num(rt, "/achieved/request_rate"),
            "1/s",
        ),
    ];
    if rows.iter().all(|(_, v, _)| v.is_none()) {
        return s;
    }
    s.push_str("<table class=\"generator\"><caption>Generator health</caption><tr><th>measure</th><th>unit</th><th>value</th></tr>");
    for (k, v, u) in rows {
        let _ = write!(s, "<tr><td>{k}</td><td>{u}</td><td>{}</td></tr>", cell(v));
    }
    s.push_str("</table>\n");
    s
}
