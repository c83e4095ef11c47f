//! The step interpreter: one session's walk through a [`Script`], as a sans-IO state
//! machine. Inbound messages (with receipt times) and wake-ups go in; frames to send
//! (with intended times), wake requests and the outcome come out through [`Effects`].
//! It records marks and matched events for the declared metrics, each with a sequence
//! number (the order things happened in), and ends each mark's metric window with its
//! turn.
//!
//! An `await` (and its `until`) sees only messages that arrive after the step starts, or,
//! with `since = "M"`, after the latest time mark `M` was taken: from that mark on, each
//! message is checked against that await's patterns as it arrives and only the matches
//! are kept (a [`Watch`]), so nothing else is held in memory and a reply left over from
//! an earlier turn can never end a later one. Every inbound message is checked against
//! `fail_on` first.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;
use tokio::time::Instant;

use super::metric::{Reading, Record};
use super::script::{Action, Script};
use crate::util::pacing::PacingMode;
use crate::workload::Effects;
use crate::workload::outcome::FailureKind;

mod render;
mod watch;
use render::failure_text;
use watch::{Hit, Watch};

/// What one session streams and may read in templates.
#[derive(Debug, Clone, Default)]
pub struct Item {
    /// PCM16 mono little-endian at the script's sample rate.
    pub pcm: Bytes,
    /// `${item.<field>}` values.
    pub fields: BTreeMap<String, Value>,
}

/// Values of the session variables.
#[derive(Debug, Clone)]
pub struct Vars {
    /// `${model}`.
    pub model: String,
    /// `${sample_index}`.
    pub sample_index: usize,
    /// `${session_id}`.
    pub session_id: String,
    /// `${sample_rate}` (Hz of the streamed PCM).
    pub sample_rate: u32,
}

#[derive(Debug)]
struct StreamState {
    t0: Instant,
    mode: PacingMode,
    chunk_bytes: usize,
    offset: usize,
    index: usize,
}

#[derive(Debug)]
enum Phase {
    Ready,
    Streaming(StreamState),
    Awaiting { deadline: Instant, matched: usize },
    Waiting(Instant),
    Done,
}

/// One session's interpreter.
#[derive(Debug)]
pub struct Interp {
    script: Arc<Script>,
    item: Arc<Item>,
    vars: Vars,
    wanted: Arc<[String]>,
    pc: usize,
    phase: Phase,
    start: Option<Instant>,
    deadline: Option<Instant>,
    record: Record,
    /// Sequence number of the latest inbound message or mark.
    seq: u64,
    /// Marks whose turn has not ended: (step index the turn ends before, mark index).
    open: Vec<(usize, usize)>,
    /// Awaits with `since` whose mark was taken, collecting their matches until they run.
    watches: Vec<Watch>,
    /// The schedule a paced stream left behind: sends that follow it (before any
    /// `await`) were due at this time, so their lateness is recorded.
    sched: Option<Instant>,
    /// (event, field) pairs whose values the metrics read.
    fields: Vec<(String, String)>,
    /// Ms of audio the finished `stream` steps sent.
    streamed_ms: f64,
}

impl Interp {
    /// A session over `item`; `wanted` are the message `type`s the metrics count.
    pub fn new(script: Arc<Script>, item: Arc<Item>, vars: Vars, wanted: Arc<[String]>) -> Self {
        let fields = script.field_reads();
        Self {
            fields,
            streamed_ms: 0.0,
            script,
            item,
            vars,
            wanted,
            pc: 0,
            phase: Phase::Ready,
            start: None,
            deadline: None,
            record: Record::default(),
            seq: 0,
            open: Vec::new(),
            watches: Vec::new(),
            sched: None,
        }
    }

    /// The socket is open: run the script from its first step.
    pub fn start(&mut self, now: Instant, fx: &mut Effects) {
        self.start = Some(now);
        self.deadline = Some(now + self.script.timeout);
        self.advance(now, fx);
    }

    /// One inbound text frame read at `at`.
    pub fn inbound(&mut self, text: &str, at: Instant, fx: &mut Effects) {
        if matches!(self.phase, Phase::Done) {
            return;
        }
        let Ok(msg) = serde_json::from_str::<Value>(text) else {
            return;
        };
        if self.script.fail_on.iter().any(|m| m.matches(&msg)) {
            fx.fail_as(FailureKind::ServerError, failure_text(&msg, text));
            self.phase = Phase::Done;
            return;
        }
        self.seq += 1;
        self.record_event(&msg, at);
        let script = Arc::clone(&self.script);
        for w in &mut self.watches {
            w.see(&script, &msg, self.seq, at);
        }
        if let Phase::Awaiting { .. } = self.phase
            && let Some(hit) = Hit::of(&script, self.pc, &msg, self.seq, at)
        {
            self.offer(hit);
        }
        self.advance(at, fx);
    }

