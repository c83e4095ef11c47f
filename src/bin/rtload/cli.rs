//! Command-line definition. Flag names follow `vllm bench serve` for load options and the
//! LingBot-World benchmark for video options, so their users switch without relearning.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// rtload: load generator for realtime streaming AI endpoints (WebSocket audio/video).
#[derive(Debug, Parser)]
#[command(name = "rtload", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a scenario (against the embedded reference server when it names no target).
    ///
    /// Exit status: 0 all measured samples passed and every threshold held, 1 a sample
    /// failed or a threshold was breached, 2 usage or configuration error.
    Run(Box<RunArgs>),
    /// Validate scenarios and print the resolved plan; exit 2 listing every error.
    Check(CheckArgs),
    /// Run the embedded reference server (/v1/realtime/video and /v1/realtime) in the
    /// foreground.
    Serve(ServeArgs),
    /// Run scenario files one after another; one summary table, optional JUnit XML.
    ///
    /// Directories expand to their `*.toml` files. Exit status: 0 all passed, 1 a
    /// scenario failed (samples or thresholds), 2 a scenario could not run.
    Suite(SuiteArgs),
    /// Render result JSON files as one self-contained HTML report with SVG charts.
    Report(ReportArgs),
    /// Compare two result files metric by metric; exit 1 past --max-regression.
    Compare(CompareArgs),
    /// Print the JSON Schema of the scenario format (for editors: taplo, Even Better TOML).
    Schema,
    /// Dataset tools.
    #[command(subcommand)]
    Dataset(DatasetCommand),
}

/// `rtload suite`.
#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// Scenario files or directories.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Write JUnit XML here (one test case per scenario).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Suppress per-sample lines.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `rtload report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Result JSON files (from --output-json, --save-result or a sweep).
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(long, value_name = "OUT.html")]
    pub html: PathBuf,
}

/// `rtload compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline result.
    pub base: PathBuf,
    /// The new result.
    pub new: PathBuf,
    /// Largest tolerated regression per metric, e.g. 10%.
    #[arg(long, value_name = "PCT")]
    pub max_regression: Option<String>,
}

/// `rtload dataset ...`.
#[derive(Debug, Subcommand)]
pub enum DatasetCommand {
    /// Write a small OmniInteract dataset in the official layout (1q1a, 1q1a_math, 1qna)
    /// from generated audio and frames, so the duplex benchmark runs offline.
    Synth(SynthArgs),
}

/// `rtload dataset synth`.
#[derive(Debug, Args)]
pub struct SynthArgs {
    /// Directory to write (`DIR/data/...`, `DIR/ref_audio.wav`).
    pub dir: PathBuf,
    /// Also write `DIR/data.tar.gz` of the `data/` tree.
    #[arg(long)]
    pub tar: bool,
    /// Cases per subset.
    #[arg(long, default_value_t = 1)]
    pub cases_per_subset: usize,
    /// Audio length of each case, milliseconds.
    #[arg(long, default_value_t = 3000)]
    pub duration_ms: u32,
    /// Seed of the generated content.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// `rtload run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenario file (TOML).
    pub scenario: PathBuf,
    /// Target URL (ws://, wss://, http://, https://); overrides `[target] url`.
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// Write the workload's JSON result here (atomically), and its HdrHistogram interval
    /// log next to it (same name, `.hlog`).
    #[arg(long, value_name = "PATH")]
    pub output_json: Option<PathBuf>,

