//! The coordinator actor: owns the run. It releases samples on the arrival plan, never
//! lets more than `max_concurrency` run at once, runs the warm-up samples first (before
//! the plan's clock starts) and records each sample's queue wait (release → slot).
//!
//! It lives on the control-plane runtime; each sample it starts lives on a shard thread.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use ractor::thread_local::{ThreadLocalActor, ThreadLocalActorSpawner};
use ractor::{Actor, ActorId, ActorProcessingErr, ActorRef, SupervisionEvent};
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::interrupt::INTERRUPTED;
use super::sample::{SampleActor, SampleArgs, SampleMeta, SampleMsg};
use super::writer::WriterHandle;
use crate::engine::progress::ProgressEvent;
use crate::workload::{ConnectSpec, RunRecord, SampleRecord, SessionContext, WorkloadRun};

/// Messages to the coordinator.
#[derive(Debug)]
pub enum CoordMsg {
    /// Start the run (warm-ups first).
    Begin,
    /// The plan released measured sample `idx` at its intended time `scheduled`.
    Released {
        /// Sample index.
        idx: usize,
        /// The plan's intended release time.
        scheduled: Instant,
    },
    /// A sample finished (successfully or not).
    Ended(Box<SampleRecord>),
    /// Stop releasing; in-flight samples get `grace`, then are cancelled as interrupted.
    Interrupt {
        /// How long in-flight samples may still finish.
        grace: Duration,
    },
    /// The grace period of an interruption is over: cancel what still runs.
    GraceOver,
    /// A second signal: stop releasing (if not yet) and cancel what runs, now.
    CancelNow,
}

/// The run as the coordinator executes it.
pub struct CoordArgs {
    /// The workload that makes sessions.
    pub workload: Arc<dyn WorkloadRun>,
    /// The resolved target URL.
    pub url: String,
    /// Upgrade headers for every session (may hold secrets; never logged).
    pub headers: Vec<(String, String)>,
    /// Warm-up samples, run first and excluded from metrics.
    pub n_warmup: usize,
    /// Release offsets of the measured samples, seconds from the measured phase start.
    pub offsets_s: Vec<f64>,
    /// Each measured sample's hold (aligned with `offsets_s`).
    pub holds_s: Vec<Option<f64>>,
    /// Concurrency cap (≥ 1).
    pub max_concurrency: usize,
    /// Session shards; samples are assigned round-robin.
    pub shards: Vec<ThreadLocalActorSpawner>,
    /// Handshake bound per session.
    pub connect_timeout: Duration,
    /// Client TLS for `wss://` (one configuration per run).
    pub tls: Option<super::tls::ClientTls>,
    /// Largest inbound frame or reassembled message.
    pub max_frame_bytes: usize,
    /// What the handshake offers, and the run's tally of what was agreed.
    pub wire: super::transport::Wire,
    /// Prefix of measured request ids.
    pub request_id_prefix: String,
    /// Artifact writer.
    pub writer: Option<WriterHandle>,
    /// Live log lines.
    pub lines: Option<crossbeam_channel::Sender<String>>,
    /// Where sessions' wire traces go, when the run records.
    pub record: Option<super::record::Recorder>,
    /// Progress events.
    pub progress: Option<crossbeam_channel::Sender<ProgressEvent>>,
    /// Sends later than this (ms) count as late in [`ProgressEvent::SampleEnded`].
    pub generator_bound_ms: f64,
    /// Global sample indices and the start barrier of a sharded run.
    pub placement: super::Placement,
    /// Live tallies for `--metrics-addr`.
    pub live: Option<Arc<super::live::LiveMetrics>>,
    /// Classifies each sample as it ends (progress, live tallies).
    pub rules: Arc<crate::workload::outcome::Rules>,
    /// The run's tally of what opening each session cost.
    pub setup_cost: super::setup_cost::SetupTally,
    /// Receives the finished run.
    pub done: oneshot::Sender<RunRecord>,
}

/// The coordinator actor.
pub struct Coordinator;

/// Coordinator state; `records[i]` fills as sample `i` ends.
pub struct CoordState {
    args: CoordArgs,
    done: Option<oneshot::Sender<RunRecord>>,
    run_start: Instant,
    measured_start: Option<Instant>,
    ready: VecDeque<(usize, Instant)>,
    in_flight: HashMap<ActorId, usize>,
    actors: HashMap<usize, ActorRef<SampleMsg>>,
    interrupted: bool,
    records: Vec<Option<SampleRecord>>,
    remaining_warmup: usize,
    remaining: usize,
    next_shard: usize,
    release_task: Option<tokio::task::JoinHandle<()>>,
}

