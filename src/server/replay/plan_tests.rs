//! The replay core without sockets: anchors and delays from a recording, replies at
//! `live anchor + delay / speed` in order, the tolerance spent on skipped and unexpected
//! messages, divergence naming what was expected, and the close replayed.

use super::*;

fn text(ty: &str) -> Shape {
    Shape {
        binary: false,
        ty: Some(ty.into()),
    }
}

fn client(t_s: f64, ty: &str) -> Recorded {
    Recorded::Client {
        t_s,
        shape: text(ty),
    }
}

fn server(t_s: f64, body: &'static str) -> Recorded {
    Recorded::Server {
        t_s,
        reply: Reply::Text(ByteString::from_static(body)),
    }
}

/// open at 1.0; `created` 10 ms after it; the client's `update` at 1.1 answered 20 ms
/// later; two `append`s and a `commit` at 1.3, answered by `delta` at +150 ms and `done`
/// at +250 ms; then the server closes with 1000 "bye".
fn script() -> Arc<Script> {
    Arc::new(Script::new(
        7,
        false,
        vec![
            Recorded::Open { t_s: 1.0 },
            server(1.01, "created"),
            client(1.1, "update"),
            server(1.12, "updated"),
            client(1.2, "append"),
            client(1.25, "append"),
            client(1.3, "commit"),
            server(1.45, "delta"),
            server(1.55, "done"),
            Recorded::Server {
                t_s: 1.6,
                reply: Reply::Close {
                    code: 1000,
                    reason: Some("bye".into()),
                },
            },
        ],
    ))
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn body(r: &Reply) -> &str {
    match r {
        Reply::Text(t) => t,
        other => panic!("{other:?}"),
    }
}

#[test]
fn replies_follow_their_live_anchor_by_the_recorded_delay_in_order() {
    let s = script();
    assert_eq!((s.client_messages(), s.server_events()), (4, 5));
    let t0 = Instant::now();
    let mut p = ConnPlan::new(s, 1.0, 0, t0);
    // Anchored to the open.
    assert_eq!(p.next_due(), Some(t0 + ms(10)));
    assert!(p.pop_due(t0 + ms(9)).is_empty());
    assert_eq!(body(&p.pop_due(t0 + ms(10))[0]), "created");
    // `updated` waits for the live `update`, however late it comes.
    assert_eq!(p.next_due(), None);
    assert!(p.pop_due(t0 + ms(5000)).is_empty());
    let u = t0 + ms(500);
    p.on_client(&text("update"), u).unwrap();
    assert_eq!(p.next_due(), Some(u + ms(20)));
    assert_eq!(body(&p.pop_due(u + ms(20))[0]), "updated");
    let c = u + ms(300);
    p.on_client(&text("append"), c).unwrap();
    p.on_client(&text("append"), c).unwrap();
    assert_eq!(p.next_due(), None, "the delta answers the commit");
    p.on_client(&text("commit"), c).unwrap();
    assert_eq!(p.next_due(), Some(c + ms(150)));
    // Everything due at once comes in order, the close last, and ends the replay.
    let due = p.pop_due(c + ms(1000));
    assert_eq!(due.len(), 3);
    assert_eq!((body(&due[0]), body(&due[1])), ("delta", "done"));
    assert_eq!(
        due[2],
        Reply::Close {
            code: 1000,
            reason: Some("bye".into())
        }
    );
    assert!(p.finished());
    assert_eq!(p.next_due(), None);
}

#[test]
fn speed_scales_the_recorded_delays() {
    let t0 = Instant::now();
    let mut p = ConnPlan::new(script(), 2.0, 0, t0);
    assert_eq!(p.next_due(), Some(t0 + ms(5)));
    p.pop_due(t0 + ms(5));
    p.on_client(&text("update"), t0).unwrap();
    assert_eq!(p.next_due(), Some(t0 + ms(10)));
}

#[test]
fn a_departure_without_tolerance_diverges_naming_the_recorded_message() {
    let t0 = Instant::now();
    let mut p = ConnPlan::new(script(), 1.0, 0, t0);
    p.on_client(&text("update"), t0).unwrap();
    let binary = Shape {
        binary: true,
        ty: None,
    };
    let err = p.on_client(&binary, t0).unwrap_err();
    assert!(
        err.message.contains(
            "expected text \"append\" (recorded client message 2 of session 7), got a binary \
message (client message 2 of this connection)"
        ),
        "{}",
        err.message
    );
}

#[test]
fn messages_past_the_recording_diverge() {
    let t0 = Instant::now();
    let mut p = ConnPlan::new(script(), 1.0, 0, t0);
    for ty in ["update", "append", "append", "commit"] {
        p.on_client(&text(ty), t0).unwrap();
    }
    let err = p.on_client(&text("commit"), t0).unwrap_err();
    assert!(
        err.message.contains(
            "expected no more client messages (session 7 recorded 4), got text \"commit\""
        ),
        "{}",
        err.message
    );
}

#[test]
fn the_tolerance_covers_skipped_and_unexpected_messages_then_runs_out() {
    let t0 = Instant::now();
    let mut p = ConnPlan::new(script(), 1.0, 2, t0);
    p.on_client(&text("update"), t0).unwrap();
    assert_eq!(p.pop_due(t0 + ms(20)).len(), 2, "created, updated");
    // One append missing: the commit skips it (1 spent); what the skipped append
    // anchored (nothing here) would count from now.
    let c = t0 + ms(100);
    p.on_client(&text("append"), c).unwrap();
    p.on_client(&text("commit"), c).unwrap();
    assert_eq!(p.next_due(), Some(c + ms(150)));
    // One unexpected message (2 spent), then the next departure diverges.
    p.on_client(&text("ping"), c).unwrap();
    assert!(p.on_client(&text("ping"), c).is_err());
}

#[test]
fn a_skip_longer_than_the_tolerance_left_is_not_taken() {
    let t0 = Instant::now();
    let mut p = ConnPlan::new(script(), 1.0, 1, t0);
    p.on_client(&text("update"), t0).unwrap();
    assert_eq!(p.pop_due(t0 + ms(20)).len(), 2, "created, updated");
    // `commit` is 2 ahead: beyond a budget of 1, so it is one unexpected message.
    p.on_client(&text("commit"), t0).unwrap();
    assert_eq!(p.next_due(), None, "nothing was anchored by it");
    assert!(p.on_client(&text("commit"), t0).is_err());
}

#[test]
fn what_follows_the_clients_close_is_not_replayed_and_a_lost_stream_is_a_drop() {
    let s = Script::new(
        0,
        false,
        vec![
            Recorded::Open { t_s: 0.0 },
            client(0.1, "bye"),
            Recorded::ClientClose { t_s: 0.2 },
            Recorded::Server {
                t_s: 0.21,
                reply: Reply::Close {
                    code: 1000,
                    reason: None,
                },
            },
        ],
    );
    assert_eq!(s.server_events(), 0);
    let s = Script::new(
        0,
        false,
        vec![
            Recorded::Open { t_s: 0.0 },
            Recorded::Server {
                t_s: 0.5,
                reply: Reply::Drop,
            },
            server(0.6, "never"),
        ],
    );
    let t0 = Instant::now();
    let mut p = ConnPlan::new(Arc::new(s), 1.0, 0, t0);
    assert_eq!(p.pop_due(t0 + ms(1000)), vec![Reply::Drop]);
    assert!(p.finished());
    assert!(p.pop_due(t0 + ms(2000)).is_empty());
}

#[test]
fn the_live_round_trip_comes_off_every_delay_down_to_zero() {
    let t0 = Instant::now();
    let mut p = ConnPlan::new(script(), 1.0, 0, t0);
    p.round_trip(ms(4));
    p.round_trip(ms(2));
    p.round_trip(ms(3));
    // created: 10 ms after the open, of which the smallest round trip (2 ms) is the
    // network's.
    assert_eq!(p.next_due(), Some(t0 + ms(8)));
    p.round_trip(ms(1));
    assert_eq!(p.next_due(), Some(t0 + ms(9)));
    p.round_trip(Duration::from_micros(100));
    p.pop_due(t0 + ms(10));
    p.on_client(&text("update"), t0).unwrap();
    p.round_trip(Duration::ZERO);
    let rtt = Duration::from_micros(100);
    assert_eq!(
        p.next_due(),
        Some(t0 + ms(20) - rtt),
        "a zero measures nothing"
    );
    let mut p = ConnPlan::new(script(), 1.0, 0, t0);
    p.round_trip(ms(50));
    assert_eq!(p.next_due(), Some(t0), "never before its anchor");
}
