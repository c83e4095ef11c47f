//! The duplex serial playback clock and its `playback.ack` policy (spec §1.6): one
//! speaker plays every response's audio strictly in arrival order; the seed acknowledger
//! acks each completed response once, when its last sample has played; the optional
//! incremental mode (later upstream) sends a checkpoint ack, cumulative acks every
//! ≥ 200 ms of playback, and the exact total once drained. Barge-in clears truncate a
//! response's unplayed audio.
//!
//! Pure code: times are seconds on the session's clock, passed in.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;

use super::ids::RespIx;
use crate::workload::spool::Span;
use frozen::Slot;
use retire::{Horizon, Retired};
use segment::{NO_SAMPLE, PcmRef, Seg, played_samples};
pub use segment::{Segment, SegmentPcm, decode as decode_segments, encode as encode_segments};
use slots::Slots;

mod ack;
#[cfg(test)]
mod by_id;
mod frozen;
mod retire;
mod segment;
mod slots;

/// Output samples per second.
pub const OUTPUT_RATE: u64 = 24_000;
/// Incremental mode: minimum newly played audio between cumulative acks.
pub const ACK_STEP_MS: u64 = 200;
/// Tolerance for comparing playback times that went through a clock round trip.
const EPS_S: f64 = 1e-6;

/// One `playback.ack` to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Ack {
    /// The response acknowledged.
    pub response_id: Arc<str>,
    /// `played_ms` (and `committed_ms`).
    pub played_ms: u64,
    /// When the ack became due on the playback clock, seconds.
    pub due_s: f64,
}

/// A response's full record, while its playback is in play ([`Slot::Live`]).
#[derive(Debug, Clone, Default)]
struct Resp {
    /// `None` for a slot no audio or completion has touched (the session's index named
    /// another response first). The clock's own copy, made when the response came into
    /// play and dropped when it settles.
    id: Option<Arc<str>>,
    total: u64,
    last_end_s: f64,
    first_arrival_s: f64,
    completed: bool,
    acked_ms: Option<u64>,
    /// Its segments still held: how many, and the clock position of the first. They are
    /// found by walking the held segments from there ([`PlaybackClock::held`]): a list
    /// per response cost a long session 32 bytes a response.
    held: u32,
    first_held: u32,
    /// In [`PlaybackClock::active`].
    active: bool,
    /// What its retired segments contribute.
    retired: Retired,
}

impl Resp {
    /// No ack can come due for it until its audio or completion changes: nothing
    /// queued, or its last ack sent (seed policy: its one ack; incremental: the exact
    /// total of a completed response).
    fn settled(&self, incremental: bool) -> bool {
        self.total == 0
            || if incremental {
                self.completed && self.acked_ms == Some(self.total * 1000 / OUTPUT_RATE)
            } else {
                self.acked_ms.is_some()
            }
    }
}

/// The serial playback clock plus its acknowledger.
///
/// Its memory is bounded by what is in play and the session's window: a full record
/// (~104 bytes and its own copy of the id) only for each response with audio held or an
/// ack to come, held segments (48 bytes each) only until they retire, 16 bytes for
/// every other response the session still holds (the few numbers a late event or a
/// final check reads: [`frozen`]) and nothing for those it let go ([`slots`]).
#[derive(Debug, Default, Clone)]
pub struct PlaybackClock {
    incremental: bool,
    end_s: f64,
    /// The segments not yet retired; the first is clock position `base`.
    segments: VecDeque<Seg>,
    base: u32,
    /// The latest end among retired segments (0 for none).
    retired_end: f64,
    /// The output horizon, once the stream started.
    horizon: Option<Horizon>,
    /// Under the session's response index ([`RespIx`]): the full record of each
    /// response in play, the few numbers of each settled one ([`frozen`]).
    resps: Slots,
    /// The responses that are not [`Resp::settled`], ascending: acks and wake-ups look
    /// only at these, so their cost does not grow with a session's length.
    active: Vec<u32>,
    /// Kept PCM of sessions without a spool.
    mem: Vec<Bytes>,
    /// Never freeze a settled response (the reference the freezing clock is held to).
    #[cfg(test)]
    keep_all: bool,
    /// The id each index was first touched with (the string-keyed test calls' lookup).
    #[cfg(test)]
    names: Vec<Option<Arc<str>>>,
}

impl PlaybackClock {
    /// A clock; `incremental` selects the later-upstream ack policy.
    pub fn new(incremental: bool) -> Self {
        Self {
            incremental,
            ..Self::default()
        }
    }

