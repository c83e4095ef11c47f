//! Event log tests: spilled lines read back exactly, a damaged line is named, and the
//! live metrics equal the report's computation from the same events.

use serde_json::{Value, json};

use super::{EventLog, RECEIVED_AT, decode, write_line};
use crate::workload::omni::metrics::duplex_metrics;
use crate::workload::spool::Spool;

/// A response's events: created at `t`, audio 0.1 s later, text, done.
fn response(t: f64, id: &str) -> Vec<(f64, Value)> {
    vec![
        (
            t,
            json!({"type": "response.created", "response": {"id": id}}),
        ),
        (
            t + 0.1,
            json!({"type": "response.audio.delta", "response_id": id, "audio_bytes": 4800}),
        ),
        (
            t + 0.15,
            json!({"type": "response.audio_transcript.delta", "response_id": id, "delta": "hi\nthere ✓"}),
        ),
        (
            t + 0.2,
            json!({"type": "response.done", "response": {"id": id, "status": "completed"}}),
        ),
    ]
}

/// The spilled line for `ev`, serialized.
fn encode_line(at_s: f64, ev: &Value) -> Vec<u8> {
    let mut line = Vec::new();
    write_line(&mut line, at_s, ev);
    line
}

/// An event log spilling to a fresh spool (whose directory lives as long as the first).
fn spilled_log() -> (tempfile::TempDir, Spool, EventLog) {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let mut log = EventLog::default();
    log.spill_to(spool.session());
    (tmp, spool, log)
}

/// What a spilled `log` wrote, read back after the spool's flush; it kept nothing in
/// memory.
fn spilled_bytes(spool: &Spool, log: EventLog) -> bytes::Bytes {
    let (mem, span) = log.into_parts();
    assert!(mem.is_empty());
    spool.flush();
    spool.load(span.unwrap()).unwrap()
}

/// `ev` as the session records it: its receipt time added where absent.
fn stamped(at_s: f64, mut ev: Value) -> Value {
    ev.as_object_mut()
        .unwrap()
        .entry(RECEIVED_AT)
        .or_insert(json!(at_s));
    ev
}

/// What the report computes from `events` (its stream-start rule included).
fn report_ttfp(events: &[(f64, Value)], stream_start_s: Option<f64>) -> Option<f64> {
    duplex_metrics(events, stream_start_s.unwrap_or(0.0), None)
        .summary
        .mean_ttfp_ms
}

#[test]
fn spilled_lines_read_back_exactly() {
    let odd = [0.1 + 0.2, 1e-7, 12_345.678_901_234, 0.0, 3.0];
    let mut bytes = Vec::new();
    let mut want = Vec::new();
    for (i, at_s) in odd.into_iter().enumerate() {
        let ev = json!({"type": "x", "i": i, "text": "line\nbreak\t\"quoted\" ✓", "n": {"deep": [1, 2.5, null]}});
        bytes.extend(encode_line(at_s, &ev));
        want.push((at_s, stamped(at_s, ev)));
    }
    assert_eq!(bytes.iter().filter(|b| **b == b'\n').count(), odd.len());
    assert_eq!(decode(&bytes).unwrap(), want);
    assert_eq!(decode(b"").unwrap(), []);
}

#[test]
fn a_damaged_line_is_named() {
    let mut bytes = encode_line(0.5, &json!({"a": 1}));
    bytes.extend_from_slice(b"0.7\t{\"a\": tru\n");
    assert_eq!(
        decode(&bytes).unwrap_err(),
        "spooled event line 2 is damaged"
    );
    assert!(decode(b"no tab here\n").is_err());
    assert!(decode(b"nan?\t{}\n").is_err());
}

#[test]
fn live_ttfp_equals_the_report_computation() {
    // A response event before the stream started (not counted once it starts), then two
    // responses after it.
    let mut events = vec![(0.05, json!({"type": "session.updated"}))];
    events.extend(response(0.06, "early"));
    events.push((0.4, json!({"type": "session.created"})));
    events.extend(response(1.0, "r1"));
    events.extend(response(2.0, "r2"));
    let mut log = EventLog::default();
    for (at_s, ev) in &events {
        if ev["type"] == "session.created" {
            log.stream_started(*at_s);
        }
        log.push(*at_s, ev.clone(), None);
    }
    assert_eq!(log.len(), events.len());
    let live = log.mean_ttfp_ms();
    assert_eq!(live, report_ttfp(&events, Some(0.4)));
    assert!(live.is_some_and(|t| (t - 100.0).abs() < 1e-6), "{live:?}");
    let (mem, spooled) = log.into_parts();
    assert_eq!((mem, spooled), (events, None));
}

