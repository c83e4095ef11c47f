//! A recording read back (the format is the parent module's header): the manifest, each
//! session's events in order, and the payloads by digest. What `rtload serve --replay`,
//! `rtload run --replay` and `rtload report --recompute` read. Pure apart from the file
//! reads: a bad line is an error naming the file, its line and column, and the fix.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::{FORMAT_VERSION, SessionSummary};

/// Why a recording could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A line is not what the format says.
    #[error("{path}:{line}:{column}: {msg}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong and the fix.
        msg: String,
    },
    /// A payload the trace names is not in the store (the size cap kept it out, or the
    /// file is missing or altered).
    #[error("{path}: {msg}")]
    Blob {
        /// The blob file.
        path: PathBuf,
        /// What is wrong.
        msg: String,
    },
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    /// rtload (the client).
    Out,
    /// The server.
    In,
}

/// What an event is.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// The upgrade completed.
    Open,
    /// A text message.
    Text,
    /// A binary message.
    Binary,
    /// A close (frame, or the stream's end with `frame: false`).
    Close,
    /// The session's wake-up fired.
    Wake,
    /// The engine failed the sample itself (`failure`: the kind's label).
    Failed,
    /// A kind this reader does not know (a newer writer): kept, never interpreted.
    #[serde(other)]
    Other,
}

/// One event line.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TraceEvent {
    /// Seconds since the run's start (receipt stamp, or the moment the sender wrote it).
    pub t_s: f64,
    /// Direction.
    pub dir: Dir,
    /// Kind.
    pub kind: Kind,
    /// The JSON `type` of a text payload, when it has one.
    #[serde(rename = "type", default)]
    pub ty: Option<String>,
    /// Payload length.
    #[serde(default)]
    pub bytes: Option<usize>,
    /// Payload digest (lower-case hex): its blob is `blobs/<sha256>`.
    #[serde(default)]
    pub sha256: Option<String>,
    /// `Some(false)`: the store's cap kept the payload out.
    #[serde(default)]
    pub stored: Option<bool>,
    /// When the schedule meant an outbound message to leave.
    #[serde(default)]
    pub intended_s: Option<f64>,
    /// A close's status code.
    #[serde(default)]
    pub code: Option<u16>,
    /// A close's reason.
    #[serde(default)]
    pub reason: Option<String>,
    /// `Some(false)`: the stream ended without a close frame.
    #[serde(default)]
    pub frame: Option<bool>,
    /// A `failed` event's failure kind (its label).
    #[serde(default)]
    pub failure: Option<String>,
}

impl TraceEvent {
    /// A message (text or binary), as opposed to open and close.
    pub fn is_message(&self) -> bool {
        matches!(self.kind, Kind::Text | Kind::Binary)
    }
}

/// One session's trace.
#[derive(Debug, Clone)]
pub struct SessionTrace {
    /// The session file.
    pub path: PathBuf,
    /// Sample index (warm-ups first).
    pub idx: usize,
    /// A warm-up session.
    pub warmup: bool,
    /// Every event, in the order it happened.
    pub events: Vec<TraceEvent>,
    /// The file's last line (`None`: the file ends early, e.g. a run killed mid-write).
    pub summary: Option<SessionSummary>,
}

/// A recording directory, read.
#[derive(Debug, Clone)]
pub struct Trace {
    /// The directory.
    pub dir: PathBuf,
    /// `manifest.json`.
    pub manifest: serde_json::Value,
    /// Every session, by index.
    pub sessions: Vec<SessionTrace>,
}

