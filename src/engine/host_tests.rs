//! The host on its own: a session is driven until its outcome is decided and never
//! after, the first decision wins, and a wake-up it asks for drives its `on_wake` from
//! the timer task (paused clock, no sockets, no actors).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use super::Host;
use crate::engine::wake::on_paused_clock;
use crate::workload::{Artifact, ConnectSpec, DynSession, Effects, FailureKind, Inbound};

/// Logs every call; finishes on the text "done", asks for a wake-up 50 ms after "later"
/// and fails as a timeout when woken.
struct Probe(Arc<Mutex<Vec<String>>>);

impl Probe {
    fn log(&self, line: String) {
        self.0.lock().unwrap().push(line);
    }
}

impl DynSession for Probe {
    fn connect(&self, target: &ConnectSpec) -> ConnectSpec {
        target.clone()
    }
    fn on_open(&mut self, _now: Instant, _fx: &mut Effects) {
        self.log("open".into());
    }
    fn on_inbound(&mut self, msg: Inbound, at: Instant, fx: &mut Effects) {
        let Inbound::Text(t) = msg else { return };
        self.log(format!("in {t}"));
        match &t[..] {
            "done" => fx.succeed(),
            "later" => fx.wake(at + Duration::from_millis(50)),
            _ => {}
        }
    }
    fn on_wake(&mut self, _now: Instant, fx: &mut Effects) {
        self.log("wake".into());
        fx.fail_as(FailureKind::Timeout, "woken");
    }
    fn on_closed(&mut self, _at: Instant, _reason: Option<String>, _fx: &mut Effects) {
        self.log("closed".into());
    }
    fn artifacts(&mut self) -> Vec<Artifact> {
        Vec::new()
    }
    fn finish(self: Box<Self>) {}
}

fn text(t: &str) -> Inbound {
    Inbound::Text(t.to_owned().into())
}

#[test]
fn the_session_is_driven_until_its_outcome_and_the_first_decision_wins() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let host = Host::new(Box::new(Probe(log.clone())), None);
    let now = Instant::now();
    let mut h = host.borrow_mut();
    h.drive(|s, fx| s.on_open(now, fx));
    h.drive(|s, fx| s.on_inbound(text("a"), now, fx));
    assert!(h.outcome.is_none());
    h.drive(|s, fx| s.on_inbound(text("done"), now, fx));
    assert_eq!(h.outcome, Some(Ok(())));
    // After the outcome: nothing reaches the session, and a failure does not overwrite it.
    h.drive(|s, fx| s.on_inbound(text("b"), now, fx));
    h.fail(FailureKind::Transport, "late".into());
    assert_eq!(h.outcome, Some(Ok(())));
    assert_eq!(*log.lock().unwrap(), ["open", "in a", "in done"]);
    assert!(h.take_session().is_some() && h.take_session().is_none());
}

#[test]
fn a_requested_wake_up_drives_on_wake_from_the_timer() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let outcome = on_paused_clock(async {
        let host = Host::new(Box::new(Probe(log.clone())), None);
        let t0 = Instant::now();
        host.borrow_mut()
            .drive(|s, fx| s.on_inbound(text("later"), t0, fx));
        tokio::time::sleep(Duration::from_millis(200)).await;
        host.borrow().outcome.clone()
    });
    assert_eq!(*log.lock().unwrap(), ["in later", "wake"]);
    let failure = outcome.unwrap().unwrap_err();
    assert_eq!(
        (failure.kind, failure.message.as_str()),
        (FailureKind::Timeout, "woken")
    );
}
