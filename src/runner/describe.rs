//! The resolved plan of a scenario as `rtload check` prints it: target, TLS, workload,
//! samples, concurrency, metrics, arrivals, the expected duration and the thresholds the
//! run will hold its results to.

use crate::config::scenario::Scenario;
use crate::util::target::{redact_url, resolve_url};
use crate::workload::shard::Shard;

/// The resolved plan of a scenario, as `rtload check` prints it; for the process `shard`
/// of a distributed run (`--shard I/N`) the thresholds are then left to `rtload merge`.
pub fn describe_placed(s: &Scenario, shard: Option<Shard>) -> String {
    let w = s.workload();
    let target = match &s.target() {
        Some(t) => resolve_url(t, w.default_path())
            .map_or_else(|e| format!("{t} (invalid: {e})"), |u| redact_url(&u)),
        None => format!(
            "embedded reference server, ws://127.0.0.1:<any free port>{}",
            w.default_path()
        ),
    };
    let mut out = format!("{} ({})\n", s.name(), s.path().display());
    let mut row = |k: &str, v: String| out.push_str(&format!("  {k:<18} {v}\n"));
    row("target", target);
    if s.target()
        .is_some_and(|t| resolve_url(t, w.default_path()).is_ok_and(|u| u.starts_with("wss://")))
    {
        row("tls", s.tls().describe());
    } else if *s.tls() != crate::engine::tls::TlsOptions::default() {
        row("tls", "not used (plain ws:// target)".to_string());
    }
    row(
        "wire",
        crate::engine::transport::describe_wire(s.compression(), s.retry_rejected()),
    );
    row("workload", w.kind().to_string());
    for (k, v) in w.describe() {
        row(&format!("  {k}"), v.clone());
    }
    row(
        "samples",
        format!(
            "{} measured + {} warm-up",
            s.samples(),
            s.load().warmup_samples
        ),
    );
    row(
        "concurrency",
        format!("at most {}", s.load().max_concurrency),
    );
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
    for (k, v) in arrivals(s) {
        row(k, v);
    }
    if let Some(j) = &s.output_json() {
        row("json result", j.display().to_string());
    }
    for (k, v) in thresholds(s, shard.filter(|sh| sh.count > 1)) {
        row(&k, v);
    }
    if !s.slo().is_empty() {
        let n = s.slo().len();
        row(
            "session slo",
            format!("{n}, a completed session breaking one is degraded"),
        );
        for b in s.slo() {
            row(&format!("  {}", b.metric), b.expr.clone());
        }
    }
    out
}

/// Every metric `s` reports, one row per scalar and per distribution (its statistics
/// folded into `name.<stat>`): unit, which way is better, and what it is measured from
/// and to — the catalogue's `measurement_origin`, as the JSON result carries it.
pub fn describe_metrics(s: &Scenario) -> String {
    let cat = s.workload().catalogue();
    let mut rows: Vec<[String; 4]> = Vec::new();
    for m in cat.metrics() {
        let name = match &m.distribution {
            Some(d) if m.name.ends_with(".count") => continue,
            Some(d) if rows.iter().any(|r| r[0] == format!("{d}.<stat>")) => continue,
            Some(d) => format!("{d}.<stat>"),
            None => m.name.clone(),
        };
        rows.push([
            name,
            m.unit.clone(),
            direction_words(m.direction).to_string(),
            m.origin.clone(),
        ]);
    }
    let w = rows.iter().map(|r| r[0].len()).max().unwrap_or(0);
    let u = rows.iter().map(|r| r[1].len()).max().unwrap_or(0);
    let mut out = format!(
        "  metrics (<stat>: count mean std min p50 p90 p95 p99 max; aliases: {})\n",
        cat.aliases().len()
    );
    for [name, unit, better, origin] in rows {
        out.push_str(&format!(
            "    {name:<w$}  {unit:<u$}  {better:<16}  {origin}\n"
        ));
    }
    out
}

/// The `arrivals` and `expected` rows: the plan's releases and how long the run should
/// take against a server that keeps real time.
fn arrivals(s: &Scenario) -> Vec<(&'static str, String)> {
    let w = s.workload();
    let p = match crate::workload::plan::plan(s.samples(), &s.load().arrival) {
        Ok(p) => p,
        Err(e) => return vec![("arrivals", format!("invalid: {e}"))],
    };
    let span = p.offsets_s.last().copied().unwrap_or(0.0);
    let expected = match w.expected_session_s() {
        Some(one) => {
            let waves = s.samples().div_ceil(s.load().max_concurrency.max(1)) as f64;
            format!(
                "≈ {:.1} s if the server keeps real time ({:.1} s per session, releases over {span:.1} s)",
                (waves * one).max(span + one),
                one
            )
        }
        None => format!(
            "at least {span:.1} s of releases; session length depends on the inputs and the server"
        ),
    };
    let mut rows = vec![
        ("arrivals", crate::workload::plan::summary(&p)),
        ("expected", expected),
    ];
    let series = crate::util::textpos::num(s.load().series_interval_s);
    if let Some(d) = s.load().duration_s {
        let held = format!(
            "each session held {} s (`[load] duration_s`: the turn ending at or after it is \
             the last); RSS, CPU and session-age series every {series} s",
            crate::util::textpos::num(d)
        );
        rows.push(("soak", held));
    }
    rows
}

/// The `thresholds` rows: how many and who applies them, then each metric with its
/// operator and bound (and the metric's unit and direction).
fn thresholds(s: &Scenario, shard: Option<Shard>) -> Vec<(String, String)> {
    let t = s.thresholds();
    if t.is_empty() {
        return vec![(
            "thresholds".into(),
            "none: the run passes when every measured sample succeeds".into(),
        )];
    }
    let who = match shard {
        Some(sh) => format!(
            "left to `rtload merge` (shard {sh} of a sharded run: evaluated on the merged result)"
        ),
        None => "applied to the measured samples' results (a failed one exits 1)".into(),
    };
    let cat = s.workload().catalogue();
    let mut rows = vec![("thresholds".to_string(), format!("{}, {who}", t.len()))];
    for th in t {
        let about = cat.get(&th.metric).map_or(String::new(), |m| {
            format!("  ({}, {})", m.unit, direction_words(m.direction))
        });
        rows.push((format!("  {}", th.metric), format!("{}{about}", th.expr)));
    }
    rows
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
