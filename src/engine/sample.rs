//! The sample supervisor: one `ThreadLocalActor` per session, on one shard thread, never
//! migrating. **Owns** the sample's fixed parameters and the handle of its live phase.
//! Its job: start the live phase ([`super::session`]) on its own shard thread — so the
//! socket halves, which are not `Send`, are made and kept there by their owners and
//! never cross an actor boundary — pass the coordinator's interrupts on to it, and turn
//! how it ended into the sample's one [`SampleRecord`]: its outcome (a panic in the live
//! phase becomes a `crashed` record, never a lost sample), the artifacts it hands the
//! writer pool, then the record to the coordinator. One completion, one report.

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures_util::FutureExt as _;
use ractor::thread_local::ThreadLocalActor;
use ractor::{ActorProcessingErr, ActorRef};
use tokio::time::Instant;
use tracing::Instrument as _;

use super::control::{self, Control, ControlRx, ControlTx};
use super::coordinator::CoordMsg;
use super::record::Recorder;
use super::session::{self, Ended, Setup};
use super::writer::WriterHandle;
use crate::workload::{Artifact, ConnectSpec, DynSession, Failure, FailureKind, SampleRecord};

/// Messages to a sample supervisor.
#[derive(Debug)]
pub enum SampleMsg {
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
    /// How the playback role buffers before it starts each stream, and where it spills.
    pub playback: super::playback::PlaybackSetup,
    /// The coordinator, which receives the [`SampleRecord`].
    pub coordinator: ActorRef<CoordMsg>,
    /// The run's time origin.
    pub run_start: Instant,
    /// Intended release time, seconds from `run_start`.
    pub scheduled_s: f64,
    /// Seconds the sample waited for a concurrency slot.
    pub queue_wait_s: f64,
    /// Artifact writer, when the run publishes artifacts.
    pub writer: Option<WriterHandle>,
    /// Live log lines (`--print-chunks`), when enabled.
    pub lines: Option<crossbeam_channel::Sender<String>>,
    /// Where the session's wire trace goes, when the run records (`--record`).
    pub record: Option<Recorder>,
    /// The run's tally of what opening each session cost.
    pub setup_cost: super::setup_cost::SetupTally,
    /// How the sample's sender keeps its lateness (spilled, tallied, observed live).
    pub lateness: super::lateness::LatenessSetup,
    /// The progress channel, for a measured sample's headline so far.
    pub progress: Option<crossbeam_channel::Sender<super::progress::ProgressEvent>>,
}

/// The sample supervisor actor.
#[derive(Default)]
pub struct SampleActor;

/// Supervisor state: where interrupts go, and what the live phase starts with.
pub struct SampleState {
    control: ControlTx,
    start: Option<(SampleArgs, ControlRx)>,
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
        let (control, rx) = control::line();
        Ok(SampleState {
            control,
            start: Some((args, rx)),
        })
    }

    async fn post_start(
        &self,
        myself: ActorRef<SampleMsg>,
        st: &mut SampleState,
    ) -> Result<(), ActorProcessingErr> {
        // Spawned after start-up, on this shard thread: the spawner does not wait for the
        // connection, and what the live phase makes stays on this thread.
        if let Some((args, rx)) = st.start.take() {
            tokio::task::spawn_local(live(args, rx, myself));
        }
        Ok(())
    }

    async fn handle(
        &self,
        _myself: ActorRef<SampleMsg>,
        msg: SampleMsg,
        st: &mut SampleState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            // The live phase may have ended already: then there is nothing to interrupt.
            SampleMsg::Interrupt(m) => drop(st.control.send(Control::Interrupt(m))),
        }
        Ok(())
    }
}

