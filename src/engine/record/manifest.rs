//! A recording under way ([`Running`]: the writer pool publishing under the record
//! directory) and, once every session has ended, `DIR/manifest.json`, written
//! atomically: what the caller knew before the run ([`RecordTo::head`]: the scenario, its
//! inputs, the target) completed with what only the run knows.
//!
//! The manifest: `format` (`"rtload-trace"`), `format_version`, `rtload` (`version`,
//! `git_revision`: `git rev-parse HEAD` where the run ran, as the results' `git_revision`;
//! `null` without git), `created` (UTC), `clock`, the caller's keys (see
//! `runner::record`: `scenario`, `inputs`, `target.url`, `target.headers_sent`, `run`),
//! `run.interrupted`,
//! `target.handshake_headers` (the server's first 101 answer, without cookies or auth,
//! values scrubbed), `caps`, `totals` and `sessions` (each session's [`SessionSummary`]).

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{FORMAT_VERSION, Recorder, Recording, SessionSummary};
use crate::engine::transport::Wire;
use crate::engine::writer::Writer;

/// Where a run records and what the caller puts in the manifest.
#[derive(Debug, Clone)]
pub struct RecordTo {
    /// The record directory.
    pub dir: PathBuf,
    /// The run's recording.
    pub recording: Arc<Recording>,
    /// The caller's manifest keys (`scenario`, `inputs`, `target`: redacted already).
    pub head: Map<String, Value>,
}

/// A recording under way: the writer pool of the record directory.
#[derive(Debug)]
pub struct Running {
    writer: Writer,
    to: RecordTo,
}

impl Running {
    /// Starts the record directory's writer (one thread).
    pub fn start(to: RecordTo) -> Running {
        Running {
            writer: Writer::start(to.dir.clone(), 1),
            to,
        }
    }

    /// What each sample records with.
    pub fn recorder(&self) -> Recorder {
        Recorder {
            recording: Arc::clone(&self.to.recording),
            writer: self.writer.handle(),
        }
    }

    /// Waits for every trace file, then writes the manifest. Returns the files that could
    /// not be written (each fails the run) and the recording's warnings.
    /// `interrupted`: a signal stopped the run (the manifest's `run.interrupted`).
    pub fn finish(self, wire: &Wire, interrupted: bool) -> (Vec<String>, Vec<String>) {
        let mut errors = self.writer.finish();
        let path = self.to.dir.join("manifest.json");
        let mut doc = manifest(&self.to, wire);
        let run = doc
            .as_object_mut()
            .map(|m| m.entry("run").or_insert_with(|| json!({})));
        if let Some(Value::Object(r)) = run {
            r.insert("interrupted".into(), Value::Bool(interrupted));
        }
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        if let Err(e) = crate::util::write_atomic(&path, text.as_bytes()) {
            errors.push(format!("{}: {e}", path.display()));
        }
        (errors, self.to.recording.warnings())
    }
}

/// The manifest of a finished recording.
fn manifest(to: &RecordTo, wire: &Wire) -> Value {
    let r = &to.recording;
    let sessions = r.sessions();
    let (blobs, blob_bytes) = r.blobs();
    let sum = |f: fn(&SessionSummary) -> u64| sessions.iter().map(f).sum::<u64>();
    let caps = r.caps();
    let mut m = to.head.clone();
    let own = json!({
        "format": "rtload-trace",
        "format_version": FORMAT_VERSION,
        "rtload": {
            "version": env!("CARGO_PKG_VERSION"),
            "git_revision": crate::workload::env_info::git_revision(),
        },
        "created": crate::workload::env_info::utc_timestamp(),
        "clock": "t_s and intended_s: seconds since the run's start, the clock of the \
    result's started_s and ended_s",
        "caps": {
            "max_events_per_session": caps.max_events_per_session,
            "max_blob_bytes": caps.max_blob_bytes,
        },
        "totals": {
            "sessions": sessions.len(),
            "events": sum(|s| s.events),
            "events_dropped": sum(|s| s.events_dropped),
            "blobs": blobs,
            "blob_bytes": blob_bytes,
            "blobs_dropped": sum(|s| s.blobs_dropped),
            "truncated_sessions": sessions.iter().filter(|s| s.truncated).count(),
        },
        "sessions": sessions,
    });
    if let Value::Object(own) = own {
        m.extend(own);
    }
    let handshake = wire.handshake_headers().map(|h| handshake(h, r));
    let target = m.entry("target").or_insert_with(|| json!({}));
    if let Value::Object(t) = target {
        t.insert("handshake_headers".into(), json!(handshake));
    }
    Value::Object(m)
}

/// The handshake's response headers as the manifest may show them: no cookies or auth,
/// values scrubbed.
fn handshake(headers: &[(String, String)], r: &Recording) -> Vec<(String, String)> {
    headers
        .iter()
        .filter(|(k, _)| {
            let k = k.to_ascii_lowercase();
            !(k.contains("cookie") || k.contains("auth"))
        })
        .map(|(k, v)| (k.clone(), r.scrub_text(v)))
        .collect()
}
