//! rtload: a load generator framework for realtime streaming AI endpoints.
//!
//! A run executes a [`Scenario`]: read one from a TOML file with [`scenario::load`], or
//! build one around a workload written in Rust with [`Scenario::builder`]. [`run()`]
//! executes it (samples released on an arrival plan under a concurrency cap, one pure
//! [`Session`] state machine per sample, the embedded reference server as the target
//! when none is given) and returns a [`RunSummary`] whose [`Report`] holds the numbers.
//!
//! The public face, by what you do with it:
//!
//! - [`scenario`]: load, check or build a scenario; its load, sweep and threshold
//!   settings; the JSON Schema of the file; the registry of built-in workload kinds.
//! - [`run`](mod@run): run a scenario (interruptibly, distributed, as a suite, a sweep or a
//!   capacity search).
//! - [`workload`] and [`catalogue`]: what a Rust workload implements — [`Workload`],
//!   [`Session`], [`Report`] — and the metric catalogue it declares.
//! - [`report`]: result files read back, compared, merged, rendered as HTML.
//! - [`server`]: the embedded reference server; [`dataset`]: the test datasets.
//! - [`bench`](mod@bench): what the repository's benchmarks and floor clients reuse.
//!
//! Everything else is internal. Layers and what may import what: ARCHITECTURE.md.

// The internal layers. `workload`, `report` and `server` live inside the facade of the
// same name (`mod imp`), re-exported crate-wide, so the crate's own `crate::workload::…`
// paths stay as they are while only the facade's `pub use` items leave the crate.
mod batch;
mod config;
mod engine;
mod runner;
mod util;

pub use runner::{RunError, RunSummary, run, run_interruptible};
pub use scenario::{Scenario, ScenarioBuilder};
pub use workload::{Report, Session, Workload};

pub mod scenario {
    //! Scenarios: read from a file ([`load`], [`check`], [`parse`]) or built in code
    //! ([`Scenario::builder`]), with the settings they carry and the workload kinds a
    //! file may name ([`registry`]).

    pub use crate::config::registry::registry;
    /// The scenario `rtload run --replay DIR` runs: the recording's client side replayed
    /// against the overrides' target.
    pub use crate::config::registry::replay_scenario as replay;
    pub use crate::config::scenario::{
        Load, LoadOverrides, Overrides, Scenario, ScenarioBuilder, ScenarioError, check, load,
        parse,
    };
    pub use crate::config::schema::{scenario_schema, scenario_schema_json};
    /// Parses `--sweep PARAM=V1,V2,…` into a [`Sweep`].
    pub use crate::config::sweep::parse_flag as parse_sweep;
    pub use crate::config::sweep::{Sweep, SweepError, SweepParam};
    /// The text of verdicts as `rtload run` prints them after the report.
    pub use crate::config::thresholds::render as render_thresholds;
    pub use crate::config::thresholds::{Threshold, Verdict, from_text as thresholds_in};
    pub use crate::engine::tls::TlsOptions;
    pub use crate::engine::transport::Compression;
    pub use crate::workload::imp::WorkloadKind;
    pub use crate::workload::plan::{
        ArrivalSpec, Plan, PlanError, RampStrategy, RampUp, Steps, plan,
    };
}

pub mod run {
    //! Running a [`Scenario`](crate::Scenario): once ([`run()`], [`run_serving`] for the
    //! CLI's distributed and live-metrics options), as a suite, a sweep or a capacity
    //! search ([`run_capacity`]); Ctrl-C handling; the plan `rtload check` prints.

    pub use crate::batch::{
        CapacityRun, SweepRun, run_capacity, run_suite, run_sweep, run_sweep_interruptible,
    };
    pub use crate::engine::interrupt::{
        EXIT_INTERRUPTED, Interrupt, InterruptSwitch, Phase, Signal, listen_for_signals,
    };
    pub use crate::engine::progress::{Mode, mode_for};
    pub use crate::engine::tls::INSECURE_WARNING;
    /// The staircase's first step and largest concurrency of [`run_capacity`].
    pub use crate::report::capacity::Bounds as CapacityBounds;
    /// How [`run_capacity`]'s search ended.
    pub use crate::report::capacity::Outcome as CapacityOutcome;
    pub use crate::runner::{
        DEFAULT_METRICS_LINGER, Distributed, LiveEndpoint, Record, RunError, RunSummary,
        describe_metrics, describe_placed, preflight, run, run_interruptible, run_serving,
    };
    pub use crate::workload::shard::{Shard, ShardError, start_at_from};
}

