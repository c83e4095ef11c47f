//! OmniInteract on-disk layouts (spec §3.1 data-dir discovery, §3.3 subset layouts):
//! finding the data directory and reading one subset's cases, with every path confined to
//! its subset directory. Frames cases (see the module docs of [`crate::workload::omni::dataset`]) are
//! accepted wherever a video file is.

use std::fs;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::extract::extract_archive;
use super::{Case, DatasetError, Subset};

/// File name of a frames case's audio track.
pub const FRAMES_AUDIO: &str = "audio.wav";
/// Directory-name suffix that marks a frames case in the `1qna` layout.
pub const FRAMES_SUFFIX: &str = ".frames";
/// Name of the mapping file of the `1q1a` and `1q1a_math` subsets.
pub const MAPPING_FILE: &str = "video_json_map.json";

/// File name of frame `k` of a frames case: `frame_0000.jpg`, `frame_0001.jpg`, …
pub fn frame_file_name(k: usize) -> String {
    format!("frame_{k:04}.jpg")
}

/// True when `path` is a frames case: a directory holding [`FRAMES_AUDIO`].
pub fn is_frames_case(path: &Path) -> bool {
    path.is_dir() && path.join(FRAMES_AUDIO).is_file()
}

/// Turn a local `--dataset-path` into a data directory (spec §3.1, local sources only).
///
/// * A leading `~` is expanded from `$HOME`; the path is then made absolute.
/// * A **file** is an archive, extracted into the sibling `.<stem>.vllm_omni_extracted`
///   (`data.tar.gz` → `.data.tar.vllm_omni_extracted`).
/// * A **directory** is used through [`data_dir`]; when it has none, its `data.tar.gz`,
///   else `data.tar`, is extracted into `<dir>/.vllm_omni_extracted`.
/// * Anything else fails: rtload never downloads a dataset, and the error says how to
///   make one (`rtload dataset synth DIR`).
pub fn resolve_data_root(dataset_path: &Path) -> Result<PathBuf, DatasetError> {
    resolve_with(dataset_path, |a, t| extract_archive(a, t).map(Some))
        .map(|root| root.unwrap_or_default())
}

/// [`resolve_data_root`] without writing anything (for `rtload check`): an archive
/// whose tree is already published resolves to it; otherwise its members are validated
/// and `None` says the cases are known only after extraction.
pub fn resolve_data_root_dry(dataset_path: &Path) -> Result<Option<PathBuf>, DatasetError> {
    resolve_with(dataset_path, super::extract::published_or_validate)
}

fn resolve_with(
    dataset_path: &Path,
    extract: impl Fn(&Path, &Path) -> Result<Option<PathBuf>, DatasetError>,
) -> Result<Option<PathBuf>, DatasetError> {
    let expanded = expand_home(dataset_path);
    let local = match fs::canonicalize(&expanded) {
        Ok(path) => path,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(DatasetError::NotLocal(expanded));
        }
        Err(e) => {
            return Err(DatasetError::Io {
                path: expanded,
                source: e,
            });
        }
    };
    if local.is_file() {
        let stem = local.file_stem().unwrap_or_default().to_string_lossy();
        let target = local.with_file_name(format!(".{stem}.vllm_omni_extracted"));
        return extract(&local, &target);
    }
    if !local.is_dir() {
        return Err(DatasetError::DataNotFound(local));
    }
    match data_dir(&local) {
        Ok(data) => Ok(Some(data)),
        Err(not_found) => {
            for name in ["data.tar.gz", "data.tar"] {
                let archive = local.join(name);
                if archive.is_file() {
                    return extract(&archive, &local.join(".vllm_omni_extracted"));
                }
            }
            Err(not_found)
        }
    }
}

fn expand_home(path: &Path) -> PathBuf {
    let mut parts = path.components();
    if parts.next() == Some(Component::Normal("~".as_ref()))
        && let Some(home) = std::env::var_os("HOME")
    {
        return PathBuf::from(home).join(parts.as_path());
    }
    path.to_path_buf()
}

/// The data directory under `root`: the first of `root`, `root/data` that holds at least
/// one subset directory, else `OmniInteract data not found under <root>`.
pub fn data_dir(root: &Path) -> Result<PathBuf, DatasetError> {
    for candidate in [root.to_path_buf(), root.join("data")] {
        if Subset::ALL
            .iter()
            .any(|s| candidate.join(s.name()).is_dir())
        {
            return Ok(candidate);
        }
    }
    Err(DatasetError::DataNotFound(root.to_path_buf()))
}

/// Read every case of one subset from its directory `subset_root` (`<data>/<subset>`),
/// in layout order: mapping order for `1q1a`/`1q1a_math`, sorted path order for `1qna`.
pub fn subset_cases(subset_root: &Path, subset: Subset) -> Result<Vec<Case>, DatasetError> {
    match subset {
        Subset::Q1a | Subset::Q1aMath => mapping_cases(subset_root, subset),
        Subset::Qna => qna_cases(subset_root),
    }
}

