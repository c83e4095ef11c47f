//! The wire recorder (`rtload run --record DIR`): every session's messages, both
//! directions, as they crossed the wire. The run **owns** one [`Recording`] (the caps,
//! the secrets to scrub, the set of payloads already stored, the sessions' summaries);
//! each session's sender **owns** its [`Tape`] while the session runs. The tape is pure:
//! it is handed times and payloads, never a socket or a clock, and at the session's end
//! it becomes files for the run's writer pool (temp file + rename), so recording adds no
//! file IO to a shard thread.
//!
//! # Trace format (version [`FORMAT_VERSION`])
//!
//! ```text
//! DIR/manifest.json           what ran, written once the run is over (module `manifest`)
//! DIR/sessions/<idx>.jsonl    one file per session (sample index, warm-ups included)
//! DIR/blobs/<sha256>          each distinct payload once, named by the sha256 of its bytes
//! ```
//!
//! A session file is JSON lines. The first is the header
//! `{"rtload_trace": 1, "idx": 0, "warmup": false}`; the last is
//! `{"summary": {...}}` ([`SessionSummary`]: events written and dropped, blobs stored and
//! dropped, `truncated`). Every line between is one event, in the order it happened:
//!
//! - `t_s`: seconds since the run's start — the clock of the result's `started_s` and
//!   `ended_s`: for an inbound message its receipt stamp, for an outbound one the moment
//!   the sender wrote it (the moment its lateness is taken at).
//! - `dir`: `"out"` (rtload sent it) or `"in"` (the server did).
//! - `kind`: `"open"` (the upgrade completed), `"text"`, `"binary"` or `"close"`.
//! - `type`: the JSON `type` field, when a text payload is a JSON object with one.
//! - `bytes`, `sha256`: the payload's length and digest (its blob is `blobs/<sha256>`);
//!   `stored: false` when the total blob cap kept it out of the store.
//! - `intended_s`: for a scheduled outbound message, when the schedule meant it to leave
//!   (same clock); lateness is `t_s - intended_s`.
//! - `code`, `reason`: a close's status code and reason; an inbound close without a
//!   close frame (the stream just ended) has `"frame": false` and no code.
//!
//! Two more kinds carry what the engine, not the wire, decided — what `rtload report
//! --recompute` needs to drive the session again (a reader of an older rtload keeps them
//! as unknown kinds):
//!
//! - `"wake"` (`dir: "out"`): the session's wake-up fired at `t_s` (the time its
//!   `on_wake` was handed).
//! - `"failed"`: the engine failed the sample itself at `t_s` — `failure` is the kind's
//!   label (`connect`, `handshake` with the HTTP status in `code`, `timeout`,
//!   `transport`, `interrupted`, ...) and `reason` its message (scrubbed); `dir: "in"`
//!   when reading failed, `"out"` otherwise (a connect that failed or was refused — then
//!   there is no `open` before it —, a write that failed, an interrupt).
//!
//! The summary line also carries `sample` ([`SampleFacts`]): the engine's record of the
//! sample — `scheduled_s`, `queue_wait_s`, `started_s`, `ended_s` on the same clock and
//! `failure` (`{kind, status?, message}`, `null` when it succeeded). A trace written
//! before these fields has no `sample` and cannot be recomputed.
//!
//! Pings and pongs are not recorded. Text payloads are scrubbed before they are hashed
//! and stored, by the run's one redaction rule ([`crate::util::target::redact_text`]:
//! URLs lose user info and every non-public query value) plus every upgrade header
//! value (and its token after a scheme word such as `Bearer`) replaced by
//! [`REDACTED`](crate::util::target::REDACTED); binary payloads are stored as sent.
//!
//! Caps: at most `max_events_per_session` events per session (later ones are counted,
//! not written) and at most `max_blob_bytes` of distinct payload bytes in the whole
//! store (later new payloads keep their event line and digest, marked `stored: false`).
//! Either makes the session's summary say `truncated: true` and the run warn.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde::Serialize;
use tokio::time::Instant;

