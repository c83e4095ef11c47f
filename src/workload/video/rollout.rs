//! The video workload's rollout: what one `WS /v1/realtime/video` session asks the server
//! to generate (spec §2.1–§2.3, §6.2, §6.3, §7.3, §7.8).
//!
//! Owns the frame/chunk arithmetic, the endpoint URL rule, the options as they come from
//! the scenario (TOML/CLI), their resolution into a validated [`Rollout`] (built-in
//! workload or JSON workload file, image resolution), and the two client messages that
//! depend only on the rollout: `session.start` and the prompt-update interaction.
//! Pure apart from reading the workload file and local image files named by the options.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::image;

mod error;
mod file;

pub use error::RolloutError;
use file::from_file;

#[cfg(test)]
mod tests;

/// Default model id sent in `session.start`.
pub const DEFAULT_MODEL: &str = "robbyant/lingbot-world-v2-14b-causal-fast-diffusers";
/// Default prompt of the built-in workload.
pub const DEFAULT_PROMPT: &str = "The camera moves slowly forward through the scene.";
/// Default chunk count of the built-in workload.
pub const DEFAULT_NUM_CHUNKS: u32 = 16;
/// Default camera pattern.
pub const DEFAULT_CAMERA_PATTERN: &str = "forward";
/// Camera patterns, sorted as the reference lists them in its error message.
pub const CAMERA_PATTERNS: [&str; 3] = ["forward", "hold", "orbit"];
/// Default frame width in pixels (a multiple of 16).
pub const DEFAULT_WIDTH: u32 = 832;
/// Default frame height in pixels (a multiple of 16).
pub const DEFAULT_HEIGHT: u32 = 480;
/// Default integer mux frame rate sent to the server.
pub const DEFAULT_FPS: u32 = 16;
/// Default generation seed.
pub const DEFAULT_SEED: i64 = 42;
/// Default `flow_shift` extra parameter.
pub const DEFAULT_FLOW_SHIFT: f64 = 5.0;
/// Default `transition_chunks` of a prompt update.
pub const DEFAULT_TRANSITION_CHUNKS: u32 = 3;
/// Camera pattern recorded for a workload file that gives `camera_action_script` itself.
pub const CUSTOM_CAMERA_PATTERN: &str = "custom";

/// Pixel frames requested for `n_chunks` chunks: `12n − 3` (0 for 0 chunks).
pub fn num_frames(n_chunks: u32) -> u32 {
    n_chunks.saturating_mul(12).saturating_sub(3)
}

/// Chunks the server generates for `f` pixel frames: `((f − 1) / 4 + 1) / 3` (0 for 0).
#[cfg(test)]
pub fn chunks_for_frames(f: u32) -> u32 {
    if f == 0 {
        return 0;
    }
    ((f - 1) / 4 + 1) / 3
}

/// Pixel frames carried by chunk `i`: 9 for chunk 0, 12 for every later chunk.
#[cfg(test)]
pub fn frames_in_chunk(i: u64) -> u32 {
    if i == 0 { 9 } else { 12 }
}

/// Steady-state chunk deadline in milliseconds: `12 / target_fps × 1000`.
#[cfg(test)]
pub fn steady_deadline_ms(target_fps: f64) -> f64 {
    12.0 / target_fps * 1000.0
}

/// The rollout options as the scenario (TOML `[workload]` keys or CLI flags) gives them.
/// `None` means "not given": defaults are applied by [`resolve`], so a workload file's
/// values are overridden only by options that were actually set.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolloutOptions {
    /// Model id sent in `session.start`.
    pub model: Option<String>,
    /// JSON rollout file (§6.3); relative paths are taken from the scenario's directory.
    pub workload_file: Option<PathBuf>,
    /// First frame: `http(s)://` URL, `data:` URL or local file path.
    pub image: Option<String>,
    /// Prompt text.
    pub prompt: Option<String>,
    /// Negative prompt; an empty string is a real value.
    pub negative_prompt: Option<String>,
    /// Chunk count of the built-in workload (≥ 1).
    pub num_chunks: Option<u32>,
    /// Camera pattern of the built-in workload (`forward`, `hold`, `orbit`).
    pub camera_pattern: Option<String>,
    /// Frame width (positive multiple of 16).
    pub width: Option<u32>,
    /// Frame height (positive multiple of 16).
    pub height: Option<u32>,
    /// Integer mux frame rate label sent to the server.
    pub fps: Option<u32>,
    /// Generation seed.
    pub seed: Option<i64>,
    /// `flow_shift` extra parameter.
    pub flow_shift: Option<f64>,
}

