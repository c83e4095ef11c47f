//! Metric options: which metrics are aggregated ([`Metric`], `--percentile-metrics`),
//! which percentiles (`--metric-percentiles`), and goodput SLOs (`--goodput`, spec §7.4),
//! with the reference's error messages.

use std::collections::BTreeMap;

use super::{RequestOutcome, finite, py_float};

/// Errors from parsing metric options (`--goodput`, `--percentile-metrics`,
/// `--metric-percentiles`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MetricsError {
    /// A goodput item is not `KEY:VALUE` with a numeric value.
    #[error(
        "Invalid format found for service level objectives. Specify service level objectives for goodput as \"KEY:VALUE\" pairs, where the key is a metric name, and the value is a number in milliseconds (got {0:?})"
    )]
    GoodputFormat(String),
    /// A goodput key rtload does not know.
    #[error(
        "Invalid metric name found, {name}: {value}. The service level objective name should be one of {known}"
    )]
    GoodputUnknownKey {
        /// The key as given.
        name: String,
        /// The value, Python-formatted.
        value: String,
        /// The known keys, as a Python list.
        known: String,
    },
    /// A negative (or NaN) goodput value.
    #[error(
        "Invalid value found, {name}: {value}. The service level objective value should be non-negative."
    )]
    GoodputNegative {
        /// The key as given.
        name: String,
        /// The value, Python-formatted.
        value: String,
    },
    /// An unknown `--percentile-metrics` entry.
    #[error("unknown percentile metric {0:?}; known metrics: {known}", known = Metric::ALL.map(Metric::name).join(", "))]
    UnknownMetric(String),
    /// A `--metric-percentiles` entry that is not a number in [0, 100].
    #[error("invalid metric percentile {0:?}: percentiles must be numbers between 0 and 100")]
    BadPercentile(String),
}

/// A metric that gets mean/median/std/percentile aggregates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Metric {
    /// Time to first token (ms).
    Ttft,
    /// Time per output token, excluding the first (ms).
    Tpot,
    /// Inter-token latency (ms).
    Itl,
    /// End-to-end request latency (ms).
    E2el,
    /// Audio time to first packet (ms).
    AudioTtfp,
    /// Audio real-time factor (unitless).
    AudioRtf,
    /// Generated audio duration (s).
    AudioDuration,
    /// Streaming audio underrun (s).
    AudioUnderrun,
}

impl Metric {
    /// Every metric, in the order the summary prints them.
    pub const ALL: [Metric; 8] = [
        Metric::Ttft,
        Metric::Tpot,
        Metric::Itl,
        Metric::E2el,
        Metric::AudioTtfp,
        Metric::AudioRtf,
        Metric::AudioDuration,
        Metric::AudioUnderrun,
    ];
    /// The reference default for `--percentile-metrics`.
    #[cfg(test)]
    pub const DEFAULT: [Metric; 3] = [Metric::Ttft, Metric::Tpot, Metric::Itl];

    /// The option/JSON name (`ttft`, `audio_ttfp`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Metric::Ttft => "ttft",
            Metric::Tpot => "tpot",
            Metric::Itl => "itl",
            Metric::E2el => "e2el",
            Metric::AudioTtfp => "audio_ttfp",
            Metric::AudioRtf => "audio_rtf",
            Metric::AudioDuration => "audio_duration",
            Metric::AudioUnderrun => "audio_underrun",
        }
    }

    /// The metric called `name`, if any.
    pub fn from_name(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == name)
    }

    /// JSON key suffix: `_ms`, `` (RTF) or `_s`.
    pub fn key_suffix(self) -> &'static str {
        match self {
            Metric::AudioRtf => "",
            Metric::AudioDuration | Metric::AudioUnderrun => "_s",
            _ => "_ms",
        }
    }

    /// The unit in a summary label: ` (ms)`, ` (s)` or nothing.
    pub(super) fn label_unit(self) -> &'static str {
        match self.key_suffix() {
            "_ms" => " (ms)",
            "_s" => " (s)",
            _ => "",
        }
    }

    /// Seconds to reported units: 1000 for `_ms` metrics, else 1.
    pub fn scale(self) -> f64 {
        if self.key_suffix() == "_ms" {
            1000.0
        } else {
            1.0
        }
    }

    /// The metric's section header in the terminal summary.
    pub(super) fn header(self) -> &'static str {
        match self {
            Metric::Ttft => "Time to First Token",
            Metric::Tpot => "Time per Output Token (excl. 1st token)",
            Metric::Itl => "Inter-token Latency",
            Metric::E2el => "End-to-end Latency",
            Metric::AudioTtfp => "Time to First Packet",
            Metric::AudioRtf => "Real Time Factor",
            Metric::AudioDuration => "Audio Duration",
            Metric::AudioUnderrun => "Streaming Audio Underrun",
        }
    }

    /// Value when the sample list is empty (spec §5.1 "Empty sample lists").
    pub(super) fn empty_value(self, duplex: bool) -> f64 {
        match self {
            Metric::Tpot => f64::NAN,
            Metric::Ttft | Metric::Itl | Metric::AudioTtfp | Metric::AudioRtf if duplex => f64::NAN,
            _ => 0.0,
        }
    }

    /// Metrics with a `num_*_samples` count are reported only when they have samples.
    pub(super) fn counted(self) -> bool {
        matches!(
            self,
            Metric::Ttft | Metric::Tpot | Metric::Itl | Metric::AudioTtfp | Metric::AudioRtf
        )
    }
}

