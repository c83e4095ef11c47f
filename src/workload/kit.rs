//! The report kit: the generator block every result carries, built once by the runner
//! for every workload (workloads add their own sections next to it). It reports what the
//! generator itself did: queue waits for a concurrency slot, send lateness of scheduled
//! messages, failures per kind, and the generator's own resource use during the live
//! phase (process CPU seconds between the phase boundaries, peak RSS, CPU µs per live
//! session-second), so a saturated load generator is visible in its own results.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{RunRecord, SampleRecord};

/// Default send-lateness p99 (ms) above which the generator calls its results possibly
/// generator-bound (`[load] generator_bound_ms` overrides it).
pub const DEFAULT_GENERATOR_BOUND_MS: f64 = 5.0;

/// Share of one core the process may use during the live phase before its results are
/// called possibly generator-bound.
pub const SATURATED_CORE_SHARE: f64 = 0.9;

pub use crate::util::usage::{PhaseUsage, UsageSnapshot, core_share};

/// The generator block: `queue_wait` and `send_lateness` summaries (ms) over measured
/// samples, `failures_by_kind`, and `resources` for the live phase `usage` covers: CPU
/// seconds; the process's all-time peak RSS in MiB; CPU µs per second of live session,
/// where live session time is the sum of every sample's connect-to-end span, warm-ups
/// included since their CPU is too; the RSS at the phase's start (prepared media
/// included), the largest RSS sampled during it, the most sessions in flight at once
/// (warm-ups included) and the RSS growth per such session in KiB — what one more
/// concurrent session costs in memory.
pub fn generator_block<O>(
    run: &RunRecord<O>,
    failures_by_kind: &BTreeMap<String, usize>,
    usage: &PhaseUsage,
) -> Value {
    let (queue_wait, send_lateness) = wait_and_lateness(run);
    let live_session_s: f64 = run
        .samples
        .iter()
        .map(|s| (s.ended_s - s.started_s).max(0.0))
        .sum();
    let (start, end) = (usage.start, usage.end);
    let cpu_s = end.cpu_s.zip(start.cpu_s).map(|(e, s)| (e - s).max(0.0));
    let peak_sessions = peak_in_flight(run.samples.iter().map(|s| (s.started_s, s.ended_s)));
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    json!({
        "queue_wait": queue_wait,
        "send_lateness": send_lateness,
        "failures_by_kind": failures_by_kind,
        "resources": {
            "cpu_s": cpu_s,
            "peak_rss_mib": end.peak_rss_bytes.map(mib),
            "live_session_s": live_session_s,
            "cpu_us_per_session_s": cpu_s
                .filter(|_| live_session_s > 0.0)
                .map(|c| c * 1e6 / live_session_s),
            "rss_at_start_mib": start.rss_bytes.map(mib),
            "live_rss_peak_mib": usage.rss_peak_bytes.map(mib),
            "peak_sessions_in_flight": peak_sessions,
            "rss_per_session_kib": usage.rss_growth_per_session(peak_sessions).map(|b| b / 1024.0),
        },
    })
}

/// The plain warning a saturated generator prints in its report, progress line and result
/// (`rtload.generator_bound`): `Some("results may be generator-bound: …")` when the send
/// lateness p99 exceeds `threshold_ms` or the process used at least
/// [`SATURATED_CORE_SHARE`] of one core (`core_share`: CPU seconds / wall seconds of the live
/// phase), naming each reason with its value; `None` otherwise or when nothing was measured.
pub fn generator_bound(
    lateness_p99_ms: Option<f64>,
    core_share: Option<f64>,
    threshold_ms: f64,
) -> Option<String> {
    let late = lateness_p99_ms
        .filter(|p| p.is_finite() && *p > threshold_ms)
        .map(|p99| {
            format!(
                "send lateness p99 {p99:.1} ms > {} ms",
                crate::util::textpos::num(threshold_ms)
            )
        });
    bound_message(late.into_iter().chain(saturation_reason(core_share)))
}

/// "the generator used N% of a core during the live phase" when `core_share` is at least
/// [`SATURATED_CORE_SHARE`].
pub fn saturation_reason(core_share: Option<f64>) -> Option<String> {
    core_share
        .filter(|c| c.is_finite() && *c >= SATURATED_CORE_SHARE)
        .map(|c| {
            format!(
                "the generator used {:.0}% of a core during the live phase",
                c * 100.0
            )
        })
}