pub mod workload {
    //! What a workload written in Rust implements ([`Workload`], [`Session`], [`Report`])
    //! and the types they exchange with the engine. Plug one into a scenario with
    //! [`Scenario::builder`](crate::Scenario::builder); the metrics it declares are a
    //! [`Catalogue`](crate::catalogue::Catalogue).
    //!
    //! # A session
    //!
    //! ```
    //! use tokio::time::Instant;
    //! use rtload::workload::{Effects, Inbound, Outbound, Session};
    //!
    //! /// Sends one text message and succeeds on the first reply.
    //! struct Echo { sent_at: Option<Instant> }
    //!
    //! impl Session for Echo {
    //!     type Output = Option<Instant>;
    //!     fn on_open(&mut self, now: Instant, fx: &mut Effects) {
    //!         self.sent_at = Some(now);
    //!         fx.send(Outbound::Text("hello".into()), Some(now));
    //!     }
    //!     fn on_inbound(&mut self, msg: Inbound, _at: Instant, fx: &mut Effects) {
    //!         if let Inbound::Text(_) = msg { fx.succeed(); }
    //!     }
    //!     fn on_wake(&mut self, _now: Instant, _fx: &mut Effects) {}
    //!     fn into_output(self) -> Option<Instant> { self.sent_at }
    //! }
    //!
    //! let mut s = Echo { sent_at: None };
    //! let mut fx = Effects::default();
    //! let t = Instant::now();
    //! s.on_open(t, &mut fx);
    //! assert_eq!(fx.outbound.len(), 1);
    //! s.on_inbound(Inbound::Text("hello".into()), t, &mut fx);
    //! assert!(matches!(fx.finish, Some(Ok(()))));
    //! ```
    //!
    //! A whole workload (session factory plus report) run from Rust:
    //! `tests/it/echo_workload.rs`.

    // `pub(crate)`: the scenario and dataset facades re-export a few of its items.
    #[path = "mod.rs"]
    pub(crate) mod imp;
    pub(crate) use imp::*;

    pub use crate::util::stats::{STANDARD_PERCENTILES, Summary};
    pub use imp::playback::PlaybackConfig;
    pub use imp::results::Recorded;
    pub use imp::{
        Artifact, ArtifactBody, ByteString, ConnectSpec, Descriptor, DynWorkload, Effects, Failure,
        FailureKind, FlagKind, FlagSpec, Inbound, MediaUnit, OutMsg, Outbound, Output, Report,
        RunRecord, SampleRecord, Session, SessionContext, Workload, WorkloadError, WorkloadFlag,
    };
}

pub mod catalogue {
    //! The metric catalogue a workload declares: each metric's unit, direction, merge
    //! rule and description, and the charts its results ask for.

    pub use crate::workload::catalogue::chart::{
        Chart, Draw, Reference, SESSION_SERIES_KEY, Scale, SeriesRow, Span, SpanKind, TIMELINE_KEY,
        TimelineRow,
    };
    pub use crate::workload::catalogue::{
        Catalogue, Direction, Family, Merge, MergeRule, MetricInfo, Undeclared, UnitRate,
    };
}

pub mod report {
    //! Result files and what is made of them: read back, compared, merged across shards,
    //! rendered as HTML; the tables and lines `rtload` prints.

    #[path = "mod.rs"]
    mod imp;
    pub(crate) use imp::*;

