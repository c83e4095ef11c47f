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
    ///
    /// Each result gets its summary, its charts (latency distributions as percentile
    /// plots, or dot plots under 30 values) and a time-series panel (completions per
    /// second and the headline metric's p50/p99 over run time) from the `.hlog` beside it
    /// (same name); without one the panel is left out and the page says so. Results of
    /// the same workload kind are overlaid in a comparison section first (one line per
    /// file on shared axes); results of different kinds get separate sections only.
    Report(ReportArgs),
    /// Compare two result files metric by metric; exit 1 past --max-regression.
    Compare(CompareArgs),
    /// Merge the results of a sharded run (`run --shard I/N`) exactly: histograms added,
    /// counts summed, percentiles recomputed; thresholds decide the exit status (0/1).
    Merge(MergeArgs),
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

/// `rtload merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Every shard's JSON result (its `.hlog` must sit beside it).
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// The merged JSON result to write (atomically).
    #[arg(long, short, value_name = "MERGED.json")]
    pub output: PathBuf,
    /// Take `[thresholds]` from this scenario instead of the ones the shards carry.
    #[arg(long, value_name = "SCENARIO")]
    pub scenario: Option<PathBuf>,
}

/// `rtload report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Result JSON files (from --output-json, --save-result or a sweep); each one's
    /// `.hlog` beside it is read for the time series. Two or more of the same workload
    /// kind are overlaid.
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
    /// from generated audio and frames, so the duplex benchmark runs offline; with
    /// `--kind transcription`, WAV files and reference transcripts for the
    /// realtime-transcription workload.
    Synth(SynthArgs),
}

/// What `rtload dataset synth` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SynthKind {
    /// The OmniInteract layout (1q1a, 1q1a_math, 1qna) and a reference voice.
    #[default]
    Omniinteract,
    /// WAV files with reference transcripts for the realtime-transcription workload,
    /// which the embedded server transcribes exactly.
    Transcription,
}

/// `rtload dataset synth`.
#[derive(Debug, Args)]
pub struct SynthArgs {
    /// Directory to write (omniinteract: `DIR/data/...`, `DIR/ref_audio.wav`;
    /// transcription: `DIR/utt_NNN.wav` + `DIR/utt_NNN.txt`).
    pub dir: PathBuf,
    /// Which dataset to write.
    #[arg(long, value_enum, default_value_t = SynthKind::Omniinteract)]
    pub kind: SynthKind,
    /// Transcription: files to write.
    #[arg(long, default_value_t = 3)]
    pub files: usize,
    /// Transcription: words per file.
    #[arg(long, default_value_t = 6)]
    pub words: usize,
    /// Transcription: speaking rate (the embedded server decodes at its
    /// `[server.transcription] words_per_second`, default 2.5).
    #[arg(long, default_value_t = 2.5)]
    pub words_per_second: f64,
    /// Transcription: sample rate of the WAV files, Hz.
    #[arg(long, default_value_t = 16000)]
    pub sample_rate: u32,
    /// Also write `DIR/data.tar.gz` of the `data/` tree.
    #[arg(long)]
    pub tar: bool,
    /// Write real MP4 cases (made with ffmpeg) instead of frames cases, so other tools
    /// can use the same set; frames cases are an rtload extension.
    #[arg(long)]
    pub mp4: bool,
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
    /// On Ctrl-C / SIGTERM: seconds in-flight sessions may still finish before they are
    /// cancelled as `interrupted`. No new session starts after the signal; the results of
    /// the sessions that ran are written, marked `"interrupted": true`, and rtload exits
    /// 130. A second signal stops at once (files on disk stay consistent).
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0, value_parser = parse_grace)]
    pub grace_period: f64,
    /// When another run holds the output directory's lock: give up (exit 2) after this
    /// many seconds instead of waiting until it is released. The holder's pid is printed
    /// either way.
    #[arg(long, value_name = "SECONDS", value_parser = parse_grace)]
    pub lock_timeout: Option<f64>,

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
    /// Trust the CA certificates in this PEM file for wss:// (on top of the system
    /// roots); overrides `[target] ca_cert`.
    #[arg(long, value_name = "PEM")]
    pub ca_cert: Option<PathBuf>,
    /// Do not verify the server's TLS certificate (testing only; warned about on stderr
    /// and recorded in the JSON result). Same as `[target] insecure_skip_verify = true`.
    #[arg(long)]
    pub insecure: bool,
    /// Suppress live progress.
    #[arg(long, short)]
    pub quiet: bool,
    /// Run the scenario at each point, e.g. `max_concurrency=1,2,4,8` or
    /// `request_rate=1,2,4`; prints a table and the capacity, the highest point whose
    /// thresholds (and every lower point's) held; exits 1 only when no point held.
    /// Ctrl-C ends the current point gracefully, starts no further point, writes what
    /// finished (marked interrupted) and exits 130. Overrides `[sweep]`.
    #[arg(long, value_name = "PARAM=V1,V2,...", help_heading = "Load")]
    pub sweep: Option<String>,
    /// Where a sweep writes each point's result, sweep.json and sweep.html.
    #[arg(long, value_name = "DIR", help_heading = "Load")]
    pub sweep_dir: Option<PathBuf>,

    /// Run only slice I of N of the whole run's plan: samples k with k mod N == I, at
    /// their original intended times; warm-ups and max_concurrency are split too.
    #[arg(long, value_name = "I/N", help_heading = "Distributed")]
    pub shard: Option<String>,
    /// Start the measured phase's clock at this time (RFC 3339 or unix seconds) on every
    /// shard: releases are relative to it.
    #[arg(long, value_name = "TIME", help_heading = "Distributed")]
    pub start_at: Option<String>,
    /// Serve live Prometheus metrics at http://ADDR/metrics while the run lasts (sessions
    /// active/completed/failed, queue wait, send lateness, the headline metric).
    #[arg(long, value_name = "HOST:PORT", help_heading = "Distributed")]
    pub metrics_addr: Option<std::net::SocketAddr>,

    /// Video workload options (the `[workload]` keys of the video cadence kind).
    #[command(flatten)]
    pub video: VideoArgs,

    /// OmniInteract workload options (the `[workload]` keys of the OmniInteract kind).
    #[command(flatten)]
    pub omni: OmniArgs,
}

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
    fn extend(&self, t: &mut toml::Table) -> Result<(), String> {
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
            ca_cert: self.ca_cert.clone(),
            insecure: self.insecure,
        })
    }
}

