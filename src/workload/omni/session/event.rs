//! The typed, borrowed view of one inbound event ([`Event`]): its top-level fields as
//! keys and raw JSON texts borrowed from the frame, so the session's hot readers (the
//! `type`, the response id, an audio delta's payload, a transcript delta's text, an audio
//! delta's `format` and `sample_rate_hz`) read an ordinary event without an allocation.
//! The event's `serde_json::Value` ([`parse::parse_event`]'s, an audio delta's string
//! payload set aside) is built only when a reader asks for it ([`EventView::value`]):
//! a nested field, an event the log keeps in memory.
//!
//! The view declines, and the event is that `Value` from the start, when the text is not
//! one JSON object, a key or a top-level string value has an escape, or the object has
//! more than [`MAX_MEMBERS`] fields: every reading is then `Value`'s own. A duplicate key
//! reads as its last occurrence, as in `Value`.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::events::Recorded;
use super::parse::{self, AudioPayload};
use crate::workload::omni::ledger::{AUDIO_DELTA_TYPES, EventView};
use crate::workload::omni::metrics::audio_packet;

/// The most top-level fields the typed view holds (beyond it, the event is a `Value`).
pub const MAX_MEMBERS: usize = 16;

/// One inbound event: typed and borrowed from its frame's text, or a `Value`.
#[derive(Debug)]
pub struct Event<'a> {
    text: &'a str,
    /// The top-level fields in text order; `None` when the event is a `Value` only.
    members: Option<Members<'a>>,
    /// An audio delta's string `delta` / `audio`, set aside.
    audio: AudioPayload<'a>,
    /// The event as `Value` (without the set-aside payload), once built.
    value: OnceCell<Value>,
}

/// Top-level fields: key and raw JSON value, both borrowed from the text.
#[derive(Debug, Default)]
struct Members<'a> {
    len: usize,
    kv: [(&'a str, &'a str); MAX_MEMBERS],
}

impl<'a> Members<'a> {
    fn iter(&self) -> impl DoubleEndedIterator<Item = &(&'a str, &'a str)> {
        self.kv[..self.len].iter()
    }
    /// The raw value of `key`'s last occurrence.
    fn raw(&self, key: &str) -> Option<&'a str> {
        self.iter().rev().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }
}

/// A raw JSON value's string, when it is one (the view holds no escaped string).
fn raw_str(raw: &str) -> Option<&str> {
    raw.strip_prefix('"')?.strip_suffix('"')
}

/// Parses one inbound text frame; a malformed one fails the session with
/// [`parse::parse_event`]'s message.
pub fn parse(text: &str) -> Result<Event<'_>, String> {
    let Ok(Typed(members)) = serde_json::from_str::<Typed<'_>>(text) else {
        let p = parse::parse_event(text)?;
        return Ok(Event {
            text,
            members: None,
            audio: p.audio,
            value: OnceCell::from(p.ev),
        });
    };
    let mut audio = AudioPayload::default();
    let kind = members.raw("type").and_then(raw_str);
    if kind.is_some_and(|k| AUDIO_DELTA_TYPES.contains(&k)) {
        audio.delta = members.raw("delta").and_then(raw_str).map(Cow::Borrowed);
        audio.audio = members.raw("audio").and_then(raw_str).map(Cow::Borrowed);
    }
    Ok(Event {
        text,
        members: Some(members),
        audio,
        value: OnceCell::new(),
    })
}

impl<'a> Event<'a> {
    /// Whether the event is a JSON object (the session ignores anything else).
    pub fn is_object(&self) -> bool {
        self.members.is_some() || self.value().is_object()
    }
    /// An audio delta's string payload fields, set aside.
    pub fn audio(&self) -> &AudioPayload<'a> {
        &self.audio
    }
    /// Whether the typed view holds the event (else it is a `Value` only).
    #[cfg(test)]
    pub fn is_typed(&self) -> bool {
        self.members.is_some()
    }
    /// The event as [`parse::parse_event`] gives it, taken out of the view.
    pub fn into_value(self) -> Value {
        match self.value.into_inner() {
            Some(v) => v,
            None => from_members(self.members.as_ref(), &self.audio, self.text),
        }
    }
    /// Writes the event as `Value` serializes it compactly with keys `drop` left out and
    /// `audio_bytes` set to `n` (what the log records of an audio delta), when the typed
    /// view holds it and every field's text is what `Value` would write; else `false`
    /// and `out` unchanged.
    pub fn write_audio_record(&self, n: usize, out: &mut Vec<u8>) -> bool {
        let Some(m) = &self.members else { return false };
        let mut digits = [0u8; 20];
        let count = decimal(n, &mut digits);
        let mut kept: [(&str, &str); MAX_MEMBERS + 1] = [("", ""); MAX_MEMBERS + 1];
        let mut len = 0;
        // Last occurrence wins: walk backwards, keep a key the first time it is met.
        for (k, v) in m.iter().rev() {
            let seen = kept[..len].iter().any(|(q, _)| q == k);
            if seen || matches!(*k, "delta" | "audio" | "audio_bytes") {
                continue;
            }
            if !canonical(v) {
                return false;
            }
            kept[len] = (k, v);
            len += 1;
        }
        kept[len] = ("audio_bytes", count);
        len += 1;
        kept[..len].sort_unstable_by(|a, b| a.0.cmp(b.0));
        out.push(b'{');
        for (i, (k, v)) in kept[..len].iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.push(b'"');
            out.extend_from_slice(k.as_bytes());
            out.extend_from_slice(b"\":");
            out.extend_from_slice(v.as_bytes());
        }
        out.push(b'}');
        true
    }
}

