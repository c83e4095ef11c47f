//! Pure core of the vLLM realtime transcription endpoint: validates client events,
//! "hears" the received audio one word slot at a time (`crate::util::tonecode`), and schedules
//! `transcription.delta`s, `transcription.done` and injected faults at offsets from the
//! connection's start. The socket loop in `transcription.rs` only carries them out.
//!
//! Events, errors and their texts follow vLLM 0.34's realtime connection
//! (`vllm/entrypoints/speech_to_text/realtime/connection.py`): errors are
//! `{"type":"error","error":<message>,"code":<code>}` with codes `invalid_json`,
//! `invalid_event` (no model), `model_not_found`, `invalid_audio` (undecodable or empty),
//! `model_not_validated` (a commit before a valid `session.update`), `unknown_event` and
//! `processing_error`, and the socket stays open after each; appends before
//! `session.update` are kept (vLLM queues them); after `transcription.done` the audio
//! left is dropped and a new `commit` starts the next utterance on the same connection.

use std::collections::VecDeque;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

use super::config::TranscriptionServerConfig;
use crate::util::tonecode::{self, Slot};

/// Audio tokens per second the usage reports for input (12.5 Hz, as Voxtral).
const AUDIO_TOKENS_PER_SECOND: f64 = 12.5;
/// The word a slot of non-code sound becomes.
pub const OTHER_WORD: &str = "speech";
/// The text frame the garbage fault sends.
pub const GARBAGE: &str = "}{ this is not JSON";

/// What the socket loop should do.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Send this text frame.
    Send(String),
    /// Close the socket (normal close frame).
    Close,
}

#[derive(Debug, Clone, PartialEq)]
enum Pending {
    Delta(String),
    Done,
}

/// One connection's transcription state.
#[derive(Debug)]
pub struct TranscriptionPlan {
    cfg: TranscriptionServerConfig,
    model_ok: bool,
    generating: bool,
    finalized: bool,
    /// This utterance's `transcription.done` was sent: a commit starts the next one.
    utterance_done: bool,
    stopped: bool,
    pcm: Vec<i16>,
    decoded: usize,
    samples_total: u64,
    words: Vec<String>,
    queue: VecDeque<(Duration, Pending)>,
    last_due: Duration,
    deltas_sent: u32,
    /// `[server.load]`'s slow-down factor (≥ 1): multiplies the delays scheduled next.
    load: f64,
}

/// `{"type":"error","error":…,"code":…}` as text.
pub fn error_event(code: &str, message: &str) -> String {
    json!({"type": "error", "error": message, "code": code}).to_string()
}

fn ms(v: f64) -> Duration {
    Duration::from_secs_f64(v.max(0.0) / 1000.0)
}

impl TranscriptionPlan {
    /// A plan for one connection with `cfg` (faults already chosen for it).
    pub fn new(cfg: TranscriptionServerConfig) -> Self {
        Self {
            cfg,
            model_ok: false,
            generating: false,
            finalized: false,
            utterance_done: false,
            stopped: false,
            pcm: Vec::new(),
            decoded: 0,
            samples_total: 0,
            words: Vec::new(),
            queue: VecDeque::new(),
            last_due: Duration::ZERO,
            deltas_sent: 0,
            load: 1.0,
        }
    }

    /// Sets the load factor the delays scheduled from now on are multiplied by
    /// (`latency_ms * load`, `final_delay_ms * load`; `[server.load]`).
    pub fn set_load(&mut self, factor: f64) {
        self.load = factor.max(1.0);
    }

    /// The greeting: `session.created` with this id and creation time (Unix seconds).
    pub fn start(&self, id: &str, created: u64) -> Vec<Action> {
        let ev = json!({"type": "session.created", "id": id, "created": created});
        vec![Action::Send(ev.to_string())]
    }

    /// The next scheduled send, as an offset from the connection start.
    pub fn next_due(&self) -> Option<Duration> {
        if self.stopped {
            return None;
        }
        self.queue.front().map(|(d, _)| *d)
    }

