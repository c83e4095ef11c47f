//! `rtload merge`, and the `--shard`/`--start-at` flags of `rtload run`.

use std::process::ExitCode;

use rtload::report::merge;

/// The distributed placement the run flags ask for.
pub fn distributed(run: &crate::cli::RunArgs) -> Result<rtload::runner::Distributed, String> {
    let shard = run
        .shard
        .as_deref()
        .map(rtload::workload::shard::Shard::parse)
        .transpose()
        .map_err(|e| e.to_string())?;
    let start_at_unix_s = run
        .start_at
        .as_deref()
        .map(rtload::workload::shard::parse_start_at)
        .transpose()
        .map_err(|e| e.to_string())?;
    Ok(rtload::runner::Distributed {
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
    })
}

/// Merge, print the merged metrics' verdicts, write the result; 0 all held, 1 a sample
/// failed or a threshold was breached, 2 the inputs could not be merged.
pub fn merge_cmd(a: &crate::cli::MergeArgs) -> ExitCode {
    let inputs: Result<Vec<_>, _> = a.results.iter().map(|p| merge::load(p)).collect();
    let merged = match inputs.and_then(|i| merge::merge(&i)) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let thresholds = match &a.scenario {
        Some(path) => {
            let src = match std::fs::read_to_string(path) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("error: cannot read {}: {e}", path.display());
                    return ExitCode::from(2);
                }
            };
            match rtload::config::thresholds::parse(path, &src) {
                Ok(t) => t,
                Err(errors) => {
                    for e in errors {
                        eprintln!("error: {e}");
                    }
                    return ExitCode::from(2);
                }
            }
        }
        None => merged.thresholds.clone(),
    };
    let mut text = serde_json::to_string_pretty(&merged.doc).unwrap_or_default();
    text.push('\n');
    if let Err(e) = rtload::util::write_atomic(&a.output, text.as_bytes()) {
        eprintln!("error: cannot write {}: {e}", a.output.display());
        return ExitCode::from(2);
    }
    println!(
        "merged {} shard results: {} measured samples, {} failed",
        a.results.len(),
        merged.measured,
        merged.failed
    );
    let verdicts = rtload::config::thresholds::evaluate(&thresholds, &merged.metrics);
    if !verdicts.is_empty() {
        println!("Thresholds (on the merged result)");
        print!("{}", rtload::config::thresholds::render(&verdicts));
    }
    eprintln!("wrote {}", a.output.display());
    if merged.failed == 0 && verdicts.iter().all(|v| v.passed) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
