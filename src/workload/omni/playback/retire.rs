//! The output WAV horizon and retiring played segments. The final checks ask whether a
//! response is audible inside the horizon ([`PlaybackClock::audible_in_horizon`]). A
//! segment that has ended by the retirement horizon can no longer change (a barge-in
//! clear only truncates audio that had not played, and clears come with event times at
//! or after the horizon), so the clock hands it out to be spilled and keeps only what its
//! answers still need of it, per response: the samples it held (for played counts), its
//! end (for clears), and its part in the audibility check, placed against the output
//! horizon known since the stream started. A long session then holds no record per
//! audio delta it has played.

use super::frozen::Slot;
use super::segment::{NO_SAMPLE, Seg};
use super::{OUTPUT_RATE, PlaybackClock, Segment};
use crate::workload::omni::ids::RespIx;

/// What a response's retired segments contribute to the clock's answers.
#[derive(Debug, Clone, Copy)]
pub(super) struct Retired {
    /// A segment was retired (the response had audio queued).
    pub(super) any: bool,
    /// Their samples: all played by the horizon they retired at.
    pub(super) samples: u64,
    /// The latest end among them (0 for none), as a clear's end recomputation folds it.
    pub(super) end_s: f64,
    /// Earliest start inside the output horizon among those with samples (∞ for none).
    pub(super) first_start: f64,
    /// One of them has a non-silent sample inside the output horizon.
    pub(super) audible: bool,
}

impl Default for Retired {
    fn default() -> Self {
        Self {
            any: false,
            samples: 0,
            end_s: 0.0,
            first_start: f64::INFINITY,
            audible: false,
        }
    }
}

/// Where the output WAV horizon is: the stream start and the input's duration, seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Horizon {
    pub(super) stream_start_s: f64,
    pub(super) duration_s: f64,
}

impl Horizon {
    /// `seg`'s start relative to the stream (clipped at 0) and whether a non-silent sample
    /// of it lands inside `ceil(duration_s)` seconds, offsets rounded half to even like
    /// the reference. `None` for a segment without samples.
    pub(super) fn place(&self, seg: &Seg) -> Option<(f64, bool)> {
        if seg.samples == 0 {
            return None;
        }
        let horizon_bytes = self.seconds() as u64 * OUTPUT_RATE * 2;
        let start = (seg.start_s - self.stream_start_s).max(0.0);
        let offset = (start * OUTPUT_RATE as f64).round_ties_even() as u64 * 2;
        let writable = horizon_bytes
            .saturating_sub(offset)
            .min(u64::from(seg.samples) * 2);
        let audible = seg.first_nonzero != NO_SAMPLE && u64::from(seg.first_nonzero) * 2 < writable;
        Some((start, audible))
    }

    /// The horizon's length: whole seconds.
    pub(super) fn seconds(&self) -> f64 {
        self.duration_s.ceil().max(0.0)
    }
}

impl PlaybackClock {
    /// The output horizon the final audibility check will use (the stream start and the
    /// input's duration): set once the stream starts; segments retire only after it.
    pub fn set_horizon(&mut self, stream_start_s: f64, duration_s: f64) {
        self.horizon = Some(Horizon {
            stream_start_s,
            duration_s,
        });
    }

    /// Retire the leading segments that ended by `horizon_s` once at least `min_batch`
    /// of them have (a batch keeps the spilled form compact), and return the ones that
    /// still hold audio, in clock order, to be spilled. `horizon_s` must not exceed the
    /// time of the last ack check nor the receipt time of the last event observed:
    /// later clears and ack checks then never reach back into what retired. Nothing
    /// retires before [`PlaybackClock::set_horizon`] or while PCM is kept in memory.
    pub fn retire(&mut self, horizon_s: f64, min_batch: usize) -> Vec<Segment> {
        let Some(horizon) = self.horizon else {
            return Vec::new();
        };
        if !self.mem.is_empty() || self.segments.len() < min_batch.max(1) {
            return Vec::new();
        }
        let n = (self.segments.iter())
            .take_while(|s| s.end_s() <= horizon_s)
            .count();
        if n < min_batch.max(1) {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let seg = self.segments.pop_front().expect("n segments ended");
            if seg.samples > 0 {
                out.push(self.public(&seg));
            }
            let ri = seg.resp as usize;
            debug_assert_eq!(
                self.live(ri).first_held,
                self.base,
                "segments retire in clock order"
            );
            // Its next held segment, if any: the first of its own still held (they now
            // start at clock position `base + 1`).
            let next = (self.base + 1..)
                .zip(self.segments.iter())
                .find(|(_, s)| s.resp as usize == ri)
                .map(|(pos, _)| pos);
            let r = self.live_mut(ri);
            r.held -= 1;
            if r.held > 0 {
                r.first_held = next.expect("a held segment of its own follows");
            }
            let t = &mut r.retired;
            t.any = true;
            t.samples += u64::from(seg.samples);
            t.end_s = t.end_s.max(seg.end_s());
            if let Some((start, audible)) = horizon.place(&seg) {
                t.first_start = t.first_start.min(start);
                t.audible |= audible;
            }
            self.retired_end = self.retired_end.max(seg.end_s());
            self.base += 1;
            self.freeze_if_settled(ri);
        }
        out
    }

    /// Whether response `ix` (the session's index) has a non-silent sample inside the
    /// output horizon ([`PlaybackClock::audible_in_horizon`] by id).
    pub fn audible_in_horizon_at(&self, ix: RespIx, stream_start_s: f64, duration_s: f64) -> bool {
        let r = ix as usize;
        let horizon = Horizon {
            stream_start_s,
            duration_s,
        };
        // The earliest start lies inside the horizon if any start does.
        let (any, (mut inside, mut audible)) = match self.resps.get(r) {
            Some(Slot::Live(resp)) if resp.id.is_some() => (
                resp.retired.any,
                (
                    resp.retired.first_start < horizon.seconds(),
                    resp.retired.audible,
                ),
            ),
            Some(Slot::Frozen(f)) if f.touched() => (f.any(), f.placed()),
            _ => return false,
        };
        debug_assert!(!any || self.horizon == Some(horizon));
        for (start, heard) in self.held(r).filter_map(|s| horizon.place(self.seg(s))) {
            inside |= start < horizon.seconds();
            audible |= heard;
        }
        audible && inside
    }
}
