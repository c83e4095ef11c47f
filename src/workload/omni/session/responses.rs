//! Per-response bookkeeping of one duplex session: the ledger, audio validation and the
//! serial playback clock, text per response, the post-commit decision, and the
//! reference's output checks after a clean close (spec §1.5 "Case success", §1.7).

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};

use serde_json::Value;

use super::output::{DuplexOutput, ResponseRecord};
use super::parse::AudioPayload;

thread_local! {
    /// The audio delta being ingested, decoded (one buffer per shard thread).
    static DECODED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The largest decode buffer a shard thread keeps between deltas.
const DECODED_KEEP_BYTES: usize = 64 * 1024;
use crate::workload::omni::ids::{RespIx, ResponseIds};
use crate::workload::omni::ledger::{
    self, AUDIO_DELTA_TYPES, AudioCheck, EventView, Ledger, PostCommit, TEXT_DELTA_TYPES,
    response_id,
};
use crate::workload::omni::playback::{OUTPUT_RATE, PlaybackClock, SegmentPcm};
use crate::workload::spool::SessionSpool;
use crate::workload::spool::spilled::SpilledLog;

/// The response ids a session holds beyond those still in play: the window of
/// [`Responses`]. A response leaves it once it is the oldest held, created and done, and
/// all its audio has played (nothing in play names it), and more than this many newer
/// ones were named. A stated limit: what the checks no longer see is in [`Responses`].
pub const RESPONSE_WINDOW: usize = 32;

/// What the session accumulates per response id (text may precede `response.created`),
/// 8 bytes: the result's row of each created response is built from it at the end.
/// The transcript itself is not kept: the report rebuilds it from the event log
/// ([`fill_texts`]); the session only needs to know whether it has any non-blank text.
#[derive(Debug, Clone, Copy)]
struct RespInfo {
    /// Its position in creation order, [`NOT_CREATED`] until a `response.created` named it.
    ordinal: u32,
    /// [`HAS_TEXT`], [`NONBLANK`], [`DONE`], [`CANCELLED`], [`CLEARED`].
    flags: u8,
}

/// [`RespInfo::ordinal`] of a response no `response.created` named.
const NOT_CREATED: u32 = u32::MAX;
/// A transcript delta named it.
const HAS_TEXT: u8 = 1;
/// One of its transcript deltas was not blank.
const NONBLANK: u8 = 2;
/// A `response.done` named it.
const DONE: u8 = 4;
/// Its last `response.done` said `cancelled`.
const CANCELLED: u8 = 8;
/// A barge-in clear cut its audio.
const CLEARED: u8 = 16;

impl Default for RespInfo {
    fn default() -> Self {
        Self {
            ordinal: NOT_CREATED,
            flags: 0,
        }
    }
}

impl RespInfo {
    fn ordinal(&self) -> Option<u32> {
        (self.ordinal != NOT_CREATED).then_some(self.ordinal)
    }
    fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
    fn set(&mut self, flag: u8, on: bool) {
        self.flags = if on {
            self.flags | flag
        } else {
            self.flags & !flag
        };
    }
}

/// An ingested audio delta: decoded bytes, playable seconds, response ordinal.
pub(super) struct Ingested {
    /// Decoded PCM16 bytes.
    pub bytes: usize,
    /// Playable seconds at 24 kHz.
    pub duration_s: f64,
    /// Position of the response in creation order.
    pub ordinal: u64,
}

/// Response-level state of one session.
///
/// The ids, flags (8 bytes of flags and creation order) and ledger state it keeps are a
/// window ([`RESPONSE_WINDOW`]): a response leaves once it is the oldest held, created
/// and done, all its audio played, and more than the window's number of newer ids were
/// named. What leaves is counted exactly, its result row goes to a rows log (spilled to
/// the session's spool past a 512-byte tail, read back only by the report: [`RowsLeft`]),
/// and whether it was a complete response is kept for the final check. Inside the window
/// every check is exact (spec §1.7: a repeated id is a duplicate, a late delta counts for
/// its response); an event naming a response that left is taken for a new id, so a
/// repeated `response.created` passes, a repeated `response.done` fails as done without
/// created, and a late audio or transcript delta fails as having no matching
/// `response.created` (the README states this limit). What still grows with the
/// responses: 16 bytes a response in the playback clock once settled
/// ([`PlaybackClock`]) and the live TTFP's 8 bytes (plus 16 while a TTFP waits on an
/// earlier response's). Everything else is bounded by what is in play, not by the
/// session's length: the clock's full records (~104 bytes and a copy of the id each)
/// only for responses with audio held or an ack to come; held segments until they
/// retire; stamps only for responses with one of two.
#[derive(Debug)]
pub(super) struct Responses {
    /// Created/done bookkeeping.
    pub ledger: Ledger,
    /// The serial playback clock and acknowledger.
    pub clock: PlaybackClock,
    audio: AudioCheck,
    post: Option<PostCommit>,
    /// Every response id an event named: the one copy of it the session keeps, and the
    /// index its records are kept under.
    ids: ResponseIds,
    /// What is known of each held response, under its index less `evicted`.
    info: VecDeque<RespInfo>,
    /// How many responses left the window (the index of the first held one): exact.
    evicted: u32,
    /// How many of them were created: their rows are in `rows`.
    rows_n: u32,
    /// Whether one that left was complete (created, done, not cancelled, with non-blank
    /// text and audible inside the output horizon): [`Responses::final_checks`] reads it.
    complete_evicted: bool,
    /// The output horizon (stream start, duration), once the stream started.
    horizon: Option<(f64, f64)>,
    /// The rows of the responses that left, encoded ([`encode_row`]); past a 512-byte tail
    /// in the session's spool when it has one. Only the report reads them back.
    rows: SpilledLog,
    /// Responses created so far.
    created: u32,
    orphan_text: bool,
}

impl Responses {
    /// Empty state; `incremental_acks` selects the ack policy.
    pub fn new(incremental_acks: bool) -> Self {
        Self {
            ledger: Ledger::default(),
            clock: PlaybackClock::new(incremental_acks),
            audio: AudioCheck::default(),
            post: None,
            ids: ResponseIds::default(),
            info: VecDeque::new(),
            evicted: 0,
            rows_n: 0,
            complete_evicted: false,
            horizon: None,
            rows: SpilledLog::default(),
            created: 0,
            orphan_text: false,
        }
    }

    /// Account for one event received at `at_s`. Audio deltas are validated and queued on
    /// the playback clock (their bytes kept when `capture`: spilled to `spool` if given,
    /// in memory otherwise); an invalid one is the session's failure message.
    pub fn observe<E: EventView + ?Sized>(
        &mut self,
        ev: &E,
        payload: &AudioPayload<'_>,
        at_s: f64,
        (capture, spool): (bool, Option<&mut SessionSpool>),
        out: &mut DuplexOutput,
    ) -> Result<Option<Ingested>, String> {
        let kind = ev.kind();
        let rid = ev.response_id().filter(|r| !r.is_empty());
        let ingested = if AUDIO_DELTA_TYPES.contains(&kind) {
            Some(self.ingest(ev, payload, at_s, (capture, spool), out)?)
        } else {
            None
        };
        // The id is looked up once; every holder keeps its record under its index.
        let ix = rid.map(|r| self.ix_of(r));
        if kind == "response.created"
            && let Some(ix) = ix
        {
            let info = &mut self.info[(ix - self.evicted) as usize];
            if info.ordinal().is_none() {
                info.ordinal = self.created;
                self.created += 1;
            }
        }
        self.ledger.observe_at(ev, ix);
        if let Some(post) = self.post.as_mut() {
            post.observe(ev);
        }
        match kind {
            "response.done" => {
                if let Some(ix) = ix {
                    self.clock.complete_named(ix, self.ids.id(ix), at_s);
                    let info = self.info_at(ix);
                    info.set(DONE, true);
                    info.set(CANCELLED, ledger::is_cancelled(ev.value()));
                }
            }
            "output_audio_buffer.cleared" => {
                for (r, _) in self.clock.clear(rid, at_s) {
                    self.info_mut(&r).set(CLEARED, true);
                    ledger::warn_once(&mut out.ineligible_reasons, "cleared_response".into());
                }
            }
            k if TEXT_DELTA_TYPES.contains(&k) => match ix {
                Some(ix) => {
                    let nonblank = !text_delta(ev).trim().is_empty();
                    let info = self.info_at(ix);
                    info.set(HAS_TEXT, true);
                    info.flags |= if nonblank { NONBLANK } else { 0 };
                }
                None => self.orphan_text = true,
            },
            _ => {}
        }
        self.evict(at_s);
        Ok(ingested)
    }

    /// Validate audio delta `ev` and queue it on the playback clock (see
    /// [`Responses::observe`]).
    fn ingest<E: EventView + ?Sized>(
        &mut self,
        ev: &E,
        payload: &AudioPayload<'_>,
        at_s: f64,
        (capture, spool): (bool, Option<&mut SessionSpool>),
        out: &mut DuplexOutput,
    ) -> Result<Ingested, String> {
        // Decoded into the shard thread's buffer: kept in memory only by a copy, spooled
        // (one append to the shared batch) or dropped without an allocation of its own.
        DECODED.with_borrow_mut(|pcm| {
            let queued = match (self.audio).check_into(ev, payload, &mut out.artifact_warnings, pcm)
            {
                Ok(id) => self.queue_audio(id, pcm, at_s, (capture, spool), out),
                Err(e) => Err(e.to_string()),
            };
            if pcm.capacity() > DECODED_KEEP_BYTES {
                // A rare huge delta, valid or not, does not stay pinned.
                *pcm = Vec::new();
            }
            queued
        })
    }

    /// Queues a checked delta's decoded `pcm` of response `id` on the playback clock.
    fn queue_audio(
        &mut self,
        id: &str,
        pcm: &[u8],
        at_s: f64,
        (capture, spool): (bool, Option<&mut SessionSpool>),
        out: &mut DuplexOutput,
    ) -> Result<Ingested, String> {
        // §1.7: checked during ingestion, so the case fails as the delta arrives.
        let Some((ix, ordinal)) =
            (self.ids.get(id)).and_then(|ix| Some((ix, self.info(ix).ordinal()?)))
        else {
            return Err("response audio has no matching response.created".into());
        };
        let kept = match (capture, spool) {
            (false, _) => SegmentPcm::default(),
            (true, None) => SegmentPcm::Memory(bytes::Bytes::copy_from_slice(pcm)),
            (true, Some(spool)) => SegmentPcm::Spooled(spool.append(pcm)),
        };
        let samples = (self.clock).ingest_named(ix, self.ids.id(ix), pcm, at_s, kept);
        out.audio_bytes += pcm.len() as u64;
        Ok(Ingested {
            bytes: pcm.len(),
            duration_s: samples as f64 / OUTPUT_RATE as f64,
            ordinal: u64::from(ordinal),
        })
    }

    /// Created but not finished response ids, sorted (as the reference prints them).
    pub fn unfinished(&self) -> Vec<&str> {
        self.ledger.unfinished_in(&self.ids)
    }

    /// Milliseconds of `id`'s audio played by `at_s` on the playback clock.
    pub fn played_ms(&mut self, id: &str, at_s: f64) -> f64 {
        let ix = self.ix_of(id);
        self.clock.played_ms(ix, at_s)
    }

    /// Milliseconds of `id`'s audio the playback clock kept (after any clear).
    pub fn kept_ms(&mut self, id: &str) -> f64 {
        let ix = self.ix_of(id);
        self.clock.kept_ms(ix)
    }

    /// Response `id`'s index in the session's table (recorded on first sight): the
    /// event log's live TTFP keeps its records under it too.
    pub fn ix_of(&mut self, id: &str) -> RespIx {
        let ix = self.ids.intern(id);
        if (ix - self.evicted) as usize == self.info.len() {
            self.info.push_back(RespInfo::default());
        }
        ix
    }

    /// What is known of held response `ix`.
    fn info(&self, ix: RespIx) -> RespInfo {
        self.info[(ix - self.evicted) as usize]
    }

    /// What is known of held response `ix`, to change.
    fn info_at(&mut self, ix: RespIx) -> &mut RespInfo {
        &mut self.info[(ix - self.evicted) as usize]
    }

    /// What is known of response `id` (recorded on first sight).
    fn info_mut(&mut self, id: &str) -> &mut RespInfo {
        let ix = self.ix_of(id);
        self.info_at(ix)
    }

    /// The final input was committed (after the events observed so far). A deferred
    /// commit first waits for the responses open right now.
    pub fn committed(&mut self, deferred: bool) {
        let prior = if deferred {
            self.unfinished()
        } else {
            Vec::new()
        };
        self.post = Some(PostCommit::new(prior.into_iter().map(str::to_owned)));
    }

    /// Committed, ledger closed and a post-commit decision seen.
    pub fn ready(&self) -> bool {
        self.ledger.is_closed() && self.post.as_ref().is_some_and(PostCommit::decided)
    }

    /// The reference's checks after a clean close, in its order.
    pub fn final_checks(
        &self,
        require: bool,
        stream_start_s: f64,
        duration_s: f64,
    ) -> Result<(), String> {
        if let Some(e) = self.ledger.error() {
            return Err(e.to_string());
        }
        let open = self.unfinished();
        if !open.is_empty() {
            return Err(format!(
                "unfinished response_ids: {}",
                ledger::py_list(&open)
            ));
        }
        if (self.clock.responses_with_audio_at()).any(|ix| !self.ledger.is_created_at(ix)) {
            return Err("response audio has no matching response.created".into());
        }
        let stray = (self.ids.iter().zip(&self.info))
            .any(|((ix, _), i)| i.has(HAS_TEXT) && !self.ledger.is_created_at(ix));
        if self.orphan_text || stray {
            return Err("response transcript has no matching response.created".into());
        }
        // A complete output: terminal, not cancelled, audible inside the horizon, with text
        // (one that left the window was checked as it left, against the same horizon).
        debug_assert!(
            self.evicted == 0 || self.horizon == Some((stream_start_s, duration_s)),
            "responses leave only once the horizon is set"
        );
        let complete = self.complete_evicted
            || (self.ids.iter().zip(&self.info)).any(|((ix, _), i)| {
                i.ordinal().is_some()
                    && i.has(DONE)
                    && !i.has(CANCELLED)
                    && i.has(NONBLANK)
                    && (self.clock).audible_in_horizon_at(ix, stream_start_s, duration_s)
            });
        if require && !complete {
            return Err("OmniInteract E2E requires a response with audio and transcript".into());
        }
        Ok(())
    }

    #[cfg(test)]
    /// Records for the created responses still held, in creation order, their text
    /// empty until [`fill_texts`] rebuilds it from the event log; those that left the
    /// window are in [`Responses::rows_left`].
    pub fn records(&mut self) -> Vec<ResponseRecord> {
        self.held_rows().into_iter().map(|(_, r)| r).collect()
    }

    /// The held created responses' rows with their creation positions, in that order.
    fn held_rows(&self) -> Vec<(u32, ResponseRecord)> {
        let mut created: Vec<_> = (self.ids.iter().zip(&self.info))
            .filter_map(|((_, id), i)| Some((i.ordinal()?, row(id, *i))))
            .collect();
        created.sort_unstable_by_key(|(ordinal, _)| *ordinal);
        created
    }

    /// Set the output horizon (on the playback clock too): the stream started at
    /// `stream_start_s` and lasts `duration_s`.
    pub fn set_horizon(&mut self, stream_start_s: f64, duration_s: f64) {
        self.clock.set_horizon(stream_start_s, duration_s);
        self.horizon = Some((stream_start_s, duration_s));
    }

    /// The rows of responses that leave the window go to `spool` past a 512-byte tail (a
    /// log file of their own); call before the first event.
    pub fn spill_rows_to(&mut self, spool: SessionSpool) {
        if self.evicted == 0 {
            self.rows = SpilledLog::spilling(spool);
        }
    }

    /// The session ended: the rows of the created responses it still held, in creation
    /// order, and when any left the window, every row as the report reads them back
    /// ([`RowsLeft::merge`]). No IO, O(window): it runs on the session's shard thread.
    pub fn leave(&mut self) -> (Vec<ResponseRecord>, Option<RowsLeft>) {
        let held = self.held_rows();
        let ordinals = held.iter().map(|(o, _)| *o).collect();
        let rows = held.into_iter().map(|(_, r)| r).collect();
        let left = (self.rows_n > 0).then(|| RowsLeft {
            parts: std::mem::take(&mut self.rows).into_parts(),
            count: self.rows_n,
            held: ordinals,
        });
        (rows, left)
    }

    /// Lets the oldest held responses go while more than [`RESPONSE_WINDOW`] are held
    /// and the oldest is settled: created and done, the horizon set, and all its audio
    /// played by `at_s` (no clear can cut it, no ack is owed from here). Its row goes to
    /// the rows log; whether it was complete is kept.
    fn evict(&mut self, at_s: f64) {
        while self.ids.held_len() > RESPONSE_WINDOW {
            let (Some(ix), Some((start, duration))) = (self.ids.first(), self.horizon) else {
                return;
            };
            let i = self.info(ix);
            let played = self.clock.played_ms(ix, at_s) >= self.clock.kept_ms(ix);
            match i.ordinal() {
                // Created and done, all played: its row goes.
                Some(ordinal) if self.ledger.is_done_at(ix) && played => {
                    self.complete_evicted |= i.has(DONE)
                        && !i.has(CANCELLED)
                        && i.has(NONBLANK)
                        && self.clock.audible_in_horizon_at(ix, start, duration);
                    let mut bytes = Vec::with_capacity(16 + self.ids.id(ix).len());
                    encode_row(ordinal, i.flags, self.ids.id(ix), &mut bytes);
                    self.rows.push(&bytes);
                    self.rows_n += 1;
                }
                // Named only by events that leave nothing to check (no text, no audio,
                // never created): nothing goes; named again, it is new as it was.
                None if i.flags == 0
                    && !self.ledger.is_created_at(ix)
                    && self.clock.kept_ms(ix) == 0.0 => {}
                _ => return,
            }
            self.ids.evict_first();
            self.ledger.evict_first(ix);
            self.info.pop_front();
            self.evicted += 1;
            self.clock.let_go_below(self.evicted);
        }
    }

    /// The first response index the session still holds: it let go of every one before
    /// it ([`RESPONSE_WINDOW`]), and none of those is named again.
    pub fn first_held(&self) -> RespIx {
        self.evicted
    }
}

/// Response `id`'s row from what is known of it.
fn row(id: &str, i: RespInfo) -> ResponseRecord {
    ResponseRecord {
        response_id: id.to_string(),
        text: String::new(),
        done: i.has(DONE),
        cancelled: i.has(CANCELLED),
        audio_cleared: i.has(CLEARED),
    }
}

/// A transcript delta's text as the reference appends it (a falsy delta adds nothing).
fn text_delta<E: EventView + ?Sized>(ev: &E) -> Cow<'_, str> {
    if let Some(d) = ev.str_field("delta") {
        return Cow::Borrowed(d);
    }
    match ev.field("delta") {
        Some(d) if ledger::truthy(&d) => Cow::Owned(ledger::py_str(&d)),
        _ => Cow::Borrowed(""),
    }
}

/// Each created response's transcript, rebuilt from the session's event log: its
/// transcript deltas concatenated in receipt order, exactly as the session saw them
/// (every event it observed is in the log, text deltas unchanged).
pub fn fill_texts(
    records: &mut [ResponseRecord],
    events: impl IntoIterator<Item = impl super::events::Timed>,
) {
    let at: HashMap<&str, usize> = (records.iter().enumerate())
        .map(|(i, r)| (r.response_id.as_str(), i))
        .collect();
    let mut texts = vec![String::new(); records.len()];
    for timed in events {
        let ev = timed.event();
        let kind = ev.get("type").and_then(Value::as_str).unwrap_or("");
        if TEXT_DELTA_TYPES.contains(&kind)
            && let Some(&i) = response_id(ev).and_then(|r| at.get(r))
        {
            texts[i].push_str(&text_delta(ev));
        }
    }
    for (r, t) in records.iter_mut().zip(texts) {
        r.text = t;
    }
}

mod rows;
pub use rows::RowsLeft;
use rows::encode_row;

#[cfg(test)]
#[path = "responses_tests.rs"]
mod tests;
