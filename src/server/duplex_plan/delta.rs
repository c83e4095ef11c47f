//! The response deltas of the duplex endpoint (transcript words and audio) as pieces the
//! socket loop writes straight into its write buffer: the audio payload is the session's one
//! shared base64 (an `Arc`, copied only into the write buffer), the response id is shared by every
//! event of its response, and no `serde_json::Value` is built for them. The text is
//! byte for byte what `wire::event_text` writes for the same event as a `Value` with
//! `server_sent_at_s` inserted (keys in sorted order); [`Delta::to_value`] is that event,
//! for the tests and anything that wants JSON. Pure.

use std::fmt::Write;
use std::sync::Arc;

use serde_json::Value;

use super::Action;

/// What the session's timeline holds: an event built as JSON, or a delta written from
/// pieces.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// An action whose event (if any) is JSON.
    Act(Action),
    /// A transcript or audio delta.
    Delta(Delta),
}

impl From<Action> for Step {
    fn from(action: Action) -> Step {
        Step::Act(action)
    }
}

#[cfg(test)]
impl Step {
    /// The same step as an [`Action`] (a delta becomes its JSON event).
    pub(crate) fn into_action(self) -> Action {
        match self {
            Step::Act(action) => action,
            Step::Delta(delta) => Action::Send(delta.to_value()),
        }
    }
}

/// One delta of a response. Every string in it stands between JSON quotes as it is (ids
/// are `resp_…` of digits, words and kinds are fixed, payloads are base64 or the fault's
/// fixed text), so none is escaped.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Delta {
    /// `response.audio_transcript.delta` (or the upstream name).
    Transcript {
        /// The event's `type`.
        kind: &'static str,
        /// `response_id`.
        id: Arc<str>,
        /// The word.
        word: &'static str,
        /// Whether a space precedes the word (every word but the first).
        space: bool,
    },
    /// `response.audio.delta` (or the upstream name).
    Audio(Box<AudioDelta>),
    /// `response.created` of response `id` (status `in_progress`).
    Created {
        /// `response.id`.
        id: Arc<str>,
    },
    /// `response.done` of response `id` with `status`, and `status_details` naming the
    /// injected fault unless it is `completed`.
    Done {
        /// `response.id`.
        id: Arc<str>,
        /// `response.status`.
        status: &'static str,
    },
}

/// The fields of one audio delta.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AudioDelta {
    /// The event's `type`.
    pub(crate) kind: &'static str,
    /// `response_id` (and `item_id` is `item_` + it).
    pub(crate) id: Arc<str>,
    /// The base64 audio, shared by every delta of the session.
    pub(crate) payload: Arc<str>,
    /// `metadata.audio_duration_ms`.
    pub(crate) duration_ms: u64,
    /// `format`, unless omitted.
    pub(crate) format: Option<&'static str>,
    /// `sample_rate_hz`, unless omitted.
    pub(crate) sample_rate_hz: Option<u32>,
    /// `vllm_omni` (the last delta's stage metrics).
    pub(crate) vllm_omni: Option<StageMetrics>,
}

/// The stage metrics of a response's last audio delta: `num_tokens_out`, the TTFT, and
/// one inter-token gap repeated (`vllm_tpot_ms`, and `vllm_itls_ms` once per gap).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct StageMetrics {
    /// `num_tokens_out` (the response's audio deltas).
    pub(crate) tokens: u32,
    /// `vllm_ttft_ms`.
    pub(crate) ttft_ms: f64,
    /// `vllm_tpot_ms` and every entry of `vllm_itls_ms` (`tokens - 1` of them).
    pub(crate) gap_ms: f64,
}

impl StageMetrics {
    /// The `vllm_omni` object as JSON.
    #[cfg(test)]
    fn to_value(self) -> Value {
        let gaps = self.tokens.saturating_sub(1) as usize;
        serde_json::json!({"stage_metrics": {"0": {
            "num_tokens_out": self.tokens,
            "vllm_ttft_ms": self.ttft_ms,
            "vllm_tpot_ms": self.gap_ms,
            "vllm_itls_ms": vec![self.gap_ms; gaps]}}})
    }

    /// Writes the object as `serde_json` writes [`Self::to_value`] (keys sorted).
    fn write<W: Write + ?Sized>(self, out: &mut W) {
        let _ = write!(
            out,
            "{{\"stage_metrics\":{{\"0\":{{\"num_tokens_out\":{},\"vllm_itls_ms\":[",
            self.tokens
        );
        let gap = Value::from(self.gap_ms);
        for i in 0..self.tokens.saturating_sub(1) {
            let comma = if i == 0 { "" } else { "," };
            let _ = write!(out, "{comma}{gap}");
        }
        let ttft = Value::from(self.ttft_ms);
        let _ = write!(
            out,
            "],\"vllm_tpot_ms\":{gap},\"vllm_ttft_ms\":{ttft}}}}}}}"
        );
    }
}

