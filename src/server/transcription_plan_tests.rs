//! The transcription endpoint's core without sockets: event order and timing, the
//! transcript of synthetic audio, vLLM's error codes, and each fault switch.

use serde_json::{Value, json};

use super::*;
use crate::server::config::TranscriptionFaults;

fn cfg() -> TranscriptionServerConfig {
    TranscriptionServerConfig {
        latency_ms: 50.0,
        final_delay_ms: 20.0,
        ..TranscriptionServerConfig::default()
    }
}

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

fn append(pcm: &[i16]) -> String {
    let bytes: Vec<u8> = pcm.iter().flat_map(|s| s.to_le_bytes()).collect();
    let audio = base64::engine::general_purpose::STANDARD.encode(bytes);
    json!({"type": "input_audio_buffer.append", "audio": audio}).to_string()
}

fn commit(f: bool) -> String {
    json!({"type": "input_audio_buffer.commit", "final": f}).to_string()
}

fn update() -> String {
    json!({"type": "session.update", "model": "m"}).to_string()
}

fn sent(actions: &[Action]) -> Vec<Value> {
    actions
        .iter()
        .map(|a| match a {
            Action::Send(t) => serde_json::from_str(t).unwrap_or(json!({"raw": t})),
            Action::Close => json!({"close": true}),
        })
        .collect()
}

/// Run a whole session: words at 16 kHz streamed as 200 ms appends at 0, 200, … ms,
/// final commit right after; returns every action with its offset.
fn run(cfg: TranscriptionServerConfig, words: &[usize]) -> Vec<(Duration, Value)> {
    let pcm = tonecode::encode(words, 16_000, 2.5);
    let mut p = TranscriptionPlan::new(cfg);
    let mut out: Vec<(Duration, Value)> = Vec::new();
    let mut push = |t: Duration, a: Vec<Action>| out.extend(sent(&a).into_iter().map(|v| (t, v)));
    push(ms(0), p.start("sess", 7));
    assert!(p.on_text(&update(), ms(0)).is_empty());
    assert!(p.on_text(&commit(false), ms(0)).is_empty());
    let mut t = 0;
    for chunk in pcm.chunks(3200) {
        while let Some(d) = p.next_due().filter(|d| *d <= ms(t)) {
            let a = p.pop_due(d);
            push(d, a);
        }
        assert!(p.on_text(&append(chunk), ms(t)).is_empty());
        t += 200;
    }
    assert!(p.on_text(&commit(true), ms(t)).is_empty());
    while let Some(d) = p.next_due() {
        let a = p.pop_due(d);
        push(d, a);
    }
    out
}

#[test]
fn synthetic_words_come_back_as_deltas_then_done() {
    let out = run(cfg(), &[0, 1, 2]);
    assert_eq!(
        out[0].1,
        json!({"type": "session.created", "id": "sess", "created": 7})
    );
    let deltas: Vec<(u64, &str)> = out
        .iter()
        .filter(|(_, v)| v["type"] == "transcription.delta")
        .map(|(t, v)| (t.as_millis() as u64, v["delta"].as_str().unwrap()))
        .collect();
    // Word k's 400 ms slot is complete with the append at 200 (2k + 1) ms; +50 ms latency.
    assert_eq!(deltas, [(250, "the"), (650, " quick"), (1050, " brown")]);
    let (t, done) = out.last().unwrap();
    assert_eq!(t.as_millis(), 1220); // final commit at 1200 + 20 ms
    assert_eq!(done["type"], "transcription.done");
    assert_eq!(done["text"], "the quick brown");
    // 1.2 s of audio at 12.5 tokens/s = 15, 3 words.
    assert_eq!(
        done["usage"],
        json!({"prompt_tokens": 15, "completion_tokens": 3, "total_tokens": 18})
    );
}

