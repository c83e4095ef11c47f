//! The live phase over an in-memory pipe (no actors, no network, paused clock): the
//! session is driven until its outcome is decided and never after, the first decision
//! wins, a wake-up it asks for drives its `on_wake`, its media are played as they
//! arrive, an interrupt decides the outcome, a close it does not decide on ends it, and
//! what it emitted last is written before the close frame.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::engine::control::{self, ControlRx, ControlTx};
use actix_codec::Framed;
use actix_http::ws::{Codec, Frame, Message};
use awc::BoxedSocket;
use futures_util::{SinkExt as _, StreamExt as _};
use tokio::io::DuplexStream;
use tokio::time::Instant;

use super::{Control, Live};
use crate::engine::playback::Playback;
use crate::engine::progress::ProgressEvent;
use crate::engine::reader::Reader;
use crate::engine::sender::Sender;
use crate::engine::transport::{LimitedCodec, split};
use crate::engine::wake::{Wake, on_paused_clock};
use crate::workload::{
    Artifact, ConnectSpec, DynSession, Effects, FailureKind, Inbound, MediaUnit, Outbound,
};

/// Logs every call. On a text: "done" succeeds, "later" asks for a wake-up 50 ms on,
/// "media" emits a 0.1 s unit, "bye" sends "last" and succeeds; woken, it fails as a
/// timeout; closed, it decides nothing. Its headline so far is the last "h<N>" text's N.
struct Probe(Arc<Mutex<Vec<String>>>);

impl DynSession for Probe {
    fn connect(&self, target: &ConnectSpec) -> ConnectSpec {
        target.clone()
    }
    fn on_open(&mut self, _now: Instant, fx: &mut Effects) {
        self.0.lock().unwrap().push("open".into());
        fx.send(Outbound::Text("hello".to_owned().into()), None);
    }
    fn on_inbound(&mut self, msg: Inbound, at: Instant, fx: &mut Effects) {
        let Inbound::Text(t) = msg else { return };
        self.0.lock().unwrap().push(format!("in {t}"));
        match &t[..] {
            "done" => fx.succeed(),
            "later" => fx.wake(at + Duration::from_millis(50)),
            "media" => fx.media.push(MediaUnit {
                at,
                duration_s: 0.1,
                stream: 0,
                index: 0,
            }),
            "bye" => {
                fx.send(Outbound::Text("last".to_owned().into()), None);
                fx.succeed();
            }
            _ => {}
        }
    }
    fn on_wake(&mut self, _now: Instant, fx: &mut Effects) {
        self.0.lock().unwrap().push("wake".into());
        fx.fail_as(FailureKind::Timeout, "woken");
    }
    fn on_closed(&mut self, _at: Instant, _reason: Option<String>, _fx: &mut Effects) {
        self.0.lock().unwrap().push("closed".into());
    }
    fn artifacts(&mut self) -> Vec<Artifact> {
        Vec::new()
    }
    fn headline_so_far_ms(&self) -> Option<f64> {
        let log = self.0.lock().unwrap();
        log.iter()
            .rev()
            .find_map(|l| l.strip_prefix("in h")?.parse().ok())
    }
    fn finish(self: Box<Self>) {}
}

type Server = Framed<DuplexStream, Codec>;

/// A live phase over a pipe, its reader, the server's end, the session's log and where
/// control messages go.
struct Rig {
    live: Live,
    reader: Reader,
    server: Server,
    log: Arc<Mutex<Vec<String>>>,
    control: ControlTx,
    rx: ControlRx,
}

fn rig() -> Rig {
    let (client, server) = tokio::io::duplex(1 << 16);
    let client = Framed::new(
        Box::new(client) as BoxedSocket,
        LimitedCodec::new(Codec::new().client_mode(), 1 << 20),
    );
    let (sink, stream) = split(client);
    let log = Arc::new(Mutex::new(Vec::new()));
    let (control, rx) = control::line();
    let live = Live {
        session: Box::new(Probe(log.clone())),
        outcome: None,
        sender: Sender::new(sink),
        playback: Playback::new(Default::default(), Instant::now()),
        wake: Wake::default(),
        lines: None,
        headline: None,
        control_open: true,
        received_any: false,
    };
    Rig {
        live,
        reader: Reader::new(stream, Instant::now(), Default::default()),
        server: Framed::new(server, Codec::new()),
        log,
        control,
        rx,
    }
}

impl Rig {
    async fn say(&mut self, texts: &[&str]) {
        for t in texts {
            let msg = Message::Text((*t).to_owned().into());
            self.server.send(msg).await.unwrap();
        }
    }

