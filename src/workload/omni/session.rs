//! One OmniInteract duplex session as a pure state machine (spec §1.2–§1.7):
//! `session.update` → wait for `session.created` → paced appends with their video frames
//! and interleaved `playback.ack`s → final commit → completion wait (committed input,
//! closed ledger, post-commit decision, settle) → playback drain → `session.close` → wait
//! for `session.closed` → the reference's post-close and output checks.
//!
//! The reference's 20 ms / 50 ms polling loops become checks on every inbound event plus
//! wake-ups at the next moment something can change (append, ack, settle, timeout).

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::ledger::{self, ErrorVerdict, EventView};
use super::pacing::{self, BYTES_PER_SECOND, Uploader};
use super::playback::{Ack, encode_segments};
use super::upload::SharedUpload;
use crate::workload::spool::SessionSpool;
use crate::workload::{
    ConnectSpec, Effects, FailureKind, Inbound, MediaUnit, Outbound, Secret, Session,
};
use event::{Event, Kept};
use events::EventLog;

pub mod barge;
mod caps;
mod closed;
pub mod event;
pub mod events;
mod extend;
mod output;
pub mod parse;
mod responses;
pub mod turns;

pub use output::{DuplexOutput, DuplexSettings, Phase, PreparedMedia, ResponseRecord};
use responses::Responses;
pub use responses::fill_texts;

/// Played segments retire in batches of at least this many (a spilled batch repeats its
/// responses' ids once): a session holds fewer played segments than this, besides those
/// queued behind one still playing.
const RETIRE_BATCH: usize = 64;

/// The duplex session state machine.
#[derive(Debug)]
pub struct DuplexSession {
    cfg: Arc<DuplexSettings>,
    appends: SharedUpload,
    capture: bool,
    spool: Option<SessionSpool>,
    update_msg: Option<String>,
    phase: Phase,
    origin: Option<Instant>,
    deadline: Option<Instant>,
    upload: Option<Uploader>,
    streamed_len: usize,
    commit_from: usize,
    commit_at: Option<Instant>,
    committed: bool,
    last_event_at: Option<Instant>,
    close_from: usize,
    resp: Responses,
    events: EventLog,
    out: DuplexOutput,
    request_id: Option<String>,
    api_key: Option<Secret>,
    /// The last fatal `error` event and the first early `session.expired` /
    /// `session.closed` seen while configuring or uploading: the reference looks at events
    /// only from its completion wait on, so these fail the session there.
    held_error: Option<String>,
    held_end: Option<String>,
    /// What follows the case's audio (a barge-in, more turns), when the scenario asks,
    /// and the offset of its next append.
    ext: Option<extend::Ext>,
    ext_offset: usize,
}

impl DuplexSession {
    /// A session for one case (its appends built before timing); `capture` keeps output
    /// PCM in the segments (measured samples only).
    pub fn new(
        cfg: Arc<DuplexSettings>,
        appends: SharedUpload,
        session_id: String,
        capture: bool,
    ) -> Self {
        let update_msg = Some(cfg.session_update(&session_id));
        let out = DuplexOutput {
            session_id,
            pacing: cfg.pacing,
            ..DuplexOutput::default()
        };
        Self {
            resp: Responses::new(cfg.incremental_acks),
            cfg,
            appends,
            capture,
            spool: None,
            update_msg,
            phase: Phase::Configuring,
            origin: None,
            deadline: None,
            upload: None,
            streamed_len: 0,
            commit_from: 0,
            commit_at: None,
            committed: false,
            last_event_at: None,
            close_from: 0,
            events: EventLog::default(),
            out,
            request_id: None,
            api_key: None,
            held_error: None,
            held_end: None,
            ext: None,
            ext_offset: 0,
        }
    }

    /// Set what the upgrade request carries besides the run's headers: the benchmark
    /// request id (`x-request-id`, measured samples only) and the API key
    /// (`Authorization: Bearer`, from `OPENAI_API_KEY`; never logged).
    pub fn with_request(mut self, request_id: Option<String>, api_key: Option<Secret>) -> Self {
        self.request_id = request_id;
        self.api_key = api_key;
        self
    }