    /// One client text frame received at offset `at`.
    pub fn on_text(&mut self, text: &str, at: Duration) -> Vec<Action> {
        let event: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(_) => return err("invalid_json", "Invalid JSON"),
        };
        match event.get("type").and_then(Value::as_str) {
            Some("session.update") => self.on_update(&event),
            Some("input_audio_buffer.append") => self.on_append(&event, at),
            Some("input_audio_buffer.commit") => self.on_commit(&event, at),
            other => err(
                "unknown_event",
                &format!("Unknown event type: {}", other.unwrap_or("None")),
            ),
        }
    }

    fn on_update(&mut self, event: &Value) -> Vec<Action> {
        let model = event.get("model").and_then(Value::as_str);
        match (&self.cfg.model, model) {
            (_, None) => err("invalid_event", "Missing required field: model"),
            (Some(want), Some(got)) if want != got => err(
                "model_not_found",
                &format!("The model `{got}` does not exist."),
            ),
            _ => {
                self.model_ok = true;
                Vec::new()
            }
        }
    }

    /// Audio is kept before `session.update` too (vLLM queues it; only a commit needs the
    /// model); undecodable, odd-length or empty audio is `invalid_audio`, as vLLM's one
    /// message says.
    fn on_append(&mut self, event: &Value, at: Duration) -> Vec<Action> {
        let Some(b64) = event.get("audio").and_then(Value::as_str) else {
            return err(
                "processing_error",
                "input_audio_buffer.append: field `audio` is required (a base64 string)",
            );
        };
        let bytes = match crate::util::b64::standard().decode(b64) {
            Ok(b) if !b.is_empty() && b.len() % 2 == 0 => b,
            _ => return err("invalid_audio", "Invalid audio data"),
        };
        self.samples_total += bytes.len() as u64 / 2;
        self.pcm.extend(
            bytes
                .chunks_exact(2)
                .map(|b| i16::from_le_bytes([b[0], b[1]])),
        );
        if self.generating && !self.finalized {
            self.hear(at + ms(self.cfg.latency_ms * self.load), false);
        }
        Vec::new()
    }

    fn on_commit(&mut self, event: &Value, at: Duration) -> Vec<Action> {
        if !self.model_ok {
            return err(
                "model_not_validated",
                "Model not validated. Make sure to validate the model by sending a session.update event.",
            );
        }
        if self.utterance_done && !self.stopped {
            // The next utterance on this connection: a fresh transcript.
            self.finalized = false;
            self.utterance_done = false;
            self.words.clear();
            self.samples_total = self.pcm.len() as u64;
        }
        if self.finalized {
            // vLLM ignores a commit while its generation runs.
            return Vec::new();
        }
        self.generating = true;
        if event.get("final").and_then(Value::as_bool) == Some(true) {
            self.finalized = true;
            self.hear(at + ms(self.cfg.latency_ms * self.load), false);
            self.hear(at + ms(self.cfg.final_delay_ms * self.load), true);
            self.schedule(at + ms(self.cfg.final_delay_ms * self.load), Pending::Done);
        } else {
            self.hear(at + ms(self.cfg.latency_ms * self.load), false);
        }
        Vec::new()
    }

    /// Decode every complete slot (with `tail`, also a last partial slot of at least half
    /// a slot) and schedule its word at `due`.
    fn hear(&mut self, due: Duration, tail: bool) {
        let rate = self.cfg.sample_rate_hz;
        let slot = tonecode::slot_samples(rate, self.cfg.words_per_second);
        loop {
            let rest = self.pcm.len() - self.decoded;
            let take = if rest >= slot {
                slot
            } else if tail && rest * 2 >= slot {
                rest
            } else {
                break;
            };
            let mut buf = self.pcm[self.decoded..self.decoded + take].to_vec();
            buf.resize(slot, 0);
            self.decoded += take;
            let word = match tonecode::decode_slot(&buf, rate) {
                Slot::Word(i) => tonecode::VOCAB[i],
                Slot::Other => OTHER_WORD,
                Slot::Silence => continue,
            };
            let piece = if self.words.is_empty() {
                word.to_owned()
            } else {
                format!(" {word}")
            };
            self.words.push(word.to_owned());
            self.schedule(due, Pending::Delta(piece));
        }
        // Keep memory bounded: drop decoded audio.
        if self.decoded > 0 {
            self.pcm.drain(..self.decoded);
            self.decoded = 0;
        }
    }

    fn schedule(&mut self, due: Duration, what: Pending) {
        if self.stopped {
            // A fault or `transcription.done` ended the transcript: nothing more is sent.
            return;
        }
        let due = due.max(self.last_due);
        self.last_due = due;
        self.queue.push_back((due, what));
    }

    /// Every action due at offset `now`, in order.
    pub fn pop_due(&mut self, now: Duration) -> Vec<Action> {
        let mut out = Vec::new();
        while self.queue.front().is_some_and(|(d, _)| *d <= now) && !self.stopped {
            let Some((_, what)) = self.queue.pop_front() else {
                break;
            };
            if let Some(fault) = self.fault(matches!(what, Pending::Done)) {
                self.stopped = true;
                self.queue.clear();
                out.push(fault);
                break;
            }
            match what {
                Pending::Delta(piece) => {
                    self.deltas_sent += 1;
                    let ev = json!({"type": "transcription.delta", "delta": piece});
                    out.push(Action::Send(ev.to_string()));
                }
                Pending::Done if self.cfg.faults.no_done => self.stopped = true,
                Pending::Done => {
                    out.push(Action::Send(self.done_event()));
                    // vLLM drains the audio queue after `transcription.done`.
                    self.utterance_done = true;
                    self.generating = false;
                    self.pcm.clear();
                    self.decoded = 0;
                }
            }
        }
        out
    }

    /// The fault that fires now: before delta number `deltas_sent + 1` when its N equals
    /// the deltas sent, or in place of `transcription.done` for any N not reached.
    fn fault(&self, at_done: bool) -> Option<Action> {
        let f = &self.cfg.faults;
        let fires = |n: Option<u32>| {
            n.is_some_and(|n| n == self.deltas_sent || (at_done && n > self.deltas_sent))
        };
        if fires(f.error_after_deltas) {
            let msg = f.error_message.as_deref().unwrap_or("injected fault");
            return Some(Action::Send(error_event("processing_error", msg)));
        }
        if fires(f.close_after_deltas) {
            return Some(Action::Close);
        }
        if fires(f.garbage_after_deltas) {
            return Some(Action::Send(GARBAGE.to_owned()));
        }
        None
    }

    fn done_event(&self) -> String {
        let seconds = self.samples_total as f64 / f64::from(self.cfg.sample_rate_hz);
        let prompt = (seconds * AUDIO_TOKENS_PER_SECOND).ceil() as u64;
        let completion = self.words.len() as u64;
        json!({
            "type": "transcription.done",
            "text": self.words.join(" "),
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        })
        .to_string()
    }
}

fn err(code: &str, message: &str) -> Vec<Action> {
    vec![Action::Send(error_event(code, message))]
}

#[cfg(test)]
#[path = "transcription_plan_tests.rs"]
mod tests;
