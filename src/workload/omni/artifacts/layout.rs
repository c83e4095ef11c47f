//! Case directory naming and artifact file names (spec §4.1, §4.2, §4.6).
//!
//! Pure: turns `(subset, video_rel)` into the case directory name
//! `<stem>--<hash8>` and names every file the artifact writer touches. No IO.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// `output.wav`: the playback-timeline WAV of one case.
pub const OUTPUT_WAV: &str = "output.wav";
/// `wav_transcript.json`: transcript chunks aligned with `output.wav`.
pub const WAV_TRANSCRIPT_JSON: &str = "wav_transcript.json";
/// `events.json`: every collected event, audio payloads replaced by their length.
pub const EVENTS_JSON: &str = "events.json";
/// `result.json`: the case result object.
pub const RESULT_JSON: &str = "result.json";
/// `.done`: completion marker, written last (result + annotation + scene type).
pub const DONE: &str = ".done";
/// `.failed.json`: failure bundle (result + annotation + scene type).
pub const FAILED_JSON: &str = ".failed.json";
/// Every file a case dir can hold (success and failure bundles).
#[cfg(test)]
pub const CASE_FILES: [&str; 6] = [
    DONE,
    OUTPUT_WAV,
    WAV_TRANSCRIPT_JSON,
    EVENTS_JSON,
    RESULT_JSON,
    FAILED_JSON,
];
/// Batch summary written under the output root.
pub const BATCH_SUMMARY_JSON: &str = "batch_summary.json";
/// Official evaluation manifest written under the output root.
pub const OFFICIAL_EVAL_MANIFEST: &str = "official_eval_manifest.jsonl";
/// vLLM-Omni 0.30.0's `DUPLEX_METRICS_FILENAME`: the run's per-response rows, session
/// summaries and `duplex_stream_*` summaries, under the output root.
pub const DUPLEX_METRICS_JSON: &str = "duplex_metrics.json";
/// Batch files, in write order.
pub const BATCH_FILES: [&str; 2] = [BATCH_SUMMARY_JSON, OFFICIAL_EVAL_MANIFEST];
/// Run-wide lock file under the output root (§4.7).
pub const LOCK_FILE: &str = ".omniinteract.lock";

/// Where one case's artifacts live, relative to an output root.
///
/// Root-independent so it can be computed during sample loading and carried
/// through the measured phase; [`CaseLayout::dir`] joins it with the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseLayout {
    /// Dataset subset (`1q1a`, `1q1a_math`, `1qna`).
    pub subset: String,
    /// The video path as written in the dataset (relative to the subset dir).
    pub video_rel: String,
    /// `<stem>--<hash8>`.
    pub dir_name: String,
}

impl CaseLayout {
    /// Names the case `(subset, video_rel)` (§4.1).
    pub fn new(subset: &str, video_rel: &str) -> CaseLayout {
        CaseLayout {
            subset: subset.to_owned(),
            video_rel: video_rel.to_owned(),
            dir_name: case_dir_name(subset, video_rel),
        }
    }

    /// `<root>/<subset>/<stem>--<hash8>`.
    pub fn dir(&self, root: &Path) -> PathBuf {
        root.join(&self.subset).join(&self.dir_name)
    }

    /// `<subset>__<case dir name>`: the manifest `sample_id`.
    pub fn sample_id(&self) -> String {
        format!("{}__{}", self.subset, self.dir_name)
    }

    /// `<subset>/<video_rel>`: the prefix of per-case artifact error messages.
    pub fn label(&self) -> String {
        format!("{}/{}", self.subset, self.video_rel)
    }
}

/// Case directory name `<stem>--<hash8>` (§4.1).
///
/// `stem` is `video_rel` with backslashes turned into `/`, normalized like a
/// POSIX path (empty and `.` components dropped), its final extension removed
/// (Python `pathlib` rules: a leading dot is not an extension), and `/`
/// replaced by `__`. `hash8` is the first 8 hex digits of SHA-256 of the raw
/// `"<subset>/<video_rel>"`.
pub fn case_dir_name(subset: &str, video_rel: &str) -> String {
    let posix = video_rel.replace('\\', "/");
    let mut parts: Vec<&str> = posix
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if let Some(last) = parts.last_mut() {
        *last = strip_suffix(last);
    }
    let stem = parts.join("__");
    let digest = Sha256::digest(format!("{subset}/{video_rel}").as_bytes());
    let hash8: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{stem}--{hash8}")
}

/// Removes the final suffix of a file name the way `PurePath.with_suffix("")` does.
fn strip_suffix(name: &str) -> &str {
    match name.rfind('.') {
        Some(i) if i > 0 && i < name.len() - 1 => &name[..i],
        _ => name,
    }
}

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;
