//! Capacity search page (`capacity.json`), read as a load tester reads a search: the
//! answer in one sentence (the one `rtload capacity` printed) and the per-step table
//! (the terminal's columns), then the search over its steps in run order — the
//! concurrency each step ran (ramp windows, staircase, bisection and confirmation told apart), its
//! sessions per outcome class, and the SLO metric's p99 against its threshold — and
//! throughput against that p99, each point labelled by its concurrency. The capacity is
//! marked on every panel, or the reason there is none is in every caption; steps that
//! broke get red rings, inconclusive ones amber dashed rings. Every number is a step's
//! recorded value, read back by [`crate::report::capacity::from_json`].

use std::fmt::Write as _;

use serde_json::Value;

use super::super::svg::{Axis, Plot, esc, fmt_num};
use super::sweep::{Ring, TputPoint, catalog_headline, family, throughput, tput_latency_figure};
use super::{figure, legend};
use crate::report::capacity::{self, Outcome, Phase, Recorded, Step, Verdict};

/// Bars are this many step units either side of their step.
const BAR_HALF: f64 = 0.3;

/// What the search found, as every panel marks it.
struct Found {
    /// The capacity, when there is one.
    sessions: Option<usize>,
    /// The step (from 1) that confirmed it.
    step: Option<usize>,
    /// The caption's note: the capacity, or why there is none.
    note: String,
}

fn found(r: &Recorded) -> Found {
    let (sessions, note) = match &r.outcome {
        Some(Outcome::Capacity { sessions, limit }) => {
            let bound = limit.map_or_else(
                || " (at least: nothing broke up to the search's --max)".to_string(),
                |l| format!(" (limited at {l})"),
            );
            (
                Some(*sessions),
                format!("green: capacity {sessions}{bound}"),
            )
        }
        Some(Outcome::None { at }) => (
            None,
            format!("no capacity: even {at} concurrent session broke"),
        ),
        Some(Outcome::Stopped { at, at_least }) => (
            None,
            format!(
                "no capacity found: the search stopped at an inconclusive step ({at}); the capacity is at least {at_least}"
            ),
        ),
        None => (
            None,
            "no capacity: the search was interrupted before an answer".to_string(),
        ),
    };
    let step = sessions.and_then(|n| {
        r.steps
            .iter()
            .rposition(|s| s.concurrency == n && s.verdict == Verdict::Holds)
            .map(|i| i + 1)
    });
    Found {
        sessions,
        step,
        note,
    }
}

/// The metric the p99 panel draws, with the threshold drawn on it when it is the
/// threshold's own metric.
struct Slo {
    /// The drawn metric, e.g. `ttft_ms.p99`.
    metric: String,
    /// The threshold as written (`ttft_ms.p99 < 300`) and its bound, when drawn.
    threshold: Option<(String, f64)>,
    /// What the metric is, for the caption.
    why: String,
}

/// The SLO metric: the first threshold's metric (else the workload's first headline
/// metric), as its family's p99 when the steps recorded one.
fn slo_metric(doc: &Value, steps: &[Step]) -> Option<Slo> {
    let check = steps.first().and_then(|s| s.point.checks.first());
    let (judged, why) = match check {
        Some(c) => (
            c.metric.clone(),
            format!("the first threshold's metric, {}", c.metric),
        ),
        None => {
            let h = catalog_headline(doc).into_iter().next()?;
            let why = format!("no [thresholds] set: the workload's headline {h}");
            (h, why)
        }
    };
    let p99 = format!("{}.p99", family(&judged));
    let has_p99 = steps.iter().any(|s| s.point.metrics.contains_key(&p99));
    let metric = if has_p99 { p99 } else { judged.clone() };
    let threshold = check.filter(|c| c.metric == metric).and_then(|c| {
        let bound = c.expr.trim_start_matches(['<', '>', '=', '!', ' ']).trim();
        Some((
            format!("{} {}", c.metric, c.expr),
            bound.parse::<f64>().ok()?,
        ))
    });
    Some(Slo {
        metric,
        threshold,
        why,
    })
}

