//! The append read straight from its text (`checked_append`, `on_append_text`) against
//! the `Value` path it stands in for: it accepts only what `validate_append` accepts,
//! with the same result, and a session driven through it sends the same actions.

use super::super::inbound::{checked_append, decode_into, is_base64, strict_len};
use super::*;

#[test]
fn a_valid_append_read_from_text_is_what_the_value_path_returns() {
    // The §1.4 worked example: 49 x 6400 bytes + 6398, a frame on every fifth append.
    let mut total = 0u64;
    for i in 1..=50u64 {
        let bytes = if i == 50 { 6398 } else { 6400 };
        let event = append_event(bytes, total + bytes as u64, usize::from(i % 5 == 3));
        let slow = validate_append(&event, total).unwrap();
        assert_eq!(
            checked_append(&event.to_string(), total),
            Some(slow),
            "#{i}"
        );
        total += slow.bytes;
    }
    let two_frames = append_event(6400, 6400, 2);
    assert_eq!(
        checked_append(&two_frames.to_string(), 0),
        Some(Append {
            bytes: 6400,
            frames: 2
        })
    );
}

#[test]
fn what_the_value_path_rejects_the_text_path_never_accepts() {
    let ok = append_event(6400, 6400, 1);
    let mut bad: Vec<Value> = bad_append_cases()
        .into_iter()
        .map(|(pointer, value, _)| {
            let mut event = ok.clone();
            *event.pointer_mut(pointer).unwrap() = value;
            event
        })
        .collect();
    // Present but null, of another type, or missing: the Value path names each.
    for (key, value) in [
        ("duration_ms", json!(null)),
        ("audio_end_ms", json!(null)),
        ("video_frames", json!(null)),
        ("duration_ms", json!(200.0)),
        ("duration_ms", json!(-200)),
        ("sample_rate_hz", json!(null)),
        ("sample_rate_hz", json!("16000")),
        ("input_audio_format", json!(null)),
        ("audio", json!(null)),
        ("video_frames", json!([5])),
    ] {
        let mut event = ok.clone();
        event[key] = value;
        bad.push(event);
    }
    let mut missing = ok.clone();
    missing.as_object_mut().unwrap().remove("audio");
    bad.push(missing);
    for event in &bad {
        assert!(validate_append(event, 0).is_err(), "{event}");
        assert_eq!(checked_append(&event.to_string(), 0), None, "{event}");
    }
    // The input so far decides audio_end_ms: a valid event at the wrong point is not.
    assert_eq!(checked_append(&ok.to_string(), 6400), None);
    // Not an append at all.
    let ack = json!({"type": "playback.ack", "response_id": "r", "played_ms": 1});
    assert_eq!(checked_append(&ack.to_string(), 0), None);
    assert_eq!(checked_append("{not json", 0), None);
    // The fields in order as an array: serde could read it as the struct; it is no event.
    let o = ok.as_object().unwrap();
    let fields = ["type", "input_audio_format", "sample_rate_hz", "audio"];
    let array = json!(fields.map(|k| o[k].clone()));
    assert_eq!(checked_append(&array.to_string(), 0), None);
}

#[test]
fn text_the_fast_reader_declines_is_left_to_the_value_path() {
    let ok = append_event(6400, 6400, 0).to_string();
    // Escapes in a string, and a key given twice: valid JSON the Value path reads (the
    // second key wins there), which the borrowed reader declines rather than misreads.
    let escaped = ok.replace("\"pcm16\"", "\"pcm\\u0031\\u0036\"");
    let twice = ok.replacen('{', "{\"sample_rate_hz\":24000,", 1);
    for text in [escaped, twice] {
        let value: Value = serde_json::from_str(&text).unwrap();
        assert!(validate_append(&value, 0).is_ok(), "{text}");
        assert_eq!(checked_append(&text, 0), None, "{text}");
    }
}

