//! One realtime video rollout as a pure state machine (spec §2.4–§2.6): `session.start`,
//! chunk metadata/binary pairing, prompt updates on their chunk boundary, keep-alive pings,
//! first-chunk and chunk timeouts (non-media messages never extend them) and the
//! post-session checks, in the reference's order and words.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;
use tokio::time::Instant;

use super::chunk_meta::{self, ChunkMeta};
use super::metrics::ChunkRecord;
use super::report::render_chunk_line;
use super::rollout::{PromptUpdate, interaction};
use crate::workload::spool::{SessionSpool, Spool};
use crate::workload::{
    Artifact, ArtifactBody, Effects, FailureKind, Inbound, MediaUnit, Outbound, Session,
};

/// Per-run settings every video session shares.
#[derive(Debug, Clone)]
pub struct SessionSettings {
    /// The `session.start` message, serialized once before timing.
    pub start_payload: Arc<str>,
    /// Prompt updates, ascending by `after_chunk`.
    pub prompt_updates: Arc<[PromptUpdate]>,
    /// Requested chunks.
    pub num_chunks: u32,
    /// Requested pixel frames.
    pub num_frames: u32,
    /// Playback rate for media durations.
    pub target_fps: f64,
    /// Timeout before the first media chunk.
    pub first_chunk_timeout: Duration,
    /// Timeout between media chunks.
    pub chunk_timeout: Duration,
    /// Keep-alive period; `None` disables pings.
    pub ping_interval: Option<Duration>,
    /// Print one line per chunk.
    pub print_chunks: bool,
}

/// What one finished (or failed) session leaves for the report.
#[derive(Debug, Clone, Default)]
pub struct VideoOutput {
    /// `video.start.request_id`.
    pub request_id: Option<String>,
    /// Media chunk records in arrival order.
    pub records: Vec<ChunkRecord>,
    /// The server's own send stamp for each record (`server_sent_at_s`), when it sends one.
    pub server_sent_at_s: Vec<Option<f64>>,
    /// Media bytes received (trailer included).
    pub media_bytes: u64,
    /// Time to first media chunk, seconds.
    pub ttfc_s: Option<f64>,
    /// `video.start` arrival, seconds after `session.start`.
    pub video_start_s: Option<f64>,
    /// From `session.start` to loop exit, seconds.
    pub wall_s: Option<f64>,
    /// The `session.done` event.
    pub done_event: Option<Value>,
}

/// Where a measured session's media goes for `--save-video`: the file it is published
/// as (under the artifact root) and the run's spool, which takes the bytes as they
/// arrive.
#[derive(Debug, Clone)]
pub struct SaveAs {
    /// Path relative to the artifact root.
    pub path: std::path::PathBuf,
    /// The run's spool.
    pub spool: Arc<Spool>,
}

/// A saving session's media: appended to its own logical file in the spool as it
/// arrives, so the session holds none of it; copied out by the artifact writer.
#[derive(Debug)]
struct Collect {
    path: std::path::PathBuf,
    spool: Arc<Spool>,
    file: SessionSpool,
}

/// The session state machine.
#[derive(Debug)]
pub struct VideoSession {
    cfg: SessionSettings,
    session_index: usize,
    /// Where media bytes go for `--save-video` (measured sessions only).
    collect: Option<Collect>,
    started: Option<Instant>,
    pending: Option<ChunkMeta>,
    last_media: Option<Instant>,
    next_update: usize,
    next_ping: Option<Instant>,
    out: VideoOutput,
}

impl VideoSession {
    /// A session; `save_as` names the media file when media is saved.
    pub fn new(cfg: SessionSettings, session_index: usize, save_as: Option<SaveAs>) -> Self {
        Self {
            cfg,
            session_index,
            collect: save_as.map(|s| Collect {
                file: s.spool.session(),
                spool: s.spool,
                path: s.path,
            }),
            started: None,
            pending: None,
            last_media: None,
            next_update: 0,
            next_ping: None,
            out: VideoOutput::default(),
        }
    }

    fn deadline(&self) -> Option<Instant> {
        let started = self.started?;
        Some(match self.last_media {
            None => started + self.cfg.first_chunk_timeout,
            Some(t) => t + self.cfg.chunk_timeout,
        })
    }

    fn arm(&self, fx: &mut Effects) {
        if let Some(d) = self.deadline() {
            fx.wake(d);
        }
        if let Some(p) = self.next_ping {
            fx.wake(p);
        }
    }

    fn secs(&self, at: Instant) -> f64 {
        self.started
            .map_or(0.0, |s| at.saturating_duration_since(s).as_secs_f64())
    }

    fn on_text(&mut self, text: &str, at: Instant, fx: &mut Effects) {
        // One per chunk: read without building a `Value` when the event allows.
        if let Some(meta) = chunk_meta::fast(text) {
            self.pending = Some(meta);
            return;
        }
        let Ok(ev) = serde_json::from_str::<Value>(text) else {
            fx.fail(format!(
                "Server sent a text frame that is not JSON: {}",
                clip(text)
            ));
            return;
        };
        match ev.get("type").and_then(Value::as_str) {
            Some("video.start") => {
                self.out.request_id = ev
                    .get("request_id")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                self.out.video_start_s = Some(self.secs(at));
            }
            Some("video.chunk_metadata") => self.pending = Some(ChunkMeta::of_value(&ev)),
            Some("error") => {
                let msg = ev
                    .get("message")
                    .and_then(Value::as_str)
                    .map_or_else(|| ev.to_string(), str::to_owned);
                fx.fail_as(FailureKind::ServerError, format!(
                    "Server rejected the session after {} chunk(s): {msg} (requested {} chunks = num_frames {})",
                    self.out.records.len(),
                    self.cfg.num_chunks,
                    self.cfg.num_frames
                ));
            }
            Some("session.done") => {
                self.out.wall_s = Some(self.secs(at));
                self.out.done_event = Some(ev);
                match self.post_checks() {
                    Ok(()) => fx.succeed(),
                    Err(e) => fx.fail(e),
                }
            }
            _ => {}
        }
    }

