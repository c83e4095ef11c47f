//! One session's [`Tape`]: its event lines, the payloads it adds to the store, its
//! summary. Pure: times and payloads are handed in (the line format is the parent
//! module's header).

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use serde::Serialize;
use sha2::{Digest, Sha256};
use tokio::time::Instant;

use super::{Admit, Recording, SampleFacts, SessionSummary};
use crate::workload::{Artifact, ArtifactBody, Failure, FailureKind, Inbound, Outbound};

/// One event line (see the module header).
#[derive(Debug, Default, Serialize)]
struct Event<'a> {
    t_s: f64,
    dir: &'static str,
    kind: &'static str,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    ty: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sha256: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stored: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    intended_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    frame: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    failure: Option<&'static str>,
}

/// One session's trace while it runs (see the module header). Pure: times and payloads
/// are handed in.
#[derive(Debug)]
pub struct Tape {
    rec: Arc<Recording>,
    origin: Instant,
    /// Event lines written so far.
    lines: Vec<u8>,
    /// Payloads this tape adds to the store: (hex digest, bytes).
    blobs: Vec<(String, Bytes)>,
    summary: SessionSummary,
}

impl Tape {
    /// An empty tape of sample `idx`, whose times count from `origin`.
    pub(super) fn new(rec: Arc<Recording>, idx: usize, warmup: bool, origin: Instant) -> Tape {
        Tape {
            rec,
            origin,
            lines: Vec::new(),
            blobs: Vec::new(),
            summary: SessionSummary {
                idx,
                warmup,
                file: super::session_file(idx),
                ..SessionSummary::default()
            },
        }
    }

    /// The upgrade completed at `at`.
    pub fn open(&mut self, at: Instant) {
        self.event(at, "out", "open", |_| None);
    }

    /// The sender wrote `msg` at `at`; the schedule meant it for `intended`.
    pub fn outbound(&mut self, at: Instant, intended: Option<Instant>, msg: &Outbound) {
        let (kind, bytes, text) = match msg {
            Outbound::Text(s) => ("text", s.as_bytes().clone(), true),
            Outbound::Binary(b) => ("binary", b.clone(), false),
        };
        let intended_s = intended.map(|i| self.secs(i));
        self.event(at, "out", kind, |t| {
            let mut e = t.payload(bytes, text);
            e.intended_s = intended_s;
            Some(e)
        });
    }

    /// `msg` was received at `at` (its receipt stamp).
    pub fn inbound(&mut self, at: Instant, msg: &Inbound) {
        let (kind, bytes, text) = match msg {
            Inbound::Text(s) => ("text", s.as_bytes().clone(), true),
            Inbound::Binary(b) => ("binary", b.clone(), false),
        };
        self.event(at, "in", kind, |t| Some(t.payload(bytes, text)));
    }

    /// The peer's close at `at`, as read (`"1000 bye"`; `None`: no close frame, the
    /// stream ended).
    pub fn peer_closed(&mut self, at: Instant, reason: Option<&str>) {
        let (code, why) = match reason {
            Some(r) => {
                let (c, w) = r.split_once(' ').unwrap_or((r, ""));
                (c.parse::<u16>().ok(), Some(w).filter(|w| !w.is_empty()))
            }
            None => (None, None),
        };
        let why = why.map(|w| self.rec.scrub(w).unwrap_or_else(|| w.to_string()));
        self.event(at, "in", "close", |_| {
            Some(Event {
                code,
                reason: why.as_deref(),
                frame: reason.is_none().then_some(false),
                ..Event::default()
            })
        });
    }

    /// rtload sent a close frame with `code` at `at`.
    pub fn closed(&mut self, at: Instant, code: u16) {
        self.event(at, "out", "close", |_| {
            Some(Event {
                code: Some(code),
                ..Event::default()
            })
        });
    }

    /// The session's wake-up fired at `at` (the time handed to its `on_wake`).
    pub fn wake(&mut self, at: Instant) {
        self.event(at, "out", "wake", |_| None);
    }

