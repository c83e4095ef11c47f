//! Per-case artifact files (spec §4.2, §4.3): the file-system edge.
//!
//! Every file is written to a unique temp file in its destination directory
//! (`.<name>.<random>.tmp`) and renamed over the target; the temp is always
//! removed, and an existing destination survives a failed replacement. The
//! WAV is materialized from sparse spans in 1 MiB blocks (bounded memory).
//! Batch orchestration lives in [`super::finalize`].
//!
//! Kill safety: a case bundle is built complete in a staging dir beside the case
//! dir (`.<case>.<pid>-<unique>.stage`) and swapped in with one atomic exchange,
//! so an earlier complete bundle disappears only when its replacement is there.
//! The batch files are removed first when a run starts, so they never list a
//! bundle that is not complete. Temp and staging names carry the writer's pid:
//! the next run removes those of dead owners ([`super::stale`]).

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::capture::{ArtifactContext, OUTPUT_SAMPLE_RATE, PcmSpan};
use super::layout::{
    BATCH_SUMMARY_JSON, CASE_FILES, CaseLayout, DONE, EVENTS_JSON, FAILED_JSON,
    OFFICIAL_EVAL_MANIFEST, OUTPUT_WAV, RESULT_JSON, WAV_TRANSCRIPT_JSON,
};
use super::{ArtifactError, CaseResult, REASON_ARTIFACT_WRITE_FAILED};

/// WAV data is materialized in blocks of this many bytes (bounded memory).
const WAV_BLOCK_BYTES: u64 = 1 << 20;
/// Largest WAV data chunk a RIFF header can describe (with the 36 header bytes).
const MAX_WAV_DATA_BYTES: u64 = u32::MAX as u64 - 36;

/// Writes `dir/name` atomically: `write` fills a unique temp file
/// `dir/.<name>.<random>.tmp`, which is synced and renamed over the target.
/// On any error the temp is removed and an existing target is left untouched.
pub fn atomic_write<F>(dir: &Path, name: &str, write: F) -> Result<(), ArtifactError>
where
    F: FnOnce(&mut BufWriter<File>) -> io::Result<()>,
{
    let dest = dir.join(name);
    let (tmp, file) = create_temp(dir, name).map_err(|source| ArtifactError::Write {
        path: dest.clone(),
        source,
    })?;
    let res = fill_and_sync(file, write).and_then(|()| fs::rename(&tmp, &dest));
    if res.is_err() {
        // Best effort: the original error is the one worth reporting.
        let _ = fs::remove_file(&tmp);
    }
    res.map_err(|source| ArtifactError::Write { path: dest, source })
}

/// Publishes one successful case (§4.2): clears the case dir, then writes
/// `output.wav`, `wav_transcript.json`, `events.json`, `result.json` and
/// `.done` last. Sets `output_dir` and applies `ctx` to `result` first. On
/// failure the five success files are deleted, the result is marked failed,
/// ineligible and `artifact_write_failed`, and the error is returned.
pub fn publish_case(
    root: &Path,
    layout: &CaseLayout,
    ctx: &ArtifactContext,
    result: &mut CaseResult,
    annotation: &Path,
    scene_type: &str,
) -> Result<(), ArtifactError> {
    let dir = absolute(&layout.dir(root));
    result.output_dir = path_string(&dir);
    ctx.apply_to(result);
    let stage = staging_dir(&dir)?;
    let res = write_success_bundle(&stage, layout, ctx, result, annotation, scene_type)
        .and_then(|()| swap_in(&stage, &dir));
    if res.is_err() {
        let _ = fs::remove_dir_all(&stage);
        result.mark_failed(REASON_ARTIFACT_WRITE_FAILED);
    }
    res
}

/// Publishes the failure bundle of one case: replaces the case dir with one
/// holding only `.failed.json` (result + `annotation` + `scene_type`) with
/// `success=false` and `eligible_for_official_eval=false`.
pub fn publish_failure(
    root: &Path,
    layout: &CaseLayout,
    result: &mut CaseResult,
    annotation: &Path,
    scene_type: &str,
) -> Result<(), ArtifactError> {
    let dir = absolute(&layout.dir(root));
    result.output_dir = path_string(&dir);
    result.success = false;
    result.eligible_for_official_eval = false;
    let stage = staging_dir(&dir)?;
    let bundle = Bundle::new(result, annotation, layout, scene_type);
    let res = write_json(&stage, FAILED_JSON, &bundle).and_then(|()| swap_in(&stage, &dir));
    if res.is_err() {
        let _ = fs::remove_dir_all(&stage);
    }
    res
}

