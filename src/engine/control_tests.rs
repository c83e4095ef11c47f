//! The supervisor's line: order, wake-ups, the end of either side.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use super::{Control, line};

/// A waker that counts its wake-ups.
#[derive(Default)]
struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A counting waker and the count it moves.
fn counting() -> (Arc<Count>, Waker) {
    let count = Arc::new(Count::default());
    (count.clone(), Waker::from(count))
}

fn msg(p: Poll<Option<Control>>) -> Option<Option<String>> {
    match p {
        Poll::Ready(Some(Control::Interrupt(m))) => Some(Some(m)),
        Poll::Ready(None) => Some(None),
        Poll::Pending => None,
    }
}

#[test]
fn messages_arrive_in_order_and_a_pending_receiver_is_woken_once_per_send() {
    let (count, waker) = counting();
    let mut cx = Context::from_waker(&waker);
    let (tx, mut rx) = line();
    assert_eq!(msg(rx.poll_recv(&mut cx)), None);
    tx.send(Control::Interrupt("a".into())).unwrap();
    tx.send(Control::Interrupt("b".into())).unwrap();
    assert_eq!(count.0.load(Ordering::SeqCst), 2);
    assert_eq!(msg(rx.poll_recv(&mut cx)), Some(Some("a".into())));
    assert_eq!(msg(rx.poll_recv(&mut cx)), Some(Some("b".into())));
    assert_eq!(msg(rx.poll_recv(&mut cx)), None);
}

#[test]
fn a_new_waker_replaces_the_old_one() {
    let ((first, w1), (second, w2)) = (counting(), counting());
    let (tx, mut rx) = line();
    for waker in [&w1, &w2] {
        assert_eq!(msg(rx.poll_recv(&mut Context::from_waker(waker))), None);
    }
    tx.send(Control::Interrupt("x".into())).unwrap();
    let woken = |c: &Arc<Count>| c.0.load(Ordering::SeqCst);
    assert_eq!((woken(&first), woken(&second)), (0, 1));
}

#[test]
fn the_supervisor_gone_ends_the_line_after_what_it_sent() {
    let (count, waker) = counting();
    let mut cx = Context::from_waker(&waker);
    let (tx, mut rx) = line();
    assert_eq!(msg(rx.poll_recv(&mut cx)), None);
    tx.send(Control::Interrupt("last".into())).unwrap();
    drop(tx);
    assert_eq!(count.0.load(Ordering::SeqCst), 2);
    assert_eq!(msg(rx.poll_recv(&mut cx)), Some(Some("last".into())));
    assert_eq!(msg(rx.poll_recv(&mut cx)), Some(None));
}

#[test]
fn a_send_after_the_live_phase_ended_is_handed_back() {
    let (tx, rx) = line();
    drop(rx);
    let back = tx.send(Control::Interrupt("late".into()));
    assert!(matches!(back, Err(Control::Interrupt(m)) if m == "late"));
}

#[test]
fn a_send_to_one_line_is_seen_by_its_receiver_not_lost_to_a_neighbours_read() {
    let (_, waker) = counting();
    let mut cx = Context::from_waker(&waker);
    let (tx_a, mut rx_a) = line();
    let (_tx_b, mut rx_b) = line();
    assert_eq!(msg(rx_a.poll_recv(&mut cx)), None);
    assert_eq!(msg(rx_b.poll_recv(&mut cx)), None);
    tx_a.send(Control::Interrupt("a".into())).unwrap();
    // The neighbour reads first and finds nothing; the send is still there for `a`.
    assert_eq!(msg(rx_b.poll_recv(&mut cx)), None);
    assert_eq!(msg(rx_a.poll_recv(&mut cx)), Some(Some("a".into())));
    assert_eq!(msg(rx_a.poll_recv(&mut cx)), None);
    assert_eq!(msg(rx_b.poll_recv(&mut cx)), None);
}
