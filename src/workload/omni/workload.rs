//! The `omniinteract` workload: scenario parameters, dataset selection at build time,
//! media preparation and the output-root lock before timing, one [`DuplexSession`] per
//! selected case.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde::Deserialize;

pub use super::flags::FLAGS;
use super::media::{self, MediaOptions};
use super::pacing::PacingMode;
use super::session::DuplexOutput;
use super::session::{DuplexSession, DuplexSettings};
use super::upload::{self, SharedUpload};
use crate::util::scenario_error::ScenarioError;
use crate::workload::omni::artifacts::layout::CaseLayout;
use crate::workload::omni::artifacts::lock::OutputLock;
use crate::workload::omni::artifacts::publish::clear_outputs;
use crate::workload::omni::dataset::{self, Case, Subset};
use crate::workload::spool::Spool;
use crate::workload::{
    Descriptor, MaybeFailed, Report, RunRecord, SampleRecord, SessionContext, Workload,
    WorkloadError, WorkloadInput,
};

/// The registered kind name.
pub const KIND: &str = "omniinteract";
/// `check`'s note when the dataset is an archive not yet extracted (cases unknown).
const NOT_EXTRACTED: &str = "note: the dataset archive is valid but not extracted yet; `rtload run` extracts it and selects the cases";

/// The model of the PR's reference command.
pub const DEFAULT_MODEL: &str = "openbmb/MiniCPM-o-4_5";

