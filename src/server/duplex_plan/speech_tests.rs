//! The barge-in detector and the interruption it makes, on the pure plan.

use std::time::Duration;

use serde_json::{Value, json};

use super::super::super::vad::{Heard, Vad};
use super::super::{Action, DuplexPlan, UpdateInfo};
use super::rms;
use crate::server::config::{DuplexServerConfig, FinalDecision, TurnMode, VadConfig};

fn cfg(reaction_ms: f64) -> VadConfig {
    VadConfig {
        barge_in_reaction_ms: Some(reaction_ms),
        threshold_dbfs: -40.0,
        silence_ms: 400.0,
    }
}

/// 200 ms of PCM16 at constant `amplitude` (a square wave: RMS = amplitude).
fn chunk(amplitude: i16) -> Vec<u8> {
    (0..3200)
        .flat_map(|i| if i % 2 == 0 { amplitude } else { -amplitude }.to_le_bytes())
        .collect()
}

#[test]
fn rms_of_a_square_wave_is_its_amplitude() {
    assert_eq!(rms(&chunk(1000)), 1000.0);
    assert_eq!(rms(&[]), 0.0);
}

#[test]
fn speech_starts_once_and_again_only_after_the_silence() {
    let mut vad = Vad::new(-40.0, 12_800);
    let (loud, quiet) = (1000.0, 100.0); // -30 and -50 dBFS
    assert_eq!(
        vad.feed(loud, 6400),
        Heard::Started,
        "the first loud append"
    );
    assert_eq!(vad.feed(loud, 6400), Heard::Same);
    assert_eq!(
        vad.feed(quiet, 6400),
        Heard::Same,
        "200 ms quiet: still speaking"
    );
    assert_eq!(
        vad.feed(loud, 6400),
        Heard::Same,
        "a short pause does not restart it"
    );
    assert_eq!(vad.feed(quiet, 6400), Heard::Same);
    let stopped = Heard::Stopped {
        quiet_bytes: 12_800,
    };
    assert_eq!(vad.feed(quiet, 6400), stopped, "400 ms quiet: speech ended");
    assert_eq!(vad.feed(quiet, 6400), Heard::Same, "once");
    assert_eq!(
        vad.feed(loud, 6400),
        Heard::Started,
        "the next loud append starts it again"
    );
}

fn append(pcm: &[u8], before: u64) -> Value {
    let audio = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, pcm);
    let end = before + pcm.len() as u64;
    json!({"type": "input_audio_buffer.append", "audio": audio, "input_audio_format": "pcm16",
        "sample_rate_hz": 16000, "duration_ms": pcm.len() as u64 * 1000 / 32000,
        "audio_end_ms": end * 1000 / 32000})
}

fn kinds(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .map(|a| match a {
            Action::Send(v) => {
                let t = v["type"].as_str().unwrap_or("").to_string();
                match v["response"]["status"].as_str() {
                    Some(s) if t == "response.done" => format!("{t}:{s}"),
                    _ => t,
                }
            }
            Action::Close => "close".into(),
        })
        .collect()
}

/// Runs the plan over `input` (one append per 200 ms from 0), collecting every action up
/// to `until` with its offset.
fn run(mut plan: DuplexPlan, input: &[Vec<u8>], until: Duration) -> Vec<(Duration, String)> {
    let mut out = Vec::new();
    let mut before = 0u64;
    let step = Duration::from_millis(200);
    let mut t = Duration::ZERO;
    for pcm in input {
        while let Some(due) = plan.next_due().filter(|d| *d <= t) {
            let a = plan.pop_due(due).unwrap();
            out.extend(kinds(&[a]).into_iter().map(|k| (due, k)));
        }
        let acts = plan
            .on_append_text(&append(pcm, before).to_string(), t)
            .unwrap();
        out.extend(kinds(&acts).into_iter().map(|k| (t, k)));
        before += pcm.len() as u64;
        t += step;
    }
    while let Some(due) = plan.next_due().filter(|d| *d <= until) {
        let a = plan.pop_due(due).unwrap();
        out.extend(kinds(&[a]).into_iter().map(|k| (due, k)));
    }
    out
}

