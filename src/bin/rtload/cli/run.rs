//! `rtload run`'s flags: the scenario, target, output and interrupt options, the
//! `[load]` overrides, headers and TLS, sweeps and distributed runs; and the
//! [`Overrides`](rtload::scenario::Overrides) they express (with the workload
//! flags, which `super::workload` adds).

use std::path::PathBuf;

use clap::Args;
use rtload::run::Record;
use rtload::scenario::Compression;

/// `rtload run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenario file (TOML); required unless --replay is given.
    pub scenario: Option<PathBuf>,
    /// Replay the client side of a recording (a DIR written by `run SCENARIO --record
    /// DIR`) against --target, for any protocol, with no scenario: each recorded measured
    /// session's client messages are sent again byte for byte at their recorded offsets
    /// from its open, with the recorded run's `[load]` arrival and concurrency keys (the
    /// file's, with the `[load]` flags given when recording; --num-prompts N loops over
    /// the sessions; every `[load]` flag given here applies over them). For each client
    /// message type X whose first server message after it in the recording was of type Y,
    /// the metric `replay_<x>_to_<y>_ms` is the latency from X's intended send to the first
    /// live Y after it; `replay_replies_<y>` counts replies, `replay_missing_replies` the
    /// expected replies that never came. A session fails when an expected reply is still
    /// missing --replay-grace-s after the recorded session's length, or the server closes
    /// first. A scenario file can name the same workload (`recording = "DIR"`) to add
    /// thresholds, sweeps and capacity: README, "Capture once, replay anywhere".
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with = "scenario",
        requires = "target"
    )]
    pub replay: Option<PathBuf>,
    /// Target URL (ws://, wss://, http://, https://); overrides `[target] url`.
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// Write the workload's JSON result here (atomically), and its HdrHistogram interval
    /// log next to it (same name, `.hlog`); `rtload.outcomes` counts each session's class
    /// (good, degraded, rejected, failed).
    #[arg(long, value_name = "PATH")]
    pub output_json: Option<PathBuf>,
    /// On Ctrl-C / SIGTERM: seconds in-flight sessions may still finish before they are
    /// cancelled as `interrupted`. No new session starts after the signal; the results of
    /// the sessions that ran are written, marked `"interrupted": true`, and rtload exits
    /// 130. A second signal stops at once (files on disk stay consistent).
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0, value_parser = parse_grace)]
    pub grace_period: f64,

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
    /// Hold each session this many seconds (a soak; `[load] duration_s`).
    #[arg(long, value_name = "S", help_heading = "Load")]
    pub duration_s: Option<f64>,
    /// Period of the RSS/CPU and session-age series (`[load] series_interval_s`, default 60).
    #[arg(long, value_name = "S", help_heading = "Load")]
    pub series_interval_s: Option<f64>,

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
    /// `deflate` (default) offers permessage-deflate as Python websockets and browsers do
    /// (used only when the server accepts); `none` offers no compression. Overrides
    /// `[target] compression`.
    #[arg(long, value_name = "deflate|none", value_parser = Compression::parse)]
    pub compression: Option<Compression>,
    /// Suppress live progress.
    #[arg(long, short)]
    pub quiet: bool,
    /// Run the scenario at each point, e.g. `max_concurrency=1,2,4,8` or
    /// `request_rate=1,2,4`, with a line on stderr as each point starts and ends (unless
    /// --quiet). Prints a table (every metric a threshold judges gets a column), what broke
    /// at each failing point (threshold and measured value), and the capacity: the highest
    /// point whose thresholds (and every lower point's) held, that reached its value and
    /// was not generator-bound. Without [thresholds] no capacity is claimed. Exits 1 when
    /// any point failed. Ctrl-C ends the current point gracefully, starts no further
    /// point, writes what finished (marked interrupted) and exits 130. Overrides
    /// `[sweep]`.
    #[arg(long, value_name = "PARAM=V1,V2,...", help_heading = "Load")]
    pub sweep: Option<String>,
    /// Where a sweep writes each point's result, sweep.json and sweep.html (created if
    /// missing; default `sweep-<scenario name>`).
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
    /// active/completed/failed, per outcome class: good/degraded/rejected/failed, queue wait, send lateness, the headline metric; names in
    /// base units: seconds, `_total` counters), and its final values for
    /// --metrics-linger after it.
    #[arg(long, value_name = "HOST:PORT", help_heading = "Distributed")]
    pub metrics_addr: Option<std::net::SocketAddr>,
    /// Seconds --metrics-addr keeps serving the final values once the run has reported,
    /// so a scraper sees the finished run (default 30: two scrapes at a 15 s interval);
    /// 0 stops at once. Ctrl-C ends the wait; the exit status stays the run's.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = rtload::run::DEFAULT_METRICS_LINGER.as_secs_f64(),
        value_parser = parse_grace,
        help_heading = "Distributed"
    )]
    pub metrics_linger: f64,

    /// Record every session's wire trace into DIR (created; must be empty): both
    /// directions, each message with its send or receipt time on the run's clock (the
    /// result's started_s/ended_s), JSON `type`, size and sha256, closes with their codes;
    /// each distinct payload stored once in DIR/blobs/<sha256>; DIR/manifest.json names
    /// the scenario (text and hash, the [load] and workload flags given over it and the
    /// effective [load]), its input files' hashes, rtload's version and git
    /// revision, the target (redacted) and the server's handshake headers. Text payloads
    /// and the manifest are redacted like every output (upgrade header values, URL
    /// secrets). A trace that cannot be written fails the run; a cap that cuts one is a
    /// warning and says `truncated: true` in its trace. Not with a sweep.
    #[arg(long, value_name = "DIR", help_heading = "Record")]
    pub record: Option<PathBuf>,
    /// With --record: events written per session; later ones are counted, not written (a
    /// session holds its lines, about 200 bytes each, until it ends).
    #[arg(long, value_name = "N", default_value_t = Record::new("").max_events_per_session,
        help_heading = "Record")]
    pub record_max_events: u64,
    /// With --record: distinct payload bytes stored in the run's blob store (also what
    /// recording holds in memory at most); later new payloads are marked `stored: false`.
    #[arg(long, value_name = "BYTES", default_value_t = Record::new("").max_blob_bytes,
        help_heading = "Record")]
    pub record_max_bytes: u64,

    /// The workload flags given (each kind's own, from its flag table; see
    /// `super::workload`): the scenario's kind types them into `[workload]` patches.
    #[arg(skip)]
    pub workload: Vec<rtload::workload::WorkloadFlag>,
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
            duration_s: self.duration_s,
            series_interval_s: self.series_interval_s,
        };
        Ok(rtload::scenario::Overrides {
            target: self.target.clone(),
            output_json: self.output_json.clone(),
            load,
            workload: self.workload.clone(),
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
            compression: self.compression,
        })
    }
}

/// `--grace-period`, `--metrics-linger`: finite seconds in 0..=3600.
fn parse_grace(v: &str) -> Result<f64, String> {
    match v.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && (0.0..=3600.0).contains(&s) => Ok(s),
        _ => Err(format!(
            "{v:?} is not a number of seconds in 0..=3600; use e.g. 5"
        )),
    }
}
