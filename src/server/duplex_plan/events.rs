//! Server → client event shapes of the duplex endpoint (spec §1.3) and the script of one
//! response (created, paced transcript + audio deltas, done) with the response faults of
//! `DuplexFaults` applied. Pure: offsets in, JSON values out.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use super::delta::{AudioDelta, Delta, StageMetrics, Step};
use super::{Action, millis};
use crate::server::config::DuplexServerConfig;

/// Output audio sample rate (PCM16 mono).
pub(crate) const OUTPUT_RATE_HZ: u32 = 24_000;
/// Id used by the `audio_unknown_response` / `transcript_unknown_response` faults.
pub(crate) const UNKNOWN_RESPONSE_ID: &str = "resp_unknown";
/// Id of the stray `response.done` sent by the `done_without_created` fault.
pub(crate) const ORPHAN_RESPONSE_ID: &str = "resp_orphan";
/// Transcript words, one per audio delta, cycled.
const WORDS: [&str; 8] = [
    "hello",
    "from",
    "the",
    "rtload",
    "reference",
    "duplex",
    "speech",
    "model",
];

/// `{"type":"error","message":...}`.
pub(crate) fn error_event(message: &str) -> Value {
    json!({"type": "error", "message": message})
}

/// `session.expired` with a `reason`.
pub(crate) fn expired_event(reason: &str) -> Value {
    json!({"type": "session.expired", "reason": reason})
}

/// `session.closed`, with a `reason` only when given.
pub(crate) fn closed_event(reason: Option<&str>) -> Value {
    match reason {
        Some(reason) => json!({"type": "session.closed", "reason": reason}),
        None => json!({"type": "session.closed"}),
    }
}

/// `session.created` advertising `chunk_period_ms`.
pub(crate) fn created_event(id: &str, model: &str, chunk_period_ms: u64, idle_s: f64) -> Value {
    json!({"type": "session.created", "session": {
        "id": id, "model": model, "idle_timeout_s": idle_s,
        "input_audio_format": "pcm16", "output_audio_format": "pcm16",
        "capabilities": {"chunk_period_ms": chunk_period_ms}}})
}

/// `input_audio_buffer.committed` for `input_ms` of input; `overlap_deferred` only when true.
pub(crate) fn committed_event(input_ms: u64, deferred: bool) -> Value {
    let mut event = json!({"type": "input_audio_buffer.committed", "audio_end_ms": input_ms});
    if deferred {
        event["overlap_deferred"] = Value::Bool(true);
    }
    event
}

/// `response.listen`: a decision (`buffering: false`) or a buffering notification.
pub(crate) fn listen_event(buffering: bool) -> Value {
    json!({"type": "response.listen",
           "response": {"metadata": {"model_listen": true, "buffering": buffering}}})
}

/// Bookkeeping carried by a scripted event.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Mark {
    None,
    /// The response's (first) `response.created`.
    Created,
    /// An audio delta of the response carrying this many ms.
    Audio(u64),
    /// The response's (first) `response.done`.
    Done,
}

/// The events of one response, with their offsets.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Script {
    /// The response id.
    pub(crate) id: String,
    /// `(due, event, bookkeeping)` in send order.
    pub(crate) events: Vec<(Duration, Step, Mark)>,
    /// Offset of its `response.done`.
    pub(crate) end: Duration,
}

/// Builds response scripts for one session.
#[derive(Debug)]
pub(crate) struct Responder {
    /// Config with the session's faults.
    cfg: DuplexServerConfig,
    /// Session ordinal, part of every response id.
    ordinal: u64,
    /// Base64 of one delta of tone.
    audio: Arc<str>,
}

/// A tone payload and what it was made for: `(tone_hz bits, delta_ms)`.
type Tone = ((u64, u32), Arc<str>);

thread_local! {
    /// The last tone payload made on this thread, by `(tone_hz bits, delta_ms)`: every
    /// session of a server has the same one, so it is made once, not per session.
    static TONE: RefCell<Option<Tone>> = const { RefCell::new(None) };
}