    /// Spill the captured output PCM to `pcm` and the event log to `events` (two spool
    /// files of the run's spool) instead of keeping them in memory; no effect without
    /// capture.
    pub fn with_spool(mut self, pcm: SessionSpool, events: SessionSpool) -> Self {
        if self.capture {
            self.resp.spill_rows_to(pcm.log());
            self.spool = Some(pcm);
            self.events.spill_to(events);
        }
        self
    }

    /// The current phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    fn secs(&self, at: Instant) -> f64 {
        self.origin
            .map_or(0.0, |o| at.saturating_duration_since(o).as_secs_f64())
    }

    fn instant(&self, secs: f64) -> Option<Instant> {
        Some(self.origin? + Duration::from_secs_f64(secs.max(0.0)))
    }

    fn short_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.cfg.timeout_s.clamp(0.0, 20.0))
    }

    fn finish(
        &mut self,
        now: Instant,
        result: Result<(), (FailureKind, String)>,
        fx: &mut Effects,
    ) {
        if self.phase == Phase::Done {
            return;
        }
        if result.is_err()
            && matches!(
                self.phase,
                Phase::Streaming | Phase::Completing | Phase::Draining
            )
        {
            fx.send(Outbound::Text(r#"{"type":"session.close"}"#.into()), None); // best effort
        }
        self.phase = Phase::Done;
        self.out.latency_s = self.secs(now);
        match result {
            Ok(()) => {
                self.out.success = true;
                fx.succeed();
            }
            Err((kind, e)) => {
                self.out.error = Some(e.clone());
                fx.fail_as(kind, e);
            }
        }
    }

    fn on_text(&mut self, text: &str, at: Instant, fx: &mut Effects) {
        let ev = match event::parse(text) {
            Ok(ev) => ev,
            Err(msg) => return self.finish(at, Err((FailureKind::Protocol, msg)), fx),
        };
        if !ev.is_object() {
            return;
        }
        let at_s = self.secs(at);
        let index = self.events.len();
        if let Some(msg) = caps::events_over(index, self.cfg.max_events) {
            return self.finish(at, Err((FailureKind::Protocol, msg)), fx);
        }
        let audio_len = match self.observe_media(&ev, at, at_s, fx) {
            Ok(n) => n,
            Err(e) => return self.finish(at, Err((FailureKind::Protocol, e)), fx),
        };
        if let Some(msg) = caps::audio_over(self.out.audio_bytes, self.cfg.max_audio_bytes) {
            return self.finish(at, Err((FailureKind::Protocol, msg)), fx);
        }
        let verdict = self.dispatch(&ev, text, index, at);
        if self.ext.is_some() {
            self.watch_ext(&ev, audio_len, at_s);
        }
        self.record(ev, text, audio_len, at_s);
        self.last_event_at = Some(at);
        if let Some(result) = verdict {
            self.finish(at, result, fx);
        }
    }

    /// Feeds `ev` to the response tracker; audio it carries goes to the playback role.
    /// Returns the decoded audio length when `ev` carried audio.
    fn observe_media(
        &mut self,
        ev: &Event<'_>,
        at: Instant,
        at_s: f64,
        fx: &mut Effects,
    ) -> Result<Option<usize>, String> {
        let Some(i) = self.resp.observe(
            ev,
            ev.audio(),
            at_s,
            (self.capture, self.spool.as_mut()),
            &mut self.out,
        )?
        else {
            return Ok(None);
        };
        fx.media.push(MediaUnit {
            at,
            duration_s: i.duration_s,
            stream: i.ordinal,
            index: 0,
        });
        Ok(Some(i.bytes))
    }

    /// What the event means for the session's lifecycle (spec §1.5): the verdict it
    /// brings, if any, and the phase changes it starts. `index` is the event's position in
    /// the session's event log.
    fn dispatch(
        &mut self,
        ev: &Event<'_>,
        text: &str,
        index: usize,
        at: Instant,
    ) -> Option<Result<(), (FailureKind, String)>> {
        // Before the completion wait the reference is sending, not looking at events.
        let uploading = matches!(self.phase, Phase::Configuring | Phase::Streaming);
        let kind = ev.kind();
        // The rare events read nested fields: from the event's `Value`.
        let full = || ev.value();
        match kind {
            "error" => match ledger::error_verdict(full(), text) {
                ErrorVerdict::Fatal(msg) if uploading => self.held_error = Some(msg),
                ErrorVerdict::Fatal(msg) => return Some(Err((FailureKind::ServerError, msg))),
                ErrorVerdict::Tolerated(w) => ledger::warn_once(&mut self.out.artifact_warnings, w),
            },
            "session.expired" | "session.closed" if uploading => {
                let first = self.held_end.take();
                self.held_end = first.or_else(|| ledger::termination_failure(full(), false, false));
            }
            "session.expired" | "session.closed" => {
                return Some(self.closed_verdict(full(), index));
            }
            "session.created" if self.phase == Phase::Configuring => {
                self.start_streaming(full(), at)
            }
            "input_audio_buffer.committed"
                if self.phase == Phase::Completing
                    && !self.committed
                    && index >= self.commit_from =>
            {
                self.committed = true;
                // Top-level `overlap_deferred` (what the reference server sends), or
                // nested under `event` like `session.closed`'s `event.reason`.
                let flag = |e: &Value| e.get("overlap_deferred") == Some(&Value::Bool(true));
                let deferred = flag(full()) || full().get("event").is_some_and(flag);
                self.resp.committed(deferred);
            }
            _ => {}
        }
        None
    }

    /// The verdict of a `session.expired` / `session.closed` after the upload: a server
    /// termination failure, else the final response checks.
    fn closed_verdict(&mut self, ev: &Value, index: usize) -> Result<(), (FailureKind, String)> {
        let closing = self.phase == Phase::Closing;
        match ledger::termination_failure(ev, closing, closing && index >= self.close_from) {
            Some(msg) => Err((FailureKind::ServerError, msg)),
            None => self
                .resp
                .final_checks(
                    self.cfg.require_response,
                    self.out.stream_start_s.unwrap_or(0.0),
                    self.appends.duration_s,
                )
                .map_err(|e| (FailureKind::Protocol, e)),
        }
    }

    /// Appends `ev` (parsed from `text`) to the event log with its receipt time; audio
    /// payloads are replaced by their decoded length (`audio_bytes`).
    fn record(&mut self, ev: Event<'_>, text: &str, audio_len: Option<usize>, at_s: f64) {
        let ix = ev.response_id().map(|r| self.resp.ix_of(r));
        self.events
            .push_recorded(at_s, Kept::new(ev, text, audio_len), ix);
        self.events.let_go_below(self.resp.first_held());
    }

    /// `session.created` (`created`, not yet in the log) arrived at `at`: the tail rule's
    /// model unit is the newest announcement, that event's own first (spec §1.4).
    fn start_streaming(&mut self, created: &Value, at: Instant) {
        let newest_first = std::iter::once(created).chain(self.events.before_stream_newest_first());
        let period = pacing::chunk_period_ms(newest_first);
        self.events.stream_started(self.secs(at));
        self.streamed_len = pacing::streamed_len(self.appends.pcm_len(), period);
        let frames = self.appends.frame_count();
        self.upload = Some(Uploader::new(
            self.cfg.pacing,
            at,
            self.streamed_len,
            frames,
        ));
        self.out.stream_start_s = Some(self.secs(at));
        (self.resp).set_horizon(self.secs(at), self.appends.duration_s);
        let slack = self.cfg.timeout_s + self.streamed_len as f64 / BYTES_PER_SECOND as f64;
        self.deadline = Some(at + Duration::from_secs_f64(slack.max(0.0)));
        self.phase = Phase::Streaming;
    }

    fn stream(&mut self, now: Instant, fx: &mut Effects) {
        let Some(up) = self.upload.as_mut() else {
            return;
        };
        for (msg, intended) in up.due_appends(now, &self.appends) {
            fx.send(Outbound::Text(msg), intended);
        }
        self.out.input_audio_chunks = up.chunks;
        self.out.input_video_frames = up.frames_sent;
        self.out.pacing_mean_lag_s = up.mean_lag_s();
        self.out.pacing_max_lag_s = up.max_lag_s;
        let mut commit_at = self.streamed_len;
        if self.ext.is_some() && up.question_sent() {
            match self.extend(now, fx) {
                Some(end) => commit_at = end,
                None => return,
            }
        }
        let Some(up) = self.upload.as_mut() else {
            return;
        };
        if up.commit_due_at(commit_at, now) {
            let commit = r#"{"type":"input_audio_buffer.commit","final":true}"#;
            fx.send(Outbound::Text(commit.into()), up.due(commit_at));
            self.commit_from = self.events.len();
            self.commit_at = Some(now);
            self.deadline = Some(now + Duration::from_secs_f64(self.cfg.timeout_s.max(0.0)));
            self.phase = Phase::Completing;
        }
    }

    fn send_acks(&mut self, acks: Vec<Ack>, scheduled: bool, fx: &mut Effects) {
        for ack in acks {
            let msg = ack.message();
            let intended = if scheduled {
                self.instant(ack.due_s)
            } else {
                None
            };
            fx.send(Outbound::Text(msg), intended);
        }
    }

    fn settle_at(&self) -> Option<Instant> {
        let quiet_since = self.last_event_at.max(self.commit_at)?;
        Some(quiet_since + Duration::from_secs_f64(self.cfg.settle_s.max(0.0)))
    }

    fn ready(&self) -> bool {
        self.committed && self.resp.ready()
    }

    /// Re-evaluate the phase after an event or wake-up at `now`.
    fn tick(&mut self, now: Instant, fx: &mut Effects) {
        let now_s = self.secs(now);
        let timed_out = self.deadline.is_some_and(|d| now >= d);
        match self.phase {
            Phase::Configuring if timed_out => {
                let msg = "Timed out waiting for session.created";
                self.finish(now, Err((FailureKind::Timeout, msg.into())), fx);
            }
            Phase::Streaming if timed_out => {
                let msg = self.upload_timeout();
                self.finish(now, Err((FailureKind::Timeout, msg)), fx);
            }
            Phase::Streaming => {
                self.stream(now, fx);
                let acks = self.resp.clock.acks(now_s);
                self.send_acks(acks, true, fx);
                self.retire_segments(now_s);
                if self.phase == Phase::Completing {
                    // The completion wait starts right after the commit.
                    self.complete(now, false, fx);
                }
            }
            Phase::Completing => self.complete(now, timed_out, fx),
            Phase::Closing if timed_out => {
                let msg = "Timed out waiting for session.closed";
                self.finish(now, Err((FailureKind::Timeout, msg.into())), fx)
            }
            _ => {}
        }
    }

    fn complete(&mut self, now: Instant, timed_out: bool, fx: &mut Effects) {
        if timed_out {
            let mut msg =
                String::from("Timed out waiting for committed input and stable responses");
            let open = self.resp.unfinished();
            if self.resp.ledger.error().is_none() && !open.is_empty() {
                let _ = write!(msg, "; unfinished response_ids={}", ledger::py_list(&open));
            }
            return self.finish(now, Err((FailureKind::Timeout, msg)), fx);
        }
        if let Some(e) = self.held_error.take().or_else(|| self.held_end.take()) {
            return self.finish(now, Err((FailureKind::ServerError, e)), fx);
        }
        let acks = self.resp.clock.acks(self.secs(now));
        self.send_acks(acks, true, fx);
        self.retire_segments(self.secs(now));
        if self.committed
            && let Some(e) = self.resp.ledger.error()
        {
            return self.finish(now, Err((FailureKind::Protocol, e.to_string())), fx);
        }
        if self.ready() && self.settle_at().is_some_and(|s| now >= s) {
            self.phase = Phase::Draining;
            let acks = self.resp.clock.drain();
            self.send_acks(acks, false, fx);
            self.close_from = self.events.len();
            fx.send(Outbound::Text(r#"{"type":"session.close"}"#.into()), None);
            self.deadline = Some(now + self.short_timeout());
            self.phase = Phase::Closing;
        }
    }

    /// Spills the played segments that can no longer change
    /// ([`retire`](super::playback::PlaybackClock::retire)),
    /// right after an ack check at `now_s`: the horizon is no later than that check nor
    /// than the last event observed (events arrive in receipt order).
    fn retire_segments(&mut self, now_s: f64) {
        let Some(last) = self.last_event_at.filter(|_| self.spool.is_some()) else {
            return;
        };
        let horizon_s = now_s.min(self.secs(last));
        let segs = self.resp.clock.retire(horizon_s, RETIRE_BATCH);
        let Some(spool) = self.spool.as_mut().filter(|_| !segs.is_empty()) else {
            return;
        };
        match encode_segments(&segs) {
            Some(bytes) => self.out.segments_spooled.push(spool.append(&bytes)),
            // Unreachable: nothing retires while PCM is kept in memory. Kept, not lost.
            None => self.out.segments.extend(segs),
        }
    }

    /// The reference's output checks after a clean close (spec §1.5 "Case success").
    fn arm(&self, now: Instant, fx: &mut Effects) {
        if self.phase == Phase::Done {
            return;
        }
        if let Some(d) = self.deadline {
            fx.wake(d);
        }
        if matches!(self.phase, Phase::Streaming | Phase::Completing)
            && let Some(due) = self.resp.clock.next_due().and_then(|s| self.instant(s))
        {
            fx.wake(due.max(now + Duration::from_millis(1)));
        }
        match self.phase {
            Phase::Streaming => {
                if let Some(up) = &self.upload {
                    let ext = (self.ext.is_some() && up.question_sent()).then_some(self.ext_offset);
                    fx.wake(up.next_wake_at(ext, now));
                }
            }
            Phase::Completing if self.ready() => {
                if let Some(s) = self.settle_at().filter(|s| *s > now) {
                    fx.wake(s);
                }
            }
            _ => {}
        }
    }
}

impl Session for DuplexSession {
    type Output = DuplexOutput;
    fn connect(&self, target: &ConnectSpec) -> ConnectSpec {
        let url = super::url::realtime_url(&target.url, &self.cfg.model, &self.out.session_id)
            .unwrap_or_else(|_| target.url.clone());
        let headers = super::url::upgrade_headers(
            self.api_key.as_ref().map(Secret::expose),
            &target.headers,
            self.request_id.as_deref(),
        );
        ConnectSpec { url, headers }
    }

    fn on_open(&mut self, now: Instant, fx: &mut Effects) {
        self.origin = Some(now);
        if let Some(msg) = self.update_msg.take() {
            fx.send(Outbound::Text(msg.into()), Some(now));
        }
        self.deadline = Some(now + self.short_timeout());
        self.arm(now, fx);
    }

    fn on_inbound(&mut self, msg: Inbound, at: Instant, fx: &mut Effects) {
        if self.phase == Phase::Done {
            return;
        }
        if let Inbound::Text(t) = msg {
            self.on_text(&t, at, fx);
        }
        self.tick(at, fx);
        self.arm(at, fx);
    }

    fn on_wake(&mut self, now: Instant, fx: &mut Effects) {
        self.tick(now, fx);
        self.arm(now, fx);
    }

    fn on_closed(&mut self, at: Instant, reason: Option<String>, fx: &mut Effects) {
        let msg = closed::message(self.phase == Phase::Streaming, reason.as_deref());
        // An error event the server sent before it closed is the reason: say it (the
        // reference's message first, as it reads).
        match self.held_error.take() {
            Some(err) => {
                let msg = format!("{msg}; the server had sent an error: {err}");
                self.finish(at, Err((FailureKind::ServerError, msg)), fx);
            }
            None => self.finish(at, Err((FailureKind::ClosedEarly, msg)), fx),
        }
    }

    fn headline_so_far_ms(&self) -> Option<f64> {
        self.events.mean_ttfp_so_far_ms()
    }

    fn into_output(self) -> DuplexOutput {
        let mut s = self;
        let (rows, left) = s.resp.leave();
        s.out.responses = rows;
        s.finish_ext();
        if let Some(left) = left {
            (s.out.turns_spooled.get_or_insert_with(Default::default)).rows = Some(left);
        }
        let segments = s.resp.clock.into_segments();
        // With a spool, the segments go there too (one append to the shared batch, no
        // file IO here); the report reads them back with the events.
        let spilled =
            (s.spool.as_mut()).and_then(|spool| Some(spool.append(&encode_segments(&segments)?)));
        match spilled {
            Some(span) => s.out.segments_spooled.push(span),
            None => s.out.segments.extend(segments),
        }
        s.out.mean_ttfp_ms = s.events.mean_ttfp_ms();
        (s.out.events, s.out.events_spooled) = s.events.into_parts();
        s.out
    }
}

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod tests;
