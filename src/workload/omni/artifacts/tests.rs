//! Tests of `artifacts`.

use super::*;
use layout::FAILED_JSON;
use serde_json::{Value, json};
use std::fs;

fn case(
    subset: &str,
    video_rel: &str,
    ctx: Option<ArtifactContext>,
    success: bool,
) -> FinalizeCase {
    let mut result = CaseResult::new(subset, &format!("/data/{subset}/{video_rel}"));
    result.success = success;
    if let Some(ctx) = &ctx {
        ctx.apply_to(&mut result);
    }
    FinalizeCase {
        layout: CaseLayout::new(subset, video_rel),
        result,
        context: ctx,
        annotation: PathBuf::from(format!("/data/{subset}/ann.json")),
        scene_type: "multi_turn".into(),
        publication_error: None,
    }
}

fn eligible() -> ArtifactContext {
    publish::tests::vector_ctx(10.0, "hi")
}

/// §4.5: clipped (received at 10.95) and cancelled.
fn clipped_and_cancelled() -> ArtifactContext {
    let mut ctx = publish::tests::vector_ctx(10.95, "hi");
    ctx.ineligible_reasons.push(REASON_CANCELLED_RESPONSE);
    ctx
}

fn read(root: &Path, name: &str) -> String {
    fs::read_to_string(root.join(name)).unwrap()
}

#[test]
fn manifest_lists_only_eligible_cases() {
    let root = tempfile::tempdir().unwrap();
    let mut cases = [
        case("1q1a", "video.mp4", Some(eligible()), true),
        case(
            "1qna",
            "videos_bench/nested/guide.mp4",
            Some(clipped_and_cancelled()),
            true,
        ),
        case("1q1a_math", "m.mp4", None, false),
    ];
    let summary = finalize(root.path(), &mut cases);
    assert!(summary.artifacts_complete, "{:?}", summary.artifact_errors);
    let c = summary.counts;
    assert_eq!((c.total, c.success, c.failed), (3, 2, 1));
    assert_eq!(
        (c.eligible_for_official_eval, c.successful_but_ineligible),
        (1, 1)
    );
    assert_eq!(c.audio_clipped_bytes, 2400);
    assert_eq!(
        summary.exclusion_message.as_deref(),
        Some(
            "1 successful OmniInteract cases were excluded from official evaluation: \
             audio_clipped=1, cancelled_response=1"
        )
    );
    let r = root.path();
    let model_json = r.join("1q1a/video--a41434a9/wav_transcript.json");
    let expected = format!(
        "{{\"sample_id\": \"1q1a__video--a41434a9\", \"video\": \"/data/1q1a/video.mp4\", \
         \"gt_json\": \"/data/1q1a/ann.json\", \"model_json\": \"{}\", \"scene_type\": \"multi_turn\"}}\n",
        model_json.display()
    );
    assert_eq!(read(r, OFFICIAL_EVAL_MANIFEST), expected);
    // The ineligible case keeps its auditable bundle; the failed one has a failure bundle.
    assert!(
        r.join("1qna/videos_bench__nested__guide--295f59aa/.done")
            .exists()
    );
    assert!(
        r.join("1q1a_math")
            .read_dir()
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path()
            .join(".failed.json")
            .exists()
    );

    let batch: Value = serde_json::from_str(&read(r, BATCH_SUMMARY_JSON)).unwrap();
    let keys: Vec<&String> = batch.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 7);
    assert_eq!(batch["results"].as_array().unwrap().len(), 3);
    assert_eq!(
        batch["results"][1]["official_eval_ineligible_reasons"],
        json!(["audio_clipped", "cancelled_response"])
    );
    assert!(read(r, BATCH_SUMMARY_JSON).starts_with("{\n  \"total\": 3,\n  \"success\": 2,\n"));

    let compact = serde_json::to_value(&summary).unwrap();
    assert_eq!(
        compact,
        json!({"total": 3, "success": 2, "failed": 1, "eligible_for_official_eval": 1,
               "successful_but_ineligible": 1, "audio_clipped_bytes": 2400, "artifacts_complete": true})
    );
}

