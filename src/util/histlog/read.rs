//! Reading an HdrHistogram interval log back, one tagged histogram per interval (what
//! `rtload report` draws over run time, and what `rtload merge` adds up per tag).
//!
//! Interval start times are seconds since the log's start: rtload writes `BaseTime` =
//! `StartTime` = the run start and relative timestamps, used as they are. A log from
//! another writer with absolute timestamps (no `BaseTime`, timestamps at or after its
//! `StartTime`) has its `StartTime` subtracted, so both read as "seconds since run start".

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

use super::HistLogError;

/// One interval histogram of a log.
#[derive(Debug, Clone)]
pub struct Interval {
    /// The `Tag=` of the line (empty when the line has none).
    pub tag: String,
    /// Interval start, seconds since the run start.
    pub start_s: f64,
    /// Interval length, seconds.
    pub length_s: f64,
    /// The interval's values, in the log's integer unit (rtload: µs, see
    /// [`super::MICROS_PER_MS`]).
    pub hist: Histogram<u64>,
}

/// Every interval histogram of the log `text`, in file order.
pub fn read_intervals(text: &[u8]) -> Result<Vec<Interval>, HistLogError> {
    read_log(text).map(|(_, iv)| iv)
}

/// [`read_intervals`], with the log's `StartTime` (unix seconds) when it has one: what
/// lines several logs up on one clock.
pub fn read_log(text: &[u8]) -> Result<(Option<f64>, Vec<Interval>), HistLogError> {
    let (mut start, mut base) = (None, None);
    let mut out = Vec::new();
    for entry in IntervalLogIterator::new(text) {
        let entry =
            entry.map_err(|e| HistLogError::Parse(format!("not an interval log: {e:?}")))?;
        let ilh = match entry {
            LogEntry::StartTime(d) => {
                start = Some(d.as_secs_f64());
                continue;
            }
            LogEntry::BaseTime(d) => {
                base = Some(d.as_secs_f64());
                continue;
            }
            LogEntry::Interval(ilh) => ilh,
        };
        let tag = ilh
            .tag()
            .map_or_else(String::new, |t| t.as_str().to_owned());
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(ilh.encoded_histogram())
            .map_err(|e| HistLogError::Parse(format!("tag {tag}: bad base64: {e}")))?;
        let hist: Histogram<u64> = Deserializer::new()
            .deserialize(&mut &bytes[..])
            .map_err(|e| HistLogError::Parse(format!("tag {tag}: bad histogram: {e:?}")))?;
        let at = ilh.start_timestamp().as_secs_f64();
        let start_s = match (base, start) {
            (None, Some(s)) if at >= s => at - s,
            _ => at,
        };
        out.push(Interval {
            tag,
            start_s,
            length_s: ilh.duration().as_secs_f64(),
            hist,
        });
    }
    Ok((start, out))
}

/// One histogram as text (V2 deflate, base64: an interval log line's payload), for a
/// result block that must stay mergeable (`rtload merge` adds them back up exactly).
pub fn encode_b64(h: &Histogram<u64>) -> Result<String, HistLogError> {
    let mut bytes = Vec::new();
    hdrhistogram::serialization::Serializer::serialize(
        &mut hdrhistogram::serialization::V2DeflateSerializer::new(),
        h,
        &mut bytes,
    )
    .map_err(|e| HistLogError::Serialize(format!("{e:?}")))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// The histogram [`encode_b64`] wrote.
pub fn decode_b64(text: &str) -> Result<Histogram<u64>, HistLogError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| HistLogError::Parse(format!("bad base64: {e}")))?;
    Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| HistLogError::Parse(format!("bad histogram: {e:?}")))
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
