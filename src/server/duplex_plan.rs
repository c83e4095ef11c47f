//! Pure core of the duplex speech endpoint `/v1/realtime` (spec §1, server role): a
//! per-session state machine that turns client events (with their receipt offsets from
//! `session.update`) into immediate [`Action`]s plus a timeline of due actions (response
//! events paced at the configured RTF, listens, the final decision, time faults). The
//! socket loop sends what it is given and stamps `server_sent_at_s`. No sockets, no clocks.
//!
//! Responses never overlap: one is `response.created` when its input arrives (or when
//! the previous one ends), its first delta follows `first_response_delay_ms` later. Every
//! inbound event first takes the timeline actions already due, so answers keep the order
//! a real server would give them. The final commit drops responses queued but not yet
//! created (the final decision covers their input), so `overlap_deferred` means exactly
//! "a created response has not ended yet", as the client's §1.5 rule reads it.
//!
//! Event shapes and inbound validation live in `events` and `inbound`; the timeline holds
//! [`Step`]s, whose response deltas (`delta`) are written to text only when sent.

mod delta;
mod events;
mod inbound;
mod speech;

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use serde_json::Value;

use super::config::{DuplexServerConfig, FinalDecision, TurnMode, VadConfig};
pub(crate) use delta::Step;
use events::{Mark, Responder, listen_event};
pub(crate) use events::{closed_event, error_event, expired_event};
use inbound::{Append, checked_append, parse_ack, validate_append};
pub(crate) use inbound::{INPUT_BYTES_PER_S, UpdateInfo, validate_update};

/// `reason` of `session.expired` when the idle timeout fires.
pub(crate) const IDLE_REASON: &str = "idle_timeout";
/// `reason` of `session.expired` sent by the `expire_after_s` fault.
pub(crate) const FAULT_REASON: &str = "injected_fault";

/// One thing for the socket loop to do.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Action {
    /// Send this event (the loop adds `server_sent_at_s`).
    Send(Value),
    /// Close the socket with a normal close frame; the session is over.
    Close,
}

/// Bookkeeping applied when a timeline entry is executed.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Effect {
    None,
    /// Response `index` was announced (its first `response.created` was sent).
    Created {
        index: usize,
    },
    /// `ms` of audio of response `index` were sent.
    Audio {
        index: usize,
        ms: u64,
    },
    /// Response `index` ended (its first `response.done` was sent).
    Done {
        index: usize,
    },
    /// The user spoke over response `index` (its `output_audio_buffer.cleared` was sent).
    Interrupt {
        index: usize,
    },
}

/// A timeline entry: `action` at `due` after `session.update`.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    due: Duration,
    action: Step,
    effect: Effect,
    /// The response this entry belongs to, if any.
    response: Option<usize>,
}

/// What the server knows about one response.
#[derive(Debug, Clone, PartialEq)]
struct Ledger {
    id: String,
    /// Its `response.created` was sent.
    created: bool,
    /// Audio sent so far, in ms.
    audio_ms: u64,
    /// Its `response.done` was sent.
    done: bool,
    /// Largest `played_ms` acknowledged.
    played_ms: Option<u64>,
    /// The user spoke over it (barge-in): it is, or is about to be, cleared.
    cancelled: bool,
}

/// Where the final commit stands.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Commit {
    /// Not received yet.
    Open,
    /// Received while responses were in flight; the decision waits for them.
    Deferred,
    /// Received and its decision scheduled.
    Decided,
}

