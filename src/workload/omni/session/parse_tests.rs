//! The parsed event plus its payload is exactly `serde_json`'s `Value` for the same text.

use std::borrow::Cow;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::{AudioPayload, parse_event};

/// The event with its payload fields put back: what `Value` alone parses.
fn merged(text: &str) -> Value {
    let p = parse_event(text).unwrap();
    let mut ev = p.ev;
    for (key, s) in [("delta", p.audio.delta), ("audio", p.audio.audio)] {
        if let (Some(s), Some(map)) = (s, ev.as_object_mut()) {
            assert!(!map.contains_key(key), "{key} both aside and in the map");
            map.insert(key.into(), Value::String(s.into_owned()));
        }
    }
    ev
}

#[test]
fn an_audio_delta_s_payload_is_borrowed_from_the_frame() {
    let text = r#"{"type":"response.audio.delta","response_id":"r1","delta":"QUJD","format":"pcm16","metadata":{"audio_duration_ms":100}}"#;
    let p = parse_event(text).unwrap();
    assert_eq!(
        p.ev,
        json!({"type": "response.audio.delta", "response_id": "r1", "format": "pcm16",
               "metadata": {"audio_duration_ms": 100}})
    );
    assert!(matches!(p.audio.delta, Some(Cow::Borrowed("QUJD"))));
    assert_eq!(p.audio.audio, None);
    // The upstream name, with `audio` beside an empty `delta`.
    let text = r#"{"delta":"","audio":"QQ==","type":"response.output_audio.delta"}"#;
    let p = parse_event(text).unwrap();
    assert_eq!(p.ev, json!({"type": "response.output_audio.delta"}));
    assert_eq!(
        p.audio,
        AudioPayload {
            delta: Some("".into()),
            audio: Some("QQ==".into())
        }
    );
}

#[test]
fn other_events_and_other_values_stay_in_the_map() {
    let text = r#"{"type":"response.audio_transcript.delta","response_id":"r1","delta":"hi"}"#;
    let p = parse_event(text).unwrap();
    assert_eq!(p.ev, serde_json::from_str::<Value>(text).unwrap());
    assert_eq!(p.audio, AudioPayload::default());
    let text = r#"{"type":"response.audio.delta","delta":null,"audio":{"a":[1,2.5,true]}}"#;
    let p = parse_event(text).unwrap();
    assert_eq!(p.ev, serde_json::from_str::<Value>(text).unwrap());
    assert_eq!(p.audio, AudioPayload::default());
}

#[test]
fn duplicates_keep_the_last_and_escapes_are_decoded() {
    for text in [
        r#"{"type":"response.audio.delta","delta":"QUJD","delta":5}"#,
        r#"{"delta":5,"type":"response.audio.delta","delta":"QUJD"}"#,
        r#"{"type":"x","delta":"QUJD","type":"response.audio.delta"}"#,
        r#"{"type":"response.audio.delta","delta":"QQ\u003d\u003d","audio":"\/x"}"#,
        r#"{"type":"response.done","delta":"a","delta":"b"}"#,
        // Escaped keys: still the payload's, or still kept.
        r#"{"type":"response.audio.delta","d\u0065lta":"QUJD","\u0078":1}"#,
        r#"{"t\u0079pe":"response.audio.delta","audi\u006f":"QQ==","delta":"x"}"#,
    ] {
        assert_eq!(
            merged(text),
            serde_json::from_str::<Value>(text).unwrap(),
            "{text}"
        );
    }
    let p = parse_event(r#"{"type":"response.audio.delta","d\u0065lta":"QUJD"}"#).unwrap();
    assert!(matches!(p.audio.delta, Some(Cow::Borrowed("QUJD"))));
    let p = parse_event(r#"{"type":"response.audio.delta","delta":"QQ\u003d\u003d"}"#).unwrap();
    assert!(matches!(p.audio.delta, Some(Cow::Owned(ref s)) if s == "QQ=="));
}

#[test]
fn what_it_declines_parses_or_fails_as_value_does() {
    for text in ["[1,2]", "\"s\"", "7", "null"] {
        assert_eq!(
            parse_event(text).unwrap().ev,
            serde_json::from_str::<Value>(text).unwrap()
        );
    }
    let err = parse_event(r#"{"type":"response.audio.delta","delta":"QQ"#).unwrap_err();
    assert_eq!(
        err,
        "Realtime WebSocket reader failed: server sent malformed JSON (EOF while parsing a \
         string at line 1 column 42): \"{\\\"type\\\":\\\"response.audio.delta\\\",\\\"delta\\\":\\\"QQ\""
    );
    assert!(parse_event(r#"{"a":1} x"#).is_err());
}

/// A JSON value a server might put in an event, strings with escapes included.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e9f64..1e9).prop_map(Value::from),
        "[A-Za-z0-9+/=\"\\\\\n é]{0,40}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// Any event, audio delta or not, with payload fields of any kind, in any key order.
    #[test]
    fn merged_back_it_is_the_value_parse(
        kind in prop_oneof![
            Just("response.audio.delta"), Just("response.output_audio.delta"),
            Just("response.audio_transcript.delta"), Just("response.done"),
        ],
        fields in prop::collection::vec(
            (prop_oneof![Just("delta"), Just("audio"), Just("type"), Just("response_id"), Just("x")],
             json_value(), any::<bool>()),
            0..6,
        ),
        type_at in 0usize..7,
    ) {
        // Written by hand so key order (and duplicates) are the test's, not a map's; a
        // key's first letter sometimes escaped (the key is then not borrowed).
        let mut parts: Vec<String> = fields
            .iter()
            .map(|(k, v, esc)| match esc {
                true => format!("\"\\u{:04x}{}\":{}", k.as_bytes()[0], &k[1..], v),
                false => format!("{}:{}", json!(k), v),
            })
            .collect();
        parts.insert(type_at.min(parts.len()), format!("\"type\":{}", json!(kind)));
        let text = format!("{{{}}}", parts.join(","));
        prop_assert_eq!(merged(&text), serde_json::from_str::<Value>(&text).unwrap());
    }
}
