//! The live session's mean TTFP, exactly as the report will compute it from the events
//! ([`super::response_rows`], then [`super::session_summary`]): the progress headline no
//! longer costs a session the report's per-response accumulators, nor a second base64
//! decode of every audio delta. The TTFPs are summed in creation order as they become
//! known; only those known ahead of an earlier response still unknown wait, one number
//! each, until it is (or until the session lets that response go: then it never will be).

use std::collections::{HashMap, VecDeque};

use serde_json::Value;

use super::{AUDIO_DELTAS, carries_audio};
use crate::workload::omni::ids::RespIx;
use crate::workload::omni::tokens::round_dp;
#[cfg(test)]
use crate::workload::omni::{ids::ResponseIds, metrics::response_id};

/// A response: its position in creation order ([`NOT_CREATED`] until a
/// `response.created` names it) and whether its TTFP is known.
#[derive(Debug, Clone, Copy)]
struct Created {
    ordinal: u32,
    known: bool,
}

/// [`Created::ordinal`] of a response no `response.created` named yet.
const NOT_CREATED: u32 = u32::MAX;

/// A response's two stamps while only one is known: `response.created` and its first
/// audio packet, seconds.
type Stamps = (Option<f64>, Option<f64>);

/// Each response's TTFP, fed one event at a time (the report's rules: the first counted
/// `response.created` is the origin, the first counted audio delta carrying audio the
/// packet; the mean is taken in creation order, so it is the same number to the bit).
#[derive(Debug, Default, Clone)]
pub struct LiveTtfp {
    /// The ids of the calls that pass no index ([`LiveTtfp::observe`]); a session
    /// passes its own indices and leaves this empty.
    #[cfg(test)]
    own: ResponseIds,
    /// Under each held response's index less `first`: its place among the ids a
    /// `response.created` named, counted or not (the report's rows follow that order).
    created: VecDeque<Created>,
    /// The first index held: the session let go of every one before it
    /// ([`LiveTtfp::let_go_below`]).
    first: RespIx,
    /// How many responses were created.
    n_created: u32,
    /// Responses with one of their two stamps.
    open: HashMap<RespIx, Stamps>,
    /// The responses created first, all with both stamps: how many, the sum of their
    /// finite TTFPs in creation order (as the report sums them) and how many were finite.
    summed: u32,
    sum: f64,
    finite: usize,
    /// `(creation position, TTFP ms)` of the responses with both stamps that are not
    /// summed yet (a response created before them is not known), latest position first.
    waiting: Vec<(u32, f64)>,
}

/// Whether `ev` is an audio delta that carries audio: the TTFP's first audio packet.
pub fn audio_packet(ev: &Value) -> bool {
    let kind = ev.get("type").and_then(Value::as_str).unwrap_or("");
    AUDIO_DELTAS.contains(&kind) && carries_audio(ev)
}

impl LiveTtfp {
    /// Account for `ev`, received at `at_s`; `counted` says it came at or after the
    /// stream start (uncounted events only place a `response.created` in the order).
    #[cfg(test)]
    pub fn observe(&mut self, at_s: f64, ev: &Value, counted: bool) {
        let ix = response_id(ev).map(|r| self.own.intern(r));
        self.observe_at(at_s, ev, counted, ix);
    }

    /// [`LiveTtfp::observe`] with the session's index of the event's response id
    /// ([`response_id`]; `None` when it names none), so a session keeps one copy of each
    /// id and 8 bytes here for each response it holds.
    pub fn observe_at(&mut self, at_s: f64, ev: &Value, counted: bool, ix: Option<RespIx>) {
        let kind = ev.get("type").and_then(Value::as_str).unwrap_or("");
        self.observe_kind(at_s, kind, audio_packet(ev), counted, ix);
    }

