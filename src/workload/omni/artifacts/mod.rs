//! OmniInteract artifacts (spec §4): case result type, the finalizer and
//! batch files; per-case bundles and the output-root lock live in submodules.
//!
//! The measured request only [`capture()`]s an [`ArtifactContext`] (pure, no
//! files). After the benchmark clock is frozen, one [`Finalizer`] holding the
//! [`OutputLock`] stages every case ([`publish::stage_case`] /
//! [`publish::stage_failure`], WAV materialized one case at a time), lands them a
//! batch at a time after one sync, then writes `batch_summary.json` and
//! `official_eval_manifest.jsonl`.
//! Failures become data (`artifact_errors`), never panics; serving metrics
//! are never revoked. [`clear_outputs`] runs before the measured phase.
//!
//! * [`layout`]: case directory naming and file names (pure).
//! * [`capture`](mod@capture): sparse clipped PCM spans, transcript chunks, eligibility (pure).
//! * [`publish`]: atomic file writes, success and failure bundles, clearing (IO edge).
//! * [`queue`]: staged bundles landed a batch at a time after one sync (IO edge).
//! * [`lock`]: the run-wide `flock` on `<root>/.omniinteract.lock` (IO edge).

pub mod capture;
mod events_json;
pub mod layout;
pub mod lock;
pub mod publish;
mod queue;
pub mod space;
pub mod stale;

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use layout::{BATCH_FILES, BATCH_SUMMARY_JSON, OFFICIAL_EVAL_MANIFEST, WAV_TRANSCRIPT_JSON};
use publish::{absolute, bundle_scene_type, create_dir, path_string, remove_files};

pub use capture::ArtifactContext;
pub use layout::CaseLayout;

/// Ineligibility reason: audio fell beyond `ceil(duration)` seconds.
pub const REASON_AUDIO_CLIPPED: &str = "audio_clipped";
/// Ineligibility reason: a `response.done` reported status `cancelled`.
pub const REASON_CANCELLED_RESPONSE: &str = "cancelled_response";
/// Ineligibility reason: a barge-in (`output_audio_buffer.cleared`) dropped audio.
pub const REASON_CLEARED_RESPONSE: &str = "cleared_response";
/// Ineligibility reason: the case itself failed.
#[cfg(test)]
pub const REASON_CASE_FAILED: &str = "case_failed";
/// Ineligibility reason: the case's artifacts could not be published.
pub const REASON_ARTIFACT_WRITE_FAILED: &str = "artifact_write_failed";

/// One case's result: `result.json`, the `.done` / `.failed.json` body and an
/// entry of `batch_summary.json` `results` (§4.4). Field order is the file order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    /// Dataset subset.
    pub subset: String,
    /// Video path as reported to evaluators (also the manifest `video`).
    pub video: String,
    /// Absolute case directory (set by [`publish::stage_case`] / [`publish::stage_failure`]).
    pub output_dir: String,
    /// Whether the case (and, after finalization, its artifacts) succeeded.
    pub success: bool,
    /// Failure message(s), joined with `\n`.
    pub error: Option<String>,
    /// Server session id, when one was created.
    pub session_id: Option<String>,
    /// Session latency in seconds (elapsed so far on failure).
    pub latency_s: f64,
    /// Number of `input_audio_buffer.append` events sent.
    pub input_audio_chunks: u64,
    /// Number of video frames sent.
    pub input_video_frames: u64,
    /// Mean pacing lag of the appends, seconds.
    pub pacing_mean_lag_s: f64,
    /// Maximum pacing lag of the appends, seconds.
    pub pacing_max_lag_s: f64,
    /// Number of created responses.
    pub responses: u64,
    /// All ingested output PCM bytes.
    pub audio_bytes: u64,
    /// PCM bytes dropped beyond the WAV horizon.
    pub audio_clipped_bytes: u64,
    /// Transcript text (the `wav_transcript.json` `text`).
    pub transcript: String,
    /// Successful and free of ineligibility reasons.
    pub eligible_for_official_eval: bool,
    /// Why the case is not in the official manifest, in the order found.
    pub official_eval_ineligible_reasons: Vec<String>,
    /// Non-fatal artifact warnings (e.g. assumed audio format).
    pub artifact_warnings: Vec<String>,
    /// Sum of stage-0 output token counts.
    pub output_tokens: u64,
    /// Per-response metric rows (§5.2).
    pub duplex_request_metrics: Vec<serde_json::Value>,
    /// Session metric summary (§5.2).
    pub duplex_session_metrics: serde_json::Value,
}

