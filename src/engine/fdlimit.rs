//! Open-file budget: raise the soft `RLIMIT_NOFILE` to the hard limit at start, then
//! check the planned concurrency fits, so a big run fails before it starts (exit 2) with
//! the fix instead of losing sessions to "Too many open files" mid-run.

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

/// Descriptors kept for everything besides sessions (runtime, pipes, output files).
pub const RESERVE_FDS: u64 = 64;

/// Descriptors one concurrent session needs: its client socket, the files the workload
/// may keep open for it while it runs (`workload_files`, from
/// `Workload::files_per_session`), plus the server side when rtload also hosts the
/// embedded server.
pub fn fds_per_session(embedded_server: bool, workload_files: u64) -> u64 {
    1 + workload_files + u64::from(embedded_server)
}

/// What `ensure` found.
#[derive(Debug, Clone, PartialEq)]
pub struct FdBudget {
    /// The soft limit now in force (`None` = unlimited).
    pub soft: Option<u64>,
    /// The hard limit (`None` = unlimited).
    pub hard: Option<u64>,
    /// Descriptors the plan needs.
    pub needed: u64,
}

/// Pure check: `Err` with the message and fix when `needed` does not fit under `soft`.
pub fn check(budget: &FdBudget, max_concurrency: usize) -> Result<(), String> {
    match budget.soft {
        Some(soft) if budget.needed > soft => {
            let per = (budget.needed - RESERVE_FDS).max(1) / (max_concurrency.max(1) as u64);
            let fits = soft.saturating_sub(RESERVE_FDS) / per.max(1);
            let hard = budget
                .hard
                .map_or("unlimited".to_string(), |h| h.to_string());
            Err(format!(
                "max_concurrency {max_concurrency} needs about {} open files, but this process may open only {soft} (hard limit {hard}); raise the limit (e.g. `ulimit -n {}` as root or in /etc/security/limits.conf) or lower max_concurrency to {fits}",
                budget.needed, budget.needed
            ))
        }
        _ => Ok(()),
    }
}

/// Raise the soft open-file limit to the hard limit, then check `max_concurrency`
/// sessions fit (see [`fds_per_session`]).
pub fn ensure(
    max_concurrency: usize,
    embedded_server: bool,
    workload_files: u64,
) -> Result<FdBudget, String> {
    let lim = getrlimit(Resource::Nofile);
    let soft = if lim.current != lim.maximum {
        let raised = Rlimit {
            current: lim.maximum,
            maximum: lim.maximum,
        };
        match setrlimit(Resource::Nofile, raised) {
            Ok(()) => lim.maximum,
            Err(_) => lim.current,
        }
    } else {
        lim.current
    };
    let budget = FdBudget {
        soft,
        hard: lim.maximum,
        needed: (max_concurrency as u64)
            .saturating_mul(fds_per_session(embedded_server, workload_files))
            .saturating_add(RESERVE_FDS),
    };
    check(&budget, max_concurrency).map(|()| budget)
}

#[cfg(test)]
#[path = "fdlimit_tests.rs"]
mod tests;
