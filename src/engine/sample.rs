//! The sample supervisor: one per session, on one shard thread, never migrating.
//!
//! It connects (on the shard thread, in `post_start`), spawns its linked children —
//! sender, reader, playback — hosts the workload's pure [`Session`](crate::workload::Session) and carries out the
//! effects it returns. Any child failure becomes this sample's recorded outcome; the
//! sample reports to the coordinator only after every child has reported *and*
//! terminated, in whichever order those arrive.

use std::time::Duration;

use ractor::thread_local::{ThreadLocalActor, ThreadLocalActorSpawner};
use ractor::{ActorCell, ActorProcessingErr, ActorRef, SupervisionEvent};
use tokio::time::Instant;

use super::coordinator::CoordMsg;
use super::roles::{
    PlaybackActor, PlaybackArgs, PlaybackMsg, ReaderActor, ReaderArgs, SenderActor, SenderArgs,
    SenderMsg,
};
use super::wake::WakeTimer;
use super::writer::WriterHandle;
use super::{slots, transport};
use crate::workload::playback::PlaybackSummary;
use crate::workload::{
    ConnectSpec, DynSession, Effects, FailureKind, Inbound, MediaUnit, SampleRecord,
};

/// Media units are handed to the playback role in batches of this many (and the rest
/// when the sample ends): playback only simulates at the end, and a message per unit
/// was a mailbox hop per received chunk.
const MEDIA_BATCH: usize = 32;

/// Messages to a sample supervisor.
#[derive(Debug)]
pub enum SampleMsg {
    /// One inbound message with its receipt time (from the reader).
    Inbound(Inbound, Instant),
    /// The read side ended: a close frame (`reason`), end of stream, or an error.
    ReadEnded {
        /// When the reader noticed.
        at: Instant,
        /// The peer's close reason, if it sent one.
        reason: Option<String>,
        /// A read error, if that is why it ended.
        error: Option<String>,
    },
    /// A wake-up the session asked for; stale generations are ignored.
    Wake(u64),
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

/// Supervisor state. Children are set once connected; `outcome` once decided.
pub struct SampleState {
    args: SampleMeta,
    session: Option<Box<dyn DynSession>>,
    started: Instant,
    opened: Option<Instant>,
    sender: Option<ActorRef<SenderMsg>>,
    playback: Option<ActorRef<PlaybackMsg>>,
    reader: Option<ActorCell>,
    live_children: usize,
    sender_stats: Option<Vec<f64>>,
    playback_stats: Option<PlaybackSummary>,
    wake: Option<WakeTimer>,
    media: Vec<MediaUnit>,
    outcome: Option<Result<(), crate::workload::Failure>>,
    reported: bool,
}

impl ThreadLocalActor for SampleActor {
    type Msg = SampleMsg;
    type State = SampleState;
    type Arguments = SampleArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<SampleMsg>,
        args: SampleArgs,
    ) -> Result<SampleState, ActorProcessingErr> {
        Ok(SampleState {
            args: args.meta,
            session: Some(args.session),
            started: Instant::now(),
            opened: None,
            sender: None,
            playback: None,
            reader: None,
            live_children: 0,
            sender_stats: None,
            playback_stats: None,
            wake: None,
            media: Vec::new(),
            outcome: None,
            reported: false,
        })
    }

    async fn post_start(
        &self,
        myself: ActorRef<SampleMsg>,
        st: &mut SampleState,
    ) -> Result<(), ActorProcessingErr> {
        st.started = Instant::now();
        let spec = match st.session.as_ref() {
            Some(s) => s.connect(&st.args.connect),
            None => st.args.connect.clone(),
        };
        match transport::connect(
            &spec,
            st.args.connect_timeout,
            st.args.tls.as_ref(),
            st.args.max_frame_bytes,
        )
        .await
        {
            Err(e) => {
                st.outcome = Some(Err(e.failure()));
                st.sender_stats = Some(Vec::new());
                st.playback_stats = Some(PlaybackSummary::default());
                maybe_report(&myself, st);
            }
            Ok((sink, stream)) => {
                spawn_children(&myself, st, sink, stream).await?;
                let mut fx = Effects::default();
                let now = Instant::now();
                st.opened = Some(now);
                if let Some(p) = &st.playback {
                    let _ = p.cast(PlaybackMsg::Opened(now));
                }
                if let Some(s) = st.session.as_mut() {
                    s.on_open(now, &mut fx);
                }
                apply(&myself, st, fx);
            }
        }
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<SampleMsg>,
        msg: SampleMsg,
        st: &mut SampleState,
    ) -> Result<(), ActorProcessingErr> {
        let mut fx = Effects::default();
        let live = st.outcome.is_none();
        match msg {
            SampleMsg::Inbound(m, at) if live => with_session(st, |s| s.on_inbound(m, at, &mut fx)),
            SampleMsg::Wake(g) if live && st.wake.as_ref().is_some_and(|w| w.is_current(g)) => {
                with_session(st, |s| s.on_wake(Instant::now(), &mut fx));
            }
            SampleMsg::ReadEnded { at, reason, error } if live => match error {
                Some(e) => fx.fail_as(crate::workload::FailureKind::Transport, e),
                None => with_session(st, |s| s.on_closed(at, reason, &mut fx)),
            },
            SampleMsg::SenderFailed(e) if live => fx.fail_as(e.kind, e.message),
            SampleMsg::Interrupt(e) if live => fx.fail_as(FailureKind::Interrupted, e),
            SampleMsg::SenderStats(v) => st.sender_stats = Some(v),
            SampleMsg::PlaybackStats(p) => st.playback_stats = Some(p),
            _ => {}
        }
        apply(&myself, st, fx);
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
        if st.outcome.is_some() {
            begin_shutdown(st);
        }
        maybe_report(&myself, st);
        Ok(())
    }
}

