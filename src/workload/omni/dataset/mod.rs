//! OmniInteract datasets (spec §3): locating a local data root, safe archive extraction,
//! the three subset layouts, deterministic case selection, and a synthetic-dataset writer.
//!
//! rtload works offline: it never downloads a dataset. A `--dataset-path` that does not
//! exist locally is an error that points at `rtload dataset synth DIR`.
//!
//! # Flow
//! 1. [`resolve_data_root`] turns a dataset path (an extracted tree, a directory holding
//!    `data.tar.gz`/`data.tar`, or an archive file) into a data directory, extracting
//!    archives safely and atomically ([`extract`]).
//! 2. [`discover`] reads the requested subsets ([`layout`]) in the order given, concatenates
//!    them, shuffles with the CPython-compatible shuffle and keeps `num_prompts` cases.
//!
//! # Frames cases
//! Besides real video files (`*.mp4`), a case's video may be a **frames case**: a directory
//! holding `audio.wav` (the case's audio track, any WAV the media preparation accepts) and
//! `frame_0000.jpg`, `frame_0001.jpg`, … (one JPEG per second of audio, frame `k` standing
//! for the picture at `k + 0.5` s, the same mid-second sampling as the ffmpeg path). A
//! frames case lets tests and demos run without ffmpeg. In the mapping layouts the
//! mapping's `video` string names the directory (for example `videos/case_000.frames`); in
//! the `1qna` layout any directory under `videos_bench/` whose name ends in `.frames` and
//! that holds `audio.wav` is a video, and its annotation is the same relative path with the
//! `.frames` suffix replaced by `.json`. [`is_frames_case`] is the predicate; [`synth()`]
//! writes datasets made of frames cases.

pub mod extract;
pub mod layout;
pub mod select;
pub mod shuffle;
pub mod synth;

use std::fmt;
use std::path::PathBuf;

pub use layout::{FRAMES_AUDIO, frame_file_name, is_frames_case, resolve_data_root};
pub use select::discover;
pub use synth::{SynthOptions, synth};

/// One OmniInteract subset. The CLI default order is [`Subset::ALL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Subset {
    /// `1q1a`: one question, one answer (mapping layout).
    Q1a,
    /// `1q1a_math`: one math question, one answer (mapping layout).
    Q1aMath,
    /// `1qna`: one question, many answers (directory layout).
    Qna,
}

impl Subset {
    /// All subsets in the reference CLI's default (concatenation) order.
    pub const ALL: [Subset; 3] = [Subset::Q1a, Subset::Q1aMath, Subset::Qna];

    /// The subset's directory name: `1q1a`, `1q1a_math` or `1qna`.
    pub fn name(self) -> &'static str {
        match self {
            Subset::Q1a => "1q1a",
            Subset::Q1aMath => "1q1a_math",
            Subset::Qna => "1qna",
        }
    }

    /// Parse one subset name (exact, case-sensitive like the reference).
    pub fn from_name(name: &str) -> Option<Subset> {
        Subset::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Parse a list of subset names as the CLI gives them, in order.
    ///
    /// Unknown names fail with "Unsupported OmniInteract subsets: ['x', 'y']" (sorted,
    /// deduplicated, Python-list style); duplicates and an empty list are rejected later
    /// by `discover`, which sees the parsed list.
    pub fn parse_list<S: AsRef<str>>(names: &[S]) -> Result<Vec<Subset>, DatasetError> {
        let mut unknown: Vec<&str> = names
            .iter()
            .map(AsRef::as_ref)
            .filter(|n| Subset::from_name(n).is_none())
            .collect();
        if !unknown.is_empty() {
            unknown.sort_unstable();
            unknown.dedup();
            let quoted: Vec<String> = unknown.iter().map(|n| py_repr(n)).collect();
            return Err(DatasetError::UnsupportedSubsets(format!(
                "[{}]",
                quoted.join(", ")
            )));
        }
        Ok(names
            .iter()
            .filter_map(|n| Subset::from_name(n.as_ref()))
            .collect())
    }
}

