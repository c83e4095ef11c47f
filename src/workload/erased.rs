//! The object-safe face of the seam: what the registry, the runner and the engine hold.
//!
//! A [`Workload`] is typed (its `Session` and that session's `Output`); the engine is
//! not generic. [`DynWorkload`] (a blanket impl over every `Workload`) erases the types:
//! for each run, [`DynWorkload::begin_run`] returns a [`WorkloadRun`] that hands out
//! [`DynSession`]s and keeps each finished session's typed output in a per-run store
//! keyed by sample index; [`WorkloadRun::report`] joins the engine's records with those
//! outputs and calls [`Workload::report`]. No downcast anywhere.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::time::Instant;

use super::catalogue::Catalogue;
use super::{
    Artifact, ConnectSpec, Descriptor, Effects, Inbound, Output, Report, RunRecord, SampleRecord,
    Session, SessionContext, Workload, WorkloadError,
};

/// A configured workload with its types erased (see [`Workload`] for each method).
pub trait DynWorkload: Send + Sync + 'static {
    /// [`Workload::descriptor`].
    fn descriptor(&self) -> &Descriptor;
    /// [`Workload::prepare`].
    fn prepare(&self) -> Result<Vec<String>, WorkloadError>;
    /// Start one run: a session factory whose outputs are kept for the report.
    fn begin_run(self: Arc<Self>) -> Arc<dyn WorkloadRun>;
}

/// Reading a workload's [`Descriptor`], field by field.
impl dyn DynWorkload {
    /// [`Descriptor::kind`].
    pub fn kind(&self) -> &str {
        &self.descriptor().kind
    }
    /// [`Descriptor::default_path`].
    pub fn default_path(&self) -> &str {
        &self.descriptor().default_path
    }
    /// [`Descriptor::params`].
    pub fn describe(&self) -> &[(String, String)] {
        &self.descriptor().params
    }
    /// [`Descriptor::samples`].
    pub fn samples(&self) -> usize {
        self.descriptor().samples
    }
    /// [`Descriptor::catalogue`].
    pub fn catalogue(&self) -> &Catalogue {
        &self.descriptor().catalogue
    }
    /// [`Descriptor::headline`].
    pub fn headline_name(&self) -> &str {
        &self.descriptor().headline
    }
    /// [`Descriptor::artifact_root`].
    pub fn artifact_root(&self) -> Option<PathBuf> {
        self.descriptor().artifact_root.clone()
    }
    /// [`Descriptor::files_per_session`].
    pub fn files_per_session(&self) -> u64 {
        self.descriptor().files_per_session
    }
    /// [`Descriptor::expected_session_s`].
    pub fn expected_session_s(&self) -> Option<f64> {
        self.descriptor().expected_session_s
    }
    /// [`Descriptor::warnings`].
    pub fn warnings(&self) -> &[String] {
        &self.descriptor().warnings
    }
    /// [`Descriptor::playback`].
    pub fn playback_config(&self) -> super::playback::PlaybackConfig {
        self.descriptor().playback
    }
}

/// One run of a workload, as the engine and the runner use it.
pub trait WorkloadRun: Send + Sync {
    /// [`Descriptor::playback`].
    fn playback_config(&self) -> super::playback::PlaybackConfig;
    /// The session for sample `ctx.idx`.
    fn session(&self, ctx: &SessionContext) -> Box<dyn DynSession>;
    /// [`Workload::headline_ms`] of a finished sample (its output is already stored).
    fn headline_ms(&self, rec: &SampleRecord) -> Option<f64>;
    /// Join the records with the stored outputs and call [`Workload::report`].
    fn report(&self, run: RunRecord) -> Result<Box<dyn Report>, WorkloadError>;
    /// [`Workload::spool`].
    fn spool(&self) -> Option<&super::spool::Spool> {
        None
    }
}

