//! The workload flag groups of `rtload run`: video cadence and OmniInteract. Each flag
//! sets the `[workload]` key of its field's name: a group's override table is the struct
//! serialized (unset options left out), with command-line paths made absolute.

use std::path::PathBuf;

use clap::Args;

/// Options of the OmniInteract workload, named as in `vllm bench serve --omni`; each sets
/// the `[workload]` key shown in brackets, which is the field's name: the override table
/// is this struct serialized (unset options are left out), so a key is written once here.
#[derive(Debug, Args, Default, serde::Serialize)]
#[command(next_help_heading = "OmniInteract workload")]
pub struct OmniArgs {
    /// Local OmniInteract directory or archive [dataset_path].
    #[arg(long, value_name = "PATH")]
    #[serde(
        serialize_with = "absolute_path",
        skip_serializing_if = "Option::is_none"
    )]
    pub dataset_path: Option<PathBuf>,
    /// Subsets in concatenation order: 1q1a 1q1a_math 1qna [subsets].
    #[arg(long = "omniinteract-subsets", num_args = 1.., value_name = "SUBSET")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subsets: Vec<String>,
    /// Reference voice WAV [ref_audio].
    #[arg(long = "omniinteract-ref-audio", value_name = "WAV")]
    #[serde(
        serialize_with = "absolute_path",
        skip_serializing_if = "Option::is_none"
    )]
    pub ref_audio: Option<PathBuf>,
    /// Session idle timeout / completion wait, seconds [timeout_s].
    #[arg(long = "omniinteract-timeout-s", value_name = "S")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<f64>,
    /// Per ffprobe/ffmpeg command, seconds [media_timeout_s].
    #[arg(long = "omniinteract-media-timeout-s", value_name = "S")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media_timeout_s: Option<f64>,
    /// Longest accepted video, seconds [max_video_duration_s].
    #[arg(long = "omniinteract-max-video-duration-s", value_name = "S")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_video_duration_s: Option<f64>,
    /// Fail LISTEN-only cases [require_response].
    #[arg(long = "omniinteract-require-response")]
    #[serde(skip_serializing_if = "is_false")]
    pub require_response: bool,
    /// Artifact root [output_dir].
    #[arg(long = "omniinteract-output-dir", value_name = "DIR")]
    #[serde(
        serialize_with = "absolute_path",
        skip_serializing_if = "Option::is_none"
    )]
    pub output_dir: Option<PathBuf>,
    /// Keep dataset order [disable_shuffle].
    #[arg(long)]
    #[serde(skip_serializing_if = "is_false")]
    pub disable_shuffle: bool,
    /// JSON object forwarded in session.update extra_body [extra_body].
    #[arg(long, value_name = "JSON")]
    #[serde(skip)]
    pub extra_body: Option<String>,
    /// realtime, saturate, or a speed factor like 2x [pacing].
    #[arg(long, value_name = "MODE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pacing: Option<String>,
    /// Save the vllm-style result JSON [save_result].
    #[arg(long)]
    #[serde(skip_serializing_if = "is_false")]
    pub save_result: bool,
    /// Directory of the saved result [result_dir].
    #[arg(long, value_name = "DIR")]
    #[serde(
        serialize_with = "absolute_path",
        skip_serializing_if = "Option::is_none"
    )]
    pub result_dir: Option<PathBuf>,
    /// File name of the saved result [result_filename].
    #[arg(long, value_name = "NAME")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_filename: Option<String>,
    /// Label of the result [label].
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// KEY=VALUE added to the saved result (repeatable) [metadata].
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub metadata: Vec<String>,
    /// Goodput SLOs KEY:MS, keys ttft tpot e2el itl audio_ttfp audio_rtf [goodput].
    #[arg(long, num_args = 1.., value_name = "KEY:MS")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub goodput: Vec<String>,
    /// Comma-separated metrics with percentiles [percentile_metrics].
    #[arg(long, value_name = "LIST")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percentile_metrics: Option<String>,
    /// Comma-separated percentiles, e.g. 50,90,99 [metric_percentiles].
    #[arg(long, value_name = "LIST")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric_percentiles: Option<String>,
}

