//! The wake-up timer on a paused clock: requests fire at their instant, the newest
//! request wins, a later request does not fire early, an earlier one is not missed.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use tokio::time::Instant;

use super::WakeTimer;

/// Runs `body` on a current-thread runtime with the clock paused (it advances only when
/// every task waits), inside a `LocalSet`; returns the fired generations and when.
fn with_timer(body: impl AsyncFnOnce(&mut WakeTimer, Instant)) -> Vec<(u64, Duration)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async {
        let t0 = Instant::now();
        let fired = Rc::new(RefCell::new(Vec::new()));
        let log = fired.clone();
        let mut timer = WakeTimer::start(move |g| {
            log.borrow_mut().push((g, t0.elapsed()));
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
    assert_eq!(fired, vec![(1, ms(50))]);
}

#[test]
fn a_later_request_replaces_the_earlier_one_and_fires_only_at_its_own_instant() {
    let fired = with_timer(async |t, t0| {
        t.arm(t0 + ms(50));
        tokio::time::sleep(ms(10)).await;
        t.arm(t0 + ms(120));
        tokio::time::sleep(ms(300)).await;
    });
    assert_eq!(fired, vec![(2, ms(120))]);
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
    assert_eq!(fired, vec![(2, ms(30)), (3, ms(140))]);
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
