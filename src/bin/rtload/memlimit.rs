//! Runs under an address-space limit (`ulimit -v`, `prlimit --as`): glibc reserves 64 MiB
//! of address space for every malloc arena it opens (one per busy thread, up to eight per
//! core), untouched memory that still counts against the limit, so a run using a fraction
//! of the limit could abort with "memory allocation failed". glibc reads
//! `MALLOC_ARENA_MAX` only when the process starts, so under such a limit (and with the
//! variable unset) the binary runs itself again with `MALLOC_ARENA_MAX=2` and says so;
//! the limit then bounds memory, not reservations.

use std::os::unix::process::CommandExt as _;

/// Address space glibc reserves per arena beyond the main one.
const ARENA_RESERVE: u64 = 64 << 20;

/// The arena cap the binary sets under an address-space limit.
const ARENA_MAX: &str = "2";

/// Marks the second start, so it can say what was done.
const MARKER: &str = "RTLOAD_ARENAS_CAPPED";

/// Whether arenas need a cap: an address-space limit of `limit` bytes (`None`:
/// unlimited) too small for the reservations of every arena glibc may open on `cores`
/// cores, with `MALLOC_ARENA_MAX` (`arena_max`) unset or empty.
pub fn needs_cap(limit: Option<u64>, arena_max: Option<&str>, cores: u64) -> bool {
    let Some(limit) = limit else { return false };
    let capped = arena_max.is_some_and(|v| !v.trim().is_empty());
    !capped && 8 * cores.max(1) * ARENA_RESERVE > limit / 2
}

/// What the user is told, for a limit of `limit` bytes: after the second start
/// (`restarted`), or when running again failed with `error`.
pub fn message(limit: u64, restarted: bool, error: Option<&std::io::Error>) -> String {
    let why = format!(
        "an address-space limit of {} MiB is set and glibc reserves 64 MiB of it per malloc \
         arena without using it",
        limit >> 20
    );
    match (restarted, error) {
        (_, Some(e)) => format!(
            "note: {why}, which can abort the run long before memory runs out; running again \
             with MALLOC_ARENA_MAX={ARENA_MAX} failed ({e}): set it yourself"
        ),
        _ => format!("note: {why}: malloc arenas capped at {ARENA_MAX} (MALLOC_ARENA_MAX)"),
    }
}

/// For `run` and `suite`, before anything else starts: under a tight address-space limit
/// with uncapped arenas, runs this binary again with `MALLOC_ARENA_MAX` set (this call
/// then does not return); returns the line to print, if any.
pub fn fit_arenas() -> Option<String> {
    // glibc only: other C libraries (musl) keep no per-thread arenas.
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        return None;
    }
    let limit = rustix::process::getrlimit(rustix::process::Resource::As).current?;
    if std::env::var_os(MARKER).is_some() {
        return Some(message(limit, true, None));
    }
    let arena_max = std::env::var("MALLOC_ARENA_MAX").ok();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    if !needs_cap(Some(limit), arena_max.as_deref(), cores) {
        return None;
    }
    let error = match std::env::current_exe() {
        Ok(exe) => std::process::Command::new(exe)
            .args(std::env::args_os().skip(1))
            .env("MALLOC_ARENA_MAX", ARENA_MAX)
            .env(MARKER, "1")
            .exec(),
        Err(e) => e,
    };
    Some(message(limit, false, Some(&error)))
}

#[cfg(test)]
#[path = "memlimit_tests.rs"]
mod tests;
