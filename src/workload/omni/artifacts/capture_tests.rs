//! Tests of `capture`.

use super::*;
use serde_json::json;

fn seg(id: &str, start: f64, samples: usize) -> Segment {
    Segment {
        response_id: id.to_owned(),
        start_s: start,
        end_s: start + samples as f64 / 24000.0,
        pcm: Bytes::from(vec![1u8; samples * 2]),
    }
}

fn resp(id: &str, text: &str) -> ResponseRecord {
    ResponseRecord {
        response_id: id.to_owned(),
        text: text.to_owned(),
        done: true,
        ..Default::default()
    }
}

#[track_caller]
fn check(duration: f64, segments: &[Segment], responses: &[ResponseRecord]) -> ArtifactContext {
    let input = CaptureInput {
        video_duration_s: duration,
        stream_start_s: 10.0,
        segments,
        responses,
    };
    capture(input, Vec::new())
}

#[test]
fn vector_on_time_delta_is_eligible() {
    let ctx = check(1.0, &[seg("r1", 10.0, 2400)], &[resp("r1", " hi ")]);
    assert_eq!(ctx.horizon_bytes, 48_000);
    assert_eq!(ctx.wav_frames(), 24_000);
    assert_eq!(ctx.spans.len(), 1);
    assert_eq!(ctx.spans[0].offset, 0);
    assert_eq!(ctx.spans[0].pcm.len(), 4800);
    assert_eq!(ctx.audio_clipped_bytes, 0);
    assert_eq!(ctx.transcript.chunks.len(), 1);
    let [s, e] = ctx.transcript.chunks[0].timestamp;
    assert!((s - 0.0).abs() < 1e-9 && (e - 0.1).abs() < 1e-9, "{s} {e}");
    assert_eq!(ctx.transcript.text, "hi");
    assert!(ctx.ineligible_reasons.is_empty());
    assert_eq!(ctx.complete_outputs, 1);
    let mut result = CaseResult::new("1q1a", "v.mp4");
    result.success = true;
    ctx.apply_to(&mut result);
    assert!(result.eligible_for_official_eval);
}

#[test]
fn vector_late_delta_is_clipped() {
    let ctx = check(1.0, &[seg("r1", 10.95, 2400)], &[resp("r1", "late")]);
    assert_eq!(ctx.spans[0].offset, 45_600);
    assert_eq!(ctx.spans[0].pcm.len(), 2400);
    assert_eq!(ctx.audio_clipped_bytes, 2400);
    assert_eq!(ctx.ineligible_reasons, vec![REASON_AUDIO_CLIPPED]);
    let [s, e] = ctx.transcript.chunks[0].timestamp;
    assert!((s - 0.95).abs() < 1e-9 && (e - 1.0).abs() < 1e-9, "{s} {e}");
    let mut result = CaseResult::new("1q1a", "v.mp4");
    result.success = true;
    ctx.apply_to(&mut result);
    assert!(!result.eligible_for_official_eval);
    assert_eq!(result.audio_clipped_bytes, 2400);
    assert_eq!(
        result.official_eval_ineligible_reasons,
        vec!["audio_clipped"]
    );
}

#[test]
fn vector_cancelled_and_cleared() {
    let mut r = resp("r1", "x");
    r.cancelled = true;
    let ctx = check(1.0, &[seg("r1", 10.0, 2400)], std::slice::from_ref(&r));
    assert_eq!(ctx.ineligible_reasons, vec![REASON_CANCELLED_RESPONSE]);
    assert_eq!(ctx.complete_outputs, 0);
    r.audio_cleared = true;
    let ctx = check(1.0, &[seg("r1", 10.95, 2400)], &[r]);
    assert_eq!(
        ctx.ineligible_reasons,
        vec![
            REASON_AUDIO_CLIPPED,
            REASON_CANCELLED_RESPONSE,
            REASON_CLEARED_RESPONSE
        ]
    );
}

#[test]
fn offsets_round_half_to_even() {
    assert_eq!(wav_offset(10.125, 10.0), 3000 * 2);
    assert_eq!(wav_offset(9.0, 10.0), 0);
    assert_eq!(wav_offset(f64::NAN, 10.0), 0);
    // Exact ties (stream start 0): 1.5 → 2, 2.5 → 2, 5.5 → 6 samples (Python `round`).
    for (samples, expected) in [(1.5, 2u64), (2.5, 2), (5.5, 6)] {
        let rel = samples / 24000.0;
        assert_eq!(rel * 24000.0, samples, "not an exact tie");
        assert_eq!(wav_offset(rel, 0.0), expected * 2);
    }
}

#[test]
fn chunk_rules() {
    let segments = [
        seg("r1", 10.0, 12_000),
        seg("r1", 10.5, 12_000),
        seg("r3", 11.2, 2400),
        seg("r4", 12.5, 2400),
    ];
    let responses = [
        resp("r1", "a "),
        resp("r2", "text only"),
        resp("r3", "   "),
        resp("r4", "beyond"),
    ];
    let ctx = check(2.0, &segments, &responses);
    let ids: Vec<_> = ctx
        .transcript
        .chunks
        .iter()
        .map(|c| c.response_id.as_str())
        .collect();
    assert_eq!(ids, vec!["r1"]);
    assert_eq!(ctx.transcript.chunks[0].timestamp, [0.0, 1.0]);
    // r4 starts at 2.5 s > horizon 2 s: fully clipped.
    assert_eq!(ctx.audio_clipped_bytes, 4800);
}

#[test]
fn end_capped_and_rounded() {
    let ctx = check(
        1.2,
        &[seg("r1", 10.0 + 1.0 / 3.0, 48_000)],
        &[resp("r1", "x")],
    );
    assert_eq!(ctx.transcript.chunks[0].timestamp, [0.333333, 2.0]);
    assert_eq!(ctx.horizon_bytes, 96_000);
}

#[test]
fn silent_audio_is_not_complete_output() {
    let mut s = seg("r1", 10.0, 10);
    s.pcm = Bytes::from(vec![0u8; 20]);
    let ctx = check(1.0, &[s], &[resp("r1", "x")]);
    assert_eq!(ctx.complete_outputs, 0);
    assert_eq!(ctx.transcript.chunks.len(), 1);
}

#[test]
fn sanitize_audio_delta() {
    let ev = json!({"type": "response.audio.delta", "response_id": "r1", "delta": "AAAA", "x": 1});
    let out = sanitize_event(ev, 12.5);
    assert_eq!(
        out,
        json!({"type": "response.audio.delta", "response_id": "r1", "x": 1,
                            "_client_received_at_s": 12.5, "audio_bytes": 3})
    );
    let ev = json!({"type": "response.output_audio.delta", "audio": "AAA="});
    assert_eq!(sanitize_event(ev, 1.0)["audio_bytes"], json!(2));
    let ev = json!({"type": "response.done", "delta": "keep"});
    assert_eq!(sanitize_event(ev, 1.0)["delta"], json!("keep"));
    assert_eq!(sanitize_event(json!([1]), 1.0), json!([1]));
}

#[test]
fn bad_duration_gives_empty_horizon() {
    let ctx = check(f64::NAN, &[seg("r1", 10.0, 10)], &[]);
    assert_eq!(ctx.horizon_bytes, 0);
    assert_eq!(ctx.audio_clipped_bytes, 20);
}
