//! The vLLM `/v1/realtime` speech-to-text protocol as a sans-IO state machine: what to send
//! when, how to read each inbound event, and which server error becomes which failure.
//!
//! ```text
//! server: session.created
//! client: session.update {model}
//! client: input_audio_buffer.commit {final:false}        (starts generation)
//! client: input_audio_buffer.append {audio: base64 PCM16} (paced, one per chunk)
//! client: input_audio_buffer.commit {final:true}         (end of audio)
//! server: transcription.delta {delta} …  transcription.done {text, usage}
//! server: error {error, code}                            (at any time: the session fails)
//! ```
//!
//! No sockets, no clocks: every input carries the time it happened (receipt or wake-up)
//! and every output is an [`Actions`] value. Times in the [`Record`] are seconds since
//! the socket opened.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::util::pacing::PacingMode;

/// How one session talks: shared by every session of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Model named in `session.update`.
    pub model: String,
    /// Sample rate of the PCM16 mono audio sent, Hz.
    pub sample_rate: u32,
    /// Audio per `input_audio_buffer.append`, milliseconds.
    pub chunk_ms: u32,
    /// How appends are placed in time.
    pub pacing: PacingMode,
    /// Longest wait for `session.created` after the socket opened, seconds.
    pub created_timeout_s: f64,
    /// Longest wait for `transcription.done` after the final commit, seconds.
    pub done_timeout_s: f64,
}

impl Settings {
    /// Bytes of PCM16 per append (at least one sample).
    pub fn chunk_bytes(&self) -> usize {
        ((self.sample_rate as usize * self.chunk_ms as usize / 1000) * 2).max(2)
    }
    /// Media time of the first `bytes` bytes of PCM16 mono.
    pub fn media_time(&self, bytes: usize) -> Duration {
        let nanos = (bytes as u128 / 2) * 1_000_000_000 / u128::from(self.sample_rate.max(1));
        Duration::from_nanos(nanos as u64)
    }
}

/// What the state machine asks for after one input.
#[derive(Debug, Default, PartialEq)]
pub struct Actions {
    /// Text messages to send, with the time the schedule meant each to leave (`None`:
    /// reactive, no schedule).
    pub send: Vec<(String, Option<Instant>)>,
    /// The next moment to be woken (replaces any earlier request).
    pub wake: Option<Instant>,
    /// The session's outcome, once decided: on failure, why and the message.
    pub finish: Option<Result<(), (Cause, String)>>,
}

/// What kind of failure ended a session (mapped onto the seam's failure kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// An expected event did not come in time.
    Timeout,
    /// The server sent an `error` event.
    ServerError,
    /// The server closed the socket before `transcription.done`.
    ClosedEarly,
    /// The server broke the protocol (unparsable JSON, events out of order).
    Protocol,
}

/// Where a session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Socket open, waiting for `session.created`.
    AwaitingCreated,
    /// Sending paced appends.
    Streaming,
    /// Final commit sent, waiting for `transcription.done`.
    Finalizing,
    /// Outcome decided.
    Done,
}

/// One `transcription.delta` as received.
#[derive(Debug, Clone, PartialEq)]
pub struct Delta {
    /// Receipt time, seconds since the socket opened.
    pub at_s: f64,
    /// The delta text.
    pub text: String,
    /// The speech front at receipt: when the audio sent so far ends on the pacing clock
    /// (paced modes) or when the last append was handed over (saturate); `None` before
    /// the first append.
    pub front_s: Option<f64>,
}

/// Token counts of `transcription.done.usage` (each absent when the server omits it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Usage {
    /// `prompt_tokens`.
    pub prompt_tokens: Option<u64>,
    /// `completion_tokens`.
    pub completion_tokens: Option<u64>,
    /// `total_tokens`.
    pub total_tokens: Option<u64>,
}

/// Everything one session observed, for the metric formulas.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Record {
    /// `session.created` receipt.
    pub created_s: Option<f64>,
    /// First append's intended send time (saturate: when it was handed over).
    pub first_audio_s: Option<f64>,
    /// Final commit's intended send time (saturate: when it was handed over).
    pub final_commit_s: Option<f64>,
    /// `transcription.done` receipt.
    pub done_s: Option<f64>,
    /// Every delta, in order.
    pub deltas: Vec<Delta>,
    /// `transcription.done.text`.
    pub text: Option<String>,
    /// `transcription.done.usage`.
    pub usage: Option<Usage>,
    /// Appends sent.
    pub appends: usize,
    /// Seconds of audio in the input.
    pub audio_s: f64,
    /// Largest time an append was handed over after its schedule, seconds.
    pub pacing_max_lag_s: f64,
    /// The server's error code, when an `error` event ended the session.
    pub error_code: Option<String>,
}