impl Delta {
    /// The event as JSON, without `server_sent_at_s`.
    #[cfg(test)]
    pub(crate) fn to_value(&self) -> Value {
        match self {
            Delta::Transcript {
                kind,
                id,
                word,
                space,
            } => {
                let text = if *space {
                    format!(" {word}")
                } else {
                    (*word).to_string()
                };
                serde_json::json!({"type": kind, "response_id": &**id, "delta": text})
            }
            Delta::Audio(a) => {
                let mut event = serde_json::json!({"type": a.kind, "response_id": &*a.id,
                    "item_id": format!("item_{}", a.id), "delta": &*a.payload,
                    "metadata": {"audio_duration_ms": a.duration_ms}});
                if let Some(format) = a.format {
                    event["format"] = serde_json::json!(format);
                }
                if let Some(rate) = a.sample_rate_hz {
                    event["sample_rate_hz"] = serde_json::json!(rate);
                }
                if let Some(metrics) = a.vllm_omni {
                    event["vllm_omni"] = metrics.to_value();
                }
                event
            }
            Delta::Created { id } => serde_json::json!({"type": "response.created",
                "response": {"id": &**id, "status": "in_progress"}}),
            Delta::Done { id, status } => {
                let mut response = serde_json::json!({"id": &**id, "status": status});
                if *status != "completed" {
                    response["status_details"] =
                        serde_json::json!({"type": status, "reason": "injected_fault"});
                }
                serde_json::json!({"type": "response.done", "response": response})
            }
        }
    }

    /// The text of the event stamped `server_sent_at_s = stamp_s`, as the server sends it.
    #[cfg(test)]
    pub(crate) fn text(&self, stamp_s: f64) -> String {
        let mut out = String::new();
        self.write(&mut out, stamp_s);
        out
    }

    /// Appends [`Self::text`] to `out` (a buffer the caller reuses, or the socket's
    /// write buffer itself).
    pub(crate) fn write<W: Write + ?Sized>(&self, out: &mut W, stamp_s: f64) {
        match self {
            Delta::Transcript {
                kind,
                id,
                word,
                space,
            } => {
                let _ = out.write_str("{\"delta\":\"");
                if *space {
                    let _ = out.write_char(' ');
                }
                let _ = out.write_str(word);
                let _ = out.write_str("\",\"response_id\":\"");
                let _ = out.write_str(id);
                let _ = out.write_char('"');
                stamp_and_type(out, stamp_s, kind);
            }
            Delta::Audio(a) => a.write(out, stamp_s),
            Delta::Created { id } => {
                let _ = out.write_str("{\"response\":{\"id\":\"");
                let _ = out.write_str(id);
                let _ = out.write_str("\",\"status\":\"in_progress\"}");
                stamp_and_type(out, stamp_s, "response.created");
            }
            Delta::Done { id, status } => {
                let _ = out.write_str("{\"response\":{\"id\":\"");
                let _ = out.write_str(id);
                let _ = write!(out, "\",\"status\":\"{status}\"");
                if *status != "completed" {
                    let _ = write!(
                        out,
                        ",\"status_details\":{{\"reason\":\"injected_fault\",\"type\":\"{status}\"}}"
                    );
                }
                let _ = out.write_char('}');
                stamp_and_type(out, stamp_s, "response.done");
            }
        }
        if !matches!(self, Delta::Audio(_)) {
            let _ = out.write_char('}');
        }
    }
}

impl AudioDelta {
    fn write<W: Write + ?Sized>(&self, out: &mut W, stamp_s: f64) {
        let _ = out.write_str("{\"delta\":\"");
        let _ = out.write_str(&self.payload);
        let _ = out.write_char('"');
        if let Some(format) = self.format {
            let _ = out.write_str(",\"format\":\"");
            let _ = out.write_str(format);
            let _ = out.write_char('"');
        }
        let _ = out.write_str(",\"item_id\":\"item_");
        let _ = out.write_str(&self.id);
        let _ = write!(
            out,
            "\",\"metadata\":{{\"audio_duration_ms\":{}}},\"response_id\":\"",
            self.duration_ms
        );
        let _ = out.write_str(&self.id);
        let _ = out.write_char('"');
        if let Some(rate) = self.sample_rate_hz {
            let _ = write!(out, ",\"sample_rate_hz\":{rate}");
        }
        stamp_and_type(out, stamp_s, self.kind);
        if let Some(metrics) = self.vllm_omni {
            let _ = out.write_str(",\"vllm_omni\":");
            metrics.write(out);
        }
        let _ = out.write_char('}');
    }
}

/// `,"server_sent_at_s":…,"type":"…"`, the stamp written as `serde_json` writes it.
fn stamp_and_type<W: Write + ?Sized>(out: &mut W, stamp_s: f64, kind: &str) {
    let _ = write!(out, ",\"server_sent_at_s\":{}", Value::from(stamp_s));
    let _ = out.write_str(",\"type\":\"");
    let _ = out.write_str(kind);
    let _ = out.write_char('"');
}

#[cfg(test)]
impl super::DuplexPlan {
    /// [`Self::on_event_steps`] as actions (deltas as JSON).
    pub(crate) fn on_event(
        &mut self,
        kind: &str,
        event: &Value,
        at: std::time::Duration,
    ) -> Vec<Action> {
        actions(self.on_event_steps(kind, event, at))
    }

    /// [`Self::on_append_text_steps`] as actions (deltas as JSON).
    pub(crate) fn on_append_text(
        &mut self,
        text: &str,
        at: std::time::Duration,
    ) -> Option<Vec<Action>> {
        self.on_append_text_steps(text, at).map(actions)
    }

    /// [`Self::pop_due_step`] as an action (a delta as JSON).
    pub(crate) fn pop_due(&mut self, now: std::time::Duration) -> Option<Action> {
        self.pop_due_step(now).map(Step::into_action)
    }
}

#[cfg(test)]
fn actions(steps: Vec<Step>) -> Vec<Action> {
    steps.into_iter().map(Step::into_action).collect()
}

#[cfg(test)]
#[path = "delta_tests.rs"]
mod tests;
