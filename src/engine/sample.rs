//! The sample supervisor: one per session, on one shard thread, never migrating.
//!
//! It connects (on the shard thread, in `post_start`), spawns its linked children —
//! sender, playback, reader — and holds the [`Host`] of the workload's pure
//! [`Session`](crate::workload::Session): the reader drives it with each message and the
//! wake-up timer with each wake-up, where they happen; the supervisor drives it on open,
//! on an interrupt and on a failed send. Any child failure becomes this sample's recorded
//! outcome; the sample reports to the coordinator only after every child has reported
//! *and* terminated, in whichever order those arrive.

use std::time::Duration;

use ractor::thread_local::{ThreadLocalActor, ThreadLocalActorSpawner};
use ractor::{ActorCell, ActorProcessingErr, ActorRef, SupervisionEvent};
use tokio::time::Instant;

use super::coordinator::CoordMsg;
use super::host::{Host, SharedHost};
use super::outbox::{Outbox, SendPath};
use super::roles::{
    PlaybackActor, PlaybackArgs, PlaybackMsg, ReaderActor, ReaderArgs, SenderActor, SenderArgs,
};
use super::writer::WriterHandle;
use super::{slots, transport};
use crate::workload::playback::PlaybackSummary;
use crate::workload::{ConnectSpec, DynSession, FailureKind, SampleRecord};

/// Messages to a sample supervisor (received messages and wake-ups do not come here:
/// the reader and the timer drive the session in the [`Host`] directly).
#[derive(Debug)]
pub enum SampleMsg {
    /// The sender could not write.
    SenderFailed(crate::workload::Failure),
    /// The sender's lateness samples (sent as it stops).
    SenderStats(Vec<f64>),
    /// The playback summary (sent as playback stops).
    PlaybackStats(PlaybackSummary),
    /// The run was interrupted: end the session now with this outcome message.
    Interrupt(String),
}

/// Everything a sample needs; `Send`, so it can travel to the shard thread.
pub struct SampleArgs {
    /// The workload's state machine for this sample.
    pub session: Box<dyn DynSession>,
    /// Where and how it runs.
    pub meta: SampleMeta,
}

/// A sample's fixed parameters.
pub struct SampleMeta {
    /// Sample index (warm-ups first).
    pub idx: usize,
    /// Warm-up samples publish no artifacts.
    pub warmup: bool,
    /// Where to connect.
    pub connect: ConnectSpec,
    /// Handshake bound.
    pub connect_timeout: Duration,
    /// The run's client TLS (for `wss://`).
    pub tls: Option<super::tls::ClientTls>,
    /// Largest inbound frame or reassembled message.
    pub max_frame_bytes: usize,
    /// What the handshake offers, and the run's tally of what was agreed.
    pub wire: super::transport::Wire,
    /// How the playback role buffers before it starts each stream.
    pub playback: crate::workload::playback::PlaybackConfig,
    /// The coordinator, which receives the [`SampleRecord`].
    pub coordinator: ActorRef<CoordMsg>,
    /// The run's time origin.
    pub run_start: Instant,
    /// Intended release time, seconds from `run_start`.
    pub scheduled_s: f64,
    /// Seconds the sample waited for a concurrency slot.
    pub queue_wait_s: f64,
    /// This sample's shard; children are spawned on it too.
    pub spawner: ThreadLocalActorSpawner,
    /// Artifact writer, when the run publishes artifacts.
    pub writer: Option<WriterHandle>,
    /// Live log lines (`--print-chunks`), when enabled.
    pub lines: Option<crossbeam_channel::Sender<String>>,
}

/// The sample supervisor actor.
#[derive(Default)]
pub struct SampleActor;

/// Supervisor state: the session host (children are set in it once connected, the
/// outcome once decided) and what the report needs.
pub struct SampleState {
    args: SampleMeta,
    host: SharedHost,
    started: Instant,
    opened: Option<Instant>,
    live_children: usize,
    sender_stats: Option<Vec<f64>>,
    playback_stats: Option<PlaybackSummary>,
    reported: bool,
}

impl ThreadLocalActor for SampleActor {
    type Msg = SampleMsg;
    type State = SampleState;
    type Arguments = SampleArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<SampleMsg>,
        mut args: SampleArgs,
    ) -> Result<SampleState, ActorProcessingErr> {
        // The host carries out the session's effects, live log lines included.
        let host = Host::new(args.session, args.meta.lines.take());
        Ok(SampleState {
            args: args.meta,
            host,
            started: Instant::now(),
            opened: None,
            live_children: 0,
            sender_stats: None,
            playback_stats: None,
            reported: false,
        })
    }

    async fn post_start(
        &self,
        myself: ActorRef<SampleMsg>,
        st: &mut SampleState,
    ) -> Result<(), ActorProcessingErr> {
        st.started = Instant::now();
        let spec = match st.host.borrow_mut().session_mut() {
            Some(s) => s.connect(&st.args.connect),
            None => st.args.connect.clone(),
        };
        match transport::connect(
            &spec,
            st.args.connect_timeout,
            st.args.tls.as_ref(),
            st.args.max_frame_bytes,
            &st.args.wire,
        )
        .await
        {
            Err(e) => {
                st.host.borrow_mut().outcome = Some(Err(e.failure()));
                st.sender_stats = Some(Vec::new());
                st.playback_stats = Some(PlaybackSummary::default());
                maybe_report(&myself, st);
            }
            Ok((sink, stream)) => spawn_children(&myself, st, sink, stream).await?,
        }
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<SampleMsg>,
        msg: SampleMsg,
        st: &mut SampleState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            SampleMsg::SenderFailed(e) => st.host.borrow_mut().fail(e.kind, e.message),
            SampleMsg::Interrupt(e) => st.host.borrow_mut().fail(FailureKind::Interrupted, e),
            SampleMsg::SenderStats(v) => st.sender_stats = Some(v),
            SampleMsg::PlaybackStats(p) => st.playback_stats = Some(p),
        }
        maybe_report(&myself, st);
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<SampleMsg>,
        evt: SupervisionEvent,
        st: &mut SampleState,
    ) -> Result<(), ActorProcessingErr> {
        match evt {
            SupervisionEvent::ActorTerminated(cell, ..) => child_gone(st, &cell, None),
            SupervisionEvent::ActorFailed(cell, err) => {
                child_gone(st, &cell, Some(err.to_string()))
            }
            _ => {}
        }
        let mut host = st.host.borrow_mut();
        if host.outcome.is_some() {
            host.begin_shutdown();
        }
        drop(host);
        maybe_report(&myself, st);
        Ok(())
    }
}

