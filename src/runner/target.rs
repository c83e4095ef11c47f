//! What a run aims at and watches: the target URL (or the embedded reference server,
//! started here from `[server]`), the run's one client TLS configuration, the target
//! metrics scraper (`[target] metrics_url`) and the live `--metrics-addr` endpoint, which
//! outlives the run for its linger.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use super::{Distributed, RunError};
use crate::config::scenario::Scenario;
use crate::engine::interrupt::InterruptSwitch;
use crate::server::{EmbeddedServer, ServerConfig};
use crate::util::target::{redact_url, resolve_url};

/// The run's target URL: the scenario's `target`, or the embedded server (started here and
/// returned, to be stopped once the run ends) when there is none.
pub(super) fn start_target(
    scenario: &Scenario,
) -> Result<(String, Option<EmbeddedServer>), RunError> {
    let workload = scenario.workload();
    let started = match &scenario.target() {
        Some(t) => (resolve_url(t, workload.default_path())?, None),
        None => {
            let cfg = embedded_config(scenario)?;
            let srv = EmbeddedServer::start(SocketAddr::from(([127, 0, 0, 1], 0)), cfg)
                .map_err(|e| RunError::Server(e.to_string()))?;
            (
                format!("ws://{}{}", srv.addr(), workload.default_path()),
                Some(srv),
            )
        }
    };
    tracing::debug!(
        target = %crate::util::target::redact_url(&started.0),
        samples = scenario.samples(),
        warmup = scenario.load().warmup_samples,
        "run starting"
    );
    Ok(started)
}

/// The embedded server's configuration: `[server]`, already validated at load.
fn embedded_config(scenario: &Scenario) -> Result<ServerConfig, RunError> {
    Ok(scenario.server().clone())
}

/// The run's one TLS configuration, shared by every shard's client (`None` for `ws://`).
pub(super) fn client_tls(
    url: &str,
    scenario: &Scenario,
) -> Result<Option<crate::engine::tls::ClientTls>, RunError> {
    Ok(url
        .starts_with("wss://")
        .then(|| crate::engine::tls::ClientTls::build(scenario.tls()))
        .transpose()?)
}

/// The target-metrics scraper, started when the scenario names a metrics endpoint.
pub(super) fn start_scraper(
    scenario: &Scenario,
) -> Result<Option<crate::util::scrape::Scraper>, RunError> {
    Ok(match &scenario.target_metrics() {
        Some((u, names)) => Some(
            crate::util::scrape::Scraper::start(u.clone(), redact_url(u), names.clone())
                .map_err(|e| RunError::Server(format!("metrics scraper: {e}")))?,
        ),
        None => None,
    })
}

/// The live tallies the coordinator updates and the endpoint serving them (both `None`
/// without `--metrics-addr`).
pub(super) type LiveParts = (
    Option<Arc<crate::engine::live::LiveMetrics>>,
    Option<LiveEndpoint>,
);

/// How long `rtload run --metrics-addr` keeps serving the final values after the run
/// (`--metrics-linger`): two scrape intervals at the 15 s that Prometheus's example
/// configuration uses, so a scraper sees the finished run at least twice.
pub const DEFAULT_METRICS_LINGER: Duration = Duration::from_secs(30);

/// The `--metrics-addr` endpoint: serves the run's tallies while it lasts and, handed
/// back by [`super::run_serving`], its final values after it, until
/// [`LiveEndpoint::linger`] ends or it is dropped.
pub struct LiveEndpoint {
    srv: crate::util::http::MetricsServer,
}

impl LiveEndpoint {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.srv.addr()
    }

    /// Keep serving for `linger`, or until `stop` flips (Ctrl-C), whichever comes first;
    /// then stop. Returns at once for a zero linger or a switch already flipped.
    pub fn linger(self, linger: Duration, stop: Option<&InterruptSwitch>) {
        if linger.is_zero() || stop.is_some_and(InterruptSwitch::is_triggered) {
            return self.srv.stop();
        }
        match tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
        {
            Ok(rt) => rt.block_on(async {
                let flipped = async {
                    match stop {
                        Some(s) => s.triggered().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    () = tokio::time::sleep(linger) => {}
                    () = flipped => {}
                }
            }),
            // No timer to wait on: stop at once rather than block past Ctrl-C.
            Err(e) => tracing::warn!("--metrics-linger: no timer ({e}); stopping at once"),
        }
        self.srv.stop();
    }
}

/// Start the `--metrics-addr` endpoint over fresh live tallies, when asked.
pub(super) fn serve_live_metrics(
    dist: &Distributed,
    shard: crate::workload::shard::Shard,
    headline: &str,
) -> Result<LiveParts, RunError> {
    let Some(addr) = dist.metrics_addr else {
        return Ok((None, None));
    };
    let live = Arc::new(crate::engine::live::LiveMetrics::new(
        headline,
        (shard.count > 1).then(|| shard.to_string()),
    ));
    let from = Arc::clone(&live);
    let render: crate::util::http::Render = Arc::new(move || from.render());
    let srv =
        crate::util::http::MetricsServer::start(addr, render).map_err(|e| RunError::Metrics {
            addr,
            msg: e.to_string(),
        })?;
    if let Some(tx) = &dist.metrics_bound {
        let _ = tx.send(srv.addr());
    }
    Ok((Some(live), Some(LiveEndpoint { srv })))
}
