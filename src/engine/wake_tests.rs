//! The wake-up on a paused clock, awaited as the sample's loop awaits it (beside other
//! work): requests fire at their instant, the newest request wins, a later request does
//! not fire early, an earlier one is not missed, a disarmed one never fires.

use std::time::Duration;

use tokio::time::Instant;

use super::{Wake, on_paused_clock};

/// What the script does at an instant.
enum Op {
    Arm(u64),
    Disarm,
}

/// Runs `script` (each step at its ms offset) against one wake-up until `until_ms`, the
/// way the sample's loop does; returns when it fired, ms after the start.
fn fired(script: &[(u64, Op)], until_ms: u64) -> Vec<u64> {
    on_paused_clock(async {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut wake = Wake::default();
        let mut fired = Vec::new();
        let mut steps = script.iter().peekable();
        loop {
            let next = steps.peek().map_or(until_ms, |(ms, _)| *ms);
            tokio::select! {
                now = wake.due(), if wake.armed() => {
                    fired.push(now.duration_since(t0).as_millis() as u64);
                }
                () = tokio::time::sleep_until(at(next)) => match steps.next() {
                    Some((_, Op::Arm(ms))) => wake.arm(at(*ms)),
                    Some((_, Op::Disarm)) => wake.disarm(),
                    None => return fired,
                },
            }
        }
    })
}

#[test]
fn a_request_fires_once_at_its_instant() {
    assert_eq!(fired(&[(0, Op::Arm(50))], 200), [50]);
}

#[test]
fn a_later_request_replaces_the_earlier_one_and_fires_only_at_its_own_instant() {
    let script = [(0, Op::Arm(50)), (10, Op::Arm(120))];
    assert_eq!(fired(&script, 300), [120], "only the newest request fires");
}

#[test]
fn an_earlier_request_is_not_missed() {
    let script = [(0, Op::Arm(500)), (10, Op::Arm(30)), (110, Op::Arm(140))];
    assert_eq!(fired(&script, 300), [30, 140]);
}

#[test]
fn a_disarmed_request_never_fires_and_a_new_one_after_it_does() {
    assert!(fired(&[(0, Op::Arm(40)), (10, Op::Disarm)], 200).is_empty());
    let script = [(0, Op::Arm(40)), (10, Op::Disarm), (100, Op::Arm(150))];
    assert_eq!(fired(&script, 300), [150]);
}

#[test]
fn a_request_armed_late_into_an_expired_entry_fires_at_its_own_instant() {
    // The entry was set to 20 and left unobserved past it (disarmed); 60 moves it on.
    let script = [(0, Op::Arm(20)), (5, Op::Disarm), (40, Op::Arm(60))];
    assert_eq!(fired(&script, 200), [60]);
}