/// `[workload]` keys of an `omniinteract` scenario (the PR's `--omniinteract-*` options
/// without the prefix, plus `vllm bench serve`'s result options).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OmniParams {
    /// Always `"omniinteract"`.
    pub kind: String,
    /// Model name (`--model`, default `openbmb/MiniCPM-o-4_5`).
    pub model: Option<String>,
    /// Local dataset directory or archive (`--dataset-path`); required.
    pub dataset_path: Option<PathBuf>,
    /// Subsets in concatenation order (default `["1q1a", "1q1a_math", "1qna"]`).
    pub subsets: Option<Vec<String>>,
    /// Keep dataset order instead of the seeded CPython-compatible shuffle.
    pub disable_shuffle: Option<bool>,
    /// Reference voice WAV sent in `session.update` (`--omniinteract-ref-audio`); required.
    pub ref_audio: Option<PathBuf>,
    /// Session idle timeout, completion wait and upload slack, seconds (default 900).
    /// Range (0, 1e9].
    pub timeout_s: Option<f64>,
    /// Per ffprobe/ffmpeg command, seconds (default 600). Range (0, 1e9].
    pub media_timeout_s: Option<f64>,
    /// Longest accepted video, seconds (default 3600), checked before any decode. Range
    /// (0, 1e9].
    pub max_video_duration_s: Option<f64>,
    /// LISTEN-only cases fail.
    pub require_response: Option<bool>,
    /// Artifact root and lock (default `omniinteract-output`).
    pub output_dir: Option<PathBuf>,
    /// When another run holds the output root's lock: give up after this many seconds
    /// (`--lock-timeout`) instead of waiting until it is released (default: wait).
    /// Range [0, 3600].
    pub lock_timeout_s: Option<f64>,
    /// Extra keys forwarded in `session.update.session.extra_body`.
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub extra_body: Option<toml::Table>,
    /// Incremental playback acks (later upstream behaviour; default off).
    pub incremental_acks: Option<bool>,
    /// Audio of a response the simulated listener buffers before playing it, in ms
    /// (default 0, range [0, 60000]); the `audio_stall_*` metrics are measured after it.
    pub playback_prebuffer_ms: Option<f64>,
    /// Turns: the user speaks the case's audio this many times in one session (default 1,
    /// the reference's one question). After each turn the microphone stays open (silence)
    /// until the reply has ended and `turn_gap_ms` more have passed. Adds the per-turn
    /// metrics (README "Turns"). Range [1, 1000].
    pub turns: Option<u64>,
    /// How a turn ends: `"commit"` (default: `input_audio_buffer.commit` with
    /// `"final": false`) or `"server_vad"` (nothing: the server hears the end of speech).
    /// The last turn ends with the final commit either way.
    pub turn_detection: Option<TurnDetection>,
    /// Silence after a turn's reply ended before the next turn, ms (default 1000). Range
    /// [0, 600000].
    pub turn_gap_ms: Option<f64>,
    /// Barge-in: interrupt the agent's reply this many ms after its first audio arrives.
    /// After the case's audio (the question) the microphone stays open, sending silence,
    /// until then; `barge_in_speech_ms` of the case's own voice then speaks over the reply
    /// and the input is committed. Adds the `barge_in_*` metrics (README "Barge-in").
    /// Range [0, 600000].
    pub barge_in_after_ms: Option<f64>,
    /// With `barge_in_after_ms`: draw each sample's offset uniformly from
    /// [`barge_in_after_ms`, this] (by the sample's index: the same each run). Range
    /// [0, 600000].
    pub barge_in_after_max_ms: Option<f64>,
    /// Length of the interrupting speech, ms (default 1000; whole 200 ms appends, rounded
    /// up). Range [200, 60000].
    pub barge_in_speech_ms: Option<f64>,
    /// `"realtime"` (default), `"saturate"`, or a speed factor like `"2x"`.
    pub pacing: Option<String>,
    /// The most server events one session keeps (default 100000: about 3 hours of ten
    /// events a second); a session past it fails saying so and the others go on, so one
    /// flooding session cannot exhaust memory. Range [1, 10000000].
    pub max_events_per_session: Option<u64>,
    /// The most output audio one session may send, bytes (default 1073741824: about six
    /// hours of 24 kHz PCM16); past it the session fails saying so and the others go on,
    /// so one server streaming without end cannot fill the spool's disk. Range
    /// [1048576, 1099511627776].
    pub max_audio_bytes_per_session: Option<u64>,
    /// Save the vllm-style result JSON (`--save-result`).
    pub save_result: Option<bool>,
    /// Directory of the saved result (`--result-dir`; relative to the scenario file;
    /// default: the current directory, as vllm).
    pub result_dir: Option<PathBuf>,
    /// File name of the saved result (`--result-filename`).
    pub result_filename: Option<String>,
    /// Label in the result and its file name (`--label`).
    pub label: Option<String>,
    /// `KEY=VALUE` pairs added to the saved result (`--metadata`).
    pub metadata: Option<Vec<String>>,
    /// Goodput SLOs `KEY:VALUE_ms` (`--goodput`).
    pub goodput: Option<Vec<String>>,
    /// `[load] duration_s` (not a `[workload]` key): the session speaks turns until one
    /// ends at or after this many seconds, `turns` (when given) at most.
    #[serde(skip)]
    #[schemars(skip)]
    pub hold_s: Option<f64>,
    /// Metrics with percentiles (`--percentile-metrics`, comma separated).
    pub percentile_metrics: Option<String>,
    /// Percentiles (`--metric-percentiles`, comma separated, default "99").
    pub metric_percentiles: Option<String>,
}

/// A configured OmniInteract workload.
pub struct OmniWorkload {
    pub(super) params: OmniParams,
    pub(super) cases: Vec<Case>,
    pub(super) warnings: Vec<String>,
    pub(super) output_dir: PathBuf,
    pub(super) settings_base: DuplexSettings,
    media_opts: MediaOptions,
    ref_audio: PathBuf,
    pub(super) prepared: OnceLock<Prepared>,
    pub(super) lock: Mutex<Option<OutputLock>>,
    pub(super) goodput: crate::workload::omni::bench_metrics::Goodput,
    pub(super) selected: Vec<crate::workload::omni::bench_metrics::Metric>,
    pub(super) percentiles: Vec<f64>,
    /// `OPENAI_API_KEY`, sent as `Authorization: Bearer` (never printed or saved).
    api_key: Option<crate::workload::Secret>,
    /// What this workload is, built on first use.
    descriptor: OnceLock<Descriptor>,
}

