//! `vllm bench serve`-style run metrics (spec §5.1, §6.1, §7.2, §7.4): per-request TPOT,
//! throughputs, mean/median/std/percentile aggregates with the reference's missing-value
//! rules, goodput, sample counts, the saved-result JSON keys, the terminal summary and the
//! default result file name.
//!
//! Pure code: request outcomes in, numbers and strings out. No clocks, no files.
//!
//! Missing values stay missing: a request without a TTFT (or TTFP, RTF, TPOT) contributes
//! no sample and is never good under an SLO on that metric; values are never paired across
//! requests. A measured zero is a valid sample.
//!
//! Layout: this file holds the request model and the calculation; `options` parses the
//! metric/percentile/goodput options; `output` turns [`BenchMetrics`] into saved-result
//! JSON, the terminal summary and the result file name.

pub use crate::util::pyfmt::py_float;
use std::collections::{BTreeMap, HashMap};

/// A finite value, or missing.
fn finite(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite())
}

/// What the engine and workload know about one benchmark request (`RequestFuncOutput`).
///
/// Times are seconds. `None` means "not measured": it is never read as zero.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestOutcome {
    /// Whether the request succeeded; failed requests only count toward `failed`.
    pub success: bool,
    /// Start time on the run clock (for the 1-s peak buckets).
    pub start_s: f64,
    /// End-to-end latency.
    pub latency_s: f64,
    /// Time to first token.
    pub ttft_s: Option<f64>,
    /// Inter-token latencies.
    pub itl_s: Vec<f64>,
    /// Seconds from the TTFT origin to the last text token, when known.
    pub text_latency_s: Option<f64>,
    /// Whether `text_latency_s` is a measurement TPOT may be derived from.
    pub tpot_measured: bool,
    /// Output token count reported by the workload (0 = unknown).
    pub output_tokens: u64,
    /// Whether the request produced any generated text.
    pub has_text: bool,
    /// Prompt length in tokens.
    pub prompt_len: u64,
    /// Audio time to first packet.
    pub audio_ttfp_s: Option<f64>,
    /// Audio real-time factor.
    pub audio_rtf: Option<f64>,
    /// Generated audio duration.
    pub audio_duration_s: f64,
    /// Generated audio frames (samples).
    pub audio_frames: u64,
    /// Streaming audio underrun.
    pub audio_underrun_s: f64,
    /// Input audio duration (for `rtfx`).
    pub input_audio_duration_s: f64,
    /// Video time to first chunk (goodput key `ttfc`).
    pub ttfc_s: Option<f64>,
    /// Video chunk intervals (goodput key `chunk_interval`).
    pub chunk_intervals_s: Vec<f64>,
    /// The output carries duplex session metrics (switches on the duplex NaN rules).
    pub has_duplex_session_metrics: bool,
}

impl RequestOutcome {
    /// Output length: `output_tokens`, else 0 when no text was generated, else 1
    /// (rtload has no tokenizer; one token is the reference's no-tokenizer placeholder).
    pub fn output_len(&self) -> u64 {
        match (self.output_tokens, self.has_text) {
            (0, false) => 0,
            (0, true) => 1,
            (n, _) => n,
        }
    }

    /// Per-request TPOT (PR-era rule): with more than one token, `mean(itl)` when ITLs
    /// exist, else `(text_latency − ttft)/(len − 1)` when measured, else missing.
    /// Zero is valid; negative or non-finite values are missing.
    pub fn tpot_s(&self) -> Option<f64> {
        let len = self.output_len();
        if len <= 1 {
            return None;
        }
        let tpot = if !self.itl_s.is_empty() {
            self.itl_s.iter().sum::<f64>() / self.itl_s.len() as f64
        } else if self.tpot_measured {
            (self.text_latency_s? - self.ttft_s.unwrap_or(0.0)) / (len - 1) as f64
        } else {
            return None;
        };
        (tpot.is_finite() && tpot >= 0.0).then_some(tpot)
    }
}

