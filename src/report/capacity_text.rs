//! What `rtload capacity` prints and writes: the one-sentence answer naming what broke
//! first, the per-step evidence table, the live progress lines and `capacity.json`. Pure:
//! every figure comes from the steps' own results.

use serde_json::{Value, json};

use super::{Criteria, Outcome, Phase, Step, Verdict, percent};
use crate::config::sweep::SweepParam;
use crate::report::table::{align, fmt_column};
use crate::workload::outcome::ClassCounts;

/// What every step was judged on, e.g. `good ≥ 99% ([slo] stall_count == 0), no
/// rejections, audio_rtf.p99 < 1`, and a note when no threshold was set.
fn judged(c: &Criteria, steps: &[Step]) -> (String, String) {
    let mut out = format!("good ≥ {}", percent(c.good_share));
    if !c.slo.is_empty() {
        out.push_str(&format!(" ([slo] {})", c.slo.join(", ")));
    }
    out.push_str(", no rejections");
    // The step that judged the most thresholds (a ramp window judges only those with
    // values in it).
    let checks = (steps.iter().map(|s| &s.point.checks[..]))
        .max_by_key(|c| c.len())
        .unwrap_or(&[]);
    for ch in checks {
        out.push_str(&format!(", {} {}", ch.metric, ch.expr));
    }
    // After the criteria's " held": the hold is how the steps ran, not a criterion.
    let mut note = c.hold_s.map_or(String::new(), |h| {
        format!(", each session held {} s", crate::util::textpos::num(h))
    });
    if checks.is_empty() {
        note.push_str("; no [thresholds] set");
    }
    (out, note)
}

/// The reasons of the last step run at `concurrency` that broke, joined by `; `.
fn broke_at(steps: &[Step], concurrency: usize) -> String {
    steps
        .iter()
        .rev()
        .filter(|s| s.concurrency == concurrency)
        .find_map(|s| match &s.verdict {
            Verdict::Breaks(r) => Some(r.join("; ")),
            _ => None,
        })
        .unwrap_or_default()
}

/// The answer in one sentence, e.g. `Capacity: 16 concurrent sessions (good ≥ 99%, no
/// rejections, audio_ttfp_ms.p99 < 300 held); limited by: 3 degraded sessions
/// (stall_count == 0) at 17`.
pub fn sentence(c: &Criteria, steps: &[Step], outcome: &Outcome) -> String {
    let (judged, note) = judged(c, steps);
    match outcome {
        Outcome::Capacity {
            sessions,
            limit: Some(at),
        } => format!(
            "Capacity: {sessions} concurrent sessions ({judged} held{note}); limited by: {} at \
             {at}",
            broke_at(steps, *at)
        ),
        Outcome::Capacity {
            sessions,
            limit: None,
        } => format!(
            "Capacity: at least {sessions} concurrent sessions ({judged} held at the search's \
             --max {sessions}{note}; nothing broke)"
        ),
        Outcome::None { at } => format!(
            "Capacity: none: even {at} concurrent session breaks ({judged}{note}); limited by: \
             {} at {at}",
            broke_at(steps, *at)
        ),
        Outcome::Stopped { at, at_least } => {
            let why = steps
                .iter()
                .rev()
                .find_map(|s| match &s.verdict {
                    Verdict::Inconclusive(w) => Some(w.as_str()),
                    _ => None,
                })
                .unwrap_or("inconclusive");
            let head = match why.strip_prefix("generator-bound") {
                Some(rest) => format!("generator-bound at {at}{rest}"),
                None => format!("inconclusive at {at} ({why})"),
            };
            format!(
                "Capacity: not found: {head}: the capacity is at least {at_least} ({judged}{note})"
            )
        }
    }
}

/// A step's verdict cell: `holds`, `breaks: …`, `inconclusive: …`.
fn verdict_cell(v: &Verdict) -> String {
    match v {
        Verdict::Holds => "holds".into(),
        Verdict::Breaks(r) => format!("breaks: {}", r.join("; ")),
        Verdict::Inconclusive(w) => format!("inconclusive: {w}"),
    }
}