/// Parse a comma-separated `--percentile-metrics` list.
pub fn parse_metrics(list: &str) -> Result<Vec<Metric>, MetricsError> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| Metric::from_name(s).ok_or_else(|| MetricsError::UnknownMetric(s.to_owned())))
        .collect()
}

/// Parse a comma-separated `--metric-percentiles` list (default `"99"`).
pub fn parse_percentiles(list: &str) -> Result<Vec<f64>, MetricsError> {
    list.split(',')
        .map(str::trim)
        .map(|s| match s.parse::<f64>() {
            Ok(p) if (0.0..=100.0).contains(&p) => Ok(p),
            _ => Err(MetricsError::BadPercentile(s.to_owned())),
        })
        .collect()
}

/// A `--goodput` SLO key (spec §7.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GoodputKey {
    /// `ttft` (ms).
    Ttft,
    /// `tpot` (ms).
    Tpot,
    /// `e2el` (ms).
    E2el,
    /// `itl` (ms): every inter-token latency of the request must meet it.
    Itl,
    /// `audio_ttfp`, alias `audio_ttft` (ms).
    AudioTtfp,
    /// `audio_rtf` (unitless: the value is an RTF, not milliseconds).
    AudioRtf,
    /// `ttfc`: video time to first chunk (ms).
    Ttfc,
    /// `chunk_interval` (ms): every chunk interval of the request must meet it.
    ChunkInterval,
}

/// The goodput keys rtload accepts, in the order error messages list them.
pub const GOODPUT_KEYS: [&str; 9] = [
    "ttft",
    "tpot",
    "e2el",
    "itl",
    "audio_ttfp",
    "audio_ttft",
    "audio_rtf",
    "ttfc",
    "chunk_interval",
];

impl GoodputKey {
    /// The key for `name` (with the `audio_ttft` alias), if known.
    pub fn from_name(name: &str) -> Option<GoodputKey> {
        Some(match name {
            "ttft" => GoodputKey::Ttft,
            "tpot" => GoodputKey::Tpot,
            "e2el" => GoodputKey::E2el,
            "itl" => GoodputKey::Itl,
            "audio_ttfp" | "audio_ttft" => GoodputKey::AudioTtfp,
            "audio_rtf" => GoodputKey::AudioRtf,
            "ttfc" => GoodputKey::Ttfc,
            "chunk_interval" => GoodputKey::ChunkInterval,
            _ => return None,
        })
    }
}

/// Configured SLOs. Empty means goodput is not configured (`request_goodput` is null).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Goodput {
    /// SLO values as given: milliseconds, except `audio_rtf` (unitless).
    pub slos: BTreeMap<GoodputKey, f64>,
}

impl Goodput {
    /// True when no SLO is configured.
    pub fn is_empty(&self) -> bool {
        self.slos.is_empty()
    }

    /// Whether one successful request meets every SLO; a missing value fails its SLO.
    pub(super) fn is_good(&self, o: &RequestOutcome, tpot_s: Option<f64>) -> bool {
        self.slos.iter().all(|(key, slo)| {
            let limit = if *key == GoodputKey::AudioRtf {
                *slo
            } else {
                slo / 1000.0
            };
            let value = match key {
                GoodputKey::Ttft => finite(o.ttft_s),
                GoodputKey::Tpot => tpot_s,
                GoodputKey::E2el => finite(Some(o.latency_s)),
                GoodputKey::Itl => worst(&o.itl_s),
                GoodputKey::AudioTtfp => finite(o.audio_ttfp_s),
                GoodputKey::AudioRtf => finite(o.audio_rtf),
                GoodputKey::Ttfc => finite(o.ttfc_s),
                GoodputKey::ChunkInterval => worst(&o.chunk_intervals_s),
            };
            value.is_some_and(|v| v <= limit)
        })
    }
}

/// Largest value of a non-empty, all-finite list.
fn worst(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    values.iter().copied().reduce(f64::max)
}

/// Parse `--goodput KEY:VALUE ...` items (later duplicates win, like the reference).
pub fn parse_goodput(items: &[String]) -> Result<Goodput, MetricsError> {
    let mut slos = BTreeMap::new();
    for item in items {
        let mut parts = item.split(':');
        let (Some(name), Some(raw), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(MetricsError::GoodputFormat(item.clone()));
        };
        let value: f64 = raw
            .trim()
            .parse()
            .map_err(|_| MetricsError::GoodputFormat(item.clone()))?;
        let Some(key) = GoodputKey::from_name(name) else {
            let known = GOODPUT_KEYS.map(|k| format!("'{k}'")).join(", ");
            return Err(MetricsError::GoodputUnknownKey {
                name: name.to_owned(),
                value: py_float(value),
                known: format!("[{known}]"),
            });
        };
        if value.is_nan() || value < 0.0 {
            return Err(MetricsError::GoodputNegative {
                name: name.to_owned(),
                value: py_float(value),
            });
        }
        slos.insert(key, value);
    }
    Ok(Goodput { slos })
}