/// Mean, median, population std and percentiles of one metric, in reported units.
#[derive(Debug, Clone, PartialEq)]
pub struct Aggregate {
    /// Number of samples.
    pub count: usize,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub median: f64,
    /// Population standard deviation (ddof = 0).
    pub std: f64,
    /// `(p, value)` for each requested percentile (linear interpolation).
    pub percentiles: Vec<(f64, f64)>,
}

/// The run's serving metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchMetrics {
    /// Successful requests.
    pub completed: usize,
    /// Failed requests.
    pub failed: usize,
    /// Benchmark duration, seconds.
    pub duration_s: f64,
    /// Σ prompt length of successful requests.
    pub total_input: u64,
    /// Σ output length of successful requests.
    pub total_output: u64,
    /// completed / duration.
    pub request_throughput: f64,
    /// good completed / duration; `None` without goodput.
    pub request_goodput: Option<f64>,
    /// Completed requests meeting every goodput SLO; `None` without goodput.
    pub good_requests: Option<usize>,
    /// total_output / duration.
    pub output_throughput: f64,
    /// (total_input + total_output) / duration.
    pub total_token_throughput: f64,
    /// Peak of 1-s output-token buckets; NaN when any output carries duplex metrics.
    pub max_output_tokens_per_s: f64,
    /// Peak of 1-s active-request buckets.
    pub max_concurrent_requests: usize,
    /// Σ generated audio seconds.
    pub total_audio_duration_s: f64,
    /// Σ generated audio frames.
    pub total_audio_frames: u64,
    /// total_audio_duration / duration.
    pub audio_throughput: f64,
    /// Σ input audio seconds / duration.
    pub rtfx: f64,
    /// Aggregates for every [`Metric`].
    pub aggregates: BTreeMap<Metric, Aggregate>,
    /// Metrics selected for reporting, in the caller's order.
    pub selected: Vec<Metric>,
    /// Requested percentiles.
    pub percentiles: Vec<f64>,
    /// Output length per request in input order (0 for failures).
    pub output_lens: Vec<u64>,
}

impl BenchMetrics {
    /// Number of samples behind `metric`.
    pub fn samples(&self, metric: Metric) -> usize {
        self.aggregates.get(&metric).map_or(0, |a| a.count)
    }

    /// Whether `metric` is reported (counted metrics need at least one sample).
    pub fn has_samples(&self, metric: Metric) -> bool {
        !metric.counted() || self.samples(metric) > 0
    }
}

/// Compute the run metrics from every request outcome (warm-ups excluded by the caller).
///
/// `duration_s` ≤ 0 makes every rate NaN. Percentiles outside [0, 100] are clamped.
pub fn calculate(
    outcomes: &[RequestOutcome],
    duration_s: f64,
    goodput: &Goodput,
    selected: &[Metric],
    percentiles: &[f64],
) -> BenchMetrics {
    let t = Tally::of(outcomes, goodput);
    let duplex = outcomes.iter().any(|o| o.has_duplex_session_metrics);
    let pcts = clamp_percentiles(percentiles);
    let aggregates = t
        .samples
        .into_iter()
        .map(|(m, vals)| (m, aggregate(&vals, m.scale(), m.empty_value(duplex), &pcts)))
        .collect();
    let rate = |x: f64| {
        if duration_s > 0.0 {
            x / duration_s
        } else {
            f64::NAN
        }
    };
    let (max_output_tokens_per_s, max_concurrent_requests) = peaks(outcomes);
    BenchMetrics {
        completed: t.completed,
        failed: outcomes.len() - t.completed,
        duration_s,
        total_input: t.total_input,
        total_output: t.total_output,
        request_throughput: rate(t.completed as f64),
        request_goodput: (!goodput.is_empty()).then(|| rate(t.good as f64)),
        good_requests: (!goodput.is_empty()).then_some(t.good),
        output_throughput: rate(t.total_output as f64),
        total_token_throughput: rate((t.total_input + t.total_output) as f64),
        max_output_tokens_per_s,
        max_concurrent_requests,
        total_audio_duration_s: t.audio_s,
        total_audio_frames: t.audio_frames,
        audio_throughput: rate(t.audio_s),
        rtfx: rate(t.input_audio_s),
        aggregates,
        selected: selected.to_vec(),
        percentiles: percentiles.to_vec(),
        output_lens: t.output_lens,
    }
}