impl VideoArgs {
    fn table(&self) -> Result<toml::Table, String> {
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

fn is_false(b: &bool) -> bool {
    !*b
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
    /// Serve wss:// with this certificate chain (PEM; needs --tls-key).
    #[arg(long, value_name = "CERT.pem", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "KEY.pem", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

/// `--grace-period`, `--lock-timeout`: finite seconds in 0..=3600.
fn parse_grace(v: &str) -> Result<f64, String> {
    match v.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && (0.0..=3600.0).contains(&s) => Ok(s),
        _ => Err(format!(
            "{v:?} is not a number of seconds in 0..=3600; use e.g. 5"
        )),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;

    fn run_args(args: &[&str]) -> RunArgs {
        let mut argv = vec!["rtload", "run", "s.toml"];
        argv.extend(args);
        match Cli::parse_from(argv).command {
            Command::Run(r) => *r,
            _ => unreachable!(),
        }
    }

    fn params_keys<T: schemars::JsonSchema>() -> Vec<String> {
        let schema = schemars::schema_for!(T);
        schema.as_value()["properties"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    #[test]
    fn every_video_flag_sets_a_declared_workload_key() {
        let r = run_args(&[
            "--model",
            "m",
            "--workload",
            "w.json",
            "--image",
            "data:x",
            "--prompt",
            "p",
            "--negative-prompt",
            "",
            "--num-chunks",
            "3",
            "--camera-pattern",
            "hold",
            "--width",
            "16",
            "--height",
            "32",
            "--fps",
            "8",
            "--video-seed",
            "7",
            "--flow-shift",
            "1.5",
            "--target-fps",
            "8",
            "--warmup-chunks",
            "1",
            "--chunk-slo-ms",
            "500",
            "--playback-buffer-chunks",
            "2",
            "--first-chunk-timeout",
            "9",
            "--chunk-timeout",
            "9",
            "--ping-interval",
            "0",
            "--print-chunks",
            "--save-video",
            "out",
        ]);
        let t = r.video.table().unwrap();
        let known = params_keys::<rtload::workload::video::VideoParams>();
        for k in t.keys() {
            assert!(known.contains(k), "--{k} has no [workload] key");
        }
        assert_eq!(t.len(), known.len() - 1, "{t:?}"); // all but `kind`
        assert_eq!(t["seed"].as_integer(), Some(7));
        assert_eq!(t["num_chunks"].as_integer(), Some(3));
        assert_eq!(t["target_fps"].as_float(), Some(8.0));
        assert_eq!(t["print_chunks"].as_bool(), Some(true));
        assert_eq!(t["negative_prompt"].as_str(), Some(""));
        assert!(std::path::Path::new(t["save_video"].as_str().unwrap()).is_absolute());
        assert!(run_args(&[]).video.table().unwrap().is_empty());
    }

    #[test]
    fn every_omni_flag_sets_a_declared_workload_key() {
        let r = run_args(&[
            "--dataset-path",
            "d",
            "--omniinteract-subsets",
            "1q1a",
            "1qna",
            "--omniinteract-ref-audio",
            "r.wav",
            "--omniinteract-timeout-s",
            "5",
            "--omniinteract-media-timeout-s",
            "5",
            "--omniinteract-max-video-duration-s",
            "5",
            "--omniinteract-require-response",
            "--omniinteract-output-dir",
            "o",
            "--disable-shuffle",
            "--extra-body",
            "{\"a\": 1}",
            "--pacing",
            "2x",
            "--save-result",
            "--result-dir",
            "rd",
            "--result-filename",
            "f.json",
            "--label",
            "l",
            "--metadata",
            "k=v",
            "--goodput",
            "ttft:100",
            "--percentile-metrics",
            "ttft",
            "--metric-percentiles",
            "50,99",
        ]);
        let mut t = toml::Table::new();
        r.omni.extend(&mut t).unwrap();
        let known = params_keys::<rtload::workload::omni::workload::OmniParams>();
        for k in t.keys() {
            assert!(known.contains(k), "--{k} has no [workload] key");
        }
        assert_eq!(t["subsets"].as_array().map(Vec::len), Some(2));
        assert_eq!(t["extra_body"]["a"].as_integer(), Some(1));
        assert_eq!(t["disable_shuffle"].as_bool(), Some(true));
        let mut empty = toml::Table::new();
        run_args(&[]).omni.extend(&mut empty).unwrap();
        assert!(empty.is_empty(), "{empty:?}");
    }
}
