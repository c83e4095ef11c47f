//! How [`BenchMetrics`] leave the process: the saved-result keys (§6.1), Python-compatible
//! JSON text with bare `NaN`, the `vllm bench serve` terminal summary, and the default
//! result file name.

use serde_json::{Map, Value};

use super::{BenchMetrics, Metric, p_word, py_float};

/// String markers standing for non-finite floats inside a `serde_json::Value`, which
/// cannot hold NaN or infinities: `(marker, text written by to_vllm_json_string)`.
///
/// The markers start with a NUL character, so they cannot collide with real strings
/// in a result. Use [`json_f64`] to build values and [`json_as_f64`] to read them.
pub const NONFINITE_MARKERS: [(&str, &str); 3] = [
    ("\u{0}rtload:NaN", "NaN"),
    ("\u{0}rtload:Infinity", "Infinity"),
    ("\u{0}rtload:-Infinity", "-Infinity"),
];

/// A float as a JSON value; NaN and infinities become their [`NONFINITE_MARKERS`] marker.
pub fn json_f64(x: f64) -> Value {
    let marker = if x.is_nan() {
        NONFINITE_MARKERS[0].0
    } else if x == f64::INFINITY {
        NONFINITE_MARKERS[1].0
    } else if x == f64::NEG_INFINITY {
        NONFINITE_MARKERS[2].0
    } else {
        return Value::from(x);
    };
    Value::String(marker.to_owned())
}

/// Read a number or a non-finite marker back as a float.
#[cfg(test)]
pub fn json_as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::String(s) if s == NONFINITE_MARKERS[0].0 => Some(f64::NAN),
        Value::String(s) if s == NONFINITE_MARKERS[1].0 => Some(f64::INFINITY),
        Value::String(s) if s == NONFINITE_MARKERS[2].0 => Some(f64::NEG_INFINITY),
        _ => v.as_f64(),
    }
}

impl BenchMetrics {
    /// The metric keys of vllm's saved result (§6.1). `request_goodput` is null without
    /// goodput; `mean_/median_/std_/pNN_<metric><unit>` appear for each selected metric
    /// that has samples. Non-finite values are [`NONFINITE_MARKERS`] markers; write the
    /// map with [`to_vllm_json_string`].
    pub fn to_json_map(&self) -> Map<String, Value> {
        let mut m = Map::new();
        let mut put = |k: &str, v: Value| {
            m.insert(k.to_owned(), v);
        };
        put("completed", self.completed.into());
        put("failed", self.failed.into());
        put("duration", json_f64(self.duration_s));
        put("total_input_tokens", self.total_input.into());
        put("total_output_tokens", self.total_output.into());
        put("request_throughput", json_f64(self.request_throughput));
        put(
            "request_goodput",
            self.request_goodput.map_or(Value::Null, json_f64),
        );
        put("output_throughput", json_f64(self.output_throughput));
        put(
            "total_token_throughput",
            json_f64(self.total_token_throughput),
        );
        put(
            "total_audio_duration_s",
            json_f64(self.total_audio_duration_s),
        );
        put("total_audio_frames", self.total_audio_frames.into());
        put("audio_throughput", json_f64(self.audio_throughput));
        put(
            "max_output_tokens_per_s",
            json_f64(self.max_output_tokens_per_s),
        );
        put(
            "max_concurrent_requests",
            self.max_concurrent_requests.into(),
        );
        put("rtfx", json_f64(self.rtfx));
        for metric in [
            Metric::Ttft,
            Metric::Tpot,
            Metric::Itl,
            Metric::AudioTtfp,
            Metric::AudioRtf,
        ] {
            put(
                &format!("num_{}_samples", metric.name()),
                self.samples(metric).into(),
            );
        }
        for metric in self.reported() {
            let Some(agg) = self.aggregates.get(&metric) else {
                continue;
            };
            let (name, unit) = (metric.name(), metric.key_suffix());
            put(&format!("mean_{name}{unit}"), json_f64(agg.mean));
            put(&format!("median_{name}{unit}"), json_f64(agg.median));
            put(&format!("std_{name}{unit}"), json_f64(agg.std));
            for (p, v) in &agg.percentiles {
                put(&format!("p{}_{name}{unit}", p_word(*p)), json_f64(*v));
            }
        }
        m
    }

    /// Selected metrics that are reported, in canonical order, without duplicates.
    fn reported(&self) -> Vec<Metric> {
        Metric::ALL
            .into_iter()
            .filter(|m| self.selected.contains(m) && self.has_samples(*m))
            .collect()
    }
}

/// Serialize like Python's `json.dumps(obj)`: `", "` and `": "` separators, ASCII-only
/// strings with lowercase `\uXXXX` escapes, floats in `repr` form (`1.0`, `1e-05`), and
/// non-finite markers as bare `NaN` / `Infinity` / `-Infinity`.
///
/// The output is therefore **not strict JSON** whenever a value is non-finite, exactly
/// like the reference's saved results; strict parsers reject it, Python's `json` and most
/// "JSON5"-tolerant readers accept it.
pub fn to_vllm_json_string(map: &Map<String, Value>) -> String {
    let mut out = String::new();
    write_object(&mut out, map);
    out
}

