//! The configured `realtime-transcription` workload: `[workload]` parameters with
//! positioned errors, dataset discovery at build time, audio decoding before timing,
//! one [`TranscriptionSession`] per sample.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use serde::Deserialize;

use super::KIND;
use super::dataset::DecodeOptions;
use super::dataset::{self, Item};
use super::protocol::Settings;
use super::session::{TranscriptionOutput, TranscriptionSession};
use crate::util::pacing::parse_pacing;
use crate::util::packed::Packer;
use crate::util::scenario_error::ScenarioError;
use crate::workload::{
    Descriptor, DynWorkload, FlagKind, FlagSpec, MaybeFailed, Report, RunRecord, SampleRecord,
    SessionContext, Workload, WorkloadError, WorkloadInput,
};

/// Model named in `session.update` when the scenario names none.
pub const DEFAULT_MODEL: &str = "mistralai/Voxtral-Mini-4B-Realtime-2602";

/// `[workload]` keys of a `realtime-transcription` scenario.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TranscriptionParams {
    /// Always `"realtime-transcription"`.
    pub kind: String,
    /// Model named in `session.update`.
    pub model: Option<String>,
    /// Directory of audio files (with optional `<name>.txt` references) or a JSONL
    /// manifest `{"audio": path, "text": reference}`, relative to the scenario; required.
    pub dataset_path: Option<PathBuf>,
    /// Sample rate the audio is resampled to and sent at, Hz (default 16000). Range
    /// [4000, 192000].
    pub sample_rate: Option<u32>,
    /// Audio per `input_audio_buffer.append`, ms (default 200). Range [1, 60000].
    pub chunk_ms: Option<u32>,
    /// `"realtime"` (default), `"saturate"` (as fast as the socket takes it), or `"<f>x"`.
    pub pacing: Option<String>,
    /// Seconds to wait for `session.created` (default 30). Range (0, 1e9].
    pub created_timeout_s: Option<f64>,
    /// Seconds to wait for `transcription.done` after the final commit (default 60).
    /// Range (0, 1e9].
    pub done_timeout_s: Option<f64>,
    /// Per ffmpeg decode, seconds (default 600). Range (0, 1e9].
    pub media_timeout_s: Option<f64>,
    /// Longest accepted audio file, seconds (default 3600). Range (0, 1e9].
    pub max_duration_s: Option<f64>,
}

/// The command-line options of the transcription workload: the `vllm bench serve` names
/// it shares with the other kinds; each sets the `[workload]` key beside it.
pub const FLAGS: &[FlagSpec] = &[
    FlagSpec {
        key: "model",
        flag: "model",
        help: "Model named in session.update",
        value_name: "MODEL",
        kind: FlagKind::Text,
    },
    FlagSpec {
        key: "dataset_path",
        flag: "dataset-path",
        help: "Directory of audio files or a JSONL manifest",
        value_name: "PATH",
        kind: FlagKind::Path,
    },
    FlagSpec {
        key: "pacing",
        flag: "pacing",
        help: "realtime, saturate, or a speed factor like 2x",
        value_name: "MODE",
        kind: FlagKind::Text,
    },
];

/// A configured transcription workload.
pub struct TranscriptionWorkload {
    pub(super) settings: Arc<Settings>,
    pub(super) items: Vec<Item>,
    pub(super) samples: usize,
    media: DecodeOptions,
    pub(super) prepared: OnceLock<Vec<Bytes>>,
    /// What this workload is, built on first use.
    descriptor: OnceLock<Descriptor>,
}

impl std::fmt::Debug for TranscriptionWorkload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TranscriptionWorkload")
            .field("items", &self.items.len())
            .finish_non_exhaustive()
    }
}

