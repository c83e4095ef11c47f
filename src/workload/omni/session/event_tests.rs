//! The typed view reads every event as its `Value` does: the same fields, the same
//! payload set aside, the same errors, and an audio delta's record written the same.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::{Event, parse};
use crate::workload::omni::ledger::EventView;
use crate::workload::omni::session::parse::parse_event;

/// The keys the session's readers ask for, and one none does.
const KEYS: [&str; 10] = [
    "type",
    "response_id",
    "response",
    "delta",
    "audio",
    "audio_bytes",
    "format",
    "sample_rate_hz",
    "status",
    "x",
];

/// Every reading of `ev` the readers make, as `want` (the event's `Value`) reads it.
fn agrees(ev: &Event<'_>, want: &Value) {
    for k in KEYS {
        assert_eq!(ev.str_field(k), want.str_field(k), "str_field {k}");
        assert_eq!(ev.field(k).as_deref(), want.get(k), "field {k}");
        assert_eq!(ev.has(k), want.has(k), "has {k}");
    }
    assert_eq!(ev.kind(), want.kind());
    assert_eq!(ev.response_id(), want.response_id());
    assert_eq!(ev.value(), want);
}

#[test]
fn an_ordinary_event_is_typed_and_reads_as_its_value() {
    let texts = [
        r#"{"delta":"AAAA","format":"pcm16","response_id":"r1","sample_rate_hz":24000,"type":"response.audio.delta"}"#,
        r#"{"delta":" word","response_id":"r1","type":"response.audio_transcript.delta"}"#,
        r#"{"response":{"id":"r1","status":"in_progress"},"type":"response.created"}"#,
        r#"{ "type" : "response.done", "response" : {"id":"r1","status":"cancelled"} }"#,
        r#"{"type":"x","type":7,"response_id":1,"response":{"id":"r2"}}"#,
    ];
    for text in texts {
        let ev = parse(text).unwrap();
        assert!(ev.is_typed(), "{text}");
        agrees(&ev, &parse_event(text).unwrap().ev);
    }
    let audio = parse(texts[0]).unwrap();
    assert_eq!(audio.audio().delta.as_deref(), Some("AAAA"));
}

#[test]
fn what_it_declines_is_the_value_parse() {
    let escaped =
        r#"{"type":"response.audio_transcript.delta","delta":"\"hi\"","response_id":"r"}"#;
    for text in ["[1,2]", "7", r#"{"d\u0065lta":"x"}"#, escaped] {
        let ev = parse(text).unwrap();
        assert!(!ev.is_typed(), "{text}");
        assert_eq!(ev.is_object(), text.starts_with('{'));
        agrees(&ev, &parse_event(text).unwrap().ev);
    }
    let many: Vec<String> = (0..=super::MAX_MEMBERS)
        .map(|i| format!("\"k{i}\":{i}"))
        .collect();
    let text = format!("{{{}}}", many.join(","));
    assert!(!parse(&text).unwrap().is_typed());
    for bad in [
        r#"{"type":"response.audio.delta","delta":"QQ"#,
        r#"{"a":1} x"#,
    ] {
        assert_eq!(parse(bad).unwrap_err(), parse_event(bad).unwrap_err());
    }
}

/// The audio delta as the session records it, from its `Value` (the rule the typed
/// writer must match byte for byte).
fn recorded(mut ev: Value, n: usize) -> Vec<u8> {
    let obj = ev.as_object_mut().unwrap();
    obj.remove("delta");
    obj.remove("audio");
    obj.insert("audio_bytes".into(), json!(n));
    serde_json::to_vec(&ev).unwrap()
}

