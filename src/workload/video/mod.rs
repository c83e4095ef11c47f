//! The LingBot-World realtime video cadence workload (`kind = "video-cadence"`, spec §2,
//! §5.3, §6.2, §6.3): one `/v1/realtime/video` rollout per sample, measuring chunk cadence
//! against a viewer's real-time deadline.
//!
//! [`rollout`] builds what is sent, [`session`] is the per-sample state machine (reading
//! each chunk's metadata through [`chunk_meta`]),
//! [`metrics`] and [`report`] are the reference's formulas and terminal report, [`output`]
//! assembles the JSON result.

pub mod chunk_meta;
mod flags;
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

use serde::Deserialize;

use crate::util::scenario_error::ScenarioError;
use crate::workload::spool::Spool;
use crate::workload::{
    Descriptor, Report, RunRecord, SessionContext, Workload, WorkloadError, WorkloadInput,
};
pub use flags::FLAGS;
use metrics::MetricsConfig;
use rollout::{Rollout, RolloutOptions};
use session::{SaveAs, SessionSettings, VideoSession};

/// The registered kind name.
pub const KIND: &str = "video-cadence";

/// `[workload]` keys of a video-cadence scenario: the reference's options (§6.2) under the
/// same names. Everything is optional; defaults are the reference's.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VideoParams {
    /// Always `"video-cadence"`.
    pub kind: String,
    /// Model id (`--model`).
    pub model: Option<String>,
    /// JSON rollout file (`--workload`), relative to the scenario's directory. It wins:
    /// `num_chunks` and `camera_pattern` (built-in rollout only) are then ignored.
    pub workload_file: Option<PathBuf>,
    /// First frame: URL, data URL or local file (`--image`); default: generated.
    pub image: Option<String>,
    /// Prompt (`--prompt`).
    pub prompt: Option<String>,
    /// Negative prompt (`--negative-prompt`).
    pub negative_prompt: Option<String>,
    /// Chunks of the built-in workload (`--num-chunks`, default 16). Range [1, 1000000].
    pub num_chunks: Option<u32>,
    /// `forward`, `orbit` or `hold` (`--camera-pattern`).
    pub camera_pattern: Option<String>,
    /// Width, multiple of 16 in [16, 4096] (default 832).
    pub width: Option<u32>,
    /// Height, multiple of 16 in [16, 4096] (default 480).
    pub height: Option<u32>,
    /// Integer mux label sent to the server (`--fps`, default 16). Range [1, 1000].
    pub fps: Option<u32>,
    /// Generation seed sent to the server (CLI `--video-seed`, default 42).
    pub seed: Option<i64>,
    /// `flow_shift` (default 5.0), any finite number.
    pub flow_shift: Option<f64>,
    /// Real-time basis for RTF, deadline and playback (`--target-fps`, default `fps`).
    /// Range (0, 1000].
    pub target_fps: Option<f64>,
    /// Chunks excluded from steady state (`--warmup-chunks`, default 6). Range
    /// [0, 1000000].
    pub warmup_chunks: Option<u32>,
    /// Steady chunk deadline (`--chunk-slo-ms`, default 12/target_fps·1000). Range
    /// (0, 1e9] ms.
    pub chunk_slo_ms: Option<f64>,
    /// Chunks the simulated viewer buffers (`--playback-buffer-chunks`, default 1). Range
    /// [1, 1000000], and at most the rollout's chunk count.
    pub playback_buffer_chunks: Option<u32>,
    /// Seconds to wait for the first chunk (`--first-chunk-timeout`, default 900). Range
    /// (0, 1e9].
    pub first_chunk_timeout: Option<f64>,
    /// Seconds to wait between chunks (`--chunk-timeout`, default 300). Range (0, 1e9].
    pub chunk_timeout: Option<f64>,
    /// `session.ping` period in seconds, 0 disables (`--ping-interval`, default 20). Range
    /// [0, 1e9].
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
    /// The run's spool for `--save-video` (created by `prepare`; shared by a sweep's
    /// points, removed when the workload is dropped).
    spool: std::sync::OnceLock<Arc<Spool>>,
    samples: usize,
    /// Built-in rollout keys set next to a workload file (ignored; said in a warning).
    ignored: Vec<&'static str>,
    /// What this workload is, built on first use (once configured).
    descriptor: std::sync::OnceLock<Descriptor>,
}