/// The per-step evidence table, header row first: step, phase, concurrency, the
/// sessions of each class, each judged metric's measured value, the verdict (the
/// terminal aligns it, the HTML page draws it).
pub fn table_rows(steps: &[Step]) -> Vec<Vec<String>> {
    let metrics: Vec<String> = crate::report::sweep::judged_metrics(
        &steps.iter().map(|s| s.point.clone()).collect::<Vec<_>>(),
    );
    let mut head: Vec<String> = ["step", "phase", "max_concurrency"]
        .iter()
        .chain(&["good", "degraded", "rejected", "failed"])
        .map(|s| s.to_string())
        .collect();
    head.extend(metrics.iter().cloned());
    head.push("verdict".into());
    let columns: Vec<Vec<String>> = metrics
        .iter()
        .map(|m| {
            let values: Vec<Option<f64>> = steps
                .iter()
                .map(|s| s.point.checks.iter().find(|ch| &ch.metric == m))
                .map(|ch| ch.and_then(|ch| ch.measured))
                .collect();
            fmt_column(&values)
        })
        .collect();
    let mut rows = vec![head];
    for (i, s) in steps.iter().enumerate() {
        let k = &s.classes;
        let mut row: Vec<String> = vec![(i + 1).to_string(), s.phase.name().into()];
        for n in [s.concurrency, k.good, k.degraded, k.rejected, k.failed] {
            row.push(n.to_string());
        }
        row.extend(columns.iter().map(|col| col[i].clone()));
        row.push(verdict_cell(&s.verdict));
        rows.push(row);
    }
    rows
}

/// The sentence, then the per-step evidence table ([`table_rows`]).
pub fn render(c: &Criteria, steps: &[Step], outcome: &Outcome) -> String {
    let rows = table_rows(steps);
    let mut left = vec![true, true];
    left.resize(rows[0].len() - 1, false);
    left.push(true);
    format!("{}\n\n{}", sentence(c, steps, outcome), align(&rows, &left))
}

/// The line that starts a `--ramp` search's staircase run.
pub fn ramp_line(steps: crate::workload::plan::Steps, max: usize) -> String {
    let n = max.div_ceil(steps.sessions.max(1));
    format!(
        "ramp: {} more sessions every {} s up to {max} ({n} steps in one run, each session \
held to the last step's end) …",
        steps.sessions,
        crate::util::textpos::num(steps.every_s)
    )
}

/// A live progress line: step `index` (from 1) starting (`step 3: max_concurrency=4
/// (staircase) …`) or finished with its classes and verdict.
pub fn progress_line(
    index: usize,
    phase: Phase,
    concurrency: usize,
    done: Option<&Step>,
) -> String {
    let head = format!(
        "step {index}: max_concurrency={concurrency} ({})",
        phase.name()
    );
    match done {
        None => format!("{head} …"),
        Some(s) => format!(
            "{head} {}: {}",
            s.classes.render(),
            verdict_cell(&s.verdict)
        ),
    }
}

/// `capacity.json`: `{"capacity": {"scenario", "criteria": {"good_share", "slo",
/// "no_rejections", "thresholds"}, "search": {"start", "max", "ramp": {"sessions", "every_s"} or null},
/// "steps": [{"phase" (`ramp`: a window of the one staircase run, `staircase`,
/// `bisect`, `confirm`),
/// "max_concurrency", "outcomes", "thresholds", "generator_bound", "reached",
/// "achieved_concurrency", "verdict", "reasons", "result"}], "answer" (or null),
/// "at_least" (a stopped search's lower bound, or null), "limited_by": {"max_concurrency",
/// "reasons"} (or null), "sentence" (or null when a signal stopped the search)}}`.
pub fn capacity_json(
    scenario: &str,
    c: &Criteria,
    bounds: super::Bounds,
    steps: &[Step],
    outcome: Option<&Outcome>,
) -> Value {
    let steps_json: Vec<Value> = steps.iter().map(step_json).collect();
    let (answer, at_least, limit) = match outcome {
        Some(&Outcome::Capacity { sessions, limit }) => (Some(sessions), None, limit),
        Some(&Outcome::None { at }) => (None, None, Some(at)),
        Some(&Outcome::Stopped { at_least, .. }) => (None, Some(at_least), None),
        None => (None, None, None),
    };
    let limited_by = limit.map(|at| {
        let reasons = steps
            .iter()
            .rev()
            .filter(|s| s.concurrency == at)
            .find_map(|s| match &s.verdict {
                Verdict::Breaks(r) => Some(r.clone()),
                _ => None,
            })
            .unwrap_or_default();
        json!({"max_concurrency": at, "reasons": reasons})
    });
    let thresholds: Vec<String> = steps
        .first()
        .map(|s| {
            s.point
                .checks
                .iter()
                .map(|ch| format!("{} {}", ch.metric, ch.expr))
                .collect()
        })
        .unwrap_or_default();
    json!({"capacity": {
        "scenario": scenario,
        "criteria": {
            "good_share": c.good_share,
            "slo": c.slo,
            "no_rejections": true,
            "hold_s": c.hold_s,
            "thresholds": thresholds,
        },
        "search": {
            "start": bounds.start,
            "max": bounds.max,
            "ramp": bounds.ramp.map(|r| json!({"sessions": r.sessions, "every_s": r.every_s})),
        },
        "steps": steps_json,
        "answer": answer,
        "at_least": at_least,
        "limited_by": limited_by,
        "sentence": outcome.map(|o| sentence(c, steps, o)),
    }})
}

