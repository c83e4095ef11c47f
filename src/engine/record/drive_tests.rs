//! The virtual-time driver on a toy session, without sockets or files: sends matched in
//! order give lateness from the recorded write times, wake-ups and receipts arrive at
//! their stamps, the peer's close decides as the live phase does, divergences are errors
//! naming the line.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use sha2::{Digest, Sha256};
use tokio::time::Instant;

use super::super::read::{Dir, Kind, SessionTrace, TraceEvent};
use super::super::{RecordedFailure, SampleFacts, SessionSummary, hex};
use super::*;
use crate::workload::{Artifact, ConnectSpec, Effects, Inbound, Outbound};

/// Sends `hello` at open + 100 ms (scheduled), wakes at open + 1 s and then succeeds;
/// any inbound text `done` succeeds at once. Records what it saw.
struct Toy {
    open: Option<Instant>,
    seen: std::sync::Arc<std::sync::Mutex<Vec<(String, Duration)>>>,
}

impl DynSession for Toy {
    fn connect(&self, target: &ConnectSpec) -> ConnectSpec {
        target.clone()
    }
    fn on_open(&mut self, now: Instant, fx: &mut Effects) {
        self.open = Some(now);
        fx.send(
            Outbound::Text("hello".into()),
            Some(now + Duration::from_millis(100)),
        );
        fx.wake(now + Duration::from_secs(1));
    }
    fn on_inbound(&mut self, msg: Inbound, at: Instant, fx: &mut Effects) {
        let since = at - self.open.unwrap();
        if let Inbound::Text(t) = &msg {
            self.seen.lock().unwrap().push((t.to_string(), since));
            if &**t == "done" {
                fx.succeed();
            }
        }
    }
    fn on_wake(&mut self, now: Instant, fx: &mut Effects) {
        let since = now - self.open.unwrap();
        self.seen.lock().unwrap().push(("wake".into(), since));
        fx.succeed();
    }
    fn on_closed(&mut self, _at: Instant, _reason: Option<String>, _fx: &mut Effects) {}
    fn artifacts(&mut self) -> Vec<Artifact> {
        Vec::new()
    }
    fn finish(self: Box<Self>) {}
}

fn ev(t_s: f64, dir: Dir, kind: Kind) -> TraceEvent {
    TraceEvent {
        t_s,
        dir,
        kind,
        ty: None,
        bytes: None,
        sha256: None,
        stored: None,
        intended_s: None,
        code: None,
        reason: None,
        frame: None,
        failure: None,
    }
}

fn text(t_s: f64, dir: Dir, s: &str, intended_s: Option<f64>) -> TraceEvent {
    TraceEvent {
        sha256: Some(hex(&Sha256::digest(s.as_bytes()))),
        bytes: Some(s.len()),
        intended_s,
        ..ev(t_s, dir, Kind::Text)
    }
}

fn session(events: Vec<TraceEvent>, failure: Option<&str>) -> SessionTrace {
    let summary = SessionSummary {
        sample: Some(SampleFacts {
            scheduled_s: 0.5,
            queue_wait_s: 0.25,
            started_s: 0.75,
            ended_s: 9.0,
            failure: failure.map(|k| RecordedFailure {
                kind: k.into(),
                status: None,
                message: "m".into(),
            }),
        }),
        ..SessionSummary::default()
    };
    SessionTrace {
        path: PathBuf::from("sessions/0.jsonl"),
        idx: 0,
        warmup: false,
        events,
        summary: Some(summary),
    }
}

type Seen = std::sync::Arc<std::sync::Mutex<Vec<(String, Duration)>>>;

fn run(events: Vec<TraceEvent>, failure: Option<&str>) -> (Result<SampleRecord, DriveError>, Seen) {
    let seen = Seen::default();
    let toy = Box::new(Toy {
        open: None,
        seen: seen.clone(),
    });
    let store: HashMap<String, Bytes> = ["hello", "done", "other"]
        .iter()
        .map(|s| (hex(&Sha256::digest(s.as_bytes())), Bytes::from(*s)))
        .collect();
    let payload = move |e: &TraceEvent| Ok(e.sha256.as_ref().map(|s| store[s].clone()));
    let origin = Instant::now();
    let trace = session(events, failure);
    (
        drive(&trace, toy, PlaybackConfig::default(), origin, &payload),
        seen,
    )
}

#[test]
fn a_recorded_session_is_driven_at_its_stamps_and_keeps_the_runs_facts() {
    let events = vec![
        ev(1.0, Dir::Out, Kind::Open),
        text(1.125, Dir::Out, "hello", Some(1.1)),
        text(1.5, Dir::In, "other", None),
        ev(2.0, Dir::Out, Kind::Wake),
        ev(2.01, Dir::Out, Kind::Close),
    ];
    let (rec, seen) = run(events, None);
    let rec = rec.unwrap();
    assert_eq!(rec.outcome, Ok(()));
    assert_eq!(rec.opened_s, Some(1.0));
    assert_eq!((rec.scheduled_s, rec.queue_wait_s), (0.5, 0.25));
    assert_eq!((rec.started_s, rec.ended_s), (0.75, 9.0));
    assert_eq!(rec.send_lateness_s.len(), 1);
    assert!((rec.send_lateness_s[0] - 0.025).abs() < 1e-9);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[0], ("other".into(), Duration::from_millis(500)));
    assert_eq!(seen[1], ("wake".into(), Duration::from_secs(1)));
    assert!(rec.playback.is_some());
}

