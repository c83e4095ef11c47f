//! Prometheus text exposition format (version 0.0.4): a small pure encoder for gauges,
//! counters and histograms, and a parser of the sample lines a scraper needs. No IO.
//!
//! Histograms come from HdrHistograms of integer microseconds (as everywhere in rtload)
//! and are exposed in milliseconds with fixed `le` buckets; `_sum` is tracked exactly by
//! the caller (HdrHistogram keeps no sum).

use std::fmt::Write as _;

use hdrhistogram::Histogram;

#[cfg(test)]
#[path = "prom_tests.rs"]
mod tests;

/// Bucket bounds (ms) for latency-like histograms: 0.1 ms to 60 s.
pub const LATENCY_BUCKETS_MS: &[f64] = &[
    0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0,
    10000.0, 30000.0, 60000.0,
];

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

    /// A histogram of `h` (integer µs) in ms with cumulative `le` buckets, `_sum` (ms,
    /// exact, from the caller) and `_count`.
    pub fn histogram_ms(
        &mut self,
        name: &str,
        help: &str,
        ls: Labels<'_>,
        h: &Histogram<u64>,
        sum_ms: f64,
    ) {
        self.header(name, help, "histogram");
        for &b in LATENCY_BUCKETS_MS {
            let le_us = (b * 1000.0).round() as u64;
            let n = if h.is_empty() {
                0
            } else {
                h.count_between(0, le_us)
            };
            let le = fmt_value(b);
            let _ = writeln!(
                self.out,
                "{name}_bucket{} {n}",
                labels(ls, Some(("le", &le)))
            );
        }
        let _ = writeln!(
            self.out,
            "{name}_bucket{} {}",
            labels(ls, Some(("le", "+Inf"))),
            h.len()
        );
        let _ = writeln!(
            self.out,
            "{name}_sum{} {}",
            labels(ls, None),
            fmt_value(sum_ms)
        );
        let _ = writeln!(self.out, "{name}_count{} {}", labels(ls, None), h.len());
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
