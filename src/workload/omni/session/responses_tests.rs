use serde_json::json;

use super::{DuplexOutput, RESPONSE_WINDOW, ResponseRecord, Responses};
use crate::workload::spool::SessionSpool;

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
    // The session's table holds the id once, whatever names it; the clock holds its own
    // copy only while the response's audio is in play (for its acks and segments).
    assert_eq!((r.ids.len(), r.ids.id(0)), (1, "r1"));
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

/// A session's responses after `n` of them, one a second, each created, given 0.1 s of
/// audio and a transcript, done, acked and retired as a spooled session does; its rows
/// that leave the window spill to `spool` when given.
fn long_in(n: u32, spool: Option<SessionSpool>) -> (Responses, DuplexOutput) {
    let mut r = Responses::new(false);
    if let Some(spool) = spool {
        r.spill_rows_to(spool);
    }
    let mut out = DuplexOutput::default();
    r.set_horizon(0.0, f64::from(n) + 10.0);
    for k in 0..n {
        let (t, id) = (f64::from(k), format!("resp_{k:032x}"));
        let events = [
            json!({"type": "response.created", "response": {"id": id}}),
            audio(&id),
            json!({"type": "response.audio_transcript.delta", "response_id": id, "delta": "hi"}),
            json!({"type": "response.done", "response": {"id": id, "status": "completed"}}),
        ];
        for ev in &events {
            r.observe(ev, &Default::default(), t, (false, None), &mut out)
                .unwrap();
        }
        r.clock.acks(t + 0.5);
        r.clock.retire(t + 0.5, 1);
    }
    (r, out)
}

fn long(n: u32) -> (Responses, DuplexOutput) {
    long_in(n, None)
}

/// Every created response's row, as the report reads them back (nothing spilled).
fn all_rows(r: &mut Responses) -> Vec<ResponseRecord> {
    let (held, left) = r.leave();
    match left {
        Some(left) => left.merge(&[], &held).unwrap(),
        None => held,
    }
}

/// 0.1 s of audible PCM16 for response `id`.
fn audio(id: &str) -> serde_json::Value {
    use base64::Engine as _;
    let delta = base64::engine::general_purpose::STANDARD.encode([1u8; 4_800]);
    json!({"type": "response.audio.delta", "response_id": id, "delta": delta,
           "format": "pcm16", "sample_rate_hz": 24000})
}

#[test]
fn a_long_session_holds_a_window_of_ids_and_every_row_comes_back() {
    let n = 300;
    let (mut r, _) = long(n);
    // Every response settled, and the clock keeps the few numbers of those the table
    // still holds, nothing of those that left; the table holds the window, and how
    // many left is exact.
    assert_eq!(r.clock.live_and_settled(), (0, RESPONSE_WINDOW));
    assert_eq!(r.clock.slots_held(), RESPONSE_WINDOW);
    assert!(r.ledger.is_closed());
    assert_eq!(r.ids.held_len(), RESPONSE_WINDOW);
    assert_eq!(
        (r.evicted, r.ids.len()),
        (n - RESPONSE_WINDOW as u32, n as usize)
    );
    assert!(r.final_checks(true, 0.0, f64::from(n) + 10.0).is_ok());
    let rows = all_rows(&mut r);
    assert_eq!(rows.len(), n as usize);
    for (k, row) in rows.iter().enumerate() {
        assert_eq!(row.response_id, format!("resp_{k:032x}"));
        assert!(row.done && !row.cancelled && !row.audio_cleared);
    }
}

#[test]
fn the_complete_response_may_have_left_the_window() {
    // Only the first response is complete (the others have blank text): the E2E check
    // still sees it after it left.
    let mut r = Responses::new(false);
    let mut out = DuplexOutput::default();
    r.set_horizon(0.0, 100.0);
    for k in 0..40u32 {
        let (t, id) = (f64::from(k), format!("r{k}"));
        let text = if k == 0 { "hi" } else { " " };
        for ev in [
            json!({"type": "response.created", "response": {"id": id}}),
            audio(&id),
            json!({"type": "response.audio_transcript.delta", "response_id": id, "delta": text}),
            json!({"type": "response.done", "response": {"id": id, "status": "completed"}}),
        ] {
            r.observe(&ev, &Default::default(), t, (false, None), &mut out)
                .unwrap();
        }
        r.clock.acks(t + 0.5);
        r.clock.retire(t + 0.5, 1);
    }
    assert!(r.evicted > 0 && r.ids.get("r0").is_none());
    assert!(r.final_checks(true, 0.0, 100.0).is_ok());
}

