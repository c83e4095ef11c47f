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
    /// Exit status: 0 all measured samples passed, 1 a sample failed, 2 usage or
    /// configuration error.
    Run(Box<RunArgs>),
    /// Validate scenarios and print the resolved plan; exit 2 listing every error.
    Check(CheckArgs),
    /// Run the embedded reference server (realtime video endpoint) in the foreground.
    Serve(ServeArgs),
    /// Dataset tools.
    #[command(subcommand)]
    Dataset(DatasetCommand),
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
    /// Write the workload's JSON result here (atomically).
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

    /// Video workload options (`[workload]` keys of `kind = "video-cadence"`).
    #[command(flatten)]
    pub video: VideoArgs,
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
    pub fn overrides(&self) -> Result<rtload::scenario::Overrides, String> {
        let load = rtload::scenario::LoadOverrides {
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
        Ok(rtload::scenario::Overrides {
            target: self.target.clone(),
            output_json: self.output_json.clone(),
            load,
            workload: self.video.table()?,
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