    /// Measured samples (`[load] samples`).
    #[arg(
        long,
        visible_alias = "sessions",
        value_name = "N",
        help_heading = "Load"
    )]
    pub num_prompts: Option<usize>,
    /// Warm-up samples run first, excluded from metrics (`[load] warmup_samples`).
    #[arg(
        long,
        visible_alias = "warmup-sessions",
        value_name = "N",
        help_heading = "Load"
    )]
    pub num_warmups: Option<usize>,
    /// Requests per second, or `inf` to release all at once.
    #[arg(long, value_name = "RPS", help_heading = "Load")]
    pub request_rate: Option<String>,
    /// Gamma shape of inter-arrival gaps (1 = Poisson).
    #[arg(long, value_name = "B", help_heading = "Load")]
    pub burstiness: Option<f64>,
    /// Cap on concurrently running samples.
    #[arg(long, value_name = "N", help_heading = "Load")]
    pub max_concurrency: Option<usize>,
    /// Seed of the arrival process.
    #[arg(long, value_name = "N", help_heading = "Load")]
    pub seed: Option<u64>,
    /// Ramp the request rate: `linear` or `exponential`.
    #[arg(long, value_name = "STRATEGY", help_heading = "Load")]
    pub ramp_up_strategy: Option<String>,
    /// Ramp-up start rate.
    #[arg(long, value_name = "RPS", help_heading = "Load")]
    pub ramp_up_start_rps: Option<f64>,
    /// Ramp-up end rate.
    #[arg(long, value_name = "RPS", help_heading = "Load")]
    pub ramp_up_end_rps: Option<f64>,

    /// Extra upgrade header `KEY=VALUE` (repeatable; wins over `[target] headers`).
    /// Values are never printed or saved.
    #[arg(long = "header", value_name = "KEY=VALUE")]
    pub headers: Vec<String>,
    /// Suppress live progress.
    #[arg(long, short)]
    pub quiet: bool,
    /// Run the scenario at each point, e.g. `max_concurrency=1,2,4,8` or
    /// `request_rate=1,2,4`; prints a table and the capacity, the highest point whose
    /// thresholds (and every lower point's) held; exits 1 only when no point held.
    /// Overrides `[sweep]`.
    #[arg(long, value_name = "PARAM=V1,V2,...", help_heading = "Load")]
    pub sweep: Option<String>,
    /// Where a sweep writes each point's result, sweep.json and sweep.html.
    #[arg(long, value_name = "DIR", help_heading = "Load")]
    pub sweep_dir: Option<PathBuf>,

    /// Video workload options (`[workload]` keys of `kind = "video-cadence"`).
    #[command(flatten)]
    pub video: VideoArgs,

    /// OmniInteract workload options (`[workload]` keys of `kind = "omniinteract"`).
    #[command(flatten)]
    pub omni: OmniArgs,
}

/// Options of the OmniInteract workload, named as in `vllm bench serve --omni`; each sets
/// the `[workload]` key shown in brackets.
#[derive(Debug, Args, Default)]
#[command(next_help_heading = "OmniInteract workload")]
pub struct OmniArgs {
    /// Local OmniInteract directory or archive [dataset_path].
    #[arg(long, value_name = "PATH")]
    pub dataset_path: Option<PathBuf>,
    /// Subsets in concatenation order: 1q1a 1q1a_math 1qna [subsets].
    #[arg(long = "omniinteract-subsets", num_args = 1.., value_name = "SUBSET")]
    pub subsets: Vec<String>,
    /// Reference voice WAV [ref_audio].
    #[arg(long = "omniinteract-ref-audio", value_name = "WAV")]
    pub ref_audio: Option<PathBuf>,
    /// Session idle timeout / completion wait, seconds [timeout_s].
    #[arg(long = "omniinteract-timeout-s", value_name = "S")]
    pub timeout_s: Option<f64>,
    /// Per ffprobe/ffmpeg command, seconds [media_timeout_s].
    #[arg(long = "omniinteract-media-timeout-s", value_name = "S")]
    pub media_timeout_s: Option<f64>,
    /// Longest accepted video, seconds [max_video_duration_s].
    #[arg(long = "omniinteract-max-video-duration-s", value_name = "S")]
    pub max_video_duration_s: Option<f64>,
    /// Fail LISTEN-only cases [require_response].
    #[arg(long = "omniinteract-require-response")]
    pub require_response: bool,
    /// Artifact root [output_dir].
    #[arg(long = "omniinteract-output-dir", value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Keep dataset order [disable_shuffle].
    #[arg(long)]
    pub disable_shuffle: bool,
    /// JSON object forwarded in session.update extra_body [extra_body].
    #[arg(long, value_name = "JSON")]
    pub extra_body: Option<String>,
    /// realtime, saturate, or a speed factor like 2x [pacing].
    #[arg(long, value_name = "MODE")]
    pub pacing: Option<String>,
    /// Save the vllm-style result JSON [save_result].
    #[arg(long)]
    pub save_result: bool,
    /// Directory of the saved result [result_dir].
    #[arg(long, value_name = "DIR")]
    pub result_dir: Option<PathBuf>,
    /// File name of the saved result [result_filename].
    #[arg(long, value_name = "NAME")]
    pub result_filename: Option<String>,
    /// Label of the result [label].
    #[arg(long)]
    pub label: Option<String>,
    /// KEY=VALUE added to the saved result (repeatable) [metadata].
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    pub metadata: Vec<String>,
    /// Goodput SLOs KEY:MS, keys ttft tpot e2el itl audio_ttfp audio_rtf [goodput].
    #[arg(long, num_args = 1.., value_name = "KEY:MS")]
    pub goodput: Vec<String>,
    /// Comma-separated metrics with percentiles [percentile_metrics].
    #[arg(long, value_name = "LIST")]
    pub percentile_metrics: Option<String>,
    /// Comma-separated percentiles, e.g. 50,90,99 [metric_percentiles].
    #[arg(long, value_name = "LIST")]
    pub metric_percentiles: Option<String>,
}