#[test]
fn spilled_rows_come_back_as_the_rows_of_unspilled_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = crate::workload::spool::Spool::create(tmp.path()).unwrap();
    let n = 2_000;
    let (mut spilled, _) = long_in(n, Some(spool.session().log()));
    let (mut kept, _) = long(n);
    let (held, left) = spilled.leave();
    let left = left.expect("rows left the window");
    let span = left.spilled().expect("past the tail they spilled");
    // The report's read, after the run's flush.
    spool.flush();
    let back = spool.load(span).unwrap();
    let rows = left.merge(&back, &held).unwrap();
    assert_eq!(rows, all_rows(&mut kept));
    assert_eq!(rows.len(), n as usize);
    // Bytes short of what spilled are an error, not fewer rows.
    assert!(left.merge(&back[1..], &held).is_err());
}

#[test]
fn checks_inside_the_window_stay_exact_and_past_it_are_a_stated_limit() {
    let n = 300;
    let recent = format!("resp_{:032x}", n - 3);
    let old = format!("resp_{:032x}", 3);
    // A repeat of an id still held is a duplicate, in the reference's words; one named
    // in no event is done without created.
    for (ev, want) in [
        (
            json!({"type": "response.created", "response": {"id": recent}}),
            format!("duplicate response.created for {recent}"),
        ),
        (
            json!({"type": "response.done", "response": {"id": recent}}),
            format!("duplicate response.done for {recent}"),
        ),
        (
            json!({"type": "response.done", "response": {"id": "resp_never"}}),
            "response.done without response.created for resp_never".to_owned(),
        ),
        // Past the window (README, "what a held session keeps"): a repeated done reads
        // as done without created, still a failure.
        (
            json!({"type": "response.done", "response": {"id": old}}),
            format!("response.done without response.created for {old}"),
        ),
    ] {
        let (mut r, mut out) = long(n);
        r.observe(&ev, &Default::default(), 400.0, (false, None), &mut out)
            .unwrap();
        assert_eq!(r.ledger.error().map(ToString::to_string), Some(want));
        assert!(r.final_checks(false, 0.0, 400.0).is_err());
    }
    // A repeated created past the window is taken for a new response (the limit).
    let (mut r, mut out) = long(n);
    let ev = json!({"type": "response.created", "response": {"id": old}});
    r.observe(&ev, &Default::default(), 400.0, (false, None), &mut out)
        .unwrap();
    assert_eq!(r.ledger.error(), None);
}

#[test]
fn late_audio_for_a_settled_response_counts_as_it_did() {
    let (mut r, mut out) = long(50);
    let recent = format!("resp_{:032x}", 45);
    let got = (r.observe(
        &audio(&recent),
        &Default::default(),
        60.0,
        (false, None),
        &mut out,
    ))
    .unwrap()
    .expect("an audio delta");
    // Its place in creation order and its kept audio are what they were, plus the delta.
    assert_eq!((got.ordinal, got.bytes), (45, 4_800));
    assert_eq!(r.kept_ms(&recent), 200.0);
    assert_eq!(r.clock.live_and_settled(), (1, RESPONSE_WINDOW - 1));
    // Audio for an id never created is still refused as it arrives, and so is audio for
    // one that left the window (the stated limit).
    for id in ["resp_new".to_owned(), format!("resp_{:032x}", 7)] {
        let err = r.observe(
            &audio(&id),
            &Default::default(),
            61.0,
            (false, None),
            &mut out,
        );
        assert_eq!(
            err.err().as_deref(),
            Some("response audio has no matching response.created")
        );
    }
}