    /// A wake-up the session asked for.
    pub fn wake(&mut self, now: Instant, fx: &mut Effects) {
        self.advance(now, fx);
    }

    /// Marks and events recorded so far, in ms since the socket opened.
    pub fn record(&self) -> &Record {
        &self.record
    }

    fn ms(&self, t: Instant) -> f64 {
        self.start.map_or(0.0, |s| {
            t.saturating_duration_since(s).as_secs_f64() * 1000.0
        })
    }

    fn record_event(&mut self, msg: &Value, at: Instant) {
        let ms = self.ms(at);
        for (name, m) in &self.script.events {
            if m.matches(msg) {
                self.record.push_event(name, self.seq, ms);
            }
        }
        let ty = msg.get("type").and_then(Value::as_str);
        if let Some(t) = ty
            && self.wanted.iter().any(|w| w == t)
        {
            self.record.push_event(t, self.seq, ms);
        }
        if self.fields.is_empty() {
            return;
        }
        let audio_ms = self.audio_cursor_ms(at);
        for (name, field) in &self.fields {
            let is = ty == Some(name.as_str())
                || self
                    .script
                    .events
                    .iter()
                    .any(|(n, m)| n == name && m.matches(msg));
            let value = field
                .split('.')
                .try_fold(msg, |v, k| v.get(k))
                .and_then(Value::as_f64);
            if let (true, Some(value)) = (is, value) {
                let seq = self.seq;
                let r = Reading {
                    seq,
                    value,
                    audio_ms,
                };
                self.record.push_reading(name, field, r);
            }
        }
    }

    /// The session's audio cursor at `at`: ms of audio the finished streams sent, plus
    /// the running stream's chunks handed to the sender or due by `at` (a paced chunk is
    /// sent at its intended time; its lateness is recorded apart).
    fn audio_cursor_ms(&self, at: Instant) -> f64 {
        let Phase::Streaming(s) = &self.phase else {
            return self.streamed_ms;
        };
        let total = self.item.pcm.len() & !1;
        let mut offset = s.offset;
        while offset < total && self.due(s, offset).is_some_and(|t| t <= at) {
            offset = (offset + s.chunk_bytes).min(total);
        }
        self.streamed_ms + self.bytes_ms(offset)
    }

    /// Ms of PCM16 audio in `bytes`.
    fn bytes_ms(&self, bytes: usize) -> f64 {
        bytes as f64 * 1000.0 / (f64::from(self.vars.sample_rate) * 2.0)
    }

    /// Offer one match to the current await; returns whether the await is over.
    fn offer(&mut self, hit: Hit) -> bool {
        let script = Arc::clone(&self.script);
        let Some(Action::Await { name, collect, .. }) =
            script.steps.get(self.pc).map(|s| &s.action)
        else {
            return false;
        };
        let Phase::Awaiting { matched, .. } = &mut self.phase else {
            return false;
        };
        if hit.main {
            *matched += 1;
            if let Some(n) = name {
                let ms = self.ms(hit.at);
                self.record.push_event(n, hit.seq, ms);
            }
            if !collect {
                self.finish_step();
                return true;
            }
        }
        if hit.until {
            self.finish_step();
            return true;
        }
        false
    }

    /// The step at `pc` is over: move on, ending the windows of marks whose turn it
    /// ended.
    fn finish_step(&mut self) {
        self.pc += 1;
        self.phase = Phase::Ready;
        let (pc, end) = (self.pc, self.seq + 1);
        let record = &mut self.record;
        self.open.retain(|&(until, idx)| {
            let ended = until <= pc;
            if ended {
                record.end_turn(idx, end);
            }
            !ended
        });
    }

    fn advance(&mut self, now: Instant, fx: &mut Effects) {
        if self.deadline.is_some_and(|d| now >= d) && !matches!(self.phase, Phase::Done) {
            fx.fail_as(
                FailureKind::Timeout,
                format!(
                    "session timed out after {:.1} s at step {}",
                    self.script.timeout.as_secs_f64(),
                    self.pc + 1
                ),
            );
            self.phase = Phase::Done;
            return;
        }
        loop {
            match &mut self.phase {
                Phase::Done => return,
                Phase::Streaming(_) => {
                    if !self.stream_due(now, fx) {
                        break;
                    }
                }
                Phase::Waiting(until) => {
                    if now < *until {
                        fx.wake(*until);
                        break;
                    }
                    // What follows is due when the wait ends, not when we woke.
                    self.sched = Some(*until);
                    self.finish_step();
                }
                Phase::Awaiting { deadline, matched } => {
                    if now < *deadline {
                        fx.wake(*deadline);
                        break;
                    }
                    let matched = *matched;
                    if let Err(msg) = self.await_timeout(matched) {
                        fx.fail_as(FailureKind::Timeout, msg);
                        self.phase = Phase::Done;
                        return;
                    }
                }
                Phase::Ready => {
                    if let Err(msg) = self.run_step(now, fx) {
                        fx.fail(msg);
                        self.phase = Phase::Done;
                        return;
                    }
                }
            }
        }
        if let Some(d) = self.deadline {
            fx.wake(d);
        }
    }