#[test]
fn an_audio_record_is_written_as_value_writes_it() {
    let text = r#"{"type":"response.audio.delta","response_id":"r1","z":null,"delta":"AAAA","audio_bytes":"x","format":"pcm16","sample_rate_hz":24000,"n":-12,"b":true}"#;
    let ev = parse(text).unwrap();
    let mut out = Vec::new();
    assert!(ev.write_audio_record(3, &mut out));
    assert_eq!(out, recorded(parse_event(text).unwrap().ev, 3));
    // A nested object written as `Value` writes it is kept as it is.
    let text = r#"{"type":"response.audio.delta","metadata":{"a":{},"audio_duration_ms":200,"b":{"c":null}},"delta":"AAAA"}"#;
    out.clear();
    assert!(parse(text).unwrap().write_audio_record(3, &mut out));
    assert_eq!(out, recorded(parse_event(text).unwrap().ev, 3));
    let text = r#"{"type":"response.audio.delta","t":1.5,"u":-2.25e-7,"v":{"w":3.0}}"#;
    out.clear();
    assert!(parse(text).unwrap().write_audio_record(3, &mut out));
    assert_eq!(out, recorded(parse_event(text).unwrap().ev, 3));
    // Compact arrays of canonical values (vLLM-Omni's stage metrics carry them).
    let text = r#"{"type":"response.audio.delta","vllm_omni":{"stage_metrics":{"0":{"vllm_itls_ms":[20.0,20.0]}}},"e":[],"f":[{"a":[1,"é"]},null]}"#;
    out.clear();
    assert!(parse(text).unwrap().write_audio_record(3, &mut out));
    assert_eq!(out, recorded(parse_event(text).unwrap().ev, 3));
    // A float not as `Value` prints it, a spaced or escaped array, a nested object out
    // of order, spaced or with a duplicate key: left to `Value`.
    for x in [
        "1.50",
        "1e5",
        "2.0E0",
        "[1, 2]",
        "[1.50]",
        r#"["\u00e9"]"#,
        r#"[{"b":1,"a":2}]"#,
        r#"{"b":1,"a":2}"#,
        r#"{"a": 1}"#,
        r#"{"a":1,"a":1}"#,
    ] {
        let text = format!(r#"{{"type":"response.audio.delta","x":{x}}}"#);
        assert!(
            !parse(&text).unwrap().write_audio_record(3, &mut out),
            "{x}"
        );
    }
}

/// A JSON value a server might put in an event, strings with escapes included.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e9f64..1e9).prop_map(Value::from),
        "[A-Za-z0-9+/=\"\\\\\n é]{0,20}".prop_map(Value::String),
        "[a-z0-9.]{0,20}".prop_map(Value::String),
        Just(json!("response.audio.delta")),
        Just(json!("pcm16")),
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
    /// Any event: fields the readers ask for and others, of any kind, duplicated, keys
    /// sometimes escaped, spaces sometimes around the values.
    #[test]
    fn the_typed_view_reads_as_the_value(
        kind in prop_oneof![
            Just(json!("response.audio.delta")), Just(json!("response.output_audio.delta")),
            Just(json!("response.audio_transcript.delta")), Just(json!("response.done")),
            Just(json!("error")), Just(json!(7)),
        ],
        fields in prop::collection::vec(
            (prop::sample::select(KEYS.to_vec()), json_value(), 0u8..8),
            0..10,
        ),
        type_at in 0usize..11,
        n in prop_oneof![0usize..100_000, any::<usize>()],
    ) {
        let mut parts: Vec<String> = fields
            .iter()
            .map(|(k, v, how)| match how {
                0 => format!("\"\\u{:04x}{}\":{}", k.as_bytes()[0], &k[1..], v),
                1 => format!("{} : {} ", json!(k), v),
                _ => format!("{}:{}", json!(k), v),
            })
            .collect();
        parts.insert(type_at.min(parts.len()), format!("\"type\":{kind}"));
        let text = format!("{{{}}}", parts.join(","));
        let want = parse_event(&text).unwrap();
        let ev = parse(&text).unwrap();
        agrees(&ev, &want.ev);
        prop_assert_eq!(&ev.audio().delta, &want.audio.delta);
        prop_assert_eq!(&ev.audio().audio, &want.audio.audio);
        let mut out = Vec::new();
        if ev.write_audio_record(n, &mut out) {
            prop_assert_eq!(out, recorded(want.ev.clone(), n));
        }
    }
}