/// A [`Session`] with its output type erased: `finish` stores the output in its run.
pub trait DynSession: Send + 'static {
    /// [`Session::connect`].
    fn connect(&self, target: &ConnectSpec) -> ConnectSpec;
    /// [`Session::on_open`].
    fn on_open(&mut self, now: Instant, fx: &mut Effects);
    /// [`Session::on_inbound`].
    fn on_inbound(&mut self, msg: Inbound, at: Instant, fx: &mut Effects);
    /// [`Session::on_wake`].
    fn on_wake(&mut self, now: Instant, fx: &mut Effects);
    /// [`Session::on_closed`].
    fn on_closed(&mut self, at: Instant, reason: Option<String>, fx: &mut Effects);
    /// [`Session::artifacts`].
    fn artifacts(&mut self) -> Vec<Artifact>;
    /// [`Session::headline_so_far_ms`].
    fn headline_so_far_ms(&self) -> Option<f64> {
        None
    }
    /// [`Session::into_output`], kept for the report under this sample's index.
    fn finish(self: Box<Self>);
}

type Store<O> = Arc<Mutex<HashMap<usize, O>>>;

struct Bound<S: Session> {
    inner: S,
    idx: usize,
    store: Store<S::Output>,
}

impl<S: Session> DynSession for Bound<S> {
    fn connect(&self, target: &ConnectSpec) -> ConnectSpec {
        self.inner.connect(target)
    }
    fn on_open(&mut self, now: Instant, fx: &mut Effects) {
        self.inner.on_open(now, fx);
    }
    fn on_inbound(&mut self, msg: Inbound, at: Instant, fx: &mut Effects) {
        self.inner.on_inbound(msg, at, fx);
    }
    fn on_wake(&mut self, now: Instant, fx: &mut Effects) {
        self.inner.on_wake(now, fx);
    }
    fn on_closed(&mut self, at: Instant, reason: Option<String>, fx: &mut Effects) {
        self.inner.on_closed(at, reason, fx);
    }
    fn artifacts(&mut self) -> Vec<Artifact> {
        self.inner.artifacts()
    }
    fn headline_so_far_ms(&self) -> Option<f64> {
        self.inner.headline_so_far_ms()
    }
    fn finish(self: Box<Self>) {
        let Bound { inner, idx, store } = *self;
        let out = inner.into_output();
        store
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(idx, out);
    }
}

struct TypedRun<W: Workload> {
    workload: Arc<W>,
    store: Store<Output<W>>,
}

impl<W: Workload> WorkloadRun for TypedRun<W> {
    fn playback_config(&self) -> super::playback::PlaybackConfig {
        self.workload.descriptor().playback
    }
    fn session(&self, ctx: &SessionContext) -> Box<dyn DynSession> {
        Box::new(Bound {
            inner: self.workload.session(ctx),
            idx: ctx.idx,
            store: Arc::clone(&self.store),
        })
    }
    fn headline_ms(&self, rec: &SampleRecord) -> Option<f64> {
        let mut store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
        // Lend the output to a typed record for the call, then put it back.
        let out = store.remove(&rec.idx);
        let typed = rec.clone().with_output(out);
        let ms = self.workload.headline_ms(&typed);
        if let Some(o) = typed.output {
            store.insert(rec.idx, o);
        }
        ms
    }
    fn spool(&self) -> Option<&super::spool::Spool> {
        self.workload.spool()
    }
    fn report(&self, run: RunRecord) -> Result<Box<dyn Report>, WorkloadError> {
        let mut outputs =
            std::mem::take(&mut *self.store.lock().unwrap_or_else(PoisonError::into_inner));
        let samples = run
            .samples
            .into_iter()
            .map(|s| {
                let out = outputs.remove(&s.idx);
                s.with_output(out)
            })
            .collect();
        self.workload.report(RunRecord {
            samples,
            duration_s: run.duration_s,
            endpoint: run.endpoint,
            load: run.load,
            interrupted: run.interrupted,
            measured_indices: run.measured_indices,
        })
    }
}

impl<W: Workload> DynWorkload for W {
    fn descriptor(&self) -> &Descriptor {
        Workload::descriptor(self)
    }
    fn prepare(&self) -> Result<Vec<String>, WorkloadError> {
        Workload::prepare(self)
    }
    fn begin_run(self: Arc<Self>) -> Arc<dyn WorkloadRun> {
        Arc::new(TypedRun {
            workload: self,
            store: Arc::default(),
        })
    }
}
