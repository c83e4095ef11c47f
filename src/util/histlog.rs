//! HdrHistogram interval log export: turns a run's per-sample metric values into the
//! standard HdrHistogram interval log (format v1.3), the text format read by the Java
//! `HistogramLogProcessor`, HdrHistogram's plotters and the `hdrhistogram` crate's
//! `IntervalLogIterator`. [`read_intervals`] reads such a log back, interval by interval.
//!
//! # Format written
//!
//! ```text
//! #[Logged with rtload 0.1.0]
//! #[Histogram log format version 1.3]
//! #[Tag=ttfc_ms: histogram values are integer microseconds (value_ms x 1000); divide by 1000 for ms]
//! #[Interval_Max column is in ms; process one tag at a time, e.g. HistogramLogProcessor -i run.hlog -tag ttfc_ms -outputValueUnitRatio 1000]
//! #[StartTime: 1700000000.000 (seconds since epoch)]
//! #[BaseTime: 1700000000.000 (seconds since epoch)]
//! "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//! #[MaxValueDivisor: 1000.000]
//! Tag=ttfc_ms,0.000,1.000,312.447,HISTFAAAA...
//! ```
//!
//! * One tagged interval histogram per (series, non-empty interval); intervals are
//!   `[k·interval_s, (k+1)·interval_s)` seconds after the run start, i.e. a sample at offset
//!   `t` falls in interval `k = ⌊t / interval_s⌋`. Lines are ordered by interval start, then
//!   by series order. Empty intervals are not written.
//! * `StartTime` and `BaseTime` are both the run start (given, never read from a clock, so
//!   the output is deterministic), so interval timestamps are seconds since the run start.
//! * Histograms hold integers: `round(value_ms × unit_scale)` — with the usual
//!   `unit_scale = 1000` that is microseconds. HdrHistogram tools assume "value units", so
//!   divide by the unit scale (`-outputValueUnitRatio 1000` for `HistogramLogProcessor`).
//!   When every series shares one unit scale it is also the `MaxValueDivisor`, so the
//!   human-readable `Interval_Max` column reads in milliseconds (as the Java writer does).
//! * Histograms have 3 significant digits, auto-resize, and are encoded with the compressed
//!   V2 encoding (`V2DeflateSerializer`), the only one the Java log reader accepts.
//! * Missing values are simply absent (never recorded as zeros). Samples with a non-finite or
//!   negative time offset or value are skipped and counted in a `#[Tag=…: skipped N …]`
//!   comment line.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, UNIX_EPOCH};

use hdrhistogram::Histogram;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::{
    IntervalLogWriterBuilder, IntervalLogWriterError, Tag,
};
use thiserror::Error;

mod read;
pub use read::{Interval, decode_b64, encode_b64, read_intervals, read_log};

/// Significant value digits of every histogram written (HdrHistogram precision: 0.1%).
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// The usual [`Series::unit_scale`]: milliseconds recorded as integer microseconds.
pub const MICROS_PER_MS: f64 = 1000.0;

/// Smallest accepted interval length: timestamps are written with millisecond precision.
pub const MIN_INTERVAL_S: f64 = 0.001;

/// The tag under which the runner logs every completed measured sample's duration
/// (connect → end, ms), stamped at the sample's end: an interval's count is the number
/// of samples that completed in it.
pub const COMPLETED_TAG: &str = "session_ms";

/// The column legend line the Java `HistogramLogWriter` writes after the headers.
pub const LEGEND: &str =
    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"";

/// One metric's values over a run, written under its own `Tag=`.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Histogram tag, e.g. `"ttfc_ms"`: non-empty, unique within a log, and free of `,`,
    /// space, `\r` and `\n`.
    pub tag: String,
    /// Multiplier from the metric's unit to the recorded integer unit: values are recorded
    /// as `round(value × unit_scale)`. Use [`MICROS_PER_MS`] (1000: microseconds for ms).
    pub unit_scale: f64,
    /// The values' unit (`ms` for latencies; `ratio`, `stalls`, … for others), named in
    /// the tag's header comment.
    pub unit: String,
    /// `(time offset in seconds since the run start, value in ms)`, any order. Only present
    /// values belong here; a missing value is left out, never sent as zero.
    pub samples: Vec<(f64, f64)>,
}

impl Series {
    /// A series recorded in microseconds ([`MICROS_PER_MS`]), the usual choice.
    pub fn micros(tag: impl Into<String>, samples: Vec<(f64, f64)>) -> Self {
        Self::thousandths(tag, "ms", samples)
    }

    /// A series of values in `unit` recorded as integer thousandths of it (×1000): for
    /// `ms` that is microseconds.
    pub fn thousandths(
        tag: impl Into<String>,
        unit: impl Into<String>,
        samples: Vec<(f64, f64)>,
    ) -> Self {
        Self {
            tag: tag.into(),
            unit_scale: MICROS_PER_MS,
            unit: unit.into(),
            samples,
        }
    }
}