/// When a run starts (§4.3): the batch files go first (manifest, then summary),
/// so they never list a bundle being replaced; leftovers of dead runs are swept.
/// Case bundles stay until their replacement is swapped in.
pub fn clear_outputs(root: &Path, layouts: &[CaseLayout]) -> Result<(), ArtifactError> {
    remove_files(root, &[OFFICIAL_EVAL_MANIFEST, BATCH_SUMMARY_JSON])?;
    super::stale::sweep(root);
    for layout in layouts {
        let dir = layout.dir(root);
        if let Some(parent) = dir.parent() {
            super::stale::sweep(parent);
        }
        super::stale::sweep(&dir);
    }
    Ok(())
}

/// A fresh, empty staging dir beside `dest` (same filesystem, so it can be swapped in).
fn staging_dir(dest: &Path) -> Result<PathBuf, ArtifactError> {
    let parent = dest.parent().unwrap_or(Path::new("."));
    create_dir(parent)?;
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let path = parent.join(format!(
        ".{name}.{}-{:016x}.stage",
        std::process::id(),
        rand::random::<u64>()
    ));
    fs::create_dir(&path).map_err(|source| ArtifactError::CreateDir {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// Put the complete bundle `stage` at `dest` in one step: a plain rename when `dest` is
/// absent, else an atomic exchange (the old bundle then sits at `stage` and is removed).
/// Without exchange support the old bundle is moved aside just before the new one lands.
fn swap_in(stage: &Path, dest: &Path) -> Result<(), ArtifactError> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    let err = |source: io::Error| ArtifactError::Write {
        path: dest.to_owned(),
        source,
    };
    if !dest.exists() {
        return fs::rename(stage, dest).map_err(err);
    }
    if renameat_with(CWD, stage, CWD, dest, RenameFlags::EXCHANGE).is_ok() {
        let _ = fs::remove_dir_all(stage);
        return Ok(());
    }
    let aside = stage.with_extension("old.stage");
    fs::rename(dest, &aside).map_err(err)?;
    if let Err(e) = fs::rename(stage, dest) {
        let _ = fs::rename(&aside, dest);
        return Err(err(e));
    }
    let _ = fs::remove_dir_all(&aside);
    Ok(())
}

/// `.done` / `.failed.json` body: the result plus annotation and scene type.
#[derive(Serialize)]
struct Bundle<'a> {
    #[serde(flatten)]
    result: &'a CaseResult,
    annotation: String,
    scene_type: &'a str,
}

impl<'a> Bundle<'a> {
    fn new(
        result: &'a CaseResult,
        annotation: &Path,
        layout: &CaseLayout,
        scene_type: &'a str,
    ) -> Self {
        let annotation = path_string(&absolute(annotation));
        Bundle {
            result,
            annotation,
            scene_type: bundle_scene_type(&layout.subset, scene_type),
        }
    }
}

/// `"1QnA"` for the `1qna` subset, else the dataset scene type.
pub(super) fn bundle_scene_type<'a>(subset: &str, scene_type: &'a str) -> &'a str {
    if subset == "1qna" { "1QnA" } else { scene_type }
}

fn write_success_bundle(
    dir: &Path,
    layout: &CaseLayout,
    ctx: &ArtifactContext,
    result: &CaseResult,
    annotation: &Path,
    scene_type: &str,
) -> Result<(), ArtifactError> {
    create_dir(dir)?;
    remove_files(dir, &CASE_FILES)?;
    if ctx.horizon_bytes > MAX_WAV_DATA_BYTES {
        let source = io::Error::new(io::ErrorKind::InvalidInput, "WAV horizon exceeds 4 GiB");
        return Err(ArtifactError::Write {
            path: dir.join(OUTPUT_WAV),
            source,
        });
    }
    atomic_write(dir, OUTPUT_WAV, |w| {
        write_wav(w, ctx.horizon_bytes, &ctx.spans)
    })?;
    write_json(dir, WAV_TRANSCRIPT_JSON, &ctx.transcript)?;
    write_json(dir, EVENTS_JSON, &ctx.events)?;
    write_json(dir, RESULT_JSON, result)?;
    write_json(
        dir,
        DONE,
        &Bundle::new(result, annotation, layout, scene_type),
    )
}