    fn await_timeout(&mut self, matched: usize) -> Result<(), String> {
        let Some(Action::Await {
            matcher,
            timeout,
            collect,
            until,
            ..
        }) = self.script.steps.get(self.pc).map(|s| &s.action)
        else {
            return Ok(());
        };
        if *collect && until.is_none() {
            self.finish_step();
            return Ok(());
        }
        let what = until.as_ref().unwrap_or(matcher);
        Err(format!(
            "step {}: no message matching {{{what}}} within {:.1} s ({matched} matched before)",
            self.pc + 1,
            timeout.as_secs_f64()
        ))
    }

    /// Run the step at `pc` (phase is `Ready`).
    fn run_step(&mut self, now: Instant, fx: &mut Effects) -> Result<(), String> {
        let script = Arc::clone(&self.script);
        let Some(step) = script.steps.get(self.pc) else {
            fx.succeed();
            self.phase = Phase::Done;
            return Ok(());
        };
        match &step.action {
            Action::Send(p) => {
                let msg = self.render_payload(p, step.turn)?;
                fx.send(msg, self.sched);
                self.finish_step();
            }
            Action::Wait(d) => {
                // Counted from when the previous step's work was due (a paced stream's
                // end), else from now.
                self.phase = Phase::Waiting(self.sched.unwrap_or(now) + *d);
            }
            Action::Mark(name) => {
                self.seq += 1;
                // At the moment the step is due (after a paced stream or a wait), not
                // when the session woke to run it.
                let ms = self.ms(self.sched.unwrap_or(now));
                let idx = self.record.push_mark(name, self.seq, ms);
                if let Some(rest) = step.turn_rest {
                    self.open.push((self.pc + rest as usize + 1, idx));
                }
                for &j in script.watchers.get(&self.pc).into_iter().flatten() {
                    self.watches.retain(|w| w.step != j);
                    self.watches.push(Watch::new(j));
                }
                self.finish_step();
            }
            Action::Stream {
                chunk_ms, pacing, ..
            } => {
                let chunk_bytes =
                    (self.vars.sample_rate as usize * 2 * *chunk_ms as usize / 1000).max(2) & !1;
                self.phase = Phase::Streaming(StreamState {
                    t0: now,
                    mode: *pacing,
                    chunk_bytes,
                    offset: 0,
                    index: 0,
                });
            }
            Action::Await { timeout, .. } => {
                self.sched = None;
                self.phase = Phase::Awaiting {
                    deadline: now + *timeout,
                    matched: 0,
                };
                // With `since`: what matched since the mark, in the order it came.
                if let Some(i) = self.watches.iter().position(|w| w.step == self.pc) {
                    for hit in self.watches.swap_remove(i).hits {
                        if self.offer(hit) {
                            break;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// When the stream's byte `offset` is due (`None` = now, saturate).
    fn due(&self, s: &StreamState, offset: usize) -> Option<Instant> {
        let bytes_per_s = f64::from(self.vars.sample_rate) * 2.0;
        let media = Duration::from_secs_f64(offset as f64 / bytes_per_s);
        Some(s.t0 + s.mode.due_after_media(media)?)
    }

    /// Send the chunks due at `now`; true when the stream step is over.
    fn stream_due(&mut self, now: Instant, fx: &mut Effects) -> bool {
        let Phase::Streaming(mut s) = std::mem::replace(&mut self.phase, Phase::Ready) else {
            return true;
        };
        let total = self.item.pcm.len() & !1;
        loop {
            if s.offset >= total {
                // The step after a paced stream is due when the audio's end would be.
                match self.due(&s, total) {
                    Some(t) if t > now => {
                        fx.wake(t);
                        self.phase = Phase::Streaming(s);
                        return false;
                    }
                    end => {
                        self.sched = end;
                        self.streamed_ms += self.bytes_ms(total);
                        self.finish_step();
                        return true;
                    }
                }
            }
            let intended = self.due(&s, s.offset);
            if intended.is_some_and(|t| t > now) {
                fx.wake(intended.unwrap_or(now));
                self.phase = Phase::Streaming(s);
                return false;
            }
            let end = (s.offset + s.chunk_bytes).min(total);
            match self.render_chunk(&s, end) {
                Ok(msg) => fx.send(msg, intended),
                Err(e) => {
                    fx.fail(e);
                    self.phase = Phase::Done;
                    return false;
                }
            }
            s.offset = end;
            s.index += 1;
            if intended.is_none() && s.offset < total {
                // Saturate: one chunk per round so inbound messages interleave.
                fx.wake(now);
                self.phase = Phase::Streaming(s);
                return false;
            }
        }
    }
}

#[cfg(test)]
#[path = "interp_tests.rs"]
mod tests;
