//! One case's captured output as its report needs it: what the session spilled (events,
//! played segments) read back from the run's spool and each response's transcript
//! rebuilt, held only while that case is built and published, so the report's memory
//! does not grow with the number or the length of the sessions. Spooled events are
//! decoded once, as they are read back, when their lines take at most
//! [`DECODE_ONCE_BYTES`] (a bench's 10-second case: ~20 KB), and every pass over them
//! (metrics, transcripts, the timeline, `events.json`) reads that one parse (decoding
//! each line again per pass drew a tenth of publication's perf samples). A longer log
//! stays its spilled lines (about a tenth of their parsed size), decoded one at a time
//! by each pass ([`Events::each`]), so what a case holds stays bounded either way.

use std::borrow::Cow;

use bytes::Bytes;
use serde_json::Value;

use super::super::playback::{Segment, SegmentPcm, decode_segments};
use super::super::session::{DuplexOutput, ResponseRecord, events, fill_texts};
use super::RunRecord;
use crate::workload::spool::Spool;
use crate::workload::{Failure, FailureKind};
use events::Timed as _;

/// A case's output with its spilled parts read back.
pub(super) struct Restored<'a> {
    /// The session's output.
    pub out: &'a DuplexOutput,
    /// Every event the session observed, with its receipt time.
    pub events: Events<'a>,
    /// Every played segment, in clock order.
    pub segments: Cow<'a, [Segment]>,
    /// The created responses, transcripts rebuilt from `events`.
    pub responses: Vec<ResponseRecord>,
}

/// Reads `out`'s spilled events and segments back from `spool` (flushed beforehand) and
/// rebuilds the transcripts. A read-back error (naming the spool file or the damage) comes
/// beside what was in memory.
pub(super) fn restore<'a>(
    out: &'a DuplexOutput,
    spool: Option<&Spool>,
) -> (Restored<'a>, Option<String>) {
    restore_with(out, spool, DECODE_ONCE_BYTES)
}

/// [`restore`], spilled events decoded once when their lines take at most `decode_once`
/// bytes.
fn restore_with<'a>(
    out: &'a DuplexOutput,
    spool: Option<&Spool>,
    decode_once: usize,
) -> (Restored<'a>, Option<String>) {
    let mut r = Restored {
        out,
        events: Events::Memory(&out.events),
        segments: Cow::Borrowed(&out.segments),
        responses: out.responses.clone(),
    };
    let error = spool.and_then(|s| read_back(&mut r, s, decode_once).err());
    fill_texts(&mut r.responses, r.events.each());
    (r, error)
}

fn read_back(r: &mut Restored<'_>, spool: &Spool, decode_once: usize) -> Result<(), String> {
    let o = r.out;
    let in_file = |e: String| format!("{e} (spool file {})", spool.dir().display());
    if !o.segments_spooled.is_empty() {
        let mut all = Vec::new();
        for span in &o.segments_spooled {
            let bytes = spool.load(*span).map_err(|e| e.to_string())?;
            all.extend(decode_segments(&bytes).map_err(in_file)?);
        }
        all.extend_from_slice(&o.segments);
        r.segments = Cow::Owned(all);
    }
    if let Some(span) = o.events_spooled {
        let bytes = spool.load(span).map_err(|e| e.to_string())?;
        // Every line is checked once here, so the passes that decode them again cannot
        // meet a damaged one.
        if bytes.len() <= decode_once {
            let decoded = events::decode_each(&bytes).collect::<Result<Vec<_>, _>>();
            r.events = Events::Decoded(decoded.map_err(in_file)?);
        } else {
            for line in events::decode_each(&bytes) {
                line.map_err(in_file)?;
            }
            r.events = Events::Spooled(bytes);
        }
    }
    Ok(())
}

