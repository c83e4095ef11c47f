//! How a live phase's end becomes the sample's one record: everything it returned is in
//! the record (artifacts only when the run publishes them), and a panic in it is the
//! sample's `crashed` outcome naming the panic, never a lost sample.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::time::Instant;

use super::{Heading, record};
use crate::engine::session::Ended;
use crate::workload::playback::PlaybackSummary;
use crate::workload::{Artifact, ArtifactBody, DynSession, Effects, Failure, FailureKind, Inbound};

/// A session with one artifact that notes when its output is taken.
struct Done(Arc<Mutex<bool>>);

impl DynSession for Done {
    fn connect(&self, t: &crate::workload::ConnectSpec) -> crate::workload::ConnectSpec {
        t.clone()
    }
    fn on_open(&mut self, _: Instant, _: &mut Effects) {}
    fn on_inbound(&mut self, _: Inbound, _: Instant, _: &mut Effects) {}
    fn on_wake(&mut self, _: Instant, _: &mut Effects) {}
    fn on_closed(&mut self, _: Instant, _: Option<String>, _: &mut Effects) {}
    fn artifacts(&mut self) -> Vec<Artifact> {
        vec![Artifact {
            rel_path: "a.txt".into(),
            body: ArtifactBody::Bytes(Bytes::from_static(b"a")),
        }]
    }
    fn finish(self: Box<Self>) {
        *self.0.lock().unwrap() = true;
    }
}

fn heading(publishes: bool) -> Heading {
    Heading {
        idx: 3,
        warmup: false,
        run_start: Instant::now(),
        scheduled_s: 0.5,
        queue_wait_s: 0.25,
        publishes,
    }
}

fn ended(finished: &Arc<Mutex<bool>>) -> Ended {
    Ended {
        session: Box::new(Done(finished.clone())),
        outcome: Err(Failure::new(FailureKind::Timeout, "slow")),
        opened: Some(Instant::now()),
        send_lateness: {
            let mut log = crate::engine::lateness::LatenessLog::default();
            log.push(std::time::Duration::from_millis(1));
            log.push(std::time::Duration::from_millis(2));
            log.hand_over()
        },
        playback: Some(PlaybackSummary::default()),
        tape: None,
    }
}

#[test]
fn everything_the_live_phase_returned_is_in_the_record() {
    let finished = Arc::new(Mutex::new(false));
    let (rec, artifacts) = record(&heading(true), Instant::now(), Ok(ended(&finished)));
    assert_eq!((rec.idx, rec.scheduled_s, rec.queue_wait_s), (3, 0.5, 0.25));
    assert_eq!(rec.outcome.unwrap_err().message, "slow");
    // Handed over unread: the values are read after the run.
    assert!(rec.send_lateness_s.is_empty());
    assert_eq!(rec.send_lateness.values(None).unwrap(), [0.001, 0.002]);
    assert_eq!(
        (rec.send_lateness.count, rec.send_lateness.max_s),
        (2, Some(0.002))
    );
    assert!(rec.opened_s.is_some() && rec.playback.is_some() && rec.output.is_some());
    assert!(*finished.lock().unwrap(), "the session's output was stored");
    assert_eq!(artifacts.len(), 1);
    let (_, none) = record(&heading(false), Instant::now(), Ok(ended(&finished)));
    assert!(none.is_empty(), "a run without a writer publishes nothing");
}

#[test]
fn a_panic_in_the_live_phase_is_a_crashed_record() {
    let panic = std::panic::catch_unwind(|| panic!("boom {}", 7)).unwrap_err();
    let (rec, artifacts) = record(&heading(true), Instant::now(), Err(panic));
    let f = rec.outcome.unwrap_err();
    assert_eq!(
        (f.kind, f.message.as_str()),
        (FailureKind::Crashed, "sample 3 crashed: boom 7")
    );
    assert!(artifacts.is_empty() && rec.output.is_none() && rec.playback.is_none());
}