/// A mid-rollout prompt change, sent once chunk `after_chunk` has arrived.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PromptUpdate {
    /// The chunk index after which the update is sent (also its event id `chunk-<n>`).
    pub after_chunk: u32,
    /// The new prompt.
    pub prompt: String,
    /// Chunks over which the server blends to the new prompt.
    pub transition_chunks: u32,
}

/// A resolved, validated rollout: everything one session sends.
#[derive(Debug, Clone, PartialEq)]
pub struct Rollout {
    /// Model id.
    pub model: String,
    /// Prompt text.
    pub prompt: String,
    /// First frame as an `http(s)://` or `data:` URL.
    pub image_url: String,
    /// Where the image came from, short enough to print (URL, file path, or the default).
    pub image_source: String,
    /// Negative prompt, sent only when present.
    pub negative_prompt: Option<String>,
    /// One three-entry action list per chunk.
    pub camera_action_script: Vec<[Vec<String>; 3]>,
    /// Frame width.
    pub width: u32,
    /// Frame height.
    pub height: u32,
    /// Integer mux frame rate.
    pub fps: u32,
    /// Generation seed.
    pub seed: i64,
    /// `flow_shift` extra parameter.
    pub flow_shift: f64,
    /// Prompt updates in file order.
    pub prompt_updates: Vec<PromptUpdate>,
    /// Workload-file `extra_params`, merged last into `session.start`.
    pub extra_params: Map<String, Value>,
    /// The workload file the rollout came from (resolved path), if any.
    pub workload_file: Option<PathBuf>,
    /// The camera pattern that generated the script, or `custom` for a file's own script.
    pub camera_pattern: String,
}

impl Rollout {
    /// Number of chunks (the camera script's length).
    pub fn num_chunks(&self) -> u32 {
        u32::try_from(self.camera_action_script.len()).unwrap_or(u32::MAX)
    }
    /// Pixel frames requested: `12 · num_chunks − 3`.
    pub fn num_frames(&self) -> u32 {
        num_frames(self.num_chunks())
    }
    /// Video length at the mux frame rate: `num_frames / fps` seconds.
    pub fn video_seconds(&self) -> f64 {
        f64::from(self.num_frames()) / f64::from(self.fps)
    }
    /// Prompt updates ascending by `after_chunk`, the order the session sends them in
    /// ([`Rollout::prompt_updates`] keeps the file's order, as the JSON result does).
    #[cfg(test)]
    pub fn updates_in_send_order(&self) -> Vec<PromptUpdate> {
        let mut updates = self.prompt_updates.clone();
        updates.sort_by_key(|u| u.after_chunk);
        updates
    }
    /// The `workload` block of the JSON result (§2.7 item 4).
    pub fn describe_json(&self) -> Value {
        let updates: Vec<Value> = self
            .prompt_updates
            .iter()
            .map(
                |u| json!({"after_chunk": u.after_chunk, "transition_chunks": u.transition_chunks}),
            )
            .collect();
        json!({
            "num_chunks": self.num_chunks(),
            "num_frames": self.num_frames(),
            "width": self.width,
            "height": self.height,
            "fps": self.fps,
            "seed": self.seed,
            "flow_shift": self.flow_shift,
            "video_seconds": self.video_seconds(),
            "prompt_updates": updates,
        })
    }
}

