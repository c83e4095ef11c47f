//! Leftovers of dead runs: temp files (`.<name>.<pid>-<unique>.tmp`), bundle staging
//! dirs (`.<case>.<pid>-<unique>.stage`) and archive staging dirs (`.tmp-<pid>-<n>`)
//! carry their writer's pid; a later run removes them only when that process is gone,
//! never while their owner may still be writing.

use std::fs;
use std::path::Path;

pub use crate::util::fs::owner_alive;

/// The owner pid encoded in a leftover's file name, if it is one of ours.
pub fn owner_pid(name: &str) -> Option<u32> {
    let digits = |s: &str| s.split('-').next().and_then(|p| p.parse::<u32>().ok());
    if let Some(rest) = name.strip_prefix(".tmp-") {
        return digits(rest);
    }
    let body = name
        .strip_prefix('.')?
        .strip_suffix(".tmp")
        .or_else(|| name.strip_prefix('.')?.strip_suffix(".stage"))?;
    digits(&body[body.rfind('.')? + 1..])
}

/// Remove every leftover directly in `dir` whose owner is gone; returns how many went.
/// A missing `dir` is fine.
pub fn sweep(dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(owner_pid) else {
            continue;
        };
        if owner_alive(pid) {
            continue;
        }
        let path = entry.path();
        let gone = match entry.file_type() {
            Ok(t) if t.is_dir() => fs::remove_dir_all(&path),
            _ => fs::remove_file(&path),
        };
        if gone.is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
#[path = "stale_tests.rs"]
mod tests;