impl CaseResult {
    /// An empty (not yet successful) result for one case.
    pub fn new(subset: &str, video: &str) -> CaseResult {
        CaseResult {
            subset: subset.to_owned(),
            video: video.to_owned(),
            output_dir: String::new(),
            success: false,
            error: None,
            session_id: None,
            latency_s: 0.0,
            input_audio_chunks: 0,
            input_video_frames: 0,
            pacing_mean_lag_s: 0.0,
            pacing_max_lag_s: 0.0,
            responses: 0,
            audio_bytes: 0,
            audio_clipped_bytes: 0,
            transcript: String::new(),
            eligible_for_official_eval: false,
            official_eval_ineligible_reasons: Vec::new(),
            artifact_warnings: Vec::new(),
            output_tokens: 0,
            duplex_request_metrics: Vec::new(),
            duplex_session_metrics: serde_json::Value::Object(serde_json::Map::new()),
        }
    }

    /// Adds an ineligibility reason once (keeps first-seen order).
    pub fn add_ineligible_reason(&mut self, reason: &str) {
        if !self
            .official_eval_ineligible_reasons
            .iter()
            .any(|r| r == reason)
        {
            self.official_eval_ineligible_reasons
                .push(reason.to_owned());
        }
    }

    /// Appends `message` to `error`, joined with `\n` after any existing error.
    pub fn append_error(&mut self, message: &str) {
        self.error = Some(join_error(self.error.as_deref(), message));
    }

    /// Marks the case failed and ineligible with `reason`.
    pub fn mark_failed(&mut self, reason: &str) {
        self.success = false;
        self.eligible_for_official_eval = false;
        self.add_ineligible_reason(reason);
    }
}

/// `existing + "\n" + message`, or just `message` when there is no (or an
/// empty) existing error. Use it for the request output error too (§4.7).
pub fn join_error(existing: Option<&str>, message: &str) -> String {
    match existing {
        Some(e) if !e.is_empty() => format!("{e}\n{message}"),
        _ => message.to_owned(),
    }
}

/// Errors at the artifact file-system seam. The `Display` text is the `<err>`
/// of `"Artifact publication failed: <err>"`.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    /// Creating a directory failed.
    #[error("cannot create directory {path}: {source}")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Writing (temp file, content or rename) failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The destination file.
        path: PathBuf,
        /// The OS (or encoder) error.
        source: std::io::Error,
    },
    /// Removing a stale or partial file failed.
    #[error("cannot remove {path}: {source}")]
    Remove {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Opening or locking the output-root lock file failed.
    #[error("cannot lock {path}: {source}")]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Another run held the output lock longer than `--lock-timeout`.
    #[error(
        "output lock {} is held by {holder}; gave up after {waited_s:.1} s (--lock-timeout); wait for that run to finish, or use another output directory",
        path.display()
    )]
    LockTimeout {
        /// The lock file.
        path: PathBuf,
        /// Who holds it, as the holder recorded it.
        holder: String,
        /// How long this run waited.
        waited_s: f64,
    },
    /// A successful case reached the finalizer without a captured context.
    #[error("artifact context was not captured for {0}")]
    MissingContext(String),
    /// The case's captured output could not be read back (the spool's message, which
    /// names its file).
    #[error("captured output unavailable: {0}")]
    Capture(String),
}

/// One case handed to [`finalize`].
#[derive(Debug, Clone)]
pub struct FinalizeCase {
    /// Where the case's files go.
    pub layout: CaseLayout,
    /// The case result; updated in place (output dir, failures).
    pub result: CaseResult,
    /// Captured context of a successful case; dropped once published.
    pub context: Option<ArtifactContext>,
    /// Annotation (ground truth) file of the case.
    pub annotation: PathBuf,
    /// Dataset scene type (`multi_turn`, `1qna`, ...).
    pub scene_type: String,
    /// Set by [`finalize`] to `"Artifact publication failed: <err>"` when a
    /// successful case could not be published: the caller appends it to the
    /// request output error (serving metrics are never revoked). A caller may set it
    /// beforehand, with no context, to why a successful case's capture is unavailable
    /// (a spool read-back error); [`finalize`] then reports that as the failure.
    pub publication_error: Option<String>,
}

