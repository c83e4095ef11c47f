//! A sample's child roles, each a `ThreadLocalActor` on the sample's shard thread:
//! the **sender** (finishes what the host's [`super::outbox`] could not send at once —
//! queued messages, blocked writes, pongs, the close — in order, timing each message's
//! lateness when it gets to it; reports a failed write), the **reader** (owns the read
//! half, timestamps every message as it is read) and **playback** (the serial
//! viewer/listener clock).
//!
//! Socket halves (and the reader's [`super::host`]) arrive through [`super::slots`];
//! nothing here crosses threads.

use std::rc::Rc;

use awc::ws::{CloseCode, Message};
use futures_util::StreamExt;
use ractor::thread_local::ThreadLocalActor;
use ractor::{ActorProcessingErr, ActorRef};
use tokio::time::Instant;

use super::host::WeakHost;
use super::outbox::{Outbox, SendPath};
use super::sample::SampleMsg;
use super::slots::{self, SlotKey};
use super::transport::{ReadEvent, Reassembler, WsStream};
use crate::workload::playback::{PlayUnit, PlaybackConfig, UnitLog, simulate};
use crate::workload::{FailureKind, MediaUnit, OutMsg};

/// Messages to the sender: what the host could not send at once (see [`super::outbox`]).
#[derive(Debug)]
pub enum SenderMsg {
    /// Write one message behind those still waiting; lateness is measured when the
    /// sender gets to it.
    Send(OutMsg),
    /// Finish a write the socket did not take at once.
    Flush,
    /// A write the host attempted failed: report it and stop.
    Failed(String),
    /// Answer a server ping.
    Pong(bytes::Bytes),
    /// Send a normal close frame, flush and stop.
    Close,
}

/// Sender start-up: the parked outbox and the parent to report to.
pub struct SenderArgs {
    /// Where the outbox (the write half) is parked.
    pub outbox: SlotKey<Rc<Outbox>>,
    /// The sample supervisor.
    pub parent: ActorRef<SampleMsg>,
}

/// The sender role.
#[derive(Default)]
pub struct SenderActor;

/// The sender's state: created in `pre_start`; the write half is dropped with the
/// outbox's last holder (the sender and the host).
pub struct SenderState {
    outbox: Option<Rc<Outbox>>,
    parent: ActorRef<SampleMsg>,
}

