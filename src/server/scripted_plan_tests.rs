//! The `[server.scripted]` rules' core without sockets: streams scheduled and sends timed
//! relative to receipt, bad rules named, audio payload lengths.

use std::sync::Arc;

use super::*;
use crate::server::config::ServerConfig;

const CFG: &str = r#"
[scripted]
on_connect = [{ send = { type = "session.created", id = "sess_${session}" } }]
[[scripted.rules]]
on = { type = "input_audio_buffer.commit", final = true }
do = [
  { after_ms = 100, stream = { type = "transcription.delta", delta = "w${n} " }, count = 3, every_ms = 50 },
  { after_ms = 20, send = { type = "transcription.done", text = "w1 w2 w3", id = "${event.id}" } },
  { close = true },
]
"#;

fn plan() -> ConnPlan {
    let cfg = ServerConfig::from_toml_str(CFG).unwrap();
    ConnPlan::new(Arc::new(Compiled::new(&cfg.scripted).unwrap()), 7)
}

#[test]
fn rules_schedule_streams_and_sends_relative_to_receipt() {
    let mut p = plan();
    let t0 = Instant::now();
    p.on_open(t0);
    assert_eq!(
        p.pop_due(t0),
        vec![Out::Text(
            r#"{"id":"sess_7","type":"session.created"}"#.into()
        )]
    );
    p.on_text(r#"{"type":"input_audio_buffer.commit","final":false}"#, t0);
    assert_eq!(p.next_due(), None);
    p.on_text("not json", t0);
    p.on_text(
        r#"{"type":"input_audio_buffer.commit","final":true,"id":"c1"}"#,
        t0,
    );
    let ms = |x: u64| t0 + Duration::from_millis(x);
    assert_eq!(p.next_due(), Some(ms(100)));
    assert_eq!(p.pop_due(ms(99)), vec![]);
    assert_eq!(p.pop_due(ms(150)).len(), 2);
    let rest = p.pop_due(ms(1000));
    assert_eq!(
        rest,
        vec![
            Out::Text(r#"{"delta":"w3 ","type":"transcription.delta"}"#.into()),
            Out::Text(r#"{"id":"c1","text":"w1 w2 w3","type":"transcription.done"}"#.into()),
            Out::Close,
        ]
    );
}

#[test]
fn bad_rules_are_named() {
    for (text, want) in [
        (
            "[[scripted.rules]]\non = {}\ndo = []\n",
            "scripted.rules[0].on",
        ),
        (
            "[[scripted.rules]]\non = {type=\"a\"}\ndo = [{ send = { t = \"${sesion}\" } }]\n",
            "did you mean `${session}`",
        ),
        (
            "[[scripted.rules]]\non = {type=\"a\"}\ndo = [{ send = { t = \"${i}\" } }]\n",
            "in `stream` also",
        ),
        (
            "[[scripted.rules]]\non = {type=\"a\"}\ndo = [{ after_ms = 1 }]\n",
            "scripted.rules[0].do[0]: an action has exactly one",
        ),
        (
            "[[scripted.rules]]\non = {type=\"a\"}\ndo = [{ stream = {t=1}, count = 0 }]\n",
            "`count`",
        ),
        ("[scripted]\npath = \"v1\"\n", "start with `/`"),
    ] {
        let err = ServerConfig::from_toml_str(text).unwrap_err().to_string();
        assert!(err.contains(want), "{text}: {err}");
    }
    let err = ServerConfig::from_toml_str("[[scripted.rules]]\non = {type=\"a\"}\ndoo = []\n")
        .unwrap_err();
    assert!(
        matches!(err, crate::server::ServerError::Parse { line: 3, .. }),
        "{err}"
    );
}

#[test]
fn audio_payload_has_the_configured_length() {
    let b64 = tone_b64(100, 24_000);
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    assert_eq!(bytes.len(), 4_800);
}

/// `${msg}` is the ordinal of the inbound message a firing answers (the same in every
/// message it sends), and a message no rule matches gets `on_unmatched`, naming it.
#[test]
fn msg_ids_a_firing_and_unmatched_messages_get_on_unmatched() {
    let cfg = ServerConfig::from_toml_str(
        r#"
[scripted]
on_unmatched = [{ send = { type = "error", message = "no rule for ${event.type}" } }]
[[scripted.rules]]
on = { type = "ping" }
do = [{ send = [{ type = "a", id = "r${msg}" }, { type = "b", id = "r${msg}" }] }]
"#,
    )
    .unwrap();
    let mut p = ConnPlan::new(Arc::new(Compiled::new(&cfg.scripted).unwrap()), 1);
    let t0 = Instant::now();
    p.on_text(r#"{"type":"ping"}"#, t0);
    p.on_text(r#"{"type":"other"}"#, t0);
    p.on_text(r#"{"type":"ping"}"#, t0);
    p.on_text("not json", t0);
    let text = |s: &str| Out::Text(s.into());
    assert_eq!(
        p.pop_due(t0),
        vec![
            text(r#"{"id":"r1","type":"a"}"#),
            text(r#"{"id":"r1","type":"b"}"#),
            text(r#"{"message":"no rule for other","type":"error"}"#),
            text(r#"{"id":"r3","type":"a"}"#),
            text(r#"{"id":"r3","type":"b"}"#),
        ]
    );
}

const BARGE: &str = r#"
[scripted]
speech = { field = "audio", sample_rate = 16000 }
on_speech_started = [{ send = { type = "speech_started" } }]
on_barge_in = [{ after_ms = 150, cancel = true }, { send = { type = "cleared" } }]
[[scripted.rules]]
on = { type = "response.create" }
do = [{ stream = { type = "delta", n = "${n}" }, count = 10, every_ms = 100 }]
"#;

/// 200 ms of 16 kHz PCM16 at constant `amplitude`, base64, in an append.
fn append(amplitude: i16) -> String {
    let pcm: Vec<u8> = (0..3200).flat_map(|_| amplitude.to_le_bytes()).collect();
    let b64 = base64::engine::general_purpose::STANDARD.encode(pcm);
    format!(r#"{{"type":"append","audio":"{b64}"}}"#)
}

fn texts(outs: Vec<Out>) -> Vec<String> {
    outs.into_iter()
        .map(|o| match o {
            Out::Text(t) => serde_json::from_str::<Value>(&t).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string(),
            Out::Close => "close".into(),
        })
        .collect()
}

#[test]
fn speech_over_a_stream_cancels_what_is_left_after_the_reaction() {
    let cfg = ServerConfig::from_toml_str(BARGE).unwrap();
    let mut p = ConnPlan::new(Arc::new(Compiled::new(&cfg.scripted).unwrap()), 1);
    let t0 = Instant::now();
    let ms = |n: u64| t0 + Duration::from_millis(n);
    // The user's first words: speech starts with nothing scheduled, no barge-in.
    p.on_text(&append(3000), t0);
    assert_eq!(texts(p.pop_due(t0)), ["speech_started"]);
    p.on_text(&append(0), ms(200));
    p.on_text(&append(0), ms(400)); // 400 ms quiet: speech ended
    p.on_text(r#"{"type":"response.create"}"#, ms(400));
    assert_eq!(texts(p.pop_due(ms(500))), ["delta", "delta"]);
    // The user speaks over the reply at 560 ms: the rest goes 150 ms later.
    p.on_text(&append(3000), ms(560));
    assert_eq!(
        texts(p.pop_due(ms(700))),
        ["speech_started", "delta", "delta"]
    );
    assert_eq!(
        texts(p.pop_due(ms(710))),
        ["cleared"],
        "the deltas left are dropped"
    );
    assert_eq!(p.next_due(), None);
}

#[test]
fn load_stretches_after_ms_and_every_ms() {
    let mut p = plan();
    let t0 = Instant::now();
    p.set_load(2.0);
    p.on_text(r#"{"type":"input_audio_buffer.commit","final":true}"#, t0);
    let mut dues = Vec::new();
    while let Some(at) = p.next_due() {
        dues.push(at.duration_since(t0).as_millis());
        p.pop_due(at);
    }
    // Base: deltas at 100, 150, 200 ms, done and close at 220 ms; every delay doubled.
    assert_eq!(dues, [200, 300, 400, 440]);
}