    async fn run(&mut self) {
        self.live.drive(|s, fx| s.on_open(Instant::now(), fx));
        self.live
            .until_decided(&mut self.reader, &mut self.rx)
            .await;
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

#[test]
fn the_session_is_driven_until_its_outcome_and_the_first_decision_wins() {
    on_paused_clock(async {
        let mut r = rig();
        r.say(&["a", "done", "b"]).await;
        r.run().await;
        assert_eq!(r.live.outcome, Some(Ok(())));
        // After the outcome: nothing reaches the session, and a failure does not
        // overwrite it.
        r.live
            .fail_taped(FailureKind::Transport, "late".into(), None);
        r.live
            .drive(|s, fx| s.on_inbound(Inbound::Text("x".into()), Instant::now(), fx));
        assert_eq!(r.live.outcome, Some(Ok(())));
        assert_eq!(r.log(), ["open", "in a", "in done"]);
    });
}

#[test]
fn a_requested_wake_up_drives_on_wake() {
    on_paused_clock(async {
        let mut r = rig();
        r.say(&["later"]).await;
        let t0 = Instant::now();
        r.run().await;
        assert!(t0.elapsed() >= Duration::from_millis(50));
        assert_eq!(r.log(), ["open", "in later", "wake"]);
        let failure = r.live.outcome.clone().unwrap().unwrap_err();
        assert_eq!(failure.kind, FailureKind::Timeout);
    });
}

#[test]
fn media_are_played_as_they_arrive() {
    on_paused_clock(async {
        let mut r = rig();
        r.say(&["media", "media"]).await;
        r.live.drive(|s, fx| s.on_open(Instant::now(), fx));
        for _ in 0..2 {
            let rx = r.reader.next().await;
            r.live.received(rx);
        }
        // Before the sample ends, the listener has heard them.
        assert_eq!(r.live.playback.listener().summary().streams[0].units, 2);
        r.say(&["done"]).await;
        r.live.until_decided(&mut r.reader, &mut r.rx).await;
        let played = r.live.playback.listener().summary();
        assert_eq!(played.streams.len(), 1);
        assert_eq!(played.streams[0].units, 2);
    });
}

#[test]
fn an_interrupt_decides_the_outcome() {
    on_paused_clock(async {
        let mut r = rig();
        r.control
            .send(Control::Interrupt("interrupted: test".into()))
            .unwrap();
        r.run().await;
        let failure = r.live.outcome.clone().unwrap().unwrap_err();
        assert_eq!(
            (failure.kind, failure.message.as_str()),
            (FailureKind::Interrupted, "interrupted: test")
        );
    });
}

#[test]
fn a_close_the_session_does_not_decide_on_ends_it() {
    on_paused_clock(async {
        let mut r = rig();
        r.server.close().await.unwrap();
        r.run().await;
        assert_eq!(r.log(), ["open", "closed"]);
        let failure = r.live.outcome.clone().unwrap().unwrap_err();
        assert_eq!(failure.kind, FailureKind::ClosedEarly);
    });
}

#[test]
fn the_last_message_goes_out_before_the_close_frame() {
    on_paused_clock(async {
        let mut r = rig();
        r.say(&["bye"]).await;
        r.run().await;
        r.live.close(&mut r.rx).await;
        let mut got = Vec::new();
        while let Some(Ok(f)) = r.server.next().await {
            let close = matches!(f, Frame::Close(_));
            got.push(f);
            if close {
                break;
            }
        }
        assert_eq!(got[0], Frame::Text("hello".into()));
        assert_eq!(got[1], Frame::Text("last".into()));
        assert!(matches!(got[2], Frame::Close(Some(_))), "{got:?}");
    });
}

#[test]
fn only_close_code_1013_is_try_again_later() {
    assert!(super::is_try_again_later("1013 try again later"));
    assert!(super::is_try_again_later("1013"));
    assert!(!super::is_try_again_later("1000 bye"));
    assert!(!super::is_try_again_later("10130"));
}

#[test]
fn a_measured_samples_headline_so_far_goes_to_the_progress_line_when_it_changes() {
    on_paused_clock(async {
        let mut r = rig();
        let (tx, rx) = crossbeam_channel::unbounded();
        r.live.headline = Some(super::HeadlineFeed {
            idx: 4,
            tx,
            last: None,
        });
        r.say(&["x", "h10", "x", "h10", "h25", "done"]).await;
        r.run().await;
        let so_far = |ms| ProgressEvent::HeadlineSoFar { idx: 4, ms };
        assert_eq!(
            rx.try_iter().collect::<Vec<_>>(),
            [so_far(10.0), so_far(25.0)]
        );
    });
}
