//! Per-case artifact files (spec §4.2, §4.3): the file-system edge.
//!
//! A batch file is written to a unique temp file in its destination directory
//! (`.<name>.<random>.tmp`), synced and renamed over the target; the temp is always
//! removed, and an existing destination survives a failed replacement. The
//! WAV is materialized from sparse spans in 1 MiB blocks (bounded memory).
//! Batch orchestration lives in [`super::Finalizer`].
//!
//! Kill safety: a case bundle is built complete in a staging dir beside the case
//! dir (`.<case>.<pid>-<unique>.stage`, its files written under their own names: the
//! dir is private until it lands) and swapped in with one atomic exchange
//! ([`StagedBundle::land`]), so an earlier complete bundle disappears only when its
//! replacement is there; a SIGKILL before the swap leaves the earlier bundle and a
//! staging dir the next run sweeps. The batch files stay until this run's replace
//! them, so they never list a bundle that is not complete. Durability (power loss, not
//! SIGKILL: the kernel keeps what a killed process wrote): a staged bundle's files are
//! not synced one by one; the finalizer lands its staged bundles a batch at a time
//! after one `syncfs` of the output filesystem ([`sync_filesystem`]), so every bundle
//! that lands has its bytes on disk before the swap that puts it in place, as when
//! each file was synced before its rename. Temp and staging names carry the writer's
//! pid: the next run removes those of dead owners ([`super::stale`]).

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::capture::{ArtifactContext, OUTPUT_SAMPLE_RATE, PcmSpan};
use super::layout::{
    CaseLayout, DONE, EVENTS_JSON, FAILED_JSON, OUTPUT_WAV, RESULT_JSON, WAV_TRANSCRIPT_JSON,
};
use super::{ArtifactError, CaseResult, REASON_ARTIFACT_WRITE_FAILED};

/// WAV data is materialized in blocks of this many bytes (bounded memory).
const WAV_BLOCK_BYTES: u64 = 1 << 20;
/// Largest WAV data chunk a RIFF header can describe (with the 36 header bytes).
const MAX_WAV_DATA_BYTES: u64 = u32::MAX as u64 - 36;

/// Writes `dir/name` atomically: `write` fills a unique temp file
/// `dir/.<name>.<random>.tmp`, which is synced and renamed over the target.
/// On any error the temp is removed and an existing target is left untouched.
#[cfg(test)]
pub fn atomic_write<F>(dir: &Path, name: &str, write: F) -> Result<(), ArtifactError>
where
    F: FnOnce(&mut BufWriter<File>) -> io::Result<()>,
{
    stage(dir, name, write)?.commit()
}

/// A file written whole and synced under a temp name beside its destination, not yet in
/// place: [`Staged::commit`] renames it over the destination; dropping it uncommitted
/// removes it. Staging several files first and committing them together replaces a set
/// (the batch summary and the manifest) only when every one of them could be written.
#[derive(Debug)]
pub struct Staged {
    tmp: PathBuf,
    dest: PathBuf,
    done: bool,
}