/// Build from a scenario (registered in `config::registry`).
pub fn build(input: &WorkloadInput<'_>) -> Result<Box<dyn DynWorkload>, Vec<ScenarioError>> {
    let p: TranscriptionParams = input.params()?;
    let base = input.base_dir();
    let mut errors = Vec::new();
    let err = |key: &str, msg: String| input.key_error(key, msg);
    for (key, v) in [
        ("created_timeout_s", p.created_timeout_s),
        ("done_timeout_s", p.done_timeout_s),
        ("media_timeout_s", p.media_timeout_s),
        ("max_duration_s", p.max_duration_s),
    ] {
        if let Some(v) = v.filter(|v| !(v.is_finite() && *v > 0.0 && *v <= 1e9)) {
            errors.push(err(
                key,
                format!("`{key}` must be a number of seconds in (0, 1e9] (got {v})"),
            ));
        }
    }
    let rate = p.sample_rate.unwrap_or(16_000);
    if !(4_000..=192_000).contains(&rate) {
        errors.push(err(
            "sample_rate",
            format!("`sample_rate` must be 4000..=192000 Hz (got {rate}); vLLM expects 16000"),
        ));
    }
    let chunk_ms = p.chunk_ms.unwrap_or(200);
    if !(1..=60_000).contains(&chunk_ms) {
        errors.push(err(
            "chunk_ms",
            format!("`chunk_ms` must be 1..=60000 (got {chunk_ms}); e.g. `chunk_ms = 200`"),
        ));
    }
    let pacing = parse_pacing(p.pacing.as_deref()).unwrap_or_else(|msg| {
        errors.push(err("pacing", msg));
        Default::default()
    });
    let items = match &p.dataset_path {
        None => {
            errors.push(input.file_error("[workload] needs `dataset_path` (a directory of audio files or a .jsonl manifest); `rtload dataset synth --kind transcription DIR` writes a small one"));
            Vec::new()
        }
        Some(d) => dataset::discover(&base.join(d)).unwrap_or_else(|e| {
            errors.push(err("dataset_path", e.to_string()));
            Vec::new()
        }),
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    let settings = Settings {
        model: p.model.clone().unwrap_or_else(|| DEFAULT_MODEL.into()),
        sample_rate: rate,
        chunk_ms,
        pacing,
        created_timeout_s: p.created_timeout_s.unwrap_or(30.0),
        done_timeout_s: p.done_timeout_s.unwrap_or(60.0),
    };
    Ok(Box::new(TranscriptionWorkload {
        settings: Arc::new(settings),
        samples: input.samples_requested.unwrap_or(items.len()),
        items,
        media: DecodeOptions {
            timeout_s: p.media_timeout_s.unwrap_or(600.0),
            max_duration_s: p.max_duration_s.unwrap_or(3600.0),
            ..DecodeOptions::default()
        },
        prepared: OnceLock::new(),
        descriptor: OnceLock::new(),
    }))
}

impl TranscriptionWorkload {
    fn make_descriptor(&self) -> Descriptor {
        let mut d = Descriptor::new(
            KIND,
            "/v1/realtime",
            self.samples,
            super::metrics::catalogue(),
        );
        d.params = self.params();
        d.headline = "ttft".into();
        d.warnings = self.warnings();
        d.expected_session_s = self.expected_session_s();
        d
    }

    fn params(&self) -> Vec<(String, String)> {
        let s = &self.settings;
        let refs = self.items.iter().filter(|i| i.reference.is_some()).count();
        vec![
            ("model".into(), s.model.clone()),
            (
                "dataset".into(),
                format!(
                    "{} file(s), {refs} with a reference transcript",
                    self.items.len()
                ),
            ),
            (
                "audio".into(),
                format!(
                    "PCM16 mono {} Hz, {} ms per append",
                    s.sample_rate, s.chunk_ms
                ),
            ),
            ("pacing".into(), s.pacing.to_string()),
        ]
    }

    fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.items.iter().all(|i| i.reference.is_none()) {
            w.push("warning: no file has a reference transcript (<name>.txt or a manifest \"text\"): WER will be absent".into());
        }
        if self.settings.sample_rate != 16_000 {
            w.push(format!(
                "warning: sample_rate = {} Hz; vLLM's realtime transcription expects 16000 Hz PCM16",
                self.settings.sample_rate
            ));
        }
        w
    }

    fn expected_session_s(&self) -> Option<f64> {
        // The longest file at the pacing speed, when every file is a WAV whose header
        // says how long it is (others are only known after decoding).
        let longest = self
            .items
            .iter()
            .map(|i| {
                let r = hound::WavReader::open(&i.path).ok()?;
                Some(f64::from(r.duration()) / f64::from(r.spec().sample_rate.max(1)))
            })
            .collect::<Option<Vec<f64>>>()?
            .into_iter()
            .fold(0.0, f64::max);
        let one_second = std::time::Duration::from_secs(1);
        let speed = self.settings.pacing.due_after_media(one_second)?;
        Some(longest * speed.as_secs_f64())
    }
}

impl Workload for TranscriptionWorkload {
    type Session = MaybeFailed<TranscriptionSession>;

    fn descriptor(&self) -> &Descriptor {
        self.descriptor.get_or_init(|| self.make_descriptor())
    }

    fn headline_ms(&self, rec: &SampleRecord<Option<TranscriptionOutput>>) -> Option<f64> {
        let out = rec.output.as_ref()?.as_ref()?;
        super::metrics::session_metrics(&out.record, None).ttft_ms
    }

    fn prepare(&self) -> Result<Vec<String>, WorkloadError> {
        if self.prepared.get().is_some() {
            return Ok(Vec::new());
        }
        // Each item's PCM packed into huge pages (`util::packed`): read once per send,
        // seconds after it was loaded.
        let packing = |e: std::io::Error| {
            WorkloadError::Prepare(format!("cannot keep the prepared audio: {e}"))
        };
        let mut packer = Packer::new();
        let tickets = (self.items.iter())
            .map(|i| {
                let pcm = dataset::load_pcm(&i.path, self.settings.sample_rate, &self.media)
                    .map_err(|e| WorkloadError::Prepare(e.to_string()))?;
                packer.push(&pcm).map_err(packing)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let packed = packer.finish().map_err(packing)?;
        let pcm = packed.get_all(&tickets).map_err(packing)?;
        let _ = self.prepared.set(pcm);
        Ok(Vec::new())
    }

    fn session(&self, ctx: &SessionContext) -> MaybeFailed<TranscriptionSession> {
        if let Err(e) = Workload::prepare(self) {
            return MaybeFailed::Failed(e.to_string());
        }
        let Some(pcm) = self.prepared.get() else {
            return MaybeFailed::Failed("audio was not prepared".into());
        };
        let item = ctx.case_index(self.items.len());
        MaybeFailed::Ready(TranscriptionSession::new(
            Arc::clone(&self.settings),
            pcm[item].clone(),
            item,
        ))
    }

    fn report(
        &self,
        run: RunRecord<Option<TranscriptionOutput>>,
    ) -> Result<Box<dyn Report>, WorkloadError> {
        Ok(Box::new(super::report::build(self, run)))
    }
}
