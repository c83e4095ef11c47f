//! A segment of output audio on the serial clock: the public [`Segment`] reports and
//! artifacts read, and the compact form the clock keeps per received audio delta.

use std::sync::Arc;

use bytes::Bytes;

use super::super::spool::Span;
use super::OUTPUT_RATE;

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
