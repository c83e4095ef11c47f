//! One replayed session as a sans-IO state machine: each recorded client message is sent
//! at open + its recorded offset (that is its intended time; the engine's sender records
//! the lateness), every reply is counted by label, and each message that expects a reply
//! gets the latency from its intended send to the first live reply of that label after
//! it. Done once every message is sent, every expected reply came and the recorded
//! session's length has passed; failed when an expected reply is still missing at that
//! length plus the grace, or when the server closes first.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::plan::{Pair, SessionPlan};
use crate::workload::{Effects, FailureKind, Inbound, Session};

/// One session's measurements.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReplayValues {
    /// Pair metric → latencies (ms) of the replies that came.
    pub latencies: BTreeMap<String, Vec<f64>>,
    /// Reply label → messages of that label received.
    pub replies: BTreeMap<String, u64>,
    /// Expected replies that never came (messages never sent included).
    pub missing: u64,
}

/// One sample replaying one recorded session.
#[derive(Debug)]
pub struct ReplaySession {
    plan: Arc<SessionPlan>,
    pairs: Arc<[Pair]>,
    grace: Duration,
    open: Option<Instant>,
    next: usize,
    /// Sent messages still waiting for their reply: (pair, intended send time).
    pending: Vec<(usize, Instant)>,
    out: ReplayValues,
}

impl ReplaySession {
    /// A session replaying `plan`; `grace` is how long past the recorded length it waits
    /// for missing replies.
    pub fn new(plan: Arc<SessionPlan>, pairs: Arc<[Pair]>, grace: Duration) -> Self {
        Self {
            plan,
            pairs,
            grace,
            open: None,
            next: 0,
            pending: Vec::new(),
            out: ReplayValues::default(),
        }
    }

    /// Sends every message due by `now`, each with its intended time.
    fn send_due(&mut self, open: Instant, now: Instant, fx: &mut Effects) {
        while let Some(s) = self.plan.sends.get(self.next) {
            let intended = open + s.offset;
            if intended > now {
                break;
            }
            fx.send(s.msg.clone(), Some(intended));
            if let Some(p) = s.expects {
                self.pending.push((p, intended));
            }
            self.next += 1;
        }
    }

    /// Ends the session when it is done or out of time; else asks for the next wake.
    fn settle(&mut self, now: Instant, fx: &mut Effects) {
        let Some(open) = self.open else { return };
        let end = open + self.plan.duration;
        if let Some(s) = self.plan.sends.get(self.next) {
            fx.wake(open + s.offset);
        } else if self.pending.is_empty() && now >= end {
            fx.succeed();
        } else if now >= end + self.grace {
            let why = self.missing_text();
            fx.fail_as(
                FailureKind::Timeout,
                format!(
                    "{why} within the recorded session's {:.3} s + {:.3} s grace",
                    self.plan.duration.as_secs_f64(),
                    self.grace.as_secs_f64()
                ),
            );
        } else if self.pending.is_empty() {
            fx.wake(end);
        } else {
            fx.wake(end + self.grace);
        }
    }

    /// Expected replies not (yet) received, counted; unsent messages that expect one too.
    fn missing(&self) -> u64 {
        let unsent = self.plan.sends[self.next.min(self.plan.sends.len())..]
            .iter()
            .filter(|s| s.expects.is_some())
            .count();
        (self.pending.len() + unsent) as u64
    }

    /// "no `Y` reply to `X` (2 of them)…": the missing replies, by pair.
    fn missing_text(&self) -> String {
        let mut by_pair: BTreeMap<usize, usize> = BTreeMap::new();
        for (p, _) in &self.pending {
            *by_pair.entry(*p).or_default() += 1;
        }
        let parts: Vec<String> = by_pair
            .iter()
            .take(3)
            .map(|(p, n)| {
                let pair = &self.pairs[*p];
                format!("{n} `{}` after `{}`", pair.reply, pair.request)
            })
            .collect();
        format!(
            "{} expected replies missing (the recording had them): {}{}",
            self.pending.len(),
            parts.join(", "),
            if by_pair.len() > 3 { ", …" } else { "" }
        )
    }
}

/// The label of a live message, as the recording labels them.
fn inbound_label(msg: &Inbound) -> String {
    #[derive(serde::Deserialize)]
    struct Typed {
        #[serde(rename = "type")]
        ty: Option<String>,
    }
    match msg {
        Inbound::Binary(_) => super::plan::label(None, true),
        Inbound::Text(t) => {
            let ty = (t.trim_start().starts_with('{'))
                .then(|| serde_json::from_str::<Typed>(t).ok().and_then(|x| x.ty))
                .flatten();
            super::plan::label(ty.as_deref(), false)
        }
    }
}

impl Session for ReplaySession {
    type Output = ReplayValues;
    fn on_open(&mut self, now: Instant, fx: &mut Effects) {
        self.open = Some(now);
        self.send_due(now, now, fx);
        self.settle(now, fx);
    }
    fn on_inbound(&mut self, msg: Inbound, at: Instant, fx: &mut Effects) {
        let label = inbound_label(&msg);
        *self.out.replies.entry(label.clone()).or_default() += 1;
        let (pairs, out) = (&self.pairs, &mut self.out);
        self.pending.retain(|(p, intended)| {
            let pair = &pairs[*p];
            if pair.reply != label || *intended > at {
                return true;
            }
            let ms = at.duration_since(*intended).as_secs_f64() * 1e3;
            out.latencies
                .entry(pair.metric.clone())
                .or_default()
                .push(ms);
            false
        });
        self.settle(at, fx);
    }
    fn on_wake(&mut self, now: Instant, fx: &mut Effects) {
        if let Some(open) = self.open {
            self.send_due(open, now, fx);
        }
        self.settle(now, fx);
    }
    fn on_closed(&mut self, _at: Instant, reason: Option<String>, fx: &mut Effects) {
        if self.next >= self.plan.sends.len() && self.pending.is_empty() {
            fx.succeed();
            return;
        }
        let why = reason.map(|r| format!(" ({r})")).unwrap_or_default();
        let unsent = self.plan.sends.len() - self.next;
        let mut msg = format!(
            "the server closed the WebSocket{why} with {unsent} recorded client messages unsent"
        );
        if !self.pending.is_empty() {
            msg = format!("{msg}; {}", self.missing_text());
        }
        fx.fail_as(FailureKind::ClosedEarly, msg);
    }
    fn into_output(mut self) -> ReplayValues {
        self.out.missing = self.missing();
        self.out
    }
}
