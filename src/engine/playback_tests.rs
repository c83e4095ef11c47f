//! The playback role in a run with a spool: a held session's closed streams leave its
//! memory as it runs, the run reads the same tallies while live, and after the run the
//! sample's summary is, to the bit, the one a role without a spool gives.

use std::time::Duration;

use tokio::time::Instant;

use super::{Playback, PlaybackSetup};
use crate::workload::outcome::{Rules, SessionBound};
use crate::workload::playback::{PlaybackConfig, PlaybackSummary};
use crate::workload::spool::Spool;
use crate::workload::spool::playback::restore_run;
use crate::workload::{FailureKind, MediaUnit, RunRecord, SampleRecord};

/// A held session's media: `streams` responses of 12 deltas of 100 ms each, one response
/// every 2 s, its deltas 80 ms apart — but every seventh response's deltas 150 ms apart,
/// so it stalls.
fn media(origin: Instant, streams: u64) -> Vec<MediaUnit> {
    let mut out = Vec::new();
    for s in 0..streams {
        let step_ms = if s % 7 == 3 { 150 } else { 80 };
        for i in 0..12 {
            out.push(MediaUnit {
                at: origin + Duration::from_millis(s * 2_000 + i * step_ms),
                duration_s: 0.1,
                stream: s,
                index: 0,
            });
        }
    }
    out
}

fn played(spool: Option<&Spool>, streams: u64) -> PlaybackSummary {
    let origin = Instant::now();
    let cfg = PlaybackConfig {
        buffer_units: 2,
        prebuffer_s: 0.15,
    };
    let setup = PlaybackSetup {
        cfg,
        spool: spool.map(Spool::session),
    };
    let mut role = Playback::new(setup, origin);
    for u in media(origin, streams) {
        role.play(&u);
    }
    role.finish()
}

fn sample(playback: PlaybackSummary) -> RunRecord {
    RunRecord {
        samples: vec![SampleRecord {
            idx: 0,
            warmup: false,
            session: Some(0),
            scheduled_s: 0.0,
            queue_wait_s: 0.0,
            started_s: 0.0,
            opened_s: Some(0.0),
            ended_s: 1.0,
            outcome: Ok(()),
            send_lateness_s: Vec::new(),
            send_lateness: Default::default(),
            playback: Some(playback),
            output: None,
        }],
        duration_s: 1.0,
        endpoint: String::new(),
        load: None,
        interrupted: false,
        measured_indices: None,
    }
}

#[test]
fn a_held_session_spills_its_closed_streams_and_they_come_back_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let streams = 1_000;
    let kept = played(None, streams);
    let spilled = played(Some(&spool), streams);
    assert_eq!(kept.streams.len(), streams as usize);
    assert!(kept.stall_count() > 0, "some responses stall");

    // While live: most streams left memory, the tallies read the same.
    let s = spilled.spilled.as_ref().expect("streams were let go");
    assert!(s.parts.spilled.is_some(), "and reached the spool");
    assert!(
        spilled.streams.len() < 200,
        "kept {} streams",
        spilled.streams.len()
    );
    assert_eq!(spilled.stream_count(), kept.stream_count());
    assert_eq!(spilled.stall_count(), kept.stall_count());
    assert_eq!(
        spilled.total_stall_s().to_bits(),
        kept.total_stall_s().to_bits()
    );
    assert_eq!(spilled.first_stream(), kept.first_stream());
    let unspilled = sample(kept.clone());
    let mut run = sample(spilled);
    assert_eq!(session_values(&run), session_values(&unspilled));

    // After the run: the very summary a role without a spool gives, and every output
    // of it (the outcome rules' values, the JSON) the same.
    restore_run(&mut run, Some(&spool));
    assert!(run.samples[0].outcome.is_ok());
    assert_eq!(run.samples[0].playback.as_ref(), Some(&kept));
    assert_eq!(session_values(&run), session_values(&unspilled));
    let json = |r: &RunRecord| serde_json::to_string(&r.samples[0].playback).unwrap();
    assert_eq!(json(&run), json(&unspilled));
}

/// The outcome rules' playback values of the run's sample, as bits (what the coordinator
/// classifies with while the run is live, and the report after it).
fn session_values(run: &RunRecord) -> Vec<u64> {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let bound = |metric: &str| {
        let into = std::sync::Arc::clone(&seen);
        SessionBound {
            metric: metric.into(),
            expr: "< 1e9".into(),
            holds: std::sync::Arc::new(move |v: f64| {
                into.lock().unwrap().push(v.to_bits());
                true
            }),
        }
    };
    let rules = Rules {
        reject_patterns: Vec::new(),
        slo: ["stall_count", "stall_ms", "playback_start_ms"]
            .map(bound)
            .to_vec(),
    };
    rules.classify(&run.samples[0]);
    let values = seen.lock().unwrap().clone();
    assert_eq!(values.len(), 3, "every value present");
    values
}

#[test]
fn a_short_session_spills_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let p = played(Some(&spool), 20);
    assert_eq!(p.spilled, None);
    assert_eq!(p, played(None, 20));
}

#[test]
fn streams_that_cannot_be_read_back_fail_the_sample_and_leave_none() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let mut run = sample(played(Some(&spool), 1_000));
    restore_run(&mut run, None);
    let s = &run.samples[0];
    let failure = s.outcome.as_ref().unwrap_err();
    assert_eq!(failure.kind, FailureKind::Report);
    assert!(
        failure.message.contains("without a spool"),
        "{}",
        failure.message
    );
    let p = s.playback.as_ref().unwrap();
    assert!(p.streams.is_empty() && p.spilled.is_none());
}
