//! Reading a recording back: what a tape wrote reads back whole; bad files name their
//! line and column.

use std::time::Duration;

use bytes::Bytes;

use super::read::{Dir, Kind, Trace, TraceError};
use super::*;
use crate::workload::{Inbound, Outbound};

/// A recording of one session written the way the run writes it (tape → files), with a
/// minimal manifest.
fn recorded(dir: &std::path::Path) {
    let rec = Recording::new(RecordCaps::default(), &[]);
    let t0 = Instant::now();
    let mut tape = rec.tape(0, false, t0);
    tape.open(t0 + Duration::from_millis(5));
    tape.outbound(
        t0 + Duration::from_millis(21),
        Some(t0 + Duration::from_millis(20)),
        &Outbound::Text(r#"{"type":"go"}"#.into()),
    );
    tape.inbound(
        t0 + Duration::from_millis(40),
        &Inbound::Binary(Bytes::from_static(b"\x01\x02\x03")),
    );
    tape.peer_closed(t0 + Duration::from_millis(50), None);
    for a in tape.finish() {
        let ArtifactBody::Bytes(b) = a.body else {
            panic!("in memory")
        };
        let p = dir.join(a.rel_path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b).unwrap();
    }
    let m = serde_json::json!({"format": "rtload-trace", "format_version": FORMAT_VERSION});
    std::fs::write(dir.join("manifest.json"), m.to_string()).unwrap();
}

#[test]
fn what_a_tape_writes_reads_back_with_its_payloads() {
    let d = tempfile::tempdir().unwrap();
    recorded(d.path());
    let t = Trace::open(d.path()).unwrap();
    assert_eq!(t.sessions.len(), 1);
    let s = &t.sessions[0];
    assert_eq!((s.idx, s.warmup), (0, false));
    assert_eq!(s.summary.as_ref().map(|x| x.events), Some(4));
    let kinds: Vec<_> = s.events.iter().map(|e| (e.dir, e.kind.clone())).collect();
    assert_eq!(
        kinds,
        [
            (Dir::Out, Kind::Open),
            (Dir::Out, Kind::Text),
            (Dir::In, Kind::Binary),
            (Dir::In, Kind::Close)
        ]
    );
    let out = &s.events[1];
    assert_eq!(out.ty.as_deref(), Some("go"));
    assert!((out.t_s - 0.021).abs() < 1e-9 && (out.intended_s.unwrap() - 0.020).abs() < 1e-9);
    assert_eq!(
        t.payload(out).unwrap().as_deref(),
        Some(&br#"{"type":"go"}"#[..])
    );
    assert_eq!(
        t.payload(&s.events[2]).unwrap().as_deref(),
        Some(&b"\x01\x02\x03"[..])
    );
    assert_eq!(s.events[3].frame, Some(false));
    assert_eq!(t.payload(&s.events[0]).unwrap(), None);
}

#[test]
fn a_bad_event_line_names_its_file_line_and_column_and_an_altered_blob_is_refused() {
    let d = tempfile::tempdir().unwrap();
    recorded(d.path());
    let f = d.path().join("sessions/0.jsonl");
    let text = std::fs::read_to_string(&f).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[2] = r#"{"t_s": 0.1, "dir": "sideways", "kind": "text"}"#;
    std::fs::write(&f, lines.join("\n")).unwrap();
    let e = Trace::open(d.path()).unwrap_err().to_string();
    assert!(e.contains("sessions/0.jsonl:3:"), "{e}");
    assert!(
        e.contains("sideways") && e.contains("expected an event"),
        "{e}"
    );

    let d = tempfile::tempdir().unwrap();
    recorded(d.path());
    let t = Trace::open(d.path()).unwrap();
    let ev = &t.sessions[0].events[2];
    let blob = d.path().join("blobs").join(ev.sha256.as_ref().unwrap());
    std::fs::write(&blob, b"other").unwrap();
    let e = t.payload(ev).unwrap_err();
    assert!(matches!(e, TraceError::Blob { .. }), "{e}");
    assert!(e.to_string().contains("altered"), "{e}");
}

#[test]
fn a_directory_that_is_not_a_recording_says_how_to_make_one() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("manifest.json"), r#"{"format": "other"}"#).unwrap();
    let e = Trace::open(d.path()).unwrap_err().to_string();
    assert!(
        e.contains("manifest.json:1:1") && e.contains("--record DIR"),
        "{e}"
    );
    let e = Trace::open(&d.path().join("nowhere"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("nowhere/manifest.json"), "{e}");
}

#[test]
fn wake_ups_engine_failures_and_the_samples_facts_read_back() {
    let d = tempfile::tempdir().unwrap();
    let rec = Recording::new(
        RecordCaps::default(),
        &[("Authorization".into(), "Bearer sk-1234".into())],
    );
    let t0 = Instant::now();
    let mut tape = rec.tape(2, true, t0);
    tape.wake(t0 + Duration::from_millis(7));
    let refused = Failure::new(FailureKind::Handshake { status: Some(503) }, "no: sk-1234");
    tape.failed(t0 + Duration::from_millis(9), false, &refused);
    tape.failed(
        t0 + Duration::from_millis(11),
        true,
        &Failure::new(FailureKind::Transport, "reset"),
    );
    tape.sample(rec.facts([0.5, 0.25, 0.75, 1.5], &Err(refused.clone())));
    for a in tape.finish() {
        let ArtifactBody::Bytes(b) = a.body else {
            panic!("in memory")
        };
        let p = d.path().join(a.rel_path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b).unwrap();
    }
    let m = serde_json::json!({"format": "rtload-trace", "format_version": FORMAT_VERSION});
    std::fs::write(d.path().join("manifest.json"), m.to_string()).unwrap();
    let t = Trace::open(d.path()).unwrap();
    let s = &t.sessions[0];
    assert_eq!((s.idx, s.warmup), (2, true));
    let e = &s.events;
    assert_eq!((e[0].dir, e[0].kind.clone()), (Dir::Out, Kind::Wake));
    assert!((e[0].t_s - 0.007).abs() < 1e-12);
    assert_eq!((e[1].dir, e[1].kind.clone()), (Dir::Out, Kind::Failed));
    assert_eq!(
        (e[1].failure.as_deref(), e[1].code),
        (Some("handshake"), Some(503))
    );
    assert_eq!(e[1].reason.as_deref(), Some("no: REDACTED"), "scrubbed");
    assert_eq!(
        (e[2].dir, e[2].failure.as_deref()),
        (Dir::In, Some("transport"))
    );
    let facts = s.summary.as_ref().unwrap().sample.clone().unwrap();
    assert_eq!(
        (
            facts.scheduled_s,
            facts.queue_wait_s,
            facts.started_s,
            facts.ended_s
        ),
        (0.5, 0.25, 0.75, 1.5)
    );
    let f = facts.failure.unwrap();
    assert_eq!(f.message, "no: REDACTED");
    assert_eq!(
        f.failure().unwrap().kind,
        FailureKind::Handshake { status: Some(503) }
    );
    assert_eq!(failure_kind("nonsense", None), None);
}
