//! The tape's pure parts: line encoding, dedupe, caps, scrubbing.

use std::time::Duration;

use bytes::Bytes;
use sha2::{Digest, Sha256};

use super::tape::json_type;
use super::*;
use crate::workload::{Inbound, Outbound};

fn lines(a: &Artifact) -> Vec<serde_json::Value> {
    let ArtifactBody::Bytes(b) = &a.body else {
        panic!("in memory")
    };
    std::str::from_utf8(b)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn text(s: &str) -> Outbound {
    Outbound::Text(s.into())
}

#[test]
fn events_are_encoded_on_the_runs_clock_with_digest_type_and_intended_time() {
    let rec = Recording::new(RecordCaps::default(), &[]);
    let t0 = Instant::now();
    let mut tape = rec.tape(3, false, t0);
    tape.open(t0 + Duration::from_millis(10));
    let at = t0 + Duration::from_millis(250);
    tape.outbound(
        at,
        Some(t0 + Duration::from_millis(200)),
        &text(r#"{"type":"a.b"}"#),
    );
    tape.inbound(at, &Inbound::Binary(Bytes::from_static(b"\x00\x01")));
    tape.peer_closed(at, Some("1000 bye now"));
    tape.closed(at, 1000);
    let files = tape.finish();
    assert_eq!(files[0].rel_path, PathBuf::from("sessions/3.jsonl"));
    let l = lines(&files[0]);
    assert_eq!(
        l[0],
        serde_json::json!({"rtload_trace": 1, "idx": 3, "warmup": false})
    );
    assert_eq!(l[1]["kind"], "open");
    assert!((l[1]["t_s"].as_f64().unwrap() - 0.010).abs() < 1e-9);
    let out = &l[2];
    assert_eq!(
        (out["dir"].as_str(), out["kind"].as_str()),
        (Some("out"), Some("text"))
    );
    assert_eq!(out["type"], "a.b");
    assert_eq!(out["bytes"], 14);
    assert!((out["intended_s"].as_f64().unwrap() - 0.2).abs() < 1e-9);
    let sha = hex(&Sha256::digest(br#"{"type":"a.b"}"#));
    assert_eq!(out["sha256"], sha.as_str());
    assert!(out.get("stored").is_none());
    assert_eq!(
        (l[3]["dir"].as_str(), l[3]["kind"].as_str()),
        (Some("in"), Some("binary"))
    );
    assert!(l[3].get("type").is_none());
    assert_eq!(
        (l[4]["code"].as_u64(), l[4]["reason"].as_str()),
        (Some(1000), Some("bye now"))
    );
    assert_eq!(
        (l[5]["dir"].as_str(), l[5]["code"].as_u64()),
        (Some("out"), Some(1000))
    );
    assert_eq!(l[6]["summary"]["events"], 5);
    assert_eq!(l[6]["summary"]["truncated"], false);
    // Two distinct payloads: two blobs, named by their digest.
    assert_eq!(files.len(), 3);
    assert_eq!(files[1].rel_path, PathBuf::from(format!("blobs/{sha}")));
}

#[test]
fn a_payload_is_stored_once_across_sessions() {
    let rec = Recording::new(RecordCaps::default(), &[]);
    let t0 = Instant::now();
    let mut a = rec.tape(0, false, t0);
    let mut b = rec.tape(1, false, t0);
    for _ in 0..3 {
        a.outbound(t0, None, &text("same"));
        b.outbound(t0, None, &text("same"));
    }
    let (fa, fb) = (a.finish(), b.finish());
    assert_eq!(fa.len() + fb.len(), 3, "two session files and one blob");
    assert_eq!(rec.blobs(), (1, 4));
    assert_eq!(rec.sessions().iter().map(|s| s.events).sum::<u64>(), 6);
}

#[test]
fn the_event_cap_counts_what_it_cuts_and_the_run_warns() {
    let caps = RecordCaps {
        max_events_per_session: 2,
        ..RecordCaps::default()
    };
    let rec = Recording::new(caps, &[]);
    let t0 = Instant::now();
    let mut tape = rec.tape(0, true, t0);
    for i in 0..5 {
        tape.outbound(t0, None, &text(&format!("m{i}")));
    }
    let f = tape.finish();
    let l = lines(&f[0]);
    assert_eq!(l.len(), 4, "header, two events, summary");
    let s = &l[3]["summary"];
    assert_eq!(
        (s["events"].as_u64(), s["events_dropped"].as_u64()),
        (Some(2), Some(3))
    );
    assert_eq!(s["truncated"], true);
    assert_eq!(f.len(), 3, "only the written events' payloads are stored");
    let w = rec.warnings();
    assert_eq!(w.len(), 1);
    assert!(w[0].contains("3 events not written in 1 session"), "{w:?}");
}

#[test]
fn the_blob_cap_keeps_the_event_and_marks_it_not_stored() {
    let caps = RecordCaps {
        max_blob_bytes: 5,
        ..RecordCaps::default()
    };
    let rec = Recording::new(caps, &[]);
    let t0 = Instant::now();
    let mut tape = rec.tape(0, false, t0);
    tape.outbound(t0, None, &text("abcd"));
    tape.outbound(t0, None, &text("efgh"));
    tape.outbound(t0, None, &text("abcd"));
    let f = tape.finish();
    let l = lines(&f[0]);
    assert!(l[1].get("stored").is_none());
    assert_eq!(l[2]["stored"], false);
    assert!(l[3].get("stored").is_none(), "a known payload is stored");
    assert_eq!(l[4]["summary"]["blobs_dropped"], 1);
    assert_eq!(l[4]["summary"]["blob_bytes_dropped"], 4);
    assert_eq!(f.len(), 2);
    assert!(rec.warnings()[0].contains("1 payloads (4 bytes) not stored"));
}

#[test]
fn text_payloads_lose_header_values_and_url_secrets_before_they_are_hashed() {
    let headers = [(
        "Authorization".to_string(),
        "Bearer SECRETTOKEN".to_string(),
    )];
    let rec = Recording::new(RecordCaps::default(), &headers);
    let t0 = Instant::now();
    let mut tape = rec.tape(0, false, t0);
    let msg = r#"{"type":"x","k":"SECRETTOKEN","u":"wss://h/p?api_key=SECRETKEY&model=m"}"#;
    tape.inbound(t0, &Inbound::Text(msg.into()));
    let f = tape.finish();
    let ArtifactBody::Bytes(blob) = &f[1].body else {
        panic!()
    };
    let blob = std::str::from_utf8(blob).unwrap();
    assert!(!blob.contains("SECRET"), "{blob}");
    assert!(blob.contains("model=m"), "{blob}");
    let l = lines(&f[0]);
    assert_eq!(
        l[1]["sha256"],
        hex(&Sha256::digest(blob.as_bytes())).as_str()
    );
    assert_eq!(l[1]["type"], "x");
}

#[test]
fn a_close_without_a_frame_says_so_and_a_crash_leaves_a_marked_trace() {
    let rec = Recording::new(RecordCaps::default(), &[]);
    let t0 = Instant::now();
    let mut tape = rec.tape(0, false, t0);
    tape.peer_closed(t0, None);
    tape.peer_closed(t0, Some("1005"));
    let l = lines(&tape.finish()[0]);
    assert_eq!(l[1]["frame"], false);
    assert!(l[1].get("code").is_none());
    assert_eq!(l[2]["code"], 1005);
    assert!(l[2].get("reason").is_none());
    let c = lines(&rec.crashed(1, false, None));
    assert_eq!(c[1]["summary"]["crashed"], true);
    assert!(rec.warnings()[0].contains("1 session(s) crashed"));
}

#[test]
fn json_type_reads_only_a_string_type_of_an_object() {
    assert_eq!(json_type(br#" {"a":1,"type":"t"}"#), Some("t".into()));
    assert_eq!(json_type(br#"{"type":"t\u00e9"}"#), Some("té".into()));
    assert_eq!(json_type(br#"{"type":3}"#), None);
    assert_eq!(json_type(b"[1]"), None);
    assert_eq!(json_type(b"not json"), None);
    assert_eq!(json_type(br#"{"a":1}"#), None);
}
