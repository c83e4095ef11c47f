//! `rtload capacity`: the flags checked, the scenario loaded as `run` loads it, the
//! library's search run, its sentence and table printed; exit 0 with a capacity, 1
//! without, 2 bad input, 130 interrupted.

use std::process::ExitCode;

use rtload::run::CapacityOutcome;

/// `run` flags that make no sense for a search, with why.
fn conflicts(a: &crate::cli::CapacityArgs) -> Vec<&'static str> {
    let r = &a.run;
    [
        (
            r.max_concurrency.is_some(),
            "--max-concurrency (each step sets it; use --start/--max)",
        ),
        (
            r.sweep.is_some() || r.sweep_dir.is_some(),
            "--sweep/--sweep-dir (the search picks the points; use --dir)",
        ),
        (
            r.shard.is_some() || r.start_at.is_some(),
            "--shard/--start-at (a search runs whole steps)",
        ),
        (
            r.metrics_addr.is_some(),
            "--metrics-addr (one endpoint per run; not built for searches)",
        ),
        (
            r.output_json.is_some(),
            "--output-json (each step's result is written under --dir)",
        ),
    ]
    .into_iter()
    .filter_map(|(given, what)| given.then_some(what))
    .collect()
}

/// Why the search's own flags are unusable, if they are.
fn bad_search_flags(a: &crate::cli::CapacityArgs) -> Option<String> {
    if !(a.good_share > 0.0 && a.good_share <= 1.0) {
        return Some(format!(
            "--good-share must be in (0, 1] (got {}); e.g. 0.99 for 99%",
            a.good_share
        ));
    }
    if a.start == 0 {
        return Some("--start must be at least 1 (got 0)".into());
    }
    (a.max < a.start).then(|| {
        format!(
            "--max ({}) must be at least --start ({}); raise --max or lower --start",
            a.max, a.start
        )
    })
}

/// `rtload capacity SCENARIO [run flags]`.
pub fn capacity_cmd(a: &crate::cli::CapacityArgs) -> ExitCode {
    let mut usage: Vec<String> = conflicts(a)
        .into_iter()
        .map(|c| format!("rtload capacity does not take {c}"))
        .collect();
    usage.extend(bad_search_flags(a));
    let ov = a.run.overrides().map_err(|e| usage.push(e)).ok();
    let Some(ov) = ov.filter(|_| usage.is_empty()) else {
        for e in &usage {
            eprintln!("error: {e}");
        }
        return ExitCode::from(2);
    };
    let interrupt =
        crate::listen_for_interrupt(std::time::Duration::from_secs_f64(a.run.grace_period));
    let stopped = || interrupt.as_ref().is_some_and(|i| i.switch.is_triggered());
    let scenario = match crate::load(&a.run, &ov) {
        Ok(_) | Err(_) if stopped() => return crate::interrupted_before_the_run(),
        Ok(s) => s,
        Err(code) => return code,
    };
    for w in scenario.workload().warnings() {
        eprintln!("{w}");
    }
    if scenario.tls().insecure_skip_verify {
        eprintln!("{}", rtload::run::INSECURE_WARNING);
    }
    let dir = a
        .dir
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from(format!("capacity-{}", scenario.name())));
    let quiet = a.run.quiet;
    let mut progress = |line: &str| {
        if !quiet {
            eprintln!("{line}");
        }
    };
    let bounds = rtload::run::CapacityBounds {
        start: a.start,
        max: a.max,
        ramp: a.ramp,
    };
    let r = rtload::run::run_capacity(
        &scenario,
        bounds,
        a.good_share,
        &dir,
        quiet,
        interrupt,
        &mut progress,
    );
    match r {
        Ok(r) => report(&r),
        Err(e) => crate::run_failed(e),
    }
}

/// Prints a finished search (sentence and table on stdout, files on stderr) and maps it
/// to the exit code: 0 a capacity, 1 none, 130 interrupted.
fn report(r: &rtload::run::CapacityRun) -> ExitCode {
    print!("{}", r.text);
    let (own, steps): (Vec<_>, Vec<_>) = r.files.iter().partition(|f| {
        f.file_name()
            .is_some_and(|n| n == "capacity.json" || n == "capacity.html")
    });
    if !own.is_empty() {
        let own: Vec<String> = own.iter().map(|f| f.display().to_string()).collect();
        eprintln!(
            "wrote {} and {} step result(s) beside them",
            own.join(", "),
            steps.len()
        );
    }
    match r.outcome {
        _ if r.interrupted => {
            eprintln!(
                "interrupted: the search stopped; capacity.json holds the steps that finished"
            );
            ExitCode::from(rtload::run::EXIT_INTERRUPTED)
        }
        Some(CapacityOutcome::Capacity { .. }) => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    }
}
