//! A scripted run's report: each declared metric pooled over the completed measured
//! sessions (`<name>.mean`, `.p50` … `.max`, `.min`, `.count`), plus `completed` and
//! `failed`; the terminal table; the JSON result with per-session values.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::script::{MetricDef, Script};
use crate::workload::catalogue::{Catalogue, Direction, Family, Merge, chart};
use crate::workload::results::Recorded;
use crate::workload::{Report, RunRecord, kit};

/// One session's declared metric values (several per metric for windows and `gaps`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionValues {
    /// Metric name → values; an empty list means absent.
    pub values: BTreeMap<String, Vec<f64>>,
    /// Metric measured per mark (not `gaps`) → (windows that gave a value, times the
    /// mark was taken).
    pub turns: BTreeMap<String, (usize, usize)>,
}

/// Families every scripted result has, whatever it declares (how a result file without a
/// catalogue is read; scripted results always carry theirs).
pub const FAMILIES: &[Family] = &[
    Family::new(
        "completed",
        "sessions",
        Direction::Higher,
        "measured sessions that completed",
    )
    .origin("measured sessions that ran every step without a failure")
    .merged(Merge::Sum),
    Family::new(
        "failed",
        "sessions",
        Direction::Lower,
        "measured sessions that failed",
    )
    .origin("measured sessions whose outcome was a failure")
    .merged(Merge::Sum),
];
/// Headline metrics every scripted result has.
pub const HEADLINE: &[&str] = &["failed"];

/// The family of one declared metric: a distribution of its values, described by its
/// expression (the expression is its measurement origin).
fn family(d: &MetricDef) -> Family<'_> {
    let direction = match d.lower_is_better {
        Some(true) => Direction::Lower,
        Some(false) => Direction::Higher,
        None => Direction::NotAScore,
    };
    Family {
        prefix: &d.name,
        unit: &d.unit,
        direction,
        description: d.description.as_deref().unwrap_or(&d.text),
        origin: &d.text,
        merge: Merge::Distribution,
    }
}

/// The catalogue of a script: one distribution family per declared metric (its unit,
/// direction and description; its expression as the origin), headed by `headline`'s
/// mean and p99. It declares no unit rate: a script's sessions keep only their declared
/// metrics, no count of messages received, so a scripted sweep shows completed
/// sessions/s alone.
pub fn catalogue(defs: &[MetricDef], headline: &str) -> Catalogue {
    let mut families = FAMILIES.to_vec();
    families.extend(defs.iter().map(family));
    Catalogue::declared(&families, headline, HEADLINE)
}

/// A finished scripted run.
#[derive(Debug)]
pub struct ScriptedReport {
    generator: Value,
    defs: Vec<MetricDef>,
    recorded: Recorded,
    sessions: Vec<Value>,
    timeline: Vec<chart::TimelineRow>,
    failures: Vec<(usize, String)>,
    completed: usize,
    duration_s: f64,
    endpoint: String,
    warnings: Vec<String>,
}

/// Pool the measured sessions of `run`.
pub fn build(script: &Script, run: RunRecord<SessionValues>) -> ScriptedReport {
    let mut recorded = Recorded::default();
    for d in &script.metrics {
        recorded.declare(&d.name, &d.unit);
    }
    let (mut sessions, mut failures, mut completed) = (Vec::new(), Vec::new(), 0);
    let mut turns: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut timeline = Vec::new();
    for s in run.samples.iter().filter(|s| !s.warmup) {
        timeline.push(chart::timeline_row(s, vec![chart::queue_span(s)]));
        let vals = s.output.as_ref();
        match &s.outcome {
            Ok(()) => {
                completed += 1;
                for (k, v) in vals.map(|v| &v.values).into_iter().flatten() {
                    recorded.extend(k, s.ended_s, v.iter().copied());
                }
                for (k, (got, of)) in vals.map(|v| &v.turns).into_iter().flatten() {
                    let t = turns.entry(k).or_default();
                    (t.0, t.1) = (t.0 + got, t.1 + of);
                }
            }
            Err(e) => failures.push((s.session.unwrap_or(s.idx), e.message.clone())),
        }
        let mut row = kit::sample_row(s);
        row.insert("values".into(), json!(vals.map(|v| &v.values)));
        sessions.push(Value::Object(row));
    }
    let generator = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "workload": super::KIND,
        "duration_s": run.duration_s,
        "failed_sessions": failures.len(),
    });
    ScriptedReport {
        generator,
        defs: script.metrics.clone(),
        recorded,
        sessions,
        timeline,
        failures,
        completed,
        duration_s: run.duration_s,
        endpoint: run.endpoint,
        warnings: super::turns::warnings(&script.metrics, &turns, completed),
    }
}

impl Report for ScriptedReport {
    fn render_text(&self) -> String {
        let mut out = format!(
            "scripted run against {}: {} completed, {} failed, {:.2} s\n",
            self.endpoint,
            self.completed,
            self.failures.len(),
            self.duration_s
        );
        let rows = self.defs.iter().map(|d| {
            let unit = if d.unit.is_empty() {
                String::new()
            } else {
                format!(" ({})", d.unit)
            };
            (format!("{}{unit}", d.name), self.recorded.summary(&d.name))
        });
        out.push_str(&kit::stats_table(24, "metric", &[50.0, 90.0, 99.0], rows));
        for line in kit::failure_lines(&self.failures, 10, "failed ") {
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    fn to_json(&self) -> Value {
        let metrics: serde_json::Map<String, Value> = self
            .defs
            .iter()
            .map(|d| {
                let mut m = serde_json::Map::new();
                m.insert("expr".into(), json!(d.text));
                m.insert("unit".into(), json!(d.unit));
                m.insert(
                    "better".into(),
                    json!(match d.lower_is_better {
                        Some(true) => "lower",
                        Some(false) => "higher",
                        None => "none",
                    }),
                );
                if let Some(desc) = &d.description {
                    m.insert("description".into(), json!(desc));
                }
                if let Some(s) = self.recorded.summary(&d.name) {
                    for (stat, x) in s.stats() {
                        m.insert(stat, json!(x));
                    }
                }
                (d.name.clone(), Value::Object(m))
            })
            .collect();
        let mut rt = self.generator.clone();
        rt["metrics"] = json!(self.metrics());
        rt["samples"] = json!(self.sessions);
        rt[chart::TIMELINE_KEY] = json!(self.timeline);
        json!({
            "rtload": rt,
            "kind": super::KIND,
            "endpoint": self.endpoint,
            "completed": self.completed,
            "failed": self.failures.len(),
            "duration_s": self.duration_s,
            "metrics": metrics,
            "sessions": self.sessions,
        })
    }

    fn recorded(&self) -> &Recorded {
        &self.recorded
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn scalars(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        m.insert("completed".into(), self.completed as f64);
        m.insert("failed".into(), self.failures.len() as f64);
        m
    }
}
