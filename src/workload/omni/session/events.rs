//! A session's event log: every recorded event with its receipt time, kept in memory or —
//! for measured sessions of a run — spilled as lines to the run's spool (a file of its
//! own per session, read back by the report after timing), so the events never accumulate
//! in the session's memory. Beside it, what the live session must know without its
//! events: the mean TTFP so far ([`LiveTtfp`], fed as events arrive, with exactly
//! [`super::super::metrics::response_rows`]'s stream-start rule) and the events before
//! the stream started (the negotiated model unit is read from those).
//!
//! A spilled line is `<receipt seconds>\t<JSON>\n`: Rust prints an `f64` in the shortest
//! form that parses back to the same value. The JSON is the event's text exactly as it
//! was received when the session recorded it unchanged and the text has no raw newline
//! (most events: no second serialization on the hot path), else the recorded event
//! serialized compactly (no raw newline either; from the session, without the receipt-time
//! key it lacked). [`decode_each`] parses each line and adds the receipt time under
//! `_client_received_at_s` when absent — the rule the session applies before it records —
//! so it returns exactly what was pushed either way.

use std::io::Write as _;

use serde_json::Value;

use crate::workload::omni::ids::RespIx;
use crate::workload::omni::metrics::LiveTtfp;
#[cfg(test)]
use crate::workload::omni::metrics::audio_packet;
#[cfg(test)]
use crate::workload::omni::{ids::ResponseIds, metrics::response_id};
use crate::workload::spool::{SessionSpool, Span};

/// The event log and the live metrics of one session.
#[derive(Debug, Default)]
pub struct EventLog {
    count: usize,
    mem: Vec<(f64, Value)>,
    spool: Option<SessionSpool>,
    spooled: Option<Span>,
    /// Events recorded before the stream started (a handful: the session is configuring).
    pre_start: Vec<(f64, Value, Option<RespIx>)>,
    /// The ids of [`EventLog::push`]'s events (a session passes its own indices).
    #[cfg(test)]
    own: ResponseIds,
    stream_start_s: Option<f64>,
    ttfp: LiveTtfp,
    /// The line being spilled (one buffer reused for every event).
    line: Vec<u8>,
}

/// The largest line buffer a session keeps between events.
const LINE_KEEP_BYTES: usize = 4096;

/// The key under which an event carries its receipt time: seconds since the session's
/// WebSocket opened (the session's clock; the reference writes `time.monotonic()`, whose
/// origin is arbitrary, so only differences within a session mean anything in either).
pub const RECEIVED_AT: &str = "_client_received_at_s";

impl EventLog {
    /// Spill the events to `spool` (this session's own logical spool file) from now on.
    pub fn spill_to(&mut self, spool: SessionSpool) {
        self.spool = Some(spool);
    }

    /// Events recorded so far.
    pub fn len(&self) -> usize {
        self.count
    }

    /// The events recorded before the stream started, newest first.
    pub fn before_stream_newest_first(&self) -> impl Iterator<Item = &Value> {
        self.pre_start.iter().rev().map(|(_, e, _)| e)
    }

    /// The stream started at `at_s`: events recorded before it now count for the metrics
    /// as [`super::super::metrics::response_rows`] would count them.
    pub fn stream_started(&mut self, at_s: f64) {
        if self.stream_start_s.is_some() {
            return;
        }
        self.stream_start_s = Some(at_s);
        for (t, ev, ix) in &self.pre_start {
            self.ttfp.observe_at(*t, ev, *t >= at_s, *ix);
        }
    }

    /// Records `ev`, received at `at_s`. `raw` is the text it was parsed from when `ev` is
    /// that text unchanged but for [`RECEIVED_AT`] set to `at_s` where it was absent: a
    /// spilled line then carries the text as received.
    #[cfg(test)]
    pub fn push(&mut self, at_s: f64, ev: Value, raw: Option<&str>) {
        let ix = response_id(&ev).map(|r| self.own.intern(r));
        self.push_inner(at_s, Plain { ev, raw }, ix, false);
    }

