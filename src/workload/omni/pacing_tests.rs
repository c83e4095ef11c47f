//! Tail rule and append plan vectors (spec §1.4).

use std::time::Duration;

use serde_json::json;

use super::*;

#[test]
fn tail_rule_vectors() {
    assert_eq!(streamed_len(32_000, 1000), 31_998);
    assert_eq!(streamed_len(32_002, 1000), 32_002);
    assert_eq!(streamed_len(0, 1000), 0);
    assert_eq!(streamed_len(16_000, 500), 15_998);
    assert_eq!(streamed_len(16_000, 1000), 16_000);
}

#[test]
fn chunk_period_from_newest_event_with_a_positive_integer() {
    let evs = [
        json!({"type": "session.created", "session": {"capabilities": {"chunk_period_ms": 500}}}),
        json!({"type": "session.updated", "session": {"capabilities": {"chunk_period_ms": 0}}}),
        json!({"type": "x"}),
    ];
    assert_eq!(chunk_period_ms(evs.iter().rev()), 500);
    assert_eq!(
        chunk_period_ms([json!({"type": "session.created"})].iter()),
        1000
    );
    let float = [json!({"session": {"capabilities": {"chunk_period_ms": 250.5}}})];
    assert_eq!(chunk_period_ms(float.iter()), 1000);
}

#[test]
fn ten_second_video_plan() {
    let len = streamed_len(320_000, 1000);
    assert_eq!(len, 319_998);
    let plan: Vec<Append> = AppendPlan::new(len, 10).collect();
    assert_eq!(plan.len(), 50);
    assert_eq!(AppendPlan::new(len, 10).total(), 50);
    assert!(
        plan[..49]
            .iter()
            .all(|a| a.end - a.offset == 6400 && a.duration_ms == 200)
    );
    let last = &plan[49];
    assert_eq!(
        (last.end - last.offset, last.duration_ms, last.audio_end_ms),
        (6398, 199, 9999)
    );
    let with_frames: Vec<(usize, u64, Range<usize>)> = plan
        .iter()
        .filter(|a| !a.frames.is_empty())
        .map(|a| (a.index, a.audio_end_ms, a.frames.clone()))
        .collect();
    let expect: Vec<(usize, u64, Range<usize>)> = (0..10)
        .map(|k| (3 + 5 * k, 600 + 1000 * k as u64, k..k + 1))
        .collect();
    assert_eq!(with_frames, expect);
}

#[test]
fn two_point_three_second_video_plan() {
    let len = streamed_len(3 * 32_000, 1000);
    assert_eq!(len, 95_998);
    let plan: Vec<Append> = AppendPlan::new(len, 3).collect();
    assert_eq!(plan.len(), 15);
    let idx: Vec<usize> = plan
        .iter()
        .filter(|a| !a.frames.is_empty())
        .map(|a| a.index)
        .collect();
    assert_eq!(idx, [3, 8, 13]);
}

#[test]
fn empty_pcm_has_no_appends() {
    assert_eq!(AppendPlan::new(0, 3).count(), 0);
}

#[test]
fn pacing_modes_place_appends() {
    assert_eq!(
        PacingMode::Realtime.due_after(6400),
        Some(Duration::from_millis(200))
    );
    assert_eq!(
        PacingMode::Realtime.due_after(319_998),
        Some(Duration::from_nanos(9_999_937_500))
    );
    assert_eq!(
        PacingMode::Speed(4.0).due_after(32_000),
        Some(Duration::from_millis(250))
    );
    assert_eq!(PacingMode::Saturate.due_after(32_000), None);
}

#[test]
fn append_message_shape_and_missing_frames() {
    let pcm = vec![0u8; 12_800];
    let frames: Vec<Option<Arc<str>>> = vec![None, Some(Arc::from("Zm9v"))];
    let a = Append {
        index: 1,
        offset: 6400,
        end: 12_800,
        duration_ms: 200,
        audio_end_ms: 400,
        frames: 0..2,
    };
    let (msg, n) = append_message(&a, &pcm, &frames);
    assert!(
        msg.capacity() <= msg.len() + 192,
        "sized up front, not grown by doubling: {} for {}",
        msg.capacity(),
        msg.len()
    );
    let v: Value = serde_json::from_str(&msg).unwrap();
    assert_eq!(n, 1);
    assert_eq!(v["type"], "input_audio_buffer.append");
    assert_eq!(v["input_audio_format"], "pcm16");
    assert_eq!(v["sample_rate_hz"], 16000);
    assert_eq!(
        (v["duration_ms"].as_u64(), v["audio_end_ms"].as_u64()),
        (Some(200), Some(400))
    );
    assert_eq!(v["video_frames"], json!(["Zm9v"]));
    assert_eq!(v["audio"].as_str().unwrap().len(), 6400 / 3 * 4 + 4);
    let none = Append { frames: 0..1, ..a };
    let (msg, n) = append_message(&none, &pcm, &frames);
    assert_eq!(n, 0);
    assert!(
        !msg.contains("video_frames"),
        "no key without a ready frame"
    );
}

