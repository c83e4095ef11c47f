//! The server's `/metrics` tallies: a connection counts as active until its guard drops,
//! sessions are numbered per endpoint, and every endpoint has its series.

use super::*;

#[test]
fn connections_and_sessions_are_counted_per_endpoint() {
    let m = Arc::new(ServerMetrics::default());
    let a = m.admit(Endpoint::Transcription).unwrap();
    let b = m.admit(Endpoint::Transcription).unwrap();
    assert_eq!(a.session_started(), 0);
    assert_eq!(b.session_started(), 1);
    let s = m.admit(Endpoint::Scripted).unwrap();
    assert_eq!(s.session_started(), 0, "ordinals are per endpoint");
    drop(a);
    let text = m.render();
    for want in [
        "rtload_server_websocket_connections_active{endpoint=\"transcription\"} 1\n",
        "rtload_server_websocket_connections_total{endpoint=\"transcription\"} 2\n",
        "rtload_server_sessions_started_total{endpoint=\"transcription\"} 2\n",
        "rtload_server_sessions_started_total{endpoint=\"scripted_rules\"} 1\n",
        "rtload_server_websocket_connections_active{endpoint=\"video\"} 0\n",
        "rtload_server_sessions_started_total{endpoint=\"duplex\"} 0\n",
    ] {
        assert!(text.contains(want), "missing {want}in\n{text}");
    }
}

fn limited(max_sessions: Option<u32>, k: Option<u32>) -> Arc<ServerMetrics> {
    let mut cfg = ServerConfig {
        max_sessions,
        ..ServerConfig::default()
    };
    cfg.load.rtf_one_at_sessions = k;
    Arc::new(ServerMetrics::new(&cfg))
}

#[test]
fn max_sessions_admits_that_many_over_every_endpoint_and_frees_on_drop() {
    let m = limited(Some(2), None);
    let a = m.admit(Endpoint::Duplex).unwrap();
    let _b = m.admit(Endpoint::Video).unwrap();
    assert!(m.admit(Endpoint::Duplex).is_none(), "the third is refused");
    assert!(m.admit(Endpoint::Transcription).is_none());
    drop(a);
    let _c = m
        .admit(Endpoint::Transcription)
        .expect("a freed slot admits again");
    let text = m.render();
    for want in [
        "rtload_server_sessions_refused_total{endpoint=\"duplex\"} 1\n",
        "rtload_server_sessions_refused_total{endpoint=\"transcription\"} 1\n",
        "vllm:num_requests_running 2\n",
        "vllm:num_requests_waiting 0\n",
        "vllm:websocket_connections_active 2\n",
    ] {
        assert!(text.contains(want), "missing {want}in\n{text}");
    }
}

#[test]
fn the_load_factor_reads_the_admitted_sessions() {
    let m = limited(None, Some(2));
    let a = m.admit(Endpoint::Duplex).unwrap();
    assert_eq!(a.load_factor(), 1.0);
    let b = m.admit(Endpoint::Duplex).unwrap();
    assert_eq!(a.load_factor(), 1.0, "k sessions run at base speed");
    let c = m.admit(Endpoint::Video).unwrap();
    assert_eq!(b.load_factor(), 1.5, "3 / 2");
    drop(c);
    assert_eq!(a.load_factor(), 1.0);
}