/// A step: the fields of a sweep point ([`crate::report::sweep::point_json`]: its
/// metrics, thresholds, sessions/s, …) plus the search's own.
fn step_json(s: &Step) -> Value {
    let (verdict, reasons) = match &s.verdict {
        Verdict::Holds => ("holds", Vec::new()),
        Verdict::Breaks(r) => ("breaks", r.clone()),
        Verdict::Inconclusive(w) => ("inconclusive", vec![w.clone()]),
    };
    let mut v = crate::report::sweep::point_json(SweepParam::MaxConcurrency, &s.point);
    if let Some(obj) = v.as_object_mut() {
        let own = json!({
            "phase": s.phase.name(),
            "max_concurrency": s.concurrency,
            "outcomes": s.classes.to_json(),
            "slo_broken": s.slo_broken,
            "verdict": verdict,
            "reasons": reasons,
            "result": s.file,
        });
        if let Value::Object(own) = own {
            obj.extend(own);
        }
    }
    v
}

/// A search read back from [`capacity_json`]'s shape (for the HTML page).
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The scenario's name.
    pub scenario: String,
    /// What the steps were judged on.
    pub criteria: Criteria,
    /// The steps, in the order run.
    pub steps: Vec<Step>,
    /// How the search ended; `None` when a signal stopped it first.
    pub outcome: Option<Outcome>,
    /// The sentence `rtload capacity` printed, as recorded.
    pub sentence: Option<String>,
    /// A signal stopped the search (`interrupted: true`).
    pub interrupted: bool,
}

/// Read a search back from `doc` (`{"capacity": {...}}`); `None` without a readable
/// `capacity.steps`. A step without a readable `max_concurrency` or phase is skipped.
pub fn from_json(doc: &Value) -> Option<Recorded> {
    let cap = doc.get("capacity")?;
    let steps: Vec<Step> = cap
        .get("steps")?
        .as_array()?
        .iter()
        .filter_map(step_from_json)
        .collect();
    let n = |k: &str| cap.get(k).and_then(Value::as_u64).map(|n| n as usize);
    let limit = cap
        .pointer("/limited_by/max_concurrency")
        .and_then(Value::as_u64)
        .map(|n| n as usize);
    let outcome = match (n("answer"), n("at_least"), limit) {
        (Some(sessions), _, limit) => Some(Outcome::Capacity { sessions, limit }),
        (None, Some(at_least), _) => steps.last().map(|s| Outcome::Stopped {
            at: s.concurrency,
            at_least,
        }),
        (None, None, Some(at)) => Some(Outcome::None { at }),
        _ => None,
    };
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| Some(s.as_str()?.to_string()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let criteria = Criteria {
        good_share: cap
            .pointer("/criteria/good_share")
            .and_then(Value::as_f64)
            .unwrap_or(1.0),
        slo: strings(cap.pointer("/criteria/slo")),
        hold_s: cap.pointer("/criteria/hold_s").and_then(Value::as_f64),
    };
    Some(Recorded {
        scenario: cap
            .get("scenario")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .into(),
        criteria,
        steps,
        outcome,
        sentence: cap
            .get("sentence")
            .and_then(Value::as_str)
            .map(str::to_string),
        interrupted: cap.get("interrupted").and_then(Value::as_bool) == Some(true),
    })
}

fn step_from_json(v: &Value) -> Option<Step> {
    let concurrency = v.get("max_concurrency")?.as_u64()? as usize;
    let phase = Phase::from_name(v.get("phase")?.as_str()?)?;
    let mut with_value = v.clone();
    with_value["value"] = json!(concurrency);
    let point = crate::report::sweep::point_from_json(&with_value)?;
    let reasons: Vec<String> = v
        .get("reasons")
        .and_then(|r| serde_json::from_value(r.clone()).ok())
        .unwrap_or_default();
    let verdict = match v.get("verdict").and_then(Value::as_str) {
        Some("holds") => Verdict::Holds,
        Some("breaks") => Verdict::Breaks(reasons),
        _ => Verdict::Inconclusive(reasons.join("; ")),
    };
    Some(Step {
        phase,
        concurrency,
        classes: ClassCounts::from_json(v.get("outcomes").unwrap_or(&Value::Null)),
        point,
        slo_broken: v
            .get("slo_broken")
            .and_then(|r| serde_json::from_value(r.clone()).ok())
            .unwrap_or_default(),
        verdict,
        file: v
            .get("result")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .into(),
    })
}