use crate::workload::{Artifact, ArtifactBody, Failure, FailureKind};

pub mod drive;
mod manifest;
pub mod read;
mod tape;
pub use manifest::{RecordTo, Running};
pub use tape::{Tape, hex};

/// The version written as `rtload_trace` in each session file and `format_version` in
/// the manifest.
pub const FORMAT_VERSION: u32 = 1;
/// Default cap on the events written per session (`--record-max-events`).
pub const DEFAULT_MAX_EVENTS_PER_SESSION: u64 = 100_000;
/// Default cap on the distinct payload bytes stored per run (`--record-max-bytes`):
/// also the bound on what tapes hold in memory before their sessions end.
pub const DEFAULT_MAX_BLOB_BYTES: u64 = 256 * 1024 * 1024;

/// The recording's limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecordCaps {
    /// Events written per session; later ones are counted as dropped.
    pub max_events_per_session: u64,
    /// Distinct payload bytes stored in the run's blob store.
    pub max_blob_bytes: u64,
}

impl Default for RecordCaps {
    fn default() -> Self {
        RecordCaps {
            max_events_per_session: DEFAULT_MAX_EVENTS_PER_SESSION,
            max_blob_bytes: DEFAULT_MAX_BLOB_BYTES,
        }
    }
}

/// What a sample records with: the run's recording and the writer pool publishing under
/// the record directory (see [`Running::recorder`]).
#[derive(Debug, Clone)]
pub struct Recorder {
    /// The run's recording.
    pub recording: Arc<Recording>,
    /// The record directory's writer pool.
    pub writer: super::writer::WriterHandle,
}

/// One session's trace in numbers: the file's last line and the manifest's entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct SessionSummary {
    /// Sample index (warm-ups first), as in the session file's name.
    pub idx: usize,
    /// A warm-up session (in no metric, recorded all the same).
    pub warmup: bool,
    /// The session file, relative to the record directory.
    pub file: String,
    /// Event lines written.
    pub events: u64,
    /// Events past the per-session cap: counted, not written.
    pub events_dropped: u64,
    /// Payloads this session added to the blob store.
    pub blobs_stored: u64,
    /// Distinct payloads kept out of the store by the total cap.
    pub blobs_dropped: u64,
    /// Their bytes.
    pub blob_bytes_dropped: u64,
    /// A cap cut something from this trace.
    pub truncated: bool,
    /// The session crashed: its events were lost with it (the file says so).
    pub crashed: bool,
    /// The engine's record of the sample (absent in traces written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<SampleFacts>,
}

/// What the engine recorded of a sample besides its events: the times the coordinator
/// and the supervisor took, and how it ended (see the module header).
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct SampleFacts {
    /// Seconds from the run's start to the plan's release time.
    pub scheduled_s: f64,
    /// Seconds the sample waited for a concurrency slot.
    pub queue_wait_s: f64,
    /// Seconds from the run's start to the connect's start.
    pub started_s: f64,
    /// Seconds from the run's start to the sample's end.
    pub ended_s: f64,
    /// How it failed (`None`: it succeeded).
    #[serde(default)]
    pub failure: Option<RecordedFailure>,
}

/// A sample's failure as the trace holds it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct RecordedFailure {
    /// The kind's label ([`FailureKind::label`]).
    pub kind: String,
    /// A refused handshake's HTTP status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The message (scrubbed like every recorded text).
    pub message: String,
}

impl RecordedFailure {
    /// `f` as the trace holds it, its message scrubbed by `rec`.
    pub fn of(f: &Failure, rec: &Recording) -> RecordedFailure {
        RecordedFailure {
            kind: f.kind.label().to_string(),
            status: match f.kind {
                FailureKind::Handshake { status } => status,
                _ => None,
            },
            message: rec.scrub_text(&f.message),
        }
    }

    /// The failure back (`None` for a label this rtload does not know).
    pub fn failure(&self) -> Option<Failure> {
        let kind = failure_kind(&self.kind, self.status)?;
        Some(Failure::new(kind, self.message.clone()))
    }
}