/// Spawns sender and playback, opens the session (its first messages go to the sender),
/// then spawns the reader: the session sees no message before `on_open`.
async fn spawn_children(
    myself: &ActorRef<SampleMsg>,
    st: &mut SampleState,
    sink: transport::WsSink,
    stream: transport::WsStream,
) -> Result<(), ActorProcessingErr> {
    let sp = st.args.spawner.clone();
    let cell = myself.get_cell();
    let outbox = Outbox::new(sink);
    let (sender, _) = SenderActor::spawn_linked(
        None,
        SenderArgs {
            outbox: slots::park(std::rc::Rc::clone(&outbox)),
            parent: myself.clone(),
        },
        cell.clone(),
        sp.clone(),
    )
    .await?;
    let (playback, _) = PlaybackActor::spawn_linked(
        None,
        PlaybackArgs {
            config: st.args.playback,
            parent: myself.clone(),
        },
        cell.clone(),
        sp.clone(),
    )
    .await?;
    st.live_children = 2;
    let now = Instant::now();
    st.opened = Some(now);
    let _ = playback.cast(PlaybackMsg::Opened(now));
    {
        let mut host = st.host.borrow_mut();
        host.sender = Some(SendPath { outbox, sender });
        host.playback = Some(playback);
        host.drive(|s, fx| s.on_open(now, fx));
    }
    let path = st.host.borrow().sender.clone();
    let (reader, _) = ReaderActor::spawn_linked(
        None,
        ReaderArgs {
            stream: slots::park(stream),
            host: slots::park(std::rc::Rc::downgrade(&st.host)),
            sender: path.map(slots::park),
        },
        cell,
        sp,
    )
    .await?;
    st.live_children = 3;
    let mut host = st.host.borrow_mut();
    if host.outcome.is_some() {
        // The session ended on open: the reader stops with the others.
        reader.stop(None);
    } else {
        host.reader = Some(reader.get_cell());
    }
    Ok(())
}

fn child_gone(st: &mut SampleState, cell: &ActorCell, failure: Option<String>) {
    st.live_children = st.live_children.saturating_sub(1);
    let mut host = st.host.borrow_mut();
    if let Some(err) = failure {
        // A crashed child sends no stats; do not wait for them.
        st.sender_stats.get_or_insert_with(Vec::new);
        st.playback_stats
            .get_or_insert_with(PlaybackSummary::default);
        if host.outcome.is_none() {
            host.outcome = Some(Err(crate::workload::Failure::new(
                crate::workload::FailureKind::Crashed,
                format!("sample actor {} failed: {err}", cell.get_id()),
            )));
        }
    }
}

/// Report to the coordinator once the outcome is decided, every child has terminated and
/// both stats messages arrived; then stop.
fn maybe_report(myself: &ActorRef<SampleMsg>, st: &mut SampleState) {
    let outcome = st.host.borrow().outcome.clone();
    if st.reported
        || outcome.is_none()
        || st.live_children > 0
        || st.sender_stats.is_none()
        || st.playback_stats.is_none()
    {
        return;
    }
    st.reported = true;
    let ended = Instant::now();
    let mut session = st.host.borrow_mut().take_session();
    let mut artifacts = Vec::new();
    if let (Some(_), Some(s), false) = (&st.args.writer, session.as_mut(), st.args.warmup) {
        artifacts = s.artifacts();
    }
    let since = |t: Instant| t.saturating_duration_since(st.args.run_start).as_secs_f64();
    let record = SampleRecord {
        idx: st.args.idx,
        warmup: st.args.warmup,
        session: None,
        scheduled_s: st.args.scheduled_s,
        queue_wait_s: st.args.queue_wait_s,
        started_s: since(st.started),
        opened_s: st.opened.map(since),
        ended_s: since(ended),
        outcome: outcome.unwrap_or(Ok(())),
        send_lateness_s: st.sender_stats.take().unwrap_or_default(),
        playback: st.playback_stats.take(),
        output: session.map(|s| s.finish()),
    };
    let (writer, coordinator, me) = (
        st.args.writer.clone(),
        st.args.coordinator.clone(),
        myself.clone(),
    );
    // Backpressure: the slot stays taken until the writer queue has room for every file.
    tokio::task::spawn_local(async move {
        if let Some(w) = writer {
            for a in artifacts {
                w.submit(a).await;
            }
        }
        let _ = coordinator.cast(CoordMsg::Ended(Box::new(record)));
        me.stop(None);
    });
}