/// Case counts of `batch_summary.json` (§4.6).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct BatchCounts {
    /// Cases finalized.
    pub total: u64,
    /// Successful cases (after publication).
    pub success: u64,
    /// Failed cases.
    pub failed: u64,
    /// Successful and eligible cases (= manifest lines).
    pub eligible_for_official_eval: u64,
    /// Successful cases kept out of the manifest.
    pub successful_but_ineligible: u64,
    /// Sum of `audio_clipped_bytes`.
    pub audio_clipped_bytes: u64,
}

/// What [`finalize`] returns: the compact summary stored under `omniinteract`
/// in the saved result (§4.7), plus data for the caller's log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FinalizeSummary {
    /// The batch counts (serialized inline).
    #[serde(flatten)]
    pub counts: BatchCounts,
    /// True iff no artifact error was collected.
    pub artifacts_complete: bool,
    /// Collected artifact errors (serialized only when non-empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub artifact_errors: Vec<String>,
    /// `"<n> successful OmniInteract cases were excluded from official
    /// evaluation: reason=count, …"` when any were (for the log; not serialized).
    #[serde(skip)]
    pub exclusion_message: Option<String>,
}

/// The finalizer (§4.7): publishes every case in order (success bundle, or
/// failure bundle for failed cases and for cases whose publication failed),
/// then `batch_summary.json` and `official_eval_manifest.jsonl`. Collects
/// errors instead of failing; partial batch files are removed best effort.
#[cfg(test)]
pub fn finalize(root: &Path, cases: &mut [FinalizeCase]) -> FinalizeSummary {
    finalize_run(root, cases, false)
}

/// [`finalize`] for a run a signal interrupted: `batch_summary.json` says
/// `"interrupted": true` (its cases are the ones that ran to an outcome).
#[cfg(test)]
pub fn finalize_run(root: &Path, cases: &mut [FinalizeCase], interrupted: bool) -> FinalizeSummary {
    let mut finalizer = Finalizer::new(root);
    for case in cases.iter_mut() {
        finalizer.publish(case);
    }
    finalizer.finish(cases, interrupted)
}

/// [`finalize_run`] one case at a time: each case is staged as it is handed over and
/// its captured context (the case's output PCM and events) released, so a report holds
/// one case's capture at a time however many sessions ran. Staged bundles land a batch
/// at a time after one sync ([`queue`]), the last batch in [`Finalizer::finish`],
/// before the batch files.
#[derive(Debug)]
pub struct Finalizer {
    root: PathBuf,
    errors: Vec<String>,
    queue: queue::Queue,
    handed: usize,
    unlanded: Vec<queue::Unlanded>,
}

impl Finalizer {
    /// A finalizer publishing under `root`.
    pub fn new(root: &Path) -> Self {
        Self {
            root: absolute(root),
            errors: Vec::new(),
            queue: queue::Queue::default(),
            handed: 0,
            unlanded: Vec::new(),
        }
    }

    /// Stages `case` (its bundle, or its failure bundle) and drops its context;
    /// `case.result` is updated in place. Call in case order; hand the same cases, in
    /// the same order, to [`Finalizer::finish`].
    pub fn publish(&mut self, case: &mut FinalizeCase) {
        let index = self.handed;
        self.handed += 1;
        let Some((bundle, failure, new)) = stage_one(&self.root, case, &mut self.errors) else {
            return;
        };
        let weight = new.max(space::bundle_bytes_on_disk(bundle.dest()));
        if self.queue.push(index, bundle, failure, weight) {
            self.land();
        }
    }

    fn land(&mut self) {
        let unlanded = self.queue.land_all(&self.root);
        self.unlanded.extend(unlanded);
    }