/// Build from a scenario (registered in `config::registry`).
pub fn build(
    input: &WorkloadInput<'_>,
) -> Result<Box<dyn crate::workload::DynWorkload>, Vec<ScenarioError>> {
    let p: VideoParams = input.params()?;
    let base = input.base_dir();
    let mut errors = Vec::new();
    check_settings(&p, &mut |ok, key, msg| {
        if !ok {
            errors.push(input.key_error(key, msg));
        }
    });
    // The built-in rollout's own checks stop at the first problem and have no position;
    // check the keys the scenario sets first, so each bad one is listed at its key.
    check_rollout_keys(&p, &mut |ok, key, msg| {
        if !ok {
            errors.push(input.key_error(key, msg));
        }
    });
    if !errors.is_empty() {
        return Err(errors);
    }
    let rollout = rollout::resolve(&rollout_options(&p), base)
        .map_err(|e| vec![input.file_error(format!("[workload]: {e}"))])?;
    if let Some(depth) = p.playback_buffer_chunks
        && depth > rollout.num_chunks()
    {
        let n = rollout.num_chunks();
        return Err(vec![input.key_error(
            "playback_buffer_chunks",
            format!(
                "`playback_buffer_chunks` = {depth} is deeper than the rollout ({n} chunks): playback \
                 could never start; use a value in [1, {n}] or more chunks"
            ),
        )]);
    }
    let mut w = VideoWorkload::new(rollout, &p, base);
    w.samples = input.samples_requested.unwrap_or(1);
    w.ignored = ignored_builtin_keys(&p);
    Ok(Box::new(w))
}

/// Largest `num_chunks` and `warmup_chunks` (the embedded server's own limit).
const MAX_CHUNKS: u32 = 1_000_000;
/// Largest `width` / `height`.
const MAX_SIDE: u32 = 4096;
/// Largest `fps` / `target_fps`.
const MAX_FPS: u32 = 1000;
/// Largest timeout, interval or SLO in seconds (or, for `chunk_slo_ms`, milliseconds).
const MAX_SECONDS: f64 = 1e9;

/// `[workload]` keys of the built-in rollout that a workload file overrides.
const BUILTIN_ONLY: [&str; 2] = ["num_chunks", "camera_pattern"];

/// The built-in-only keys set alongside a workload file (ignored: the file wins).
fn ignored_builtin_keys(p: &VideoParams) -> Vec<&'static str> {
    let set = [p.num_chunks.is_some(), p.camera_pattern.is_some()];
    if p.workload_file.is_none() {
        return Vec::new();
    }
    BUILTIN_ONLY
        .into_iter()
        .zip(set)
        .filter_map(|(k, s)| s.then_some(k))
        .collect()
}

/// The timing and metric settings, each checked against its documented range:
/// `check(ok, key, message)`.
fn check_settings(p: &VideoParams, check: &mut dyn FnMut(bool, &str, String)) {
    let num = crate::util::textpos::num;
    let in_range = |v: f64, lo_open: bool, hi: f64| {
        v.is_finite() && (if lo_open { v > 0.0 } else { v >= 0.0 }) && v <= hi
    };
    if let Some(v) = p.target_fps {
        check(
            in_range(v, true, f64::from(MAX_FPS)),
            "target_fps",
            format!(
                "`target_fps` must be {} (got {}); range (0, {MAX_FPS}], e.g. `target_fps = 16`",
                if v > 0.0 { "≤ 1000" } else { "> 0" },
                num(v)
            ),
        );
    }
    if let Some(v) = p.chunk_slo_ms {
        check(
            in_range(v, true, MAX_SECONDS),
            "chunk_slo_ms",
            format!(
                "`chunk_slo_ms` must be in (0, 1e9] ms (got {}); e.g. `chunk_slo_ms = 750`",
                num(v)
            ),
        );
    }
    if let Some(v) = p.playback_buffer_chunks {
        check(
            (1..=MAX_CHUNKS).contains(&v),
            "playback_buffer_chunks",
            format!("`playback_buffer_chunks` must be in [1, {MAX_CHUNKS}] (got {v})"),
        );
    }
    if let Some(v) = p.warmup_chunks {
        check(
            v <= MAX_CHUNKS,
            "warmup_chunks",
            format!("`warmup_chunks` must be in [0, {MAX_CHUNKS}] (got {v})"),
        );
    }
    for (key, v) in [
        ("first_chunk_timeout", p.first_chunk_timeout),
        ("chunk_timeout", p.chunk_timeout),
    ] {
        if let Some(v) = v {
            check(
                in_range(v, true, MAX_SECONDS),
                key,
                format!("`{key}` must be in (0, 1e9] seconds (got {})", num(v)),
            );
        }
    }
    if let Some(v) = p.ping_interval {
        check(
            in_range(v, false, MAX_SECONDS),
            "ping_interval",
            format!(
                "`ping_interval` must be in [0, 1e9] seconds (got {}); 0 disables pings",
                num(v)
            ),
        );
    }
}

