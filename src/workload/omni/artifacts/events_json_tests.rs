//! `events.json` written event by event is byte for byte the whole array's pretty,
//! redacted text, from parsed events and from spilled lines alike.

use serde_json::{Value, json};

use super::write;
use crate::workload::omni::artifacts::capture::CaseEvents;

/// What `events.json` held when it was written whole.
fn whole(events: &[Value]) -> String {
    let text = serde_json::to_string_pretty(events).unwrap();
    format!("{}\n", crate::util::target::redact_text(&text))
}

fn written(events: &CaseEvents) -> String {
    let mut out = Vec::new();
    write(&mut out, events).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn event_by_event_is_the_whole_arrays_text() {
    let events = vec![
        json!({"type": "session.created", "session": {"id": "s", "modalities": ["audio", "text"]}}),
        json!({"type": "response.output_text.delta", "delta": "two\nlines \"quoted\"", "_client_received_at_s": 1.25}),
        json!({"type": "error", "message": "see https://u:p@host/x?api_key=SECRET&model=m"}),
        json!({"nested": [[], {}, [1, {"a": null}]], "n": -0.5}),
        json!([1, 2]),
        json!("a bare string"),
    ];
    let text = written(&CaseEvents::Parsed(events.clone()));
    assert_eq!(text, whole(&events));
    assert!(!text.contains("SECRET") && !text.contains("u:p@"), "{text}");
    assert_eq!(written(&CaseEvents::Parsed(Vec::new())), whole(&[]));
}

#[test]
fn spilled_lines_are_written_as_the_events_they_decode_to() {
    let lines = "0.5\t{\"type\":\"a\"}\n1.5\t{\"type\":\"b\",\"_client_received_at_s\":1.5}\n";
    let decoded = crate::workload::omni::session::events::decode(lines.as_bytes()).unwrap();
    let parsed: Vec<Value> = decoded.into_iter().map(|(_, e)| e).collect();
    let spilled = CaseEvents::Spilled(bytes::Bytes::from_static(lines.as_bytes()));
    assert_eq!(written(&spilled), whole(&parsed));
    assert!(written(&spilled).contains("\"_client_received_at_s\": 0.5"));
}