#[test]
fn a_session_that_never_streamed_counts_every_event_like_the_report() {
    let events = response(0.2, "r0");
    let mut log = EventLog::default();
    for (at_s, ev) in &events {
        log.push(*at_s, ev.clone(), None);
    }
    assert_eq!(log.mean_ttfp_ms(), report_ttfp(&events, None));
    assert!(log.mean_ttfp_ms().is_some());
    let before: Vec<&Value> = log.before_stream_newest_first().collect();
    assert_eq!(before[0]["type"], "response.done");
}

#[test]
fn a_spilled_log_keeps_nothing_in_memory_and_reads_back_whole() {
    let (_tmp, spool, mut log) = spilled_log();
    let mut events = Vec::new();
    for k in 0..200 {
        events.extend(response(f64::from(k), &format!("r{k}")));
    }
    log.stream_started(0.0);
    for (at_s, ev) in &events {
        log.push(*at_s, stamped(*at_s, ev.clone()), None);
    }
    let ttfp = log.mean_ttfp_ms();
    let back = decode(&spilled_bytes(&spool, log)).unwrap();
    let events: Vec<_> = (events.into_iter())
        .map(|(t, e)| (t, stamped(t, e)))
        .collect();
    assert_eq!(back, events);
    assert_eq!(ttfp, report_ttfp(&back, Some(0.0)));
}

#[test]
fn events_spilled_as_received_read_back_as_recorded() {
    let (_tmp, spool, mut log) = spilled_log();
    let texts = [
        // Compact, as most servers send.
        r#"{"type":"response.created","response":{"id":"r1"}}"#,
        // Spaces, escapes, a float that prints differently once parsed, a key order that
        // is not the serializer's.
        r#"{ "type" : "x", "text": "tab\t \"q\" \u2713", "z": 1.50, "a": [1e2, null] }"#,
        // Whitespace with a raw newline: not a line of its own, serialized instead.
        "{\"type\": \"y\",\n \"n\": 7}",
        // The server's own receipt-time key is kept, as the session keeps it.
        r#"{"type":"z","_client_received_at_s":"server's"}"#,
    ];
    let mut want = Vec::new();
    for (k, text) in texts.into_iter().enumerate() {
        let at_s = 0.1 * (k as f64 + 1.0);
        let ev = stamped(at_s, serde_json::from_str(text).unwrap());
        log.push(at_s, ev.clone(), Some(text));
        want.push((at_s, ev));
    }
    let bytes = spilled_bytes(&spool, log);
    // The compact text went out as received; one line per event.
    let lines: Vec<&[u8]> = bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(lines.len(), texts.len());
    assert_eq!(lines[0], format!("0.1\t{}", texts[0]).as_bytes());
    assert_eq!(decode(&bytes).unwrap(), want);
}

#[test]
fn a_large_event_does_not_set_what_the_session_keeps() {
    let (_tmp, spool, mut log) = spilled_log();
    let small = r#"{"type":"a"}"#;
    log.push(
        0.1,
        stamped(0.1, serde_json::from_str(small).unwrap()),
        Some(small),
    );
    assert!(
        log.line.capacity() > 0,
        "the buffer is reused between events"
    );
    let big = format!(r#"{{"type":"b","text":"{}"}}"#, "x".repeat(20_000));
    log.push(
        0.2,
        stamped(0.2, serde_json::from_str(&big).unwrap()),
        Some(&big),
    );
    assert!(log.line.capacity() <= super::LINE_KEEP_BYTES);
    let back = decode(&spilled_bytes(&spool, log)).unwrap();
    assert_eq!(back[1].1["text"].as_str().map(str::len), Some(20_000));
}

#[test]
fn push_received_reads_back_as_push_of_the_stamped_event() {
    // Odd receipt times, events with and without their own receipt-time key, raw text
    // and serialized: spilled or kept, what comes back is the stamped event.
    let texts = [
        r#"{"type":"response.audio.delta","response_id":"r1","audio_bytes":4800}"#,
        r#"{"type":"z","_client_received_at_s":"server's"}"#,
        "{\"type\": \"y\",\n \"n\": 7}",
    ];
    let times = [0.1 + 0.2, 1e-7, 12_345.678_901_234];
    let (_tmp, spool, mut spilled) = spilled_log();
    let mut kept = EventLog::default();
    let mut want = Vec::new();
    for (k, (text, at_s)) in texts.into_iter().zip(times).enumerate() {
        let ev: Value = serde_json::from_str(text).unwrap();
        let raw = (k != 0).then_some(text);
        spilled.push_received(at_s, ev.clone(), raw, None);
        kept.push_received(at_s, ev.clone(), raw, None);
        want.push((at_s, stamped(at_s, ev)));
    }
    let before: Vec<Value> = kept.before_stream_newest_first().cloned().collect();
    assert_eq!(before.first(), want.last().map(|(_, e)| e));
    assert_eq!(decode(&spilled_bytes(&spool, spilled)).unwrap(), want);
    assert_eq!(kept.into_parts(), (want, None));
}