/// The rollout values a scenario sets, each checked on its own: `check(ok, key, message)`.
fn check_rollout_keys(p: &VideoParams, check: &mut dyn FnMut(bool, &str, String)) {
    if let Some(n) = p.num_chunks.filter(|_| p.workload_file.is_none()) {
        check(
            (1..=MAX_CHUNKS).contains(&n),
            "num_chunks",
            format!("`num_chunks` must be in [1, {MAX_CHUNKS}] (got {n}); e.g. `num_chunks = 16`"),
        );
    }
    if let Some(pattern) = p
        .camera_pattern
        .as_ref()
        .filter(|_| p.workload_file.is_none())
    {
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
            let below = v.min(MAX_SIDE) / 16 * 16;
            let eg = if below == 0 {
                format!("`{key} = 16`")
            } else if v > MAX_SIDE {
                format!("`{key} = {MAX_SIDE}`")
            } else {
                format!("`{key} = {below}` or `{key} = {}`", below + 16)
            };
            check(
                v > 0 && v % 16 == 0 && v <= MAX_SIDE,
                key,
                format!(
                    "`{key}` must be a multiple of 16 in [16, {MAX_SIDE}] (got {v}); e.g. {eg}"
                ),
            );
        }
    }
    if let Some(v) = p.fps {
        check(
            (1..=MAX_FPS).contains(&v),
            "fps",
            format!("`fps` must be in [1, {MAX_FPS}] (got {v}); e.g. `fps = 16`"),
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
        // A workload file wins: the built-in rollout's keys are ignored (as the reference).
        num_chunks: p.num_chunks.filter(|_| p.workload_file.is_none()),
        camera_pattern: p
            .camera_pattern
            .clone()
            .filter(|_| p.workload_file.is_none()),
        width: p.width,
        height: p.height,
        fps: p.fps,
        seed: p.seed,
        flow_shift: p.flow_shift,
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
            spool: std::sync::OnceLock::new(),
            samples: 1,
            ignored: Vec::new(),
            descriptor: std::sync::OnceLock::new(),
        }
    }

    fn make_descriptor(&self) -> Descriptor {
        let mut d = Descriptor::new(KIND, "/v1/realtime/video", self.samples, names::catalogue());
        d.params = self.params();
        // The whole rollout at the real-time basis.
        d.expected_session_s = Some(f64::from(self.rollout.num_frames()) / self.metrics.fps);
        d.headline = "ttfc".into();
        d.playback = crate::workload::playback::PlaybackConfig {
            buffer_units: self.metrics.buffer_chunks,
            prebuffer_s: 0.0,
        };
        d.artifact_root = self.save_video.clone();
        d.warnings = self.warnings();
        d
    }
}

impl VideoWorkload {
    fn params(&self) -> Vec<(String, String)> {
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

    fn warnings(&self) -> Vec<String> {
        let n = self.rollout.num_chunks();
        let mut out = Vec::new();
        if !self.ignored.is_empty() {
            out.push(format!(
                "note: the workload file sets the rollout; ignoring {} (built-in rollout only)",
                self.ignored.join(", ")
            ));
        }
        if self.metrics.warmup_chunks.max(1) + 1 >= n {
            out.push(format!(
                "warning: warmup_chunks={} leaves no non-terminal steady chunk in a {n}-chunk rollout; steady-state metrics will be missing (use num_chunks > {})",
                self.metrics.warmup_chunks,
                self.metrics.warmup_chunks.max(1) + 1
            ));
        }
        out
    }
}

impl Workload for VideoWorkload {
    type Session = VideoSession;

    fn descriptor(&self) -> &Descriptor {
        self.descriptor.get_or_init(|| self.make_descriptor())
    }

    fn headline_ms(
        &self,
        rec: &crate::workload::SampleRecord<session::VideoOutput>,
    ) -> Option<f64> {
        rec.output
            .as_ref()
            .and_then(|o| o.ttfc_s)
            .map(|s| s * 1000.0)
    }

    /// With `--save-video`, the spool the sessions' media goes to while they run (under
    /// the system temp dir, outside the artifact root).
    fn prepare(&self) -> Result<Vec<String>, WorkloadError> {
        if self.save_video.is_none() || self.spool.get().is_some() {
            return Ok(Vec::new());
        }
        let parent = std::env::temp_dir();
        let spool = Spool::create(&parent).map_err(|e| {
            WorkloadError::Prepare(format!(
                "cannot create the --save-video spool under {} ({e}); set TMPDIR to a writable directory",
                parent.display()
            ))
        })?;
        let _ = self.spool.set(Arc::new(spool));
        Ok(Vec::new())
    }

    fn session(&self, ctx: &SessionContext) -> VideoSession {
        let save_as = (!ctx.warmup && self.save_video.is_some())
            .then(|| self.spool.get())
            .flatten()
            .map(|spool| SaveAs {
                path: PathBuf::from(format!("session-{:03}.mp4", ctx.idx)),
                spool: Arc::clone(spool),
            });
        VideoSession::new(self.settings.clone(), ctx.idx, save_as)
    }

    fn report(
        &self,
        run: RunRecord<session::VideoOutput>,
    ) -> Result<Box<dyn Report>, WorkloadError> {
        output::build_report(&self.rollout, &self.metrics, run)
            .map(|r| Box::new(r) as Box<dyn Report>)
            .map_err(WorkloadError::Report)
    }
}

#[cfg(test)]
mod tests;