#[test]
fn the_audio_string_is_cut_out_only_where_it_is_the_top_level_one() {
    let ok = append_event(6400, 6400, 1);
    let text = ok.to_string();
    let want = validate_append(&ok, 0).ok();
    assert!(want.is_some());
    // Read the same however the audio key is written or whatever else holds an "audio".
    let nested = text.replacen(
        '{',
        "{\"meta\":{\"audio\":\"AAAA\",\"x\":[{\"audio\":\"\"}]},",
        1,
    );
    let spaced = text.replacen("\"audio\":\"", "\"audio\" : \"", 1);
    let quoted = text.replacen('{', "{\"note\":\"say \\\"audio\\\":\\\"\",", 1);
    for text in [&text, &nested, &spaced, &quoted] {
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(validate_append(&value, 0).ok(), want, "{text}");
        assert_eq!(checked_append(text, 0), want, "{text}");
    }
    // An escape inside the audio, the key twice, a nested audio that is the only one,
    // or an "audio" that is a value: never accepted from the text.
    let audio = ok["audio"].as_str().unwrap();
    let escaped = text.replacen(audio, &audio.replacen('A', "\\u0041", 1), 1);
    let twice = text.replacen('{', &format!("{{\"audio\":\"{audio}\","), 1);
    let mut moved = ok.clone();
    let a = moved.as_object_mut().unwrap().remove("audio").unwrap();
    moved["meta"] = json!({"audio": a});
    let as_value = text.replacen("\"audio\":\"", "\"x\":\"audio\":\"", 1);
    for text in [escaped, twice, moved.to_string(), as_value] {
        assert_eq!(checked_append(&text, 0), None, "{text}");
    }
}

/// Every action of a session whose appends (and commit) arrive at the given offsets,
/// the appends passed as text when `as_text` and as values otherwise.
fn session(cfg: DuplexServerConfig, as_text: bool) -> Vec<Action> {
    let mut plan = plan_with(cfg);
    let mut out = plan.start();
    let mut total = 0u64;
    for i in 1..=24u64 {
        let bytes = if i == 24 { 3198 } else { 6400 };
        let event = append_event(bytes, total + bytes as u64, usize::from(i % 5 == 0));
        total += bytes as u64;
        let at = ms(i * 200 + i % 3);
        let text = event.to_string();
        let got = match as_text {
            true => plan.on_append_text(&text, at).expect("a valid append"),
            false => plan.on_event("input_audio_buffer.append", &event, at),
        };
        out.extend(got);
    }
    let commit = json!({"type": "input_audio_buffer.commit", "final": true});
    out.extend(plan.on_event("input_audio_buffer.commit", &commit, ms(4_850)));
    // After the final commit an append is the Value path's error, never accepted.
    let late = append_event(6400, total + 6400, 0);
    assert_eq!(plan.on_append_text(&late.to_string(), ms(4_900)), None);
    out.extend(plan.on_event("input_audio_buffer.append", &late, ms(4_900)));
    out.extend(sent(&drain(&mut plan)));
    out
}

#[test]
fn a_session_fed_appends_as_text_sends_what_the_value_path_sends() {
    let configs = [
        fast(),
        DuplexServerConfig {
            buffering_listens: true,
            listen_every_s: 0.4,
            ..fast()
        },
        DuplexServerConfig {
            respond_every_s: 1.0,
            rtf: 2.0,
            ..fast()
        },
    ];
    for cfg in configs {
        let by_text = session(cfg.clone(), true);
        assert_eq!(by_text, session(cfg, false));
        assert!(of_type(&by_text, "response.created").len() >= 4);
        assert_eq!(of_type(&by_text, "error").len(), 1);
    }
}

proptest::proptest! {
    /// The SIMD decoder (`util::b64::standard`) accepts exactly what the scalar one does:
    /// valid base64, then one character replaced by padding, a space, the URL-safe
    /// alphabet or a trailing-bit change, or the padding dropped.
    #[test]
    fn append_base64_decodes_as_the_strict_decoder(
        pcm in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
        at in proptest::prelude::any::<proptest::sample::Index>(),
        what in 0usize..8,
    ) {
        use base64::Engine as _;
        let mut s = base64::engine::general_purpose::STANDARD.encode(&pcm).into_bytes();
        if !s.is_empty() {
            let i = at.index(s.len());
            match what {
                0 => s[i] = b'=',
                1 => s[i] = b' ',
                2 => s[i] = b'-',
                3 => s.retain(|&c| c != b'='),
                4 => {
                    let last = s.iter().rposition(|&c| c != b'=').unwrap_or(0);
                    s[last] = if s[last] == b'z' { b'0' } else { s[last] + 1 };
                }
                5 => s.push(b'='),
                _ => {}
            }
        }
        let text = String::from_utf8(s).unwrap();
        let mut buf = Vec::new();
        let got = decode_into(&mut buf, &text).map(<[u8]>::to_vec);
        let want = base64::engine::general_purpose::STANDARD.decode(&text).ok();
        // The check without decoding gives the same verdict and length.
        let len = strict_len(&text);
        proptest::prop_assert_eq!(len, want.as_ref().map(Vec::len));
        proptest::prop_assert_eq!(got, want);
    }
}

#[test]
fn the_alphabet_check_takes_exactly_the_standard_alphabet() {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for c in 0..=255u8 {
        assert_eq!(is_base64(c), alphabet.contains(&c), "byte {c:#04x}");
    }
}