    fn on_binary(&mut self, data: Bytes, at: Instant, fx: &mut Effects) {
        let Some(meta) = self.pending.take() else {
            fx.fail("Received a binary frame with no preceding video.chunk_metadata event.");
            return;
        };
        self.out.media_bytes += data.len() as u64;
        if let Some(c) = self.collect.as_mut() {
            c.file.append(&data);
        }
        if !meta.media {
            return; // trailer: no record, does not move the deadline
        }
        let (index, num_frames) = (meta.index, meta.num_frames);
        let arrival_s = self.secs(at);
        let prev = self.out.records.last().map(|r| r.arrival_s);
        let record = ChunkRecord {
            index,
            arrival_s,
            inter_arrival_s: arrival_s - prev.unwrap_or(0.0),
            byte_length: data.len() as u64,
            num_frames,
        };
        self.out.ttfc_s.get_or_insert(arrival_s);
        self.out.server_sent_at_s.push(meta.server_sent_at_s);
        if self.cfg.print_chunks {
            fx.lines
                .push(render_chunk_line(self.session_index, &record));
        }
        fx.media.push(MediaUnit {
            at,
            duration_s: f64::from(num_frames) / self.cfg.target_fps,
            stream: 0,
            index,
        });
        self.out.records.push(record);
        self.last_media = Some(at);
        while let Some(u) = self.cfg.prompt_updates.get(self.next_update) {
            if u64::from(u.after_chunk) > index {
                break;
            }
            fx.send(Outbound::Text(interaction(u).to_string().into()), None);
            self.next_update += 1;
        }
    }

    /// Spec §2.6, in order.
    fn post_checks(&self) -> Result<(), String> {
        let recs = &self.out.records;
        if recs.is_empty() {
            return Err("The session finished without delivering a single media chunk.".into());
        }
        if let Some(done) = &self.out.done_event
            && done.get("stopped").is_some_and(crate::util::pyfmt::truthy)
        {
            return Err(format!(
                "The session was stopped before it finished: {done}"
            ));
        }
        let indices: Vec<u64> = recs.iter().map(|r| r.index).collect();
        if indices.iter().enumerate().any(|(i, &x)| x != i as u64) {
            let list = indices
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            return Err(format!(
                "Chunk indices are not contiguous from zero: [{list}]"
            ));
        }
        if recs.len() != self.cfg.num_chunks as usize {
            return Err(format!(
                "Expected {} chunks for num_frames={}, received {}.",
                self.cfg.num_chunks,
                self.cfg.num_frames,
                recs.len()
            ));
        }
        Ok(())
    }
}

impl Session for VideoSession {
    type Output = VideoOutput;
    fn on_open(&mut self, now: Instant, fx: &mut Effects) {
        fx.send(
            Outbound::Text(self.cfg.start_payload.to_string().into()),
            Some(now),
        );
        self.started = Some(now);
        self.next_ping = self.cfg.ping_interval.map(|p| now + p);
        self.arm(fx);
    }

    fn on_inbound(&mut self, msg: Inbound, at: Instant, fx: &mut Effects) {
        match msg {
            Inbound::Text(t) => self.on_text(&t, at, fx),
            Inbound::Binary(b) => self.on_binary(b, at, fx),
        }
        if fx.finish.is_none() {
            self.arm(fx);
        }
    }

    fn on_wake(&mut self, now: Instant, fx: &mut Effects) {
        if self.deadline().is_some_and(|d| now >= d) {
            let t = if self.last_media.is_none() {
                self.cfg.first_chunk_timeout
            } else {
                self.cfg.chunk_timeout
            };
            fx.fail_as(FailureKind::Timeout, format!(
                "No media chunk for {} s after {} chunk(s); the server may still be loading, compiling, or capturing graphs.",
                t.as_secs_f64(),
                self.out.records.len()
            ));
            return;
        }
        if let (Some(p), Some(every)) = (self.next_ping, self.cfg.ping_interval)
            && now >= p
        {
            fx.send(Outbound::Text(r#"{"type":"session.ping"}"#.into()), Some(p));
            self.next_ping = Some(p + every);
        }
        self.arm(fx);
    }

    fn on_closed(&mut self, _at: Instant, reason: Option<String>, fx: &mut Effects) {
        let why = reason
            .map(|r| format!(" (close reason: {r})"))
            .unwrap_or_default();
        fx.fail_as(
            FailureKind::ClosedEarly,
            format!(
                "The server closed the session without session.done after {} chunk(s){why}.",
                self.out.records.len()
            ),
        );
    }

    fn artifacts(&mut self) -> Vec<Artifact> {
        match self.collect.take() {
            Some(c) if self.out.done_event.is_some() => {
                vec![Artifact {
                    rel_path: c.path,
                    body: ArtifactBody::Spooled(c.spool, c.file.whole()),
                }]
            }
            _ => Vec::new(),
        }
    }

    fn into_output(self) -> VideoOutput {
        self.out
    }
}

fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(120).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
#[path = "session_fuzz_tests.rs"]
mod fuzz_tests;
#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
