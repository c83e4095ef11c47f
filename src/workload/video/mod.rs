//! The LingBot-World realtime video cadence workload (`kind = "video-cadence"`, spec §2,
//! §5.3, §6.2, §6.3): one `/v1/realtime/video` rollout per sample, measuring chunk cadence
//! against a viewer's real-time deadline.
//!
//! [`rollout`] builds what is sent, [`session`] is the per-sample state machine,
//! [`metrics`] and [`report`] are the reference's formulas and terminal report, [`output`]
//! assembles the JSON result.

pub mod image;
pub mod metrics;
pub mod names;
pub mod output;
pub mod report;
pub mod rollout;
pub mod session;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::util::scenario_error::{ScenarioError, parse_section};
use crate::workload::{Report, RunRecord, Session, SessionContext, Workload, WorkloadInput};
use metrics::MetricsConfig;
use rollout::{Rollout, RolloutOptions};
use session::{SessionSettings, VideoSession};

/// The registered kind name.
pub const KIND: &str = "video-cadence";

/// `[workload]` keys of a video-cadence scenario: the reference's options (§6.2) under the
/// same names. Everything is optional; defaults are the reference's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VideoParams {
    /// Always `"video-cadence"`.
    pub kind: String,
    /// Model id (`--model`).
    pub model: Option<String>,
    /// JSON rollout file (`--workload`), relative to the scenario's directory.
    pub workload_file: Option<PathBuf>,
    /// First frame: URL, data URL or local file (`--image`); default: generated.
    pub image: Option<String>,
    /// Prompt (`--prompt`).
    pub prompt: Option<String>,
    /// Negative prompt (`--negative-prompt`).
    pub negative_prompt: Option<String>,
    /// Chunks of the built-in workload (`--num-chunks`, default 16).
    pub num_chunks: Option<u32>,
    /// `forward`, `orbit` or `hold` (`--camera-pattern`).
    pub camera_pattern: Option<String>,
    /// Width, multiple of 16 (default 832).
    pub width: Option<u32>,
    /// Height, multiple of 16 (default 480).
    pub height: Option<u32>,
    /// Integer mux label sent to the server (`--fps`, default 16).
    pub fps: Option<u32>,
    /// Generation seed sent to the server (CLI `--video-seed`, default 42).
    pub seed: Option<i64>,
    /// `flow_shift` (default 5.0).
    pub flow_shift: Option<f64>,
    /// Real-time basis for RTF, deadline and playback (`--target-fps`, default `fps`).
    pub target_fps: Option<f64>,
    /// Chunks excluded from steady state (`--warmup-chunks`, default 6).
    pub warmup_chunks: Option<u32>,
    /// Steady chunk deadline (`--chunk-slo-ms`, default 12/target_fps·1000).
    pub chunk_slo_ms: Option<f64>,
    /// Chunks the simulated viewer buffers (`--playback-buffer-chunks`, default 1).
    pub playback_buffer_chunks: Option<u32>,
    /// Seconds to wait for the first chunk (`--first-chunk-timeout`, default 900).
    pub first_chunk_timeout: Option<f64>,
    /// Seconds to wait between chunks (`--chunk-timeout`, default 300).
    pub chunk_timeout: Option<f64>,
    /// `session.ping` period in seconds, 0 disables (`--ping-interval`, default 20).
    pub ping_interval: Option<f64>,
    /// One line per chunk as it arrives (`--print-chunks`).
    pub print_chunks: Option<bool>,
    /// Directory for each measured session's received media (`--save-video`).
    pub save_video: Option<PathBuf>,
}

/// A configured video-cadence workload.
#[derive(Debug)]
pub struct VideoWorkload {
    rollout: Rollout,
    settings: SessionSettings,
    metrics: MetricsConfig,
    save_video: Option<PathBuf>,
    samples: usize,
}