/// Why an interval log could not be written.
#[derive(Debug, Error)]
pub enum HistLogError {
    /// The interval length is not finite or below [`MIN_INTERVAL_S`].
    #[error("interval length must be a finite number of seconds >= 0.001, got {0}")]
    InvalidInterval(f64),
    /// The run start is not a finite, non-negative Unix time.
    #[error("run start must be a finite, non-negative unix time in seconds, got {0}")]
    InvalidRunStart(f64),
    /// A tag is empty or contains a character the format cannot carry.
    #[error("histogram tag {0:?} must be non-empty and contain no ',', ' ', '\\r' or '\\n'")]
    InvalidTag(String),
    /// Two series share a tag, which would make their intervals indistinguishable.
    #[error("histogram tag {0:?} is used by more than one series")]
    DuplicateTag(String),
    /// A unit scale is not finite and positive.
    #[error("unit scale of series {tag:?} must be finite and > 0, got {scale}")]
    InvalidUnitScale {
        /// The series' tag.
        tag: String,
        /// The rejected scale.
        scale: f64,
    },
    /// HdrHistogram refused a value (not expected with auto-resizing histograms).
    #[error("could not record a value in histogram {tag:?}: {message}")]
    Record {
        /// The series' tag.
        tag: String,
        /// HdrHistogram's reason.
        message: String,
    },
    /// Histogram encoding failed.
    #[error("histogram serialization failed: {0}")]
    Serialize(String),
    /// Writing to the output failed.
    #[error("writing the interval log failed: {0}")]
    Io(#[from] std::io::Error),
    /// A log being read is not a readable interval log.
    #[error("{0}")]
    Parse(String),
}

/// (interval index, series index) → histogram; BTreeMap order is the output order.
type Intervals = BTreeMap<(u64, usize), Histogram<u64>>;

/// Records every usable sample into its interval's histogram; also the per-series count
/// of skipped (negative or non-finite) samples.
fn bucket_samples(
    series: &[Series],
    interval_s: f64,
) -> Result<(Intervals, Vec<usize>), HistLogError> {
    let mut intervals: Intervals = BTreeMap::new();
    let mut skipped = vec![0usize; series.len()];
    for (si, s) in series.iter().enumerate() {
        for &(t, v) in &s.samples {
            let scaled = v * s.unit_scale;
            if !t.is_finite() || t < 0.0 || !scaled.is_finite() || scaled < 0.0 {
                skipped[si] += 1;
                continue;
            }
            // Finite and non-negative: the casts floor/round and saturate, never wrap.
            let k = (t / interval_s).floor() as u64;
            let h = match intervals.entry((k, si)) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => e.insert(new_histogram(s)?),
            };
            h.record(scaled.round() as u64)
                .map_err(|e| HistLogError::Record {
                    tag: s.tag.clone(),
                    message: format!("{e:?}"),
                })?;
        }
    }
    Ok((intervals, skipped))
}

/// Writes `series` as an HdrHistogram interval log (v1.3) to `out`; see the module docs for
/// the exact layout. `run_start_unix_s` becomes `StartTime`/`BaseTime`; samples are grouped
/// into intervals of `interval_s` seconds. Writes many small pieces: pass a buffered writer.
pub fn write_interval_log(
    out: &mut impl Write,
    run_start_unix_s: f64,
    interval_s: f64,
    series: &[Series],
) -> Result<(), HistLogError> {
    if !interval_s.is_finite() || interval_s < MIN_INTERVAL_S {
        return Err(HistLogError::InvalidInterval(interval_s));
    }
    validate(series)?;
    let (intervals, skipped) = bucket_samples(series, interval_s)?;
    write_bucketed(
        out,
        run_start_unix_s,
        interval_s,
        series,
        &intervals,
        &skipped,
    )
}

