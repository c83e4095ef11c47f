//! Starts `run`, `suite` and `capacity` with the glibc malloc settings a load generator
//! needs; glibc reads them only when the process starts, so when one is missing the
//! binary runs itself again once with it set (a marker stops a second restart).
//!
//! - **Arenas under an address-space limit** (`ulimit -v`, `prlimit --as`): glibc
//!   reserves 64 MiB of address space for every malloc arena it opens (one per busy
//!   thread, up to eight per core), untouched memory that still counts against the limit,
//!   so a run using a fraction of the limit could abort with "memory allocation failed".
//!   With `MALLOC_ARENA_MAX` unset the run gets `MALLOC_ARENA_MAX=2` and says so; the
//!   limit then bounds memory, not reservations.
//! - **The heap on transparent huge pages**: a session's state is touched a few times a
//!   second and sits idle between, and on 4 KiB pages such memory reads slower the longer
//!   it idles (TLB and page-walk misses; BENCHMARKS.md, "The heap on huge pages"). When
//!   the kernel gives huge pages only on request (`madvise` in
//!   `/sys/kernel/mm/transparent_hugepage/enabled`) and `GLIBC_TUNABLES` does not name
//!   `glibc.malloc.hugetlb`, the run gets `glibc.malloc.hugetlb=1` (glibc 2.35+; older
//!   ones ignore it). `GLIBC_TUNABLES=glibc.malloc.hugetlb=0` keeps 4 KiB pages.

use std::os::unix::process::CommandExt as _;

/// Address space glibc reserves per arena beyond the main one.
const ARENA_RESERVE: u64 = 64 << 20;

/// The arena cap the binary sets under an address-space limit.
const ARENA_MAX: &str = "2";

/// The tunable that puts malloc's memory on transparent huge pages.
const HUGE_HEAP: &str = "glibc.malloc.hugetlb";

/// Marks the second start and says what it changed (`arenas`, `heap`, comma-separated).
const MARKER: &str = "RTLOAD_GLIBC_SET";

/// Where the kernel says when it gives transparent huge pages.
const THP_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// Whether arenas need a cap: an address-space limit of `limit` bytes (`None`:
/// unlimited) too small for the reservations of every arena glibc may open on `cores`
/// cores, with `MALLOC_ARENA_MAX` (`arena_max`) unset or empty.
pub fn needs_cap(limit: Option<u64>, arena_max: Option<&str>, cores: u64) -> bool {
    let Some(limit) = limit else { return false };
    let capped = arena_max.is_some_and(|v| !v.trim().is_empty());
    !capped && 8 * cores.max(1) * ARENA_RESERVE > limit / 2
}

/// The `GLIBC_TUNABLES` value that puts the heap on huge pages, given the kernel's mode
/// (`thp`: the contents of `THP_ENABLED`, `None` when unreadable) and the current value
/// (`tunables`); `None` when nothing should change: the kernel gives huge pages to every
/// mapping already (`always`) or to none (`never`), or the user chose the tunable.
pub fn huge_heap_tunables(thp: Option<&str>, tunables: Option<&str>) -> Option<String> {
    if !thp?.contains("[madvise]") {
        return None;
    }
    match tunables.map(str::trim).filter(|t| !t.is_empty()) {
        Some(t) if t.contains(HUGE_HEAP) => None,
        Some(t) => Some(format!("{t}:{HUGE_HEAP}=1")),
        None => Some(format!("{HUGE_HEAP}=1")),
    }
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

/// For `run`, `suite` and `capacity`, before anything else starts: when a setting above
/// is missing, runs this binary again with it (this call then does not return); returns
/// the line to print, if any. A failed restart only matters for the arena cap (the huge
/// pages are a speed-up), so it is reported only then.
pub fn settle() -> Option<String> {
    // glibc only: other C libraries (musl) keep no per-thread arenas nor these tunables.
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        return None;
    }
    let limit = rustix::process::getrlimit(rustix::process::Resource::As).current;
    if let Some(done) = std::env::var_os(MARKER) {
        let capped = done.to_string_lossy().split(',').any(|d| d == "arenas");
        return limit.filter(|_| capped).map(|l| message(l, true, None));
    }
    let arena_max = std::env::var("MALLOC_ARENA_MAX").ok();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let cap = needs_cap(limit, arena_max.as_deref(), cores);
    let thp = std::fs::read_to_string(THP_ENABLED).ok();
    let tunables = std::env::var("GLIBC_TUNABLES").ok();
    let heap = huge_heap_tunables(thp.as_deref(), tunables.as_deref());
    if !cap && heap.is_none() {
        return None;
    }
    let error = match std::env::current_exe() {
        Ok(exe) => {
            let mut again = std::process::Command::new(exe);
            again.args(std::env::args_os().skip(1));
            let mut done = Vec::new();
            if cap {
                again.env("MALLOC_ARENA_MAX", ARENA_MAX);
                done.push("arenas");
            }
            if let Some(heap) = heap {
                again.env("GLIBC_TUNABLES", heap);
                done.push("heap");
            }
            again.env(MARKER, done.join(",")).exec()
        }
        Err(e) => e,
    };
    limit
        .filter(|_| cap)
        .map(|l| message(l, false, Some(&error)))
}

/// The debug log's line on a second start (`None` on a first one): what was changed and
/// the values the process now runs with.
pub fn restart_log() -> Option<String> {
    let done = std::env::var(MARKER).ok()?;
    let var = |k| std::env::var(k).unwrap_or_default();
    Some(format!(
        "started again for glibc malloc settings ({done}): MALLOC_ARENA_MAX={:?} \
         GLIBC_TUNABLES={:?}",
        var("MALLOC_ARENA_MAX"),
        var("GLIBC_TUNABLES")
    ))
}

#[cfg(test)]
#[path = "glibc_tests.rs"]
mod tests;
