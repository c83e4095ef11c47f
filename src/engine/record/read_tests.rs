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