    /// Lands what is still staged, then writes the batch files for `cases`, the cases
    /// handed over, in order (a bundle that could not land fails its case here).
    pub fn finish(mut self, cases: &mut [FinalizeCase], interrupted: bool) -> FinalizeSummary {
        self.land();
        for u in std::mem::take(&mut self.unlanded) {
            self.settle(cases, u);
        }
        let (root, mut errors) = (self.root, self.errors);
        let counts = count(cases);
        // A failure leaves the previous batch files in place (nothing partial lands).
        if let Err(e) = write_batch(&root, counts, cases, interrupted) {
            errors.push(format!("Batch artifact publication failed: {e}"));
        }
        FinalizeSummary {
            counts,
            artifacts_complete: errors.is_empty(),
            artifact_errors: errors,
            exclusion_message: exclusion_message(cases),
        }
    }

    /// A bundle that did not land: a success bundle fails its case, which then gets its
    /// failure bundle at once (unless a later run of the same case has landed since).
    fn settle(&mut self, cases: &mut [FinalizeCase], u: queue::Unlanded) {
        let Some(case) = cases.get(u.index) else {
            return;
        };
        let label = case.layout.label();
        if u.failure {
            let why = format!(
                "{label}: failure artifact publication failed: {}",
                u.message
            );
            self.errors.push(why);
            return;
        }
        let dir = case.layout.dir(&self.root);
        let superseded = (cases[u.index + 1..].iter()).any(|c| c.layout.dir(&self.root) == dir);
        let case = &mut cases[u.index];
        let message = format!("Artifact publication failed: {}", u.message);
        case.result.mark_failed(REASON_ARTIFACT_WRITE_FAILED);
        case.result.append_error(&message);
        self.errors.push(format!("{label}: {message}"));
        case.publication_error = Some(message);
        if !superseded {
            publish_failure_now(&self.root, case, &mut self.errors);
        }
    }
}

/// Writes `doc` as `duplex_metrics.json` under `root` (pretty, 2-space indent, as the
/// reference's `json.dumps(..., indent=2)`), whole or not at all.
pub fn write_duplex_metrics(root: &Path, doc: &serde_json::Value) -> Result<(), ArtifactError> {
    let root = absolute(root);
    create_dir(&root)?;
    publish::stage_json(&root, layout::DUPLEX_METRICS_JSON, doc)?.commit()
}

/// Stages one case inside [`finalize`], recording errors as §4.7 says: its success
/// bundle, or (failed, or its bundle could not be staged) its failure bundle; with
/// whether it is a failure bundle and the bytes it is expected to take. `None` when not
/// even that could be staged.
fn stage_one(
    root: &Path,
    case: &mut FinalizeCase,
    errors: &mut Vec<String>,
) -> Option<(publish::StagedBundle, bool, u64)> {
    let label = case.layout.label();
    // Taking the context frees its PCM once this case is staged.
    let context = case.context.take();
    let bundle_of = (case.annotation.as_path(), case.scene_type.as_str());
    if case.result.success {
        let res = match &context {
            Some(ctx) => publish::stage_case(root, &case.layout, ctx, &mut case.result, bundle_of),
            None => Err(match case.publication_error.take() {
                Some(why) => ArtifactError::Capture(why),
                None => ArtifactError::MissingContext(label.clone()),
            }),
        };
        let e = match res {
            Ok(bundle) => {
                let new = context
                    .as_ref()
                    .map_or(0, |c| space::staged_bytes(c.horizon_bytes));
                return Some((bundle, false, new));
            }
            Err(e) => e,
        };
        let message = format!("Artifact publication failed: {e}");
        case.result.mark_failed(REASON_ARTIFACT_WRITE_FAILED);
        case.result.append_error(&message);
        errors.push(format!("{label}: {message}"));
        case.publication_error = Some(message);
    }
    match publish::stage_failure(root, &case.layout, &mut case.result, bundle_of) {
        Ok(bundle) => Some((bundle, true, space::JSON_ALLOWANCE)),
        Err(e) => {
            errors.push(format!("{label}: failure artifact publication failed: {e}"));
            None
        }
    }
}

