//! The server's `/metrics` tallies: a connection counts as active until its guard drops,
//! sessions are numbered per endpoint, and every endpoint has its series.

use super::*;

#[test]
fn connections_and_sessions_are_counted_per_endpoint() {
    let m = Arc::new(ServerMetrics::default());
    let a = m.open(Endpoint::Transcription);
    let b = m.open(Endpoint::Transcription);
    assert_eq!(a.session_started(), 0);
    assert_eq!(b.session_started(), 1);
    let s = m.open(Endpoint::Scripted);
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
