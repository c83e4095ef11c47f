//! `rtload merge`, and the `--shard`/`--start-at` flags of `rtload run`.

use std::process::ExitCode;

use rtload::report;
use rtload::run::Shard;

/// The distributed placement the run flags ask for.
pub fn distributed(run: &crate::cli::RunArgs) -> Result<rtload::run::Distributed, String> {
    let shard = run
        .shard
        .as_deref()
        .map(Shard::parse)
        .transpose()
        .map_err(|e| e.to_string())?;
    let start_at_unix_s = run
        .start_at
        .as_deref()
        .map(|s| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            rtload::run::start_at_from(s, now)
        })
        .transpose()
        .map_err(|e| e.to_string())?;
    Ok(rtload::run::Distributed {
        shard,
        start_at_unix_s,
        metrics_addr: run.metrics_addr,
        metrics_bound: run.metrics_addr.map(|_| {
            let (tx, rx) = crossbeam_channel::bounded::<std::net::SocketAddr>(1);
            std::thread::spawn(move || {
                if let Ok(a) = rx.recv() {
                    eprintln!("live metrics: http://{a}/metrics");
                }
            });
            tx
        }),
        record: run.record.as_ref().map(|dir| rtload::run::Record {
            dir: dir.clone(),
            max_events_per_session: run.record_max_events,
            max_blob_bytes: run.record_max_bytes,
        }),
    })
}

/// Merge, write the merged result and its `.hlog`, print the merged verdict and
/// thresholds; 0 all held, 1 a sample failed or a threshold was breached, 2 the inputs
/// could not be merged.
pub fn merge_cmd(a: &crate::cli::MergeArgs) -> ExitCode {
    let inputs = match a
        .results
        .iter()
        .map(|p| report::load_shard(p))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(i) => i,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let thresholds = match &a.scenario {
        Some(path) => match scenario_thresholds(path) {
            Ok(t) => Some(t),
            Err(code) => return code,
        },
        None => None,
    };
    let merged = match report::merge(&inputs, thresholds.as_deref()) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = report::publish_merged(&merged, &inputs, &a.output) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let c = merged.counts;
    println!(
        "verdict: {} — merged {} shard results: {} measured, {} completed, {} failed",
        rtload::report::verdict_word(merged.passed(), merged.interrupted),
        a.results.len(),
        c.measured,
        c.completed(),
        c.failed,
    );
    for w in &merged.warnings {
        println!("WARNING: {w}");
    }
    if !merged.verdicts.is_empty() {
        println!("Thresholds (on the merged result)");
        print!("{}", rtload::scenario::render_thresholds(&merged.verdicts));
    }
    eprintln!(
        "wrote {} and {}",
        a.output.display(),
        a.output.with_extension("hlog").display()
    );
    if merged.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The `[thresholds]` of `--scenario PATH` (errors printed; exit 2).
fn scenario_thresholds(
    path: &std::path::Path,
) -> Result<Vec<rtload::scenario::Threshold>, ExitCode> {
    let src = std::fs::read_to_string(path).map_err(|e| {
        eprintln!("error: cannot read {}: {e}", path.display());
        ExitCode::from(2)
    })?;
    let fail = |errors: Vec<rtload::scenario::ScenarioError>| {
        for e in errors {
            eprintln!("error: {e}");
        }
        ExitCode::from(2)
    };
    rtload::scenario::thresholds_in(path, &src).map_err(fail)
}