/// Build from a scenario (registered in `config::registry`).
pub fn build(input: &WorkloadInput<'_>) -> Result<Box<dyn Workload>, Vec<ScenarioError>> {
    let p: VideoParams =
        parse_section(input.path, input.src, "workload", input.overrides).map_err(|e| vec![e])?;
    let base = input.path.parent().unwrap_or(std::path::Path::new("."));
    let mut errors = Vec::new();
    let mut check = |ok: bool, key: &str, msg: String| {
        if !ok {
            errors.push(key_error(input, key, msg));
        }
    };
    let target_fps = p.target_fps;
    if let Some(v) = target_fps {
        check(
            v.is_finite() && v > 0.0,
            "target_fps",
            format!("`target_fps` must be > 0 (got {v}); e.g. `target_fps = 16`"),
        );
    }
    if let Some(v) = p.chunk_slo_ms {
        check(
            v.is_finite() && v > 0.0,
            "chunk_slo_ms",
            format!("`chunk_slo_ms` must be > 0 (got {v}); e.g. `chunk_slo_ms = 750`"),
        );
    }
    if let Some(v) = p.playback_buffer_chunks {
        check(
            v >= 1,
            "playback_buffer_chunks",
            format!("`playback_buffer_chunks` must be ≥ 1 (got {v})"),
        );
    }
    for (key, v) in [
        ("first_chunk_timeout", p.first_chunk_timeout),
        ("chunk_timeout", p.chunk_timeout),
    ] {
        if let Some(v) = v {
            check(
                v.is_finite() && v > 0.0,
                key,
                format!("`{key}` must be > 0 seconds (got {v})"),
            );
        }
    }
    if let Some(v) = p.ping_interval {
        check(
            v.is_finite() && v >= 0.0,
            "ping_interval",
            format!("`ping_interval` must be ≥ 0 seconds (got {v}); 0 disables pings"),
        );
    }
    // The built-in rollout's own checks stop at the first problem and have no position;
    // check the keys the scenario sets first, so each bad one is listed at its key.
    let before = errors.len();
    check_rollout_keys(&p, &mut |ok, key, msg| {
        if !ok {
            errors.push(key_error(input, key, msg));
        }
    });
    if errors.len() > before {
        return Err(errors);
    }
    let rollout = rollout::resolve(&rollout_options(&p), base)
        .map_err(|e| ScenarioError::file(input.path, format!("[workload]: {e}")));
    let rollout = match rollout {
        Ok(r) => r,
        Err(e) => {
            errors.push(e);
            return Err(errors);
        }
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut w = VideoWorkload::new(rollout, &p, base);
    w.samples = input.samples_requested.unwrap_or(1);
    Ok(Box::new(w))
}

/// The rollout values a scenario sets, each checked on its own: `check(ok, key, message)`.
fn check_rollout_keys(p: &VideoParams, check: &mut dyn FnMut(bool, &str, String)) {
    if let Some(n) = p.num_chunks {
        check(
            n >= 1,
            "num_chunks",
            format!("`num_chunks` must be ≥ 1 (got {n}); e.g. `num_chunks = 16`"),
        );
    }
    if let Some(pattern) = &p.camera_pattern {
        let known = rollout::CAMERA_PATTERNS
            .map(|c| format!("\"{c}\""))
            .join(", ");
        check(
            rollout::CAMERA_PATTERNS.contains(&pattern.as_str()),
            "camera_pattern",
            format!("unknown `camera_pattern` \"{pattern}\"; use one of {known}"),
        );
    }
    for (key, v) in [("width", p.width), ("height", p.height)] {
        if let Some(v) = v {
            let below = v / 16 * 16;
            let eg = if below == 0 {
                format!("`{key} = 16`")
            } else {
                format!("`{key} = {below}` or `{key} = {}`", below + 16)
            };
            check(
                v > 0 && v % 16 == 0,
                key,
                format!("`{key}` must be a positive multiple of 16 (got {v}); e.g. {eg}"),
            );
        }
    }
    if let Some(v) = p.fps {
        check(
            v > 0,
            "fps",
            format!("`fps` must be > 0 (got {v}); e.g. `fps = 16`"),
        );
    }
    if let Some(v) = p.flow_shift {
        check(
            v.is_finite(),
            "flow_shift",
            format!("`flow_shift` must be a finite number (got {v}); e.g. `flow_shift = 5.0`"),
        );
    }
}

fn rollout_options(p: &VideoParams) -> RolloutOptions {
    RolloutOptions {
        model: p.model.clone(),
        workload_file: p.workload_file.clone(),
        image: p.image.clone(),
        prompt: p.prompt.clone(),
        negative_prompt: p.negative_prompt.clone(),
        num_chunks: p.num_chunks,
        camera_pattern: p.camera_pattern.clone(),
        width: p.width,
        height: p.height,
        fps: p.fps,
        seed: p.seed,
        flow_shift: p.flow_shift,
    }
}

/// An error about `[workload] key`: a flag error when the CLI set it, else positioned at
/// the key in the file.
fn key_error(input: &WorkloadInput<'_>, key: &str, msg: String) -> ScenarioError {
    if input.overrides.contains_key(key) {
        return ScenarioError::Flag {
            flag: format!("--{}", key.replace('_', "-")),
            msg,
        };
    }
    match crate::util::scenario_error::key_span(input.src, "workload", key) {
        Some(span) => ScenarioError::at(input.path, input.src, span, msg),
        None => ScenarioError::file(input.path, format!("[workload]: {msg}")),
    }
}

impl VideoWorkload {
    fn new(rollout: Rollout, p: &VideoParams, base: &std::path::Path) -> Self {
        let target_fps = p.target_fps.unwrap_or(f64::from(rollout.fps));
        let secs =
            |v: Option<f64>, d: f64| Duration::from_secs_f64(v.unwrap_or(d).clamp(1e-3, 1e9));
        let ping = p.ping_interval.unwrap_or(20.0);
        let settings = SessionSettings {
            start_payload: Arc::from(rollout::session_start(&rollout).to_string()),
            prompt_updates: {
                let mut u = rollout.prompt_updates.clone();
                u.sort_by_key(|u| u.after_chunk);
                Arc::from(u)
            },
            num_chunks: rollout.num_chunks(),
            num_frames: rollout.num_frames(),
            target_fps,
            first_chunk_timeout: secs(p.first_chunk_timeout, 900.0),
            chunk_timeout: secs(p.chunk_timeout, 300.0),
            ping_interval: (ping > 0.0).then(|| Duration::from_secs_f64(ping)),
            print_chunks: p.print_chunks.unwrap_or(false),
        };
        let metrics = MetricsConfig {
            fps: target_fps,
            warmup_chunks: p.warmup_chunks.unwrap_or(metrics::DEFAULT_WARMUP_CHUNKS),
            slo_ms: p.chunk_slo_ms,
            buffer_chunks: p.playback_buffer_chunks.unwrap_or(1),
        };
        Self {
            rollout,
            settings,
            metrics,
            save_video: p.save_video.as_ref().map(|d| base.join(d)),
            samples: 1,
        }
    }
}

impl Workload for VideoWorkload {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn default_path(&self) -> &'static str {
        "/v1/realtime/video"
    }

    fn describe(&self) -> Vec<(String, String)> {
        let r = &self.rollout;
        vec![
            ("model".into(), r.model.clone()),
            (
                "rollout".into(),
                format!(
                    "{} chunks = {} frames, {}x{}, mux {} fps, camera {}",
                    r.num_chunks(),
                    r.num_frames(),
                    r.width,
                    r.height,
                    r.fps,
                    r.camera_pattern
                ),
            ),
            (
                "real-time basis".into(),
                format!(
                    "{} fps, chunk deadline {:.1} ms, warm-up chunks {}, playback buffer {}",
                    self.metrics.fps,
                    metrics::chunk_deadline_ms(self.metrics.fps, self.metrics.slo_ms),
                    self.metrics.warmup_chunks,
                    self.metrics.buffer_chunks
                ),
            ),
            ("image".into(), r.image_source.clone()),
            ("prompt updates".into(), r.prompt_updates.len().to_string()),
        ]
    }

    fn samples(&self) -> usize {
        self.samples
    }

    fn metric_names(&self) -> Vec<String> {
        names::all_names(&self.metrics)
    }

    fn expected_session_s(&self) -> Option<f64> {
        // The whole rollout at the real-time basis.
        Some(f64::from(self.rollout.num_frames()) / self.metrics.fps)
    }

    fn headline_name(&self) -> &'static str {
        "ttfc"
    }

    fn headline_ms(&self, rec: &crate::workload::SampleRecord) -> Option<f64> {
        let out = rec
            .output
            .as_ref()
            .and_then(|o| o.downcast_ref::<session::VideoOutput>());
        out.and_then(|o| o.ttfc_s).map(|s| s * 1000.0)
    }

    fn playback_buffer(&self) -> u32 {
        self.metrics.buffer_chunks
    }

    fn artifact_root(&self) -> Option<PathBuf> {
        self.save_video.clone()
    }

    fn warnings(&self) -> Vec<String> {
        let n = self.rollout.num_chunks();
        if self.metrics.warmup_chunks.max(1) + 1 >= n {
            vec![format!(
                "warning: warmup_chunks={} leaves no non-terminal steady chunk in a {n}-chunk rollout; steady-state metrics will be missing (use num_chunks > {})",
                self.metrics.warmup_chunks,
                self.metrics.warmup_chunks.max(1) + 1
            )]
        } else {
            Vec::new()
        }
    }

    fn session(&self, ctx: &SessionContext) -> Box<dyn Session> {
        let save_as = (!ctx.warmup && self.save_video.is_some())
            .then(|| PathBuf::from(format!("session-{:03}.mp4", ctx.idx)));
        Box::new(VideoSession::new(self.settings.clone(), ctx.idx, save_as))
    }

    fn report(&self, run: RunRecord) -> Result<Box<dyn Report>, String> {
        output::build_report(&self.rollout, &self.metrics, run)
            .map(|r| Box::new(r) as Box<dyn Report>)
    }
}
