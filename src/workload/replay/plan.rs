//! What a replay sends and expects, made from recorded sessions (pure). Each recorded
//! client message becomes a [`Send`] at its offset from the session's open: its recorded
//! intended time when the recorded client scheduled it (so the original's lateness is
//! not replayed on top of the replay's own), else the moment it was written, and never
//! before the message recorded ahead of it (the recorded order is kept). The first
//! server message recorded after a run of client messages is the reply the last of them
//! expects, which declares the pair metric `replay_<request>_to_<reply>_ms`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::workload::Outbound;

/// What a recorded event was.
#[derive(Debug, Clone, PartialEq)]
pub enum What {
    /// The upgrade completed (the session's time origin).
    Open,
    /// A message: its label (see [`label`]) and, for a client message, its bytes.
    Message {
        /// The JSON `type`, else `text` or `binary`.
        label: String,
        /// What the client sent (`None` for a server message).
        payload: Option<Outbound>,
    },
    /// A close, either side.
    Close,
}

/// One recorded event, as the composition root hands it over.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedEvent {
    /// Seconds on the recording's clock.
    pub t_s: f64,
    /// When the recorded client's schedule meant a scheduled message to leave (same
    /// clock); `None` for a reactive one.
    pub intended_s: Option<f64>,
    /// Written by the recorded client (`dir: out`), else by the server.
    pub from_client: bool,
    /// What it was.
    pub what: What,
}

/// One recorded measured session.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedSession {
    /// Its session file (for messages about it).
    pub name: String,
    /// Its events, in the order they happened.
    pub events: Vec<RecordedEvent>,
}

/// A message's label: its JSON `type` when it has one, else `text` or `binary`.
pub fn label(ty: Option<&str>, binary: bool) -> String {
    match ty {
        Some(t) => t.to_string(),
        None if binary => "binary".into(),
        None => "text".into(),
    }
}

/// `label` as part of a metric name: lower-case letters, digits and single `_`.
pub fn sanitize(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    for c in label.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let t = out.trim_matches('_');
    if t.is_empty() {
        "untyped".into()
    } else {
        t.into()
    }
}

/// A request type and the reply type the recording answered it with.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// `replay_<request>_to_<reply>_ms` (sanitized; `_2`… when two pairs sanitize alike).
    pub metric: String,
    /// The client message's label.
    pub request: String,
    /// The server reply's label.
    pub reply: String,
}

/// One client message to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Send {
    /// From the session's open.
    pub offset: Duration,
    /// The recorded bytes.
    pub msg: Outbound,
    /// The pair (index into [`Plan::pairs`]) whose reply this message expects.
    pub expects: Option<usize>,
}

/// One session to replay.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionPlan {
    /// The recorded session file.
    pub name: String,
    /// Client messages, by offset.
    pub sends: Vec<Send>,
    /// Open → the recording's last event of the session.
    pub duration: Duration,
}

/// Everything a replay run sends and measures.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    /// The sessions, in recorded order.
    pub sessions: Vec<Arc<SessionPlan>>,
    /// The declared pairs.
    pub pairs: Vec<Pair>,
    /// Every server message label in the recording, sorted.
    pub replies: Vec<String>,
}

impl Plan {
    /// The plan of `sessions`; sessions that never opened are left out. An error when
    /// none is left or a client message has no payload.
    pub fn build(sessions: &[RecordedSession]) -> Result<Plan, String> {
        let mut plan = Plan::default();
        let mut replies = std::collections::BTreeSet::new();
        let mut pair_ix: BTreeMap<(String, String), usize> = BTreeMap::new();
        for s in sessions {
            let Some(t0) = s
                .events
                .iter()
                .find(|e| e.what == What::Open)
                .map(|e| e.t_s)
            else {
                continue;
            };
            let (mut sends, mut last_out): (Vec<Send>, Option<(usize, &str)>) = (vec![], None);
            let mut end = t0;
            for e in &s.events {
                end = end.max(e.t_s);
                let What::Message { label, payload } = &e.what else {
                    continue;
                };
                if e.from_client {
                    let msg = payload.clone().ok_or_else(|| {
                        format!("{}: a client message without its payload", s.name)
                    })?;
                    // Never before the message recorded ahead of it: the order is kept.
                    let at = e.intended_s.unwrap_or(e.t_s);
                    let offset = Duration::from_secs_f64((at - t0).max(0.0));
                    let offset = sends.last().map_or(offset, |p: &Send| offset.max(p.offset));
                    sends.push(Send {
                        offset,
                        msg,
                        expects: None,
                    });
                    last_out = Some((sends.len() - 1, label));
                    continue;
                }
                replies.insert(label.clone());
                if let Some((i, request)) = last_out.take() {
                    let n = plan.pairs.len();
                    let key = (request.to_string(), label.clone());
                    let ix = *pair_ix.entry(key).or_insert(n);
                    if ix == n {
                        plan.pairs.push(plan.new_pair(request, label));
                    }
                    sends[i].expects = Some(ix);
                }
            }
            plan.sessions.push(Arc::new(SessionPlan {
                name: s.name.clone(),
                sends,
                duration: Duration::from_secs_f64((end - t0).max(0.0)),
            }));
        }
        if plan.sessions.is_empty() {
            return Err(
                "the recording has no measured session that opened: record a run \
whose sessions connected (rtload run SCENARIO --record DIR)"
                    .into(),
            );
        }
        plan.replies = replies.into_iter().collect();
        Ok(plan)
    }

    /// The pair `request` → `reply` with a metric name no earlier pair has.
    fn new_pair(&self, request: &str, reply: &str) -> Pair {
        let base = format!("replay_{}_to_{}_ms", sanitize(request), sanitize(reply));
        let taken = |m: &str| self.pairs.iter().any(|p| p.metric == m);
        let metric = (1..)
            .map(|i| match i {
                1 => base.clone(),
                i => format!("{}_{i}_ms", base.trim_end_matches("_ms")),
            })
            .find(|m| !taken(m))
            .unwrap_or(base);
        Pair {
            metric,
            request: request.into(),
            reply: reply.into(),
        }
    }

    /// The count metric of replies labelled `label`.
    pub fn reply_metric(label: &str) -> String {
        format!("replay_replies_{}", sanitize(label))
    }
}