/// The requested percentiles as computed: NaN reads as 100, the rest clamped to [0, 100].
fn clamp_percentiles(percentiles: &[f64]) -> Vec<f64> {
    percentiles
        .iter()
        .map(|p| {
            if p.is_nan() {
                100.0
            } else {
                p.clamp(0.0, 100.0)
            }
        })
        .collect()
}

/// One pass over the outcomes: every metric's samples and the sums the rates divide.
struct Tally {
    /// Finite samples per metric, successful requests only, in input order.
    samples: BTreeMap<Metric, Vec<f64>>,
    /// Successful requests.
    completed: usize,
    /// Successful requests meeting every goodput SLO (0 without goodput).
    good: usize,
    /// Σ prompt length of successful requests.
    total_input: u64,
    /// Σ output length of successful requests.
    total_output: u64,
    /// Σ generated audio seconds.
    audio_s: f64,
    /// Σ generated audio frames.
    audio_frames: u64,
    /// Σ input audio seconds.
    input_audio_s: f64,
    /// Output length per request in input order (0 for failures).
    output_lens: Vec<u64>,
}

impl Tally {
    /// Tally every outcome; failed requests only add a 0 output length.
    fn of(outcomes: &[RequestOutcome], goodput: &Goodput) -> Tally {
        let mut t = Tally {
            samples: Metric::ALL.iter().map(|m| (*m, Vec::new())).collect(),
            completed: 0,
            good: 0,
            total_input: 0,
            total_output: 0,
            audio_s: 0.0,
            audio_frames: 0,
            input_audio_s: 0.0,
            output_lens: Vec::with_capacity(outcomes.len()),
        };
        for o in outcomes {
            if !o.success {
                t.output_lens.push(0);
                continue;
            }
            let len = o.output_len();
            t.output_lens.push(len);
            t.total_output += len;
            t.total_input += o.prompt_len;
            t.completed += 1;
            let tpot = o.tpot_s();
            t.push_samples(o, tpot);
            t.audio_s += o.audio_duration_s;
            t.audio_frames += o.audio_frames;
            t.input_audio_s += o.input_audio_duration_s;
            if !goodput.is_empty() && goodput.is_good(o, tpot) {
                t.good += 1;
            }
        }
        t
    }

    /// Add one successful request's samples (missing and non-finite values skipped).
    fn push_samples(&mut self, o: &RequestOutcome, tpot: Option<f64>) {
        for (m, v) in request_samples(o, tpot) {
            if let Some(list) = self.samples.get_mut(&m) {
                list.push(v);
            }
        }
    }
}

/// One successful request's samples per metric, unscaled (seconds; RTF as is), in the
/// order the aggregates take them; missing and non-finite values are left out. `tpot` is
/// [`RequestOutcome::tpot_s`]. The run's recorded values are made from the same list.
pub fn request_samples(o: &RequestOutcome, tpot: Option<f64>) -> Vec<(Metric, f64)> {
    let mut out = Vec::with_capacity(7 + o.itl_s.len());
    let mut push = |m: Metric, v: Option<f64>| {
        if let Some(v) = finite(v) {
            out.push((m, v));
        }
    };
    push(Metric::Ttft, o.ttft_s);
    push(Metric::Tpot, tpot);
    o.itl_s.iter().for_each(|v| push(Metric::Itl, Some(*v)));
    push(Metric::E2el, Some(o.latency_s));
    push(Metric::AudioTtfp, o.audio_ttfp_s);
    push(Metric::AudioRtf, o.audio_rtf);
    push(Metric::AudioDuration, Some(o.audio_duration_s));
    push(Metric::AudioUnderrun, Some(o.audio_underrun_s));
    out
}

