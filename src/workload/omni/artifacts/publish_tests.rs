//! Unit tests of bundle publication: atomic swaps, failure bundles, stale leftovers.

use super::*;
use crate::workload::omni::artifacts::capture::{
    CaptureInput, ResponseRecord, Segment, capture, sanitize_event,
};
use crate::workload::omni::artifacts::layout::{
    BATCH_SUMMARY_JSON, CASE_FILES, OFFICIAL_EVAL_MANIFEST,
};
use bytes::Bytes;
use serde_json::{Value, json};

fn tmp_names(dir: &Path) -> Vec<String> {
    let mut names = all_names(dir);
    names.retain(|n| n.ends_with(".tmp"));
    names
}

fn all_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Spec §4.5 vector 1: duration 1 s, stream start 10 s, 2400 samples of 257 at 10.0.
pub(crate) fn vector_ctx(received_at: f64, text: &str) -> ArtifactContext {
    let segments = [Segment {
        response_id: "r1".into(),
        start_s: received_at,
        end_s: received_at + 0.1,
        pcm: Bytes::from(vec![1u8; 4800]),
    }];
    let responses = [ResponseRecord {
        response_id: "r1".into(),
        text: text.into(),
        done: true,
        ..Default::default()
    }];
    let input = CaptureInput {
        video_duration_s: 1.0,
        stream_start_s: 10.0,
        segments: &segments,
        responses: &responses,
    };
    let event = json!({"type": "response.audio.delta", "response_id": "r1", "delta": "AQEB"});
    capture(input, vec![sanitize_event(event, received_at)])
}

#[test]
fn atomic_write_failure_keeps_existing_destination() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join(OUTPUT_WAV), b"old").unwrap();
    let res = atomic_write(dir.path(), OUTPUT_WAV, |w| {
        w.write_all(b"partial")?;
        Err(io::Error::other("injected"))
    });
    let err = res.unwrap_err().to_string();
    assert!(
        err.contains("output.wav") && err.ends_with("injected"),
        "{err}"
    );
    assert_eq!(fs::read(dir.path().join(OUTPUT_WAV)).unwrap(), b"old");
    assert!(tmp_names(dir.path()).is_empty());
}

#[test]
fn atomic_write_uses_a_unique_local_temp() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.json"), b"old").unwrap();
    let mut seen = Vec::new();
    atomic_write(dir.path(), "a.json", |w| {
        seen = tmp_names(dir.path());
        w.write_all(b"new")
    })
    .unwrap();
    assert_eq!(seen.len(), 1);
    // `.<name>.<pid>-<16 hex>.tmp`: the pid lets a later run sweep a dead run's temps.
    let rest = seen[0]
        .strip_prefix(&format!(".a.json.{}-", std::process::id()))
        .and_then(|r| r.strip_suffix(".tmp"))
        .unwrap();
    assert_eq!(rest.len(), 16, "{}", seen[0]);
    assert_eq!(fs::read(dir.path().join("a.json")).unwrap(), b"new");
    assert!(tmp_names(dir.path()).is_empty());
}