#[test]
fn silence_is_no_word_and_other_sound_is_speech() {
    let mut p = TranscriptionPlan::new(cfg());
    p.on_text(&update(), ms(0));
    p.on_text(&commit(false), ms(0));
    p.on_text(&append(&[0; 6400]), ms(0));
    let noise: Vec<i16> = (0..6400)
        .map(|i| if (i * 7919) % 13 < 6 { 9000 } else { -9000 })
        .collect();
    p.on_text(&append(&noise), ms(0));
    p.on_text(&commit(true), ms(0));
    let out = sent(&p.pop_due(ms(100)));
    assert_eq!(out[0]["delta"], OTHER_WORD);
    assert_eq!(out[1]["text"], OTHER_WORD);
}

#[test]
fn audio_before_generation_is_heard_once_generation_starts() {
    let mut p = TranscriptionPlan::new(cfg());
    p.on_text(&update(), ms(0));
    p.on_text(&append(&tonecode::encode(&[5], 16_000, 2.5)), ms(0));
    assert_eq!(p.next_due(), None);
    p.on_text(&commit(false), ms(10));
    assert_eq!(p.next_due(), Some(ms(60)));
}

/// vLLM 0.34's codes and texts (`speech_to_text/realtime/connection.py`).
#[test]
fn vllm_error_codes() {
    let first = |a: Vec<Action>| sent(&a)[0].clone();
    let code = |a: Vec<Action>| first(a)["code"].as_str().unwrap().to_owned();
    let mut p = TranscriptionPlan::new(cfg());
    assert_eq!(
        first(p.on_text("{nope", ms(0))),
        json!({"type": "error", "error": "Invalid JSON", "code": "invalid_json"})
    );
    // Audio before session.update is kept, as vLLM queues it; a commit needs the model.
    assert!(p.on_text(&append(&[1]), ms(0)).is_empty());
    assert_eq!(
        code(p.on_text(&commit(false), ms(0))),
        "model_not_validated"
    );
    assert_eq!(
        first(p.on_text(r#"{"type":"session.update"}"#, ms(0))),
        json!({"type": "error", "error": "Missing required field: model", "code": "invalid_event"})
    );
    assert_eq!(
        first(p.on_text(r#"{"type":"response.create"}"#, ms(0))),
        json!({"type": "error", "error": "Unknown event type: response.create", "code": "unknown_event"})
    );
    p.on_text(&update(), ms(0));
    let invalid = json!({"type": "error", "error": "Invalid audio data", "code": "invalid_audio"});
    for audio in ["@@@", "AAAA" /* 3 bytes */, "" /* empty */] {
        let ev = json!({"type": "input_audio_buffer.append", "audio": audio}).to_string();
        assert_eq!(first(p.on_text(&ev, ms(0))), invalid, "{audio:?}");
    }
    let mut strict = TranscriptionPlan::new(TranscriptionServerConfig {
        model: Some("voxtral".into()),
        ..cfg()
    });
    assert_eq!(
        first(strict.on_text(&update(), ms(0))),
        json!({"type": "error", "error": "The model `m` does not exist.", "code": "model_not_found"})
    );
    assert!(
        strict
            .on_text(r#"{"type":"session.update","model":"voxtral"}"#, ms(0))
            .is_empty()
    );
}

/// A second utterance on one connection, as vLLM serves it: after `transcription.done`
/// the audio left is dropped, and the next commit starts a fresh transcript of the audio
/// appended since, with its own usage.
#[test]
fn a_second_utterance_on_one_connection_gets_its_own_transcript() {
    let mut p = TranscriptionPlan::new(cfg());
    p.on_text(&update(), ms(0));
    let mut all: Vec<Value> = Vec::new();
    let mut utterance = |p: &mut TranscriptionPlan, words: &[usize], t0: u64| {
        assert!(p.on_text(&commit(false), ms(t0)).is_empty());
        let pcm = tonecode::encode(words, 16_000, 2.5);
        let mut t = t0;
        for chunk in pcm.chunks(3200) {
            assert!(p.on_text(&append(chunk), ms(t)).is_empty());
            t += 200;
        }
        assert!(p.on_text(&commit(true), ms(t)).is_empty());
        while let Some(d) = p.next_due() {
            all.extend(sent(&p.pop_due(d)));
        }
    };
    utterance(&mut p, &[0, 1], 0);
    utterance(&mut p, &[2], 5_000);
    let dones: Vec<&Value> = all
        .iter()
        .filter(|v| v["type"] == "transcription.done")
        .collect();
    assert_eq!(dones.len(), 2, "{all:?}");
    assert_eq!(dones[0]["text"], "the quick");
    assert_eq!(dones[1]["text"], "brown");
    // 0.4 s of audio at 12.5 tokens/s = 5 prompt tokens, 1 word.
    assert_eq!(
        dones[1]["usage"],
        json!({"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6})
    );
}

fn faulty(f: TranscriptionFaults) -> Vec<Value> {
    let c = TranscriptionServerConfig { faults: f, ..cfg() };
    run(c, &[0, 1, 2]).into_iter().map(|(_, v)| v).collect()
}

fn kinds(v: &[Value]) -> Vec<String> {
    v.iter()
        .map(|e| {
            e["type"]
                .as_str()
                .map(str::to_owned)
                .or_else(|| e.get("close").map(|_| "close".to_owned()))
                .unwrap_or_else(|| format!("raw:{}", e["raw"].as_str().unwrap_or("")))
        })
        .collect()
}

#[test]
fn error_fault_replaces_the_next_delta_and_stops() {
    let out = faulty(TranscriptionFaults {
        error_after_deltas: Some(1),
        error_message: Some("GPU fell over".into()),
        ..TranscriptionFaults::default()
    });
    assert_eq!(
        kinds(&out),
        ["session.created", "transcription.delta", "error"]
    );
    assert_eq!(out[2]["code"], "processing_error");
    assert_eq!(out[2]["error"], "GPU fell over");
}

#[test]
fn faults_past_the_transcript_take_the_place_of_done() {
    let out = faulty(TranscriptionFaults {
        close_after_deltas: Some(99),
        ..TranscriptionFaults::default()
    });
    assert_eq!(kinds(&out).last().unwrap(), "close");
    assert_eq!(
        kinds(&out)
            .iter()
            .filter(|k| *k == "transcription.delta")
            .count(),
        3
    );
    let out = faulty(TranscriptionFaults {
        garbage_after_deltas: Some(0),
        ..TranscriptionFaults::default()
    });
    assert_eq!(
        kinds(&out),
        ["session.created".to_owned(), format!("raw:{GARBAGE}")]
    );
    let out = faulty(TranscriptionFaults {
        no_done: true,
        ..TranscriptionFaults::default()
    });
    assert_eq!(kinds(&out).last().unwrap(), "transcription.delta");
}

#[test]
fn faults_apply_only_to_listed_sessions() {
    let f = TranscriptionFaults {
        no_done: true,
        only_sessions: vec![1],
        ..TranscriptionFaults::default()
    };
    assert!(!f.for_session(0).no_done);
    assert!(f.for_session(1).no_done);
}

/// When `transcription.done` of a one-word utterance is due: the final commit at 1 s,
/// the plan under load `f`.
fn done_at(f: f64) -> Duration {
    let mut p = TranscriptionPlan::new(cfg());
    p.set_load(f);
    assert!(p.on_text(&update(), ms(0)).is_empty());
    let pcm = tonecode::encode(&[3], 16_000, 2.5);
    assert!(p.on_text(&append(&pcm), ms(0)).is_empty());
    assert!(p.on_text(&commit(true), ms(1000)).is_empty());
    let mut last = Duration::ZERO;
    while let Some(d) = p.next_due() {
        last = d;
        p.pop_due(d);
    }
    last
}

#[test]
fn load_multiplies_latency_and_final_delay() {
    // The last word `latency_ms` = 50 after the commit at 1000 ms, `transcription.done`
    // no earlier: 1050 ms, and 1125 ms at load 2.5.
    assert_eq!(done_at(1.0), ms(1050));
    assert_eq!(done_at(2.5), ms(1125));
    assert_eq!(done_at(0.3), ms(1050), "a factor below 1 is no speed-up");
}