/// A case's built appends for `pcm` and `frames`.
fn upload(pcm: Vec<u8>, frames: Vec<Option<Arc<str>>>) -> CaseUpload {
    CaseUpload::new(&crate::workload::omni::media::PreparedMedia {
        duration_s: pcm.len() as f64 / 32_000.0,
        pcm: pcm.into(),
        frames: frames.into(),
    })
}

#[test]
fn uploader_follows_the_absolute_schedule() {
    let t0 = Instant::now();
    let case = upload(vec![1u8; 32_000], vec![Some(Arc::from("QQ=="))]);
    let mut up = Uploader::new(PacingMode::Realtime, t0, 31_998, 1);
    let sent = up.due_appends(t0, &case);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].1, Some(t0));
    assert_eq!(up.next_wake(t0), t0 + Duration::from_millis(200));
    // Woken 450 ms late: appends 2..4 are all due; each keeps its own intended time.
    let sent = up.due_appends(t0 + Duration::from_millis(650), &case);
    let intended: Vec<_> = sent.iter().map(|s| s.1).collect();
    let ms = |m| Some(t0 + Duration::from_millis(m));
    assert_eq!(intended, [ms(200), ms(400), ms(600)]);
    assert!(
        sent[1].0.contains("video_frames"),
        "the frame rides append #3"
    );
    assert!(!sent[2].0.contains("video_frames"));
    assert!((up.max_lag_s - 0.45).abs() < 1e-9);
    assert!((up.mean_lag_s() - (0.45 + 0.25 + 0.05) / 4.0).abs() < 1e-9);
    assert_eq!(up.frames_sent, 1);
    let rest = up.due_appends(t0 + Duration::from_secs(1), &case);
    assert_eq!(rest.len(), 1);
    assert!(!up.commit_due(t0 + Duration::from_millis(999)));
    assert!(up.commit_due(t0 + Duration::from_nanos(999_937_500)));
    assert_eq!(up.chunks, 5);
}

#[test]
fn speed_and_saturate_uploads() {
    let t0 = Instant::now();
    let case = upload(vec![0u8; 32_000], Vec::new());
    let mut up = Uploader::new(PacingMode::Speed(2.0), t0, 31_998, 0);
    assert_eq!(up.due_appends(t0, &case).len(), 1);
    assert_eq!(up.next_wake(t0), t0 + Duration::from_millis(100));
    let mut up = Uploader::new(PacingMode::Saturate, t0, 31_998, 0);
    for i in 1..=5 {
        let sent = up.due_appends(t0, &case);
        assert_eq!(sent.len(), 1, "one append per call");
        assert_eq!(sent[0].1, None);
        assert_eq!(up.chunks, i);
        assert_eq!(up.next_wake(t0), t0);
    }
    assert!(up.commit_due(t0));
    assert_eq!(up.max_lag_s, 0.0);
}

#[test]
fn append_audio_is_standard_padded_base64_of_the_span() {
    use base64::Engine as _;
    // Distinct bytes everywhere, so an off-by-one span or a URL-safe alphabet shows.
    let pcm: Vec<u8> = (0..20_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    let len = streamed_len(pcm.len(), 1000);
    for a in AppendPlan::new(len, 0) {
        let (msg, _) = append_message(&a, &pcm, &[]);
        let v: Value = serde_json::from_str(&msg).unwrap();
        let audio = v["audio"].as_str().unwrap();
        assert_eq!(
            audio,
            base64::engine::general_purpose::STANDARD.encode(&pcm[a.offset..a.end])
        );
        let back = base64::engine::general_purpose::STANDARD
            .decode(audio)
            .unwrap();
        assert_eq!(back, &pcm[a.offset..a.end], "append {}", a.index);
    }
}
