//! `rtload serve --replay DIR` loads its recording here, where the recording's reader
//! (`engine::record::read`) and the server meet: every session file read once, every
//! server payload loaded once and shared between sessions by digest, each session turned
//! into the server's pure [`Script`]. Bad input is an error naming the file and the fix,
//! before anything listens: not a recording, a session the event cap cut, a payload
//! missing, altered or kept out by the size cap, a text payload that is not UTF-8.

use std::collections::HashMap;
use std::path::Path;

use bytes::Bytes;
use bytestring::ByteString;

use crate::engine::record::read::{Dir, Kind, SessionTrace, Trace, TraceError, TraceEvent};
use crate::server::replay::plan::{Recorded, Reply, Script, Shape};
use crate::server::replay::{Replay, ReplayError, ReplayOptions};

/// Reads the recording in `dir` and prepares it to be served with `opts`.
pub fn load_replay(dir: &Path, opts: ReplayOptions) -> Result<Replay, ReplayError> {
    let trace = Trace::open(dir).map_err(|e| not_a_recording(dir, e))?;
    let mut blobs: HashMap<String, Bytes> = HashMap::new();
    let mut scripts = Vec::new();
    for s in &trace.sessions {
        if s.summary.as_ref().is_some_and(|x| x.crashed) {
            continue; // its events were lost with it: nothing to replay
        }
        check_whole(s)?;
        let mut events = Vec::with_capacity(s.events.len());
        for (n, ev) in s.events.iter().enumerate() {
            let bad = |msg: String| {
                ReplayError::Recording(format!(
                    "{}: event {} (line {}): {msg}",
                    s.path.display(),
                    n + 1,
                    n + 2
                ))
            };
            if let Some(r) = recorded(&trace, ev, &mut blobs).map_err(bad)? {
                events.push(r);
            }
        }
        scripts.push(Script::new(s.idx, s.warmup, events));
    }
    Replay::new(scripts, opts, &dir.display().to_string())
}

fn not_a_recording(dir: &Path, e: TraceError) -> ReplayError {
    let fix = match e {
        TraceError::Io { .. } => {
            " (--replay takes a directory written by `rtload run SCENARIO --record DIR`)"
        }
        _ => "",
    };
    ReplayError::Recording(format!("--replay {}: {e}{fix}", dir.display()))
}

/// A session the event cap cut (or whose file ends early) cannot be replayed whole.
fn check_whole(s: &SessionTrace) -> Result<(), ReplayError> {
    let msg = match &s.summary {
        None => "the file ends before its summary line (the recording run was killed while \
writing it): record the run again"
            .to_string(),
        Some(x) if x.events_dropped > 0 => format!(
            "the recording's event cap left {} events of this session unwritten: record \
again with a larger --record-max-events",
            x.events_dropped
        ),
        Some(_) => return Ok(()),
    };
    Err(ReplayError::Recording(format!(
        "{}: {msg}",
        s.path.display()
    )))
}

/// One event as the server's script takes it (`None`: nothing to replay or match).
/// Server payloads are loaded here, once per digest.
fn recorded(
    trace: &Trace,
    ev: &TraceEvent,
    blobs: &mut HashMap<String, Bytes>,
) -> Result<Option<Recorded>, String> {
    let t_s = ev.t_s;
    Ok(Some(match (ev.dir, &ev.kind) {
        (_, Kind::Open) => Recorded::Open { t_s },
        (_, Kind::Other | Kind::Wake | Kind::Failed) => return Ok(None),
        (Dir::Out, Kind::Close) => Recorded::ClientClose { t_s },
        (Dir::Out, kind) => Recorded::Client {
            t_s,
            shape: Shape {
                binary: *kind == Kind::Binary,
                ty: ev.ty.clone().filter(|_| *kind == Kind::Text),
            },
        },
        (Dir::In, Kind::Close) => Recorded::Server {
            t_s,
            reply: match (ev.frame, ev.code) {
                (Some(false), _) => Reply::Drop,
                (_, code) => Reply::Close {
                    code: code.unwrap_or(1000),
                    reason: ev.reason.clone(),
                },
            },
        },
        (Dir::In, kind) => {
            let bytes = payload(trace, ev, blobs)?;
            let reply = if *kind == Kind::Text {
                let path = trace
                    .dir
                    .join("blobs")
                    .join(ev.sha256.as_deref().unwrap_or(""));
                Reply::Text(ByteString::try_from(bytes).map_err(|_| {
                    format!(
                        "{}: a text message that is not UTF-8: the store was altered",
                        path.display()
                    )
                })?)
            } else {
                Reply::Binary(bytes)
            };
            Recorded::Server { t_s, reply }
        }
    }))
}

/// The payload of a server message, loaded once per digest.
fn payload(
    trace: &Trace,
    ev: &TraceEvent,
    blobs: &mut HashMap<String, Bytes>,
) -> Result<Bytes, String> {
    let Some(sha) = &ev.sha256 else {
        return Ok(Bytes::new()); // not written by this format: every message has one
    };
    if let Some(b) = blobs.get(sha) {
        return Ok(b.clone());
    }
    let b = (trace.payload(ev).map_err(|e| e.to_string())?).unwrap_or_default();
    blobs.insert(sha.clone(), b.clone());
    Ok(b)
}
