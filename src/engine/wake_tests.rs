//! The wake-up timer on a paused clock: requests fire at their instant, the newest
//! request wins, a later request does not fire early, an earlier one is not missed.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use tokio::time::Instant;

use super::{WakeTimer, on_paused_clock};

/// Runs `body` with a timer on a paused clock; returns when each request fired.
fn with_timer(body: impl AsyncFnOnce(&mut WakeTimer, Instant)) -> Vec<Duration> {
    on_paused_clock(async {
        let t0 = Instant::now();
        let fired = Rc::new(RefCell::new(Vec::new()));
        let log = fired.clone();
        let mut timer = WakeTimer::start(move || {
            log.borrow_mut().push(t0.elapsed());
            true
        });
        body(&mut timer, t0).await;
        drop(timer);
        fired.take()
    })
}

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn a_request_fires_once_at_its_instant() {
    let fired = with_timer(async |t, t0| {
        t.arm(t0 + ms(50));
        tokio::time::sleep(ms(200)).await;
    });
    assert_eq!(fired, vec![ms(50)]);
}

#[test]
fn a_later_request_replaces_the_earlier_one_and_fires_only_at_its_own_instant() {
    let fired = with_timer(async |t, t0| {
        t.arm(t0 + ms(50));
        tokio::time::sleep(ms(10)).await;
        t.arm(t0 + ms(120));
        tokio::time::sleep(ms(300)).await;
    });
    assert_eq!(fired, vec![ms(120)], "only the newest request fires");
}

#[test]
fn an_earlier_request_wakes_the_sleeping_task() {
    let fired = with_timer(async |t, t0| {
        t.arm(t0 + ms(500));
        tokio::time::sleep(ms(10)).await;
        t.arm(t0 + ms(30));
        tokio::time::sleep(ms(100)).await;
        t.arm(t0 + ms(140));
        tokio::time::sleep(ms(100)).await;
    });
    assert_eq!(fired, vec![ms(30), ms(140)]);
}

#[test]
fn a_disarmed_request_never_fires() {
    let fired = with_timer(async |t, t0| {
        t.arm(t0 + ms(40));
        tokio::time::sleep(ms(10)).await;
        t.disarm();
        tokio::time::sleep(ms(200)).await;
    });
    assert!(fired.is_empty(), "{fired:?}");
}