/// The sample's life: the live phase, then its record, its artifacts, its report.
async fn live(args: SampleArgs, mut control: ControlRx, me: ActorRef<SampleMsg>) {
    let SampleArgs { session, meta } = args;
    let span = tracing::debug_span!("session", idx = meta.idx, warmup = meta.warmup);
    let started = Instant::now();
    let setup = Setup {
        connect: meta.connect.clone(),
        connect_timeout: meta.connect_timeout,
        tls: meta.tls.clone(),
        max_frame_bytes: meta.max_frame_bytes,
        wire: meta.wire.clone(),
        playback: meta.playback,
        lines: meta.lines.clone(),
        tape: (meta.record.as_ref())
            .map(|r| r.recording.tape(meta.idx, meta.warmup, meta.run_start)),
        setup_cost: Some(meta.setup_cost.clone()),
        lateness: meta.lateness,
        headline: (meta.progress.clone()).filter(|_| !meta.warmup).map(|tx| {
            session::HeadlineFeed {
                idx: meta.idx,
                tx,
                last: None,
            }
        }),
    };
    let mut ended = AssertUnwindSafe(session::run(setup, session, &mut control))
        .catch_unwind()
        .instrument(span.clone())
        .await;
    let heading = Heading {
        idx: meta.idx,
        warmup: meta.warmup,
        run_start: meta.run_start,
        scheduled_s: meta.scheduled_s,
        queue_wait_s: meta.queue_wait_s,
        publishes: meta.writer.is_some() && !meta.warmup,
    };
    let tape = ended.as_mut().ok().and_then(|e| e.tape.take());
    let (record, artifacts) = record(&heading, started, ended);
    span.in_scope(|| trace_outcome(&record.outcome));
    // The trace first (a crashed session's tape was lost with it: its file says so),
    // with the same backpressure as artifacts.
    if let Some(r) = &meta.record {
        let times = [
            record.scheduled_s,
            record.queue_wait_s,
            record.started_s,
            record.ended_s,
        ];
        let facts = r.recording.facts(times, &record.outcome);
        let files = match tape {
            Some(mut t) => {
                t.sample(facts);
                t.finish()
            }
            None => vec![r.recording.crashed(meta.idx, meta.warmup, Some(facts))],
        };
        for f in files {
            r.writer.submit(f).await;
        }
    }
    // Backpressure: the slot stays taken until the writer queue has room for every file.
    if let Some(w) = &meta.writer {
        for a in artifacts {
            w.submit(a).await;
        }
    }
    let _ = meta.coordinator.cast(CoordMsg::Ended(Box::new(record)));
    me.stop(None);
}

/// What a sample's record says whatever happened in it.
struct Heading {
    idx: usize,
    warmup: bool,
    run_start: Instant,
    scheduled_s: f64,
    queue_wait_s: f64,
    /// The run publishes this sample's artifacts (a measured sample with a writer).
    publishes: bool,
}

/// The sample's record (and the artifacts its session publishes) from how its live
/// phase ended; a panic there is this sample's `crashed` outcome.
fn record(
    h: &Heading,
    started: Instant,
    ended: std::thread::Result<Ended>,
) -> (SampleRecord, Vec<Artifact>) {
    let now = Instant::now();
    let since = |t: Instant| t.saturating_duration_since(h.run_start).as_secs_f64();
    let mut rec = SampleRecord {
        idx: h.idx,
        warmup: h.warmup,
        session: None,
        scheduled_s: h.scheduled_s,
        queue_wait_s: h.queue_wait_s,
        started_s: since(started),
        opened_s: None,
        ended_s: since(now),
        outcome: Ok(()),
        send_lateness_s: Vec::new(),
        send_lateness: Default::default(),
        playback: None,
        output: None,
    };
    let mut ended = match ended {
        Ok(e) => e,
        Err(panic) => {
            let why = (panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            let msg = format!("sample {} crashed: {why}", h.idx);
            rec.outcome = Err(Failure::new(FailureKind::Crashed, msg));
            return (rec, Vec::new());
        }
    };
    let artifacts = if h.publishes {
        ended.session.artifacts()
    } else {
        Vec::new()
    };
    rec.opened_s = ended.opened.map(since);
    rec.outcome = ended.outcome;
    rec.send_lateness = ended.send_lateness;
    rec.playback = ended.playback;
    // The typed output goes to the run's store; the engine's record says it is there.
    ended.session.finish();
    rec.output = Some(());
    (rec, artifacts)
}

fn trace_outcome(outcome: &Result<(), Failure>) {
    match outcome {
        Ok(()) => tracing::debug!(outcome = "ok", "outcome"),
        Err(f) => tracing::debug!(
            outcome = f.kind.label(),
            error = %crate::util::target::redact_text(&f.message),
            "outcome"
        ),
    }
}

#[cfg(test)]
#[path = "sample_tests.rs"]
mod tests;