/// `n` in decimal, written into `buf` (no allocation).
fn decimal(mut n: usize, buf: &mut [u8; 20]) -> &str {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[at..]).unwrap_or("0")
}

/// Whether raw JSON value `v` (from the typed view: a string without escapes) is written
/// back the same by `Value`: a string, `true`, `false`, `null`, an integer without sign
/// tricks that `Value` holds as an integer, or an object written compactly with its keys
/// in `Value`'s order (sorted, no duplicate) and canonical values, or a float as `Value`
/// prints it, or an array written compactly of canonical values.
fn canonical(v: &str) -> bool {
    match v.as_bytes() {
        [b'"', ..] => true,
        [b'{', ..] => canonical_object(v),
        [b'[', ..] => canonical_array(v),
        b"true" | b"false" | b"null" | b"0" => true,
        _ if v.contains(['.', 'e', 'E']) => canonical_float(v),
        [b'-', b'1'..=b'9', rest @ ..] | [b'1'..=b'9', rest @ ..] => {
            rest.len() < 18 && rest.iter().all(u8::is_ascii_digit)
        }
        _ => false,
    }
}

/// [`canonical`] for a float's text `v`: what `Value` prints of the number it parses to
/// (its shortest form; `float_roundtrip` parses exactly, as `str::parse` does).
fn canonical_float(v: &str) -> bool {
    let Ok(x) = v.parse::<f64>() else {
        return false;
    };
    let mut buf = [0u8; 40];
    let mut at = &mut buf[..];
    if !x.is_finite() || serde_json::to_writer(&mut at, &x).is_err() {
        return false;
    }
    let written = 40 - at.len();
    buf[..written] == *v.as_bytes()
}

/// [`canonical`] for an array's text `v`: compact, every element canonical (a string
/// element without escapes: `Value` writes it back the same).
fn canonical_array(v: &str) -> bool {
    serde_json::from_str::<CompactSeq>(v).is_ok_and(|CompactSeq(len)| len == v.len())
}

/// An array whose elements are all canonical, and the length of its compact text.
struct CompactSeq(usize);

impl<'de> Deserialize<'de> for CompactSeq {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(CompactSeqVisitor)
    }
}

struct CompactSeqVisitor;

impl<'de> Visitor<'de> for CompactSeqVisitor {
    type Value = CompactSeq;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of canonical values")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<CompactSeq, A::Error> {
        let (mut len, mut n) = (2, 0usize);
        while let Some(raw) = access.next_element::<&'de RawValue>()? {
            let x = raw.get();
            if (x.starts_with('"') && x.contains('\\')) || !canonical(x) {
                return Err(de::Error::custom("not canonical"));
            }
            len += x.len();
            n += 1;
        }
        Ok(CompactSeq(len + n.saturating_sub(1)))
    }
}

/// [`canonical`] for an object's text `v`.
fn canonical_object(v: &str) -> bool {
    let Ok(Typed(m)) = serde_json::from_str::<Typed<'_>>(v) else {
        return false;
    };
    // Compact: braces, a comma between fields, and `"key":value` each, nothing else.
    let mut compact = 2 + m.len.saturating_sub(1);
    let mut prev: Option<&str> = None;
    for (k, x) in m.iter() {
        if prev.is_some_and(|p| p >= *k) || !canonical(x) {
            return false;
        }
        prev = Some(k);
        compact += k.len() + 3 + x.len();
    }
    compact == v.len()
}

/// The event's `Value` as [`parse::parse_event`] builds it from `text` (which the typed
/// view parsed, so it does too).
fn built(text: &str) -> Value {
    parse::parse_event(text).map_or(Value::Null, |p| p.ev)
}

/// [`built`] from the typed view's members: each field's own raw text parsed, the
/// payload fields set aside skipped, so an audio delta's kilobytes of base64 are not
/// scanned again (a real server's delta, spaced or with a nested array, is written to
/// the log from this `Value`). The last occurrence of a key wins, as in `Value`; a
/// payload field is set aside exactly when its last occurrence is a string of an audio
/// delta, and then no occurrence is in `parse_event`'s map either.
fn from_members(members: Option<&Members<'_>>, aside: &AudioPayload<'_>, text: &str) -> Value {
    let Some(m) = members else {
        return built(text);
    };
    let mut map = Map::new();
    for (k, v) in m.iter() {
        let set_aside = match *k {
            "delta" => aside.delta.is_some(),
            "audio" => aside.audio.is_some(),
            _ => false,
        };
        if set_aside {
            continue;
        }
        match serde_json::from_str(v) {
            Ok(x) => map.insert((*k).to_owned(), x),
            Err(_) => return built(text),
        };
    }
    Value::Object(map)
}