impl ThreadLocalActor for SenderActor {
    type Msg = SenderMsg;
    type State = SenderState;
    type Arguments = SenderArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<SenderMsg>,
        args: SenderArgs,
    ) -> Result<SenderState, ActorProcessingErr> {
        Ok(SenderState {
            outbox: slots::take::<Rc<Outbox>>(args.outbox),
            parent: args.parent,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<SenderMsg>,
        msg: SenderMsg,
        st: &mut SenderState,
    ) -> Result<(), ActorProcessingErr> {
        let Some(outbox) = st.outbox.clone().filter(|o| !o.is_broken()) else {
            myself.stop(None);
            return Ok(());
        };
        let failed = match msg {
            SenderMsg::Send(out) => outbox.send_queued(out).await.err(),
            SenderMsg::Flush => outbox.flush().await.err(),
            SenderMsg::Failed(e) => Some(e),
            SenderMsg::Pong(b) => {
                let _ = outbox.send_control(Message::Pong(b)).await;
                None
            }
            SenderMsg::Close => {
                let _ = outbox
                    .send_control(Message::Close(Some(CloseCode::Normal.into())))
                    .await;
                let _ = outbox.close().await;
                myself.stop(None);
                None
            }
        };
        outbox.done_one();
        if let Some(e) = failed {
            outbox.mark_broken();
            let failure = crate::workload::Failure::new(FailureKind::Transport, e);
            let _ = st.parent.cast(SampleMsg::SenderFailed(failure));
            myself.stop(None);
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<SenderMsg>,
        st: &mut SenderState,
    ) -> Result<(), ActorProcessingErr> {
        let lateness = st
            .outbox
            .take()
            .map(|o| o.take_lateness())
            .unwrap_or_default();
        let _ = st.parent.cast(SampleMsg::SenderStats(lateness));
        Ok(())
    }
}

/// Reader start-up.
pub struct ReaderArgs {
    /// Where the read half is parked.
    pub stream: SlotKey<WsStream>,
    /// Where the sample's session host is parked: every message drives the session
    /// there, at its receipt time.
    pub host: SlotKey<WeakHost>,
    /// Where pongs go (`None` when the session ended on open).
    pub sender: Option<SlotKey<SendPath>>,
}

/// The reader role: a local task reads the socket and drives the session with each
/// message; the actor owns (and aborts) it.
#[derive(Default)]
pub struct ReaderActor;

/// The reader's state: the read task, aborted when the reader stops.
pub struct ReaderState {
    task: Option<tokio::task::JoinHandle<()>>,
    args: Option<ReaderArgs>,
}

impl ThreadLocalActor for ReaderActor {
    type Msg = ();
    type State = ReaderState;
    type Arguments = ReaderArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<()>,
        args: ReaderArgs,
    ) -> Result<ReaderState, ActorProcessingErr> {
        Ok(ReaderState {
            task: None,
            args: Some(args),
        })
    }

    async fn post_start(
        &self,
        _myself: ActorRef<()>,
        st: &mut ReaderState,
    ) -> Result<(), ActorProcessingErr> {
        let Some(args) = st.args.take() else {
            return Ok(());
        };
        let stream = slots::take::<WsStream>(args.stream);
        let host = slots::take::<WeakHost>(args.host).unwrap_or_default();
        let sender = args.sender.and_then(slots::take::<SendPath>);
        st.task = Some(tokio::task::spawn_local(read_loop(stream, host, sender)));
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<()>,
        st: &mut ReaderState,
    ) -> Result<(), ActorProcessingErr> {
        if let Some(t) = st.task.take() {
            t.abort();
        }
        Ok(())
    }
}

async fn read_loop(stream: Option<WsStream>, host: WeakHost, sender: Option<SendPath>) {
    let Some(mut stream) = stream else {
        if let Some(h) = host.upgrade() {
            h.borrow_mut()
                .fail(FailureKind::Transport, "socket read half missing".into());
        }
        return;
    };
    let mut joiner = Reassembler::default();
    loop {
        let next = stream.next().await;
        // Receipt time: taken the moment the frame is handed to us.
        let at = Instant::now();
        let event = match next {
            // End of stream without a close frame: closed, with no reason.
            None => Ok(ReadEvent::Close(None)),
            Some(frame) => frame
                .map_err(|e| e.to_string())
                .and_then(|frame| joiner.push(frame).map_err(|e| e.to_string())),
        };
        // The sample is gone: nothing left to drive.
        let Some(h) = host.upgrade() else { return };
        // Released before the next `.await`: the timer and the supervisor drive it too.
        let mut h = h.borrow_mut();
        match event {
            Ok(ReadEvent::Data(msg)) => h.drive(|s, fx| s.on_inbound(msg, at, fx)),
            Ok(ReadEvent::Ping(b)) => {
                if let Some(path) = &sender {
                    path.hand_over(SenderMsg::Pong(b));
                }
            }
            Ok(ReadEvent::Nothing) => {}
            Ok(ReadEvent::Close(reason)) => {
                h.drive(|s, fx| s.on_closed(at, reason, fx));
                return;
            }
            Err(e) => {
                h.fail(FailureKind::Transport, e);
                return;
            }
        }
    }
}

/// Messages to the playback role.
#[derive(Debug)]
pub enum PlaybackMsg {
    /// The socket opened at this instant: the origin of the sample's clock.
    Opened(Instant),
    /// Media arrived (units in receipt order; each carries its own receipt time).
    Media(Vec<MediaUnit>),
    /// Simulate, report the summary to the parent and stop.
    Finish,
}

/// The playback role: collects the media the session emits and, when the sample ends,
/// runs the one listener/viewer simulation ([`simulate`]) over it.
#[derive(Default)]
pub struct PlaybackActor;

/// Playback start-up.
pub struct PlaybackArgs {
    /// How the simulated player buffers before it starts each stream.
    pub config: PlaybackConfig,
    /// The sample supervisor.
    pub parent: ActorRef<SampleMsg>,
}

/// The playback role's state: its settings, the clock origin and the units so far
/// (held compactly: a long session receives one per media delta).
pub struct PlaybackState {
    args: PlaybackArgs,
    origin: Option<Instant>,
    units: UnitLog,
}

impl ThreadLocalActor for PlaybackActor {
    type Msg = PlaybackMsg;
    type State = PlaybackState;
    type Arguments = PlaybackArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<PlaybackMsg>,
        args: PlaybackArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(PlaybackState {
            args,
            origin: None,
            units: UnitLog::default(),
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<PlaybackMsg>,
        msg: PlaybackMsg,
        st: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            PlaybackMsg::Opened(at) => st.origin = Some(at),
            PlaybackMsg::Media(units) => {
                for u in units {
                    let origin = *st.origin.get_or_insert(u.at);
                    st.units.push(PlayUnit {
                        stream: u.stream,
                        index: u.index,
                        arrival_s: u.at.saturating_duration_since(origin).as_secs_f64(),
                        duration_s: u.duration_s,
                    });
                }
            }
            PlaybackMsg::Finish => {
                let summary = simulate(&st.units.units(), st.args.config);
                let _ = st.args.parent.cast(SampleMsg::PlaybackStats(summary));
                myself.stop(None);
            }
        }
        Ok(())
    }
}
