//! A sample's child roles, each a `ThreadLocalActor` on the sample's shard thread:
//! the **sender** (owns the write half, writes in order, records lateness against each
//! message's intended time), the **reader** (owns the read half, timestamps every message
//! as it is read) and **playback** (the serial viewer/listener clock).
//!
//! Socket halves (and the reader's [`super::host`]) arrive through [`super::slots`];
//! nothing here crosses threads.

use awc::ws::{CloseCode, Message};
use futures_util::StreamExt;
use ractor::thread_local::ThreadLocalActor;
use ractor::{ActorProcessingErr, ActorRef};
use tokio::time::Instant;

use super::host::WeakHost;
use super::sample::SampleMsg;
use super::slots::{self, SlotKey};
use super::transport::{ReadEvent, Reassembler, WsSink, WsStream, to_message};
use crate::workload::playback::{PlayUnit, PlaybackConfig, UnitLog, simulate};
use crate::workload::{FailureKind, MediaUnit, OutMsg};

/// Messages to the sender.
#[derive(Debug)]
pub enum SenderMsg {
    /// Write one message now; lateness is measured against its intended time.
    Send(OutMsg),
    /// Answer a server ping.
    Pong(bytes::Bytes),
    /// Send a normal close frame, flush and stop.
    Close,
}

/// Sender start-up: the parked write half and the parent to report to.
pub struct SenderArgs {
    /// Where the write half is parked.
    pub sink: SlotKey<WsSink>,
    /// The sample supervisor.
    pub parent: ActorRef<SampleMsg>,
}

/// The sender role.
#[derive(Default)]
pub struct SenderActor;

/// The sender's state: created in `pre_start`, dropped when the sender stops (which drops
/// the write half).
pub struct SenderState {
    sink: Option<WsSink>,
    parent: ActorRef<SampleMsg>,
    lateness_s: Vec<f64>,
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
            sink: slots::take::<WsSink>(args.sink),
            parent: args.parent,
            lateness_s: Vec::new(),
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<SenderMsg>,
        msg: SenderMsg,
        st: &mut SenderState,
    ) -> Result<(), ActorProcessingErr> {
        let Some(sink) = st.sink.as_mut() else {
            myself.stop(None);
            return Ok(());
        };
        match msg {
            SenderMsg::Send(out) => {
                let now = Instant::now();
                if let Some(intended) = out.intended {
                    st.lateness_s
                        .push(now.saturating_duration_since(intended).as_secs_f64());
                }
                if let Err(e) = sink.send(to_message(out.msg)).await {
                    let _ = st
                        .parent
                        .cast(SampleMsg::SenderFailed(crate::workload::Failure::new(
                            crate::workload::FailureKind::Transport,
                            format!("send failed: {e}"),
                        )));
                    st.sink = None;
                    myself.stop(None);
                }
            }
            SenderMsg::Pong(b) => {
                let _ = sink.send(Message::Pong(b)).await;
            }
            SenderMsg::Close => {
                let _ = sink
                    .send(Message::Close(Some(CloseCode::Normal.into())))
                    .await;
                let _ = sink.close().await;
                myself.stop(None);
            }
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<SenderMsg>,
        st: &mut SenderState,
    ) -> Result<(), ActorProcessingErr> {
        let _ = st
            .parent
            .cast(SampleMsg::SenderStats(std::mem::take(&mut st.lateness_s)));
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
    /// The sender (answers pings).
    pub sender: ActorRef<SenderMsg>,
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
        st.task = Some(tokio::task::spawn_local(read_loop(
            stream,
            host,
            args.sender,
        )));
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

async fn read_loop(stream: Option<WsStream>, host: WeakHost, sender: ActorRef<SenderMsg>) {
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
                let _ = sender.cast(SenderMsg::Pong(b));
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