    /// Records `ev`, received at `at_s`, with [`RECEIVED_AT`] set to `at_s` where absent
    /// (the session's rule) and the session's index of the event's response id
    /// ([`LiveTtfp::observe_at`]; `None` when it names none). `raw` is the text `ev` was
    /// parsed from when `ev` is that text unchanged. The key is set only in the copies
    /// the log keeps: a spilled line goes without it, and [`decode_each`] adds it back
    /// from the line's own receipt time, the same `f64` (a spilled event, as every
    /// measured one is, saves the key's allocation). A log is fed by this or by
    /// [`EventLog::push`], never both.
    #[cfg(test)]
    pub fn push_received(&mut self, at_s: f64, ev: Value, raw: Option<&str>, ix: Option<RespIx>) {
        self.push_inner(at_s, Plain { ev, raw }, ix, true);
    }

    /// Records `ev`, received at `at_s`, as `push_received` does (the receipt time where
    /// absent in the copies the log keeps), for an event as the session records it: its `Value`
    /// is built only where the log keeps a copy (before the stream started, or a log
    /// kept in memory) or writes one that is not the text as received.
    pub fn push_recorded(&mut self, at_s: f64, ev: impl Recorded, ix: Option<RespIx>) {
        self.push_inner(at_s, ev, ix, true);
    }

    /// Records `ev`; `stamp`: with [`RECEIVED_AT`] where the log keeps it.
    fn push_inner(&mut self, at_s: f64, ev: impl Recorded, ix: Option<RespIx>, stamp: bool) {
        let stamped = |mut ev: Value| {
            if let (true, Value::Object(m)) = (stamp, &mut ev) {
                m.entry(RECEIVED_AT).or_insert(Value::from(at_s));
            }
            ev
        };
        self.count += 1;
        match self.stream_start_s {
            Some(s) => {
                let (kind, audio) = ev.ttfp_reading();
                self.ttfp.observe_kind(at_s, kind, audio, at_s >= s, ix);
            }
            None => self.pre_start.push((at_s, stamped(ev.to_value()), ix)),
        }
        let Some(spool) = self.spool.as_mut() else {
            self.mem.push((at_s, stamped(ev.into_value())));
            return;
        };
        let raw = ev.raw().filter(|t| !t.as_bytes().contains(&b'\n'));
        self.line.clear();
        match raw {
            Some(text) => {
                let _ = write!(self.line, "{at_s}\t");
                self.line.extend_from_slice(text.as_bytes());
                self.line.push(b'\n');
            }
            None => {
                let _ = write!(self.line, "{at_s}\t");
                ev.write_json(&mut self.line);
                self.line.push(b'\n');
            }
        }
        let span = spool.append(&self.line);
        if self.line.capacity() > LINE_KEEP_BYTES {
            // A rare large event does not set what the session holds for its whole life.
            self.line = Vec::new();
        }
        let whole = self.spooled.get_or_insert(Span { len: 0, ..span });
        whole.len += span.len;
    }

    /// The session let go of every response before index `upto`: the live TTFP drops
    /// what it kept of them ([`LiveTtfp::let_go_below`]). Before the stream started
    /// nothing is let go (the session lets responses go only once it has a horizon).
    pub fn let_go_below(&mut self, upto: RespIx) {
        if self.stream_start_s.is_some() {
            self.ttfp.let_go_below(upto);
        }
    }

    /// What the live TTFP keeps ([`LiveTtfp::records_kept`]).
    #[cfg(test)]
    pub fn ttfp_records_kept(&self) -> usize {
        self.ttfp.records_kept()
    }

    /// The session's mean TTFP so far, ms, as the report will compute it from the events
    /// (a session that never streamed counts every event, as the report does).
    pub fn mean_ttfp_ms(&self) -> Option<f64> {
        match self.stream_start_s {
            Some(_) => self.ttfp.mean_ms(),
            None => {
                let mut ttfp = self.ttfp.clone();
                for (t, ev, ix) in &self.pre_start {
                    ttfp.observe_at(*t, ev, *t >= 0.0, *ix);
                }
                ttfp.mean_ms()
            }
        }
    }

    /// [`Self::mean_ttfp_ms`] once the stream started (cheap: the responses waiting on an
    /// earlier one, usually none); `None` before, when it would replay what came first.
    pub fn mean_ttfp_so_far_ms(&self) -> Option<f64> {
        self.stream_start_s.and_then(|_| self.ttfp.mean_ms())
    }