/// The camera script for the built-in patterns: `forward` → `["w"]` every frame, `hold` →
/// `[]`, `orbit` → chunk `i` uses `"wasd"[i mod 4]`.
pub fn camera_script(
    num_chunks: u32,
    pattern: &str,
) -> Result<Vec<[Vec<String>; 3]>, RolloutError> {
    if num_chunks < 1 {
        return Err(RolloutError::NumChunks);
    }
    let frame = |i: u32| -> Result<Vec<String>, RolloutError> {
        Ok(match pattern {
            "forward" => vec!["w".to_string()],
            "hold" => Vec::new(),
            "orbit" => vec![["w", "a", "s", "d"][(i % 4) as usize].to_string()],
            other => return Err(RolloutError::UnknownCameraPattern(other.to_string())),
        })
    };
    (0..num_chunks)
        .map(|i| {
            let f = frame(i)?;
            Ok([f.clone(), f.clone(), f])
        })
        .collect()
}

/// The first frame as a URL (§2.3): `http://`, `https://` and `data:` are kept; a
/// readable local file (relative paths taken from `base_dir`) is inlined as a `data:` URL.
/// Returns the URL and a short description of its source.
pub fn resolve_image(value: &str, base_dir: &Path) -> Result<(String, String), RolloutError> {
    if ["http://", "https://", "data:"]
        .iter()
        .any(|p| value.starts_with(p))
    {
        let source = if value.starts_with("data:") {
            format!("data URL ({} bytes)", value.len())
        } else {
            value.to_string()
        };
        return Ok((value.to_string(), source));
    }
    let path = base_dir.join(value);
    let bytes = match path.is_file().then(|| std::fs::read(&path)) {
        Some(Ok(bytes)) => bytes,
        _ => return Err(RolloutError::ImageNotFound(value.to_string())),
    };
    use base64::Engine as _;
    let encoded = crate::util::b64::standard().encode(bytes);
    let url = format!("data:{};base64,{encoded}", image::mime_for_path(&path));
    Ok((url, path.display().to_string()))
}

/// Everything but the model, before validation; widths etc. kept wide so a file's
/// out-of-range numbers reach the reference's validation messages.
struct Draft {
    prompt: String,
    image: (String, String),
    script: Vec<[Vec<String>; 3]>,
    camera_pattern: String,
    width: i64,
    height: i64,
    fps: i64,
    seed: i64,
    flow_shift: f64,
    negative_prompt: Option<String>,
    updates: Vec<(i64, String, i64)>,
    extra_params: Map<String, Value>,
}

/// Build the rollout from options: the built-in workload, or the JSON workload file
/// (relative to `base_dir`, the scenario file's directory) with set options overriding
/// its values; then validate it (§6.3) and resolve its image (§2.3, §7.8).
pub fn resolve(opts: &RolloutOptions, base_dir: &Path) -> Result<Rollout, RolloutError> {
    let (draft, workload_file) = match &opts.workload_file {
        None => (builtin(opts, base_dir)?, None),
        Some(file) => {
            let path = base_dir.join(file);
            (from_file(opts, base_dir, &path)?, Some(path))
        }
    };
    finish(draft, opts, workload_file)
}

fn builtin(opts: &RolloutOptions, base_dir: &Path) -> Result<Draft, RolloutError> {
    let image = match &opts.image {
        Some(v) => resolve_image(v, base_dir)?,
        None => (
            image::default_image_data_url(),
            "generated default".to_string(),
        ),
    };
    let pattern = opts
        .camera_pattern
        .as_deref()
        .unwrap_or(DEFAULT_CAMERA_PATTERN);
    let script = camera_script(opts.num_chunks.unwrap_or(DEFAULT_NUM_CHUNKS), pattern)?;
    Ok(Draft {
        prompt: opts
            .prompt
            .clone()
            .unwrap_or_else(|| DEFAULT_PROMPT.to_string()),
        image,
        script,
        camera_pattern: pattern.to_string(),
        width: opts.width.unwrap_or(DEFAULT_WIDTH).into(),
        height: opts.height.unwrap_or(DEFAULT_HEIGHT).into(),
        fps: opts.fps.unwrap_or(DEFAULT_FPS).into(),
        seed: opts.seed.unwrap_or(DEFAULT_SEED),
        flow_shift: opts.flow_shift.unwrap_or(DEFAULT_FLOW_SHIFT),
        negative_prompt: opts.negative_prompt.clone(),
        updates: Vec::new(),
        extra_params: Map::new(),
    })
}

