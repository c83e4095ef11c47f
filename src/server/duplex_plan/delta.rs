//! The response deltas of the duplex endpoint (transcript words and audio) as pieces the
//! socket loop writes straight into one string: the audio payload is the session's one
//! shared base64 (an `Arc`, never copied per delta), the response id is shared by every
//! event of its response, and no `serde_json::Value` is built for them. The text is
//! byte for byte what `wire::event_text` writes for the same event as a `Value` with
//! `server_sent_at_s` inserted (keys in sorted order); [`Delta::to_value`] is that event,
//! for the tests and anything that wants JSON. Pure.

use std::fmt::Write as _;
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
    pub(crate) vllm_omni: Option<Value>,
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
                if let Some(metrics) = &a.vllm_omni {
                    event["vllm_omni"] = metrics.clone();
                }
                event
            }
        }
    }

    /// The text of the event stamped `server_sent_at_s = stamp_s`, as the server sends it.
    pub(crate) fn text(&self, stamp_s: f64) -> String {
        match self {
            Delta::Transcript {
                kind,
                id,
                word,
                space,
            } => {
                let mut out = String::with_capacity(128);
                out.push_str("{\"delta\":\"");
                if *space {
                    out.push(' ');
                }
                out.push_str(word);
                out.push_str("\",\"response_id\":\"");
                out.push_str(id);
                out.push('"');
                stamp_and_type(&mut out, stamp_s, kind);
                out.push('}');
                out
            }
            Delta::Audio(a) => a.text(stamp_s),
        }
    }
}

impl AudioDelta {
    fn text(&self, stamp_s: f64) -> String {
        let mut out = String::with_capacity(self.payload.len() + 256);
        out.push_str("{\"delta\":\"");
        out.push_str(&self.payload);
        out.push('"');
        if let Some(format) = self.format {
            out.push_str(",\"format\":\"");
            out.push_str(format);
            out.push('"');
        }
        out.push_str(",\"item_id\":\"item_");
        out.push_str(&self.id);
        let _ = write!(
            out,
            "\",\"metadata\":{{\"audio_duration_ms\":{}}},\"response_id\":\"",
            self.duration_ms
        );
        out.push_str(&self.id);
        out.push('"');
        if let Some(rate) = self.sample_rate_hz {
            let _ = write!(out, ",\"sample_rate_hz\":{rate}");
        }
        stamp_and_type(&mut out, stamp_s, self.kind);
        if let Some(metrics) = &self.vllm_omni {
            let _ = write!(out, ",\"vllm_omni\":{metrics}");
        }
        out.push('}');
        out
    }
}

/// `,"server_sent_at_s":…,"type":"…"`, the stamp written as `serde_json` writes it.
fn stamp_and_type(out: &mut String, stamp_s: f64, kind: &str) {
    let _ = write!(out, ",\"server_sent_at_s\":{}", Value::from(stamp_s));
    out.push_str(",\"type\":\"");
    out.push_str(kind);
    out.push('"');
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