fn mapping_cases(root: &Path, subset: Subset) -> Result<Vec<Case>, DatasetError> {
    let mapping_path = root.join(MAPPING_FILE);
    if !mapping_path.is_file() {
        return Err(DatasetError::MissingMapping(mapping_path));
    }
    let text = fs::read_to_string(&mapping_path).map_err(DatasetError::io(&mapping_path))?;
    let mapping: Value = serde_json::from_str(&text)
        .map_err(|_| DatasetError::InvalidMapping(mapping_path.clone()))?;
    let Some(entries) = mapping.get("entries").and_then(Value::as_array) else {
        return Err(DatasetError::InvalidMapping(mapping_path));
    };
    let root_resolved = canonical(root)?;
    let mut cases = Vec::with_capacity(entries.len());
    for row in entries {
        let Some(row) = row.as_object() else {
            return Err(DatasetError::InvalidMappingRow(mapping_path));
        };
        let video_rel = py_str(row.get("video"));
        let annotation_rel = py_str(row.get("annotation"));
        let video = confined(root, &root_resolved, &video_rel, "video")?;
        let annotation = confined(root, &root_resolved, &annotation_rel, "annotation")?;
        if !(video.is_file() || is_frames_case(&video)) || !annotation.is_file() {
            return Err(DatasetError::MappingMissingFiles {
                video: video_rel,
                annotation: annotation_rel,
            });
        }
        let scene = py_str(row.get("scene_type"));
        let scene_type = if scene.is_empty() {
            "multi_turn".to_owned()
        } else {
            scene
        };
        cases.push(Case {
            subset,
            video_rel,
            video_path: video,
            annotation_path: annotation,
            scene_type: scene_type.to_lowercase(),
        });
    }
    Ok(cases)
}

fn qna_cases(root: &Path) -> Result<Vec<Case>, DatasetError> {
    let videos = root.join("videos_bench");
    let annotations = root.join("annotations");
    if !videos.is_dir() || !annotations.is_dir() {
        return Err(DatasetError::InvalidQnaLayout(root.to_path_buf()));
    }
    let (videos_resolved, annotations_resolved) = (canonical(&videos)?, canonical(&annotations)?);
    let mut found = Vec::new();
    walk_videos(&videos, PathBuf::new(), &mut found)?;
    found.sort();
    let mut cases = Vec::with_capacity(found.len());
    for relative in found {
        let rel_text = posix(&relative);
        let video = videos.join(&relative);
        let video_resolved = canonical(&video)?;
        if !video_resolved.starts_with(&videos_resolved) {
            return Err(DatasetError::UnsafeCasePath {
                field: "video",
                path: format!("videos_bench/{rel_text}"),
            });
        }
        let annotation = resolve_lenient(&annotations.join(relative.with_extension("json")));
        if !annotation.starts_with(&annotations_resolved) {
            return Err(DatasetError::UnsafeCasePath {
                field: "annotation",
                path: rel_text,
            });
        }
        if !annotation.is_file() {
            return Err(DatasetError::MissingAnnotation { annotation, video });
        }
        cases.push(Case {
            subset: Subset::Qna,
            video_rel: format!("videos_bench/{rel_text}"),
            video_path: video_resolved,
            annotation_path: annotation,
            scene_type: "1qna".to_owned(),
        });
    }
    Ok(cases)
}

/// Collect videos below `dir` (paths relative to the walk's start): `*.mp4` files and
/// `*.frames` frames-case directories. Symlinked directories are not descended into.
fn walk_videos(dir: &Path, rel: PathBuf, out: &mut Vec<PathBuf>) -> Result<(), DatasetError> {
    for entry in fs::read_dir(dir).map_err(DatasetError::io(dir))? {
        let entry = entry.map_err(DatasetError::io(dir))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type().map_err(DatasetError::io(&path))?;
        let child = rel.join(entry.file_name());
        let frames = name.ends_with(FRAMES_SUFFIX) && is_frames_case(&path);
        if frames || (name.ends_with(".mp4") && path.is_file()) {
            out.push(child);
        } else if kind.is_dir() {
            walk_videos(&path, child, out)?;
        }
    }
    Ok(())
}

/// Python `str(row.get(key) or "")`: falsy JSON values become "", strings stay as they
/// are, anything else is its JSON text.
fn py_str(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) | Some(Value::Bool(false)) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) if a.is_empty() => String::new(),
        Some(Value::Object(o)) if o.is_empty() => String::new(),
        Some(Value::Number(n)) if n.as_f64() == Some(0.0) => String::new(),
        Some(other) => other.to_string(),
    }
}

/// Resolve a mapping path inside `root`: non-empty, relative, no `..`, and inside the
/// subset directory after resolving symlinks.
fn confined(
    root: &Path,
    root_resolved: &Path,
    text: &str,
    field: &'static str,
) -> Result<PathBuf, DatasetError> {
    let rel = Path::new(text);
    let lexically_safe = !text.is_empty()
        && rel
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    let unsafe_path = || DatasetError::UnsafeCasePath {
        field,
        path: text.to_owned(),
    };
    if !lexically_safe {
        return Err(unsafe_path());
    }
    let destination = resolve_lenient(&root.join(rel));
    if !destination.starts_with(root_resolved) {
        return Err(unsafe_path());
    }
    Ok(destination)
}

fn canonical(path: &Path) -> Result<PathBuf, DatasetError> {
    fs::canonicalize(path).map_err(DatasetError::io(path))
}

/// Like Python's `Path.resolve(strict=False)` for paths without `..`: resolve symlinks of
/// the longest existing prefix and append the rest unchanged.
pub(crate) fn resolve_lenient(path: &Path) -> PathBuf {
    let mut tail = Vec::new();
    let mut current = path;
    loop {
        if let Ok(resolved) = fs::canonicalize(current) {
            return tail.iter().rev().fold(resolved, |acc, part| acc.join(part));
        }
        match (current.parent(), current.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name.to_owned());
                current = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

fn posix(rel: &Path) -> String {
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

#[cfg(test)]
#[path = "layout_tests.rs"]
pub(crate) mod tests;
