//! Worked numbers for every transcription formula.

use super::*;
use crate::workload::transcription::protocol::Delta;

fn delta(at_s: f64, text: &str, front_s: Option<f64>) -> Delta {
    Delta {
        at_s,
        text: text.into(),
        front_s,
    }
}

/// 2 s of audio, first append at 0.1 s, final commit at 2.1 s, done at 2.35 s.
fn record() -> Record {
    Record {
        created_s: Some(0.1),
        first_audio_s: Some(0.1),
        final_commit_s: Some(2.1),
        done_s: Some(2.35),
        deltas: vec![
            delta(0.2, "", Some(0.3)),
            delta(0.55, "the", Some(0.5)),
            delta(0.95, " cat", Some(0.9)),
            delta(2.3, " sat", Some(2.1)),
        ],
        text: Some("the cat sat".into()),
        usage: Some(Usage {
            prompt_tokens: Some(25),
            completion_tokens: Some(3),
            total_tokens: Some(28),
        }),
        appends: 10,
        audio_s: 2.0,
        pacing_max_lag_s: 0.002,
        error_code: None,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn worked_session() {
    let m = session_metrics(&record(), Some("The cat sat on the mat."));
    // first non-empty delta 0.55 − first audio 0.1
    assert!(close(m.ttft_ms.unwrap(), 450.0));
    // done 2.35 − commit 2.1
    assert!(close(m.finalization_ms.unwrap(), 250.0));
    // 0.95 − 0.55, 2.3 − 0.95 (the empty delta is not a token)
    assert_eq!(m.itl_ms.len(), 2);
    assert!(close(m.itl_ms[0], 400.0) && close(m.itl_ms[1], 1350.0));
    // (2.35 − 0.1) / 2.0
    assert!(close(m.rtf.unwrap(), 1.125));
    // 0.55 − 0.5, 0.95 − 0.9, 2.3 − 2.1
    let lag: Vec<f64> = m.streaming_lag_ms.clone();
    assert!(close(lag[0], 50.0) && close(lag[1], 50.0) && close(lag[2], 200.0));
    // 3 deletions of 6 reference words
    assert!(close(m.wer_rate().unwrap(), 0.5));
    assert_eq!(m.usage.total_tokens, Some(28));
}

#[test]
fn missing_inputs_are_absent_not_zero() {
    let mut r = record();
    r.done_s = None;
    r.deltas.clear();
    r.text = None;
    let m = session_metrics(&r, None);
    assert_eq!((m.ttft_ms, m.finalization_ms, m.rtf), (None, None, None));
    assert!(m.itl_ms.is_empty() && m.streaming_lag_ms.is_empty());
    assert_eq!(m.wer, None);
    // A reference without words gives no WER either.
    assert_eq!(session_metrics(&record(), Some(" .. ")).wer, None);
    // Zero-length audio has no RTF.
    let mut r = record();
    r.audio_s = 0.0;
    assert_eq!(session_metrics(&r, None).rtf, None);
}

#[test]
fn hypothesis_falls_back_to_joined_deltas() {
    let mut r = record();
    r.text = None;
    let m = session_metrics(&r, Some("the cat sat"));
    assert_eq!(m.wer_rate(), Some(0.0));
}

#[test]
fn run_metrics_pool_and_sum() {
    let a = record();
    let mut b = record();
    b.deltas = vec![delta(0.3, "dog", Some(0.3))];
    b.text = Some("dog".into());
    b.usage = Some(Usage {
        prompt_tokens: Some(5),
        completion_tokens: None,
        total_tokens: Some(6),
    });
    let ma = session_metrics(&a, Some("the cat sat"));
    let mb = session_metrics(&b, Some("the dog"));
    let (mut m, rec) = run_metrics(&[(&ma, &a, 0.0), (&mb, &b, 1.0)], 1);
    m.extend(rec.flat());
    assert_eq!(m["failed"], 1.0);
    assert_eq!(m["completed"], 2.0);
    // ttft: 450 and 200
    assert!(close(m["ttft_ms.mean"], 325.0));
    assert!(close(m["ttft_ms.max"], 450.0));
    // corpus WER: (0 + 1) / (3 + 2); mean of rates: (0 + 0.5) / 2
    assert!(close(m["wer"], 0.2));
    assert!(close(m["file_wer.mean"], 0.25));
    assert_eq!((m["wer_edits.total"], m["wer_words.total"]), (1.0, 5.0));
    assert_eq!(m["prompt_tokens.total"], 30.0);
    assert_eq!(m["completion_tokens.total"], 3.0);
    assert_eq!(m["total_tokens.total"], 34.0);
    assert!(close(m["pacing_max_lag_ms.max"], 2.0));
    assert_eq!(m["audio_s.total"], 4.0);
    // every produced name is declared
    let names = catalogue().names();
    for k in m.keys() {
        assert!(names.contains(k), "{k} not declared");
    }
    // The unit rate: 4 s of audio over a 2.5 s run; missing without a duration.
    assert_eq!(audio_throughput(&m, 2.5), Some(1.6));
    assert_eq!(audio_throughput(&m, 0.0), None);
    assert!(names.contains(&AUDIO_THROUGHPUT.to_string()));
    assert_eq!(
        catalogue().unit_rate().map(|u| u.unit.as_str()),
        Some("audio s/s")
    );
}

#[test]
fn empty_run_has_only_counts() {
    let (m, rec) = run_metrics(&[], 3);
    assert_eq!(m.len(), 2);
    assert!(
        rec.flat().is_empty(),
        "no values: no statistics, never zeros"
    );
    assert_eq!(audio_throughput(&m, 10.0), None);
    assert_eq!(m["failed"], 3.0);
}