    /// A recording (`rtload run --record DIR`) read back.
    pub use crate::engine::record::read::{
        Dir as TraceDir, Kind as TraceKind, SessionTrace, Trace, TraceError, TraceEvent,
    };
    /// `rtload report --recompute DIR`: a recorded run's metrics and verdict from its
    /// trace alone; [`RECOMPUTE_ABSENT`] is what it cannot hold.
    pub use crate::runner::{ABSENT as RECOMPUTE_ABSENT, RecomputeError, Recomputed, recompute};
    pub use crate::util::target::redact_text;
    pub use crate::util::write_atomic;
    pub use crate::workload::kit::{failure_lines, verdict_line};
    /// The text of a comparison as `rtload compare` prints it.
    pub use imp::compare::render as render_comparison;
    pub use imp::compare::{Comparison, compare, load_result, parse_percent};
    pub use imp::html::{Input as HtmlInput, IntervalLog, render as render_html};
    /// Loads one shard's result (and its `.hlog`) for [`merge()`].
    pub use imp::merge::load as load_shard;
    /// Writes a merged result and its `.hlog`.
    pub use imp::merge::publish as publish_merged;
    pub use imp::merge::{Merged, ShardInput, merge};
    pub use imp::resultfile::{interval_log, parse_lenient as parse_result, read as read_result};
    /// The suite's summary table.
    pub use imp::suite::render_table as suite_table;
    pub use imp::suite::{ScenarioOutcome, exit_code as suite_exit_code, junit_xml};
    /// A sweep's table, one row per point.
    pub use imp::sweep::render_table as sweep_table;
    pub use imp::sweep::{direction_legend, table_columns as sweep_columns};
    /// The verdict word (`PASSED`, `FAILED`, `INTERRUPTED`).
    pub use imp::verdict::word as verdict_word;
}

pub mod server {
    //! The embedded reference server: the default target of a scenario without one, and
    //! `rtload serve`.

    #[path = "mod.rs"]
    mod imp;
    pub(crate) use imp::*;

    /// Reads a recording (`rtload run --record DIR`) for `rtload serve --replay DIR`.
    pub use crate::runner::load_replay;
    pub use imp::{
        EmbeddedServer, Replay, ReplayError, ReplayOptions, ServerConfig, ServerError, ServerTls,
        ServerTlsError, load_tls, serve_blocking, serve_replay_blocking,
    };
}

pub mod dataset {
    //! The small test datasets the workloads that declare one can write (`rtload dataset
    //! synth`), so their scenarios run offline against the embedded server.

    /// Every dataset [`SynthOptions`] can write, by name, the default first.
    pub use crate::config::registry::datasets;
    pub use crate::workload::imp::{DatasetSynth, SynthOptions};
}

pub mod bench {
    //! What the repository's benchmarks (`benches/`) and floor clients (`examples/`)
    //! reuse so that they measure what rtload measures and send the bytes it sends. Not
    //! needed to run scenarios or write workloads.

    // Measuring: frame headers as the reader parses them, process CPU and memory.
    pub use crate::engine::transport::peek_header;
    pub use crate::util::usage::UsageSnapshot;

    // Arrival order: the CPython-compatible shuffle the OmniInteract dataset uses.
    pub use crate::workload::omni::dataset::shuffle::python_shuffle;

    // Prepared bytes kept as rtload keeps its own: packed into huge-page mappings.
    pub use crate::util::packed::{Packed, Packer, Ticket};

    // An OmniInteract session's bytes, built by rtload's own pure code: the dataset's
    // cases, their decoded media, the 200 ms appends and the session settings.
    pub use crate::workload::omni::dataset::Subset;
    /// The data directory under an OmniInteract dataset path (`DIR` or `DIR/data`).
    pub use crate::workload::omni::dataset::layout::data_dir as omni_data_dir;
    pub use crate::workload::omni::dataset::layout::subset_cases;
    /// Decodes one case's media into the PCM and frames a session streams.
    pub use crate::workload::omni::media::prepare as prepare_media;
    pub use crate::workload::omni::media::{MediaOptions, ref_audio_data_url};
    pub use crate::workload::omni::pacing::{
        AppendPlan, BYTES_PER_SECOND, append_message, streamed_len,
    };
    pub use crate::workload::omni::session::{DuplexSession, DuplexSettings, PreparedMedia};
    pub use crate::workload::omni::upload::CaseUpload;
    pub use crate::workload::omni::url::{join_endpoint, realtime_url};
    pub use crate::workload::spool::Spool;

    /// The frame height a video-cadence run asks for by default.
    pub use crate::workload::video::rollout::DEFAULT_HEIGHT as VIDEO_DEFAULT_HEIGHT;
    /// The frame width a video-cadence run asks for by default.
    pub use crate::workload::video::rollout::DEFAULT_WIDTH as VIDEO_DEFAULT_WIDTH;
}
