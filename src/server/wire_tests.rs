use serde_json::json;

use super::*;

#[test]
fn the_text_is_what_serde_json_writes() {
    let b64 = "QUJD".repeat(400);
    let cases = [
        json!({"delta": b64, "type": "response.audio.delta", "response_id": "r",
               "metadata": {"audio_duration_ms": 100}, "server_sent_at_s": 0.25}),
        json!({"delta": b64}),
        // A long delta that needs escaping, a short one, one that is not first (a key
        // sorts before it), one that is not a string, and events that are no objects.
        json!({"delta": format!("{b64}\"\n\\"), "type": "x"}),
        json!({"delta": "short", "type": "x"}),
        json!({"audio_end_ms": 5, "delta": b64}),
        json!({"delta": [b64], "type": "x"}),
        json!([b64]),
        json!(b64),
    ];
    for event in cases {
        assert_eq!(event_text(event.clone()), event.to_string());
    }
}

#[test]
fn every_character_that_needs_escaping_is_seen() {
    for b in (0u8..0x20).chain([b'"', b'\\']) {
        let mut s = "A".repeat(LONG);
        s.insert(LONG / 2, char::from(b));
        assert!(!needs_no_escape(&s), "{b:#x}");
    }
    assert!(needs_no_escape("aZ09+/= ~é"));
}