/// "results may be generator-bound: A; B (…)" for the given reasons, `None` without any.
pub fn bound_message(reasons: impl IntoIterator<Item = String>) -> Option<String> {
    let why: Vec<String> = reasons.into_iter().collect();
    (!why.is_empty()).then(|| {
        format!(
            "results may be generator-bound: {} (spread the load over more cores or machines)",
            why.join("; ")
        )
    })
}

/// A terminal table of distributions, as the scripted and replay kinds print theirs: a
/// header (`head`, `n`, `mean`, `p<q>` per entry of `percentiles`, `max`), then per row its
/// name (padded to `name_width`), count, and the figures to 2 decimals, `-` where missing.
pub fn stats_table(
    name_width: usize,
    head: &str,
    percentiles: &[f64],
    rows: impl IntoIterator<Item = (String, Option<crate::util::stats::Summary>)>,
) -> String {
    let mut out = format!("{head:<name_width$} {:>6} {:>10}", "n", "mean");
    for q in percentiles {
        out.push_str(&format!(" {:>10}", format!("p{q}")));
    }
    out.push_str(&format!(" {:>10}\n", "max"));
    for (name, sum) in rows {
        let cell = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.2}"));
        let count = sum.as_ref().map_or(0, |s| s.count);
        out.push_str(&format!("{name:<name_width$} {count:>6}"));
        out.push_str(&format!(" {:>10}", cell(sum.as_ref().map(|s| s.mean))));
        for q in percentiles {
            let p = sum.as_ref().and_then(|s| s.percentile(*q));
            out.push_str(&format!(" {:>10}", cell(p)));
        }
        out.push_str(&format!(" {:>10}\n", cell(sum.as_ref().map(|s| s.max))));
    }
    out
}

/// The `queue_wait` and `send_lateness` summaries (ms) over the measured samples, as the
/// generator block carries them (a workload may show them in its text too).
pub fn wait_and_lateness<O>(run: &RunRecord<O>) -> (Value, Value) {
    let measured = run.samples.iter().filter(|s| !s.warmup);
    let waits: Vec<f64> = measured.clone().map(|s| s.queue_wait_s * 1000.0).collect();
    let late: Vec<f64> = measured
        .flat_map(|s| s.send_lateness_s.iter().map(|v| v * 1000.0))
        .collect();
    (
        crate::util::stats::summary_ms_json(&waits),
        crate::util::stats::summary_ms_json(&late),
    )
}

