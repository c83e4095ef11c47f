//! The `rtload` command: parse the command line, call the library, map the outcome to an
//! exit code — 0 passed, 1 samples (or thresholds) failed, 2 usage or configuration error.

/// Every stderr line of the command passes through the one URL redaction rule
/// (`rtload::report::redact_text`): no URL password or credential query value is printed.
macro_rules! eprintln {
    ($($arg:tt)*) => {
        std::eprintln!("{}", rtload::report::redact_text(&format!($($arg)*)))
    };
}

mod capacity;
mod check;
mod cli;
mod memlimit;
mod merge;
mod report;
mod serve;

use std::process::ExitCode;

use anyhow::Context as _;
use rtload::report::redact_text;

fn main() -> ExitCode {
    let args = cli::parse();
    if matches!(
        args.command,
        cli::Command::Run(_) | cli::Command::Suite(_) | cli::Command::Capacity(_)
    ) && let Some(note) = memlimit::fit_arenas()
    {
        eprintln!("{note}");
    }
    init_logging();
    match args.command {
        cli::Command::Run(run) => run_cmd(&run),
        cli::Command::Check(c) => check::check_cmd(&c),
        cli::Command::Capacity(c) => capacity::capacity_cmd(&c),
        cli::Command::Suite(a) => suite_cmd(&a),
        cli::Command::Report(a) => report::report_cmd(&a),
        cli::Command::Compare(a) => compare_cmd(&a),
        cli::Command::Merge(a) => merge::merge_cmd(&a),
        cli::Command::Schema => {
            println!("{}", rtload::scenario::scenario_schema_json());
            ExitCode::SUCCESS
        }
        cli::Command::Dataset(cli::DatasetCommand::Synth(a)) => match synth_cmd(&a) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e:#}");
                ExitCode::from(2)
            }
        },
        cli::Command::Serve(s) => match serve::serve_cmd(&s) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e:#}");
                ExitCode::from(2)
            }
        },
    }
}

/// Install the `tracing` subscriber: `RUST_LOG` filters (default `warn`), output on stderr
/// so stdout stays the report. A bad `RUST_LOG` falls back to `warn` with a note.
fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = match std::env::var("RUST_LOG") {
        Ok(spec) if !spec.trim().is_empty() => EnvFilter::try_new(&spec).unwrap_or_else(|e| {
            eprintln!("warning: RUST_LOG={spec:?} is not a valid filter ({e}); using \"warn\"");
            EnvFilter::new("warn")
        }),
        _ => EnvFilter::new("warn"),
    };
    // A closed stderr (a parent that stopped reading) must not turn a log line into a
    // panic: the subscriber then drops the line instead of reporting its own write error.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(true)
        .log_internal_errors(false)
        .try_init();
}

/// The scenario `run` names: its file, or the one `--replay DIR` builds.
fn load(
    run: &cli::RunArgs,
    ov: &rtload::scenario::Overrides,
) -> Result<rtload::Scenario, ExitCode> {
    let loaded = match (&run.replay, &run.scenario) {
        (Some(dir), _) => rtload::scenario::replay(dir, ov),
        (None, Some(path)) => rtload::scenario::load(path, ov),
        (None, None) => {
            eprintln!("error: name a scenario file, or a recording with --replay DIR");
            return Err(ExitCode::from(2));
        }
    };
    loaded.map_err(|errors| {
        for e in &errors {
            eprintln!("error: {e}");
        }
        ExitCode::from(2)
    })
}