/// Reads back each held session's spilled past turns into its output's `turns`, and the
/// rows of the responses that left its window into its `responses` (after the run's
/// flush: the sessions themselves never read them back, so their shard threads never
/// wait on the spool while others are paced). A log that cannot be read back fails its
/// sample with a report failure naming the spool file: no turn or row is dropped
/// silently, and its other turns are not reported. Returns those failures as
/// `(position among measured samples, message)` ([`crate::workload::Report::report_failures`]).
pub(super) fn restore_turns(run: &mut RunRecord, spool: Option<&Spool>) -> Vec<(usize, String)> {
    let mut failed = Vec::new();
    let measured = run.samples.iter().map(|s| !s.warmup);
    let positions: Vec<Option<usize>> = measured
        .scan(0, |n, m| {
            *n += usize::from(m);
            Some(m.then(|| *n - 1))
        })
        .collect();
    for (sample, pos) in run.samples.iter_mut().zip(positions) {
        let Some(Some(out)) = sample.output.as_mut() else {
            continue;
        };
        let Some(left) = out.turns_spooled.take() else {
            continue;
        };
        let turns = (left.has_turns())
            .then(|| load(spool, left.spilled()).and_then(|b| left.records(&b)))
            .transpose()
            .map_err(|e| format!("the turns could not be read back: {e}"));
        let rows = (left.rows.as_ref())
            .map(|rows| load(spool, rows.spilled()).and_then(|b| rows.merge(&b, &out.responses)))
            .transpose()
            .map_err(|e| format!("the response rows could not be read back: {e}"));
        match turns.and_then(|t| Ok((t, rows?))) {
            Ok((turns, rows)) => {
                if let Some(t) = turns {
                    out.turns = t;
                }
                if let Some(r) = rows {
                    out.responses = r;
                }
            }
            Err(why) => {
                out.success = false;
                out.error.get_or_insert_with(|| why.clone());
                if sample.outcome.is_ok() {
                    failed.extend(pos.map(|p| (p, why.clone())));
                    sample.outcome = Err(Failure::new(FailureKind::Report, why));
                }
            }
        }
    }
    failed
}

/// The bytes of `span` of the run's spool (flushed), none for none.
fn load(
    spool: Option<&Spool>,
    span: Option<crate::workload::spool::Span>,
) -> Result<Bytes, String> {
    match (spool, span) {
        (Some(spool), Some(span)) => spool.load(span).map_err(|e| e.to_string()),
        (None, Some(_)) => Err("a spooled log without a spool".to_string()),
        (_, None) => Ok(Bytes::new()),
    }
}

/// Spilled event lines of at most this many bytes are decoded once and held parsed while
/// their case is published (a few times their size); longer ones are decoded by each pass.
pub const DECODE_ONCE_BYTES: usize = 1 << 20;

/// A case's events: the session's own (kept in memory), its spilled lines decoded once,
/// or its spilled lines.
pub(super) enum Events<'a> {
    /// Kept by the session.
    Memory(&'a [(f64, Value)]),
    /// Read back from the spool and decoded ([`DECODE_ONCE_BYTES`] at most).
    Decoded(Vec<(f64, Value)>),
    /// Read back from the spool, checked whole ([`restore`]).
    Spooled(Bytes),
}

impl Events<'_> {
    /// Each event with its receipt time, in order; spilled lines are decoded as the
    /// iteration reaches them.
    pub fn each(&self) -> Box<dyn Iterator<Item = (f64, Cow<'_, Value>)> + '_> {
        match self {
            Self::Memory(evs) => Box::new(evs.iter().map(|t| (t.at_s(), Cow::Borrowed(&t.1)))),
            Self::Decoded(evs) => Box::new(evs.iter().map(|t| (t.at_s(), Cow::Borrowed(&t.1)))),
            Self::Spooled(bytes) => Box::new(
                events::decode_each(bytes)
                    .filter_map(Result::ok)
                    .map(|(at_s, ev)| (at_s, Cow::Owned(ev))),
            ),
        }
    }
}

/// A segment's kept bytes: in memory, or read back from the run's spool (flushed).
pub(super) fn segment_pcm(pcm: &SegmentPcm, spool: Option<&Spool>) -> Result<Bytes, String> {
    match (pcm, spool) {
        (SegmentPcm::Memory(b), _) => Ok(b.clone()),
        (SegmentPcm::Spooled(span), Some(spool)) => spool.load(*span).map_err(|e| e.to_string()),
        (SegmentPcm::Spooled(_), None) => Err("spooled output PCM without a spool".into()),
    }
}

#[cfg(test)]
#[path = "restore_tests.rs"]
mod tests;