/// The generator's columns of one per-sample row of `rtload.samples` (a workload adds its
/// own keys to it): `idx`, `session` (the run's session number), `error` (message) and
/// `failure_kind`, `scheduled_s`,
/// `queue_wait_ms`, `started_s`, `opened_s`, `ended_s`, `send_lateness_max_ms` (absent
/// values are `null`, never 0).
pub fn sample_row<O>(s: &SampleRecord<O>) -> serde_json::Map<String, Value> {
    let max_late = s.send_lateness_s.iter().copied().reduce(f64::max);
    let err = s.outcome.as_ref().err();
    [
        ("idx", json!(s.idx)),
        ("session", json!(s.session)),
        ("error", json!(err.map(|f| f.message.as_str()))),
        ("failure_kind", json!(err.map(|f| f.kind.label()))),
        ("scheduled_s", json!(s.scheduled_s)),
        ("queue_wait_ms", json!(s.queue_wait_s * 1000.0)),
        ("started_s", json!(s.started_s)),
        ("opened_s", json!(s.opened_s)),
        ("ended_s", json!(s.ended_s)),
        ("send_lateness_max_ms", json!(max_late.map(|l| l * 1000.0))),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// What load a run actually reached, from the measured samples' own timestamps: the peak
/// number of sessions in flight (connect start to end), the planned and the achieved
/// request rates (sessions released / started per second: `(n − 1) ÷` the seconds from
/// the first to the last one; both absent with fewer than two, or when the plan released
/// them all at one instant — a burst has no rate, and its starts are paced by the
/// concurrency cap, not by a rate) and completed sessions per second over the run. A
/// sweep compares these with its swept value.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Achieved {
    /// Peak measured sessions in flight at once.
    pub concurrency: usize,
    /// Measured sessions started per second.
    pub request_rate: Option<f64>,
    /// Measured sessions released per second by the arrival plan (what was asked for).
    pub planned_rate: Option<f64>,
    /// Measured sessions that completed without failure, per second of run.
    pub sessions_per_s: Option<f64>,
    /// The generator's send lateness p99 over measured samples, ms.
    pub lateness_p99_ms: Option<f64>,
    /// Mean measured sessions in flight: their summed lengths ÷ the span from the first
    /// one's start to the last one's end (Little's L = λW; beside an offered arrival rate,
    /// the concurrency it produced).
    pub mean_sessions: Option<f64>,
}

/// Events per second over `times`: `(n − 1) ÷ (last − first)`, absent with fewer than
/// two or when they all fall on one instant.
pub fn rate_of(times: &[f64]) -> Option<f64> {
    let lo = times.iter().copied().reduce(f64::min)?;
    let hi = times.iter().copied().reduce(f64::max)?;
    (times.len() >= 2 && hi > lo).then(|| (times.len() - 1) as f64 / (hi - lo))
}

impl Achieved {
    /// Measure `run`.
    pub fn of<O>(run: &RunRecord<O>) -> Self {
        let measured: Vec<&SampleRecord<O>> = run.samples.iter().filter(|s| !s.warmup).collect();
        let spans = measured.iter().map(|s| (s.started_s, s.ended_s));
        let ok = measured.iter().filter(|s| s.outcome.is_ok()).count();
        let late: Vec<f64> = measured
            .iter()
            .flat_map(|s| s.send_lateness_s.iter().map(|v| v * 1000.0))
            .collect();
        let started: Vec<f64> = measured.iter().map(|s| s.started_s).collect();
        let released: Vec<f64> = measured.iter().map(|s| s.scheduled_s).collect();
        let planned_rate = rate_of(&released);
        Self {
            concurrency: peak_in_flight(spans),
            request_rate: planned_rate.and(rate_of(&started)),
            planned_rate,
            sessions_per_s: (run.duration_s > 0.0).then(|| ok as f64 / run.duration_s),
            lateness_p99_ms: crate::util::stats::percentile(&late, 0.99).ok(),
            mean_sessions: mean_in_flight(measured.iter().map(|s| (s.started_s, s.ended_s))),
        }
    }

    /// The block a result carries: `achieved: {concurrency, request_rate, planned_rate,
    /// sessions_per_s, lateness_p99_ms, mean_sessions}` (absent values `null`).
    pub fn to_json(self) -> Value {
        json!({"achieved": {
            "concurrency": self.concurrency,
            "request_rate": self.request_rate,
            "planned_rate": self.planned_rate,
            "sessions_per_s": self.sessions_per_s,
            "lateness_p99_ms": self.lateness_p99_ms,
            "mean_sessions": self.mean_sessions,
        }})
    }
}

/// The mean number of `(start, end)` spans open over the window from the first start to
/// the last end: their summed lengths ÷ the window (`None` without spans or when the
/// window is empty).
pub fn mean_in_flight(spans: impl IntoIterator<Item = (f64, f64)>) -> Option<f64> {
    let (mut lo, mut hi, mut sum) = (f64::INFINITY, f64::NEG_INFINITY, 0.0);
    for (a, b) in spans {
        (lo, hi) = (lo.min(a), hi.max(b.max(a)));
        sum += (b - a).max(0.0);
    }
    (hi > lo).then(|| sum / (hi - lo))
}

/// The most `(start, end)` spans open at one instant. A span ending exactly when another
/// starts does not overlap it.
pub fn peak_in_flight(spans: impl IntoIterator<Item = (f64, f64)>) -> usize {
    let mut events: Vec<(f64, i32)> = Vec::new();
    for (a, b) in spans {
        events.push((a, 1));
        events.push((b.max(a), -1));
    }
    // Ends sort before starts at the same instant.
    events.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    let (mut now, mut peak) = (0i32, 0i32);
    for (_, d) in events {
        now += d;
        peak = peak.max(now);
    }
    peak.max(0) as usize
}

/// The verdict every terminal report opens with, e.g.
/// `verdict: FAILED — 7 completed, 1 failed (timeout: 1), 2 warm-up; 1 of 3 thresholds failed`.
pub fn verdict_line(
    passed: bool,
    interrupted: bool,
    measured: usize,
    failures_by_kind: &BTreeMap<String, usize>,
    warmup: usize,
    thresholds: (usize, usize),
) -> String {
    let word = match (interrupted, passed) {
        (true, _) => "INTERRUPTED",
        (false, true) => "passed",
        (false, false) => "FAILED",
    };
    let failed: usize = failures_by_kind.values().sum();
    let kinds: Vec<String> = failures_by_kind
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| format!("{k}: {n}"))
        .collect();
    let mut s = format!(
        "verdict: {word} — {} completed, {failed} failed",
        measured.saturating_sub(failed)
    );
    if !kinds.is_empty() {
        s.push_str(&format!(" ({})", kinds.join(", ")));
    }
    s.push_str(&format!(", {warmup} warm-up"));
    let (failed_t, total_t) = thresholds;
    if total_t > 0 {
        s.push_str(&format!("; {failed_t} of {total_t} thresholds failed"));
    }
    s
}

