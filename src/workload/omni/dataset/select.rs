//! Deterministic case selection (spec §3.4, §7 item 5): validate the subset list, read
//! the subsets in the order given, reject duplicate videos, shuffle with the
//! CPython-compatible shuffle, and keep the first `num_prompts` cases (a total across
//! subsets, 0 = all).

use std::collections::HashSet;
use std::path::Path;

use super::layout::{data_dir, subset_cases};
use super::{Case, DatasetError, Subset};

/// The outcome of [`discover`]: the selected cases in benchmark order, and warnings the
/// caller should log (they are returned as data, never printed here).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// Selected cases, in the order they are to be run.
    pub cases: Vec<Case>,
    /// Human-readable warnings, e.g. when more prompts were asked for than exist.
    pub warnings: Vec<String>,
}

/// Discover and deterministically select OmniInteract cases under `root` (the data dir or
/// its parent, see [`data_dir`]).
///
/// * `subsets`: non-empty, no duplicates; their order is the concatenation order.
/// * Every requested subset must have at least one case; no two cases may resolve to the
///   same video.
/// * Unless `disable_shuffle`, the whole list is shuffled exactly like Python's
///   `random.Random(seed).shuffle`, so a seed picks the same cases as the reference.
/// * `num_prompts`: 0 selects all; more than available selects all and adds a warning;
///   otherwise the first `num_prompts` cases (total, not per subset).
pub fn discover(
    root: &Path,
    subsets: &[Subset],
    num_prompts: usize,
    seed: u64,
    disable_shuffle: bool,
) -> Result<Selection, DatasetError> {
    if subsets.is_empty() {
        return Err(DatasetError::NoSubsets);
    }
    let mut seen = HashSet::new();
    if !subsets.iter().all(|s| seen.insert(*s)) {
        return Err(DatasetError::DuplicateSubsets);
    }
    let resolved_root =
        std::fs::canonicalize(root).map_err(|_| DatasetError::DataNotFound(root.to_path_buf()))?;
    let data = data_dir(&resolved_root)?;
    let mut cases = Vec::new();
    for &subset in subsets {
        let found = subset_cases(&data.join(subset.name()), subset)?;
        if found.is_empty() {
            return Err(DatasetError::EmptySubset(subset));
        }
        cases.extend(found);
    }
    let mut videos = HashSet::with_capacity(cases.len());
    if !cases.iter().all(|c| videos.insert(c.video_path.clone())) {
        return Err(DatasetError::DuplicateVideos);
    }
    if !disable_shuffle {
        super::shuffle::python_shuffle(&mut cases, seed);
    }
    let mut warnings = Vec::new();
    if num_prompts > cases.len() {
        warnings.push(format!(
            "Requested {num_prompts} OmniInteract prompts but only {} are available; using all cases",
            cases.len()
        ));
    } else if num_prompts > 0 {
        cases.truncate(num_prompts);
    }
    Ok(Selection { cases, warnings })
}

#[cfg(test)]
#[path = "select_tests.rs"]
mod tests;