#[test]
fn a_peer_close_before_the_session_decides_is_closed_early_and_1013_is_rejected() {
    let close = |code| TraceEvent {
        code: Some(code),
        ..ev(1.2, Dir::In, Kind::Close)
    };
    let events = vec![ev(1.0, Dir::Out, Kind::Open), close(1000)];
    let rec = run(events, Some("closed_early")).0.unwrap();
    assert_eq!(rec.outcome.unwrap_err().kind, FailureKind::ClosedEarly);
    let events = vec![ev(1.0, Dir::Out, Kind::Open), close(1013)];
    let rec = run(events, Some("rejected")).0.unwrap();
    assert_eq!(rec.outcome.unwrap_err().kind, FailureKind::Rejected);
}

#[test]
fn engine_failures_and_refused_connects_come_back_from_failed_events() {
    let refused = TraceEvent {
        failure: Some("handshake".into()),
        code: Some(503),
        reason: Some("refused".into()),
        ..ev(0.9, Dir::Out, Kind::Failed)
    };
    let rec = run(vec![refused], Some("handshake")).0.unwrap();
    assert_eq!(rec.opened_s, None);
    assert!(rec.playback.is_none());
    let f = rec.outcome.unwrap_err();
    assert_eq!(f.kind, FailureKind::Handshake { status: Some(503) });
    assert_eq!(f.message, "refused");
}

#[test]
fn divergences_name_the_line_and_what_differs() {
    // A write the session never emitted.
    let events = vec![
        ev(1.0, Dir::Out, Kind::Open),
        text(1.125, Dir::Out, "hello", Some(1.1)),
        text(1.2, Dir::Out, "other", None),
    ];
    let e = run(events, None).0.unwrap_err().to_string();
    assert!(
        e.contains("sessions/0.jsonl:4:") && e.contains("did not emit"),
        "{e}"
    );
    // Another payload in its place.
    let events = vec![
        ev(1.0, Dir::Out, Kind::Open),
        text(1.1, Dir::Out, "other", Some(1.1)),
    ];
    let e = run(events, None).0.unwrap_err().to_string();
    assert!(e.contains(":3:") && e.contains("different message"), "{e}");
    // Another intended time.
    let events = vec![
        ev(1.0, Dir::Out, Kind::Open),
        text(1.2, Dir::Out, "hello", Some(1.2)),
    ];
    let e = run(events, None).0.unwrap_err().to_string();
    assert!(e.contains("intended send time"), "{e}");
    // A wake-up before the time asked for.
    let events = vec![ev(1.0, Dir::Out, Kind::Open), ev(1.5, Dir::Out, Kind::Wake)];
    let e = run(events, None).0.unwrap_err().to_string();
    assert!(e.contains("before the time"), "{e}");
    // The recorded outcome differs from the recomputed one.
    let events = vec![
        ev(1.0, Dir::Out, Kind::Open),
        text(1.5, Dir::In, "done", None),
    ];
    let e = run(events, Some("protocol")).0.unwrap_err().to_string();
    assert!(e.contains("the run's outcome was protocol"), "{e}");
}

#[test]
fn a_trace_without_the_engines_facts_or_cut_by_a_cap_is_refused() {
    let mut t = session(vec![], None);
    t.summary.as_mut().unwrap().sample = None;
    let toy = Box::new(Toy {
        open: None,
        seen: Seen::default(),
    });
    let none = |_: &TraceEvent| Ok(None);
    let e = drive(&t, toy, PlaybackConfig::default(), Instant::now(), &none).unwrap_err();
    assert!(e.to_string().contains("record it again"), "{e}");
    let mut t = session(vec![], None);
    t.summary.as_mut().unwrap().events_dropped = 3;
    let toy = Box::new(Toy {
        open: None,
        seen: Seen::default(),
    });
    let e = drive(&t, toy, PlaybackConfig::default(), Instant::now(), &none).unwrap_err();
    assert!(e.to_string().contains("--record-max-events"), "{e}");
    let kept_out = TraceEvent {
        stored: Some(false),
        ..text(1.5, Dir::In, "other", None)
    };
    let t = session(vec![ev(1.0, Dir::Out, Kind::Open), kept_out], None);
    let toy = Box::new(Toy {
        open: None,
        seen: Seen::default(),
    });
    let e = drive(&t, toy, PlaybackConfig::default(), Instant::now(), &none).unwrap_err();
    assert!(e.to_string().contains("--record-max-bytes"), "{e}");
}

#[test]
fn a_json_text_may_differ_in_a_fresh_value_or_a_scrubbed_secret_but_not_otherwise() {
    let written = r#"{"type":"session.update","event_id":"aaaa","key":"REDACTED"}"#;
    let ev = TraceEvent {
        ty: Some("session.update".into()),
        ..text(1.0, Dir::Out, written, None)
    };
    let stored = Bytes::from(written);
    let payload = move |_: &TraceEvent| Ok(Some(stored.clone()));
    let none = |_: &TraceEvent| Ok(None);
    // A fresh id of the same length: the same message.
    let fresh = r#"{"type":"session.update","event_id":"bbbb","key":"REDACTED"}"#;
    assert!(same_message(&ev, fresh.as_bytes(), &none));
    // A secret the recording scrubbed: the stored text says so.
    let secret = r#"{"type":"session.update","event_id":"aaaa","key":"sk-123456789"}"#;
    assert!(same_message(&ev, secret.as_bytes(), &payload));
    assert!(!same_message(&ev, secret.as_bytes(), &none));
    // Another type, or not JSON: another message.
    let other = r#"{"type":"session.create","event_id":"aaaa","key":"REDACTED"}"#;
    assert!(!same_message(&ev, other.as_bytes(), &payload));
    assert!(!same_message(&ev, b"hello", &payload));
}