fn run_cmd(run: &cli::RunArgs) -> ExitCode {
    let ov = match run.overrides() {
        Ok(ov) => ov,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    // Listening before the scenario loads: a signal while its dataset is extracted stops
    // the extraction (its staging removed) and nothing runs.
    let grace = std::time::Duration::from_secs_f64(run.grace_period);
    let interrupt = listen_for_interrupt(grace);
    let stopped = || interrupt.as_ref().is_some_and(|i| i.switch.is_triggered());
    let scenario = match load(run, &ov) {
        Ok(_) | Err(_) if stopped() => return interrupted_before_the_run(),
        Ok(s) => s,
        Err(code) => return code,
    };
    for w in scenario.workload().warnings() {
        eprintln!("{w}");
    }
    if scenario.tls().insecure_skip_verify {
        eprintln!("{}", rtload::run::INSECURE_WARNING);
    }
    let sweep = match requested_sweep(run, &scenario) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let dist = match merge::distributed(run) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(sweep) = sweep {
        if let Some(msg) = check::sweep_conflict(&dist) {
            eprintln!("error: {msg}");
            return ExitCode::from(2);
        }
        return sweep_cmd(run, &scenario, &sweep, interrupt);
    }
    use std::io::IsTerminal as _;
    let mode = rtload::run::mode_for(std::io::stderr().is_terminal(), run.quiet);
    let progress: Option<(rtload::run::Mode, Box<dyn std::io::Write + Send>)> =
        Some((mode, Box::new(std::io::stderr())));
    let switch = interrupt.as_ref().map(|i| i.switch.clone());
    let run_result = rtload::run::run_serving(
        &scenario,
        Box::new(std::io::stdout()),
        progress,
        interrupt,
        &dist,
    );
    match run_result {
        Ok((summary, endpoint)) => {
            let code = report_run(&summary, &scenario, &dist);
            if let Some(ep) = endpoint {
                linger(ep, run.metrics_linger, switch.as_ref());
            }
            code
        }
        Err(e) => run_failed(e),
    }
}

/// A run that could not produce a result: every scenario error (exit 2), or the one
/// failure with its own exit code.
pub(crate) fn run_failed(e: rtload::RunError) -> ExitCode {
    match e {
        rtload::RunError::Scenario(errors) => {
            for e in &errors {
                eprintln!("error: {e}");
            }
            ExitCode::from(2)
        }
        e => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// The sweep to run, if any: `--sweep` (keeping `[sweep]`'s `samples_per_point`) or the
/// scenario's `[sweep]`; a malformed flag is reported and yields exit code 2.
pub(crate) fn requested_sweep(
    run: &cli::RunArgs,
    scenario: &rtload::Scenario,
) -> Result<Option<rtload::scenario::Sweep>, ExitCode> {
    match run
        .sweep
        .as_deref()
        .map(rtload::scenario::parse_sweep)
        .transpose()
    {
        // The flag replaces `[sweep]`'s values; its `samples_per_point` still applies.
        Ok(s) => Ok(s
            .map(|mut s| {
                s.samples_per_point = scenario.sweep().and_then(|t| t.samples_per_point);
                s
            })
            .or_else(|| scenario.sweep().cloned())),
        Err(e) => {
            eprintln!("error: {e}");
            Err(ExitCode::from(2))
        }
    }
}

/// A signal arrived before the run started (while the scenario loaded): nothing ran.
fn interrupted_before_the_run() -> ExitCode {
    eprintln!("interrupted before the run started: nothing was run or written");
    ExitCode::from(rtload::run::EXIT_INTERRUPTED)
}

/// Listens for Ctrl-C with the given grace period; warns (and returns `None`) if it cannot.
fn listen_for_interrupt(grace: std::time::Duration) -> Option<rtload::run::Interrupt> {
    match rtload::run::listen_for_signals(grace, move |s| announce(s, grace)) {
        Ok(i) => Some(i),
        Err(e) => {
            eprintln!("warning: cannot listen for Ctrl-C ({e}); an interrupt will lose the run");
            None
        }
    }
}

/// Says on stderr what a signal does (the library acts on it and prints nothing). The
/// third ends the process at once: a run that does not return by then is stuck.
fn announce(signal: rtload::run::Signal, grace: std::time::Duration) {
    use rtload::run::{EXIT_INTERRUPTED, Phase, Signal};
    match signal {
        Signal::First {
            phase: Phase::Over, ..
        } => {}
        Signal::First {
            phase: Phase::Publishing,
        } => eprintln!(
            "interrupted while writing the results: finishing them, then exiting 130 (the result is marked interrupted; signal twice more to exit at once, writing nothing more)"
        ),
        Signal::First {
            phase: Phase::Preparing,
        } => eprintln!(
            "interrupted before the run started: stopping (an archive being extracted is removed); nothing will run, exiting 130"
        ),
        Signal::First {
            phase: Phase::Running,
        } => eprintln!(
            "interrupted: releasing no new sessions; in-flight sessions get {:.1} s to finish, then are cancelled (signal again to cancel them at once)",
            grace.as_secs_f64()
        ),
        Signal::Second {
            phase: Phase::Publishing | Phase::Over,
        } => eprintln!(
            "interrupted again: still writing the results (signal again to exit at once, writing nothing more)"
        ),
        Signal::Second {
            phase: Phase::Preparing,
        } => eprintln!("interrupted again: still stopping (signal again to exit at once)"),
        Signal::Second {
            phase: Phase::Running,
        } => eprintln!(
            "interrupted again: cancelling the in-flight sessions now; what finished is still written (signal again to exit at once, writing nothing more)"
        ),
        Signal::Later(_) => {
            eprintln!("interrupted a third time: exiting now");
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
    }
}

/// Keeps `--metrics-addr` serving the run's final values for `secs` (`--metrics-linger`)
/// after the report, saying so; Ctrl-C ends the wait at once without changing the exit
/// status, and an interrupted run does not linger.
fn linger(ep: rtload::run::LiveEndpoint, secs: f64, switch: Option<&rtload::run::InterruptSwitch>) {
    if let Some(s) = switch {
        s.run_over();
    }
    let linger = std::time::Duration::from_secs_f64(secs);
    if !linger.is_zero() && !switch.is_some_and(|s| s.is_triggered()) {
        eprintln!(
            "live metrics: serving the final values at http://{}/metrics for {secs} s (--metrics-linger); Ctrl-C stops now",
            ep.addr()
        );
    }
    ep.linger(linger, switch);
}

/// Prints a finished run (verdict line, report, thresholds, errors, interrupt note) and
/// picks the exit code: interrupted, success, or 1 for a failed run.
fn report_run(
    summary: &rtload::RunSummary,
    scenario: &rtload::Scenario,
    dist: &rtload::run::Distributed,
) -> ExitCode {
    let mut verdict = rtload::report::verdict_line(
        summary.passed(),
        summary.interrupted,
        summary.measured,
        &summary.failures_by_kind,
        summary.warmup,
        (
            summary.verdicts.iter().filter(|v| !v.passed).count(),
            summary.verdicts.len(),
        ),
    );
    // The outcome classes, once a session was refused for capacity or broke an SLO.
    let classes = summary.outcomes;
    if classes.rejected + classes.degraded > 0 {
        verdict.push_str(&format!("; sessions: {}", classes.render()));
    }
    println!("{verdict}");
    print!("{}", redact_text(&summary.report.render_text()));
    print!("{}", summary.soak.text());
    print!("{}", summary.receipts.as_deref().unwrap_or_default());
    if !summary.verdicts.is_empty() {
        println!("Thresholds");
        print!("{}", rtload::scenario::render_thresholds(&summary.verdicts));
    }
    if let Some(w) = &summary.generator_bound {
        println!("WARNING: {w}");
    }
    for w in &summary.warnings {
        println!("WARNING: {w}");
    }
    if let Some(p) = &summary.json_path {
        eprintln!("wrote {}", p.display());
    }
    if let Some(s) = dist
        .shard
        .filter(|s| s.count > 1 && !scenario.thresholds().is_empty())
    {
        eprintln!("shard {s}: [thresholds] are evaluated on the merged result by `rtload merge`");
    }
    for line in rtload::report::failure_lines(&summary.failures, 20, "ERROR: ") {
        eprintln!("{line}");
    }
    for e in &summary.artifact_errors {
        eprintln!("ERROR: artifact: {e}");
    }
    let breached = summary.verdicts.iter().filter(|v| !v.passed).count();
    if breached > 0 {
        eprintln!("{breached} threshold(s) breached");
    }
    if !summary.failures.is_empty() {
        let kinds: Vec<String> = summary
            .failures_by_kind
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        eprintln!(
            "{} of {} measured samples failed ({})",
            summary.failures.len(),
            summary.measured,
            kinds.join(", ")
        );
    }
    if summary.interrupted {
        eprintln!(
            "interrupted: {} measured sample(s) ran to an outcome, {} cancelled as interrupted; results cover only those",
            summary.measured - summary.cancelled,
            summary.cancelled
        );
        ExitCode::from(rtload::run::EXIT_INTERRUPTED)
    } else if summary.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn synth_cmd(a: &cli::SynthArgs) -> anyhow::Result<()> {
    let synth = rtload::dataset::datasets()
        .into_iter()
        .find(|d| d.name == a.kind)
        .with_context(|| format!("no dataset named {:?}", a.kind))?;
    let opts = rtload::dataset::SynthOptions {
        seed: a.seed,
        tar: a.tar,
        mp4: a.mp4,
        cases_per_subset: a.cases_per_subset,
        duration_ms: a.duration_ms,
        files: a.files,
        words: a.words,
        words_per_second: a.words_per_second,
        sample_rate: a.sample_rate,
    };
    let lines = (synth.write)(&a.dir, &opts)
        .map_err(anyhow::Error::msg)
        .with_context(|| {
            format!(
                "writing a synthetic {} dataset into {}",
                synth.name,
                a.dir.display()
            )
        })?;
    for line in lines {
        println!("{line}");
    }
    Ok(())
}

fn sweep_cmd(
    run: &cli::RunArgs,
    sc: &rtload::Scenario,
    sweep: &rtload::scenario::Sweep,
    interrupt: Option<rtload::run::Interrupt>,
) -> ExitCode {
    let dir = run
        .sweep_dir
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from(format!("sweep-{}", sc.name())));
    let quiet = run.quiet;
    let mut progress = |line: &str| {
        if !quiet {
            eprintln!("{line}");
        }
    };
    match rtload::run::run_sweep_interruptible(sc, sweep, &dir, quiet, interrupt, &mut progress) {
        Ok(r) => {
            let catalogue = sc.workload().catalogue();
            let cols = rtload::report::sweep_columns(
                sweep.headline.as_deref(),
                catalogue.headline(),
                &r.points,
            );
            let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
            print!(
                "{}",
                rtload::report::sweep_table(
                    sweep,
                    &r.points,
                    catalogue.unit_rate().map(|u| u.unit.as_str()),
                    &cols
                )
            );
            print!("{}", rtload::report::direction_legend(&cols, catalogue));
            for f in &r.files {
                eprintln!("wrote {}", f.display());
            }
            if r.interrupted {
                eprintln!(
                    "interrupted: the sweep stopped after {} finished point(s); results cover only those",
                    r.points.len()
                );
                ExitCode::from(rtload::run::EXIT_INTERRUPTED)
            } else if r.points.iter().all(|p| p.passed) {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn suite_cmd(a: &cli::SuiteArgs) -> ExitCode {
    let outcomes = match rtload::run::run_suite(&a.paths, a.quiet) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    print!("{}", rtload::report::suite_table(&outcomes));
    if let Some(path) = &a.junit {
        let xml = rtload::report::junit_xml("rtload", &outcomes);
        if let Err(e) = rtload::report::write_atomic(path, xml.as_bytes()) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return ExitCode::from(2);
        }
        eprintln!("wrote {}", path.display());
    }
    ExitCode::from(rtload::report::suite_exit_code(&outcomes))
}

fn compare_cmd(a: &cli::CompareArgs) -> ExitCode {
    let bound = match a
        .max_regression
        .as_deref()
        .map(rtload::report::parse_percent)
        .transpose()
    {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: --max-regression: {e}");
            return ExitCode::from(2);
        }
    };
    // Numbers from different pacing modes (realtime, saturate, 2x) are never mixed.
    let mode = |p: &std::path::Path| {
        rtload::report::read_result(p)
            .ok()
            .and_then(|d| d["rtload"]["pacing_mode"].as_str().map(str::to_owned))
    };
    if let (Some(b), Some(n)) = (mode(&a.base), mode(&a.new))
        && b != n
    {
        eprintln!(
            "error: refusing to compare: {} was paced {b}, {} was paced {n}; numbers from different pacing modes are not comparable",
            a.base.display(),
            a.new.display()
        );
        return ExitCode::from(2);
    }
    let ((base, base_cat), (new, new_cat)) = match (
        rtload::report::load_result(&a.base),
        rtload::report::load_result(&a.new),
    ) {
        (Ok(b), Ok(n)) => (b, n),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    // NEW's catalogue first (the current meaning), BASE's for metrics NEW lacks.
    let mut catalogue = new_cat.clone().or(base_cat.clone()).unwrap_or_default();
    if let Some(b) = &base_cat {
        catalogue.merge(b);
    }
    for (p, c) in [(&a.base, &base_cat), (&a.new, &new_cat)] {
        if c.is_none() {
            eprintln!(
                "note: {} has no rtload.metrics_catalogue and no known workload declares all its metrics; its metrics without a direction in the other file never count as regressions",
                p.display()
            );
        }
    }
    let cmp = rtload::report::compare(&base, &new, bound, &catalogue);
    print!("{}", rtload::report::render_comparison(&cmp));
    if cmp.regressions().is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
