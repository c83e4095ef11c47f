//! What the engine knows about each sample once it ended ([`SampleRecord`]) and about a
//! finished run ([`RunRecord`]): timings on the run's clock, outcomes, lateness, the
//! playback role's summary and, for the workload, each session's typed output.

use super::Failure;

/// Everything the engine knows about one sample after it ended.
#[derive(Debug, Clone)]
pub struct SampleRecord<O = ()> {
    /// Position in the run's sample order (warm-ups first).
    pub idx: usize,
    /// Warm-up samples are excluded from every metric.
    pub warmup: bool,
    /// The whole run's index of this measured sample (`None` for a warm-up): the one
    /// number a session goes by in every output ("session 3"), the same across shards.
    pub session: Option<usize>,
    /// Seconds from run start to the arrival plan's release time.
    pub scheduled_s: f64,
    /// Seconds spent waiting for a concurrency slot after release.
    pub queue_wait_s: f64,
    /// Seconds from run start to socket connect start.
    pub started_s: f64,
    /// Seconds from run start to the socket being open (`Session::on_open`), if it opened.
    pub opened_s: Option<f64>,
    /// Seconds from run start to the sample's end.
    pub ended_s: f64,
    /// `Ok`, or the failure's kind and message.
    pub outcome: Result<(), Failure>,
    /// Sender lateness (actual − intended) for scheduled messages, seconds: every value
    /// once the run has ended (read back by
    /// [`crate::workload::spool::lateness::restore_run`]), empty while the values are
    /// still in [`SampleRecord::send_lateness`].
    pub send_lateness_s: Vec<f64>,
    /// The lateness as the sender handed it over: its running tallies (count, above the
    /// generator bound, largest), read while the run is live, and its values' bytes
    /// until they are read back.
    pub send_lateness: crate::workload::spool::lateness::SentLateness,
    /// What the playback role observed (absent when the socket never opened).
    pub playback: Option<crate::workload::playback::PlaybackSummary>,
    /// The session's own record, when the session got far enough to have one (the
    /// engine's own records carry `()` here; the workload sees its typed output).
    pub output: Option<O>,
}

impl SampleRecord {
    /// This record with the session's typed output attached.
    pub fn with_output<O>(self, output: Option<O>) -> SampleRecord<O> {
        SampleRecord {
            idx: self.idx,
            warmup: self.warmup,
            session: self.session,
            scheduled_s: self.scheduled_s,
            queue_wait_s: self.queue_wait_s,
            started_s: self.started_s,
            opened_s: self.opened_s,
            ended_s: self.ended_s,
            outcome: self.outcome,
            send_lateness_s: self.send_lateness_s,
            send_lateness: self.send_lateness,
            playback: self.playback,
            output,
        }
    }
}

/// A finished run as the workload sees it.
#[derive(Debug, Clone)]
pub struct RunRecord<O = ()> {
    /// Every sample, warm-ups included (flagged), in sample order.
    pub samples: Vec<SampleRecord<O>>,
    /// Seconds from the first measured release to the last measured completion.
    pub duration_s: f64,
    /// The target URL the run aimed at (secrets stripped).
    pub endpoint: String,
    /// The load settings the run used (set by the runner; `None` from the bare engine).
    pub load: Option<crate::workload::load::Load>,
    /// A signal interrupted the run (set by the runner): samples not released never ran.
    pub interrupted: bool,
    /// The whole run's index of each measured sample, in order, when this run is one
    /// shard of a distributed run (set by the runner); `None` = `0..n`.
    pub measured_indices: Option<Vec<usize>>,
}

impl<O> RunRecord<O> {
    /// The whole run's index of the `i`-th measured sample (dataset case, request id).
    pub fn measured_index(&self, i: usize) -> usize {
        self.measured_indices
            .as_ref()
            .and_then(|g| g.get(i).copied())
            .unwrap_or(i)
    }
}