    /// [`LiveTtfp::observe_at`] of an event already read: its `type` and whether it is
    /// an audio packet ([`audio_packet`]), what the TTFP reads of an event.
    pub fn observe_kind(
        &mut self,
        at_s: f64,
        kind: &str,
        audio: bool,
        counted: bool,
        ix: Option<RespIx>,
    ) {
        // An index the session let go of is never named again (a let-go id comes back
        // with a new index).
        let Some(ix) = ix.filter(|&ix| ix >= self.first) else {
            return;
        };
        let r = (ix - self.first) as usize;
        if self.created.len() <= r {
            self.created.resize(
                r + 1,
                Created {
                    ordinal: NOT_CREATED,
                    known: false,
                },
            );
        }
        let is_created = kind == "response.created";
        if is_created && self.created[r].ordinal == NOT_CREATED {
            self.created[r].ordinal = self.n_created;
            self.n_created += 1;
        }
        if !counted || !(is_created || audio) {
            return;
        }
        if self.created[r].known {
            return;
        }
        let stamps = self.open.entry(ix).or_default();
        if is_created {
            stamps.0.get_or_insert(at_s);
        }
        if audio {
            stamps.1.get_or_insert(at_s);
        }
        let (Some(origin), Some(first)) = *stamps else {
            return;
        };
        self.open.remove(&ix);
        // A counted `response.created` named it, so it has a creation position.
        let c = &mut self.created[r];
        if c.ordinal != NOT_CREATED {
            c.known = true;
            let (ordinal, ttfp) = (c.ordinal, round_dp((first - origin) * 1000.0, 3));
            self.known(ordinal, ttfp);
        }
    }

    /// The session let go of every response before index `upto` (they are done and all
    /// their audio played: `session::responses`), so what is kept of them goes. One
    /// created without a TTFP will never have one: its place in the creation order is
    /// passed over (counted as summed, adding nothing), so the responses created after
    /// it are summed instead of waiting for ever — the mean the report computes skips it
    /// the same way. A long session then keeps a bounded number of records here.
    pub fn let_go_below(&mut self, upto: RespIx) {
        while self.first < upto {
            let ix = self.first;
            self.first += 1;
            self.open.remove(&ix);
            let Some(c) = self.created.pop_front() else {
                self.first = upto;
                break;
            };
            if c.ordinal != NOT_CREATED && !c.known {
                self.known(c.ordinal, f64::NAN);
            }
        }
    }

    /// Response `ordinal`'s TTFP is `ttfp` ms: summed now if every response created
    /// before it is summed, and with it those waiting on it; else it waits.
    fn known(&mut self, ordinal: u32, ttfp: f64) {
        if ordinal != self.summed {
            let at = (self.waiting).partition_point(|(o, _)| *o > ordinal);
            self.waiting.insert(at, (ordinal, ttfp));
            return;
        }
        self.add(ttfp);
        while let Some(&(o, v)) = self.waiting.last()
            && o == self.summed
        {
            self.waiting.pop();
            self.add(v);
        }
    }

    /// Sum the next response in creation order.
    fn add(&mut self, ttfp: f64) {
        let sum = self.start();
        self.summed += 1;
        if ttfp.is_finite() {
            self.sum = sum + ttfp;
            self.finite += 1;
        }
    }

    /// The sum so far: where the report's `Iterator::sum` starts (its sign of zero) while
    /// nothing is summed.
    fn start(&self) -> f64 {
        if self.finite == 0 {
            std::iter::empty::<f64>().sum()
        } else {
            self.sum
        }
    }

    /// Records kept: one per response held, one per response with a single stamp, one
    /// per TTFP waiting on an earlier response.
    #[cfg(test)]
    pub fn records_kept(&self) -> usize {
        self.created.len() + self.open.len() + self.waiting.len()
    }

    /// How many responses have their TTFP.
    #[cfg(test)]
    pub fn known_count(&self) -> usize {
        self.summed as usize + self.waiting.len()
    }

    /// The mean TTFP so far, ms, 3 decimals (`None` before any response has one): the
    /// summed ones' sum, then the waiting ones in creation order, as one left-to-right
    /// sum over the known TTFPs in creation order (the report's).
    pub fn mean_ms(&self) -> Option<f64> {
        let (sum, n) = (self.waiting.iter().rev())
            .map(|(_, v)| *v)
            .filter(|v| v.is_finite())
            .fold((self.start(), self.finite), |(s, n), v| (s + v, n + 1));
        (n > 0).then(|| round_dp(sum / n as f64, 3))
    }
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;
