//! Scraping a target's own Prometheus endpoint once a second during a run (`[target]
//! metrics_url`), keeping the chosen series as a timeline beside rtload's own: e.g. vLLM's
//! `vllm:num_requests_running` / `vllm:num_requests_waiting`, so a capacity knee can be
//! read against the server's queue.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::util::prom::{parse_samples, series_name};

/// Series kept when the scenario names none.
pub const DEFAULT_SERIES: &[&str] = &[
    "vllm:num_requests_running",
    "vllm:num_requests_waiting",
    "vllm:websocket_connections_active",
    "rtload_server_websocket_connections_active",
    "rtload_server_sessions_started_total",
];

/// The scraped timelines of one run.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Timeline {
    /// The scraped URL (user info removed).
    pub url: String,
    /// Seconds between scrapes.
    pub interval_s: f64,
    /// Unix time of the first scrape; every `t_s` is relative to it.
    pub start_unix_s: f64,
    /// Series (name with labels, as exposed) → `[t_s, value]` points.
    pub series: BTreeMap<String, Vec<[f64; 2]>>,
    /// Scrapes attempted.
    pub scrapes: u64,
    /// Scrapes that failed, and the last failure's message.
    pub failed_scrapes: u64,
    /// The last failure's message.
    pub last_error: Option<String>,
}

impl Timeline {
    /// Record one scrape's exposition `text` at `t_s`, keeping series named in `names`.
    pub fn record(&mut self, t_s: f64, text: &str, names: &[String]) {
        for (series, v) in parse_samples(text) {
            if names.iter().any(|n| n == series_name(&series)) && v.is_finite() {
                self.series.entry(series).or_default().push([t_s, v]);
            }
        }
    }
}

/// A scraper thread; [`Scraper::finish`] stops it and returns the timeline.
pub struct Scraper {
    stop: crossbeam_channel::Sender<()>,
    thread: std::thread::JoinHandle<Timeline>,
}

impl Scraper {
    /// Scrape `url` every second (first scrape now) keeping `names`.
    pub fn start(url: String, shown_url: String, names: Vec<String>) -> std::io::Result<Scraper> {
        let (stop, stopped) = crossbeam_channel::bounded::<()>(1);
        let thread = std::thread::Builder::new()
            .name("rtload-scrape".into())
            .spawn(move || {
                let start = Instant::now();
                let mut tl = Timeline {
                    url: shown_url,
                    interval_s: 1.0,
                    start_unix_s: std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0.0, |d| d.as_secs_f64()),
                    ..Timeline::default()
                };
                let mut next = start;
                loop {
                    let t = start.elapsed().as_secs_f64();
                    tl.scrapes += 1;
                    match crate::util::http::get(&url, Duration::from_secs(2)) {
                        Ok(text) => tl.record(t, &text, &names),
                        Err(e) => {
                            tl.failed_scrapes += 1;
                            tl.last_error = Some(e);
                        }
                    }
                    next += Duration::from_secs(1);
                    let wait = next.saturating_duration_since(Instant::now());
                    if stopped.recv_timeout(wait).is_ok() {
                        return tl;
                    }
                }
            })?;
        Ok(Scraper { stop, thread })
    }

    /// Stop after the scrape in progress and return the timeline.
    pub fn finish(self) -> Timeline {
        let _ = self.stop.send(());
        self.thread.join().unwrap_or_default()
    }
}