impl Staged {
    /// Put the file in place.
    pub fn commit(mut self) -> Result<(), ArtifactError> {
        self.done = true;
        fs::rename(&self.tmp, &self.dest).map_err(|source| {
            // Best effort: the original error is the one worth reporting.
            let _ = fs::remove_file(&self.tmp);
            ArtifactError::Write {
                path: self.dest.clone(),
                source,
            }
        })
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.done {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Write `dir/name`'s content under a temp name beside it (see [`Staged`]).
pub fn stage<F>(dir: &Path, name: &str, write: F) -> Result<Staged, ArtifactError>
where
    F: FnOnce(&mut BufWriter<File>) -> io::Result<()>,
{
    let dest = dir.join(name);
    let (tmp, file) = create_temp(dir, name).map_err(|source| ArtifactError::Write {
        path: dest.clone(),
        source,
    })?;
    let staged = Staged {
        tmp,
        dest,
        done: false,
    };
    fill_and_sync(file, write).map_err(|source| ArtifactError::Write {
        path: staged.dest.clone(),
        source,
    })?;
    Ok(staged)
}

/// A bundle written whole in its staging dir beside its case dir, not yet in place:
/// [`StagedBundle::land`] swaps it in; dropping it unlanded removes the staging dir.
#[derive(Debug)]
pub struct StagedBundle {
    stage: PathBuf,
    dest: PathBuf,
    landed: bool,
}

impl StagedBundle {
    /// A fresh, empty staging dir for a bundle that will replace `dest`.
    fn beside(dest: PathBuf) -> Result<Self, ArtifactError> {
        Ok(Self {
            stage: staging_dir(&dest)?,
            dest,
            landed: false,
        })
    }

    /// The case dir it replaces.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Puts the bundle at its case dir in one step (see [`swap_in`]). Sync first
    /// ([`sync_filesystem`]) for its bytes to be on disk before it is in place.
    pub fn land(mut self) -> Result<(), ArtifactError> {
        swap_in(&self.stage, &self.dest)?;
        self.landed = true;
        Ok(())
    }
}

impl Drop for StagedBundle {
    fn drop(&mut self) {
        if !self.landed {
            let _ = fs::remove_dir_all(&self.stage);
        }
    }
}

/// Stages one successful case's bundle (§4.2): `output.wav`, `wav_transcript.json`,
/// `events.json`, `result.json` and `.done` last, in a fresh staging dir. Sets
/// `output_dir` and applies `ctx` to `result` first. On failure nothing is left
/// behind, the result is marked failed, ineligible and `artifact_write_failed`, and the
/// error is returned.
pub fn stage_case(
    root: &Path,
    layout: &CaseLayout,
    ctx: &ArtifactContext,
    result: &mut CaseResult,
    (annotation, scene_type): (&Path, &str),
) -> Result<StagedBundle, ArtifactError> {
    let dir = absolute(&layout.dir(root));
    result.output_dir = path_string(&dir);
    ctx.apply_to(result);
    let res = StagedBundle::beside(dir).and_then(|bundle| {
        write_success_bundle(&bundle.stage, layout, ctx, result, annotation, scene_type)?;
        Ok(bundle)
    });
    if res.is_err() {
        result.mark_failed(REASON_ARTIFACT_WRITE_FAILED);
    }
    res
}

/// Publishes one successful case at once: [`stage_case`], one sync, then the swap.
#[cfg(test)]
pub fn publish_case(
    root: &Path,
    layout: &CaseLayout,
    ctx: &ArtifactContext,
    result: &mut CaseResult,
    annotation: &Path,
    scene_type: &str,
) -> Result<(), ArtifactError> {
    let bundle = stage_case(root, layout, ctx, result, (annotation, scene_type))?;
    let res = sync_filesystem(&bundle.stage).and_then(|()| bundle.land());
    if res.is_err() {
        result.mark_failed(REASON_ARTIFACT_WRITE_FAILED);
    }
    res
}

/// Publishes the failure bundle of one case: replaces the case dir with one
/// holding only `.failed.json` (result + `annotation` + `scene_type`) with
/// `success=false` and `eligible_for_official_eval=false`.
#[cfg(test)]
pub fn publish_failure(
    root: &Path,
    layout: &CaseLayout,
    result: &mut CaseResult,
    annotation: &Path,
    scene_type: &str,
) -> Result<(), ArtifactError> {
    publish_failure_then(root, layout, result, (annotation, scene_type), &mut || {
        Ok(())
    })
}

/// [`publish_failure`], with `before_swap` run once the failure bundle is staged whole
/// and synced, just before it replaces what is there (e.g. to retire batch files that
/// list a complete bundle at that path): nothing is retired for a bundle that never lands.
pub fn publish_failure_then(
    root: &Path,
    layout: &CaseLayout,
    result: &mut CaseResult,
    case: (&Path, &str),
    before_swap: &mut dyn FnMut() -> Result<(), ArtifactError>,
) -> Result<(), ArtifactError> {
    let bundle = stage_failure(root, layout, result, case)?;
    sync_filesystem(&bundle.stage)?;
    before_swap()?;
    bundle.land()
}

/// Stages the failure bundle of one case (see [`publish_failure`]), not yet in place.
pub fn stage_failure(
    root: &Path,
    layout: &CaseLayout,
    result: &mut CaseResult,
    (annotation, scene_type): (&Path, &str),
) -> Result<StagedBundle, ArtifactError> {
    let dir = absolute(&layout.dir(root));
    result.output_dir = path_string(&dir);
    result.success = false;
    result.eligible_for_official_eval = false;
    let bundle = StagedBundle::beside(dir)?;
    let body = Bundle::new(result, annotation, layout, scene_type);
    write_new_json(&bundle.stage, FAILED_JSON, &body)?;
    Ok(bundle)
}

/// One `syncfs` of the filesystem holding `path`: every file written there so far is
/// on disk when it returns (staged bundles are synced this way, a batch at a time,
/// instead of one `fsync` per file).
pub fn sync_filesystem(path: &Path) -> Result<(), ArtifactError> {
    let err = |source: io::Error| ArtifactError::Write {
        path: path.to_owned(),
        source,
    };
    let dir = File::open(path).map_err(err)?;
    rustix::fs::syncfs(&dir).map_err(|e| err(e.into()))
}

/// When a run starts (§4.3): the batch files go first (manifest, then summary),
/// so they never list a bundle being replaced; leftovers of dead runs are swept.
/// Case bundles stay until their replacement is swapped in.
pub fn clear_outputs(root: &Path, layouts: &[CaseLayout]) -> Result<(), ArtifactError> {
    // The previous batch summary and manifest stay until this run's replace them (or
    // until a bundle they list is about to become a failure bundle: see
    // `Finalizer::publish`), so a run that cannot publish leaves them as they were.
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

/// When a run that was not interrupted has published its batch files: remove the
/// earlier bundles of the selected cases it did not run (the reference clears every
/// selected case dir before its measured phase). `.done` goes first, so no instant shows
/// a partly removed bundle as complete; the batch files never list these cases. An
/// interrupted run keeps them: it did not decide to leave them out.
pub fn remove_unrun(root: &Path, layouts: &[CaseLayout]) -> Result<(), ArtifactError> {
    for layout in layouts {
        let dir = layout.dir(root);
        if !dir.is_dir() {
            continue;
        }
        remove_files(&dir, &[DONE])?;
        fs::remove_dir_all(&dir).map_err(|source| ArtifactError::Remove {
            path: dir.clone(),
            source,
        })?;
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
    if ctx.horizon_bytes > MAX_WAV_DATA_BYTES {
        let source = io::Error::new(io::ErrorKind::InvalidInput, "WAV horizon exceeds 4 GiB");
        return Err(ArtifactError::Write {
            path: dir.join(OUTPUT_WAV),
            source,
        });
    }
    write_new(dir, OUTPUT_WAV, |w| {
        write_wav(w, ctx.horizon_bytes, &ctx.spans)
    })?;
    write_new_json(dir, WAV_TRANSCRIPT_JSON, &ctx.transcript)?;
    write_new(dir, EVENTS_JSON, |w| {
        super::events_json::write(w, &ctx.events)
    })?;
    write_new_json(dir, RESULT_JSON, result)?;
    write_new_json(
        dir,
        DONE,
        &Bundle::new(result, annotation, layout, scene_type),
    )
}

/// Writes `dir/name` (which must not exist) in place, unsynced: for a file of a
/// staging dir, which nothing reads before the dir lands.
fn write_new<F>(dir: &Path, name: &str, write: F) -> Result<(), ArtifactError>
where
    F: FnOnce(&mut BufWriter<File>) -> io::Result<()>,
{
    let path = dir.join(name);
    let fill = || {
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        let mut w = BufWriter::new(file);
        write(&mut w)?;
        w.into_inner().map_err(io::IntoInnerError::into_error)?;
        Ok(())
    };
    fill().map_err(|source| ArtifactError::Write {
        path: path.clone(),
        source,
    })
}

/// [`write_new`] of [`json_text`]'s text.
fn write_new_json<T: Serialize + ?Sized>(
    dir: &Path,
    name: &str,
    value: &T,
) -> Result<(), ArtifactError> {
    write_new(dir, name, |w| json_text(w, value))
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

/// Pretty JSON as [`json_text`] writes it, staged (see [`Staged`]).
pub(super) fn stage_json<T: Serialize + ?Sized>(
    dir: &Path,
    name: &str,
    value: &T,
) -> Result<Staged, ArtifactError> {
    stage(dir, name, |w| json_text(w, value))
}

/// Pretty JSON (2-space indent, non-ASCII kept) plus a trailing newline; URLs redacted.
fn json_text<T: Serialize + ?Sized>(w: &mut BufWriter<File>, value: &T) -> io::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    w.write_all(crate::util::target::redact_text(&text).as_bytes())?;
    w.write_all(b"\n")
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

/// `create_dir_all`, its error naming the directory.
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

/// `path` made absolute (as given when that fails).
pub(super) fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

/// `path` as a (lossy) string, as the result files record paths.
pub(super) fn path_string(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
#[path = "publish_tests.rs"]
pub(super) mod tests;