fn with_session(st: &mut SampleState, f: impl FnOnce(&mut dyn DynSession)) {
    if let Some(s) = st.session.as_deref_mut() {
        f(s);
    }
}

async fn spawn_children(
    myself: &ActorRef<SampleMsg>,
    st: &mut SampleState,
    sink: transport::WsSink,
    stream: transport::WsStream,
) -> Result<(), ActorProcessingErr> {
    let sp = st.args.spawner.clone();
    let cell = myself.get_cell();
    let (sender, _) = SenderActor::spawn_linked(
        None,
        SenderArgs {
            sink: slots::park(sink),
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
    let (reader, _) = ReaderActor::spawn_linked(
        None,
        ReaderArgs {
            stream: slots::park(stream),
            parent: myself.clone(),
            sender: sender.clone(),
        },
        cell,
        sp,
    )
    .await?;
    st.sender = Some(sender);
    st.playback = Some(playback);
    st.reader = Some(reader.get_cell());
    st.live_children = 3;
    Ok(())
}

/// Carry out a session's effects.
fn apply(myself: &ActorRef<SampleMsg>, st: &mut SampleState, fx: Effects) {
    if let Some(tx) = &st.args.lines {
        for l in fx.lines {
            let _ = tx.send(l);
        }
    }
    if let Some(sender) = &st.sender {
        for out in fx.outbound {
            let _ = sender.cast(SenderMsg::Send(out));
        }
    }
    if st.playback.is_some() {
        st.media.extend(fx.media);
        if st.media.len() >= MEDIA_BATCH {
            flush_media(st);
        }
    }
    if let Some(at) = fx.wake_at {
        let me = myself.clone();
        st.wake
            .get_or_insert_with(|| WakeTimer::start(move |g| me.cast(SampleMsg::Wake(g)).is_ok()))
            .arm(at);
    }
    if let Some(done) = fx.finish {
        if st.outcome.is_none() {
            st.outcome = Some(done);
        }
        begin_shutdown(st);
    }
}

/// Ask every child to finish: the sender closes the socket, playback reports, the reader
/// stops. Idempotent.
fn begin_shutdown(st: &mut SampleState) {
    if let Some(mut w) = st.wake.take() {
        w.disarm();
    }
    if let Some(s) = st.sender.take() {
        let _ = s.cast(SenderMsg::Close);
    }
    flush_media(st);
    if let Some(p) = st.playback.take() {
        let _ = p.cast(PlaybackMsg::Finish);
    }
    if let Some(r) = st.reader.take() {
        r.stop(None);
    }
}

/// Hand the buffered media units to playback (in order, ahead of any later message).
fn flush_media(st: &mut SampleState) {
    if let Some(p) = &st.playback
        && !st.media.is_empty()
    {
        let _ = p.cast(PlaybackMsg::Media(std::mem::take(&mut st.media)));
    }
}

fn child_gone(st: &mut SampleState, cell: &ActorCell, failure: Option<String>) {
    st.live_children = st.live_children.saturating_sub(1);
    if let Some(err) = failure {
        // A crashed child sends no stats; do not wait for them.
        st.sender_stats.get_or_insert_with(Vec::new);
        st.playback_stats
            .get_or_insert_with(PlaybackSummary::default);
        if st.outcome.is_none() {
            st.outcome = Some(Err(crate::workload::Failure::new(
                crate::workload::FailureKind::Crashed,
                format!("sample actor {} failed: {err}", cell.get_id()),
            )));
        }
    }
}

/// Report to the coordinator once the outcome is decided, every child has terminated and
/// both stats messages arrived; then stop.
fn maybe_report(myself: &ActorRef<SampleMsg>, st: &mut SampleState) {
    if st.reported
        || st.outcome.is_none()
        || st.live_children > 0
        || st.sender_stats.is_none()
        || st.playback_stats.is_none()
    {
        return;
    }
    st.reported = true;
    let ended = Instant::now();
    let mut session = st.session.take();
    let mut artifacts = Vec::new();
    if let (Some(_), Some(s), false) = (&st.args.writer, session.as_mut(), st.args.warmup) {
        artifacts = s.artifacts();
    }
    let since = |t: Instant| t.saturating_duration_since(st.args.run_start).as_secs_f64();
    let record = SampleRecord {
        idx: st.args.idx,
        warmup: st.args.warmup,
        scheduled_s: st.args.scheduled_s,
        queue_wait_s: st.args.queue_wait_s,
        started_s: since(st.started),
        opened_s: st.opened.map(since),
        ended_s: since(ended),
        outcome: st.outcome.clone().unwrap_or(Ok(())),
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
