//! The resolved plan of a scenario as `rtload check` prints it: target, TLS, workload,
//! samples, concurrency, metrics, arrivals and the expected duration.

use crate::config::scenario::Scenario;
use crate::util::target::{redact_url, resolve_url};

/// The resolved plan of a scenario, as `rtload check` prints it.
pub fn describe(s: &Scenario) -> String {
    let w = &s.workload;
    let target = match &s.target {
        Some(t) => resolve_url(t, w.default_path())
            .map_or_else(|e| format!("{t} (invalid: {e})"), |u| redact_url(&u)),
        None => format!(
            "embedded reference server, ws://127.0.0.1:<any free port>{}",
            w.default_path()
        ),
    };
    let mut out = format!("{} ({})\n", s.name, s.path.display());
    let mut row = |k: &str, v: String| out.push_str(&format!("  {k:<18} {v}\n"));
    row("target", target);
    if s.target
        .as_deref()
        .is_some_and(|t| resolve_url(t, w.default_path()).is_ok_and(|u| u.starts_with("wss://")))
    {
        row("tls", s.tls.describe());
    } else if s.tls != crate::engine::tls::TlsOptions::default() {
        row("tls", "not used (plain ws:// target)".to_string());
    }
    row(
        "wire",
        crate::engine::transport::describe_wire(s.compression),
    );
    row("workload", w.kind().to_string());
    for (k, v) in w.describe() {
        row(&format!("  {k}"), v);
    }
    row(
        "samples",
        format!(
            "{} measured + {} warm-up",
            s.load.samples, s.load.warmup_samples
        ),
    );
    row("concurrency", format!("at most {}", s.load.max_concurrency));
    let cat = w.catalogue();
    let headline: Vec<String> = cat
        .headline()
        .iter()
        .filter_map(|h| cat.get(h))
        .map(|m| format!("{} ({}, {})", m.name, m.unit, direction_words(m.direction)))
        .collect();
    row(
        "metrics",
        format!(
            "{} reported; headline: {}",
            cat.metrics().len(),
            headline.join(", ")
        ),
    );
    match crate::workload::plan::plan(s.load.samples, &s.load.arrival) {
        Ok(p) => {
            row("arrivals", crate::workload::plan::summary(&p));
            let span = p.offsets_s.last().copied().unwrap_or(0.0);
            row(
                "expected",
                match w.expected_session_s() {
                    Some(one) => {
                        let waves = s.load.samples.div_ceil(s.load.max_concurrency.max(1)) as f64;
                        format!(
                            "≈ {:.1} s if the server keeps real time ({:.1} s per session, releases over {span:.1} s)",
                            (waves * one).max(span + one),
                            one
                        )
                    }
                    None => format!(
                        "at least {span:.1} s of releases; session length depends on the inputs and the server"
                    ),
                },
            );
        }
        Err(e) => row("arrivals", format!("invalid: {e}")),
    }
    if let Some(j) = &s.output_json {
        row("json result", j.display().to_string());
    }
    out
}

/// How a direction reads in `check` output.
pub fn direction_words(d: crate::workload::catalogue::Direction) -> &'static str {
    use crate::workload::catalogue::Direction;
    match d {
        Direction::Lower => "lower is better",
        Direction::Higher => "higher is better",
        Direction::NotAScore => "not a score",
    }
}