impl OmniArgs {
    /// Add the set options to the `[workload]` override table `t`; `--extra-body` must be
    /// a JSON object.
    pub(super) fn extend(&self, t: &mut toml::Table) -> Result<(), String> {
        t.extend(toml::Table::try_from(self).map_err(|e| format!("OmniInteract options: {e}"))?);
        if let Some(json) = &self.extra_body {
            let v: serde_json::Value = serde_json::from_str(json)
                .map_err(|e| format!("--extra-body: not valid JSON ({e}): {json}"))?;
            let table = toml::Value::try_from(&v)
                .ok()
                .filter(toml::Value::is_table)
                .ok_or_else(|| format!("--extra-body: must be a JSON object (got {json})"))?;
            t.insert("extra_body".into(), table);
        }
        Ok(())
    }
}

/// Options of the video-cadence workload; each sets the `[workload]` key of the same name
/// (the override table is this struct serialized; unset options are left out).
#[derive(Debug, Args, Default, serde::Serialize)]
#[command(next_help_heading = "Video cadence workload")]
pub struct VideoArgs {
    /// Model id sent in session.start.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// JSON rollout file (the reference's --workload format). The file wins: the built-in
    /// rollout's --num-chunks and --camera-pattern (and those `[workload]` keys) are
    /// ignored, as the reference does.
    #[arg(long = "workload", value_name = "FILE")]
    #[serde(
        serialize_with = "absolute_path",
        skip_serializing_if = "Option::is_none"
    )]
    pub workload_file: Option<PathBuf>,
    /// First frame: URL, data URL or image file (default: generated).
    #[arg(long)]
    #[serde(serialize_with = "image_arg", skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Prompt text.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Negative prompt (an empty string is a real value).
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub negative_prompt: Option<String>,
    /// Chunks of the built-in rollout.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_chunks: Option<u32>,
    /// Camera pattern of the built-in rollout: forward, orbit, hold.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub camera_pattern: Option<String>,
    /// Frame width (multiple of 16).
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    /// Frame height (multiple of 16).
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    /// Integer fps label sent to the server (mux label).
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fps: Option<u32>,
    /// Generation seed sent to the server (the reference's --seed; rtload's --seed is
    /// the arrival seed).
    #[arg(long)]
    #[serde(rename = "seed", skip_serializing_if = "Option::is_none")]
    pub video_seed: Option<i64>,
    /// flow_shift extra parameter.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow_shift: Option<f64>,
    /// Real-time basis for RTF, deadline and playback (default: --fps).
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_fps: Option<f64>,
    /// Chunks excluded from steady-state metrics.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup_chunks: Option<u32>,
    /// Steady chunk deadline in ms (default 12 / target fps).
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_slo_ms: Option<f64>,
    /// Chunks the simulated viewer buffers before playing.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub playback_buffer_chunks: Option<u32>,
    /// Seconds to wait for the first media chunk.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_chunk_timeout: Option<f64>,
    /// Seconds to wait between media chunks.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_timeout: Option<f64>,
    /// session.ping period in seconds (0 disables).
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ping_interval: Option<f64>,
    /// Print one line per chunk as it arrives.
    #[arg(long)]
    #[serde(skip_serializing_if = "is_false")]
    pub print_chunks: bool,
    /// Save each measured session's received media (fragmented MP4) in this directory.
    #[arg(long, value_name = "DIR")]
    #[serde(
        serialize_with = "absolute_path",
        skip_serializing_if = "Option::is_none"
    )]
    pub save_video: Option<PathBuf>,
}

impl VideoArgs {
    /// The `[workload]` override table of the set options.
    pub(super) fn table(&self) -> Result<toml::Table, String> {
        toml::Table::try_from(self).map_err(|e| format!("video options: {e}"))
    }
}

/// Paths on the command line are relative to the current directory, not the scenario's.
fn absolute(p: &std::path::Path) -> String {
    std::path::absolute(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}

/// Serialize an optional command-line path made absolute ([`absolute`]).
fn absolute_path<S: serde::Serializer>(p: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
    match p {
        Some(p) => s.serialize_str(&absolute(p)),
        None => s.serialize_none(),
    }
}

/// `--image`: URLs as given, a local file made absolute.
fn image_arg<S: serde::Serializer>(v: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    let Some(v) = v else {
        return s.serialize_none();
    };
    let is_url = ["http://", "https://", "data:"]
        .iter()
        .any(|p| v.starts_with(p));
    if is_url {
        s.serialize_str(v)
    } else {
        s.serialize_str(&absolute(std::path::Path::new(v)))
    }
}

/// `skip_serializing_if` for flags: an unset switch is left out.
fn is_false(b: &bool) -> bool {
    !*b
}

#[cfg(test)]
#[path = "workload_tests.rs"]
mod tests;