#[test]
fn manifest_is_empty_when_nothing_is_eligible() {
    let root = tempfile::tempdir().unwrap();
    let mut cases = [case(
        "1q1a",
        "video.mp4",
        Some(clipped_and_cancelled()),
        true,
    )];
    let summary = finalize(root.path(), &mut cases);
    assert!(summary.artifacts_complete);
    assert_eq!(read(root.path(), OFFICIAL_EVAL_MANIFEST), "");
    assert_eq!(summary.counts.successful_but_ineligible, 1);
}

#[test]
fn publication_failure_is_data_and_writes_failure_bundle() {
    let root = tempfile::tempdir().unwrap();
    let mut ctx = eligible();
    ctx.horizon_bytes = u64::from(u32::MAX);
    let mut cases = [case("1q1a", "video.mp4", Some(ctx), true)];
    cases[0].result.error = Some("earlier".into());
    let summary = finalize(root.path(), &mut cases);
    assert!(!summary.artifacts_complete);
    assert_eq!(summary.artifact_errors.len(), 1);
    let err = &summary.artifact_errors[0];
    assert!(
        err.starts_with("1q1a/video.mp4: Artifact publication failed: cannot write "),
        "{err}"
    );
    let r = &cases[0].result;
    assert!(!r.success && !r.eligible_for_official_eval);
    assert_eq!(
        r.official_eval_ineligible_reasons,
        ["artifact_write_failed"]
    );
    let msg = cases[0].publication_error.clone().unwrap();
    assert!(msg.starts_with("Artifact publication failed: "));
    assert_eq!(r.error.as_deref(), Some(format!("earlier\n{msg}").as_str()));
    assert_eq!(join_error(None, &msg), msg);
    let dir = cases[0].layout.dir(root.path());
    let names: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, [FAILED_JSON]);
    assert_eq!((summary.counts.success, summary.counts.failed), (0, 1));
    assert!(
        cases[0].context.is_none(),
        "context is released after publication"
    );
    let compact = serde_json::to_value(&summary).unwrap();
    assert_eq!(compact["artifact_errors"], json!([err]));
}

#[test]
fn failure_bundle_failure_is_collected_too() {
    let root = tempfile::tempdir().unwrap();
    fs::write(root.path().join("1q1a"), b"not a dir").unwrap();
    let mut cases = [case("1q1a", "video.mp4", None, true)];
    let summary = finalize(root.path(), &mut cases);
    let errs = &summary.artifact_errors;
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert_eq!(
        errs[0],
        "1q1a/video.mp4: Artifact publication failed: artifact context was not captured for 1q1a/video.mp4"
    );
    assert!(errs[1].starts_with(
        "1q1a/video.mp4: failure artifact publication failed: cannot create directory"
    ));
    assert_eq!(read(root.path(), OFFICIAL_EVAL_MANIFEST), "");
}

#[test]
fn a_batch_that_cannot_be_written_leaves_the_previous_pair_and_no_temps() {
    let root = tempfile::tempdir().unwrap();
    // A non-empty directory where the summary goes: its rename fails.
    fs::create_dir_all(root.path().join(BATCH_SUMMARY_JSON).join("x")).unwrap();
    fs::write(root.path().join(OFFICIAL_EVAL_MANIFEST), b"previous").unwrap();
    let mut cases = [case("1q1a", "video.mp4", Some(eligible()), true)];
    let summary = finalize(root.path(), &mut cases);
    let errs = &summary.artifact_errors;
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].starts_with("Batch artifact publication failed: cannot write "),
        "{errs:?}"
    );
    // Serving success is untouched; the case itself published fine.
    assert!(cases[0].result.success && cases[0].publication_error.is_none());
    // Both batch files are written whole before either replaces the previous one: the
    // summary could not take its place, so the previous manifest stays as it was.
    assert_eq!(
        fs::read(root.path().join(OFFICIAL_EVAL_MANIFEST)).unwrap(),
        b"previous"
    );
    assert_eq!(entries_ending(root.path(), ".tmp"), 0);
}

