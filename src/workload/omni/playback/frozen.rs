//! What the clock keeps of a response once its playback is settled: no audio held, no
//! ack still to come ([`Resp::settled`]). Its full record (its id, times, held segments:
//! ~104 bytes and a copy of the id) is replaced by what the clock's answers still read:
//! its samples and last ack (a late delta, a played/kept query) and four flags, among
//! them its part in the final audibility check. A long session's clock then holds full
//! records only for the responses still in play, and 16 bytes for every other one the
//! session still holds (nothing once it let it go: [`super::slots`]; a response
//! of more than 2³² samples, ~50 hours, or acked past 2³² ms stays in play: its numbers
//! would not fit). A late event about a settled response thaws it back into a record that
//! gives every answer the record it was would have given (a proptest holds a freezing
//! clock to one that never freezes, answer by answer).
//!
//! What is not kept, and why no answer reads it:
//! - its times: the last end is read for an ack (a settled response's acks are all
//!   sent: a new one needs a new delta, which sets it) and by a clear's recomputation
//!   of it (only over a response holding audio, whose held segments, queued after
//!   everything retired, end no earlier); the first arrival only before its first ack
//!   (a settled response with audio has had it; one without sets it on its first delta);
//! - its first start inside the output horizon: the audibility check only compares the
//!   earliest start with the horizon's end, so whether it lay inside is kept;
//! - its retired samples: with nothing held, all its samples retired.

use std::sync::Arc;

use super::retire::Retired;
use super::{PlaybackClock, Resp};

/// A response's place in the clock.
#[derive(Debug, Clone)]
pub(super) enum Slot {
    /// In play: audio held or an ack still to come.
    Live(Box<Resp>),
    /// Settled (or never touched: the session's index named another response first).
    Frozen(Frozen),
}

impl Default for Slot {
    fn default() -> Self {
        Slot::Frozen(Frozen::default())
    }
}

/// A settled response's numbers.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Frozen {
    /// Its samples (all retired, so all played).
    total: u32,
    /// Its last ack's `played_ms`, [`NO_ACK`] for none.
    acked_ms: u32,
    /// Audio or a completion touched it. (Flags are `bool`s, not bits: a `bool`'s spare
    /// values tell [`Slot`]'s variants apart, so a slot is 16 bytes, not 24.)
    touched: bool,
    /// `response.done` came.
    completed: bool,
    /// It had audio queued ([`Retired::any`]).
    any: bool,
    /// [`Retired::audible`].
    audible: bool,
    /// [`Retired::first_start`] lies inside the output horizon.
    starts_inside: bool,
}

/// [`Frozen::acked_ms`] when no ack was sent.
const NO_ACK: u32 = u32::MAX;

impl Frozen {
    /// The numbers of settled `r` (no held segment, not active), its segments placed
    /// against `horizon` (whole seconds) when they retired; `None` when its samples or
    /// its ack do not fit in 32 bits (it then stays in play).
    pub(super) fn of(r: &Resp, horizon: f64) -> Option<Self> {
        debug_assert!(r.held == 0 && !r.active, "only a settled response freezes");
        debug_assert_eq!(r.retired.samples, r.total, "all its audio retired");
        // With nothing held, its last end is its retired segments' latest end.
        debug_assert_eq!(r.last_end_s.to_bits(), r.retired.end_s.to_bits());
        // Audio settles only once acked, so its first arrival is read no more.
        debug_assert!(r.total == 0 || r.acked_ms.is_some());
        let acked_ms = match r.acked_ms {
            None => NO_ACK,
            Some(ms) => u32::try_from(ms).ok().filter(|&ms| ms != NO_ACK)?,
        };
        Some(Self {
            total: u32::try_from(r.total).ok()?,
            acked_ms,
            touched: r.id.is_some(),
            completed: r.completed,
            any: r.retired.any,
            audible: r.retired.audible,
            starts_inside: r.retired.first_start < horizon,
        })
    }

    /// The record it was, its id `id` (`None` for an untouched slot).
    pub(super) fn thaw(&self, id: Option<Arc<str>>) -> Resp {
        if !self.touched() {
            return Resp {
                id,
                ..Resp::default()
            };
        }
        // Only the earliest start's comparison with the horizon is read: ±∞ compare as
        // it did, and stay the earliest (or give way) as it would.
        let first_start = if self.starts_inside {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
        let retired = Retired {
            any: self.any,
            samples: self.total(),
            end_s: 0.0,
            first_start,
            audible: self.audible,
        };
        Resp {
            id,
            total: self.total(),
            last_end_s: 0.0,
            first_arrival_s: 0.0,
            completed: self.completed,
            acked_ms: (self.acked_ms != NO_ACK).then_some(u64::from(self.acked_ms)),
            held: 0,
            first_held: 0,
            active: false,
            retired,
        }
    }

    /// Audio or a completion touched it.
    pub(super) fn touched(&self) -> bool {
        self.touched
    }

    /// Its samples (all played).
    pub(super) fn total(&self) -> u64 {
        u64::from(self.total)
    }

    /// It had audio queued.
    pub(super) fn any(&self) -> bool {
        self.any
    }

    /// Its part in the audibility check: whether its earliest start lay inside the
    /// horizon and whether it was heard there.
    pub(super) fn placed(&self) -> (bool, bool) {
        (self.starts_inside, self.audible)
    }
}

impl PlaybackClock {
    /// A clock that never freezes a settled response: what the freezing clock is held to.
    #[cfg(test)]
    pub fn keeping_all(incremental: bool) -> Self {
        Self {
            keep_all: true,
            ..Self::new(incremental)
        }
    }

    /// How many responses have their full record (are in play), and how many were
    /// touched and are settled: each of the clock's responses is one or the other.
    #[cfg(test)]
    pub fn live_and_settled(&self) -> (usize, usize) {
        let live = (self.resps.iter()).filter(|(_, s)| matches!(s, Slot::Live(_)));
        let settled =
            (self.resps.iter()).filter(|(_, s)| matches!(s, Slot::Frozen(f) if f.touched()));
        (live.count(), settled.count())
    }

    /// Response `r`'s full record (it is in play).
    pub(super) fn live(&self, r: usize) -> &Resp {
        match &self.resps[r] {
            Slot::Live(resp) => resp,
            Slot::Frozen(_) => unreachable!("response {r} is settled"),
        }
    }

    /// [`PlaybackClock::live`], to change.
    pub(super) fn live_mut(&mut self, r: usize) -> &mut Resp {
        match &mut self.resps[r] {
            Slot::Live(resp) => resp,
            Slot::Frozen(_) => unreachable!("response {r} is settled"),
        }
    }

    /// Response `r`'s full record, if it is in play.
    pub(super) fn get_live(&self, r: usize) -> Option<&Resp> {
        match self.resps.get(r)? {
            Slot::Live(resp) => Some(resp),
            Slot::Frozen(_) => None,
        }
    }

    /// Response `r`'s full record gives way to its few numbers once it is settled: no
    /// segment held, no ack to come.
    pub(super) fn freeze_if_settled(&mut self, r: usize) {
        #[cfg(test)]
        if self.keep_all {
            return;
        }
        if let Slot::Live(resp) = &self.resps[r]
            && resp.held == 0
            && !resp.active
        {
            let horizon = self.horizon.map_or(0.0, |h| h.seconds());
            if let Some(frozen) = Frozen::of(resp, horizon) {
                self.resps[r] = Slot::Frozen(frozen);
                self.resps.drop_front();
            }
        }
    }
}
