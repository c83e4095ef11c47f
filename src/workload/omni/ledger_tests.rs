//! Ledger, audio, decision, termination and Python-rendering rules (spec §1.3, §1.5, §1.7).

use base64::Engine as _;
use serde_json::json;

use super::*;
use crate::util::pyfmt::py_float;

fn ledger_of(events: &[Value]) -> Ledger {
    let mut l = Ledger::default();
    events.iter().for_each(|e| l.observe(e));
    l
}

fn created(id: &str) -> Value {
    json!({"type": "response.created", "response": {"id": id}})
}

fn done(id: &str, status: &str) -> Value {
    json!({"type": "response.done", "response": {"id": id, "status": status}})
}

#[track_caller]
fn ledger_err(events: &[Value], msg: &str) {
    assert_eq!(
        ledger_of(events)
            .error()
            .map(ToString::to_string)
            .as_deref(),
        Some(msg)
    );
}

#[test]
fn ledger_messages() {
    ledger_err(
        &[json!({"type": "response.created"})],
        "response.created has no response_id",
    );
    ledger_err(
        &[
            created("a"),
            json!({"type": "response.done", "response_id": ""}),
        ],
        "response.done has no response_id",
    );
    ledger_err(
        &[created("a"), created("a")],
        "duplicate response.created for a",
    );
    ledger_err(
        &[done("b", "completed")],
        "response.done without response.created for b",
    );
    ledger_err(
        &[created("a"), done("a", "completed"), done("a", "completed")],
        "duplicate response.done for a",
    );
    ledger_err(
        &[created("a"), done("a", "failed")],
        "response.done reports failure for a",
    );
    let top =
        json!({"type": "response.done", "response_id": "a", "status_details": {"type": "failed"}});
    ledger_err(&[created("a"), top], "response.done reports failure for a");
    let nested = json!({"type": "response.done", "response": {"id": "a", "status_details": {"type": "failed"}}});
    ledger_err(
        &[created("a"), nested],
        "response.done reports failure for a",
    );
    ledger_err(
        &[
            created("a"),
            json!({"type": "response.done", "response_id": "a", "status": "failed"}),
        ],
        "response.done reports failure for a",
    );
}

#[test]
fn ledger_tracks_open_responses_in_sorted_order() {
    let l = ledger_of(&[
        created("r2"),
        created("r1"),
        created("r3"),
        done("r3", "cancelled"),
    ]);
    assert!(l.error().is_none());
    assert!(!l.is_closed());
    assert_eq!(l.unfinished(), ["r1", "r2"]);
    // Creation order is the session's (its records), not the ledger's.
    assert!(["r1", "r2", "r3"].iter().all(|r| l.is_created(r)));
    assert!(!l.is_created("r4"));
    let l = ledger_of(&[
        created("r1"),
        json!({"type": "response.done", "response_id": "r1"}),
    ]);
    assert!(l.is_closed());
}

#[test]
fn response_identity_rule() {
    assert_eq!(
        response_id(&json!({"response_id": "a", "response": {"id": "b"}})),
        Some("a")
    );
    assert_eq!(
        response_id(&json!({"response_id": 5, "response": {"id": "b"}})),
        Some("b")
    );
    assert_eq!(response_id(&json!({"response": {"id": 7}})), None);
}

#[test]
fn cancelled_and_listen_decisions() {
    assert!(is_cancelled(&done("a", "cancelled")));
    assert!(is_cancelled(
        &json!({"type": "response.done", "status": "cancelled"})
    ));
    assert!(!is_cancelled(
        &json!({"response": {"status": "completed"}, "status": "cancelled"})
    ));
    assert!(is_listen_decision(
        &json!({"type": "response.listen", "response": {"metadata": {"model_listen": true}}})
    ));
    assert!(is_listen_decision(
        &json!({"type": "response.listen", "metadata": {"model_listen": true, "buffering": false}})
    ));
    assert!(!is_listen_decision(
        &json!({"metadata": {"model_listen": true, "buffering": true}})
    ));
    assert!(
        !is_listen_decision(&json!({"metadata": {}})),
        "unmarked listen"
    );
    assert!(
        !is_listen_decision(&json!({"response": {}, "metadata": {"model_listen": true}})),
        "response object wins"
    );
}

#[test]
fn post_commit_decision_waits_for_prior_responses() {
    let mut p = PostCommit::new(["r0".to_string()]);
    p.observe(&json!({"type": "response.listen", "metadata": {"model_listen": true}}));
    assert!(!p.decided(), "prior still open");
    p.observe(&done("r0", "completed"));
    assert!(!p.decided(), "a prior done only clears the prior");
    p.observe(&done("r1", "cancelled"));
    assert!(!p.decided(), "a cancelled done is no decision");
    p.observe(
        &json!({"type": "response.listen", "metadata": {"model_listen": true, "buffering": true}}),
    );
    assert!(!p.decided(), "buffering notification");
    p.observe(&done("r2", "completed"));
    assert!(p.decided());
    let mut p = PostCommit::new([]);
    p.observe(
        &json!({"type": "response.listen", "response": {"metadata": {"model_listen": true}}}),
    );
    assert!(p.decided());
}

