//! What a session puts on the wire: a `stream` chunk wrapped in its template, a `send`
//! step's payload, the session variables templates read, and the failure text for a
//! `fail_on` match.

use base64::Engine as _;
use bytes::Bytes;
use serde_json::Value;

use super::{Interp, StreamState};
use crate::util::template::Template;
use crate::workload::Outbound;
use crate::workload::scripted::script::{Action, ChunkFrame, ITEM_PREFIX, Payload};

/// Longest inbound text quoted in a failure message.
const QUOTE_CHARS: usize = 300;

impl Interp {
    pub(super) fn render_chunk(&self, s: &StreamState, end: usize) -> Result<Outbound, String> {
        let step = &self.script.steps[self.pc];
        let Action::Stream { frame, .. } = &step.action else {
            return Err("internal: stream state without a stream step".into());
        };
        let pcm = self.item.pcm.slice(s.offset..end);
        match frame {
            ChunkFrame::Binary => Ok(Outbound::Binary(pcm)),
            ChunkFrame::Json(t) => {
                let per_ms = f64::from(self.vars.sample_rate) * 2.0 / 1000.0;
                let lookup = |name: &str| -> Option<Value> {
                    match name {
                        "chunk_b64" => {
                            Some(Value::String(crate::util::b64::standard().encode(&pcm)))
                        }
                        "chunk_index" => Some(Value::from(s.index)),
                        "chunk_ms" => Some(Value::from(
                            (((end - s.offset) as f64) / per_ms).round() as u64,
                        )),
                        "audio_end_ms" => Some(Value::from(((end as f64) / per_ms).round() as u64)),
                        _ => self.var(name, step.turn),
                    }
                };
                Ok(Outbound::Text(t.render_text(&lookup)?.into()))
            }
        }
    }

    pub(super) fn render_payload(&self, p: &Payload, turn: u32) -> Result<Outbound, String> {
        let lookup = |name: &str| self.var(name, turn);
        let text = |t: &Template| t.render_text(&lookup);
        Ok(match p {
            Payload::Json(t) | Payload::Text(t) => Outbound::Text(text(t)?.into()),
            Payload::Binary(t) => {
                let b64 = text(t)?;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(b64.trim())
                    .map_err(|e| format!("`send_binary` must render base64 ({e})"))?;
                Outbound::Binary(Bytes::from(bytes))
            }
        })
    }

    fn var(&self, name: &str, turn: u32) -> Option<Value> {
        Some(match name {
            "model" => Value::String(self.vars.model.clone()),
            "sample_index" => Value::from(self.vars.sample_index),
            "session_id" => Value::String(self.vars.session_id.clone()),
            "sample_rate" => Value::from(self.vars.sample_rate),
            "turn" => Value::from(turn),
            "uuid" => Value::String(uuid_v4()),
            other => self
                .item
                .fields
                .get(other.strip_prefix(ITEM_PREFIX)?)?
                .clone(),
        })
    }
}

/// The failure message for a `fail_on` match: the message's own error text when it has
/// one (`error` as a string, or `error.message`), else the message itself, shortened.
pub(super) fn failure_text(msg: &Value, raw: &str) -> String {
    let err = msg.get("error");
    let text = err
        .and_then(Value::as_str)
        .or_else(|| err.and_then(|e| e.get("message")).and_then(Value::as_str))
        .or_else(|| msg.get("message").and_then(Value::as_str));
    let kind = msg.get("type").and_then(Value::as_str).unwrap_or("message");
    match text {
        Some(t) => format!("server sent {kind}: {t}"),
        None => {
            let short: String = raw.chars().take(QUOTE_CHARS).collect();
            format!("server sent {kind}: {short}")
        }
    }
}

/// A random RFC 4122 version-4 UUID.
fn uuid_v4() -> String {
    let mut b: [u8; 16] = rand::random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}