impl Trace {
    /// Reads `dir`'s manifest and every session file (blobs are read on demand).
    pub fn open(dir: &Path) -> Result<Trace, TraceError> {
        let mpath = dir.join("manifest.json");
        let text = read_text(&mpath)?;
        let manifest: serde_json::Value = serde_json::from_str(&text).map_err(|e| Parse {
            path: mpath.clone(),
            line: e.line(),
            column: e.column(),
            msg: format!("{e}: the manifest of a recording is JSON (rtload run --record DIR)"),
        })?;
        let version = manifest.get("format_version").and_then(|v| v.as_u64());
        if manifest.get("format").and_then(|v| v.as_str()) != Some("rtload-trace")
            || version != Some(u64::from(FORMAT_VERSION))
        {
            return Err(Parse {
                path: mpath,
                line: 1,
                column: 1,
                msg: format!(
                    "not an rtload trace of format version {FORMAT_VERSION} (found format {}, \
version {}): record it again with this rtload (rtload run SCENARIO --record DIR)",
                    manifest.get("format").unwrap_or(&serde_json::Value::Null),
                    version.map_or("none".to_string(), |v| v.to_string())
                ),
            });
        }
        let mut sessions = Vec::new();
        let sdir = dir.join("sessions");
        let entries = std::fs::read_dir(&sdir).map_err(|e| io(&sdir, e))?;
        for entry in entries {
            let path = entry.map_err(|e| io(&sdir, e))?.path();
            if path.extension().is_some_and(|x| x == "jsonl") {
                sessions.push(read_session(&path)?);
            }
        }
        sessions.sort_by_key(|s| s.idx);
        Ok(Trace {
            dir: dir.to_path_buf(),
            manifest,
            sessions,
        })
    }

    /// The measured sessions (warm-ups left out), by index.
    pub fn measured(&self) -> impl Iterator<Item = &SessionTrace> {
        self.sessions.iter().filter(|s| !s.warmup)
    }

    /// The payload of `ev`, read from the store and checked against its digest. `None`
    /// for an event without a payload.
    pub fn payload(&self, ev: &TraceEvent) -> Result<Option<Bytes>, TraceError> {
        let Some(sha) = &ev.sha256 else {
            return Ok(None);
        };
        let path = self.dir.join("blobs").join(sha);
        if ev.stored == Some(false) {
            return Err(TraceError::Blob {
                path,
                msg: "the recording's size cap kept this payload out of the store: record \
again with a larger --record-max-bytes"
                    .into(),
            });
        }
        let bytes = std::fs::read(&path).map_err(|e| TraceError::Blob {
            path: path.clone(),
            msg: format!("{e} (a recording needs its blobs/ directory whole)"),
        })?;
        if super::hex(&Sha256::digest(&bytes)) != *sha {
            return Err(TraceError::Blob {
                path,
                msg: "the file's sha256 is not its name: the store was altered".into(),
            });
        }
        Ok(Some(Bytes::from(bytes)))
    }
}

use TraceError::Parse;

fn io(path: &Path, source: std::io::Error) -> TraceError {
    TraceError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn read_text(path: &Path) -> Result<String, TraceError> {
    std::fs::read_to_string(path).map_err(|e| io(path, e))
}

/// The header line.
#[derive(Deserialize)]
struct Header {
    rtload_trace: u32,
    idx: usize,
    warmup: bool,
}

/// The last line.
#[derive(Deserialize)]
struct Tail {
    summary: SessionSummary,
}

/// One session file: header, events, summary.
fn read_session(path: &Path) -> Result<SessionTrace, TraceError> {
    let text = read_text(path)?;
    let bad = |line: usize, e: serde_json::Error, what: &str| Parse {
        path: path.to_path_buf(),
        line,
        column: e.column(),
        msg: format!("{e}: expected {what} (see `rtload run --help`, --record)"),
    };
    let mut lines = text.lines().enumerate();
    let (_, first) = lines.next().ok_or_else(|| Parse {
        path: path.to_path_buf(),
        line: 1,
        column: 1,
        msg: "empty session file: expected the header {\"rtload_trace\": 1, ...}".into(),
    })?;
    let h: Header = serde_json::from_str(first).map_err(|e| bad(1, e, "the header line"))?;
    if h.rtload_trace != FORMAT_VERSION {
        return Err(Parse {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            msg: format!(
                "trace format {} where this rtload reads {FORMAT_VERSION}: record it again",
                h.rtload_trace
            ),
        });
    }
    let mut events = Vec::new();
    let mut summary = None;
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        if summary.is_some() {
            return Err(Parse {
                path: path.to_path_buf(),
                line: i + 1,
                column: 1,
                msg: "a line after the summary line: a session file ends with its summary".into(),
            });
        }
        if line.starts_with("{\"summary\"") {
            let t: Tail = serde_json::from_str(line).map_err(|e| bad(i + 1, e, "the summary"))?;
            summary = Some(t.summary);
        } else {
            events.push(serde_json::from_str(line).map_err(|e| bad(i + 1, e, "an event"))?);
        }
    }
    Ok(SessionTrace {
        path: path.to_path_buf(),
        idx: h.idx,
        warmup: h.warmup,
        events,
        summary,
    })
}