/// What `prepare` produced: settings shared by every session and each case's appends,
/// built from its media (the decoded media itself is not kept).
pub(super) struct Prepared {
    pub(super) settings: Arc<DuplexSettings>,
    pub(super) media: Vec<SharedUpload>,
    /// Where measured sessions spill their output PCM (outside the output root).
    pub(super) spool: Spool,
}

impl std::fmt::Debug for OmniWorkload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OmniWorkload")
            .field("cases", &self.cases.len())
            .finish_non_exhaustive()
    }
}

/// Build from a scenario (registered in `config::registry`).
pub fn build(
    input: &WorkloadInput<'_>,
) -> Result<Box<dyn crate::workload::DynWorkload>, Vec<ScenarioError>> {
    let mut p: OmniParams = input.params()?;
    p.hold_s = input.hold_s;
    let base = input.base_dir();
    let mut errors = Vec::new();
    let err = |key: &str, msg: String| input.key_error(key, msg);
    super::ranges::check_ranges(input, &p, &mut errors);
    let pacing = parse_pacing(p.pacing.as_deref())
        .unwrap_or_else(|msg| (errors.push(err("pacing", msg)), PacingMode::Realtime).1);
    let goodput = crate::workload::omni::bench_metrics::parse_goodput(
        p.goodput.as_deref().unwrap_or_default(),
    )
    .map_err(|e| errors.push(err("goodput", e.to_string())))
    .unwrap_or_default();
    let selected = crate::workload::omni::bench_metrics::parse_metrics(
        p.percentile_metrics
            .as_deref()
            .unwrap_or("ttft,tpot,itl,e2el,audio_ttfp,audio_rtf"),
    )
    .map_err(|e| errors.push(err("percentile_metrics", e.to_string())))
    .unwrap_or_default();
    let percentiles = crate::workload::omni::bench_metrics::parse_percentiles(
        p.metric_percentiles.as_deref().unwrap_or("99"),
    )
    .map_err(|e| errors.push(err("metric_percentiles", e.to_string())))
    .unwrap_or_default();
    let ref_audio = ref_audio(input, &p, base, &mut errors);
    let subsets = match &p.subsets {
        None => Subset::ALL.to_vec(),
        Some(names) => Subset::parse_list(names).unwrap_or_else(|e| {
            errors.push(err("subsets", e.to_string()));
            Vec::new()
        }),
    };
    let (cases, warnings) = discover_cases(input, &p, base, &subsets, &mut errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    let settings_base = settings_base(&p, pacing);
    let media_opts = MediaOptions {
        media_timeout_s: p.media_timeout_s.unwrap_or(600.0),
        max_duration_s: p.max_video_duration_s.unwrap_or(3600.0),
        ..MediaOptions::default()
    };
    if let Some(d) = &p.result_dir {
        p.result_dir = Some(base.join(d));
    }
    Ok(Box::new(OmniWorkload {
        output_dir: base.join(
            p.output_dir
                .clone()
                .unwrap_or_else(|| "omniinteract-output".into()),
        ),
        params: p,
        cases,
        warnings,
        settings_base,
        media_opts,
        ref_audio,
        prepared: OnceLock::new(),
        descriptor: OnceLock::new(),
        lock: Mutex::new(None),
        goodput,
        selected,
        percentiles,
        api_key: std::env::var("OPENAI_API_KEY")
            .ok()
            .filter(|k| !k.is_empty())
            .map(crate::workload::Secret::new),
    }))
}

/// `ref_audio` (relative to the scenario's folder `base`): required, and must exist.
fn ref_audio(
    input: &WorkloadInput<'_>,
    p: &OmniParams,
    base: &Path,
    errors: &mut Vec<ScenarioError>,
) -> PathBuf {
    match &p.ref_audio {
        None => {
            errors.push(input.file_error("[workload] needs `ref_audio = \"path/to/reference.wav\"` (the PR's --omniinteract-ref-audio); `rtload dataset synth DIR` writes one as DIR/ref_audio.wav"));
            PathBuf::new()
        }
        Some(r) => {
            let path = base.join(r);
            if !path.is_file() {
                errors.push(input.key_error(
                    "ref_audio",
                    format!(
                        "`ref_audio` file does not exist: {}; point it at the reference voice \
                         WAV (relative to the scenario file), or write one with \
                         `rtload dataset synth DIR` (DIR/ref_audio.wav)",
                        path.display()
                    ),
                ));
            }
            path
        }
    }
}

/// The dataset's cases and warnings for `subsets`, when every other key is valid (with
/// `check_only`, an archive is not extracted: its cases stay unknown); otherwise only
/// whether the dataset exists.
fn discover_cases(
    input: &WorkloadInput<'_>,
    p: &OmniParams,
    base: &Path,
    subsets: &[Subset],
    errors: &mut Vec<ScenarioError>,
) -> (Vec<Case>, Vec<String>) {
    let (cases, warnings) = match &p.dataset_path {
        None => {
            errors.push(input.file_error("[workload] needs `dataset_path` (a local OmniInteract directory or archive); `rtload dataset synth DIR` makes a small one"));
            (Vec::new(), Vec::new())
        }
        Some(d) if errors.is_empty() => {
            let n = input.samples_requested.unwrap_or(3);
            let root = if input.check_only {
                dataset::layout::resolve_data_root_dry(&base.join(d))
            } else {
                dataset::resolve_data_root(&base.join(d)).map(Some)
            };
            root.and_then(|root| match root {
                Some(root) => dataset::discover(
                    &root,
                    subsets,
                    n,
                    input.seed,
                    p.disable_shuffle.unwrap_or(false),
                )
                .map(|s| (s.cases, s.warnings)),
                None => Ok((Vec::new(), vec![NOT_EXTRACTED.to_string()])),
            })
            .unwrap_or_else(|e| {
                errors.push(input.key_error("dataset_path", e.to_string()));
                (Vec::new(), Vec::new())
            })
        }
        Some(d) => {
            // Other errors already stop the run; still say whether the dataset exists.
            let full = base.join(d);
            if !full.exists() {
                errors.push(input.key_error(
                    "dataset_path",
                    dataset::DatasetError::NotLocal(full).to_string(),
                ));
            }
            (Vec::new(), Vec::new())
        }
    };
    (cases, warnings)
}

/// How the client ends a turn (`[workload] turn_detection`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TurnDetection {
    /// An explicit `input_audio_buffer.commit` with `"final": false`.
    #[default]
    Commit,
    /// Nothing: the server's voice detection hears the end of speech.
    ServerVad,
}