impl Event<'_> {
    /// The raw value of top-level field `key` in the typed view (`Err` when the event is
    /// a `Value` only); a payload field set aside is not in the event, as in its `Value`.
    fn raw(&self, key: &str) -> Result<Option<&str>, ()> {
        let m = self.members.as_ref().ok_or(())?;
        let aside = match key {
            "delta" => self.audio.delta.is_some(),
            "audio" => self.audio.audio.is_some(),
            _ => false,
        };
        Ok(if aside { None } else { m.raw(key) })
    }
}

impl EventView for Event<'_> {
    fn str_field(&self, key: &str) -> Option<&str> {
        match self.raw(key) {
            Ok(raw) => raw.and_then(raw_str),
            Err(()) => self.value().get(key).and_then(Value::as_str),
        }
    }
    fn field(&self, key: &str) -> Option<Cow<'_, Value>> {
        match self.raw(key) {
            Ok(raw) => serde_json::from_str(raw?).ok().map(Cow::Owned),
            Err(()) => self.value().get(key).map(Cow::Borrowed),
        }
    }
    fn has(&self, key: &str) -> bool {
        match self.raw(key) {
            Ok(raw) => raw.is_some(),
            Err(()) => self.value().get(key).is_some(),
        }
    }
    fn value(&self) -> &Value {
        self.value
            .get_or_init(|| from_members(self.members.as_ref(), &self.audio, self.text))
    }
    fn response_id(&self) -> Option<&str> {
        if let Some(id) = self.str_field("response_id") {
            return Some(id);
        }
        let raw = match self.raw("response") {
            Ok(raw) => raw?,
            Err(()) => return crate::workload::omni::ledger::response_id(self.value()),
        };
        // `response.id` read in the nested object's own typed view when it has one.
        match serde_json::from_str::<Typed<'_>>(raw) {
            Ok(Typed(nested)) => nested.raw("id").and_then(raw_str),
            Err(_) => crate::workload::omni::ledger::response_id(self.value()),
        }
    }
}

/// The typed view's parse: an object's fields, or an error when it declines.
struct Typed<'a>(Members<'a>);

impl<'de> Deserialize<'de> for Typed<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(TypedVisitor)
    }
}

struct TypedVisitor;

impl<'de> Visitor<'de> for TypedVisitor {
    type Value = Typed<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object without escaped keys or top-level strings")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Typed<'de>, A::Error> {
        let mut m = Members::default();
        while let Some(key) = access.next_key::<&'de str>()? {
            let raw: &'de RawValue = access.next_value()?;
            let v = raw.get();
            if m.len == MAX_MEMBERS || (v.starts_with('"') && v.contains('\\')) {
                return Err(de::Error::custom("declined"));
            }
            m.kv[m.len] = (key, v);
            m.len += 1;
        }
        Ok(Typed(m))
    }
}

/// An event as the session records it: unchanged but for the receipt time (the log adds
/// it where absent), so the log may keep the text as received; an audio delta with its
/// payload replaced by its decoded length (`audio_bytes`).
pub struct Kept<'a> {
    ev: Event<'a>,
    text: &'a str,
    audio_len: Option<usize>,
}

impl<'a> Kept<'a> {
    /// `ev`, parsed from `text`; an audio delta with `audio_len` decoded bytes.
    pub fn new(ev: Event<'a>, text: &'a str, audio_len: Option<usize>) -> Self {
        Self {
            ev,
            text,
            audio_len,
        }
    }
}

/// The recorded event from the event's own `Value`: an audio delta (`audio_len` decoded
/// bytes) without `delta` / `audio`, with `audio_bytes`.
fn edited(ev: Value, audio_len: Option<usize>) -> Value {
    let Some(n) = audio_len else { return ev };
    let Value::Object(mut obj) = ev else {
        return ev;
    };
    obj.remove("delta");
    obj.remove("audio");
    obj.insert("audio_bytes".into(), json!(n));
    Value::Object(obj)
}

impl Recorded for Kept<'_> {
    fn ttfp_reading(&self) -> (&str, bool) {
        let kind = self.ev.kind();
        let audio = AUDIO_DELTA_TYPES.contains(&kind)
            && match self.audio_len {
                Some(n) => n > 0,
                None => audio_packet(self.ev.value()),
            };
        (kind, audio)
    }
    fn raw(&self) -> Option<&str> {
        self.audio_len.is_none().then_some(self.text)
    }
    fn write_json(&self, out: &mut Vec<u8>) {
        if let Some(n) = self.audio_len
            && self.ev.write_audio_record(n, out)
        {
            return;
        }
        // Writing into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, &self.to_value());
    }
    fn to_value(&self) -> Value {
        edited(self.ev.value().clone(), self.audio_len)
    }
    fn into_value(self) -> Value {
        edited(self.ev.into_value(), self.audio_len)
    }
}

#[cfg(test)]
#[path = "event_tests.rs"]
mod tests;