#[test]
fn case_result_helpers() {
    let mut r = CaseResult::new("1q1a", "v");
    r.add_ineligible_reason(REASON_CASE_FAILED);
    r.add_ineligible_reason(REASON_CASE_FAILED);
    assert_eq!(r.official_eval_ineligible_reasons, ["case_failed"]);
    r.append_error("a");
    r.append_error("b");
    assert_eq!(r.error.as_deref(), Some("a\nb"));
    let v = serde_json::to_value(&r).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys.len(), 21);
    let back: CaseResult = serde_json::from_value(v).unwrap();
    assert_eq!(back, r);
}

#[test]
fn unavailable_capture_fails_the_case_like_a_publication_error() {
    let root = tempfile::tempdir().unwrap();
    let mut cases = [case("1q1a", "video.mp4", None, true)];
    let why = "spool file /tmp/rtload-spool-1-0/spool.bin: write failed: disk full";
    cases[0].publication_error = Some(why.into());
    let summary = finalize(root.path(), &mut cases);
    let msg = format!("Artifact publication failed: captured output unavailable: {why}");
    assert_eq!(summary.artifact_errors, [format!("1q1a/video.mp4: {msg}")]);
    assert!(!summary.artifacts_complete);
    assert_eq!(cases[0].publication_error.as_deref(), Some(msg.as_str()));
    let r = &cases[0].result;
    assert!(!r.success);
    assert_eq!(
        r.official_eval_ineligible_reasons,
        ["artifact_write_failed"]
    );
    let names: Vec<_> = fs::read_dir(cases[0].layout.dir(root.path()))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, [FAILED_JSON]);
}

/// A report hands cases over one at a time: each is staged and its capture (PCM, events)
/// released before the next one exists; the staged bundles land when the batch closes
/// (here at the end, before the batch files), and the batch files are the ones
/// [`finalize`] writes for the same cases.
#[test]
fn the_finalizer_publishes_each_case_as_it_is_handed_over() {
    let root = tempfile::tempdir().unwrap();
    let mut finalizer = Finalizer::new(root.path());
    let mut first = case("1q1a", "a.mp4", Some(eligible()), true);
    finalizer.publish(&mut first);
    assert!(first.context.is_none(), "its capture is released");
    let dir = first.layout.dir(root.path());
    // Staged beside its case dir, not yet in place.
    assert!(!dir.join(layout::DONE).exists());
    assert!(!root.path().join(BATCH_SUMMARY_JSON).exists());
    let mut second = case("1qna", "b.mp4", None, false);
    finalizer.publish(&mut second);
    let mut cases = [first, second];
    let summary = finalizer.finish(&mut cases, false);
    assert!(summary.artifacts_complete, "{:?}", summary.artifact_errors);
    assert_eq!((summary.counts.success, summary.counts.failed), (1, 1));
    assert!(dir.join(layout::OUTPUT_WAV).is_file());
    assert!(dir.join(WAV_TRANSCRIPT_JSON).is_file());
    assert!(dir.join(layout::DONE).is_file());
    let staged = entries_ending(dir.parent().unwrap(), ".stage");
    assert_eq!(staged, 0, "no staging dir is left");

    let again = tempfile::tempdir().unwrap();
    let mut whole = [
        case("1q1a", "a.mp4", Some(eligible()), true),
        case("1qna", "b.mp4", None, false),
    ];
    assert_eq!(finalize(again.path(), &mut whole), summary);
    for name in [BATCH_SUMMARY_JSON, OFFICIAL_EVAL_MANIFEST] {
        let (one_by_one, at_once) = (read(root.path(), name), read(again.path(), name));
        let root_s = root.path().display().to_string();
        let again_s = again.path().display().to_string();
        assert_eq!(
            one_by_one.replace(&root_s, "ROOT"),
            at_once.replace(&again_s, "ROOT")
        );
    }
}

/// How many entries of `dir` have names ending in `suffix`.
fn entries_ending(dir: &std::path::Path, suffix: &str) -> usize {
    (fs::read_dir(dir).unwrap())
        .filter(|e| (e.as_ref().unwrap().file_name().to_string_lossy()).ends_with(suffix))
        .count()
}
