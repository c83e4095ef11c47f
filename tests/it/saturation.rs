//! An embedded server that saturates like a real one: `[server] max_sessions` admits that
//! many sessions and refuses the next the way the real server of the protocol does
//! (vLLM-Omni's `resource_exhausted` error event on duplex, HTTP 503 with `Retry-After`
//! elsewhere, a 1013 close when asked), `[server.load]` stretches the generation by
//! `max(1, active / rtf_one_at_sessions)` so measured TTFP and RTF grow with concurrency,
//! and `/metrics` carries vLLM's gauges while a run lasts. Everything on 127.0.0.1,
//! ports chosen by the OS; the known answers are the model's own numbers.

use std::time::Duration;

use rtload::server::{EmbeddedServer, ServerConfig};

use crate::duplex_support::{Opts, assert_bundles, duplex, out_dir};
use crate::support::{failure_messages, http_get, video};

fn start(toml: &str) -> EmbeddedServer {
    let cfg = ServerConfig::from_toml_str(toml).unwrap();
    EmbeddedServer::start(([127, 0, 0, 1], 0).into(), cfg).unwrap()
}

/// The largest value a scraped series reached (`None`: never scraped).
fn max_of(tl: &serde_json::Value, series: &str) -> Option<f64> {
    tl["series"][series]
        .as_array()?
        .iter()
        .filter_map(|p| p[1].as_f64())
        .reduce(f64::max)
}

/// 30 duplex sessions at once against `max_sessions = 24`: 24 complete, 6 fail with
/// vLLM-Omni's capacity error in their message, and the server's `/metrics`, scraped
/// beside the run, showed 24 requests running and nothing waiting. Sessions last over
/// 3 s (their audio) while every connect happens at the release, so the 24 are all open
/// when the last 6 ask.
#[test]
fn max_sessions_admits_24_of_30_duplex_sessions_and_refuses_6_as_vllm_omni() {
    let srv = start(
        "max_sessions = 24\n[duplex]\nrespond_every_s = 0.5\ndelta_ms = 50\nrtf = 0.2\n\
         first_response_delay_ms = 20\n",
    );
    let a = srv.addr();
    let prelude = format!(
        "[target]\nurl = \"ws://{a}/v1/realtime\"\nmetrics_url = \"http://{a}/metrics\"\n\
         metrics_series = [\"vllm:num_requests_running\", \"vllm:num_requests_waiting\", \
         \"vllm:websocket_connections_active\"]\n[output]\njson = \"out.json\"\n"
    );
    let fx = duplex(&Opts {
        duration_ms: 3000,
        cases_per_subset: 10,
        samples: 30,
        max_concurrency: 30,
        prelude: &prelude,
        ..Opts::default()
    });
    let summary = fx.run();
    let failures = failure_messages(&summary);
    assert_eq!(failures.len(), 6, "{failures:#?}");
    eprintln!("a refused session: {}", failures[0]);
    for f in &failures {
        assert!(
            f.contains("duplex_session_capacity_exhausted: limit=24")
                && f.contains("resource_exhausted")
                && f.contains("1013"),
            "{f}"
        );
    }
    assert_bundles(&out_dir(&fx), 30, 6);
    let doc = rtload::report::read_result(&fx.dir.path().join("out.json")).unwrap();
    // Refused for capacity: rejected, not failed (the client's own classes).
    let classes = &doc["rtload"]["outcomes"];
    assert_eq!(classes["rejected"], 6, "{classes}");
    assert_eq!(classes["failed"], 0, "{classes}");
    let tl = &doc["rtload_target_metrics"];
    assert_eq!(max_of(tl, "vllm:num_requests_running"), Some(24.0), "{tl}");
    assert_eq!(
        max_of(tl, "vllm:websocket_connections_active"),
        Some(24.0),
        "{tl}"
    );
    assert_eq!(max_of(tl, "vllm:num_requests_waiting"), Some(0.0), "{tl}");
    let text = http_get(&format!("http://{a}/metrics"), Duration::from_secs(10)).unwrap();
    for want in [
        "rtload_server_sessions_refused_total{endpoint=\"duplex\"} 6\n",
        "rtload_server_websocket_connections_total{endpoint=\"duplex\"} 24\n",
        "vllm:num_requests_running 0\n",
    ] {
        assert!(text.contains(want), "missing {want}in\n{text}");
    }
    srv.stop();
}

/// Video sessions beyond `max_sessions` get HTTP 503 with `Retry-After` by default,
/// and a 1013 close when `refuse_with = "close_1013"`; the client's failure says which.
#[test]
fn video_refusals_are_http_503_by_default_or_a_1013_close() {
    for (how, want) in [
        ("", "HTTP 503 Service Unavailable"),
        ("refuse_with = \"close_1013\"\n", "1013"),
    ] {
        // Three sessions of 20 chunks 100 ms apart (2 s), two admitted.
        let fx = video(
            20,
            3,
            &format!("chunk_interval_ms = 100\n[server]\nmax_sessions = 2\n{how}"),
        );
        let failures = failure_messages(&fx.run());
        assert_eq!(failures.len(), 1, "{how}: {failures:#?}");
        eprintln!("a refused video session: {}", failures[0]);
        assert!(failures[0].contains(want), "{how}: {}", failures[0]);
        if how.is_empty() {
            assert!(failures[0].contains("Retry-After: 1 s"), "{}", failures[0]);
        }
    }
}

