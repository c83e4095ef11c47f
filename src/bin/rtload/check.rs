//! `rtload check`: `run` minus running. The same flags, the same validation (overrides,
//! `--sweep`, `--shard`, the open-file limit), then the plan `run` would execute with its
//! thresholds; nothing runs and nothing is written.

use std::process::ExitCode;

/// `rtload check`: every file validated as `run` would with the same flags (overrides,
/// `--sweep`, `--shard`, the open-file limit), then the plan `run` would execute.
pub fn check_cmd(c: &crate::cli::CheckArgs) -> ExitCode {
    let flags = c
        .run
        .overrides()
        .and_then(|ov| Ok((ov, crate::merge::distributed(&c.run)?)));
    let (ov, dist) = match flags {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if c.run.scenario.is_none() && c.run.replay.is_none() {
        eprintln!("error: name a scenario file, or a recording with --replay DIR");
        return ExitCode::from(2);
    }
    let mut code = ExitCode::SUCCESS;
    let replay = c.run.replay.iter().map(|d| (d, true));
    let files = c.run.scenario.iter().chain(&c.more).map(|p| (p, false));
    for (path, replay) in replay.chain(files) {
        // Validates exactly as `run` does, without writing anything.
        let loaded = match replay {
            true => rtload::scenario::replay(path, &ov),
            false => rtload::scenario::check(path, &ov),
        };
        let s = match loaded {
            Ok(s) => s,
            Err(errors) => {
                for e in &errors {
                    eprintln!("error: {e}");
                }
                code = ExitCode::from(2);
                continue;
            }
        };
        for w in s.workload().warnings() {
            eprintln!("{w}");
        }
        let sweep = match crate::requested_sweep(&c.run, &s) {
            Ok(sw) => sw,
            Err(e) => {
                code = e;
                continue;
            }
        };
        let conflict = sweep.as_ref().and(sweep_conflict(&dist));
        let ready = rtload::run::preflight(&s, dist.shard).map_err(|e| e.to_string());
        if let Some(msg) = conflict.map(str::to_string).or(ready.err()) {
            eprintln!("error: {}: {msg}", path.display());
            code = ExitCode::from(2);
            continue;
        }
        print!("{}", rtload::run::describe_placed(&s, dist.shard));
        if c.metrics {
            print!("{}", rtload::run::describe_metrics(&s));
        }
        if let Some(sw) = &sweep {
            println!("  sweep              {} values", sw.values.len());
            for line in sw.describe_points(s.samples()) {
                println!("    {line}");
            }
        }
    }
    code
}

/// Why a sweep cannot run with this placement (`--shard`/`--start-at`) or recording
/// (`--record`), if it cannot.
pub fn sweep_conflict(dist: &rtload::run::Distributed) -> Option<&'static str> {
    if dist.record.is_some() {
        return Some("--record cannot be combined with a sweep; record one point's run instead");
    }
    (dist.shard.is_some() || dist.start_at_unix_s.is_some()).then_some(
        "--shard/--start-at cannot be combined with a sweep; shard each point's run instead",
    )
}