#[test]
fn success_bundle() {
    let root = tempfile::tempdir().unwrap();
    let layout = CaseLayout::new("1qna", "videos_bench/nested/guide.mp4");
    let dir = layout.dir(root.path());
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join(FAILED_JSON), b"{}").unwrap();
    let ctx = vector_ctx(10.0, " héllo 你好 ");
    let mut result = CaseResult::new("1qna", "/data/guide.mp4");
    result.success = true;
    publish_case(
        root.path(),
        &layout,
        &ctx,
        &mut result,
        Path::new("/data/guide.json"),
        "1qna",
    )
    .unwrap();

    let mut names: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            DONE,
            EVENTS_JSON,
            OUTPUT_WAV,
            RESULT_JSON,
            WAV_TRANSCRIPT_JSON
        ]
    );
    assert_eq!(result.output_dir, dir.to_string_lossy());
    assert!(result.eligible_for_official_eval);
    assert_eq!(result.transcript, "héllo 你好");

    let wav_path = dir.join(OUTPUT_WAV);
    assert_eq!(fs::metadata(&wav_path).unwrap().len(), 44 + 48_000);
    let mut reader = hound::WavReader::open(&wav_path).unwrap();
    let spec = reader.spec();
    assert_eq!(
        (spec.channels, spec.sample_rate, spec.bits_per_sample),
        (1, 24_000, 16)
    );
    assert_eq!(reader.duration(), 24_000);
    let samples: Vec<i16> = reader.samples::<i16>().map(Result::unwrap).collect();
    assert!(samples[..2400].iter().all(|s| *s == 257));
    assert!(samples[2400..].iter().all(|s| *s == 0));

    let transcript = fs::read_to_string(dir.join(WAV_TRANSCRIPT_JSON)).unwrap();
    assert!(
        transcript.starts_with("{\n  \"text\": \"héllo 你好\",\n  \"chunks\": [\n"),
        "{transcript}"
    );
    assert!(transcript.ends_with("}\n"));
    let v: Value = serde_json::from_str(&transcript).unwrap();
    assert_eq!(
        v["chunks"],
        json!([{"response_id": "r1", "text": "héllo 你好", "timestamp": [0.0, 0.1]}])
    );
    assert_eq!(
        v["timestamp_semantics"],
        "serialized playback queue time relative to input streaming start"
    );

    let events: Value =
        serde_json::from_str(&fs::read_to_string(dir.join(EVENTS_JSON)).unwrap()).unwrap();
    assert_eq!(events[0]["audio_bytes"], 3);
    assert!(events[0].get("delta").is_none());

    let result_json = fs::read_to_string(dir.join(RESULT_JSON)).unwrap();
    assert!(result_json.starts_with(
        "{\n  \"subset\": \"1qna\",\n  \"video\": \"/data/guide.mp4\",\n  \"output_dir\""
    ));
    let done: Value = serde_json::from_str(&fs::read_to_string(dir.join(DONE)).unwrap()).unwrap();
    assert_eq!(done["annotation"], "/data/guide.json");
    assert_eq!(done["scene_type"], "1QnA");
    assert_eq!(done["success"], true);
    let keys: Vec<&String> = done.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 23);
}

#[test]
fn failed_publication_keeps_the_earlier_bundle_and_marks_result() {
    let root = tempfile::tempdir().unwrap();
    let layout = CaseLayout::new("1q1a", "video.mp4");
    let dir = layout.dir(root.path());
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join(DONE), b"stale").unwrap();
    fs::write(dir.join(RESULT_JSON), b"stale").unwrap();
    let mut ctx = vector_ctx(10.0, "hi");
    ctx.horizon_bytes = u64::from(u32::MAX); // too large for a RIFF header
    let mut result = CaseResult::new("1q1a", "video.mp4");
    result.success = true;
    let err = publish_case(
        root.path(),
        &layout,
        &ctx,
        &mut result,
        Path::new("/a.json"),
        "multi_turn",
    );
    assert!(matches!(err, Err(ArtifactError::Write { .. })));
    // Issue 11 item 2: the earlier bundle stays until a replacement is complete (the
    // finalizer then swaps in the failure bundle); no staging dir is left behind.
    assert_eq!(all_names(&dir), [DONE, RESULT_JSON]);
    assert_eq!(all_names(dir.parent().unwrap()).len(), 1);
    assert!(!result.success && !result.eligible_for_official_eval);
    assert_eq!(
        result.official_eval_ineligible_reasons,
        ["artifact_write_failed"]
    );
}

#[test]
fn failure_bundle() {
    let root = tempfile::tempdir().unwrap();
    let layout = CaseLayout::new("1q1a", "video.mp4");
    let dir = layout.dir(root.path());
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join(OUTPUT_WAV), b"stale").unwrap();
    let mut result = CaseResult::new("1q1a", "video.mp4");
    result.success = true;
    result.eligible_for_official_eval = true;
    publish_failure(
        root.path(),
        &layout,
        &mut result,
        Path::new("/a.json"),
        "multi_turn",
    )
    .unwrap();
    let names: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, [FAILED_JSON]);
    let v: Value =
        serde_json::from_str(&fs::read_to_string(dir.join(FAILED_JSON)).unwrap()).unwrap();
    assert_eq!(
        (
            v["success"].clone(),
            v["eligible_for_official_eval"].clone()
        ),
        (json!(false), json!(false))
    );
    assert_eq!(v["scene_type"], "multi_turn");
}

