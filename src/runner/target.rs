//! What a run aims at and watches: the target URL (or the embedded reference server,
//! started here from `[server]`), the run's one client TLS configuration, the target
//! metrics scraper (`[target] metrics_url`) and the live `--metrics-addr` endpoint.

use std::net::SocketAddr;
use std::sync::Arc;

use super::{Distributed, RunError};
use crate::config::scenario::Scenario;
use crate::server::{EmbeddedServer, ServerConfig};
use crate::util::target::{redact_url, resolve_url};

/// The run's target URL: the scenario's `target`, or the embedded server (started here and
/// returned, to be stopped once the run ends) when there is none.
pub(super) fn start_target(
    scenario: &Scenario,
) -> Result<(String, Option<EmbeddedServer>), RunError> {
    let workload = &scenario.workload;
    Ok(match &scenario.target {
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
    })
}

/// The embedded server's configuration: `[server]`, already validated at load.
fn embedded_config(scenario: &Scenario) -> Result<ServerConfig, RunError> {
    Ok(scenario.server.clone())
}

/// The run's one TLS configuration, shared by every shard's client (`None` for `ws://`).
pub(super) fn client_tls(
    url: &str,
    scenario: &Scenario,
) -> Result<Option<crate::engine::tls::ClientTls>, RunError> {
    Ok(url
        .starts_with("wss://")
        .then(|| crate::engine::tls::ClientTls::build(&scenario.tls))
        .transpose()?)
}

/// The target-metrics scraper, started when the scenario names a metrics endpoint.
pub(super) fn start_scraper(
    scenario: &Scenario,
) -> Result<Option<crate::util::scrape::Scraper>, RunError> {
    Ok(match &scenario.target_metrics {
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
    Option<crate::util::http::MetricsServer>,
);

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
    Ok((Some(live), Some(srv)))
}