impl Actor for Coordinator {
    type Msg = CoordMsg;
    type State = CoordState;
    type Arguments = CoordArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<CoordMsg>,
        mut args: CoordArgs,
    ) -> Result<CoordState, ActorProcessingErr> {
        let n = args.n_warmup + args.offsets_s.len();
        let (tx, _) = oneshot::channel();
        let done = std::mem::replace(&mut args.done, tx);
        Ok(CoordState {
            remaining_warmup: args.n_warmup,
            remaining: n,
            args,
            done: Some(done),
            run_start: Instant::now(),
            measured_start: None,
            ready: VecDeque::new(),
            in_flight: HashMap::new(),
            actors: HashMap::new(),
            interrupted: false,
            records: (0..n).map(|_| None).collect(),
            next_shard: 0,
            release_task: None,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<CoordMsg>,
        msg: CoordMsg,
        st: &mut CoordState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            CoordMsg::Begin => {
                st.run_start = Instant::now();
                st.progress(ProgressEvent::Planned {
                    measured: st.args.offsets_s.len(),
                    warmup: st.args.n_warmup,
                });
                if st.args.n_warmup == 0 {
                    start_measured(&myself, st);
                } else {
                    let now = Instant::now();
                    st.ready.extend((0..st.args.n_warmup).map(|i| (i, now)));
                }
            }
            CoordMsg::Released { idx, scheduled } if !st.interrupted => {
                st.ready.push_back((idx, scheduled))
            }
            CoordMsg::Released { .. } => {} // interrupted: released too late
            CoordMsg::Ended(rec) => finish_sample(&myself, st, *rec),
            CoordMsg::Interrupt { grace } => interrupt(&myself, st, grace),
            CoordMsg::GraceOver => cancel_all(
                st,
                "the run was interrupted and the grace period ended before the session finished",
            ),
            CoordMsg::CancelNow => {
                stop_releasing(st);
                cancel_all(
                    st,
                    "the run was interrupted again and the session was cancelled at once",
                );
            }
        }
        fill_slots(&myself, st).await;
        if st.remaining == 0 {
            complete(st);
            myself.stop(None);
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<CoordMsg>,
        evt: SupervisionEvent,
        st: &mut CoordState,
    ) -> Result<(), ActorProcessingErr> {
        // A sample that ends normally reports through `Ended` (which may arrive after its
        // termination event). Only a crash leaves no record: synthesize one.
        if let SupervisionEvent::ActorFailed(cell, err) = evt
            && let Some(&idx) = st.in_flight.get(&cell.get_id())
        {
            let rec = failed_record(
                st,
                idx,
                crate::workload::Failure::new(
                    crate::workload::FailureKind::Crashed,
                    format!("sample supervisor crashed: {err}"),
                ),
            );
            finish_sample(&myself, st, rec);
            fill_slots(&myself, st).await;
            if st.remaining == 0 {
                complete(st);
                myself.stop(None);
            }
        }
        Ok(())
    }
}

impl CoordState {
    fn progress(&self, ev: ProgressEvent) {
        if let Some(tx) = &self.args.progress {
            let _ = tx.send(ev);
        }
    }
}

/// The measured phase's start: now, or the `--start-at` barrier (in the past too: then
/// every release is late and its queue wait says so).
fn measured_start(start_at_unix_s: Option<f64>) -> Instant {
    let Some(at) = start_at_unix_s else {
        return Instant::now();
    };
    // Both clocks as at one instant, or the barrier is off by whatever ran between them.
    let (now, wall) = super::transport::stamped::clock_pair();
    let wall = wall
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let ahead = at - wall;
    if ahead >= 0.0 {
        now + Duration::from_secs_f64(ahead)
    } else {
        now.checked_sub(Duration::from_secs_f64(-ahead))
            .unwrap_or(now)
    }
}

fn start_measured(myself: &ActorRef<CoordMsg>, st: &mut CoordState) {
    let start = measured_start(st.args.placement.start_at_unix_s);
    st.measured_start = Some(start);
    let first = st.args.n_warmup;
    let offsets = st.args.offsets_s.clone();
    let me = myself.clone();
    // One task walks the plan on an absolute schedule: lateness never accumulates.
    st.release_task = Some(tokio::spawn(async move {
        for (i, off) in offsets.into_iter().enumerate() {
            let scheduled = start + Duration::from_secs_f64(off.max(0.0));
            tokio::time::sleep_until(scheduled).await;
            if me
                .cast(CoordMsg::Released {
                    idx: first + i,
                    scheduled,
                })
                .is_err()
            {
                return;
            }
        }
    }));
}

/// What sample `idx`'s session is made with: its place in the run, its request id and
/// its hold.
fn context(args: &CoordArgs, idx: usize) -> SessionContext {
    let warmup = idx < args.n_warmup;
    let local = idx.saturating_sub(args.n_warmup);
    let measured_index = (!warmup).then(|| {
        (args.placement.measured_indices.as_ref())
            .and_then(|g| g.get(local).copied())
            .unwrap_or(local)
    });
    SessionContext {
        idx,
        warmup,
        url: args.url.clone(),
        request_id: measured_index.map(|k| format!("{}{k}", args.request_id_prefix)),
        measured_index,
        hold_s: (!warmup)
            .then(|| args.holds_s.get(local).copied().flatten())
            .flatten(),
    }
}

async fn fill_slots(myself: &ActorRef<CoordMsg>, st: &mut CoordState) {
    while st.in_flight.len() < st.args.max_concurrency {
        let Some((idx, scheduled)) = st.ready.pop_front() else {
            return;
        };
        let granted = Instant::now();
        let queue_wait_s = granted.saturating_duration_since(scheduled).as_secs_f64();
        let ctx = context(&st.args, idx);
        let warmup = ctx.warmup;
        let shard = st.args.shards[st.next_shard % st.args.shards.len()].clone();
        st.next_shard += 1;
        let meta = SampleMeta {
            idx,
            warmup,
            connect: ConnectSpec {
                url: st.args.url.clone(),
                headers: st.args.headers.clone(),
            },
            connect_timeout: st.args.connect_timeout,
            tls: st.args.tls.clone(),
            max_frame_bytes: st.args.max_frame_bytes,
            wire: st.args.wire.clone(),
            playback: super::playback::PlaybackSetup {
                cfg: st.args.workload.playback_config(),
                spool: (st.args.workload.spool()).map(crate::workload::spool::Spool::session),
            },
            coordinator: myself.clone(),
            run_start: st.run_start,
            scheduled_s: scheduled
                .saturating_duration_since(st.run_start)
                .as_secs_f64(),
            queue_wait_s,
            writer: st.args.writer.clone(),
            lines: st.args.lines.clone(),
            record: st.args.record.clone(),
            setup_cost: st.args.setup_cost.clone(),
            lateness: lateness_setup(&st.args, warmup),
            progress: st.args.progress.clone(),
        };
        let args = SampleArgs {
            session: st.args.workload.session(&ctx),
            meta,
        };
        match SampleActor::spawn_linked(None, args, myself.get_cell(), shard).await {
            Ok((actor, _)) => {
                st.in_flight.insert(actor.get_id(), idx);
                if let Some(live) = &st.args.live {
                    live.started(warmup, queue_wait_s);
                }
                st.actors.insert(idx, actor);
                st.progress(ProgressEvent::SampleStarted { idx, warmup });
            }
            Err(e) => {
                let rec = failed_record(
                    st,
                    idx,
                    crate::workload::Failure::new(
                        crate::workload::FailureKind::Crashed,
                        format!("could not start sample: {e}"),
                    ),
                );
                finish_sample(myself, st, rec);
            }
        }
    }
}

fn failed_record(st: &CoordState, idx: usize, msg: crate::workload::Failure) -> SampleRecord {
    let now = Instant::now()
        .saturating_duration_since(st.run_start)
        .as_secs_f64();
    SampleRecord {
        idx,
        warmup: idx < st.args.n_warmup,
        session: None,
        scheduled_s: now,
        queue_wait_s: 0.0,
        started_s: now,
        opened_s: None,
        ended_s: now,
        outcome: Err(msg),
        send_lateness_s: Vec::new(),
        send_lateness: Default::default(),
        playback: None,
        output: None,
    }
}

fn finish_sample(myself: &ActorRef<CoordMsg>, st: &mut CoordState, rec: SampleRecord) {
    let idx = rec.idx;
    if st.records.get(idx).is_none_or(|r| r.is_some()) {
        return; // duplicate (a crash record raced the real one)
    }
    st.in_flight.retain(|_, i| *i != idx);
    st.actors.remove(&idx);
    let warmup = rec.warmup;
    let headline_ms = st.args.workload.headline_ms(&rec);
    // Tallied by the sender as it recorded each value (the values are read after the
    // run): how many, how many above the generator bound.
    let sent = &rec.send_lateness;
    if !warmup && sent.count > 0 {
        st.progress(ProgressEvent::Sends {
            sends: u32::try_from(sent.count).unwrap_or(u32::MAX),
            late: u32::try_from(sent.late).unwrap_or(u32::MAX),
        });
    }
    if let Some(p) = rec
        .playback
        .as_ref()
        .filter(|p| !warmup && p.stream_count() > 0)
    {
        st.progress(ProgressEvent::Played {
            stalls: p.stall_count(),
        });
    }
    let class = st.args.rules.classify(&rec);
    if let Some(live) = &st.args.live {
        live.ended(&rec, class, headline_ms);
    }
    st.progress(ProgressEvent::SampleEnded {
        idx,
        warmup,
        failure: rec.outcome.as_ref().err().map(|f| f.kind),
        class,
        headline_ms,
    });
    st.records[idx] = Some(rec);
    st.remaining -= 1;
    if warmup {
        st.remaining_warmup -= 1;
        if st.remaining_warmup == 0 && !st.interrupted {
            start_measured(myself, st);
        }
    }
}

/// First signal: release nothing more, drop what waits for a slot, and give the samples
/// in flight `grace` before they are cancelled. Unstarted samples leave no record.
fn interrupt(myself: &ActorRef<CoordMsg>, st: &mut CoordState, grace: Duration) {
    if !stop_releasing(st) {
        return;
    }
    if st.remaining > 0 {
        let me = myself.clone();
        tokio::spawn(async move {
            tokio::time::sleep(grace).await;
            let _ = me.cast(CoordMsg::GraceOver);
        });
    }
}

/// Releases nothing more and drops what waits for a slot; `false` if it had already.
fn stop_releasing(st: &mut CoordState) -> bool {
    if st.interrupted {
        return false;
    }
    st.interrupted = true;
    if let Some(t) = st.release_task.take() {
        t.abort();
    }
    st.ready.clear();
    st.remaining = st.in_flight.len();
    true
}

/// Ends every sample in flight as interrupted, with `why` after the outcome's prefix.
fn cancel_all(st: &CoordState, why: &str) {
    for actor in st.actors.values() {
        let _ = actor.cast(SampleMsg::Interrupt(format!("{INTERRUPTED}: {why}")));
    }
}

fn complete(st: &mut CoordState) {
    if let Some(t) = st.release_task.take() {
        t.abort();
    }
    let mut samples: Vec<SampleRecord> = st.records.iter_mut().filter_map(Option::take).collect();
    let measured: Vec<&SampleRecord> = samples.iter().filter(|s| !s.warmup).collect();
    let first = measured
        .iter()
        .map(|s| s.scheduled_s)
        .fold(f64::INFINITY, f64::min);
    let last = measured.iter().map(|s| s.ended_s).fold(0.0, f64::max);
    let duration_s = if measured.is_empty() {
        0.0
    } else {
        (last - first).max(0.0)
    };
    let global = st.args.placement.measured_indices.as_deref();
    for s in samples.iter_mut().filter(|s| !s.warmup) {
        let local = s.idx - st.args.n_warmup;
        s.session = Some(global.and_then(|g| g.get(local).copied()).unwrap_or(local));
    }
    if let Some(done) = st.done.take() {
        let _ = done.send(RunRecord {
            samples,
            duration_s,
            endpoint: st.args.url.clone(),
            load: None,
            interrupted: st.interrupted,
            measured_indices: st.args.placement.measured_indices.clone(),
        });
    }
}

/// How a sample keeps its send lateness: in the run's spool when it has one (a chunk of
/// [`super::lateness::SPILL_CHUNK_BYTES`] in memory), else in memory.
fn lateness_setup(args: &CoordArgs, warmup: bool) -> super::lateness::LatenessSetup {
    use super::lateness::{CHUNK_BYTES, LatenessSetup, SPILL_CHUNK_BYTES};
    let spool = (args.workload.spool()).map(crate::workload::spool::Spool::session);
    LatenessSetup {
        chunk_bytes: if spool.is_some() {
            SPILL_CHUNK_BYTES
        } else {
            CHUNK_BYTES
        },
        spool,
        bound_s: args.generator_bound_ms / 1000.0,
        live: args.live.clone().filter(|_| !warmup),
    }
}
