//! Command-line definition. Flag names follow `vllm bench serve` for load options and the
//! LingBot-World benchmark for video options, so their users switch without relearning.
//!
//! This file holds the subcommands and the small argument groups; `run` the flags of
//! `rtload run` (load, target, sweep, distributed) and their scenario overrides,
//! `workload` the workload flags (added at run time from every registered kind's own
//! flag table), `dataset` `rtload dataset`.

use std::path::PathBuf;

use clap::{Args, CommandFactory as _, FromArgMatches as _, Parser, Subcommand};

mod dataset;
mod run;
mod workload;

pub use dataset::{DatasetCommand, SynthArgs};
pub use run::RunArgs;

/// The command line: the derived commands plus every workload kind's flags on `run` and
/// `check`, whose values land in [`RunArgs::workload`].
pub fn parse() -> Cli {
    let matches = command().get_matches();
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    match &mut cli.command {
        Command::Run(r) => {
            r.workload = matches
                .subcommand_matches("run")
                .map(workload::given)
                .unwrap_or_default();
        }
        Command::Capacity(c) => {
            c.run.workload = matches
                .subcommand_matches("capacity")
                .map(workload::given)
                .unwrap_or_default();
        }
        Command::Check(c) => {
            c.run.workload = matches
                .subcommand_matches("check")
                .map(workload::given)
                .unwrap_or_default();
        }
        _ => {}
    }
    cli
}

/// The whole command: [`Cli`] with the workload flags on `run`, `check` and `capacity`.
pub fn command() -> clap::Command {
    Cli::command()
        .mut_subcommand("run", workload::with_flags)
        .mut_subcommand("check", workload::with_flags)
        .mut_subcommand("capacity", workload::with_flags)
}

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
    /// failed, a threshold was breached or an output could not be written (or cannot
    /// fit: checked before the first session), 2 usage or configuration error, 130
    /// interrupted (Ctrl-C/SIGTERM; what finished is still written).
    Run(Box<RunArgs>),
    /// Validate scenarios as `run` would and print the plan it would execute.
    ///
    /// Takes every flag of `rtload run` (overrides such as --max-concurrency or
    /// --num-prompts, workload flags, --sweep, --shard): the plan printed is the one `run`
    /// would execute with them, thresholds included. Runs nothing and writes nothing.
    /// Exit status: 0 valid, 2 listing every error of every file (file:line:col, the key,
    /// the bad value and the fix).
    Check(Box<CheckArgs>),
    /// Find how many concurrent sessions the endpoint holds within the SLO, and what
    /// gives first.
    ///
    /// A step is one run of the scenario at one max_concurrency, scaled like a sweep
    /// point (max(samples, 4 × concurrency) sessions released at once, or `[sweep]
    /// samples_per_point`; with `[load] duration_s`, exactly its concurrency, each
    /// session held that long). A step holds when at least --good-share of its ended sessions
    /// are good (completed within every `[slo]` bound), none was rejected and every
    /// `[thresholds]` entry held. The search runs a staircase --start, 2×, 4×, … up to
    /// --max until a step breaks, bisects between the last holding and the first breaking
    /// step, then runs the answer once more (it must hold again). A generator-bound step
    /// stops the search: it can never be the capacity (one where the server rejected
    /// sessions still breaks). With --ramp K:T the search starts with one run in which K
    /// more held sessions join every T seconds while earlier ones keep streaming, each
    /// step window judged from that run's records, then bisects and confirms with whole
    /// runs. Prints one sentence (the capacity
    /// and what broke at the first breaking concurrency), then the per-step table; a line
    /// on stderr as each step starts and ends (unless --quiet). Writes each step's result,
    /// capacity.json (steps, answer, limited_by) and capacity.html (the sentence, the
    /// table and the search drawn step by step) under --dir. Takes `run`'s flags
    /// except --max-concurrency (the search sets it), --sweep, --sweep-dir, --shard,
    /// --start-at, --metrics-addr and --output-json.
    ///
    /// Exit status: 0 a capacity was found (and confirmed), 1 even the lowest concurrency
    /// broke or a generator-bound step stopped the search, 2 usage or configuration
    /// error, 130 interrupted (what finished is written).
    Capacity(Box<CapacityArgs>),
    /// Run the embedded reference server (/v1/realtime/video and /v1/realtime) in the
    /// foreground; its /metrics counts connections and sessions on every endpoint and
    /// has vLLM's gauges (vllm:num_requests_running, _waiting, websocket_connections_active).
    /// The config's `max_sessions` refuses sessions past it (`refuse_with`), and
    /// `[load] rtf_one_at_sessions` slows generation by max(1, active / k). With --replay
    /// DIR it plays a recording's server side instead, as the real server answered.
    Serve(ServeArgs),
    /// Run scenario files one after another; one summary table, optional JUnit XML.
    ///
    /// Directories expand to their `*.toml` files. Exit status: 0 all passed, 1 a
    /// scenario failed (samples or thresholds), 2 a scenario could not run.
    Suite(SuiteArgs),
    /// Render result JSON files as one self-contained HTML report with SVG charts.
    ///
    /// Each result gets its summary (verdict, thresholds, headline metrics and generator
    /// health, the result's own numbers), an errors table when anything failed (per
    /// failure kind: count, sessions, messages in full), the charts its workload declared
    /// (`rtload.charts`: per-session series, the session timeline, every distribution as
    /// a percentile plot, or dot plots under 30 values, captioned with what is measured
    /// from which event to which), a time-series panel (completions per second and the
    /// headline metric's p50/p99 over run time) from the `.hlog` beside it (same name;
    /// without one the panel is left out and the page says so) and its metrics table.
    /// Results of the same workload are overlaid in a comparison section first (one line
    /// per file on shared axes); results of different workloads get separate sections.
    /// A sweep.json gets its curves against the swept value, a capacity.json its search
    /// drawn step by step, each with its table.
    ///
    /// `rtload report --recompute DIR` instead recomputes a recording (`rtload run
    /// --record DIR`): every metric and threshold verdict from the trace alone, printed
    /// as the run printed them, with the run's exit status (0 passed, 1 failed samples or
    /// thresholds, 2 the recording cannot be recomputed, 130 the run was interrupted).
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

