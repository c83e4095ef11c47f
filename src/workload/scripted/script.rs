//! The parsed script: the flat list of steps a session walks (a `repeat` is unrolled at
//! load, each step knowing its turn and where that turn ends), the `fail_on` patterns,
//! named events and declared metrics. Pure data, built by [`super::parse`], walked by
//! [`super::interp`].

use std::collections::BTreeMap;
use std::time::Duration;

use crate::util::jsonmatch::Matcher;
use crate::util::pacing::PacingMode;
use crate::util::template::Template;

use super::metric::{Expr, Kind};

/// Variables every template may use.
pub const SESSION_VARS: &[&str] = &[
    "model",
    "sample_index",
    "session_id",
    "uuid",
    "turn",
    "sample_rate",
];
/// Variables only a `stream` wrapper may use.
pub const CHUNK_VARS: &[&str] = &["chunk_b64", "chunk_index", "chunk_ms", "audio_end_ms"];
/// Prefix of dataset item fields (`${item.text}`).
pub const ITEM_PREFIX: &str = "item.";

/// How a `send` step's template becomes a frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// A JSON message (text frame).
    Json(Template),
    /// A text frame from a string template.
    Text(Template),
    /// A binary frame: the string template renders base64, sent decoded.
    Binary(Template),
}

/// How a `stream` step frames each chunk.
#[derive(Debug, Clone, PartialEq)]
pub enum ChunkFrame {
    /// Each chunk wrapped in a JSON message (text frame).
    Json(Template),
    /// Each chunk as a raw binary frame of PCM bytes.
    Binary,
}

/// One step.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Send one message.
    Send(Payload),
    /// Stream the sample's audio in paced chunks.
    Stream {
        /// Framing.
        frame: ChunkFrame,
        /// Chunk length, ms of audio.
        chunk_ms: u32,
        /// Placement in time.
        pacing: PacingMode,
    },
    /// Wait for a matching inbound message.
    Await {
        /// What to wait for.
        matcher: Matcher,
        /// Records matches under this event name for metrics.
        name: Option<String>,
        /// Give up after this long.
        timeout: Duration,
        /// Keep collecting matches until the timeout (or `until`).
        collect: bool,
        /// With `collect`: stop (successfully) at the first message matching this.
        until: Option<Matcher>,
        /// Also see messages that arrived since this mark was last taken (else only
        /// those that arrive after the step starts).
        since: Option<String>,
    },
    /// Record a named timestamp.
    Mark(String),
    /// Do nothing for this long (e.g. let a reply play before speaking over it).
    Wait(Duration),
}

/// One step with its position in the repeat structure.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// What to do.
    pub action: Action,
    /// 0-based iteration of the innermost enclosing `repeat` (0 outside any).
    pub turn: u32,
    /// How many steps after this one belong to the same turn (the same iteration of the
    /// innermost enclosing `repeat`); `None` outside any `repeat`.
    pub turn_rest: Option<u32>,
}

/// A declared metric.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricDef {
    /// The catalogue name, e.g. `ttft_ms`.
    pub name: String,
    /// The expression as written.
    pub text: String,
    /// The parsed expression.
    pub expr: Expr,
    /// What it yields.
    pub kind: Kind,
    /// Unit shown in reports (`ms` for durations unless declared).
    pub unit: String,
    /// `Some(true)` = lower is better, `Some(false)` = higher, `None` = no direction.
    pub lower_is_better: Option<bool>,
    /// One line for reports, when given.
    pub description: Option<String>,
    /// Window anchor mark (`per = "turn_start"`), overriding the expression's first mark.
    pub per: Option<String>,
}

impl MetricDef {
    /// This metric's values for one session's record, with its window counts.
    pub fn eval(&self, rec: &super::metric::Record) -> super::metric::Values {
        self.expr.eval_per(rec, self.per.as_deref())
    }

    /// The mark whose windows this metric is measured in, if any.
    pub fn anchor(&self) -> Option<&str> {
        self.per.as_deref().or_else(|| self.expr.anchor())
    }
}

/// A whole script.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Script {
    /// Steps in execution order.
    pub steps: Vec<Step>,
    /// Any inbound message matching one of these ends the session as failed.
    pub fail_on: Vec<Matcher>,
    /// Named event patterns recorded all session long (`[workload.events]`).
    pub events: Vec<(String, Matcher)>,
    /// Declared metrics in file order.
    pub metrics: Vec<MetricDef>,
    /// Whole-session limit.
    pub timeout: Duration,
    /// Mark step index → the `await` steps with `since` that read that mark (the ones
    /// after it, before the same mark is taken again).
    pub watchers: BTreeMap<usize, Vec<usize>>,
}

impl Script {
    /// Names of events the metrics read, each resolved once: declared events and named
    /// awaits are recorded by their patterns, anything else by message `type`.
    pub fn wanted_types(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for m in &self.metrics {
            for e in m.expr.events() {
                let declared = self.events.iter().any(|(n, _)| n == e)
                    || self.steps.iter().any(
                        |s| matches!(&s.action, Action::Await { name: Some(n), .. } if n == e),
                    );
                if !declared && !out.iter().any(|o| o == e) {
                    out.push(e.to_string());
                }
            }
        }
        out
    }

    /// The (event, field) pairs the metrics read values of (`lag`, `repeats`,
    /// `descents`), each once.
    pub fn field_reads(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for m in &self.metrics {
            for (e, f) in m.expr.fields() {
                if !out.iter().any(|(oe, of)| oe == e && of == f) {
                    out.push((e.to_string(), f.to_string()));
                }
            }
        }
        out
    }

    /// Link each `await` with `since` to the mark step it reads (the latest one before
    /// it); the parser has checked that one exists.
    pub fn link_since(&mut self) {
        let mut latest: BTreeMap<&str, usize> = BTreeMap::new();
        let mut watchers: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (i, step) in self.steps.iter().enumerate() {
            match &step.action {
                Action::Mark(m) => {
                    latest.insert(m, i);
                }
                Action::Await { since: Some(m), .. } => {
                    if let Some(&at) = latest.get(m.as_str()) {
                        watchers.entry(at).or_default().push(i);
                    }
                }
                _ => {}
            }
        }
        self.watchers = watchers;
    }

    /// Whether any step streams audio (then a dataset is required).
    pub fn streams(&self) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(s.action, Action::Stream { .. }))
    }
}