/// Publishes `case`'s failure bundle on its own (synced, then swapped in).
fn publish_failure_now(root: &Path, case: &mut FinalizeCase, errors: &mut Vec<String>) {
    // The previous manifest may list this case's complete bundle: once the failure
    // bundle is staged, the batch files go before it replaces that bundle, so no
    // manifest ever lists an incomplete one (and a bundle that never lands retires
    // nothing: a full disk leaves the previous run's files as they were).
    let listed = case.layout.dir(root).join(layout::DONE).is_file();
    let res = publish::publish_failure_then(
        root,
        &case.layout,
        &mut case.result,
        (&case.annotation, &case.scene_type),
        &mut || match listed {
            true => remove_files(root, &BATCH_FILES),
            false => Ok(()),
        },
    );
    if let Err(e) = res {
        let label = case.layout.label();
        errors.push(format!("{label}: failure artifact publication failed: {e}"));
    }
}

/// `batch_summary.json` body.
#[derive(Serialize)]
struct BatchSummary<'a> {
    #[serde(flatten)]
    counts: BatchCounts,
    results: Vec<&'a CaseResult>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    interrupted: bool,
}

/// One `official_eval_manifest.jsonl` line.
#[derive(Serialize)]
struct ManifestEntry<'a> {
    sample_id: String,
    video: &'a str,
    gt_json: String,
    model_json: String,
    scene_type: &'a str,
}

fn write_batch(
    root: &Path,
    counts: BatchCounts,
    cases: &[FinalizeCase],
    interrupted: bool,
) -> Result<(), ArtifactError> {
    create_dir(root)?;
    let results = cases.iter().map(|c| &c.result).collect();
    let summary = BatchSummary {
        counts,
        results,
        interrupted,
    };
    let summary = publish::stage_json(root, BATCH_SUMMARY_JSON, &summary)?;
    let mut lines = Vec::new();
    for case in cases
        .iter()
        .filter(|c| c.result.success && c.result.eligible_for_official_eval)
    {
        let entry = ManifestEntry {
            sample_id: case.layout.sample_id(),
            video: &case.result.video,
            gt_json: path_string(&absolute(&case.annotation)),
            model_json: path_string(&case.layout.dir(root).join(WAV_TRANSCRIPT_JSON)),
            scene_type: bundle_scene_type(&case.layout.subset, &case.scene_type),
        };
        let mut ser = serde_json::Serializer::with_formatter(&mut lines, PySeparators);
        entry
            .serialize(&mut ser)
            .map_err(|e| ArtifactError::Write {
                path: root.join(OFFICIAL_EVAL_MANIFEST),
                source: e.into(),
            })?;
        lines.push(b'\n');
    }
    // Both written whole before either replaces the previous run's: the pair changes
    // together or not at all (a full disk leaves the previous pair as it was).
    let manifest = publish::stage(root, OFFICIAL_EVAL_MANIFEST, |w| w.write_all(&lines))?;
    summary.commit()?;
    manifest.commit()
}

fn count(cases: &[FinalizeCase]) -> BatchCounts {
    let mut c = BatchCounts {
        total: cases.len() as u64,
        ..BatchCounts::default()
    };
    for r in cases.iter().map(|c| &c.result) {
        c.audio_clipped_bytes += r.audio_clipped_bytes;
        match (r.success, r.eligible_for_official_eval) {
            (true, true) => c.eligible_for_official_eval += 1,
            (true, false) => c.successful_but_ineligible += 1,
            (false, _) => c.failed += 1,
        }
    }
    c.success = c.total - c.failed;
    c
}

/// `"<n> successful OmniInteract cases were excluded from official
/// evaluation: reason=count, …"` (reasons sorted by name), or `None`.
fn exclusion_message(cases: &[FinalizeCase]) -> Option<String> {
    let excluded: Vec<&CaseResult> = cases
        .iter()
        .map(|c| &c.result)
        .filter(|r| r.success && !r.eligible_for_official_eval)
        .collect();
    if excluded.is_empty() {
        return None;
    }
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for reason in excluded
        .iter()
        .flat_map(|r| &r.official_eval_ineligible_reasons)
    {
        *reasons.entry(reason).or_default() += 1;
    }
    let parts: Vec<String> = reasons.iter().map(|(k, v)| format!("{k}={v}")).collect();
    Some(format!(
        "{} successful OmniInteract cases were excluded from official evaluation: {}",
        excluded.len(),
        parts.join(", ")
    ))
}

/// Python `json.dumps` separators (`", "` and `": "`) on one line.
struct PySeparators;

impl serde_json::ser::Formatter for PySeparators {
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

#[cfg(test)]
mod tests;