/// `rtload capacity`: `run`'s flags plus the search's.
#[derive(Debug, Args)]
pub struct CapacityArgs {
    /// The scenario file, and `run`'s flags (each step's run takes them).
    #[command(flatten)]
    pub run: RunArgs,
    /// The least share of a step's ended sessions that must be good, in (0, 1].
    #[arg(
        long,
        value_name = "SHARE",
        default_value_t = 0.99,
        help_heading = "Capacity"
    )]
    pub good_share: f64,
    /// The staircase's first max_concurrency.
    #[arg(long, value_name = "N", default_value_t = 1, help_heading = "Capacity")]
    pub start: usize,
    /// The largest max_concurrency the search tries.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 256,
        help_heading = "Capacity"
    )]
    pub max: usize,
    /// Start with one staircase run: K more sessions every T seconds up to --max, each
    /// held until the last step's end (needs `[load] duration_s`, the hold of the
    /// search's own runs). Each step window is judged on the values taken in it, the
    /// step's refused sessions and the sessions that failed in it (thresholds whose
    /// metric has no value in a window, and per-session SLOs, are left to the whole
    /// runs); the search then bisects between the last holding and the first breaking
    /// window and confirms with whole runs. E.g. `--ramp 4:30`.
    #[arg(long, value_name = "K:T", value_parser = parse_ramp, help_heading = "Capacity")]
    pub ramp: Option<rtload::scenario::Steps>,
    /// Where each step's result and capacity.json go (created if missing; default
    /// `capacity-<scenario name>`).
    #[arg(long, value_name = "DIR", help_heading = "Capacity")]
    pub dir: Option<PathBuf>,
}