fn audio(extra: Value) -> Value {
    let mut v = json!({"type": "response.audio.delta", "response_id": "r1", "delta": "AAAAAA==",
                       "format": "pcm16", "sample_rate_hz": 24000});
    for (k, x) in extra.as_object().unwrap() {
        if x.is_null() {
            v.as_object_mut().unwrap().remove(k);
        } else {
            v[k] = x.clone();
        }
    }
    v
}

#[track_caller]
fn audio_err(ev: Value, msg: &str) {
    let mut w = Vec::new();
    let err = AudioCheck::default().check(&ev, &mut w).unwrap_err();
    assert_eq!(err.to_string(), msg);
}

#[test]
fn audio_messages() {
    audio_err(
        audio(json!({"response_id": null})),
        "response audio has no response_id",
    );
    audio_err(
        audio(json!({"delta": 5})),
        "response audio payload is missing",
    );
    audio_err(
        audio(json!({"delta": ""})),
        "response audio payload is missing",
    );
    audio_err(
        audio(json!({"format": "opus"})),
        "OmniInteract output must be pcm16",
    );
    audio_err(
        audio(json!({"sample_rate_hz": 16000})),
        "OmniInteract output must use 24000 Hz audio",
    );
    audio_err(
        audio(json!({"delta": "AA A"})),
        "response audio is not valid base64",
    );
    audio_err(
        audio(json!({"delta": "AAA"})),
        "response audio is not valid base64",
    );
    audio_err(
        audio(json!({"delta": "AA=="})),
        "response audio is empty or not PCM16 aligned",
    );
    let mut w = Vec::new();
    let ev = audio(json!({"delta": "", "audio": "AAAAAA=="}));
    let (id, pcm) = AudioCheck::default().check(&ev, &mut w).unwrap();
    assert_eq!((id, pcm.len()), ("r1", 4));
    assert!(w.is_empty());
}

#[test]
fn audio_warnings_are_recorded_once() {
    let mut check = AudioCheck::default();
    let mut w = Vec::new();
    let bare = audio(json!({"format": null, "sample_rate_hz": null}));
    check.check(&bare, &mut w).unwrap();
    check.check(&bare, &mut w).unwrap();
    assert_eq!(
        w,
        [
            "response.audio.delta omitted format; assumed pcm16",
            "response.audio.delta omitted sample_rate_hz; assumed 24000"
        ]
    );
    let alias = json!({"type": "response.output_audio.delta", "response_id": "r", "delta": "AAAAAA==", "format": "pcm16"});
    check.check(&alias, &mut w).unwrap();
    assert_eq!(
        w[2],
        "response.output_audio.delta omitted sample_rate_hz; assumed 24000"
    );
    let mut check = AudioCheck::default();
    check
        .check(&audio(json!({"sample_rate_hz": 16000})), &mut w)
        .unwrap_err();
    assert_eq!(
        check.check(&bare, &mut w).unwrap_err(),
        AudioError::Rate,
        "last seen rate is assumed"
    );
}

#[test]
fn error_events() {
    let ev = json!({"type": "error", "error": {"message": "boom", "code": null}});
    // The message keeps the server's key order (the reference's `str(event)`).
    let text = r#"{"type": "error", "error": {"message": "boom", "code": null}}"#;
    assert_eq!(
        error_verdict(&ev, text),
        ErrorVerdict::Fatal("{'type': 'error', 'error': {'message': 'boom', 'code': None}}".into())
    );
    let late = json!({"type": "error", "error": {"code": "playback_ack_too_late"}});
    assert_eq!(
        error_verdict(&late, &late.to_string()),
        ErrorVerdict::Tolerated("server warning: playback_ack_too_late".into())
    );
    let gone = json!({"type": "error", "code": "playback_item_not_found"});
    assert!(matches!(
        error_verdict(&gone, &gone.to_string()),
        ErrorVerdict::Tolerated(_)
    ));
}