/// Starting a run removes dead runs' leftovers but keeps every complete bundle until its
/// replacement is swapped in, and the batch files until this run's replace them (a run
/// that cannot publish leaves the previous ones as they were).
#[test]
fn clear_outputs_removes_dead_leftovers_but_keeps_bundles_and_batch_files() {
    let root = tempfile::tempdir().unwrap();
    let a = CaseLayout::new("1q1a", "video.mp4");
    let missing = CaseLayout::new("1qna", "videos_bench/x.mp4");
    let dir = a.dir(root.path());
    fs::create_dir_all(&dir).unwrap();
    for name in CASE_FILES {
        fs::write(dir.join(name), b"x").unwrap();
    }
    let dead = crate::util::fs::test_support::dead_pid();
    let dead_tmp = format!(".output.wav.{dead}-00ab.tmp");
    fs::write(dir.join(&dead_tmp), b"x").unwrap();
    let dead_stage = dir.parent().unwrap().join(format!(".x.{dead}-1.stage"));
    fs::create_dir(&dead_stage).unwrap();
    for name in [OFFICIAL_EVAL_MANIFEST, BATCH_SUMMARY_JSON] {
        fs::write(root.path().join(name), b"x").unwrap();
    }
    clear_outputs(root.path(), &[a.clone(), missing]).unwrap();
    let mut left = all_names(&dir);
    left.sort();
    let mut want: Vec<String> = CASE_FILES.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(left, want);
    assert!(!dead_stage.exists());
    // The previous batch files stay until this run's replace them.
    assert!(
        [OFFICIAL_EVAL_MANIFEST, BATCH_SUMMARY_JSON]
            .iter()
            .all(|n| root.path().join(n).exists())
    );
}

/// Issue 11 item 2: "(or the run ends and it was not re-run)".
#[test]
fn remove_unrun_clears_only_the_given_bundles_done_first() {
    let root = tempfile::tempdir().unwrap();
    let gone = CaseLayout::new("1q1a", "a.mp4");
    let kept = CaseLayout::new("1q1a", "b.mp4");
    for l in [&gone, &kept] {
        let dir = l.dir(root.path());
        fs::create_dir_all(&dir).unwrap();
        for name in CASE_FILES {
            fs::write(dir.join(name), b"x").unwrap();
        }
    }
    let missing = CaseLayout::new("1qna", "never.mp4");
    remove_unrun(root.path(), &[gone.clone(), missing]).unwrap();
    assert!(!gone.dir(root.path()).exists());
    assert_eq!(all_names(&kept.dir(root.path())).len(), CASE_FILES.len());
}

#[test]
fn republishing_swaps_the_whole_bundle_in_one_step() {
    let root = tempfile::tempdir().unwrap();
    let a = CaseLayout::new("1q1a", "video.mp4");
    let dir = a.dir(root.path());
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join(DONE), b"old").unwrap();
    fs::write(dir.join(RESULT_JSON), b"old").unwrap();
    let stage = staging_dir(&dir).unwrap();
    fs::write(stage.join(FAILED_JSON), b"new").unwrap();
    swap_in(&stage, &dir).unwrap();
    assert_eq!(all_names(&dir), [FAILED_JSON]);
    assert!(!stage.exists());
    // Nothing but the case dir is left beside it.
    assert_eq!(all_names(dir.parent().unwrap()).len(), 1);
}

#[test]
fn paint_later_span_wins_across_blocks() {
    let spans = [
        PcmSpan {
            offset: 2,
            pcm: Bytes::from_static(&[1, 1, 1, 1, 1, 1]),
        },
        PcmSpan {
            offset: 4,
            pcm: Bytes::from_static(&[2, 2]),
        },
    ];
    let mut first = [0u8; 6];
    paint(&mut first, 0, &spans);
    assert_eq!(first, [0, 0, 1, 1, 2, 2]);
    let mut second = [0u8; 4];
    paint(&mut second, 6, &spans);
    assert_eq!(second, [1, 1, 0, 0]);
}
