//! Turns end to end: OmniInteract sessions speak their case three times against the
//! embedded server, with turns ended by the server's voice detection and by explicit
//! commits, and every turn is answered and measured from the end of the user's speech.

use serde_json::Value;

use crate::duplex_support::{Opts, duplex, require_ffmpeg};
use crate::support::{failure_messages, sample_rows};

/// A fast server answering turns as `mode` says (2 deltas of 100 ms each).
fn server(mode: &str) -> String {
    format!(
        "turns = \"{mode}\"\naudio_deltas = 2\ndelta_ms = 100\nrtf = 0.5\n\
         first_response_delay_ms = 30\nfinal_decision = \"respond\"\n"
    )
}

fn run(workload: &str, server: &str) -> (rtload::RunSummary, Vec<Value>) {
    require_ffmpeg();
    let fx = duplex(&Opts {
        // Every synthesized case has voice within 2 s (one is quiet for its first second).
        duration_ms: 2000,
        samples: 3,
        max_concurrency: 3,
        workload,
        server,
        ..Opts::default()
    });
    let summary = fx.run();
    assert!(
        summary.passed(),
        "{:?} {:?}",
        failure_messages(&summary),
        summary.verdicts
    );
    let rows = sample_rows(&summary);
    assert_eq!(rows.len(), 3);
    (summary, rows)
}

fn turns_of(row: &Value) -> Vec<Value> {
    row["turns"].as_array().cloned().unwrap_or_default()
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("a number: {v}"))
}

#[test]
fn server_vad_turns_are_each_answered_and_measured_from_the_end_of_speech() {
    let (summary, rows) = run(
        "turns = 3\nturn_detection = \"server_vad\"\nturn_gap_ms = 300\n",
        &server("server_vad"),
    );
    for row in &rows {
        let turns = turns_of(row);
        assert_eq!(turns.len(), 3, "{row}");
        let mut replies = std::collections::HashSet::new();
        for (k, t) in turns.iter().enumerate() {
            assert_eq!(t["turn"], k);
            assert!(
                replies.insert(t["reply_id"].as_str().unwrap().to_string()),
                "{t}"
            );
            let first = num(&t["first_audio_ms"]);
            assert!(first > 0.0, "{t}");
            assert!(num(&t["first_text_ms"]) >= 0.0, "{t}");
            if k < 2 {
                // The server heard the end of speech; its reply came after it.
                assert!(!t["committed"].as_bool().unwrap(), "{t}");
                let vad = num(&t["vad_stop_to_first_audio_ms"]);
                assert!(vad > 0.0 && vad <= first, "{t}");
                assert!(t["explicit_commit_to_first_audio_ms"].is_null(), "{t}");
            } else {
                // The last turn ends with the final commit, answered by the final decision.
                assert_eq!(t["committed"], true, "{t}");
                assert_eq!(num(&t["explicit_commit_to_first_audio_ms"]), first, "{t}");
            }
            if k > 0 {
                let prev_end = num(&turns[k - 1]["speech_end_s"]);
                assert!(
                    num(&t["speech_start_s"]) >= prev_end + 0.3,
                    "the gap: {turns:?}"
                );
            }
        }
    }
    // One source: the per-turn values are the recorded distribution.
    let flat = summary.report.to_json()["rtload"]["metrics"].clone();
    assert_eq!(flat["turn_first_audio_ms.count"].as_f64(), Some(9.0));
    assert_eq!(flat["vad_stop_to_first_audio_ms.count"].as_f64(), Some(6.0));
    let all: Vec<f64> = rows
        .iter()
        .flat_map(turns_of)
        .map(|t| num(&t["first_audio_ms"]))
        .collect();
    let max = all.iter().copied().fold(f64::MIN, f64::max);
    assert!((num(&flat["turn_first_audio_ms.max"]) - max).abs() < 1e-9);
    let text = summary.report.render_text();
    assert!(
        text.contains("Turns spoken:") && text.contains("9"),
        "{text}"
    );
}

#[test]
fn explicit_commit_turns_are_answered_from_each_commit() {
    let (summary, rows) = run(
        "turns = 2\nturn_detection = \"commit\"\nturn_gap_ms = 0\n",
        &server("commit"),
    );
    for row in &rows {
        let turns = turns_of(row);
        assert_eq!(turns.len(), 2, "{row}");
        for t in &turns {
            assert_eq!(t["committed"], true, "{t}");
            // The commit leaves at the end of speech: the same origin, the same value.
            let first = num(&t["first_audio_ms"]);
            assert_eq!(num(&t["explicit_commit_to_first_audio_ms"]), first, "{t}");
            assert!(
                t["vad_stop_to_first_audio_ms"].is_null(),
                "no server VAD: {t}"
            );
        }
    }
    let flat = summary.report.to_json()["rtload"]["metrics"].clone();
    assert_eq!(
        flat["explicit_commit_to_first_audio_ms.count"].as_f64(),
        Some(6.0)
    );
}