/// A step's recorded value of `metric`: the threshold's measured value when a
/// threshold judges it (the table's figure), else its metrics map's; NaN when absent.
fn value_of(s: &Step, metric: &str) -> f64 {
    s.point
        .checks
        .iter()
        .find(|c| c.metric == metric)
        .map_or_else(|| s.point.metrics.get(metric).copied(), |c| c.measured)
        .filter(|v| v.is_finite())
        .unwrap_or(f64::NAN)
}

/// Capacity page: the sentence, the table, then the panels.
pub fn capacity(doc: &Value) -> String {
    let Some(r) = capacity::from_json(doc) else {
        return "<p class=\"nodata\">no readable capacity.steps</p>\n".into();
    };
    let f = found(&r);
    let mut out = answer(&r);
    out.push_str(&table(&r.steps));
    out.push_str(&staircase(&r.steps, &f));
    out.push_str(&outcomes(&r.steps, &f));
    match slo_metric(doc, &r.steps) {
        Some(slo) => {
            out.push_str(&slo_panel(&r.steps, &f, &slo));
            out.push_str(&tput_latency(&r.steps, &f, &slo));
        }
        None => out.push_str(&figure(
            None,
            "SLO metric p99 per step: no threshold and no headline metric recorded",
            "",
        )),
    }
    out
}

/// The one-sentence answer `rtload capacity` printed (recorded in `capacity.json`;
/// worked out again by the same function for a file without one).
fn answer(r: &Recorded) -> String {
    let sentence = r
        .sentence
        .clone()
        .or_else(|| {
            let o = r.outcome.as_ref()?;
            Some(capacity::sentence(&r.criteria, &r.steps, o))
        })
        .unwrap_or_else(|| {
            format!(
                "Capacity: not found: the search was interrupted after {} step(s)",
                r.steps.len()
            )
        });
    let class = match r.outcome {
        Some(Outcome::Capacity { .. }) => "capacity",
        _ => "capacity none",
    };
    let mut s = format!(
        "<p class=\"{class}\">{}</p>\n<p>scenario <strong>{}</strong>: {} step(s), each one run of the scenario at one max_concurrency.</p>\n",
        esc(&sentence),
        esc(&r.scenario),
        r.steps.len()
    );
    if r.interrupted {
        s.push_str("<p class=\"banner\">interrupted: the search stopped; these are the steps that finished</p>\n");
    }
    s
}