    /// The events kept in memory and where the spilled ones are.
    pub fn into_parts(self) -> (Vec<(f64, Value)>, Option<Span>) {
        (self.mem, self.spooled)
    }
}

/// Appends the spilled line for `ev`, serialized, to `line`.
#[cfg(test)]
fn write_line(line: &mut Vec<u8>, at_s: f64, ev: &Value) {
    let _ = write!(line, "{at_s}\t");
    Plain {
        ev: ev.clone(),
        raw: None,
    }
    .write_json(line);
    line.push(b'\n');
}

/// An event as the log records it (the receipt-time rule is the log's).
pub trait Recorded {
    /// What the live TTFP reads: the `type` (empty when absent or not a string) and
    /// whether it is an audio delta that carries audio (`metrics::audio_packet`).
    fn ttfp_reading(&self) -> (&str, bool);
    /// The text it was parsed from, when it is that text unchanged.
    fn raw(&self) -> Option<&str>;
    /// Appends it serialized as `Value` writes it compactly.
    fn write_json(&self, out: &mut Vec<u8>);
    /// A copy as `Value`.
    fn to_value(&self) -> Value;
    /// Itself as `Value`.
    fn into_value(self) -> Value;
}

/// A recorded `Value` and the text it is, unchanged, when known.
#[cfg(test)]
struct Plain<'t> {
    ev: Value,
    raw: Option<&'t str>,
}

#[cfg(test)]
impl Recorded for Plain<'_> {
    fn ttfp_reading(&self) -> (&str, bool) {
        let kind = self.ev.get("type").and_then(Value::as_str).unwrap_or("");
        (kind, audio_packet(&self.ev))
    }
    fn raw(&self) -> Option<&str> {
        self.raw
    }
    fn write_json(&self, out: &mut Vec<u8>) {
        // Writing into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, &self.ev);
    }
    fn to_value(&self) -> Value {
        self.ev.clone()
    }
    fn into_value(self) -> Value {
        self.ev
    }
}

/// The events of a spilled log, in order; a line that does not parse is an error naming
/// its number.
#[cfg(test)]
pub fn decode(bytes: &[u8]) -> Result<Vec<(f64, Value)>, String> {
    decode_each(bytes).collect()
}

/// [`decode`], one event at a time: what the report reads a spooled case with, so only
/// the lines (not every event's parsed tree) are held while the case is published.
pub fn decode_each(bytes: &[u8]) -> impl Iterator<Item = Result<(f64, Value), String>> + '_ {
    let lines = bytes.split(|b| *b == b'\n').enumerate();
    lines
        .filter(|(_, line)| !line.is_empty())
        .map(|(i, line)| decode_line(i, line))
}

/// One spilled line (the `i`-th, from 0) back into its event.
fn decode_line(i: usize, line: &[u8]) -> Result<(f64, Value), String> {
    let bad = || format!("spooled event line {} is damaged", i + 1);
    let tab = line.iter().position(|b| *b == b'\t').ok_or_else(bad)?;
    let at_s: f64 = std::str::from_utf8(&line[..tab])
        .ok()
        .and_then(|t| t.parse().ok())
        .ok_or_else(bad)?;
    let mut ev: Value = serde_json::from_slice(&line[tab + 1..]).map_err(|_| bad())?;
    if let Value::Object(m) = &mut ev {
        m.entry(RECEIVED_AT).or_insert(Value::from(at_s));
    }
    Ok((at_s, ev))
}

/// One event with its receipt time, borrowed from a log kept in memory or decoded from a
/// spooled line: what the report's passes over a case's events take.
pub trait Timed {
    /// Receipt time, seconds on the session's clock.
    fn at_s(&self) -> f64;
    /// The event.
    fn event(&self) -> &Value;
}

impl Timed for &(f64, Value) {
    fn at_s(&self) -> f64 {
        self.0
    }
    fn event(&self) -> &Value {
        &self.1
    }
}

impl Timed for (f64, std::borrow::Cow<'_, Value>) {
    fn at_s(&self) -> f64 {
        self.0
    }
    fn event(&self) -> &Value {
        &self.1
    }
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
