//! Live metrics: `--metrics-addr` serves Prometheus text while the run lasts (and its
//! final values after it, while the caller keeps the endpoint), the
//! embedded server exposes its own `/metrics`, and `[target] metrics_url` puts the
//! target's series into the JSON result. Everything on 127.0.0.1, ports chosen by the OS.

use std::time::Duration;

use rtload::run::{Distributed, run_serving};
use rtload::scenario::{self, Overrides};
use rtload::server::{EmbeddedServer, ServerConfig};

use crate::support::http_get;

fn server() -> EmbeddedServer {
    let cfg = ServerConfig::from_toml_str(
        "[video]\nfirst_chunk_ms = 20\nchunk_interval_ms = 100\nramp_chunks = 0\n",
    )
    .unwrap();
    EmbeddedServer::start(([127, 0, 0, 1], 0).into(), cfg).unwrap()
}

#[test]
fn a_run_serves_live_metrics_and_records_the_targets_series() {
    let srv = server();
    let dir = tempfile::tempdir().unwrap();
    let sc = dir.path().join("scenario.toml");
    // Two sessions of 20 chunks at 100 ms: about 2 s, long enough to be scraped live.
    std::fs::write(
        &sc,
        format!(
            r#"
name = "live"
[target]
url = "ws://{a}"
metrics_url = "http://{a}/metrics"
[workload]
kind = "video-cadence"
num_chunks = 20
warmup_chunks = 1
[load]
samples = 2
max_concurrency = 2
[output]
json = "out.json"
"#,
            a = srv.addr()
        ),
    )
    .unwrap();
    let scenario = scenario::load(&sc, &Overrides::default()).unwrap();
    let (tx, rx) = crossbeam_channel::bounded(1);
    let dist = Distributed {
        metrics_addr: Some(([127, 0, 0, 1], 0).into()),
        metrics_bound: Some(tx),
        ..Distributed::default()
    };
    let scraper = std::thread::spawn(move || {
        let addr: std::net::SocketAddr = rx.recv_timeout(Duration::from_secs(60)).unwrap();
        http_get(&format!("http://{addr}/metrics"), Duration::from_secs(10))
    });
    let (summary, endpoint) =
        run_serving(&scenario, Box::new(std::io::sink()), None, None, &dist).unwrap();
    assert!(summary.passed());
    // The endpoint outlives the run until dropped, so the scrape cannot miss it.
    let endpoint = endpoint.expect("the --metrics-addr endpoint is handed back");
    let live = scraper
        .join()
        .unwrap()
        .expect("live /metrics answered during the run");
    for want in [
        "# TYPE rtload_sessions_active gauge",
        "rtload_sessions_completed_total{phase=\"measured\"}",
        "# TYPE rtload_queue_wait_seconds histogram",
        "rtload_send_lateness_seconds_bucket{le=\"+Inf\"}",
        "rtload_headline_seconds_count{metric=\"ttfc\"}",
    ] {
        assert!(live.contains(want), "missing {want} in\n{live}");
    }
    // After the run: the final values, every measured session completed.
    let after = http_get(
        &format!("http://{}/metrics", endpoint.addr()),
        Duration::from_secs(10),
    )
    .unwrap();
    assert!(
        after.contains("rtload_sessions_completed_total{phase=\"measured\"} 2\n"),
        "{after}"
    );
    endpoint.linger(Duration::ZERO, None);
    // The server's own endpoint, after the run: both sessions were served.
    let text = http_get(
        &format!("http://{}/metrics", srv.addr()),
        Duration::from_secs(10),
    )
    .unwrap();
    assert!(
        text.contains("rtload_server_sessions_started_total{endpoint=\"video\"} 2\n"),
        "{text}"
    );
    assert!(
        text.contains("rtload_server_websocket_connections_total{endpoint=\"video\"} 2\n"),
        "{text}"
    );
    // Its series went into the JSON result beside rtload's own timeline.
    let doc = rtload::report::read_result(&dir.path().join("out.json")).unwrap();
    let tl = &doc["rtload_target_metrics"];
    assert!(tl["scrapes"].as_u64().unwrap() >= 1, "{tl}");
    assert_eq!(tl["failed_scrapes"], 0, "{tl}");
    let active = &tl["series"]["rtload_server_websocket_connections_active{endpoint=\"video\"}"];
    assert!(!active.as_array().unwrap().is_empty(), "{tl}");
    assert!(tl["series"]["rtload_server_sessions_started_total{endpoint=\"duplex\"}"].is_array());
    srv.stop();
}

#[test]
fn a_metrics_url_that_is_not_plain_http_is_a_config_error() {
    let dir = tempfile::tempdir().unwrap();
    let sc = dir.path().join("scenario.toml");
    std::fs::write(
        &sc,
        "[target]\nurl = \"ws://127.0.0.1:9\"\nmetrics_url = \"https://u:secret@h/metrics\"\n[workload]\nkind = \"video-cadence\"\n",
    )
    .unwrap();
    let e = scenario::load(&sc, &Overrides::default()).unwrap_err();
    let msg = e.iter().map(ToString::to_string).collect::<String>();
    assert!(msg.contains("plain http:// URL"), "{msg}");
    assert!(!msg.contains("secret"), "{msg}");
}
