//! A replay run's report: each pair metric (`replay_<x>_to_<y>_ms`) pooled over the
//! completed measured sessions, the replies of each recorded label and the missing
//! replies summed over every measured session, `completed` and `failed`; the terminal
//! table; the JSON result with per-session values.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::plan::Plan;
use super::session::ReplayValues;
use crate::workload::catalogue::{Catalogue, Direction, Family, Merge, chart};
use crate::workload::results::Recorded;
use crate::workload::{Report, RunRecord, kit};

/// Families every replay result has, whatever the recording declares.
pub const FAMILIES: &[Family] = &[
    Family::new(
        "completed",
        "sessions",
        Direction::Higher,
        "measured sessions that replayed every message and got every expected reply",
    )
    .origin("measured sessions whose outcome was good")
    .merged(Merge::Sum),
    Family::new(
        "failed",
        "sessions",
        Direction::Lower,
        "measured sessions that failed",
    )
    .origin("measured sessions whose outcome was a failure")
    .merged(Merge::Sum),
    Family::new(
        "replay_missing_replies",
        "messages",
        Direction::Lower,
        "expected replies that never came",
    )
    .origin("client messages whose recorded first reply type never arrived live after their send, over every measured session")
    .merged(Merge::Sum),
];
/// Headline metrics every replay result has.
pub const HEADLINE: &[&str] = &["failed", "replay_missing_replies"];

/// The catalogue of a replay plan: one distribution per pair, one count per reply label,
/// headed by `headline`'s mean and p99.
pub fn catalogue(plan: &Plan, headline: &str) -> Catalogue {
    let origins: Vec<(String, String, String)> = plan
        .pairs
        .iter()
        .map(|p| {
            (
                p.metric.clone(),
                format!("`{}` → first `{}` after it", p.request, p.reply),
                format!(
                    "intended send of a `{}` (open + its recorded offset) → receipt of the \
first `{}` after it",
                    p.request, p.reply
                ),
            )
        })
        .collect();
    let counts: Vec<(String, String)> = plan
        .replies
        .iter()
        .map(|r| (Plan::reply_metric(r), format!("`{r}` messages received")))
        .collect();
    let mut families = FAMILIES.to_vec();
    families.extend(
        origins
            .iter()
            .map(|(m, d, o)| Family::new(m, "ms", Direction::Lower, d).origin(o).dist()),
    );
    families.extend(counts.iter().map(|(m, d)| {
        Family::new(m, "messages", Direction::NotAScore, d)
            .origin("server messages of this type received, over every measured session")
            .merged(Merge::Sum)
    }));
    Catalogue::declared(&families, headline, HEADLINE)
}

/// A finished replay run.
#[derive(Debug)]
pub struct ReplayReport {
    pairs: Vec<(String, String, String)>,
    recorded: Recorded,
    scalars: BTreeMap<String, f64>,
    sessions: Vec<Value>,
    timeline: Vec<chart::TimelineRow>,
    failures: Vec<(usize, String)>,
    completed: usize,
    duration_s: f64,
    endpoint: String,
}

/// Pool the measured sessions of `run`.
pub fn build(plan: &Plan, run: RunRecord<ReplayValues>) -> ReplayReport {
    let mut recorded = Recorded::default();
    let mut scalars: BTreeMap<String, f64> = BTreeMap::new();
    for p in &plan.pairs {
        recorded.declare(&p.metric, "ms");
    }
    for r in &plan.replies {
        scalars.insert(Plan::reply_metric(r), 0.0);
    }
    let (mut sessions, mut failures, mut completed, mut missing) = (vec![], vec![], 0, 0);
    let mut timeline = Vec::new();
    for s in run.samples.iter().filter(|s| !s.warmup) {
        timeline.push(chart::timeline_row(s, vec![chart::queue_span(s)]));
        let vals = s.output.as_ref();
        if let Some(v) = vals {
            missing += v.missing;
            for (label, n) in &v.replies {
                let key = Plan::reply_metric(label);
                if let Some(x) = scalars.get_mut(&key) {
                    *x += *n as f64;
                }
            }
        }
        match &s.outcome {
            Ok(()) => {
                completed += 1;
                for (k, v) in vals.map(|v| &v.latencies).into_iter().flatten() {
                    recorded.extend(k, s.ended_s, v.iter().copied());
                }
            }
            Err(e) => failures.push((s.session.unwrap_or(s.idx), e.message.clone())),
        }
        let mut row = kit::sample_row(s);
        row.insert("latencies_ms".into(), json!(vals.map(|v| &v.latencies)));
        row.insert("replies".into(), json!(vals.map(|v| &v.replies)));
        row.insert("missing_replies".into(), json!(vals.map(|v| v.missing)));
        sessions.push(Value::Object(row));
    }
    scalars.insert("completed".into(), completed as f64);
    scalars.insert("failed".into(), failures.len() as f64);
    scalars.insert("replay_missing_replies".into(), missing as f64);
    ReplayReport {
        pairs: (plan.pairs.iter())
            .map(|p| (p.metric.clone(), p.request.clone(), p.reply.clone()))
            .collect(),
        recorded,
        scalars,
        sessions,
        timeline,
        failures,
        completed,
        duration_s: run.duration_s,
        endpoint: run.endpoint,
    }
}

impl Report for ReplayReport {
    fn render_text(&self) -> String {
        let mut out = format!(
            "replay against {}: {} completed, {} failed, {} expected replies missing, {:.2} s\n",
            self.endpoint,
            self.completed,
            self.failures.len(),
            self.scalars["replay_missing_replies"],
            self.duration_s
        );
        let rows = (self.pairs.iter()).map(|(m, ..)| (m.clone(), self.recorded.summary(m)));
        out.push_str(&kit::stats_table(48, "pair (ms)", &[50.0, 99.0], rows));
        for line in kit::failure_lines(&self.failures, 10, "failed ") {
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    fn to_json(&self) -> Value {
        let pairs: serde_json::Map<String, Value> = (self.pairs.iter())
            .map(|(m, x, y)| (m.clone(), json!({"request": x, "reply": y, "unit": "ms"})))
            .collect();
        let mut rt = json!({
            "version": env!("CARGO_PKG_VERSION"),
            "workload": super::KIND,
            "duration_s": self.duration_s,
            "failed_sessions": self.failures.len(),
            "metrics": self.metrics(),
            "samples": self.sessions,
        });
        rt[chart::TIMELINE_KEY] = json!(self.timeline);
        json!({
            "rtload": rt,
            "kind": super::KIND,
            "endpoint": self.endpoint,
            "completed": self.completed,
            "failed": self.failures.len(),
            "duration_s": self.duration_s,
            "pairs": pairs,
            "sessions": self.sessions,
        })
    }

    fn recorded(&self) -> &Recorded {
        &self.recorded
    }

    fn scalars(&self) -> BTreeMap<String, f64> {
        self.scalars.clone()
    }
}
