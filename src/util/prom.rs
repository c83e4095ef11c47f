//! Prometheus text exposition format (version 0.0.4): a small pure encoder for gauges,
//! counters and histograms, and a parser of the sample lines a scraper needs. No IO.
//!
//! Names carry base units (seconds) as Prometheus asks: a histogram is a [`Buckets`] of
//! observations in seconds, counted into fixed `le` bounds as they arrive, with their exact
//! count and sum (every value observed is counted, the same values a result file holds).

use std::fmt::Write as _;

#[cfg(test)]
#[path = "prom_tests.rs"]
mod tests;

/// Bucket bounds (seconds) for latency-like histograms: 100 µs to 60 s.
pub const LATENCY_BUCKETS_S: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0, 30.0, 60.0,
];

/// Observations of one histogram: a count per `le` bound (each value in the first bound
/// it does not exceed, or only in `+Inf`), and the exact count and sum of every value.
#[derive(Debug, Clone)]
pub struct Buckets {
    bounds: &'static [f64],
    per_bound: Vec<u64>,
    count: u64,
    sum: f64,
}

impl Buckets {
    /// Empty, with these ascending upper bounds (e.g. [`LATENCY_BUCKETS_S`]).
    pub fn new(bounds: &'static [f64]) -> Buckets {
        Buckets {
            bounds,
            per_bound: vec![0; bounds.len()],
            count: 0,
            sum: 0.0,
        }
    }

    /// Count `v` (a non-finite value is not a measurement and is left out).
    pub fn observe(&mut self, v: f64) {
        if !v.is_finite() {
            return;
        }
        if let Some(i) = self.bounds.iter().position(|b| v <= *b) {
            self.per_bound[i] += 1;
        }
        self.count += 1;
        self.sum += v;
    }

    /// Values observed.
    #[cfg(test)]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Their sum.
    #[cfg(test)]
    pub fn sum(&self) -> f64 {
        self.sum
    }
}

/// Label pairs of one sample.
pub type Labels<'a> = &'a [(&'a str, &'a str)];

/// An exposition being written, family by family.
#[derive(Debug, Default)]
pub struct Exposition {
    out: String,
}

/// A value as Prometheus writes it (`NaN`, `+Inf`, `-Inf`, else Rust's shortest form).
pub fn fmt_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        }
    } else {
        format!("{v}")
    }
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn labels(ls: Labels<'_>, extra: Option<(&str, &str)>) -> String {
    let all: Vec<String> = ls
        .iter()
        .copied()
        .chain(extra)
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    if all.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", all.join(","))
    }
}

impl Exposition {
    fn header(&mut self, name: &str, help: &str, kind: &str) {
        let _ = writeln!(self.out, "# HELP {name} {}", help.replace('\n', " "));
        let _ = writeln!(self.out, "# TYPE {name} {kind}");
    }

    fn family(&mut self, name: &str, help: &str, kind: &str, samples: &[(Labels<'_>, f64)]) {
        self.header(name, help, kind);
        for (ls, v) in samples {
            let _ = writeln!(self.out, "{name}{} {}", labels(ls, None), fmt_value(*v));
        }
    }

    /// A gauge family (one line per label set).
    pub fn gauge(&mut self, name: &str, help: &str, samples: &[(Labels<'_>, f64)]) {
        self.family(name, help, "gauge", samples);
    }

    /// A counter family; `name` should end in `_total`.
    pub fn counter(&mut self, name: &str, help: &str, samples: &[(Labels<'_>, f64)]) {
        self.family(name, help, "counter", samples);
    }

    /// A histogram family: cumulative `_bucket{le=…}` lines (bounds in the family's
    /// unit, which `name` ends with), `+Inf`, `_sum` and `_count`.
    pub fn histogram(&mut self, name: &str, help: &str, ls: Labels<'_>, b: &Buckets) {
        self.header(name, help, "histogram");
        let mut cumulative = 0;
        for (bound, n) in b.bounds.iter().zip(&b.per_bound) {
            cumulative += n;
            let le = fmt_value(*bound);
            let _ = writeln!(
                self.out,
                "{name}_bucket{} {cumulative}",
                labels(ls, Some(("le", &le)))
            );
        }
        let _ = writeln!(
            self.out,
            "{name}_bucket{} {}",
            labels(ls, Some(("le", "+Inf"))),
            b.count
        );
        let _ = writeln!(
            self.out,
            "{name}_sum{} {}",
            labels(ls, None),
            fmt_value(b.sum)
        );
        let _ = writeln!(self.out, "{name}_count{} {}", labels(ls, None), b.count);
    }

    /// The text.
    pub fn finish(self) -> String {
        self.out
    }
}

/// One sample line of an exposition: the series (name plus labels exactly as written)
/// and its value. Comments, blank and malformed lines are skipped; a trailing timestamp
/// is ignored.
pub fn parse_samples(text: &str) -> Vec<(String, f64)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            // The series ends at the closing brace (label values may hold spaces).
            let end = match l.find('{') {
                Some(open) if l[..open].find(' ').is_none() => open + l[open..].find('}')? + 1,
                _ => l.find(' ')?,
            };
            let (series, rest) = l.split_at(end);
            let value = rest.split_whitespace().next()?;
            let v = match value {
                "+Inf" => f64::INFINITY,
                "-Inf" => f64::NEG_INFINITY,
                "NaN" => f64::NAN,
                x => x.parse().ok()?,
            };
            Some((series.to_string(), v))
        })
        .collect()
}

/// The metric name of a series (`name{labels}` → `name`).
pub fn series_name(series: &str) -> &str {
    series.split('{').next().unwrap_or(series)
}