/// One duplex session from `session.update` on.
#[derive(Debug)]
pub(crate) struct DuplexPlan {
    /// Config with this session's faults already selected.
    cfg: DuplexServerConfig,
    /// `session.created.session.id`.
    session_id: String,
    /// `session.model`.
    model: String,
    /// Idle timeout of this session.
    idle_timeout: Duration,
    /// Builds response events.
    responder: Responder,
    /// Pending actions, sorted by `due` (insertion order among equal dues).
    timeline: VecDeque<Entry>,
    /// Input audio bytes accepted.
    input_bytes: u64,
    /// Input bytes per response trigger, and the next trigger point.
    respond_bytes: u64,
    next_respond: u64,
    /// Input bytes per listen decision (`None`: never), and the next listen point.
    listen_bytes: Option<u64>,
    next_listen: u64,
    /// Every response scheduled, in creation order.
    responses: Vec<Ledger>,
    /// Response id → index into `responses`.
    by_id: HashMap<String, usize>,
    /// Responses scheduled whose `response.done` was not sent yet.
    open: usize,
    /// When the last scheduled response ends.
    busy_until: Duration,
    /// Final-commit state.
    commit: Commit,
    /// The speech detector, when `[server.duplex.vad]` is on.
    vad: Option<speech::Ears>,
    /// `[server.load]`'s slow-down factor when the next response is scheduled (≥ 1).
    load: f64,
}

impl DuplexPlan {
    /// A session accepted with `info`; `ordinal` numbers sessions on this server,
    /// `query_session_id` is the upgrade URL's `session_id`, `default_idle_s` the
    /// server's idle timeout.
    pub(crate) fn new(
        cfg: DuplexServerConfig,
        ordinal: u64,
        info: UpdateInfo,
        query_session_id: Option<String>,
        default_idle_s: f64,
    ) -> DuplexPlan {
        let idle_s = info.idle_timeout_s.unwrap_or(default_idle_s);
        let to_bytes = |s: f64| ((s * INPUT_BYTES_PER_S as f64).round() as u64).max(2);
        let respond_bytes = to_bytes(cfg.respond_every_s);
        let listen_bytes = (cfg.listen_every_s > 0.0).then(|| to_bytes(cfg.listen_every_s));
        let vad = (cfg.vad.clone())
            .or_else(|| (cfg.turns == TurnMode::ServerVad).then(VadConfig::default))
            .map(|v| speech::Ears::new(&v));
        DuplexPlan {
            session_id: info
                .session_id
                .or(query_session_id)
                .unwrap_or_else(|| format!("sess_{ordinal}")),
            model: info.model,
            idle_timeout: seconds(idle_s),
            responder: Responder::new(&cfg, ordinal),
            cfg,
            timeline: VecDeque::new(),
            input_bytes: 0,
            respond_bytes,
            next_respond: respond_bytes,
            listen_bytes,
            next_listen: listen_bytes.unwrap_or(u64::MAX),
            responses: Vec::new(),
            by_id: HashMap::new(),
            open: 0,
            busy_until: Duration::ZERO,
            commit: Commit::Open,
            vad,
            load: 1.0,
        }
    }

    /// Sets the load factor responses scheduled from now on run at: their first-response
    /// delay and delta gaps are multiplied by it (`[server.load]`).
    pub(crate) fn set_load(&mut self, factor: f64) {
        self.load = factor.max(1.0);
    }

    /// How long the session may sit with no activity before it expires.
    pub(crate) fn idle_timeout(&self) -> Duration {
        self.idle_timeout
    }

    /// The answer to `session.update` (sent at offset 0); also arms the time faults.
    pub(crate) fn start(&mut self) -> Vec<Action> {
        let faults = self.cfg.faults.clone();
        if let Some(message) = faults.error_on_update {
            return vec![Action::Send(error_event(&message)), Action::Close];
        }
        if let Some(s) = faults.error_event_after_s {
            let message = format!("injected fault: error event after {s} s");
            self.push(
                seconds(s),
                Action::Send(error_event(&message)),
                Effect::None,
            );
        }
        if let Some(s) = faults.expire_after_s {
            self.push(
                seconds(s),
                Action::Send(expired_event(FAULT_REASON)),
                Effect::None,
            );
            self.push(seconds(s), Action::Close, Effect::None);
        }
        if let Some(s) = faults.close_mid_session_after_s {
            self.push(seconds(s), Action::Close, Effect::None);
        }
        if faults.no_session_created {
            return Vec::new();
        }
        vec![Action::Send(events::created_event(
            &self.session_id,
            &self.model,
            self.cfg.chunk_period_ms,
            self.idle_timeout.as_secs_f64(),
        ))]
    }