/// Mean of a recorded distribution.
fn mean(summary: &rtload::RunSummary, name: &str) -> f64 {
    let v = summary.report.recorded().values(name);
    assert!(!v.is_empty(), "no {name} values");
    v.iter().sum::<f64>() / v.len() as f64
}

/// `[server.load] rtf_one_at_sessions = 2`: one session runs at load 1, four at once at
/// load 4 / 2 = 2. The server sends each response's first audio `200 ms * load` after
/// `response.created` and its 4 deltas of 100 ms `100 * 0.5 * load` ms apart, so the
/// client's TTFP is `200 * load` ms and its RTF `load * (200 + 3 * 50) / 400` =
/// 0.875 * load: under 1 alone, 1.75 at four sessions. Measured means agree with the
/// model within 20 % (receipt stamps on a busy machine), and the ratio of the two
/// runs is the load ratio, 2, within 20 %.
#[test]
fn load_model_stretches_measured_ttfp_and_rtf_with_concurrency() {
    let run = |sessions: usize| {
        let fx = duplex(&Opts {
            duration_ms: 1000,
            cases_per_subset: 2,
            samples: sessions,
            max_concurrency: sessions,
            server: "delta_ms = 100\naudio_deltas = 4\nrtf = 0.5\nfirst_response_delay_ms = 200\n\
                     [server.load]\nrtf_one_at_sessions = 2\n",
            ..Opts::default()
        });
        let summary = fx.run();
        assert!(
            failure_messages(&summary).is_empty(),
            "{:?}",
            failure_messages(&summary)
        );
        (mean(&summary, "audio_ttfp_ms"), mean(&summary, "audio_rtf"))
    };
    let (ttfp1, rtf1) = run(1);
    let (ttfp4, rtf4) = run(4);
    eprintln!("TTFP {ttfp1:.1} → {ttfp4:.1} ms, RTF {rtf1:.3} → {rtf4:.3}");
    let near = |what: &str, got: f64, model: f64| {
        assert!(
            (got - model).abs() <= 0.2 * model,
            "{what}: measured {got}, model {model}"
        );
    };
    near("TTFP alone", ttfp1, 200.0);
    near("TTFP at four sessions", ttfp4, 400.0);
    near("RTF alone", rtf1, 0.875);
    near("RTF at four sessions", rtf4, 1.75);
    near("TTFP ratio", ttfp4 / ttfp1, 2.0);
    near("RTF ratio", rtf4 / rtf1, 2.0);
    assert!(
        rtf1 < 1.0 && rtf4 > 1.0,
        "the RTF crosses 1: {rtf1} → {rtf4}"
    );
}

/// Transcription sessions past `max_sessions` get HTTP 503 too, counted as refused on
/// their endpoint. Three real-time sessions of four words (over a second each, all
/// released at once), two admitted.
#[test]
fn transcription_refusals_are_http_503() {
    let srv = start("max_sessions = 2\n[transcription]\nlatency_ms = 10\nfinal_delay_ms = 10\n");
    let fx = crate::support::Fixture::new("");
    crate::support::synth_dataset(
        "transcription",
        &fx.dir.path().join("synth"),
        &rtload::dataset::SynthOptions {
            files: 3,
            words: 4,
            ..crate::support::synth_defaults()
        },
    );
    let toml = format!(
        "name = \"t\"\n[target]\nurl = \"ws://{}/v1/realtime\"\n[workload]\n\
         kind = \"realtime-transcription\"\ndataset_path = \"synth\"\npacing = \"realtime\"\n\
         done_timeout_s = 5.0\n[load]\nsamples = 3\nmax_concurrency = 3\n",
        srv.addr()
    );
    std::fs::write(&fx.path, toml).unwrap();
    let failures = failure_messages(&fx.run());
    assert_eq!(failures.len(), 1, "{failures:#?}");
    assert!(
        failures[0].contains("HTTP 503 Service Unavailable")
            && failures[0].contains("Retry-After: 1 s"),
        "{}",
        failures[0]
    );
    let text = http_get(
        &format!("http://{}/metrics", srv.addr()),
        Duration::from_secs(10),
    )
    .unwrap();
    for want in [
        "rtload_server_sessions_refused_total{endpoint=\"transcription\"} 1\n",
        "rtload_server_sessions_started_total{endpoint=\"transcription\"} 2\n",
    ] {
        assert!(text.contains(want), "missing {want}in\n{text}");
    }
    srv.stop();
}