    /// Response `ix`'s full record (thawed if settled), its id made by `id` when the
    /// clock holds none.
    fn resp(&mut self, ix: RespIx, id: impl FnOnce() -> Arc<str>, at_s: f64) -> usize {
        let r = ix as usize;
        self.resps.grow_to(r);
        if let Slot::Frozen(f) = &self.resps[r] {
            let (f, id) = (*f, id());
            #[cfg(test)]
            {
                self.names.resize(self.names.len().max(r + 1), None);
                self.names[r].get_or_insert_with(|| Arc::clone(&id));
            }
            let mut resp = f.thaw(Some(id));
            if !f.touched() {
                resp.first_arrival_s = at_s;
            }
            self.resps[r] = Slot::Live(Box::new(resp));
        }
        r
    }

    /// Response `r`'s audio or completion changed: an ack may come due again.
    fn activate(&mut self, r: usize) {
        if !self.live(r).active {
            self.live_mut(r).active = true;
            let at = self.active.partition_point(|&x| (x as usize) < r);
            self.active.insert(at, r as u32);
        }
    }

    /// The held segment at clock position `pos`.
    fn seg(&self, pos: u32) -> &Seg {
        &self.segments[(pos - self.base) as usize]
    }

    /// The clock positions of response `r`'s held segments, ascending.
    fn held(&self, r: usize) -> impl Iterator<Item = u32> + '_ {
        let (first, held) = self.get_live(r).map_or((0, 0), |l| (l.first_held, l.held));
        let from = first.max(self.base);
        (from..)
            .zip(self.segments.range((from - self.base) as usize..))
            .filter(move |(_, seg)| seg.resp as usize == r)
            .map(|(pos, _)| pos)
            .take(held as usize)
    }

    /// The public form of `seg`.
    fn public(&self, seg: &Seg) -> Segment {
        let len = seg.pcm_len as usize;
        let pcm = match seg.pcm {
            PcmRef::None => SegmentPcm::default(),
            PcmRef::Memory(m) => SegmentPcm::Memory(self.mem[m as usize].slice(..len)),
            PcmRef::Spooled { file, offset } => SegmentPcm::Spooled(Span {
                file,
                offset,
                len: len as u64,
            }),
        };
        Segment {
            response_id: (self.live(seg.resp as usize).id.clone()).expect("it has audio"),
            start_s: seg.start_s,
            end_s: seg.end_s(),
            samples: u64::from(seg.samples),
            first_nonzero: (seg.first_nonzero != NO_SAMPLE).then_some(u64::from(seg.first_nonzero)),
            pcm,
        }
    }

    /// [`PlaybackClock::ingest`] of response `ix` (the session's index of
    /// `response_id`) with the caller's stored form of the bytes: `kept` holds all of
    /// `pcm` (in memory or spooled) or nothing; a new response is recorded under the
    /// caller's `response_id`. A delta is at most a WebSocket message, far below 4 GiB:
    /// lengths are kept as `u32`.
    #[cfg(test)]
    pub fn ingest_kept(
        &mut self,
        ix: RespIx,
        response_id: &Arc<str>,
        pcm: &[u8],
        at_s: f64,
        kept: SegmentPcm,
    ) -> u64 {
        self.ingest_named(ix, response_id, pcm, at_s, kept)
    }

    /// [`PlaybackClock::ingest_kept`] with the id as the session's table holds it: the
    /// clock makes its own copy while the response is in play.
    pub fn ingest_named(
        &mut self,
        ix: RespIx,
        response_id: &str,
        pcm: &[u8],
        at_s: f64,
        kept: SegmentPcm,
    ) -> u64 {
        let r = self.resp(ix, || Arc::from(response_id), at_s);
        let samples = (pcm.len() / 2) as u32;
        let start_s = at_s.max(self.end_s);
        let first_nonzero = pcm
            .iter()
            .position(|b| *b != 0)
            .map_or(NO_SAMPLE, |i| (i / 2) as u32);
        let pcm_len = kept.len() as u32;
        let pcm = match kept {
            _ if pcm_len == 0 => PcmRef::None,
            SegmentPcm::Memory(b) => {
                self.mem.push(b);
                PcmRef::Memory((self.mem.len() - 1) as u32)
            }
            SegmentPcm::Spooled(s) => PcmRef::Spooled {
                file: s.file,
                offset: s.offset,
            },
        };
        let seg = Seg {
            start_s,
            resp: r as u32,
            samples,
            first_nonzero,
            pcm_len,
            pcm,
        };
        let end_s = seg.end_s();
        let next_pos = self.base + self.segments.len() as u32;
        let resp = self.live_mut(r);
        if resp.total == 0 {
            resp.first_arrival_s = at_s;
        }
        resp.total += u64::from(samples);
        resp.last_end_s = end_s;
        if resp.held == 0 {
            resp.first_held = next_pos;
        }
        resp.held += 1;
        self.end_s = end_s;
        self.segments.push_back(seg);
        self.activate(r);
        u64::from(samples)
    }

    /// `response.done` for response `ix` (the session's index of `response_id`).
    #[cfg(test)]
    pub fn complete_at(&mut self, ix: RespIx, response_id: &Arc<str>, at_s: f64) {
        self.complete_named(ix, response_id, at_s);
    }

    /// [`PlaybackClock::complete_at`] with the id as the session's table holds it.
    pub fn complete_named(&mut self, ix: RespIx, response_id: &str, at_s: f64) {
        let r = self.resp(ix, || Arc::from(response_id), at_s);
        self.live_mut(r).completed = true;
        self.activate(r);
    }

    /// Barge-in at `at_s`: drop the audio of `response_id` (every response when `None`)
    /// that had not played by then. Returns the responses that lost audio and how many
    /// samples each lost.
    pub fn clear(&mut self, response_id: Option<&str>, at_s: f64) -> Vec<(Arc<str>, u64)> {
        let mut lost_by = Vec::new();
        let mut changed = Vec::new();
        let base = self.base;
        for r in self.resps.first()..self.resps.len() {
            // A settled response holds no audio.
            let Some(resp) = self.get_live(r) else {
                continue;
            };
            if resp.held == 0 || response_id.is_some_and(|id| resp.id.as_deref() != Some(id)) {
                continue;
            }
            let held: Vec<u32> = self.held(r).collect();
            let mut lost = 0;
            for &s in &held {
                let seg = &mut self.segments[(s - base) as usize];
                if seg.end_s() <= at_s {
                    continue;
                }
                let keep = played_samples(seg, at_s) as u32;
                lost += u64::from(seg.samples - keep);
                seg.samples = keep;
                if seg.first_nonzero >= keep {
                    seg.first_nonzero = NO_SAMPLE;
                }
                if seg.pcm_len > 0 {
                    seg.pcm_len = seg.pcm_len.min(keep * 2);
                }
            }
            if lost > 0 {
                let last_end_s = (held.iter())
                    .map(|&s| self.segments[(s - base) as usize].end_s())
                    .fold(self.live(r).retired.end_s, f64::max);
                let resp = self.live_mut(r);
                resp.total -= lost;
                resp.last_end_s = last_end_s;
                lost_by.push((resp.id.clone().expect("it held audio"), lost));
                changed.push(r);
            }
        }
        for r in changed {
            self.activate(r);
        }
        if !lost_by.is_empty() {
            self.end_s = (self.segments.iter())
                .map(Seg::end_s)
                .fold(self.retired_end, f64::max);
        }
        lost_by
    }

    /// The acks due at `now_s` (each marked as sent).
    pub fn acks(&mut self, now_s: f64) -> Vec<Ack> {
        let mut out = Vec::new();
        for k in 0..self.active.len() {
            let i = self.active[k] as usize;
            if let Some(ack) = self.ack_for(i, now_s) {
                self.live_mut(i).acked_ms = Some(ack.played_ms);
                out.push(ack);
            }
        }
        let (resps, incremental) = (&mut self.resps, self.incremental);
        let mut settled = Vec::new();
        self.active.retain(|&i| {
            let Slot::Live(r) = &mut resps[i as usize] else {
                return false;
            };
            r.active = !r.settled(incremental);
            if !r.active {
                settled.push(i as usize);
            }
            r.active
        });
        for r in settled {
            self.freeze_if_settled(r);
        }
        out
    }

    /// Drain: the acks due once everything queued has played (`now = clock end`).
    pub fn drain(&mut self) -> Vec<Ack> {
        self.acks(self.end_s)
    }

    fn ack_for(&self, i: usize, now_s: f64) -> Option<Ack> {
        // A settled response has no ack to come.
        let r = self.get_live(i)?;
        let id = r.id.as_ref().filter(|_| r.total > 0)?;
        let total_ms = r.total * 1000 / OUTPUT_RATE;
        if !self.incremental {
            return (r.completed && r.acked_ms.is_none() && now_s + EPS_S >= r.last_end_s).then(
                || Ack {
                    response_id: Arc::clone(id),
                    played_ms: total_ms,
                    due_s: r.last_end_s,
                },
            );
        }
        let played = self.played(i, now_s);
        let played_ms = played * 1000 / OUTPUT_RATE;
        let due = match r.acked_ms {
            None => Some(r.first_arrival_s),
            Some(a) if r.completed && played == r.total && a != total_ms => Some(r.last_end_s),
            Some(a) if played_ms >= a + ACK_STEP_MS => self.time_at(i, a + ACK_STEP_MS),
            Some(_) => None,
        }?;
        Some(Ack {
            response_id: Arc::clone(id),
            played_ms,
            due_s: due.min(now_s),
        })
    }

    /// The earliest future moment an ack can become due (for a wake-up), if any.
    pub fn next_due(&self) -> Option<f64> {
        self.active
            .iter()
            .filter_map(|&i| Some((i as usize, self.get_live(i as usize)?)))
            .filter(|(_, r)| r.total > 0)
            .filter_map(|(i, r)| {
                if !self.incremental {
                    return (r.completed && r.acked_ms.is_none()).then_some(r.last_end_s);
                }
                let total_ms = r.total * 1000 / OUTPUT_RATE;
                match r.acked_ms {
                    None => Some(r.first_arrival_s),
                    Some(a) => {
                        let step = self.time_at(i, a + ACK_STEP_MS);
                        let fin = (r.completed && a != total_ms).then_some(r.last_end_s);
                        [step, fin].into_iter().flatten().reduce(f64::min)
                    }
                }
            })
            .reduce(f64::min)
    }

    /// Milliseconds of response `ix`'s audio played by `at_s` (0 for one without audio).
    pub fn played_ms(&self, ix: RespIx, at_s: f64) -> f64 {
        let i = ix as usize;
        if i >= self.resps.len() {
            return 0.0;
        }
        self.played(i, at_s) as f64 * 1000.0 / OUTPUT_RATE as f64
    }

    /// Milliseconds of response `ix`'s audio kept (what a barge-in clear left of it).
    pub fn kept_ms(&self, ix: RespIx) -> f64 {
        self.total(ix as usize) as f64 * 1000.0 / OUTPUT_RATE as f64
    }

    /// Samples response `r` has queued (0 for an index the clock never saw).
    fn total(&self, r: usize) -> u64 {
        match self.resps.get(r) {
            None => 0,
            Some(Slot::Live(resp)) => resp.total,
            Some(Slot::Frozen(f)) => f.total(),
        }
    }

    /// Samples of response `i` played by `now_s` (its retired segments had all played).
    fn played(&self, i: usize, now_s: f64) -> u64 {
        let held: u64 = (self.held(i))
            .map(|s| played_samples(self.seg(s), now_s))
            .sum();
        let retired = match self.resps.get(i) {
            Some(Slot::Live(resp)) => resp.retired.samples,
            // Settled: all of it retired, all of it played.
            Some(Slot::Frozen(f)) => f.total(),
            // Let go (the session never asks): nothing it knows of.
            None => 0,
        };
        retired + held
    }

    /// When response `i` will have played `ms` milliseconds; `None` if it never will.
    /// Asked only past the last ack, which is past everything retired (see `retire`).
    fn time_at(&self, i: usize, ms: u64) -> Option<f64> {
        let r = self.live(i);
        let need = (ms * OUTPUT_RATE).div_ceil(1000);
        debug_assert!(
            need > r.retired.samples || need == 0,
            "asked inside retired audio"
        );
        let mut need = need.saturating_sub(r.retired.samples);
        for s in self.held(i) {
            let seg = self.seg(s);
            let samples = u64::from(seg.samples);
            if need <= samples {
                return Some(seg.start_s + need as f64 / OUTPUT_RATE as f64);
            }
            need -= samples;
        }
        None
    }

    /// End of the serial clock (0 before any audio).
    #[cfg(test)]
    pub fn end_s(&self) -> f64 {
        self.end_s
    }
    /// The indices of the responses that had audio queued (even if a barge-in cleared
    /// all of it).
    pub fn responses_with_audio_at(&self) -> impl Iterator<Item = RespIx> + '_ {
        self.resps.iter().filter_map(|(ix, slot)| {
            let any = match slot {
                Slot::Live(r) => r.held > 0 || r.retired.any,
                Slot::Frozen(f) => f.any(),
            };
            any.then_some(ix as RespIx)
        })
    }
    /// Every segment not retired ([`PlaybackClock::retire`]), in clock order.
    #[cfg(test)]
    pub fn segments(&self) -> Vec<Segment> {
        self.segments.iter().map(|s| self.public(s)).collect()
    }
    /// The segments not retired that still hold audio (barge-in may have emptied some).
    pub fn into_segments(self) -> Vec<Segment> {
        (self.segments.iter())
            .filter(|s| s.samples > 0)
            .map(|s| self.public(s))
            .collect()
    }
}

#[cfg(test)]
#[path = "playback_tests.rs"]
mod tests;
