//! What the clock keeps of a response once its playback is settled: no audio held, no
//! ack still to come ([`Resp::settled`]). Its full record (its id, times, held segments:
//! ~104 bytes and a copy of the id) is replaced by the few numbers the clock's answers
//! still read: its samples and last ack for a late delta or a played/kept query, its end
//! and its first start for a later clear and the final audibility check. A long
//! session's clock then holds full records only for the responses still in play, and 40
//! bytes for every other. A late event about a settled response thaws it back into the
//! record it was, exactly (a proptest holds a freezing clock to one that never freezes).

use std::sync::Arc;

use super::Resp;
use super::retire::Retired;

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
    total: u64,
    /// Its last ack's `played_ms`, [`NO_ACK`] for none.
    acked_ms: u64,
    /// The end of its last segment (0 for none).
    end_s: f64,
    /// [`Retired::first_start`].
    first_start: f64,
    /// Audio or a completion touched it. (Flags are `bool`s, not bits: a `bool`'s spare
    /// values tell [`Slot`]'s variants apart, so a slot is 40 bytes, not 48.)
    touched: bool,
    /// `response.done` came.
    completed: bool,
    /// It had audio queued ([`Retired::any`]).
    any: bool,
    /// [`Retired::audible`].
    audible: bool,
}

/// [`Frozen::acked_ms`] when no ack was sent.
const NO_ACK: u64 = u64::MAX;

impl Frozen {
    /// The numbers of settled `r` (no held segment, not active).
    pub(super) fn of(r: &Resp) -> Self {
        debug_assert!(r.held == 0 && !r.active, "only a settled response freezes");
        debug_assert_eq!(r.retired.samples, r.total, "all its audio retired");
        // With nothing held, its last end is its retired segments' latest end.
        debug_assert_eq!(r.last_end_s.to_bits(), r.retired.end_s.to_bits());
        // Audio settles only once acked, so its first arrival is read no more.
        debug_assert!(r.total == 0 || r.acked_ms.is_some());
        Self {
            total: r.total,
            acked_ms: r.acked_ms.unwrap_or(NO_ACK),
            end_s: r.retired.end_s,
            first_start: r.retired.first_start,
            touched: r.id.is_some(),
            completed: r.completed,
            any: r.retired.any,
            audible: r.retired.audible,
        }
    }

    /// The record it was, its id `id` (`None` for an untouched slot).
    pub(super) fn thaw(&self, id: Option<Arc<str>>) -> Resp {
        if !self.touched() {
            return Resp {
                id,
                ..Resp::default()
            };
        }
        let retired = Retired {
            any: self.any,
            samples: self.total,
            end_s: self.end_s,
            first_start: self.first_start,
            audible: self.audible,
        };
        Resp {
            id,
            total: self.total,
            last_end_s: self.end_s,
            first_arrival_s: 0.0,
            completed: self.completed,
            acked_ms: (self.acked_ms != NO_ACK).then_some(self.acked_ms),
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
        self.total
    }

    /// It had audio queued.
    pub(super) fn any(&self) -> bool {
        self.any
    }

    /// Its part in the audibility check: earliest start and whether it was heard.
    pub(super) fn placed(&self) -> (f64, bool) {
        (self.first_start, self.audible)
    }
}
