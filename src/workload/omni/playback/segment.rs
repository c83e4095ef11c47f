//! A segment of output audio on the serial clock: the public [`Segment`] reports and
//! artifacts read, the compact form the clock keeps per received audio delta, and the
//! bytes a finished session's segments are spilled as ([`encode`], [`decode`]), so a
//! run's finished sessions do not hold one record per delta until the report.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;

use super::OUTPUT_RATE;
use crate::workload::spool::Span;

/// Tolerance, in samples, when converting elapsed time to played samples.
const EPS_SAMPLES: f64 = 1e-3;

/// One stretch of output audio on the serial clock.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// The response it belongs to.
    pub response_id: Arc<str>,
    /// Playback start, seconds (`max(receipt, previous segment end)`).
    pub start_s: f64,
    /// Playback end, seconds (`start + samples / 24000`).
    pub end_s: f64,
    /// PCM16 samples (after any barge-in truncation).
    pub samples: u64,
    /// Index of the first sample that is not silence, if any.
    pub first_nonzero: Option<u64>,
    /// The PCM16 bytes, when the session keeps audio (in memory or spooled); empty
    /// otherwise.
    pub pcm: SegmentPcm,
}

/// Where a segment's kept PCM16 bytes are.
#[derive(Debug, Clone, PartialEq)]
pub enum SegmentPcm {
    /// Held in memory (sessions without a spool, and nothing kept: empty).
    Memory(Bytes),
    /// Spilled to the run's spool; read back after the run.
    Spooled(Span),
}

impl Default for SegmentPcm {
    fn default() -> Self {
        Self::Memory(Bytes::new())
    }
}

impl SegmentPcm {
    /// Length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Self::Memory(b) => b.len(),
            Self::Spooled(s) => s.len as usize,
        }
    }
    /// No bytes kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Keep the first `n` bytes (a spooled span only shrinks its length).
    pub fn truncate(&mut self, n: usize) {
        match self {
            Self::Memory(b) => b.truncate(n),
            Self::Spooled(s) => s.len = s.len.min(n as u64),
        }
    }
}

/// Where a kept segment's PCM is, as the clock stores it.
#[derive(Debug, Clone, Copy)]
pub(super) enum PcmRef {
    None,
    /// An index into the clock's in-memory PCM.
    Memory(u32),
    /// A logical spool file and the offset there.
    Spooled {
        file: u64,
        offset: u64,
    },
}

/// A segment as the clock keeps it (48 bytes, a third of a [`Segment`]: a long session
/// holds one per audio delta). Its end is `start + samples / 24000`, computed exactly as
/// the clock always did; the public [`Segment`] is built from it on the way out.
#[derive(Debug, Clone, Copy)]
pub(super) struct Seg {
    pub(super) start_s: f64,
    pub(super) resp: u32,
    pub(super) samples: u32,
    /// The first non-silent sample, [`NO_SAMPLE`] for none.
    pub(super) first_nonzero: u32,
    /// Kept PCM bytes (after any barge-in truncation).
    pub(super) pcm_len: u32,
    pub(super) pcm: PcmRef,
}

/// [`Seg::first_nonzero`] when every sample is silence.
pub(super) const NO_SAMPLE: u32 = u32::MAX;

impl Seg {
    /// Playback end: `start + samples / 24000`.
    pub(super) fn end_s(&self) -> f64 {
        self.start_s + f64::from(self.samples) / OUTPUT_RATE as f64
    }
}

/// Samples of `seg` played by `now_s`.
pub(super) fn played_samples(seg: &Seg, now_s: f64) -> u64 {
    let x = ((now_s - seg.start_s) * OUTPUT_RATE as f64 + EPS_SAMPLES).floor();
    if x <= 0.0 {
        0
    } else {
        (x as u64).min(u64::from(seg.samples))
    }
}

/// [`Segment::first_nonzero`] `None` in the spilled form.
const NONE_U64: u64 = u64::MAX;

/// `segments` as bytes [`decode`] reads back exactly: the response ids once, then one
/// fixed-size record per segment. `None` when a segment holds PCM in memory (only
/// spooled or absent PCM can be spilled).
pub fn encode(segments: &[Segment]) -> Option<Vec<u8>> {
    let mut ids: HashMap<&str, u32> = HashMap::new();
    let mut table = Vec::new();
    let mut recs = Vec::with_capacity(segments.len() * 65);
    for seg in segments {
        let next = ids.len() as u32;
        let id = *ids.entry(&seg.response_id).or_insert_with(|| {
            table.extend_from_slice(&(seg.response_id.len() as u32).to_le_bytes());
            table.extend_from_slice(seg.response_id.as_bytes());
            next
        });
        recs.extend_from_slice(&id.to_le_bytes());
        recs.extend_from_slice(&seg.start_s.to_le_bytes());
        recs.extend_from_slice(&seg.end_s.to_le_bytes());
        recs.extend_from_slice(&seg.samples.to_le_bytes());
        recs.extend_from_slice(&seg.first_nonzero.unwrap_or(NONE_U64).to_le_bytes());
        match &seg.pcm {
            SegmentPcm::Memory(b) if b.is_empty() => recs.push(0),
            SegmentPcm::Memory(_) => return None,
            SegmentPcm::Spooled(span) => {
                recs.push(1);
                for v in [span.file, span.offset, span.len] {
                    recs.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
    }
    let mut out = (ids.len() as u32).to_le_bytes().to_vec();
    out.extend(table);
    out.extend_from_slice(&(segments.len() as u32).to_le_bytes());
    out.extend(recs);
    Some(out)
}

/// The segments [`encode`] wrote; damaged bytes are an error.
pub fn decode(bytes: &[u8]) -> Result<Vec<Segment>, String> {
    let mut r = Reader(bytes);
    let damaged = || "spooled playback segments are damaged".to_string();
    let mut ids: Vec<Arc<str>> = Vec::new();
    for _ in 0..r.u32().ok_or_else(damaged)? {
        let len = r.u32().ok_or_else(damaged)? as usize;
        let id = r.take(len).and_then(|b| std::str::from_utf8(b).ok());
        ids.push(Arc::from(id.ok_or_else(damaged)?));
    }
    let n = r.u32().ok_or_else(damaged)? as usize;
    let mut out = Vec::with_capacity(n.min(bytes.len() / 37));
    for _ in 0..n {
        let seg = (|| {
            let id = ids.get(r.u32()? as usize)?.clone();
            let (start_s, end_s) = (f64::from_bits(r.u64()?), f64::from_bits(r.u64()?));
            let (samples, first) = (r.u64()?, r.u64()?);
            let pcm = match r.take(1)?[0] {
                0 => SegmentPcm::default(),
                1 => SegmentPcm::Spooled(Span {
                    file: r.u64()?,
                    offset: r.u64()?,
                    len: r.u64()?,
                }),
                _ => return None,
            };
            Some(Segment {
                response_id: id,
                start_s,
                end_s,
                samples,
                first_nonzero: (first != NONE_U64).then_some(first),
                pcm,
            })
        })();
        out.push(seg.ok_or_else(damaged)?);
    }
    if !r.0.is_empty() {
        return Err(damaged());
    }
    Ok(out)
}

/// Little-endian reads from the front of a byte slice.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}