/// Mono 16-bit 24 kHz WAV of `horizon_bytes` data bytes, silence plus spans.
fn write_wav(w: &mut BufWriter<File>, horizon_bytes: u64, spans: &[PcmSpan]) -> io::Result<()> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: OUTPUT_SAMPLE_RATE,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut wav = hound::WavWriter::new(w, spec).map_err(hound_io)?;
    let mut block = vec![0u8; WAV_BLOCK_BYTES.min(horizon_bytes) as usize];
    let mut start = 0u64;
    while start < horizon_bytes {
        let end = (start + WAV_BLOCK_BYTES).min(horizon_bytes);
        let buf = &mut block[..(end - start) as usize];
        buf.fill(0);
        paint(buf, start, spans);
        // Blocks are at most 1 MiB, so the sample count fits in u32.
        let mut samples = wav.get_i16_writer((buf.len() / 2) as u32);
        for pair in buf.chunks_exact(2) {
            samples.write_sample(i16::from_le_bytes([pair[0], pair[1]]));
        }
        samples.flush().map_err(hound_io)?;
        start = end;
    }
    wav.finalize().map_err(hound_io)
}

/// Copies the parts of `spans` that fall in `[block_start, block_start + buf.len())`.
fn paint(buf: &mut [u8], block_start: u64, spans: &[PcmSpan]) {
    let block_end = block_start + buf.len() as u64;
    for span in spans {
        let (s, e) = (
            span.offset,
            span.offset.saturating_add(span.pcm.len() as u64),
        );
        if e <= block_start || s >= block_end {
            continue;
        }
        let (from, to) = (s.max(block_start), e.min(block_end));
        buf[(from - block_start) as usize..(to - block_start) as usize]
            .copy_from_slice(&span.pcm[(from - s) as usize..(to - s) as usize]);
    }
}

fn hound_io(e: hound::Error) -> io::Error {
    match e {
        hound::Error::IoError(e) => e,
        other => io::Error::other(other),
    }
}

/// Pretty JSON (2-space indent, non-ASCII kept) plus a trailing newline; URLs redacted.
pub(super) fn write_json<T: Serialize + ?Sized>(
    dir: &Path,
    name: &str,
    value: &T,
) -> Result<(), ArtifactError> {
    atomic_write(dir, name, |w| {
        let text = serde_json::to_string_pretty(value)?;
        w.write_all(crate::util::target::redact_text(&text).as_bytes())?;
        w.write_all(b"\n")
    })
}

fn create_temp(dir: &Path, name: &str) -> io::Result<(PathBuf, File)> {
    for _ in 0..16 {
        let path = dir.join(format!(
            ".{name}.{}-{:016x}.tmp",
            std::process::id(),
            rand::random::<u64>()
        ));
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no unique temporary file name",
    ))
}

fn fill_and_sync<F>(file: File, write: F) -> io::Result<()>
where
    F: FnOnce(&mut BufWriter<File>) -> io::Result<()>,
{
    let mut w = BufWriter::new(file);
    write(&mut w)?;
    let file = w.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.sync_all()
}

pub(super) fn create_dir(dir: &Path) -> Result<(), ArtifactError> {
    fs::create_dir_all(dir).map_err(|source| ArtifactError::CreateDir {
        path: dir.to_owned(),
        source,
    })
}

/// Removes `dir/<name>` for each name; a missing file (or dir) is not an error.
pub(super) fn remove_files(dir: &Path, names: &[&str]) -> Result<(), ArtifactError> {
    for name in names {
        let path = dir.join(name);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(ArtifactError::Remove { path, source: e });
            }
            _ => {}
        }
    }
    Ok(())
}

pub(super) fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

pub(super) fn path_string(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::workload::omni::artifacts::capture::{
        CaptureInput, ResponseRecord, Segment, capture, sanitize_event,
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
        let done: Value =
            serde_json::from_str(&fs::read_to_string(dir.join(DONE)).unwrap()).unwrap();
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

    /// Issue 11 item 2: starting a run removes the batch files (so they never list a
    /// bundle being replaced) and dead runs' leftovers, but keeps every complete bundle
    /// until its replacement is swapped in.
    #[test]
    fn clear_outputs_removes_batch_files_and_dead_leftovers_but_keeps_bundles() {
        let root = tempfile::tempdir().unwrap();
        let a = CaseLayout::new("1q1a", "video.mp4");
        let missing = CaseLayout::new("1qna", "videos_bench/x.mp4");
        let dir = a.dir(root.path());
        fs::create_dir_all(&dir).unwrap();
        for name in CASE_FILES {
            fs::write(dir.join(name), b"x").unwrap();
        }
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
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
        assert!(
            [OFFICIAL_EVAL_MANIFEST, BATCH_SUMMARY_JSON]
                .iter()
                .all(|n| !root.path().join(n).exists())
        );
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
}