/// One session's protocol state.
#[derive(Debug)]
pub struct TranscriptionCore {
    settings: Arc<Settings>,
    pcm: Bytes,
    phase: Phase,
    origin: Option<Instant>,
    stream_t0: Option<Instant>,
    next_offset: usize,
    deadline: Option<Instant>,
    front: Option<Instant>,
    record: Record,
}

impl TranscriptionCore {
    /// A session that streams `pcm` (PCM16 mono LE at `settings.sample_rate`).
    pub fn new(settings: Arc<Settings>, pcm: Bytes) -> Self {
        let record = Record {
            audio_s: settings.media_time(pcm.len()).as_secs_f64(),
            ..Record::default()
        };
        Self {
            settings,
            pcm,
            phase: Phase::AwaitingCreated,
            origin: None,
            stream_t0: None,
            next_offset: 0,
            deadline: None,
            front: None,
            record,
        }
    }

    /// Where the session is.
    #[cfg(test)]
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// What was observed so far.
    #[cfg(test)]
    pub fn record(&self) -> &Record {
        &self.record
    }

    /// Hand over the record (at the end of the session).
    pub fn into_record(self) -> Record {
        self.record
    }

    fn secs(&self, at: Instant) -> f64 {
        self.origin
            .map_or(0.0, |o| at.saturating_duration_since(o).as_secs_f64())
    }

    /// The socket is open: wait for `session.created`.
    pub fn on_open(&mut self, now: Instant) -> Actions {
        self.origin = Some(now);
        let deadline = now + secs(self.settings.created_timeout_s);
        self.deadline = Some(deadline);
        Actions {
            wake: Some(deadline),
            ..Actions::default()
        }
    }

    /// One inbound text message received at `at`.
    pub fn on_text(&mut self, text: &str, at: Instant) -> Actions {
        let mut out = Actions::default();
        if self.phase == Phase::Done {
            return out;
        }
        let event: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                let shown: String = text.chars().take(80).collect();
                self.fail(
                    &mut out,
                    Cause::Protocol,
                    format!("invalid JSON from the server ({e}): {shown:?}"),
                );
                return out;
            }
        };
        match event.get("type").and_then(Value::as_str).unwrap_or("") {
            "session.created" if self.phase == Phase::AwaitingCreated => {
                self.record.created_s = Some(self.secs(at));
                let update = json!({"type": "session.update", "model": self.settings.model});
                out.send.push((update.to_string(), None));
                out.send.push((commit(false), None));
                self.phase = Phase::Streaming;
                self.stream_t0 = Some(at);
                self.pump(at, &mut out);
            }
            "transcription.delta" => {
                let delta = event.get("delta").and_then(Value::as_str).unwrap_or("");
                let front_s = self.front.map(|f| self.secs(f));
                let at_s = self.secs(at);
                self.record.deltas.push(Delta {
                    at_s,
                    text: delta.to_owned(),
                    front_s,
                });
            }
            "transcription.done" => self.on_done(&event, at, &mut out),
            "error" => {
                let (code, msg) = error_fields(&event);
                self.record.error_code = code.clone();
                self.fail(
                    &mut out,
                    Cause::ServerError,
                    error_message(code.as_deref(), &msg),
                );
            }
            _ => {}
        }
        out
    }

    fn on_done(&mut self, event: &Value, at: Instant, out: &mut Actions) {
        self.record.done_s = Some(self.secs(at));
        self.record.text = event.get("text").and_then(Value::as_str).map(str::to_owned);
        self.record.usage = event.get("usage").map(|u| {
            let n = |k: &str| u.get(k).and_then(Value::as_u64);
            Usage {
                prompt_tokens: n("prompt_tokens"),
                completion_tokens: n("completion_tokens"),
                total_tokens: n("total_tokens"),
            }
        });
        if self.phase != Phase::Finalizing {
            self.fail(
                out,
                Cause::Protocol,
                "transcription.done arrived before the final commit was sent",
            );
        } else if self.record.text.is_none() {
            self.fail(
                out,
                Cause::Protocol,
                "transcription.done has no string \"text\"",
            );
        } else {
            self.phase = Phase::Done;
            out.finish = Some(Ok(()));
        }
    }

    /// A wake-up asked for earlier.
    pub fn on_wake(&mut self, now: Instant) -> Actions {
        let mut out = Actions::default();
        let expired = self.deadline.is_some_and(|d| now >= d);
        match self.phase {
            Phase::AwaitingCreated if expired => {
                let t = self.settings.created_timeout_s;
                self.fail(
                    &mut out,
                    Cause::Timeout,
                    format!("no session.created within {t} s of connecting"),
                );
            }
            Phase::Streaming => self.pump(now, &mut out),
            Phase::Finalizing if expired => {
                let t = self.settings.done_timeout_s;
                self.fail(
                    &mut out,
                    Cause::Timeout,
                    format!("no transcription.done within {t} s of the final commit"),
                );
            }
            Phase::AwaitingCreated | Phase::Finalizing => out.wake = self.deadline,
            Phase::Done => {}
        }
        out
    }

    /// The peer closed before the outcome was decided.
    pub fn on_closed(&mut self, reason: Option<&str>) -> Actions {
        let mut out = Actions::default();
        if self.phase != Phase::Done {
            let why = reason.map(|r| format!(": {r}")).unwrap_or_default();
            self.fail(
                &mut out,
                Cause::ClosedEarly,
                format!("the server closed the WebSocket before transcription.done{why}"),
            );
        }
        out
    }

    fn fail(&mut self, out: &mut Actions, cause: Cause, msg: impl Into<String>) {
        self.phase = Phase::Done;
        out.finish.get_or_insert(Err((cause, msg.into())));
    }

    fn due(&self, offset: usize) -> Option<Instant> {
        let media = self.settings.media_time(offset);
        Some(self.stream_t0? + self.settings.pacing.due_after_media(media)?)
    }

    /// Send every append due at `now` (saturate: one per call, so inbound events
    /// interleave), then the final commit once it is due.
    fn pump(&mut self, now: Instant, out: &mut Actions) {
        let chunk = self.settings.chunk_bytes();
        let total = self.pcm.len();
        while self.next_offset < total {
            let intended = self.due(self.next_offset);
            if let Some(t) = intended.filter(|t| *t > now) {
                out.wake = Some(t);
                return;
            }
            let end = (self.next_offset + chunk).min(total);
            let audio = crate::util::b64::standard().encode(&self.pcm[self.next_offset..end]);
            let msg = json!({"type": "input_audio_buffer.append", "audio": audio});
            out.send.push((msg.to_string(), intended));
            let lag = intended.map_or(0.0, |t| now.saturating_duration_since(t).as_secs_f64());
            self.record.pacing_max_lag_s = self.record.pacing_max_lag_s.max(lag);
            if self.record.first_audio_s.is_none() {
                self.record.first_audio_s = Some(self.secs(intended.unwrap_or(now)));
            }
            self.record.appends += 1;
            self.next_offset = end;
            self.front = Some(self.due(end).unwrap_or(now));
            if intended.is_none() {
                out.wake = Some(now);
                return;
            }
        }
        let intended = self.due(total);
        if let Some(t) = intended.filter(|t| *t > now) {
            out.wake = Some(t);
            return;
        }
        out.send.push((commit(true), intended));
        self.record.final_commit_s = Some(self.secs(intended.unwrap_or(now)));
        self.phase = Phase::Finalizing;
        let deadline = intended.unwrap_or(now).max(now) + secs(self.settings.done_timeout_s);
        self.deadline = Some(deadline);
        out.wake = Some(deadline);
    }
}