#[test]
fn termination_rules() {
    let closed = |r: Value| json!({"type": "session.closed", "reason": r});
    assert_eq!(
        termination_failure(&closed(json!("timeout")), false, false).as_deref(),
        Some("session.closed: timeout")
    );
    assert_eq!(
        termination_failure(&json!({"type": "session.expired"}), false, false).as_deref(),
        Some("session.expired")
    );
    let nested = json!({"type": "session.closed", "reason": null, "event": {"reason": "idle"}});
    assert_eq!(
        termination_failure(&nested, false, false).as_deref(),
        Some("session.closed: idle")
    );
    // After our close: no reason (or client_close) is the expected answer.
    assert_eq!(
        termination_failure(&json!({"type": "session.closed"}), true, true),
        None
    );
    assert_eq!(
        termination_failure(&closed(json!("client_close")), true, true),
        None
    );
    assert_eq!(
        termination_failure(&closed(json!("server_shutdown")), true, true).as_deref(),
        Some("Unexpected session.closed: server_shutdown")
    );
    assert_eq!(
        termination_failure(&closed(json!("")), true, true).as_deref(),
        Some("Unexpected session.closed")
    );
    assert_eq!(
        termination_failure(&json!({"type": "session.closed"}), true, false).as_deref(),
        Some("Unexpected session.closed")
    );
    assert_eq!(
        termination_failure(
            &json!({"type": "session.expired", "reason": "ttl"}),
            true,
            true
        )
        .as_deref(),
        Some("Unexpected session.expired: ttl")
    );
    assert_eq!(
        termination_failure(&json!({"type": "response.done"}), true, true),
        None
    );
}

#[test]
fn python_renderings() {
    assert_eq!(py_list(&["r1", "r2"]), "['r1', 'r2']");
    assert_eq!(py_repr_str("it's"), "\"it's\"");
    assert_eq!(py_repr_str("a\\b\n"), "'a\\\\b\\n'");
    assert_eq!(
        py_repr(&json!([1, 2.5, 3.0, true, null, "x"])),
        "[1, 2.5, 3.0, True, None, 'x']"
    );
    assert_eq!(py_float(1e-5), "1e-05");
    assert_eq!(py_float(1.5e20), "1.5e+20");
    assert_eq!(py_g(909.9999375), "910");
    assert_eq!(py_g(900.0), "900");
    assert_eq!(py_g(902.3), "902.3");
    assert_eq!(py_g(0.0001234567), "0.000123457");
    assert_eq!(py_g(1234567.0), "1.23457e+06");
    assert_eq!(py_str(&json!("plain")), "plain");
    assert_eq!(py_str(&json!({"a": 1})), "{'a': 1}");
}

/// Base64 shaped like an audio delta's, then maybe mutated: a byte replaced by one of the
/// characters a decoder must judge (padding, whitespace, the URL-safe alphabet, one
/// that changes only the trailing bits), or the padding dropped.
fn b64_case() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let pcm = proptest::collection::vec(any::<u8>(), 0..200);
    let mutation = proptest::option::of((any::<prop::sample::Index>(), 0usize..9));
    (pcm, mutation).prop_map(|(pcm, mutation)| {
        use base64::Engine as _;
        let mut s = base64::engine::general_purpose::STANDARD
            .encode(pcm)
            .into_bytes();
        if let (Some((at, what)), false) = (mutation, s.is_empty()) {
            let i = at.index(s.len());
            match what {
                0 => s[i] = b'=',
                1 => s[i] = b' ',
                2 => s[i] = b'-',
                3 => s[i] = b'_',
                4 => s[i] = b'\n',
                5 => s.retain(|&c| c != b'='),
                6 => s.push(b'='),
                // A last character one step on: the same data, other trailing bits.
                7 => {
                    let last = s.iter().rposition(|&c| c != b'=').unwrap_or(0);
                    s[last] = if s[last] == b'z' { b'0' } else { s[last] + 1 };
                }
                _ => s.insert(i, b'A'),
            }
        }
        String::from_utf8(s).unwrap_or_default()
    })
}

/// The scalar engine of the reference's rule: the standard alphabet, canonical padding,
/// any trailing bits.
const STRICT_B64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true),
);

proptest::proptest! {
    /// The SIMD path decodes exactly what the strict decoder does and refuses exactly
    /// what it refuses.
    #[test]
    fn audio_base64_decodes_as_the_strict_decoder(s in b64_case()) {
        proptest::prop_assert_eq!(decode_audio_b64(&s).ok(), STRICT_B64.decode(&s).ok());
    }
}

#[test]
fn audio_base64_accepts_trailing_bits_and_refuses_bad_padding() {
    // "QR==" carries 0x41 with non-zero trailing bits: the reference accepts it.
    assert_eq!(decode_audio_b64("QR==").unwrap(), b"A");
    assert_eq!(decode_audio_b64("QQ==").unwrap(), b"A");
    assert!(decode_audio_b64("QQ").is_err());
    assert!(decode_audio_b64("QQ=").is_err());
    assert!(decode_audio_b64("%%not-base64%%").is_err());
}