/// Base64 of `ms` of tone at `hz` (see [`tone_pcm`]), shared.
fn tone_base64(hz: f64, ms: u32) -> Arc<str> {
    TONE.with_borrow_mut(|cached| {
        let key = (hz.to_bits(), ms);
        match cached {
            Some((k, audio)) if *k == key => Arc::clone(audio),
            _ => {
                let audio: Arc<str> = STANDARD.encode(tone_pcm(hz, ms)).into();
                *cached = Some((key, Arc::clone(&audio)));
                audio
            }
        }
    })
}

impl Responder {
    /// Precomputes the delta payload for `cfg`.
    pub(crate) fn new(cfg: &DuplexServerConfig, ordinal: u64) -> Responder {
        Responder {
            cfg: cfg.clone(),
            ordinal,
            audio: tone_base64(cfg.tone_hz, cfg.delta_ms),
        }
    }

    /// The script of response number `index` of the session, created at `start` under
    /// the load factor `load` (`[server.load]`, 1 without): the first delta (transcript
    /// word, then audio) is due `first_response_delay_ms * load` after `start`, each
    /// later one `delta_ms * rtf * load` ms after the previous, `response.done` right
    /// after the last delta. The last delta's stage metrics state those effective
    /// times. Faults apply to index 0.
    pub(crate) fn response(&self, index: usize, start: Duration, load: f64) -> Script {
        let cfg = &self.cfg;
        let f = &cfg.faults;
        let first = index == 0;
        let id = format!("resp_{}_{index}", self.ordinal);
        let n = cfg.audio_deltas;
        let gap_ms = f64::from(cfg.delta_ms) * cfg.rtf * load;
        let gap = millis(gap_ms);
        let ttft_ms = cfg.first_response_delay_ms * load;
        let first_audio = start + millis(ttft_ms);
        let end = first_audio + gap * (n - 1);
        let mut events = Vec::new();
        let mut push = |due, event: Step, mark| events.push((due, event, mark));
        if first && f.done_without_created {
            let orphan = Delta::Done {
                id: ORPHAN_RESPONSE_ID.into(),
                status: "completed",
            };
            push(start, Step::Delta(orphan), Mark::None);
        }
        if first && f.missing_response_id {
            // A response the client cannot identify: created without an id and nothing
            // else, so the client's ledger check (not its audio check) catches it.
            let created =
                json!({"type": "response.created", "response": {"status": "in_progress"}});
            push(start, send(created), Mark::None);
            return Script {
                id,
                events,
                end: start,
            };
        }
        // One id for every event of the response.
        let shared: Arc<str> = Arc::from(id.as_str());
        let created = Delta::Created {
            id: Arc::clone(&shared),
        };
        if first && f.duplicate_created {
            push(start, Step::Delta(created.clone()), Mark::None);
        }
        push(start, Step::Delta(created), Mark::Created);
        for k in 0..n {
            let due = first_audio + gap * k;
            let lead = first && k == 0;
            if lead && f.transcript_unknown_response {
                let stray = Delta::Transcript {
                    kind: self.transcript_kind(),
                    id: UNKNOWN_RESPONSE_ID.into(),
                    word: "stray",
                    space: false,
                };
                push(due, Step::Delta(stray), Mark::None);
            }
            let word = WORDS[k as usize % WORDS.len()];
            push(due, self.transcript_event(&shared, word, k > 0), Mark::None);
            if lead && f.audio_unknown_response {
                let stray = self.audio_event(&UNKNOWN_RESPONSE_ID.into(), k, false);
                push(due, Step::Delta(Delta::Audio(Box::new(stray))), Mark::None);
            }
            let mut audio = self.audio_event(&shared, k, lead);
            if k + 1 == n {
                audio.vllm_omni = Some(StageMetrics {
                    tokens: n,
                    ttft_ms,
                    gap_ms,
                });
            }
            let audio = Step::Delta(Delta::Audio(Box::new(audio)));
            push(due, audio, Mark::Audio(u64::from(cfg.delta_ms)));
        }
        let done = Delta::Done {
            id: shared,
            status: done_status(f, first),
        };
        let copies = if first && f.duplicate_done { 2 } else { 1 };
        for mark in [Mark::Done, Mark::None].into_iter().take(copies) {
            push(end, Step::Delta(done.clone()), mark);
        }
        Script { id, events, end }
    }