/// The [`FailureKind`] whose label is `label` (`status`: a handshake's HTTP status).
pub fn failure_kind(label: &str, status: Option<u16>) -> Option<FailureKind> {
    use FailureKind as K;
    let all = [
        K::Connect,
        K::Handshake { status },
        K::Timeout,
        K::Protocol,
        K::ServerError,
        K::ClosedEarly,
        K::Transport,
        K::Report,
        K::Crashed,
        K::Interrupted,
        K::Rejected,
    ];
    all.into_iter().find(|k| k.label() == label)
}

/// The run's recorder: caps, secrets, the blob set and the sessions' summaries. Shared
/// by every session's tape.
#[derive(Debug)]
pub struct Recording {
    caps: RecordCaps,
    secrets: Vec<String>,
    stored: Mutex<HashSet<[u8; 32]>>,
    blob_bytes: AtomicU64,
    sessions: Mutex<Vec<SessionSummary>>,
}

/// Whether a payload is in the store.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Admit {
    /// Stored already (by this session or another).
    Known,
    /// New: this tape stores it.
    New,
    /// New, but the total cap is reached: not stored.
    OverCap,
}

impl Recording {
    /// A recording under `caps` that scrubs every value of `headers` (the upgrade
    /// headers, which may hold secrets) from text payloads.
    pub fn new(caps: RecordCaps, headers: &[(String, String)]) -> Arc<Recording> {
        let mut secrets: Vec<String> = Vec::new();
        for (_, v) in headers {
            let v = v.trim();
            // The whole value, and the token after a scheme word (`Bearer <token>`).
            let token = v.split_once(' ').map(|(_, t)| t.trim());
            for s in std::iter::once(v).chain(token) {
                if s.len() >= 4 && !secrets.iter().any(|k| k == s) {
                    secrets.push(s.to_string());
                }
            }
        }
        // Longest first: a whole value goes before the token inside it.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        Arc::new(Recording {
            caps,
            secrets,
            stored: Mutex::default(),
            blob_bytes: AtomicU64::new(0),
            sessions: Mutex::default(),
        })
    }

    /// The caps this recording runs under.
    pub fn caps(&self) -> RecordCaps {
        self.caps
    }

    /// A tape for sample `idx`, whose times count from `origin` (the run's start).
    pub fn tape(self: &Arc<Self>, idx: usize, warmup: bool, origin: Instant) -> Tape {
        Tape::new(Arc::clone(self), idx, warmup, origin)
    }

    /// The trace of sample `idx` whose live phase crashed (its tape was lost with it),
    /// with the engine's record of it.
    pub fn crashed(&self, idx: usize, warmup: bool, sample: Option<SampleFacts>) -> Artifact {
        let summary = SessionSummary {
            idx,
            warmup,
            file: session_file(idx),
            truncated: true,
            crashed: true,
            sample,
            ..SessionSummary::default()
        };
        self.file(summary, &[])
    }

    /// A sample's facts as a summary line holds them (`times`: scheduled, queue wait,
    /// started, ended), `outcome`'s message scrubbed.
    pub fn facts(&self, times: [f64; 4], outcome: &Result<(), Failure>) -> SampleFacts {
        let [scheduled_s, queue_wait_s, started_s, ended_s] = times;
        SampleFacts {
            scheduled_s,
            queue_wait_s,
            started_s,
            ended_s,
            failure: outcome.as_ref().err().map(|f| RecordedFailure::of(f, self)),
        }
    }

    /// Every session's summary so far, by index.
    pub fn sessions(&self) -> Vec<SessionSummary> {
        let mut v = lock(&self.sessions).clone();
        v.sort_by_key(|s| s.idx);
        v
    }

    /// Distinct payloads stored and their bytes.
    pub fn blobs(&self) -> (u64, u64) {
        let n = lock(&self.stored).len() as u64;
        (n, self.blob_bytes.load(Ordering::Relaxed))
    }

    /// What the run must say about the recording: each cap that cut something, with counts.
    pub fn warnings(&self) -> Vec<String> {
        let s = self.sessions();
        let sum = |f: fn(&SessionSummary) -> u64| s.iter().map(f).sum::<u64>();
        let count = |f: fn(&SessionSummary) -> bool| s.iter().filter(|x| f(x)).count();
        let mut w = Vec::new();
        let (dropped, cut) = (sum(|x| x.events_dropped), count(|x| x.events_dropped > 0));
        if dropped > 0 {
            w.push(format!(
                "--record: {dropped} events not written in {cut} session(s) over the cap of {} \
events per session (--record-max-events); those traces say truncated: true",
                self.caps.max_events_per_session
            ));
        }
        let (blobs, bytes) = (sum(|x| x.blobs_dropped), sum(|x| x.blob_bytes_dropped));
        if blobs > 0 {
            w.push(format!(
                "--record: {blobs} payloads ({bytes} bytes) not stored over the cap of {} \
blob bytes (--record-max-bytes); their events say stored: false",
                self.caps.max_blob_bytes
            ));
        }
        let crashed = count(|x| x.crashed);
        if crashed > 0 {
            w.push(format!(
                "--record: {crashed} session(s) crashed; their traces hold no events"
            ));
        }
        w
    }

    /// `text` as the recording may write it: by the run's redaction rule, with every
    /// upgrade header value replaced (see the module header).
    pub fn scrub_text(&self, text: &str) -> String {
        self.scrub(text).unwrap_or_else(|| text.to_string())
    }

    /// `text` with the secrets scrubbed, or `None` when nothing changes.
    fn scrub(&self, text: &str) -> Option<String> {
        let mut out = text
            .contains("://")
            .then(|| crate::util::target::redact_text(text))
            .filter(|r| r != text);
        for s in &self.secrets {
            let cur = out.as_deref().unwrap_or(text);
            if cur.contains(s.as_str()) {
                out = Some(cur.replace(s.as_str(), crate::util::target::REDACTED));
            }
        }
        out
    }

    /// Admits a payload of `len` bytes with `digest` to the store, under the total cap.
    fn admit(&self, digest: [u8; 32], len: u64) -> Admit {
        let mut stored = lock(&self.stored);
        if stored.contains(&digest) {
            return Admit::Known;
        }
        let used = self.blob_bytes.load(Ordering::Relaxed);
        if used.saturating_add(len) > self.caps.max_blob_bytes {
            return Admit::OverCap;
        }
        self.blob_bytes.fetch_add(len, Ordering::Relaxed);
        stored.insert(digest);
        Admit::New
    }

    /// The session file for `summary` with `events` (JSON lines) between its header and
    /// summary lines; the summary is kept for the manifest.
    fn file(&self, summary: SessionSummary, events: &[u8]) -> Artifact {
        #[derive(Serialize)]
        struct Header {
            rtload_trace: u32,
            idx: usize,
            warmup: bool,
        }
        let header = serde_json::to_string(&Header {
            rtload_trace: FORMAT_VERSION,
            idx: summary.idx,
            warmup: summary.warmup,
        })
        .unwrap_or_default();
        let mut body = Vec::with_capacity(events.len() + 256);
        body.extend_from_slice(header.as_bytes());
        body.push(b'\n');
        body.extend_from_slice(events);
        let tail = serde_json::json!({ "summary": &summary });
        body.extend_from_slice(tail.to_string().as_bytes());
        body.push(b'\n');
        let rel_path = PathBuf::from(&summary.file);
        lock(&self.sessions).push(summary);
        Artifact {
            rel_path,
            body: ArtifactBody::Bytes(Bytes::from(body)),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// `sessions/<idx>.jsonl`.
pub(crate) fn session_file(idx: usize) -> String {
    format!("sessions/{idx}.jsonl")
}

#[cfg(test)]
mod read_tests;
#[cfg(test)]
mod tests;