    /// Handles one client event of type `kind` received `at` after `session.update`:
    /// the timeline actions due by `at`, then the answer, then anything it made due.
    pub(crate) fn on_event_steps(&mut self, kind: &str, event: &Value, at: Duration) -> Vec<Step> {
        self.answering(at, |plan| plan.answer(kind, event, at))
    }

    /// [`DuplexPlan::on_event_steps`] for an `input_audio_buffer.append` still in its text, if
    /// it is one this session accepts now ([`checked_append`]); `None`, with nothing
    /// changed, for anything else, which the caller parses and passes to `on_event`.
    pub(crate) fn on_append_text_steps(&mut self, text: &str, at: Duration) -> Option<Vec<Step>> {
        if self.commit != Commit::Open {
            return None;
        }
        // Taking the due actions first changes neither the commit state nor the input.
        let append = checked_append(text, self.input_bytes)?;
        let level = self.vad.as_ref().and_then(|_| inbound::text_rms(text));
        Some(self.answering(at, |plan| plan.apply_append(append, level, at)))
    }

    /// The actions already due at `at`, then `answer`'s, then (unless it closes) any
    /// that became due through it.
    fn answering(
        &mut self,
        at: Duration,
        answer: impl FnOnce(&mut Self) -> Vec<Action>,
    ) -> Vec<Step> {
        let mut out = self.take_due(at);
        let answer = answer(self);
        let closing = answer.last() == Some(&Action::Close);
        out.extend(answer.into_iter().map(Step::Act));
        if !closing {
            out.extend(self.take_due(at));
        }
        out
    }

    fn answer(&mut self, kind: &str, event: &Value, at: Duration) -> Vec<Action> {
        match kind {
            "input_audio_buffer.append" => self.on_append(event, at),
            "input_audio_buffer.commit" => self.on_commit(event, at),
            "playback.ack" => self.on_ack(event),
            "session.close" => self.on_close(),
            "session.update" => errors("session.update was already received on this connection"),
            other => errors(&format!("unknown event type '{other}'")),
        }
    }

    /// Offset of the next timeline action, if any.
    pub(crate) fn next_due(&self) -> Option<Duration> {
        self.timeline.front().map(|e| e.due)
    }

    /// Takes the next timeline action if it is due at `now` and applies its bookkeeping.
    pub(crate) fn pop_due_step(&mut self, now: Duration) -> Option<Step> {
        if self.timeline.front()?.due > now {
            return None;
        }
        let entry = self.timeline.pop_front()?;
        match entry.effect {
            Effect::None => {}
            Effect::Created { index } => {
                if let Some(r) = self.responses.get_mut(index) {
                    r.created = true;
                }
            }
            Effect::Audio { index, ms } => {
                if let Some(r) = self.responses.get_mut(index) {
                    r.audio_ms += ms;
                }
            }
            Effect::Done { index } => {
                if let Some(r) = self.responses.get_mut(index) {
                    r.done = true;
                }
                self.open = self.open.saturating_sub(1);
                if self.open == 0 && self.commit == Commit::Deferred {
                    self.decide_final(entry.due);
                }
            }
            Effect::Interrupt { index } => self.interrupt(index, entry.due),
        }
        Some(entry.action)
    }

    /// Every timeline action due by `at`, in order.
    fn take_due(&mut self, at: Duration) -> Vec<Step> {
        std::iter::from_fn(|| self.pop_due_step(at)).collect()
    }

