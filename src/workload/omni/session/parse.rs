//! One inbound text frame parsed into the event the session reads, with an audio delta's
//! payload left in the frame: an audio delta (`response.audio.delta` and its upstream
//! name) carries ~6.4 KB of base64 under `delta` (or `audio`), which the session decodes
//! once and never records (the log keeps `audio_bytes` instead). Parsed into a `Value`,
//! that string is copied into a fresh allocation and freed right after decoding; here
//! it is borrowed from the frame's text instead ([`AudioPayload`]).
//!
//! The event is exactly `serde_json`'s `Value` for the text but for those fields: any other
//! event, or a `delta` / `audio` that is not a string, stays in the map as `Value` would
//! hold it; duplicate keys keep the last, as `Value` does. Text this parser declines (not
//! an object, malformed) goes the plain `Value` way, so errors read the same.
//!
//! The session reads events through the typed, borrowed view of [`super::event`]; this
//! `Value` is what that view builds when a reader asks for one, and what it is when the
//! view declines.

use std::borrow::Cow;
use std::fmt;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::workload::omni::ledger::AUDIO_DELTA_TYPES;
pub use crate::workload::omni::ledger::AudioPayload;

/// A parsed inbound event and, for an audio delta, its payload taken out of it.
#[derive(Debug)]
pub struct Parsed<'a> {
    /// The event, without an audio delta's string payload fields.
    pub ev: Value,
    /// Those fields.
    pub audio: AudioPayload<'a>,
}

/// Parses one inbound text frame; a malformed one fails the session with the reference's
/// words, then what failed to parse and where.
pub fn parse_event(text: &str) -> Result<Parsed<'_>, String> {
    if let Ok(p) = serde_json::from_str::<Parsed<'_>>(text) {
        return Ok(p);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(ev) => Ok(Parsed {
            ev,
            audio: AudioPayload::default(),
        }),
        Err(e) => {
            let head: String = text.chars().take(80).collect();
            let more = if head.len() < text.len() { "…" } else { "" };
            Err(format!(
                "Realtime WebSocket reader failed: server sent malformed JSON ({e}): {head:?}{more}"
            ))
        }
    }
}

impl<'de> Deserialize<'de> for Parsed<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(EventVisitor)
    }
}

struct EventVisitor;

impl<'de> Visitor<'de> for EventVisitor {
    type Value = Parsed<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Parsed<'de>, A::Error> {
        let mut map = Map::new();
        let mut audio = AudioPayload::default();
        // Keys are borrowed from the text and copied only into the map: a payload key
        // taken aside costs nothing.
        while let Some(Key(key)) = access.next_key::<Key<'de>>()? {
            let slot = match &*key {
                "delta" => &mut audio.delta,
                "audio" => &mut audio.audio,
                _ => {
                    map.insert(key.into_owned(), access.next_value()?);
                    continue;
                }
            };
            match access.next_value::<Field<'de>>()? {
                Field::Str(s) => {
                    map.remove(&*key);
                    *slot = Some(s);
                }
                Field::Other(v) => {
                    *slot = None;
                    map.insert(key.into_owned(), v);
                }
            }
        }
        let audio_event = (map.get("type").and_then(Value::as_str))
            .is_some_and(|t| AUDIO_DELTA_TYPES.contains(&t));
        if !audio_event {
            // Not an audio delta: the strings go back where `Value` keeps them.
            for (key, s) in [("delta", audio.delta.take()), ("audio", audio.audio.take())] {
                if let Some(s) = s {
                    map.insert(key.into(), Value::String(s.into_owned()));
                }
            }
        }
        Ok(Parsed {
            ev: Value::Object(map),
            audio,
        })
    }
}

/// An object's key, borrowed from the text when it had no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Borrowed(s)))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(s.to_owned())))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(s)))
    }
}

/// A payload field's value: a string (borrowed when it had no escapes), or anything else
/// exactly as `Value` parses it.
enum Field<'a> {
    Str(Cow<'a, str>),
    Other(Value),
}

impl<'de> Deserialize<'de> for Field<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FieldVisitor)
    }
}

struct FieldVisitor;

impl<'de> Visitor<'de> for FieldVisitor {
    type Value = Field<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Field<'de>, E> {
        Ok(Field::Str(Cow::Borrowed(s)))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Field<'de>, E> {
        Ok(Field::Str(Cow::Owned(s.to_owned())))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Field<'de>, E> {
        Ok(Field::Str(Cow::Owned(s)))
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Field<'de>, E> {
        Ok(Field::Other(Value::Bool(b)))
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Field<'de>, E> {
        Ok(Field::Other(Value::Number(n.into())))
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Field<'de>, E> {
        Ok(Field::Other(Value::Number(n.into())))
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Field<'de>, E> {
        Ok(Field::Other(
            Number::from_f64(n).map_or(Value::Null, Value::Number),
        ))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Field<'de>, E> {
        Ok(Field::Other(Value::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Field<'de>, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq)).map(Field::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Field<'de>, A::Error> {
        Value::deserialize(MapAccessDeserializer::new(map)).map(Field::Other)
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