/// `--ramp K:T`: K ≥ 1 sessions every T > 0 seconds.
fn parse_ramp(s: &str) -> Result<rtload::scenario::Steps, String> {
    let bad = || format!("{s:?} is not K:T (K ≥ 1 sessions every T > 0 seconds), e.g. 4:30");
    let (k, t) = s.split_once(':').ok_or_else(bad)?;
    let sessions: usize = k.trim().parse().map_err(|_| bad())?;
    let every_s: f64 = t.trim().parse().map_err(|_| bad())?;
    if sessions == 0 || !every_s.is_finite() || every_s <= 0.0 {
        return Err(bad());
    }
    Ok(rtload::scenario::Steps { sessions, every_s })
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
    /// Result JSON files (from --output-json, --save-result, a sweep's sweep.json or a
    /// capacity search's capacity.json); each one's `.hlog` beside it is read for the
    /// time series. Two or more of the same workload are overlaid.
    #[arg(required_unless_present = "recompute", conflicts_with = "recompute")]
    pub results: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(long, value_name = "OUT.html", required_unless_present = "recompute")]
    pub html: Option<PathBuf>,
    /// Recompute the run recorded in DIR (`rtload run --record DIR`) from its trace
    /// alone: the recorded scenario's sessions (under the `[load]` and workload flags the
    /// run was given) are driven again in virtual time with the recorded messages, stamps
    /// and wake-ups, and the report, threshold verdicts and exit status are the run's. A
    /// workload that writes its own outputs (bundles, a saved result) writes them to a scratch
    /// folder, removed after: the run's are left alone. Needs the scenario's inputs where the run read
    /// them (relative to the recorded scenario path), each checked against its recorded
    /// sha256. The generator's resources (RSS, CPU), the negotiated compression and a
    /// scraped target's metrics are not in a trace: absent, and said so.
    #[arg(long, value_name = "DIR", conflicts_with = "html")]
    pub recompute: Option<PathBuf>,
    /// With --recompute: write the recomputed JSON result (and its .hlog) here.
    #[arg(long, value_name = "PATH", requires = "recompute")]
    pub output_json: Option<PathBuf>,
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

/// `rtload check`: `run` minus running. It takes every flag of `rtload run`, so the plan
/// it prints is the one `run` would execute with them.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The first scenario file, and `run`'s flags (they apply to every file checked).
    #[command(flatten)]
    pub run: RunArgs,
    /// More scenario files, checked the same way.
    #[arg(value_name = "SCENARIO")]
    pub more: Vec<PathBuf>,
    /// Also list every metric the scenario reports: its unit, which way is better, and
    /// what it is measured from and to (the result's `measurement_origin`).
    #[arg(long)]
    pub metrics: bool,
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
    /// Server configuration: a server TOML (cadence model, capacity and load model, fault
    /// switches, scripted rules) or a scenario file, whose `[server]` table is served.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Serve wss:// with this certificate chain (PEM; needs --tls-key).
    #[arg(long, value_name = "CERT.pem", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "KEY.pem", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Serve a recording (`rtload run SCENARIO --record DIR`) instead of the built-in
    /// endpoints: on every WebSocket path, each connection replays one recorded measured
    /// session's server side (round-robin over them; warm-ups only when nothing else was
    /// recorded), with its original timing. Each recorded server message is anchored to
    /// the latest client message recorded before it (or the open) and sent that long after
    /// the live client's matching message arrives, less the live round trip (pings at the
    /// open), its timer aimed early by the server's usual timer lag (the median lateness
    /// of its recent timers), so the client measures what the recording measured. Live client messages are matched in
    /// order by kind (text/binary) and JSON `type`. A client that departs beyond
    /// --replay-tolerance gets {"type":"error","error":{"type":"replay_diverged",...}} and
    /// a close with 1008, counted in /metrics (rtload_server_replay_diverged_total).
    /// --config still sets workers, idle_timeout_s, max_frame_bytes and max_sessions.
    #[arg(long, value_name = "DIR")]
    pub replay: Option<PathBuf>,
    /// Time scale of the replayed server's delays: 2 answers twice as fast, 0.5 half as
    /// fast. Range (0, 1000]; default 1. Only with --replay.
    #[arg(long, value_name = "X")]
    pub replay_speed: Option<f64>,
    /// Departures from the recorded client messages one connection may make before it
    /// diverges: a live message matching the recorded one k places ahead skips those k
    /// (spending k; replies anchored to them count from then), one matching none of the
    /// next few is ignored (spending 1). 0: the client must send exactly the recorded
    /// kinds and types, in order (the default). Only with --replay.
    #[arg(long, value_name = "N")]
    pub replay_tolerance: Option<u32>,
}