/// Mean, median, population std and `pcts` of `values` times `scale` (`empty` for
/// every statistic when there are none): [`Summary`](crate::util::stats::Summary) of the
/// scaled values, the one rule every flat metric is read from.
pub fn aggregate(values: &[f64], scale: f64, empty: f64, pcts: &[f64]) -> Aggregate {
    let scaled: Vec<f64> = values.iter().map(|v| v * scale).collect();
    let mut asked = pcts.to_vec();
    asked.push(50.0);
    match crate::util::stats::Summary::of(&scaled, &asked) {
        None => Aggregate {
            count: 0,
            mean: empty,
            median: empty,
            std: empty,
            percentiles: pcts.iter().map(|p| (*p, empty)).collect(),
        },
        Some(s) => Aggregate {
            count: s.count,
            mean: s.mean,
            median: s.percentile(50.0).unwrap_or(f64::NAN),
            std: s.std,
            percentiles: s.percentiles[..pcts.len()].to_vec(),
        },
    }
}

/// Linear interpolation between order statistics at `p` percent (numpy's default; the
/// one rule in [`crate::util::stats`]).
#[cfg(test)]
fn percentile(sorted: &[f64], p: f64) -> f64 {
    crate::util::stats::percentile_sorted(sorted, p / 100.0).unwrap_or(f64::NAN)
}

/// Peak output tokens over 1-s buckets of successful requests, and the most successful
/// requests open at one instant (start → end; vllm counts a request in every 1-s bucket
/// it touches, which can exceed the concurrency cap: this is the definition's number).
fn peaks(outcomes: &[RequestOutcome]) -> (f64, usize) {
    let ok: Vec<&RequestOutcome> = outcomes
        .iter()
        .filter(|o| o.success && o.start_s.is_finite() && o.latency_s.is_finite())
        .collect();
    let Some(min_start) = ok.iter().map(|o| o.start_s).reduce(f64::min) else {
        return (0.0, 0);
    };
    let max_end = ok
        .iter()
        .map(|o| o.start_s + o.latency_s)
        .fold(min_start, f64::max);
    let n_buckets = (max_end - min_start).ceil() as i64 + 1;
    let bucket = |t: f64| (t - min_start).trunc() as i64;
    let mut tokens: HashMap<i64, u64> = HashMap::new();
    for o in &ok {
        let wants = o.output_tokens > 0 || !o.itl_s.is_empty() || o.has_text;
        let Some(ttft) = finite(o.ttft_s).filter(|_| wants && !o.has_duplex_session_metrics) else {
            continue;
        };
        let mut t = o.start_s + ttft;
        for step in std::iter::once(0.0).chain(o.itl_s.iter().copied()) {
            t += step;
            let b = bucket(t);
            if (0..n_buckets).contains(&b) {
                *tokens.entry(b).or_default() += 1;
            }
        }
    }
    let peak = crate::workload::kit::peak_in_flight(
        ok.iter().map(|o| (o.start_s, o.start_s + o.latency_s)),
    );
    let max_tokens = if ok.iter().any(|o| o.has_duplex_session_metrics) {
        f64::NAN
    } else {
        tokens.values().copied().max().unwrap_or(0) as f64
    };
    (max_tokens, peak)
}

/// The percentile word in keys and labels: `99`, `99.9`.
fn p_word(p: f64) -> String {
    if p.fract() == 0.0 && p.abs() < 1e15 {
        format!("{}", p as i64)
    } else {
        py_float(p)
    }
}

mod options;
mod output;
pub use options::{Goodput, Metric, parse_goodput, parse_metrics, parse_percentiles};
pub use output::{SummaryHeader, default_result_filename, render_summary, to_vllm_json_string};

#[cfg(test)]
mod tests;