    fn on_append(&mut self, event: &Value, at: Duration) -> Vec<Action> {
        if self.commit != Commit::Open {
            return errors("input_audio_buffer.append after the final input_audio_buffer.commit");
        }
        match validate_append(event, self.input_bytes) {
            Ok(append) => {
                let level = self.vad.as_ref().and_then(|_| inbound::event_rms(event));
                self.apply_append(append, level, at)
            }
            Err(message) => {
                let mut out = errors(&message);
                if self.cfg.faults.fatal_append_errors {
                    out.push(Action::Close);
                }
                out
            }
        }
    }

    /// A valid append's bookkeeping: the input so far, a response when it crosses the
    /// next response point, listens, and (barge-in on, `level` its RMS) speech.
    fn apply_append(&mut self, append: Append, level: Option<f64>, at: Duration) -> Vec<Action> {
        self.input_bytes += append.bytes;
        let mut out = level.map_or_else(Vec::new, |rms| self.hear(rms, append.bytes, at));
        let by_time = self.cfg.turns == TurnMode::InputTime;
        let responded = by_time && self.input_bytes >= self.next_respond;
        if responded {
            self.next_respond = next_point(self.next_respond, self.respond_bytes, self.input_bytes);
            self.schedule_response(at);
        }
        let mut decided = false;
        if let Some(step) = self.listen_bytes
            && self.input_bytes >= self.next_listen
        {
            self.next_listen = next_point(self.next_listen, step, self.input_bytes);
            decided = !responded && self.open == 0;
        }
        if decided {
            out.push(Action::Send(listen_event(false)));
        } else if self.cfg.buffering_listens && !responded && self.open == 0 {
            out.push(Action::Send(listen_event(true)));
        }
        out
    }

    fn on_commit(&mut self, event: &Value, at: Duration) -> Vec<Action> {
        if self.commit != Commit::Open {
            return errors("input_audio_buffer.commit was already received");
        }
        if event.get("final") == Some(&Value::Bool(false)) && self.cfg.turns == TurnMode::Commit {
            return self.turn_commit(at);
        }
        if event.get("final") != Some(&Value::Bool(true)) {
            return errors(
                "input_audio_buffer.commit must carry \"final\": true (this server takes one final commit)",
            );
        }
        self.drop_queued_responses();
        let deferred = self.cfg.deferred_commit && self.open > 0;
        let input_ms = self.input_bytes * 1000 / INPUT_BYTES_PER_S;
        let mut out = Vec::new();
        if !self.cfg.faults.never_commit_ack {
            out.push(Action::Send(events::committed_event(input_ms, deferred)));
        }
        if deferred {
            self.commit = Commit::Deferred;
        } else {
            self.decide_final(at);
        }
        out
    }

    fn on_ack(&mut self, event: &Value) -> Vec<Action> {
        let ack = match parse_ack(event) {
            Ok(ack) => ack,
            Err(message) => return errors(&message),
        };
        let Some(r) = self
            .by_id
            .get(&ack.response_id)
            .and_then(|&i| self.responses.get_mut(i))
        else {
            return errors(&format!(
                "playback.ack for unknown response_id {}",
                ack.response_id
            ));
        };
        if ack.played_ms > r.audio_ms {
            return errors(&format!(
                "playback.ack played_ms {} exceeds the {} ms of audio sent for {}",
                ack.played_ms, r.audio_ms, r.id
            ));
        }
        r.played_ms = r.played_ms.max(Some(ack.played_ms));
        Vec::new()
    }

    fn on_close(&mut self) -> Vec<Action> {
        self.timeline.clear();
        let mut out = Vec::new();
        if self.cfg.require_acks {
            let missing: Vec<String> = self
                .responses
                .iter()
                .filter(|r| {
                    r.done && !r.cancelled && r.audio_ms > 0 && r.played_ms != Some(r.audio_ms)
                })
                .map(|r| {
                    format!(
                        "{} (played {} of {} ms)",
                        r.id,
                        r.played_ms.unwrap_or(0),
                        r.audio_ms
                    )
                })
                .collect();
            if !missing.is_empty() {
                let message = format!("missing completion playback.ack for {}", missing.join(", "));
                out.push(Action::Send(error_event(&message)));
            }
        }
        let reason = self.cfg.faults.close_with_reason.as_deref();
        out.push(Action::Send(closed_event(reason)));
        out.push(Action::Close);
        out
    }