#[test]
fn speech_over_a_reply_clears_it_after_the_reaction_and_answers() {
    let cfg = DuplexServerConfig {
        respond_every_s: 1.2,
        first_response_delay_ms: 0.0,
        audio_deltas: 20,
        delta_ms: 200,
        rtf: 0.5,
        final_decision: FinalDecision::Listen,
        vad: Some(cfg(150.0)),
        ..DuplexServerConfig::default()
    };
    let plan = plan(cfg);
    // 1 s of speech (the question), 1 s of silence, then speech from 2.0 s.
    let mut input = vec![chunk(3000); 5];
    input.extend(vec![chunk(0); 5]);
    input.extend(vec![chunk(3000); 3]);
    let log = run(plan, &input, Duration::from_secs(10));
    let at = |k: &str| {
        log.iter()
            .filter(|(_, x)| x == k)
            .map(|(t, _)| *t)
            .collect::<Vec<_>>()
    };
    assert_eq!(at("input_audio_buffer.speech_started").len(), 2, "{log:?}");
    let ms = Duration::from_millis;
    // The reply started at 1.0 s (the append that completes 1.2 s of input is sent at its
    // start) and sends until 3.0 s; the second speech start is the append at 2.0 s.
    assert_eq!(at("output_audio_buffer.cleared"), vec![ms(2150)], "{log:?}");
    assert_eq!(at("response.done:cancelled"), vec![ms(2150)]);
    // (A third, from crossing 2.4 s of input, queues behind the answer.)
    let created = at("response.created");
    assert_eq!(
        created[..2],
        [ms(1000), ms(2150)],
        "the answer starts at the clear"
    );
    // Nothing of the first reply is sent after its clear.
    let cleared_ix = log
        .iter()
        .position(|(_, k)| k == "output_audio_buffer.cleared")
        .unwrap();
    let second = cleared_ix + 2;
    assert_eq!(log[second].1, "response.created");
    assert!(
        log[cleared_ix + 1..second]
            .iter()
            .all(|(_, k)| !k.contains("delta")),
        "{log:?}"
    );
    assert_eq!(
        at("response.done:completed").len(),
        2,
        "the answer and the third complete"
    );
}

#[test]
fn speech_with_nothing_playing_clears_nothing() {
    let cfg = DuplexServerConfig {
        respond_every_s: 100.0,
        vad: Some(cfg(0.0)),
        ..DuplexServerConfig::default()
    };
    let plan = plan(cfg);
    let input = vec![chunk(3000), chunk(0), chunk(0), chunk(3000)];
    let log = run(plan, &input, Duration::from_secs(10));
    let kinds: Vec<&str> = log.iter().map(|(_, k)| k.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "input_audio_buffer.speech_started",
            "input_audio_buffer.speech_stopped",
            "input_audio_buffer.speech_started"
        ]
    );
}

fn plan(cfg: DuplexServerConfig) -> DuplexPlan {
    let info = UpdateInfo {
        model: "m".into(),
        session_id: None,
        idle_timeout_s: None,
    };
    DuplexPlan::new(cfg, 1, info, None, 900.0)
}

#[test]
fn server_vad_answers_each_end_of_speech() {
    let cfg = DuplexServerConfig {
        turns: TurnMode::ServerVad,
        first_response_delay_ms: 0.0,
        audio_deltas: 1,
        ..DuplexServerConfig::default()
    };
    // Two utterances of 400 ms, each followed by 600 ms of quiet.
    let turn = [vec![chunk(3000); 2], vec![chunk(0); 3]].concat();
    let log = run(
        plan(cfg),
        &[turn.clone(), turn].concat(),
        Duration::from_secs(10),
    );
    let at = |k: &str| {
        log.iter()
            .filter(|(_, x)| x == k)
            .map(|(t, _)| *t)
            .collect::<Vec<_>>()
    };
    let ms = Duration::from_millis;
    // Speech ends when 400 ms of quiet have arrived: with the appends at 0.6 and 1.6 s.
    assert_eq!(
        at("input_audio_buffer.speech_stopped"),
        vec![ms(600), ms(1600)],
        "{log:?}"
    );
    assert_eq!(
        at("response.created"),
        vec![ms(600), ms(1600)],
        "one answer per turn"
    );
}

#[test]
fn commit_turns_answer_each_non_final_commit() {
    let cfg = DuplexServerConfig {
        turns: TurnMode::Commit,
        first_response_delay_ms: 0.0,
        audio_deltas: 1,
        ..DuplexServerConfig::default()
    };
    let mut p = plan(cfg);
    let t = Duration::from_millis(300);
    let commit = json!({"type": "input_audio_buffer.commit", "final": false});
    let acts = p.on_event("input_audio_buffer.commit", &commit, t);
    // Acknowledged, then answered at once (no first-response delay, nothing in flight).
    assert_eq!(
        kinds(&acts)[..2],
        ["input_audio_buffer.committed", "response.created"]
    );
    let again = p.on_event("input_audio_buffer.commit", &commit, t * 2);
    assert_eq!(
        kinds(&again)[0],
        "input_audio_buffer.committed",
        "a turn is not the final commit"
    );
}
