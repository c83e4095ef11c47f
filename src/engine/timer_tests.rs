//! The shard timer: its heap as a plain type (alarms on the grid, only due and current
//! entries fire, each once), then the real `timerfd` on a current-thread runtime — every
//! wake-up goes off, never before its instant, and a runtime started later on the same
//! thread gets a timer of its own.

use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::time::Instant;

use super::{Deadlines, PreciseSleep, Slot, Timer};

/// A waker that counts its wakes.
struct Count(AtomicUsize);

impl std::task::Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn counted() -> (Arc<Count>, Waker) {
    let c = Arc::new(Count(AtomicUsize::new(0)));
    (c.clone(), Waker::from(c))
}

fn waiting(waker: &Waker) -> Rc<Slot> {
    let slot = Rc::new(Slot::default());
    slot.waker.set(Some(waker.clone()));
    slot
}

const US: fn(u64) -> Duration = Duration::from_micros;

/// An empty heap on the tests' grid from now, and a counting waker for its slots.
fn heap() -> (Instant, Deadlines, Arc<Count>, Waker) {
    let t0 = Instant::now();
    let (count, waker) = counted();
    (t0, Deadlines::new(t0, G), count, waker)
}

/// The pure tests' grid: finer than the shard's, so rounding shows.
const G: Duration = Duration::from_micros(250);

#[test]
fn alarms_fall_on_the_grid_at_or_after_the_instant() {
    let t0 = Instant::now();
    let d = Deadlines::new(t0, G);
    assert_eq!(d.alarm_for(t0), t0);
    assert_eq!(d.alarm_for(t0 + Duration::from_nanos(1)), t0 + G);
    assert_eq!(d.alarm_for(t0 + G), t0 + G);
    assert_eq!(d.alarm_for(t0 + G * 3 + US(1)), t0 + G * 4);
    // Before the origin: the origin (already passed, so at once).
    assert_eq!(Deadlines::new(t0 + G, G).alarm_for(t0), t0 + G);
}

#[test]
fn only_entries_due_fire_and_each_wakes_its_task_once() {
    let (t0, mut d, count, waker) = heap();
    let (a, b, c) = (waiting(&waker), waiting(&waker), waiting(&waker));
    assert_eq!(d.set(&a, t0 + US(100)), t0 + G);
    d.set(&b, t0 + US(900));
    d.set(&c, t0 + US(300));
    assert_eq!(d.fire(t0 + US(299)), 1, "only a is due");
    assert!(a.fired.get() && !b.fired.get() && !c.fired.get());
    assert_eq!(d.next_alarm(), Some(t0 + G * 2), "c's instant, rounded up");
    assert_eq!(d.fire(t0 + Duration::from_millis(5)), 2);
    assert_eq!(count.0.load(Ordering::SeqCst), 3, "one wake per entry");
    assert_eq!(
        d.fire(t0 + Duration::from_millis(9)),
        0,
        "nothing fires twice"
    );
    assert!(d.is_empty() && d.next_alarm().is_none());
}

#[test]
fn an_entry_moved_from_is_stale_and_never_fires() {
    let (t0, mut d, count, waker) = heap();
    let a = waiting(&waker);
    d.set(&a, t0 + US(2_000));
    d.set(&a, t0 + US(500));
    assert_eq!(d.len(), 2);
    assert_eq!(d.fire(t0 + US(600)), 1);
    // Set again, later than the stale entry: the stale one (2 ms) must not fire it.
    a.waker.set(Some(waker.clone()));
    d.set(&a, t0 + US(5_000));
    assert_eq!(d.fire(t0 + US(3_000)), 0, "the 2 ms entry is stale");
    assert!(!a.fired.get());
    assert_eq!(
        d.next_alarm(),
        Some(t0 + US(5_000)),
        "the stale top was dropped"
    );
    assert_eq!(d.len(), 1);
    assert_eq!(d.fire(t0 + US(5_000)), 1);
    assert_eq!(count.0.load(Ordering::SeqCst), 2);
}

#[test]
fn a_forgotten_slot_never_fires() {
    let (t0, mut d, count, waker) = heap();
    let a = waiting(&waker);
    d.set(&a, t0 + US(10));
    a.due.set(None);
    assert_eq!(d.fire(t0 + US(20)), 0);
    assert_eq!(count.0.load(Ordering::SeqCst), 0);
}

/// Runs `body` on a fresh current-thread runtime with a real clock, in a `LocalSet`.
fn on_real_clock<T>(body: impl Future<Output = T>) -> T {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime");
    tokio::task::LocalSet::new().block_on(&rt, body)
}

/// Awaits `sleep` set to `at`; returns when it went off.
async fn went_off(sleep: &mut PreciseSleep, at: Instant) -> Instant {
    sleep.reset(at);
    std::future::poll_fn(|cx: &mut Context<'_>| sleep.poll_fired(cx)).await;
    Instant::now()
}

#[test]
fn every_wake_up_goes_off_never_before_its_instant() {
    on_real_clock(async {
        let t0 = Instant::now();
        let mut handles = Vec::new();
        for i in 0..40u64 {
            // Instants out of order, some sharing a grid step, one already passed.
            let at = t0 + US((i * 7_919) % 3_000);
            handles.push(tokio::task::spawn_local(async move {
                let mut sleep = PreciseSleep::here().expect("a timer on this thread");
                (at, went_off(&mut sleep, at).await)
            }));
        }
        for h in handles {
            let (at, off) = h.await.unwrap();
            assert!(off >= at, "went off {:?} early", at - off);
        }
    });
}

#[test]
fn a_wake_up_moved_earlier_goes_off_at_the_earlier_instant() {
    on_real_clock(async {
        let mut sleep = PreciseSleep::here().expect("a timer on this thread");
        let t0 = Instant::now();
        sleep.reset(t0 + Duration::from_secs(3_600));
        let off = went_off(&mut sleep, t0 + US(1_500)).await;
        assert!(off >= t0 + US(1_500));
        assert!(
            off < t0 + Duration::from_secs(3_600),
            "the hour-long entry is stale"
        );
    });
}

#[test]
fn a_runtime_started_later_on_the_same_thread_gets_its_own_timer() {
    for _ in 0..3 {
        on_real_clock(async {
            let mut sleep = PreciseSleep::here().expect("a timer on this thread");
            let at = Instant::now() + US(700);
            assert!(went_off(&mut sleep, at).await >= at);
        });
    }
}

#[test]
fn there_is_no_shard_timer_on_a_multi_thread_runtime_or_outside_one() {
    assert!(Timer::here().is_none(), "outside a runtime");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async { assert!(Timer::here().is_none()) });
}

#[test]
fn polling_before_it_goes_off_is_pending() {
    on_real_clock(async {
        let mut sleep = PreciseSleep::here().expect("a timer on this thread");
        sleep.reset(Instant::now() + Duration::from_secs(3_600));
        let (_, waker) = counted();
        let mut cx = Context::from_waker(&waker);
        assert_eq!(sleep.poll_fired(&mut cx), Poll::Pending);
    });
}