    /// The transcript event's `type`: `response.audio_transcript.delta`, or the
    /// upstream name.
    fn transcript_kind(&self) -> &'static str {
        match self.cfg.upstream_event_names {
            true => "response.output_audio_transcript.delta",
            false => "response.audio_transcript.delta",
        }
    }

    /// The transcript delta `word` of `id` (after a space unless it is the first).
    fn transcript_event(&self, id: &Arc<str>, word: &'static str, space: bool) -> Step {
        Step::Delta(Delta::Transcript {
            kind: self.transcript_kind(),
            id: Arc::clone(id),
            word,
            space,
        })
    }

    /// Audio delta `k` of response `id`; `lead` applies the per-delta wire faults.
    fn audio_event(&self, id: &Arc<str>, k: u32, lead: bool) -> AudioDelta {
        let f = &self.cfg.faults;
        let payload = if lead && f.audio_bad_base64 {
            "%%not-base64%%".into()
        } else if lead && f.audio_odd_length {
            let mut pcm = tone_pcm(self.cfg.tone_hz, self.cfg.delta_ms);
            pcm.pop();
            STANDARD.encode(pcm).into()
        } else {
            Arc::clone(&self.audio)
        };
        let kind = match self.cfg.upstream_event_names {
            true => "response.output_audio.delta",
            false => "response.audio.delta",
        };
        let format = match lead && f.audio_wrong_format {
            true => "opus",
            false => "pcm16",
        };
        let rate = match lead && f.audio_wrong_rate {
            true => 16_000,
            false => OUTPUT_RATE_HZ,
        };
        AudioDelta {
            kind,
            id: Arc::clone(id),
            payload,
            duration_ms: u64::from(self.cfg.delta_ms) * u64::from(k + 1),
            format: (!f.omit_format).then_some(format),
            sample_rate_hz: (!f.omit_sample_rate).then_some(rate),
            vllm_omni: None,
        }
    }
}

/// An event built as JSON, to send.
fn send(event: Value) -> Step {
    Step::Act(Action::Send(event))
}

/// `ms` of a sine tone at `hz` as PCM16 LE mono 24 kHz (amplitude ~0.3 of full scale).
pub(crate) fn tone_pcm(hz: f64, ms: u32) -> Vec<u8> {
    let samples = u64::from(OUTPUT_RATE_HZ) * u64::from(ms) / 1000;
    let step = std::f64::consts::TAU * hz / f64::from(OUTPUT_RATE_HZ);
    (0..samples)
        .flat_map(|i| (((i as f64 * step).sin() * 10_000.0) as i16).to_le_bytes())
        .collect()
}

/// The `response.done` status: the first response's fault (failed, then cancelled) if
/// any, else `completed`.
fn done_status(f: &crate::server::config::DuplexFaults, first: bool) -> &'static str {
    if first && f.failed_response {
        "failed"
    } else if first && f.cancelled_response {
        "cancelled"
    } else {
        "completed"
    }
}

/// `input_audio_buffer.speech_started` at `audio_start_ms` of the input.
pub(crate) fn speech_started_event(audio_start_ms: u64) -> Value {
    json!({"type": "input_audio_buffer.speech_started", "audio_start_ms": audio_start_ms})
}

/// `input_audio_buffer.speech_stopped` at `audio_end_ms` of the input.
pub(crate) fn speech_stopped_event(audio_end_ms: u64) -> Value {
    json!({"type": "input_audio_buffer.speech_stopped", "audio_end_ms": audio_end_ms})
}

/// `output_audio_buffer.cleared` for response `id`.
pub(crate) fn cleared_event(id: &str) -> Value {
    json!({"type": "output_audio_buffer.cleared", "response_id": id})
}

/// `response.done` of `id` cancelled because the user spoke over it.
pub(crate) fn barged_done_event(id: &str) -> Value {
    json!({"type": "response.done", "response": {"id": id, "status": "cancelled",
        "status_details": {"type": "cancelled", "reason": "turn_detected"}}})
}