/// The per-session settings every case starts from.
fn settings_base(p: &OmniParams, pacing: PacingMode) -> DuplexSettings {
    let mut settings_base = DuplexSettings::new(
        p.model.clone().unwrap_or_else(|| DEFAULT_MODEL.into()),
        Arc::from(""),
    );
    settings_base.timeout_s = p.timeout_s.unwrap_or(900.0);
    settings_base.require_response = p.require_response.unwrap_or(false);
    settings_base.incremental_acks = p.incremental_acks.unwrap_or(false);
    settings_base.pacing = pacing;
    // Barge-in and server-VAD turns need the server's voice detection.
    settings_base.server_vad = p.barge_in_after_ms.is_some()
        || (p.speaks_turns() && p.turn_detection == Some(TurnDetection::ServerVad));
    if let Some(n) = p.max_events_per_session {
        settings_base.max_events = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(n) = p.max_audio_bytes_per_session {
        settings_base.max_audio_bytes = n;
    }
    settings_base.extra_body = p
        .extra_body
        .as_ref()
        .and_then(|t| serde_json::to_value(t).ok())
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default();
    settings_base
}

impl OmniWorkload {
    /// The listener's prebuffer, ms.
    pub(super) fn prebuffer_ms(&self) -> f64 {
        self.params.playback_prebuffer_ms.unwrap_or(0.0)
    }
}

/// `"realtime"`, `"saturate"` or `"<factor>x"` (shared with every paced workload).
pub use crate::util::pacing::parse_pacing;

impl OmniWorkload {
    fn make_descriptor(&self) -> Descriptor {
        let mut d = Descriptor::new(
            KIND,
            "/v1/realtime",
            self.cases.len(),
            super::report::catalogue(&self.percentiles),
        );
        d.params = self.params();
        d.headline = "audio ttfp".into();
        d.output_dir = Some(self.output_dir.clone());
        d.output_keys = vec!["output_dir", "result_dir"];
        d.reject_patterns = super::capacity::reject_patterns();
        d.playback = crate::workload::playback::PlaybackConfig {
            buffer_units: 1,
            prebuffer_s: self.prebuffer_ms() / 1000.0,
        };
        d.warnings = self
            .warnings
            .iter()
            .map(|w| format!("warning: {w}"))
            .collect();
        d
    }

    fn params(&self) -> Vec<(String, String)> {
        let subsets: Vec<String> = self
            .cases
            .iter()
            .map(|c| c.subset.name().to_string())
            .collect();
        vec![
            ("model".into(), self.settings_base.model.clone()),
            (
                "cases".into(),
                format!("{} selected ({})", self.cases.len(), subsets.join(", ")),
            ),
            ("pacing".into(), self.settings_base.pacing.to_string()),
            ("ref audio".into(), self.ref_audio.display().to_string()),
            ("artifacts".into(), self.output_dir.display().to_string()),
        ]
    }
}

impl Workload for OmniWorkload {
    type Session = MaybeFailed<DuplexSession>;

    fn descriptor(&self) -> &Descriptor {
        self.descriptor.get_or_init(|| self.make_descriptor())
    }

    fn spool(&self) -> Option<&Spool> {
        self.prepared.get().map(|p| &p.spool)
    }

    fn headline_ms(&self, rec: &SampleRecord<Option<DuplexOutput>>) -> Option<f64> {
        let out = rec.output.as_ref().and_then(Option::as_ref);
        out.and_then(|o| o.mean_ttfp_ms)
    }

    fn prepare(&self) -> Result<Vec<String>, WorkloadError> {
        if self.prepared.get().is_some() {
            return Ok(Vec::new());
        }
        let warnings = self.prepare_inputs().map_err(WorkloadError::Prepare)?;
        self.check_space().map_err(WorkloadError::NoSpace)?;
        Ok(warnings)
    }

    fn session(&self, ctx: &SessionContext) -> MaybeFailed<DuplexSession> {
        if let Err(e) = Workload::prepare(self) {
            return MaybeFailed::Failed(e.to_string());
        }
        self.prepared_session(ctx)
    }

    fn report(
        &self,
        run: RunRecord<Option<DuplexOutput>>,
    ) -> Result<Box<dyn Report>, WorkloadError> {
        let lock = self.lock.lock().unwrap_or_else(|p| p.into_inner()).take();
        let report = super::report::build(self, run);
        // The spool stays open: a sweep or suite runs this workload (prepared once) again,
        // and its next run spools into it. It is removed when the workload is dropped.
        drop(lock);
        report
            .map(|r| Box::new(r) as Box<dyn Report>)
            .map_err(WorkloadError::Report)
    }
}

impl OmniWorkload {
    /// The output lock, the cleared outputs, the reference audio and every case's
    /// media, once; what the user should know (the lock's warning).
    fn prepare_inputs(&self) -> Result<Vec<String>, String> {
        let limit = self
            .params
            .lock_timeout_s
            .map(std::time::Duration::from_secs_f64);
        let lock =
            OutputLock::acquire_within(&self.output_dir, limit).map_err(|e| e.to_string())?;
        let warnings: Vec<String> = lock
            .warning()
            .map(|w| format!("warning: {w}"))
            .into_iter()
            .collect();
        let layouts: Vec<CaseLayout> = self
            .cases
            .iter()
            .map(|c| CaseLayout::new(c.subset.name(), &c.video_rel))
            .collect();
        clear_outputs(&self.output_dir, &layouts).map_err(|e| e.to_string())?;
        *self.lock.lock().unwrap_or_else(|p| p.into_inner()) = Some(lock);
        let mut settings = self.settings_base.clone();
        settings.ref_audio =
            media::ref_audio_data_url(&self.ref_audio).map_err(|e| e.to_string())?;
        let p = &self.params;
        let media = upload::pack_all(
            &self.cases,
            |c| media::prepare(&c.video_path, &self.media_opts).map_err(|e| e.to_string()),
            |up, m| match p.barge_in_after_ms {
                Some(_) => up.with_speech(m, p.barge_in_speech_ms.unwrap_or(1000.0)),
                None if p.speaks_turns() => up.with_turn_speech(m),
                None => up,
            },
        )?;
        let spool = Spool::create(&std::env::temp_dir())
            .map_err(|e| format!("cannot create the capture spool: {e}"))?;
        let _ = self.prepared.set(Prepared {
            settings: Arc::new(settings),
            media,
            spool,
        });
        Ok(warnings)
    }

    /// The bundles this run publishes must fit on the output folder's filesystem
    /// (`artifacts::space`): checked once media durations are known, before timing. When
    /// the free space cannot be read, the writes are still checked one by one.
    fn check_space(&self) -> Result<(), String> {
        use crate::workload::omni::artifacts::space;
        let Some(prepared) = self.prepared.get() else {
            return Ok(());
        };
        let Ok(free) = space::free_bytes(&self.output_dir) else {
            return Ok(());
        };
        // The first `samples` measured indices cycle over the cases: each case they
        // reach publishes one bundle (a shard publishes a part of them).
        let runs = self.descriptor().samples.min(self.cases.len());
        let cases: Vec<(u64, u64)> = self
            .cases
            .iter()
            .zip(&prepared.media)
            .take(runs)
            .map(|(c, m)| {
                let dir = CaseLayout::new(c.subset.name(), &c.video_rel).dir(&self.output_dir);
                (
                    space::bundle_bytes(m.duration_s),
                    space::bundle_bytes_on_disk(&dir),
                )
            })
            .collect();
        space::shortfall(&self.output_dir, &cases, free).map_or(Ok(()), Err)
    }

    fn prepared_session(&self, ctx: &SessionContext) -> MaybeFailed<DuplexSession> {
        let Some(prepared) = self.prepared.get() else {
            return MaybeFailed::Failed("media was not prepared".into());
        };
        let n = self.cases.len().max(1);
        let case_idx = ctx.case_index(n);
        let case = &self.cases[case_idx];
        let request = ctx.request_id.clone().unwrap_or_else(random_hex32);
        let session_id = super::url::session_id(
            case.subset.name(),
            Some(&request),
            super::url::monotonic_ns(),
            0,
        );
        let mut session = DuplexSession::new(
            Arc::clone(&prepared.settings),
            Arc::clone(&prepared.media[case_idx]),
            session_id,
            !ctx.warmup,
        );
        if !ctx.warmup {
            session = session.with_spool(prepared.spool.session(), prepared.spool.session());
        }
        if self.params.barge_in_after_ms.is_some() && prepared.media[case_idx].speech.is_empty() {
            return MaybeFailed::Failed(format!(
                "barge-in: no 200 ms of {}'s audio is -40 dBFS or louder, so it has no speech to interrupt with; drop the case or the barge_in_* keys",
                case.video_rel
            ));
        }
        if let Some(lo) = self.params.barge_in_after_ms {
            let hi = self.params.barge_in_after_max_ms.unwrap_or(lo);
            session = session.with_barge_in(super::session::barge::offset_ms(lo, hi, ctx.idx));
        } else if self.params.speaks_turns() {
            let (n, gap, explicit, held) = self.params.turn_plan(ctx.hold_s);
            session = session.with_turns(n, gap, explicit, held);
        }
        MaybeFailed::Ready(session.with_request(ctx.request_id.clone(), self.api_key.clone()))
    }
}

fn random_hex32() -> String {
    format!("{:032x}", rand::random::<u128>())
}

#[cfg(test)]
#[path = "workload_tests.rs"]
mod tests;