/// The per-step table: [`capacity::table_rows`] (the terminal's columns), each row
/// classed by its verdict.
fn table(steps: &[Step]) -> String {
    let rows = capacity::table_rows(steps);
    let mut s = String::from("<table class=\"points\"><caption>Capacity search steps</caption>");
    for (i, row) in rows.iter().enumerate() {
        let step = i.checked_sub(1).and_then(|k| steps.get(k));
        s.push_str(match step.map(|s| &s.verdict) {
            None => "<tr>",
            Some(Verdict::Holds) => "<tr class=\"holds\">",
            Some(Verdict::Breaks(_)) => "<tr class=\"breaks\">",
            Some(Verdict::Inconclusive(_)) => "<tr class=\"short\">",
        });
        let last = row.len().saturating_sub(1);
        for (c, cell) in row.iter().enumerate() {
            let (tag, class) = match (i, c == last) {
                (0, _) => ("th", ""),
                (_, true) => ("td", " class=\"verdict\""),
                _ => ("td", ""),
            };
            let _ = write!(s, "<{tag}{class}>{}</{tag}>", esc(cell));
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>\n");
    s
}

/// The step axis: one tick per step (every k-th when there are many), run order.
fn step_axis(n: usize) -> Option<Axis> {
    let every = n.div_ceil(24).max(1);
    let ticks = (1..=n)
        .filter(|i| (i - 1) % every == 0)
        .map(|i| (i as f64, i.to_string()))
        .collect();
    Axis::with_ticks("step (run order)", 0.5, n as f64 + 0.5, ticks)
}

/// The marks every step panel shares: the capacity's vertical line at the step that
/// confirmed it (unless the panel marks the capacity otherwise), and per step at height `y(step)` a highlight (held at the capacity), a
/// red ring (broke) or an amber ring (inconclusive).
fn step_marks(
    p: &mut Plot,
    steps: &[Step],
    (f, vline): (&Found, bool),
    y: &dyn Fn(&Step) -> f64,
    what: &str,
) {
    if let (Some(n), Some(k), true) = (f.sessions, f.step, vline) {
        p.vline(k as f64, &format!("capacity {n}"), "cap");
    }
    for (i, s) in steps.iter().enumerate() {
        let (x, v) = ((i + 1) as f64, y(s));
        let head = format!(
            "step {} ({}), max_concurrency {}: {what} {}",
            i + 1,
            s.phase.name(),
            s.concurrency,
            fmt_num(v, 3)
        );
        match &s.verdict {
            Verdict::Holds if Some(s.concurrency) == f.sessions => {
                p.highlight(x, v, &format!("{head}; capacity"))
            }
            Verdict::Holds => {}
            Verdict::Breaks(r) => p.fail_marker(x, v, &format!("{head}; breaks: {}", r.join("; "))),
            Verdict::Inconclusive(w) => p.warn_marker(x, v, &format!("{head}; inconclusive: {w}")),
        }
    }
}

/// Legend entries of the rings.
fn ring_legend() -> Vec<(String, String)> {
    vec![
        ("fail".into(), "broke".into()),
        (
            "warn".into(),
            "inconclusive (generator-bound or short)".into(),
        ),
    ]
}

/// The concurrency each step ran, in run order, coloured by phase.
fn staircase(steps: &[Step], f: &Found) -> String {
    let caption = format!(
        "Concurrency run at each step: the ramp's windows (one run, sessions joining while earlier ones stream) or the staircase doubling until a step breaks, the bisection halves the gap, the confirmation runs the answer again; {}",
        f.note
    );
    let phases = [
        (Phase::Ramp, 4),
        (Phase::Staircase, 0),
        (Phase::Bisect, 1),
        (Phase::Confirm, 3),
    ];
    let svg = (|| {
        let x = step_axis(steps.len())?;
        let y = Axis::fit(
            "max_concurrency",
            steps.iter().map(|s| s.concurrency as f64).chain([0.0]),
            true,
        )?;
        let mut p = Plot::linear("capacity-concurrency", &caption, x, y);
        let pts: Vec<(f64, f64)> = (1..)
            .zip(steps)
            .map(|(i, s)| (i as f64, s.concurrency as f64))
            .collect();
        p.curve(&pts, 7, "max_concurrency per step", false);
        for (phase, series) in phases {
            let dots: Vec<(f64, f64, String)> = (1..)
                .zip(steps)
                .filter(|(_, s)| s.phase == phase)
                .map(|(i, s)| {
                    (
                        i as f64,
                        s.concurrency as f64,
                        format!(
                            "step {i} ({}): max_concurrency {}",
                            phase.name(),
                            s.concurrency
                        ),
                    )
                })
                .collect();
            p.points(&dots, series, false);
        }
        if let Some(n) = f.sessions {
            p.hline_class(n as f64, &format!("capacity {n}"), "cap");
        }
        // The capacity is the horizontal line here; the confirming step is ringed.
        step_marks(
            &mut p,
            steps,
            (f, false),
            &|s| s.concurrency as f64,
            "max_concurrency",
        );
        Some(p.finish())
    })();
    let mut items: Vec<(String, String)> = phases
        .iter()
        .map(|(ph, s)| (format!("s{s}"), ph.name().to_string()))
        .collect();
    items.extend(ring_legend());
    figure(svg, &caption, &legend(&items))
}

/// Each step's sessions per outcome class, stacked.
fn outcomes(steps: &[Step], f: &Found) -> String {
    let caption = format!(
        "Sessions per outcome class at each step (good, degraded, rejected, failed, stacked); {}",
        f.note
    );
    let classes = [
        ("good", "s2"),
        ("degraded", "s1"),
        ("rejected", "s3"),
        ("failed", "failed"),
    ];
    let svg = (|| {
        let x = step_axis(steps.len())?;
        let y = Axis::fit(
            "sessions",
            steps.iter().map(|s| s.classes.total() as f64).chain([0.0]),
            true,
        )?;
        let mut p = Plot::linear("capacity-outcomes", &caption, x, y);
        for (i, s) in (1..).zip(steps) {
            let k = &s.classes;
            let mut base = 0.0;
            for ((name, class), n) in classes
                .iter()
                .zip([k.good, k.degraded, k.rejected, k.failed])
            {
                let top = base + n as f64;
                let tip = format!("step {i}, max_concurrency {}: {n} {name}", s.concurrency);
                p.bar(i as f64, BAR_HALF, (base, top), class, &tip);
                base = top;
            }
        }
        step_marks(
            &mut p,
            steps,
            (f, true),
            &|s| s.classes.total() as f64,
            "sessions ended",
        );
        Some(p.finish())
    })();
    let mut items: Vec<(String, String)> = classes
        .iter()
        .map(|(n, c)| (c.to_string(), n.to_string()))
        .collect();
    items.extend(ring_legend());
    figure(svg, &caption, &legend(&items))
}

/// The SLO metric per step, its threshold drawn when it is the threshold's own metric.
fn slo_panel(steps: &[Step], f: &Found, slo: &Slo) -> String {
    let line_note = match &slo.threshold {
        Some((t, _)) => format!("red: the threshold {t}"),
        None => "no threshold on this metric to draw".to_string(),
    };
    let caption = format!(
        "{} at each step ({}); {line_note}; {}",
        slo.metric, slo.why, f.note
    );
    let pts: Vec<(f64, f64)> = (1..)
        .zip(steps)
        .map(|(i, s)| (i as f64, value_of(s, &slo.metric)))
        .collect();
    let svg = pts
        .iter()
        .any(|p| p.1.is_finite())
        .then_some(())
        .and_then(|()| {
            let x = step_axis(steps.len())?;
            let bound = slo.threshold.as_ref().map(|t| t.1);
            let y = Axis::fit(
                &slo.metric,
                pts.iter().map(|p| p.1).chain(bound).chain([0.0]),
                false,
            )?;
            let mut p = Plot::linear("capacity-slo", &caption, x, y);
            if let Some((t, b)) = &slo.threshold {
                p.hline(*b, t);
            }
            p.line(&pts, 0, &slo.metric);
            step_marks(
                &mut p,
                steps,
                (f, true),
                &|s| value_of(s, &slo.metric),
                &slo.metric,
            );
            Some(p.finish())
        });
    let mut items = vec![("s0".to_string(), slo.metric.clone())];
    items.extend(ring_legend());
    figure(svg, &caption, &legend(&items))
}

/// Completed sessions/s against the SLO metric, one point per step in increasing
/// concurrency, each labelled by its concurrency (once per concurrency).
fn tput_latency(steps: &[Step], f: &Found, slo: &Slo) -> String {
    let mut order: Vec<&Step> = steps.iter().collect();
    order.sort_by_key(|s| s.concurrency);
    let mut labelled = Vec::new();
    let pts: Vec<TputPoint> = order
        .iter()
        .map(|s| {
            let c = s.concurrency;
            let tip = format!("max_concurrency {c} ({})", s.phase.name());
            let ring = match &s.verdict {
                Verdict::Holds if Some(c) == f.sessions => {
                    (Ring::Capacity, format!("capacity: {tip}"))
                }
                Verdict::Holds => (Ring::Plain, String::new()),
                Verdict::Breaks(r) => (Ring::Broke, format!("{tip}: breaks: {}", r.join("; "))),
                Verdict::Inconclusive(w) => {
                    (Ring::Inconclusive, format!("{tip}: inconclusive: {w}"))
                }
            };
            let label = (!labelled.contains(&c)).then(|| {
                labelled.push(c);
                c.to_string()
            });
            TputPoint {
                x: throughput(&s.point),
                y: value_of(s, &slo.metric),
                ring,
                label,
            }
        })
        .collect();
    let caption = format!(
        "Throughput vs latency: {} against completed sessions/s, one point per step in increasing max_concurrency (labelled); {}",
        slo.metric, f.note
    );
    tput_latency_figure("capacity-tput-latency", &caption, &slo.metric, &pts)
}

#[cfg(test)]
#[path = "capacity_tests.rs"]
mod tests;