/// Writes interval histograms already bucketed: `heads[i]` names tag `i` (its tag, unit
/// and scale; its samples are not read), `intervals[(k, i)]` is tag `i`'s histogram of
/// interval `k` (`[k·interval_s, (k+1)·interval_s)` after the run start) and
/// `skipped[i]` the samples tag `i` could not hold. What `rtload merge` writes the added
/// histograms of its shards with.
pub fn write_bucketed(
    out: &mut impl Write,
    run_start_unix_s: f64,
    interval_s: f64,
    heads: &[Series],
    intervals: &BTreeMap<(u64, usize), Histogram<u64>>,
    skipped: &[usize],
) -> Result<(), HistLogError> {
    if !interval_s.is_finite() || interval_s < MIN_INTERVAL_S {
        return Err(HistLogError::InvalidInterval(interval_s));
    }
    validate(heads)?;
    let series = heads;
    let run_start = Duration::try_from_secs_f64(run_start_unix_s)
        .map(|d| UNIX_EPOCH + d)
        .map_err(|_| HistLogError::InvalidRunStart(run_start_unix_s))?;
    let mut header = IntervalLogWriterBuilder::new();
    header.add_comment(&format!(
        "[Logged with rtload {}]",
        env!("CARGO_PKG_VERSION")
    ));
    header.add_comment("[Histogram log format version 1.3]");
    for (s, &n) in series
        .iter()
        .zip(skipped.iter().chain(std::iter::repeat(&0)))
    {
        header.add_comment(&format!(
            "[Tag={}: histogram values are integers in {}]",
            s.tag,
            unit_description(s.unit_scale, &s.unit)
        ));
        if n > 0 {
            header.add_comment(&format!(
                "[Tag={}: skipped {n} sample(s) with a negative or non-finite time or value]",
                s.tag
            ));
        }
    }
    let divisor = common_scale(series);
    if let (Some(scale), Some(first)) = (divisor, series.first()) {
        header.add_comment(&format!(
            "[Interval_Max column is in ms; process one tag at a time, e.g. \
             HistogramLogProcessor -i run.hlog -tag {} -outputValueUnitRatio {}]",
            first.tag,
            fmt_scale(scale)
        ));
    }
    header.with_start_time(run_start).with_base_time(run_start);

    let mut serializer = V2DeflateSerializer::new();
    // The crate's builder writes the comments and StartTime/BaseTime; the legend (not a
    // comment) follows them, then a second builder (which writes the MaxValueDivisor line,
    // if any, and nothing else) writes the data.
    header.begin_log_with(out, &mut serializer)?;
    writeln!(out, "{LEGEND}")?;
    let mut writer = IntervalLogWriterBuilder::new()
        .with_max_value_divisor(divisor.unwrap_or(1.0))
        .begin_log_with(out, &mut serializer)?;
    let interval = Duration::from_secs_f64(interval_s);
    for ((k, si), h) in intervals {
        let s = &series[*si];
        let start = Duration::from_secs_f64(*k as f64 * interval_s);
        let tag = Tag::new(&s.tag).ok_or_else(|| HistLogError::InvalidTag(s.tag.clone()))?;
        writer
            .write_histogram(h, start, interval, Some(tag))
            .map_err(|e| match e {
                IntervalLogWriterError::IoError(e) => HistLogError::Io(e),
                IntervalLogWriterError::SerializeError(e) => HistLogError::Serialize(e.to_string()),
            })?;
    }
    out.flush()?;
    Ok(())
}

fn validate(series: &[Series]) -> Result<(), HistLogError> {
    for (i, s) in series.iter().enumerate() {
        if s.tag.is_empty() || Tag::new(&s.tag).is_none() {
            return Err(HistLogError::InvalidTag(s.tag.clone()));
        }
        if series[..i].iter().any(|p| p.tag == s.tag) {
            return Err(HistLogError::DuplicateTag(s.tag.clone()));
        }
        if !s.unit_scale.is_finite() || s.unit_scale <= 0.0 {
            return Err(HistLogError::InvalidUnitScale {
                tag: s.tag.clone(),
                scale: s.unit_scale,
            });
        }
    }
    Ok(())
}

fn new_histogram(s: &Series) -> Result<Histogram<u64>, HistLogError> {
    Histogram::new(SIGNIFICANT_DIGITS).map_err(|e| HistLogError::Record {
        tag: s.tag.clone(),
        message: format!("{e:?}"),
    })
}

/// The unit scale shared by every series, if any (exact equality: scales are constants).
fn common_scale(series: &[Series]) -> Option<f64> {
    let first = series.first()?.unit_scale;
    series
        .iter()
        .all(|s| s.unit_scale.to_bits() == first.to_bits())
        .then_some(first)
}

fn unit_description(scale: f64, unit: &str) -> String {
    let scale_s = fmt_scale(scale);
    if unit != "ms" {
        let unit = if unit.is_empty() { "the value" } else { unit };
        return format!("{unit} x {scale_s}; divide by {scale_s} for {unit}");
    }
    let name = match scale_s.as_str() {
        "1" => "milliseconds",
        "1000" => "microseconds",
        "1000000" => "nanoseconds",
        _ => "scaled units",
    };
    format!("{name} (value_ms x {scale_s}); divide by {scale_s} for ms")
}

/// `1000.0` → `"1000"`, `0.5` → `"0.5"`.
fn fmt_scale(scale: f64) -> String {
    format!("{scale}")
}

#[cfg(test)]
#[path = "histlog_tests.rs"]
mod tests;
