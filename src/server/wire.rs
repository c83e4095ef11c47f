//! The text the server writes for a JSON event. An audio delta is mostly one long base64
//! string, which `serde_json` would scan byte by byte for characters to escape; when that
//! string needs no escaping its bytes are copied instead, and the text is the same as
//! `Value::to_string` gives. Pure.

use serde_json::Value;

/// Strings shorter than this are left to `serde_json` (the check is not worth it).
const LONG: usize = 512;

/// Whether `s` can stand between JSON quotes as it is: no control character, no `"`, no
/// `\`. Written as a fold over every byte (no early exit) so it compiles to a vector loop.
fn needs_no_escape(s: &str) -> bool {
    !s.bytes().fold(false, |bad, b| {
        bad | (b < 0x20) | (b == b'"') | (b == b'\\')
    })
}

/// `event.to_string()`, written faster when `event` is an object whose first key (keys
/// are sorted) is `"delta"`, holding a long string that needs no escaping.
pub(crate) fn event_text(mut event: Value) -> String {
    let Value::Object(map) = &mut event else {
        return event.to_string();
    };
    let splice = map.keys().next().is_some_and(|k| k == "delta")
        && matches!(map.get("delta"), Some(Value::String(s)) if s.len() >= LONG && needs_no_escape(s));
    if !splice {
        return event.to_string();
    }
    let Some(Value::String(delta)) = map.remove("delta") else {
        unreachable!("checked above")
    };
    let rest = event.to_string();
    let mut out = String::with_capacity(delta.len() + rest.len() + 12);
    out.push_str("{\"delta\":\"");
    out.push_str(&delta);
    out.push('"');
    // `rest` is `{}` or `{"key":…}`: its fields follow the delta's.
    if rest.len() > 2 {
        out.push(',');
    }
    out.push_str(&rest[1..]);
    out
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