impl fmt::Display for Subset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One benchmark case: a video (file or frames-case directory) and its annotation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// The subset the case came from.
    pub subset: Subset,
    /// The video path relative to the subset directory, `/`-separated: the mapping's
    /// `video` string, or `videos_bench/<relative path>` for `1qna`.
    pub video_rel: String,
    /// Absolute, symlink-resolved video path (a file, or a frames-case directory).
    pub video_path: PathBuf,
    /// Absolute, symlink-resolved annotation path (JSON, not interpreted here).
    pub annotation_path: PathBuf,
    /// Lower-cased scene type: the mapping's `scene_type` (default `multi_turn`), or
    /// `1qna` for the `1qna` subset.
    pub scene_type: String,
}

/// Everything that can go wrong locating, extracting, reading, selecting or synthesising
/// an OmniInteract dataset. Where the spec gives a message, the text is the spec's.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// A dataset path that does not exist locally (rtload never downloads).
    #[error(
        "OmniInteract dataset path does not exist: {0}; rtload does not download datasets. \
         Pass a local OmniInteract directory or archive (data.tar.gz / data.tar), or create \
         a small synthetic dataset with `rtload dataset synth DIR`"
    )]
    NotLocal(PathBuf),
    /// No dataset path was given. The reference would download the official archive;
    /// rtload never downloads, so the caller reports this instead.
    #[error(
        "no OmniInteract dataset path given; rtload does not download datasets. Pass a local \
         OmniInteract directory or archive (data.tar.gz / data.tar), or create a small \
         synthetic dataset with `rtload dataset synth DIR`"
    )]
    NoDatasetPath,
    /// Neither the root nor `root/data` holds a subset directory.
    #[error("OmniInteract data not found under {0}")]
    DataNotFound(PathBuf),
    /// An archive member that is absolute, has `..`, escapes, or is not a file/directory.
    #[error("Unsafe path in OmniInteract archive: {}", py_repr(.0))]
    UnsafeArchiveMember(String),
    /// Two archive members write the same file.
    #[error(
        "Duplicate member in OmniInteract archive: {} (the archive is damaged or was \
         tampered with; re-create it)",
        py_repr(.0)
    )]
    DuplicateArchiveMember(String),
    /// The tar stream ends without its end-of-archive blocks (cut short).
    #[error(
        "OmniInteract archive {0} is truncated: the tar stream ends without its \
         end-of-archive marker (re-download or re-create the archive)"
    )]
    TruncatedArchive(PathBuf),
    /// Extraction would exceed a configured bound (total bytes, members, compression ratio).
    #[error(
        "OmniInteract archive {path} exceeds the extraction limit: {what} (limit {limit}); \
         if the archive is trusted, raise it with {env}=N"
    )]
    ArchiveLimit {
        /// The archive file.
        path: PathBuf,
        /// What went over, with the value reached.
        what: String,
        /// The limit in force.
        limit: u64,
        /// The environment variable that sets it.
        env: &'static str,
    },
    /// A signal (SIGINT/SIGTERM) arrived while the archive was extracted: extraction
    /// stopped and its staging directory was removed.
    #[error(
        "OmniInteract archive extraction interrupted by a signal; its staging directory was \
         removed and nothing was run"
    )]
    Interrupted,
    /// The extraction target directory is a symlink.
    #[error("Refusing to extract through symlink: {0}")]
    SymlinkTarget(PathBuf),
    /// The published (fingerprinted) extraction directory is a symlink.
    #[error("Refusing to use symlinked extraction: {0}")]
    SymlinkPublished(PathBuf),
    /// The archive could not be read as a (gzip-compressed or plain) tar.
    #[error("Could not read OmniInteract archive {path}: {source}")]
    Archive {
        /// The archive file.
        path: PathBuf,
        /// The underlying read/decode error.
        source: std::io::Error,
    },
    /// A subset's `video_json_map.json` is missing.
    #[error("Missing OmniInteract mapping: {0}")]
    MissingMapping(PathBuf),
    /// The mapping is not JSON or its `entries` is not a list.
    #[error("Invalid OmniInteract mapping: {0}")]
    InvalidMapping(PathBuf),
    /// A mapping row is not an object.
    #[error("Invalid OmniInteract mapping row in {0}")]
    InvalidMappingRow(PathBuf),
    /// A mapping path (`field` is `video` or `annotation`) is empty, absolute, has `..`,
    /// or resolves outside the subset directory; also a `1qna` path that escapes.
    #[error("Unsafe OmniInteract {field} path: {}", py_repr(.path))]
    UnsafeCasePath {
        /// `video` or `annotation`.
        field: &'static str,
        /// The offending path text.
        path: String,
    },
    /// A mapping row names a video or annotation that does not exist.
    #[error(
        "OmniInteract mapping references missing files: {}, {}",
        py_repr(.video),
        py_repr(.annotation)
    )]
    MappingMissingFiles {
        /// The row's `video` string.
        video: String,
        /// The row's `annotation` string.
        annotation: String,
    },
    /// `1qna` lacks `videos_bench/` or `annotations/`.
    #[error("Invalid OmniInteract 1qna layout under {0}")]
    InvalidQnaLayout(PathBuf),
    /// A `1qna` video has no annotation at the mirrored path.
    #[error("Missing OmniInteract annotation: {annotation} (for video {video})")]
    MissingAnnotation {
        /// The expected annotation path.
        annotation: PathBuf,
        /// The video it belongs to.
        video: PathBuf,
    },
    /// Unknown subset names, already formatted as a Python-style list.
    #[error("Unsupported OmniInteract subsets: {0}")]
    UnsupportedSubsets(String),
    /// The subset list is empty.
    #[error("At least one OmniInteract subset is required")]
    NoSubsets,
    /// The subset list repeats a subset.
    #[error("OmniInteract subsets must not contain duplicates")]
    DuplicateSubsets,
    /// A requested subset has no cases.
    #[error("No OmniInteract sessions found for requested subset '{0}'")]
    EmptySubset(Subset),
    /// Two cases resolve to the same video.
    #[error("OmniInteract dataset contains duplicate video paths")]
    DuplicateVideos,
    /// `synth` refuses to write over an existing dataset.
    #[error("refusing to overwrite existing dataset directory {0}")]
    SynthExists(PathBuf),
    /// `synth` options out of range.
    #[error("invalid synth options: {0}")]
    SynthOptions(String),
    /// Writing a WAV file failed.
    #[error("could not write WAV {path}: {message}")]
    Wav {
        /// The WAV file.
        path: PathBuf,
        /// The encoder's error text.
        message: String,
    },
    /// Any other filesystem error, with the path it concerned.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

impl DatasetError {
    /// Wrap an IO error with the path it concerned.
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> DatasetError {
        let path = path.into();
        move |source| DatasetError::Io { path, source }
    }
}

/// Quote a string the way Python's `repr` does for the common cases (single quotes,
/// double quotes when the text holds a single quote and no double quote).
pub(crate) fn py_repr(text: &str) -> String {
    let escaped: String = text
        .chars()
        .flat_map(|c| match c {
            '\\' => "\\\\".chars().collect::<Vec<_>>(),
            '\n' => "\\n".chars().collect(),
            '\t' => "\\t".chars().collect(),
            '\r' => "\\r".chars().collect(),
            c => vec![c],
        })
        .collect();
    if escaped.contains('\'') && !escaped.contains('"') {
        format!("\"{escaped}\"")
    } else {
        format!("'{}'", escaped.replace('\'', "\\'"))
    }
}

#[cfg(test)]
mod tests;
