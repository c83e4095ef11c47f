//! A scripted run's report: each declared metric pooled over the completed measured
//! sessions (`<name>.mean`, `.p50` … `.max`, `.min`, `.count`), plus `completed` and
//! `failed`; the terminal table; the JSON result with per-session values.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::script::{MetricDef, Script};
use crate::util::stats;
use crate::workload::catalogue::{Catalogue, Direction, Family};
use crate::workload::{Report, RunRecord, kit};

/// Statistics published for every declared metric.
pub const STATS: [(&str, Option<f64>); 8] = [
    ("mean", None),
    ("min", Some(0.0)),
    ("p50", Some(0.5)),
    ("p90", Some(0.9)),
    ("p95", Some(0.95)),
    ("p99", Some(0.99)),
    ("max", Some(1.0)),
    ("count", None),
];

/// One session's declared metric values (several per metric for windows and `gaps`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionValues {
    /// Metric name → values; an empty list means absent.
    pub values: BTreeMap<String, Vec<f64>>,
    /// Metric measured per mark (not `gaps`) → (windows that gave a value, times the
    /// mark was taken).
    pub turns: BTreeMap<String, (usize, usize)>,
}

/// Every flat name the report can produce.
pub fn metric_names(defs: &[MetricDef]) -> Vec<String> {
    let mut out = vec!["completed".to_string(), "failed".to_string()];
    for d in defs {
        out.extend(STATS.iter().map(|(s, _)| format!("{}.{s}", d.name)));
    }
    out
}

/// Families every scripted result has, whatever it declares (how a result file without a
/// catalogue is read; scripted results always carry theirs).
pub const FAMILIES: &[Family] = &[
    Family::new(
        "completed",
        "sessions",
        Direction::Higher,
        "measured sessions that completed",
    ),
    Family::new(
        "failed",
        "sessions",
        Direction::Lower,
        "measured sessions that failed",
    ),
];
/// Headline metrics every scripted result has.
pub const HEADLINE: &[&str] = &["failed"];

/// The catalogue of a script: one family per declared metric (its unit, direction and
/// description), headed by `headline`'s mean and p99. It declares no unit rate: a
/// script's sessions keep only their declared metrics, no count of messages received, so
/// a scripted sweep shows completed sessions/s alone.
pub fn catalogue(defs: &[MetricDef], headline: &str) -> Catalogue {
    // Families hold `&'static str`: a script's declared names live as long as the process
    // (one small allocation per declared metric and scenario load).
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let mut families = FAMILIES.to_vec();
    for d in defs {
        let direction = match d.lower_is_better {
            Some(true) => Direction::Lower,
            Some(false) => Direction::Higher,
            None => Direction::NotAScore,
        };
        let desc = d.description.clone().unwrap_or_else(|| d.text.clone());
        families.push(Family::new(
            leak(d.name.clone()),
            leak(d.unit.clone()),
            direction,
            leak(desc),
        ));
    }
    let heads = [format!("{headline}.mean"), format!("{headline}.p99")];
    let mut head: Vec<&str> = heads.iter().map(String::as_str).collect();
    head.extend(HEADLINE);
    Catalogue::build(metric_names(defs), &families, &head)
}

/// A finished scripted run.
#[derive(Debug)]
pub struct ScriptedReport {
    generator: Value,
    defs: Vec<MetricDef>,
    pooled: BTreeMap<String, Vec<f64>>,
    sessions: Vec<Value>,
    failures: Vec<(usize, String)>,
    completed: usize,
    duration_s: f64,
    endpoint: String,
    warnings: Vec<String>,
}

/// Pool the measured sessions of `run`.
pub fn build(script: &Script, run: RunRecord<SessionValues>) -> ScriptedReport {
    let mut pooled: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let (mut sessions, mut failures, mut completed) = (Vec::new(), Vec::new(), 0);
    let mut turns: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for s in run.samples.iter().filter(|s| !s.warmup) {
        let vals = s.output.as_ref();
        match &s.outcome {
            Ok(()) => {
                completed += 1;
                for (k, v) in vals.map(|v| &v.values).into_iter().flatten() {
                    pooled.entry(k.clone()).or_default().extend(v);
                }
                for (k, (got, of)) in vals.map(|v| &v.turns).into_iter().flatten() {
                    let t = turns.entry(k).or_default();
                    (t.0, t.1) = (t.0 + got, t.1 + of);
                }
            }
            Err(e) => failures.push((s.idx, e.message.clone())),
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
        pooled,
        sessions,
        failures,
        completed,
        duration_s: run.duration_s,
        endpoint: run.endpoint,
        warnings: super::turns::warnings(&script.metrics, &turns, completed),
    }
}

fn stat(values: &[f64], which: (&str, Option<f64>)) -> Option<f64> {
    match which {
        ("count", _) => Some(values.len() as f64),
        (_, None) => stats::mean(values).ok(),
        (_, Some(q)) => stats::percentile(values, q).ok(),
    }
}

impl ScriptedReport {
    fn values(&self, name: &str) -> &[f64] {
        self.pooled.get(name).map_or(&[], Vec::as_slice)
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
        out.push_str(&format!(
            "{:<24} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
            "metric", "n", "mean", "p50", "p90", "p99", "max"
        ));
        for d in &self.defs {
            let v = self.values(&d.name);
            let cell =
                |q: (&str, Option<f64>)| stat(v, q).map_or("-".to_string(), |x| format!("{x:.2}"));
            let unit = if d.unit.is_empty() {
                String::new()
            } else {
                format!(" ({})", d.unit)
            };
            out.push_str(&format!(
                "{:<24} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
                format!("{}{unit}", d.name),
                v.len(),
                cell(STATS[0]),
                cell(STATS[2]),
                cell(STATS[3]),
                cell(STATS[5]),
                cell(STATS[6]),
            ));
        }
        for (idx, msg) in self.failures.iter().take(10) {
            out.push_str(&format!("sample {idx} failed: {msg}\n"));
        }
        for w in &self.warnings {
            out.push_str(&format!("warning: {w}\n"));
        }
        out
    }

    fn to_json(&self) -> Value {
        let metrics: serde_json::Map<String, Value> = self
            .defs
            .iter()
            .map(|d| {
                let v = self.values(&d.name);
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
                for q in STATS {
                    if let Some(x) = stat(v, q) {
                        m.insert(q.0.into(), json!(x));
                    }
                }
                (d.name.clone(), Value::Object(m))
            })
            .collect();
        let mut rt = self.generator.clone();
        rt["metrics"] = json!(self.metrics());
        rt["samples"] = json!(self.sessions);
        json!({
            "rtload": rt,
            "kind": super::KIND,
            "endpoint": self.endpoint,
            "completed": self.completed,
            "failed": self.failures.len(),
            "duration_s": self.duration_s,
            "metrics": metrics,
            "sessions": self.sessions,
            "warnings": self.warnings,
        })
    }

    fn metrics(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        m.insert("completed".into(), self.completed as f64);
        m.insert("failed".into(), self.failures.len() as f64);
        for d in &self.defs {
            let v = self.values(&d.name);
            for q in STATS {
                if let Some(x) = stat(v, q) {
                    m.insert(format!("{}.{}", d.name, q.0), x);
                }
            }
        }
        m
    }
}