pub use crate::util::bounded::{MESSAGE_CHARS as FAILURE_TEXT_CHARS, bounded};

/// `rtload.failures`: `{count, by_kind, sessions: [{session, kind, message}]}` for every
/// measured failure (`failures`: session number and failure, in session order).
pub fn failures_json(
    failures: &[(usize, super::Failure)],
    by_kind: BTreeMap<String, usize>,
) -> Value {
    let rows: Vec<Value> = failures
        .iter()
        .map(|(session, f)| {
            json!({
                "session": session,
                "kind": f.kind.label(),
                "message": bounded(&f.message, FAILURE_TEXT_CHARS),
            })
        })
        .collect();
    json!({"count": failures.len(), "by_kind": by_kind, "sessions": rows})
}

/// Lines naming the first `limit` failures (`session N: message`), then how many were
/// left out and where they all are. The one way every text output lists failures.
pub fn failure_lines(failures: &[(usize, String)], limit: usize, prefix: &str) -> Vec<String> {
    let mut out: Vec<String> = failures
        .iter()
        .take(limit)
        .map(|(s, m)| format!("{prefix}session {s}: {}", bounded(m, FAILURE_TEXT_CHARS)))
        .collect();
    if failures.len() > limit {
        out.push(format!(
            "{prefix}… and {} more failed session(s) (all of them: rtload.failures in the JSON result)",
            failures.len() - limit
        ));
    }
    out
}

/// Merge `block`'s keys into the document's `rtload` object (creating it).
pub fn merge_into(doc: &mut Value, block: Value) {
    let (Some(obj), Value::Object(block)) = (doc.as_object_mut(), block) else {
        return;
    };
    let rt = obj
        .entry("rtload")
        .or_insert_with(|| Value::Object(Default::default()));
    if let Some(rt) = rt.as_object_mut() {
        rt.extend(block);
    }
}

/// A report built once, at the end of the run: its text, JSON, scalar metrics, recorded
/// distributions and the measured samples it failed. The common [`super::Report`] of
/// workloads that need no JSON dialect.
#[derive(Debug, Default)]
pub struct BuiltReport {
    /// The terminal report.
    pub text: String,
    /// The JSON result document.
    pub json: Value,
    /// Scalar metric name → value.
    pub scalars: std::collections::BTreeMap<String, f64>,
    /// Every distribution metric's values.
    pub recorded: super::results::Recorded,
    /// Measured samples the engine saw succeed but the report failed.
    pub failures: Vec<(usize, String)>,
    /// Notes on the numbers (see [`super::Report::warnings`]).
    pub warnings: Vec<String>,
}

impl super::Report for BuiltReport {
    fn render_text(&self) -> String {
        self.text.clone()
    }
    fn to_json(&self) -> Value {
        self.json.clone()
    }
    fn recorded(&self) -> &super::results::Recorded {
        &self.recorded
    }
    fn scalars(&self) -> std::collections::BTreeMap<String, f64> {
        self.scalars.clone()
    }
    fn report_failures(&self) -> Vec<(usize, String)> {
        self.failures.clone()
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

#[cfg(test)]
#[path = "kit_tests.rs"]
mod tests;