    /// Forgets responses scheduled but not yet created (only ever queued behind the one
    /// in flight), so every open response is one the client has seen created.
    fn drop_queued_responses(&mut self) {
        let queued: Vec<usize> = (0..self.responses.len())
            .filter(|&i| !self.responses[i].created && !self.responses[i].done)
            .collect();
        if queued.is_empty() {
            return;
        }
        self.timeline
            .retain(|e| !e.response.is_some_and(|i| queued.contains(&i)));
        for &i in &queued {
            self.by_id.remove(&self.responses[i].id);
        }
        self.open = self.open.saturating_sub(queued.len());
        self.busy_until = self
            .timeline
            .iter()
            .filter(|e| matches!(e.effect, Effect::Done { .. }))
            .map(|e| e.due)
            .max()
            .unwrap_or(Duration::ZERO);
    }

    /// Schedules the decision for the input left at the final commit, at `at`.
    fn decide_final(&mut self, at: Duration) {
        self.commit = Commit::Decided;
        if self.cfg.faults.no_final_decision {
            return;
        }
        let at = at.max(self.busy_until);
        if self.cfg.buffering_listens {
            self.push(at, Action::Send(listen_event(true)), Effect::None);
        }
        match self.cfg.final_decision {
            FinalDecision::Respond => self.schedule_response(at),
            FinalDecision::Listen => self.push(at, Action::Send(listen_event(false)), Effect::None),
        }
    }

    /// Schedules one whole response for input that arrived at `trigger`.
    fn schedule_response(&mut self, trigger: Duration) {
        let index = self.responses.len();
        let start = trigger.max(self.busy_until);
        let script = self.responder.response(index, start, self.load);
        for (due, event, end) in script.events {
            let effect = match end {
                Mark::None => Effect::None,
                Mark::Created => Effect::Created { index },
                Mark::Audio(ms) => Effect::Audio { index, ms },
                Mark::Done => Effect::Done { index },
            };
            self.push_for(Some(index), due, event, effect);
        }
        self.busy_until = script.end;
        self.open += 1;
        self.by_id.insert(script.id.clone(), index);
        self.responses.push(Ledger {
            id: script.id,
            created: false,
            audio_ms: 0,
            done: false,
            played_ms: None,
            cancelled: false,
        });
    }

    /// Inserts after every entry due at or before `due`.
    fn push(&mut self, due: Duration, action: Action, effect: Effect) {
        self.push_for(None, due, Step::Act(action), effect);
    }

    /// [`Self::push`] for an entry of `response`.
    fn push_for(&mut self, response: Option<usize>, due: Duration, action: Step, effect: Effect) {
        let at = self.timeline.partition_point(|e| e.due <= due);
        let entry = Entry {
            due,
            action,
            effect,
            response,
        };
        self.timeline.insert(at, entry);
    }
}

/// The first multiple of `step` above `reached`, counting from `point`.
fn next_point(point: u64, step: u64, reached: u64) -> u64 {
    let behind = reached.saturating_sub(point) / step + 1;
    point.saturating_add(behind.saturating_mul(step))
}

/// A single error event.
fn errors(message: &str) -> Vec<Action> {
    vec![Action::Send(error_event(message))]
}

/// Seconds as a `Duration`, clamped to `[0, 1e9]` s (NaN is zero): never panics, and
/// deadlines built from it stay far from `Instant` overflow.
pub(crate) fn seconds(s: f64) -> Duration {
    Duration::try_from_secs_f64(s.clamp(0.0, 1e9)).unwrap_or(Duration::ZERO)
}

/// Milliseconds as a `Duration`.
pub(crate) fn millis(ms: f64) -> Duration {
    seconds(ms / 1000.0)
}

#[cfg(test)]
mod tests;