/// Validate a draft in the reference's order and build the rollout.
fn finish(
    d: Draft,
    opts: &RolloutOptions,
    workload_file: Option<PathBuf>,
) -> Result<Rollout, RolloutError> {
    if d.prompt.trim().is_empty() {
        return Err(RolloutError::BlankPrompt);
    }
    if d.image.0.is_empty() {
        return Err(RolloutError::EmptyImage);
    }
    let geometry_ok = |v: i64| v > 0 && v % 16 == 0;
    if !geometry_ok(d.width) || !geometry_ok(d.height) {
        return Err(RolloutError::Geometry);
    }
    if d.fps <= 0 {
        return Err(RolloutError::Fps);
    }
    if !d.flow_shift.is_finite() {
        return Err(RolloutError::FlowShift);
    }
    if d.script.is_empty() {
        return Err(RolloutError::ScriptEmpty);
    }
    let num_chunks = d.script.len();
    let mut prompt_updates = Vec::with_capacity(d.updates.len());
    for (after, prompt, transition) in d.updates {
        if prompt_updates
            .iter()
            .any(|u: &PromptUpdate| i64::from(u.after_chunk) == after)
        {
            return Err(RolloutError::DuplicateUpdate(after));
        }
        let after_chunk = match u32::try_from(after) {
            Ok(a) if (a as usize) < num_chunks => a,
            _ => {
                return Err(RolloutError::UpdateNeverFires {
                    after_chunk: after,
                    num_chunks,
                });
            }
        };
        let transition_chunks = u32::try_from(transition).map_err(|_| RolloutError::FieldType {
            key: "prompt_updates[].transition_chunks".into(),
            expected: "an integer below 2^32",
        })?;
        prompt_updates.push(PromptUpdate {
            after_chunk,
            prompt,
            transition_chunks,
        });
    }
    let narrow = |v: i64, key: &str| {
        u32::try_from(v).map_err(|_| RolloutError::FieldType {
            key: key.into(),
            expected: "an integer below 2^32",
        })
    };
    Ok(Rollout {
        model: opts
            .model
            .clone()
            .unwrap_or_else(|| DEFAULT_MODEL.to_string()),
        prompt: d.prompt,
        image_url: d.image.0,
        image_source: d.image.1,
        negative_prompt: d.negative_prompt,
        camera_action_script: d.script,
        width: narrow(d.width, "width")?,
        height: narrow(d.height, "height")?,
        fps: narrow(d.fps, "fps")?,
        seed: d.seed,
        flow_shift: d.flow_shift,
        prompt_updates,
        extra_params: d.extra_params,
        workload_file,
        camera_pattern: d.camera_pattern,
    })
}

/// The `session.start` payload (§2.3). `extra_params` holds `flow_shift` and
/// `camera_action_script`, then the workload's own `extra_params` (which may override).
pub fn session_start(r: &Rollout) -> Value {
    let mut extra = Map::new();
    extra.insert("flow_shift".into(), json!(r.flow_shift));
    extra.insert("camera_action_script".into(), json!(r.camera_action_script));
    for (k, v) in &r.extra_params {
        extra.insert(k.clone(), v.clone());
    }
    let mut payload = json!({
        "type": "session.start",
        "model": r.model,
        "prompt": r.prompt,
        "image_reference": {"image_url": r.image_url},
        "width": r.width,
        "height": r.height,
        "num_frames": r.num_frames(),
        "fps": r.fps,
        "seed": r.seed,
        "extra_params": extra,
    });
    if let (Some(neg), Value::Object(m)) = (&r.negative_prompt, &mut payload) {
        m.insert("negative_prompt".into(), json!(neg));
    }
    payload
}

/// The `session.interaction` message for a prompt update (§2.4).
pub fn interaction(update: &PromptUpdate) -> Value {
    json!({
        "type": "session.interaction",
        "interaction": {
            "event_id": format!("chunk-{}", update.after_chunk),
            "event": {"prompt": update.prompt},
            "transition_chunks": update.transition_chunks,
        },
    })
}