fn write_object(out: &mut String, map: &Map<String, Value>) {
    out.push('{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_str(out, k);
        out.push_str(": ");
        write_value(out, v);
    }
    out.push('}');
}

fn write_value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) if !n.is_f64() => out.push_str(&u.to_string()),
            (_, Some(i), _) if !n.is_f64() => out.push_str(&i.to_string()),
            (_, _, Some(f)) => out.push_str(&py_float(f)),
            _ => out.push_str(&n.to_string()),
        },
        Value::String(s) => match NONFINITE_MARKERS.iter().find(|(m, _)| m == s) {
            Some((_, bare)) => out.push_str(bare),
            None => write_str(out, s),
        },
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => write_object(out, map),
    }
}

fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
}

/// Run facts the summary prints besides the metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryHeader {
    /// `--max-concurrency`, when set.
    pub max_concurrency: Option<usize>,
    /// Configured request rate (RPS); infinity when unset (then not printed).
    pub request_rate: f64,
}

impl Default for SummaryHeader {
    fn default() -> Self {
        SummaryHeader {
            max_concurrency: None,
            request_rate: f64::INFINITY,
        }
    }
}

/// Python's `format(x, ".2f")` (`nan`, `inf` for non-finite values).
fn f2(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        py_float(x)
    }
}

fn row(out: &mut Vec<String>, label: &str, value: impl std::fmt::Display) {
    out.push(format!("{label:<40} {value:<10}"));
}

/// The terminal summary in `vllm bench serve`'s layout: labels left-aligned in 40
/// columns, values left-aligned in 10 (`{:<40} {:<10.2f}`), one `-`-centred section per
/// selected metric with samples (Mean, Median, then each percentile). Every line ends
/// with `\n`; trailing blanks from the 10-column value field are kept as vllm prints them.
pub fn render_summary(m: &BenchMetrics, header: &SummaryHeader) -> String {
    let mut out = vec![format!("{:=^50}", " Serving Benchmark Result ")];
    row(&mut out, "Successful requests:", m.completed);
    row(&mut out, "Failed requests:", m.failed);
    if let Some(c) = header.max_concurrency {
        row(&mut out, "Maximum request concurrency:", c);
    }
    if header.request_rate != f64::INFINITY {
        row(
            &mut out,
            "Request rate configured (RPS):",
            f2(header.request_rate),
        );
    }
    row(&mut out, "Benchmark duration (s):", f2(m.duration_s));
    row(&mut out, "Total input tokens:", m.total_input);
    row(&mut out, "Total generated tokens:", m.total_output);
    row(
        &mut out,
        "Request throughput (req/s):",
        f2(m.request_throughput),
    );
    if let Some(g) = m.request_goodput {
        row(&mut out, "Request goodput (req/s):", f2(g));
    }
    row(
        &mut out,
        "Output token throughput (tok/s):",
        f2(m.output_throughput),
    );
    // Duplex outputs carry no per-token times: the peak is unknown (vllm's NaN in JSON).
    if m.max_output_tokens_per_s.is_finite() {
        row(
            &mut out,
            "Peak output token throughput (tok/s):",
            f2(m.max_output_tokens_per_s),
        );
    }
    row(
        &mut out,
        "Peak concurrent requests:",
        f2(m.max_concurrent_requests as f64),
    );
    row(
        &mut out,
        "Total Token throughput (tok/s):",
        f2(m.total_token_throughput),
    );
    if m.total_audio_duration_s > 0.0 || m.total_audio_frames > 0 {
        row(
            &mut out,
            "Total audio duration generated(s):",
            f2(m.total_audio_duration_s),
        );
        row(
            &mut out,
            "Total audio frames generated:",
            m.total_audio_frames,
        );
        row(
            &mut out,
            "Audio throughput(audio duration/s):",
            f2(m.audio_throughput),
        );
    }
    for metric in m.reported() {
        let Some(agg) = m.aggregates.get(&metric) else {
            continue;
        };
        let (label, unit) = (metric.name().to_uppercase(), metric.label_unit());
        out.push(format!("{:-^50}", metric.header()));
        row(&mut out, &format!("Mean {label}{unit}:"), f2(agg.mean));
        row(&mut out, &format!("Median {label}{unit}:"), f2(agg.median));
        for (p, v) in &agg.percentiles {
            row(&mut out, &format!("P{} {label}{unit}:", p_word(*p)), f2(*v));
        }
    }
    out.push("=".repeat(50));
    out.into_iter().map(|l| l + "\n").collect()
}

/// vllm's default result file name:
/// `<label or backend>-<request_rate>qps[-concurrency<N>]-<model basename>-<YYYYmmdd-HHMMSS>.json`,
/// with the rate written like Python's `str(float)` (`inf`, `2.0`, `0.5`).
pub fn default_result_filename(
    label_or_backend: &str,
    request_rate: f64,
    max_concurrency: Option<usize>,
    model: &str,
    now_yyyymmdd_hhmmss: &str,
) -> String {
    let model_base = model.rsplit('/').next().unwrap_or(model);
    let concurrency = max_concurrency
        .map(|c| format!("-concurrency{c}"))
        .unwrap_or_default();
    format!(
        "{label_or_backend}-{}qps{concurrency}-{model_base}-{now_yyyymmdd_hhmmss}.json",
        py_float(request_rate)
    )
}
