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
mod tests {
    use super::*;

    #[test]
    fn names_carry_their_owner() {
        assert_eq!(owner_pid(".output.wav.4242-00ab.tmp"), Some(4242));
        assert_eq!(owner_pid(".result.json.77-3-1f.tmp"), Some(77));
        assert_eq!(owner_pid(".a1--0123abcd.99-5.stage"), Some(99));
        assert_eq!(owner_pid(".tmp-1234-0"), Some(1234));
        assert_eq!(owner_pid("output.wav"), None);
        assert_eq!(owner_pid(".done"), None);
        assert_eq!(owner_pid(".output.wav.00ab12.tmp"), None); // old random-only name
    }

    #[test]
    fn only_leftovers_of_dead_owners_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let dead = crate::util::fs::test_support::dead_pid();
        let me = std::process::id();
        let dead_tmp = format!(".output.wav.{dead}-1.tmp");
        let live_tmp = format!(".output.wav.{me}-1.tmp");
        let dead_stage = format!(".tmp-{dead}-0");
        fs::write(dir.path().join(&dead_tmp), b"x").unwrap();
        fs::write(dir.path().join(&live_tmp), b"x").unwrap();
        fs::create_dir(dir.path().join(&dead_stage)).unwrap();
        fs::write(dir.path().join(&dead_stage).join("big"), b"x").unwrap();
        fs::write(dir.path().join("output.wav"), b"keep").unwrap();
        assert!(!owner_alive(dead));
        assert_eq!(sweep(dir.path()), 2);
        assert!(dir.path().join(&live_tmp).exists());
        assert!(dir.path().join("output.wav").exists());
        assert!(!dir.path().join(&dead_tmp).exists());
        assert!(!dir.path().join(&dead_stage).exists());
    }
}
