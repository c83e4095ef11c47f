use std::sync::Arc;

use serde_json::json;

use super::{DuplexOutput, Responses};

/// The state after `events`, received 0.1 s apart.
fn observed(events: &[serde_json::Value]) -> Responses {
    let mut r = Responses::new(false);
    let mut out = DuplexOutput::default();
    for (k, ev) in events.iter().enumerate() {
        r.observe(
            ev,
            &Default::default(),
            k as f64 / 10.0,
            (false, None),
            &mut out,
        )
        .unwrap();
    }
    r
}

/// The records' transcripts, rebuilt from `events` as the report does.
fn texts(mut r: Responses, events: &[serde_json::Value]) -> Vec<String> {
    let mut records = r.records();
    let log: Vec<_> = events.iter().map(|e| (0.0, e.clone())).collect();
    super::fill_texts(&mut records, &log);
    records.into_iter().map(|r| r.text).collect()
}

#[test]
fn each_response_id_is_held_once() {
    let events = [
        json!({"type": "response.created", "response": {"id": "r1"}}),
        json!({"type": "response.audio.delta", "response_id": "r1", "delta": "AAAAAA==",
               "format": "pcm16", "sample_rate_hz": 24000}),
        json!({"type": "response.audio_transcript.delta", "response_id": "r1", "delta": "hi"}),
        json!({"type": "response.audio_transcript.delta", "response_id": "r1", "delta": "!"}),
        json!({"type": "response.done", "response": {"id": "r1", "status": "completed"}}),
    ];
    let mut r = observed(&events);
    // The session's table and the clock's record (for its acks): one allocation, two
    // holders.
    assert_eq!(Arc::strong_count(r.ids.id(0)), 2);
    assert_eq!(r.records()[0].text, "", "no transcript kept live");
    assert_eq!(texts(observed(&events), &events), ["hi!"]);
}

#[test]
fn transcripts_are_rebuilt_from_the_log_as_the_reference_appends_them() {
    let text = |id: &str, d: serde_json::Value| json!({"type": "response.audio_transcript.delta", "response_id": id, "delta": d});
    let events = [
        text("r1", json!("hello ")),
        json!({"type": "response.created", "response": {"id": "r1"}}),
        json!({"type": "response.created", "response": {"id": "r2"}}),
        text("r1", json!(5)),
        text("r1", json!(null)),
        text("r1", json!(false)),
        text("r1", json!(true)),
        json!({"type": "response.output_text.delta", "response_id": "r2", "delta": "x"}),
        text("r3", json!("never created")),
        text("", json!("no id")),
        json!({"type": "response.done", "response": {"id": "r1", "status": "completed"}, "delta": "not text"}),
    ];
    assert_eq!(texts(observed(&events), &events), ["hello 5True", "x"]);
}

#[test]
fn a_blank_transcript_is_no_transcript() {
    for (delta, complete) in [("  \n\t", false), (" a ", true)] {
        let events = [
            json!({"type": "response.created", "response": {"id": "r1"}}),
            json!({"type": "response.audio.delta", "response_id": "r1", "delta": "AQABAA==",
                   "format": "pcm16", "sample_rate_hz": 24000}),
            json!({"type": "response.audio_transcript.delta", "response_id": "r1", "delta": " "}),
            json!({"type": "response.audio_transcript.delta", "response_id": "r1", "delta": delta}),
            json!({"type": "response.done", "response": {"id": "r1", "status": "completed"}}),
        ];
        assert_eq!(
            observed(&events).final_checks(true, 0.0, 10.0).is_ok(),
            complete,
            "{delta:?}"
        );
    }
}