impl OmniArgs {
    fn extend(&self, t: &mut toml::Table) -> Result<(), String> {
        use toml::Value as V;
        let mut put = |k: &str, v: Option<V>| {
            if let Some(v) = v {
                t.insert(k.into(), v);
            }
        };
        let p = |v: &Option<PathBuf>| v.as_ref().map(|p| V::String(absolute(p)));
        let list = |v: &[String]| {
            (!v.is_empty()).then(|| V::Array(v.iter().cloned().map(V::String).collect()))
        };
        put("dataset_path", p(&self.dataset_path));
        put("subsets", list(&self.subsets));
        put("ref_audio", p(&self.ref_audio));
        put("timeout_s", self.timeout_s.map(V::Float));
        put("media_timeout_s", self.media_timeout_s.map(V::Float));
        put(
            "max_video_duration_s",
            self.max_video_duration_s.map(V::Float),
        );
        put(
            "require_response",
            self.require_response.then_some(V::Boolean(true)),
        );
        put("output_dir", p(&self.output_dir));
        put(
            "disable_shuffle",
            self.disable_shuffle.then_some(V::Boolean(true)),
        );
        put("pacing", self.pacing.clone().map(V::String));
        put("save_result", self.save_result.then_some(V::Boolean(true)));
        put("result_dir", p(&self.result_dir));
        put(
            "result_filename",
            self.result_filename.clone().map(V::String),
        );
        put("label", self.label.clone().map(V::String));
        put("metadata", list(&self.metadata));
        put("goodput", list(&self.goodput));
        put(
            "percentile_metrics",
            self.percentile_metrics.clone().map(V::String),
        );
        put(
            "metric_percentiles",
            self.metric_percentiles.clone().map(V::String),
        );
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

/// Options of the video-cadence workload; each sets the `[workload]` key of the same name.
#[derive(Debug, Args, Default)]
#[command(next_help_heading = "Video cadence workload")]
pub struct VideoArgs {
    /// Model id sent in session.start.
    #[arg(long)]
    pub model: Option<String>,
    /// JSON rollout file (the reference's --workload format).
    #[arg(long = "workload", value_name = "FILE")]
    pub workload_file: Option<PathBuf>,
    /// First frame: URL, data URL or image file (default: generated).
    #[arg(long)]
    pub image: Option<String>,
    /// Prompt text.
    #[arg(long)]
    pub prompt: Option<String>,
    /// Negative prompt (an empty string is a real value).
    #[arg(long)]
    pub negative_prompt: Option<String>,
    /// Chunks of the built-in rollout.
    #[arg(long)]
    pub num_chunks: Option<u32>,
    /// Camera pattern of the built-in rollout: forward, orbit, hold.
    #[arg(long)]
    pub camera_pattern: Option<String>,
    /// Frame width (multiple of 16).
    #[arg(long)]
    pub width: Option<u32>,
    /// Frame height (multiple of 16).
    #[arg(long)]
    pub height: Option<u32>,
    /// Integer fps label sent to the server (mux label).
    #[arg(long)]
    pub fps: Option<u32>,
    /// Generation seed sent to the server (the reference's --seed; rtload's --seed is
    /// the arrival seed).
    #[arg(long)]
    pub video_seed: Option<i64>,
    /// flow_shift extra parameter.
    #[arg(long)]
    pub flow_shift: Option<f64>,
    /// Real-time basis for RTF, deadline and playback (default: --fps).
    #[arg(long)]
    pub target_fps: Option<f64>,
    /// Chunks excluded from steady-state metrics.
    #[arg(long)]
    pub warmup_chunks: Option<u32>,
    /// Steady chunk deadline in ms (default 12 / target fps).
    #[arg(long)]
    pub chunk_slo_ms: Option<f64>,
    /// Chunks the simulated viewer buffers before playing.
    #[arg(long)]
    pub playback_buffer_chunks: Option<u32>,
    /// Seconds to wait for the first media chunk.
    #[arg(long)]
    pub first_chunk_timeout: Option<f64>,
    /// Seconds to wait between media chunks.
    #[arg(long)]
    pub chunk_timeout: Option<f64>,
    /// session.ping period in seconds (0 disables).
    #[arg(long)]
    pub ping_interval: Option<f64>,
    /// Print one line per chunk as it arrives.
    #[arg(long)]
    pub print_chunks: bool,
    /// Save each measured session's received media (fragmented MP4) in this directory.
    #[arg(long, value_name = "DIR")]
    pub save_video: Option<PathBuf>,
}

impl RunArgs {
    /// The scenario overrides these flags express.
    pub fn overrides(&self) -> Result<rtload::config::scenario::Overrides, String> {
        let load = rtload::workload::load::LoadOverrides {
            num_prompts: self.num_prompts,
            num_warmups: self.num_warmups,
            request_rate: self.request_rate.clone(),
            burstiness: self.burstiness,
            max_concurrency: self.max_concurrency,
            seed: self.seed,
            ramp_up_strategy: self.ramp_up_strategy.clone(),
            ramp_up_start_rps: self.ramp_up_start_rps,
            ramp_up_end_rps: self.ramp_up_end_rps,
        };
        Ok(rtload::config::scenario::Overrides {
            target: self.target.clone(),
            output_json: self.output_json.clone(),
            load,
            workload: {
                let mut t = self.video.table()?;
                self.omni.extend(&mut t)?;
                t
            },
            headers: self
                .headers
                .iter()
                .map(|h| {
                    h.split_once('=')
                        .map(|(k, v)| (k.trim().to_string(), v.to_string()))
                        .ok_or_else(|| format!("--header: expected KEY=VALUE (got \"{h}\")"))
                })
                .collect::<Result<_, _>>()?,
        })
    }
}

impl VideoArgs {
    fn table(&self) -> Result<toml::Table, String> {
        use toml::Value as V;
        let mut t = toml::Table::new();
        let mut put = |k: &str, v: Option<V>| {
            if let Some(v) = v {
                t.insert(k.into(), v);
            }
        };
        let s = |v: &Option<String>| v.clone().map(V::String);
        let p = |v: &Option<PathBuf>| v.as_ref().map(|p| V::String(absolute(p)));
        let i = |v: Option<u32>| v.map(|x| V::Integer(i64::from(x)));
        let f = |v: Option<f64>| v.map(V::Float);
        put("model", s(&self.model));
        put("workload_file", p(&self.workload_file));
        put(
            "image",
            self.image.as_ref().map(|v| V::String(image_arg(v))),
        );
        put("prompt", s(&self.prompt));
        put("negative_prompt", s(&self.negative_prompt));
        put("num_chunks", i(self.num_chunks));
        put("camera_pattern", s(&self.camera_pattern));
        put("width", i(self.width));
        put("height", i(self.height));
        put("fps", i(self.fps));
        put("seed", self.video_seed.map(V::Integer));
        put("flow_shift", f(self.flow_shift));
        put("target_fps", f(self.target_fps));
        put("warmup_chunks", i(self.warmup_chunks));
        put("chunk_slo_ms", f(self.chunk_slo_ms));
        put("playback_buffer_chunks", i(self.playback_buffer_chunks));
        put("first_chunk_timeout", f(self.first_chunk_timeout));
        put("chunk_timeout", f(self.chunk_timeout));
        put("ping_interval", f(self.ping_interval));
        put(
            "print_chunks",
            self.print_chunks.then_some(V::Boolean(true)),
        );
        put("save_video", p(&self.save_video));
        Ok(t)
    }
}

/// Paths on the command line are relative to the current directory, not the scenario's.
fn absolute(p: &std::path::Path) -> String {
    std::path::absolute(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}

fn image_arg(v: &str) -> String {
    let is_url = ["http://", "https://", "data:"]
        .iter()
        .any(|s| v.starts_with(s));
    if is_url {
        v.to_string()
    } else {
        absolute(std::path::Path::new(v))
    }
}

/// `rtload check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Scenario files.
    #[arg(required = true)]
    pub scenarios: Vec<PathBuf>,
}

/// `rtload serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port to bind (0 = any free port).
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Server configuration (TOML: cadence model, fault switches).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}