fn secs(s: f64) -> Duration {
    Duration::try_from_secs_f64(s.max(0.0)).unwrap_or(Duration::MAX / 4)
}

/// `input_audio_buffer.commit` with its `final` flag.
pub fn commit(is_final: bool) -> String {
    json!({"type": "input_audio_buffer.commit", "final": is_final}).to_string()
}

/// The code and message of an `error` event: vLLM sends `{"error": "<message>", "code":
/// "<code>"}`; an OpenAI-style `{"error": {"message", "code"}}` and a top-level
/// `message` are read too.
pub fn error_fields(event: &Value) -> (Option<String>, String) {
    let nested = event.get("error").filter(|e| e.is_object());
    let code = event
        .get("code")
        .or_else(|| nested.and_then(|e| e.get("code")))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let msg = event
        .get("error")
        .and_then(Value::as_str)
        .or_else(|| {
            nested
                .and_then(|e| e.get("message"))
                .and_then(Value::as_str)
        })
        .or_else(|| event.get("message").and_then(Value::as_str))
        .unwrap_or("(no message)")
        .to_owned();
    (code, msg)
}

/// The failure message for a server `error` event: the server's message, its code and,
/// for the codes vLLM uses, what the code means.
pub fn error_message(code: Option<&str>, msg: &str) -> String {
    let meaning = match code {
        Some("invalid_json") => " (the server could not parse a client message)",
        Some("invalid_audio") => " (the server rejected the audio: base64 PCM16 mono expected)",
        Some("invalid_event") => " (the server refused a client event: a field is missing)",
        Some("model_not_found") => " (the server does not serve the model in session.update)",
        Some("model_not_validated") => {
            " (a commit came before a session.update with a served model)"
        }
        Some("unknown_event") => " (the server does not know a client event type)",
        Some("processing_error") => " (the server failed while transcribing)",
        _ => "",
    };
    match code {
        Some(c) => format!("server error {c}{meaning}: {msg}"),
        None => format!("server error: {msg}"),
    }
}

#[cfg(test)]
#[path = "protocol_tests.rs"]
mod tests;
