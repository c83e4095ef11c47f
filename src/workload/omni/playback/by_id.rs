//! The clock's string-keyed calls, for tests and callers without a session's id table
//! (a session passes its indices to the `_at` calls): each finds its response by a scan
//! of the ids the clock's indices were first touched with (kept for tests only: a
//! settled response's record holds no id), and a new id takes the next free index.

use std::sync::Arc;

use bytes::Bytes;

use super::{PlaybackClock, SegmentPcm};
use crate::workload::omni::ids::RespIx;

impl PlaybackClock {
    /// The index of the response recorded under `id`, or the next free one (for the
    /// string-keyed calls: a scan, for tests and small clocks).
    fn ix_of(&self, id: &str) -> RespIx {
        let r = (self.names.iter())
            .position(|n| n.as_deref() == Some(id))
            .unwrap_or(self.resps.len().max(self.names.len()));
        RespIx::try_from(r).expect("fewer than 2^32 responses")
    }

    /// Queue `pcm` (PCM16, even length) of `response_id` received at `at_s`; keep the bytes
    /// in the segment only when `keep_pcm`. Returns the samples queued.
    pub fn ingest(&mut self, response_id: &str, pcm: &[u8], at_s: f64, keep_pcm: bool) -> u64 {
        let kept = if keep_pcm {
            SegmentPcm::Memory(Bytes::copy_from_slice(pcm))
        } else {
            SegmentPcm::default()
        };
        self.ingest_kept(
            self.ix_of(response_id),
            &Arc::from(response_id),
            pcm,
            at_s,
            kept,
        )
    }

    /// `response.done` for `response_id`.
    pub fn complete(&mut self, response_id: &str, at_s: f64) {
        self.complete_at(self.ix_of(response_id), &Arc::from(response_id), at_s);
    }

    /// Samples queued for `response_id` so far.
    pub fn total_samples(&self, response_id: &str) -> u64 {
        self.total(self.ix_of(response_id) as usize)
    }

    /// The responses that had audio queued (even if a barge-in cleared all of it), by
    /// the ids their indices were first touched with.
    pub fn responses_with_audio(&self) -> impl Iterator<Item = &str> {
        (self.responses_with_audio_at()).filter_map(|ix| self.names.get(ix as usize)?.as_deref())
    }

    /// Whether `response_id` has a non-silent sample that lands inside the output WAV
    /// horizon (`ceil(duration_s)` seconds from `stream_start_s`, offsets rounded half to
    /// even like the reference) while its first audio starts before the horizon.
    /// Retired segments count as they were placed when they retired, against the horizon
    /// [`PlaybackClock::set_horizon`] gave (the same one, from the same session).
    pub fn audible_in_horizon(
        &self,
        response_id: &str,
        stream_start_s: f64,
        duration_s: f64,
    ) -> bool {
        self.audible_in_horizon_at(self.ix_of(response_id), stream_start_s, duration_s)
    }
}