    /// The engine failed the sample at `at` with `f`: reading failed (`inbound`), or a
    /// connect, a write or an interrupt did.
    pub fn failed(&mut self, at: Instant, inbound: bool, f: &Failure) {
        let dir = if inbound { "in" } else { "out" };
        let why = self.rec.scrub_text(&f.message);
        let code = match f.kind {
            FailureKind::Handshake { status } => status,
            _ => None,
        };
        self.event(at, dir, "failed", |_| {
            Some(Event {
                code,
                reason: Some(why.as_str()),
                failure: Some(f.kind.label()),
                ..Event::default()
            })
        });
    }

    /// The engine's record of the sample, for the summary line: its times, and how it
    /// ended.
    pub fn sample(&mut self, facts: SampleFacts) {
        self.summary.sample = Some(facts);
    }

    /// The trace as files for the writer pool: the session file, then every payload
    /// this tape added to the store.
    pub fn finish(self) -> Vec<Artifact> {
        let Tape {
            rec,
            lines,
            blobs,
            summary,
            ..
        } = self;
        let mut out = vec![rec.file(summary, &lines)];
        out.extend(blobs.into_iter().map(|(hex, b)| Artifact {
            rel_path: PathBuf::from(format!("blobs/{hex}")),
            body: ArtifactBody::Bytes(b),
        }));
        out
    }

    fn secs(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.origin).as_secs_f64()
    }

    /// Writes one event line, unless the per-session cap is reached (then it is counted).
    /// `fill` makes the line's own fields (it runs only when the line is written).
    fn event<'a>(
        &mut self,
        at: Instant,
        dir: &'static str,
        kind: &'static str,
        fill: impl FnOnce(&mut Self) -> Option<Event<'a>>,
    ) {
        if self.summary.events >= self.rec.caps.max_events_per_session {
            self.summary.events_dropped += 1;
            self.summary.truncated = true;
            return;
        }
        let mut e = fill(self).unwrap_or_default();
        e.t_s = self.secs(at);
        e.dir = dir;
        e.kind = kind;
        // An `Event` always serializes (strings and finite numbers only).
        if serde_json::to_writer(&mut self.lines, &e).is_ok() {
            self.lines.push(b'\n');
            self.summary.events += 1;
        }
    }

    /// A payload's fields: scrubbed (text), hashed, admitted to the store.
    fn payload(&mut self, bytes: Bytes, text: bool) -> Event<'static> {
        let bytes = match std::str::from_utf8(&bytes).ok().filter(|_| text) {
            Some(s) => self.rec.scrub(s).map_or(bytes.clone(), Bytes::from),
            None => bytes,
        };
        let digest: [u8; 32] = Sha256::digest(&bytes).into();
        let hex = hex(&digest);
        let stored = match self.rec.admit(digest, bytes.len() as u64) {
            Admit::Known => None,
            Admit::New => {
                self.summary.blobs_stored += 1;
                self.blobs.push((hex.clone(), bytes.clone()));
                None
            }
            Admit::OverCap => {
                self.summary.blobs_dropped += 1;
                self.summary.blob_bytes_dropped += bytes.len() as u64;
                self.summary.truncated = true;
                Some(false)
            }
        };
        Event {
            ty: text.then(|| json_type(&bytes)).flatten(),
            bytes: Some(bytes.len()),
            sha256: Some(hex),
            stored,
            ..Event::default()
        }
    }
}

/// The `type` field of a text payload that is a JSON object with a string `type`.
pub fn json_type(payload: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Typed<'a> {
        #[serde(rename = "type", borrow, default)]
        ty: Option<Cow<'a, str>>,
    }
    let first = payload.iter().find(|b| !b.is_ascii_whitespace())?;
    if *first != b'{' {
        return None;
    }
    serde_json::from_slice::<Typed>(payload)
        .ok()?
        .ty
        .map(Cow::into_owned)
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}
