//! `rtload report`: result files rendered as one HTML page, or (`--recompute DIR`) a
//! recorded run's report, verdicts and exit status recomputed from its trace alone.

use std::process::ExitCode;

use rtload::report::redact_text;
use rtload::run::Distributed;

use crate::cli;

pub(crate) fn report_cmd(a: &cli::ReportArgs) -> ExitCode {
    if let Some(dir) = &a.recompute {
        return recompute_cmd(dir, a.output_json.as_deref());
    }
    if a.output_json.is_some() {
        eprintln!("error: --output-json goes with --recompute DIR (an HTML report is --html)");
        return ExitCode::from(2);
    }
    let Some(html_path) = &a.html else {
        eprintln!("error: --html OUT.html is required (or --recompute DIR)");
        return ExitCode::from(2);
    };
    let mut docs = Vec::new();
    for p in &a.results {
        match rtload::report::read_result(p) {
            Ok(doc) => docs.push(rtload::report::HtmlInput {
                name: p.display().to_string(),
                doc,
                log: rtload::report::interval_log(p),
            }),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let html = match rtload::report::render_html(&docs) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match rtload::report::write_atomic(html_path, redact_text(&html).as_bytes()) {
        Ok(()) => {
            eprintln!("wrote {}", html_path.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", html_path.display());
            ExitCode::from(2)
        }
    }
}

/// `rtload report --recompute DIR`: the recorded run's report, verdicts and exit status
/// from its trace alone (what a trace cannot hold is named on stderr).
fn recompute_cmd(dir: &std::path::Path, output_json: Option<&std::path::Path>) -> ExitCode {
    match rtload::report::recompute(dir, output_json) {
        Ok(r) => {
            eprintln!(
                "recomputed from {} (the trace alone); absent: {}",
                dir.display(),
                rtload::report::RECOMPUTE_ABSENT.join("; ")
            );
            if let Some(scratch) = &r.scratch {
                eprintln!(
                    "the workload's own outputs (bundles, saved result) went to a scratch \
folder, {}, removed once the report was made: the recorded run's are left as they were",
                    scratch.display()
                );
            }
            crate::report_run(&r.summary, &r.scenario, &Distributed::default())
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
