//! Every error path of spec §2.4–§2.6, driven through a fault switch of the embedded
//! server: the affected sample ends with the reference's message, the run reports it
//! as failed, and the other samples' results are intact.

use crate::support::{failure_messages, video};

/// Run 3 samples where the fault hits only the server's second session; return the
/// single failure message after checking the other two sessions completed.
#[track_caller]
fn one_faulty_of_three(chunks: u32, fault: &str, extra: &str) -> String {
    let fx = video(
        chunks,
        3,
        &format!("{extra}\n[server.video.faults]\nonly_sessions = [1]\n{fault}"),
    );
    let s = fx.run();
    assert!(!s.passed());
    let msgs = failure_messages(&s);
    assert_eq!(msgs.len(), 1, "exactly one sample fails: {msgs:?}");
    let json = s.report.to_json();
    let ok = json["sessions"].as_array().unwrap();
    assert_eq!(ok.len(), 2, "the other sessions are intact");
    for sess in ok {
        assert_eq!(sess["chunks"].as_array().unwrap().len(), chunks as usize);
    }
    assert_eq!(json["metrics"]["sessions"], 2);
    assert_eq!(s.report.metrics()["failed"], 1.0);
    msgs.into_iter().next().unwrap()
}

#[test]
fn error_instead_of_starting() {
    let m = one_faulty_of_three(3, "error_on_start = \"model is loading\"", "");
    assert_eq!(
        m,
        "Server rejected the session after 0 chunk(s): model is loading (requested 3 chunks = num_frames 33)"
    );
    let fx = video(
        3,
        1,
        "[server.video.faults]\nerror_on_start = \"model is loading\"",
    );
    let s = fx.run();
    assert_eq!(kinds(&s), [("server_error".to_string(), 1)]);
}

#[test]
fn error_after_some_chunks() {
    let m = one_faulty_of_three(4, "error_after_chunks = 2", "");
    assert!(
        m.starts_with("Server rejected the session after 2 chunk(s): "),
        "{m}"
    );
    assert!(m.ends_with("(requested 4 chunks = num_frames 45)"), "{m}");
}

#[test]
fn binary_without_metadata() {
    let m = one_faulty_of_three(3, "binary_without_metadata = true", "");
    assert_eq!(
        m,
        "Received a binary frame with no preceding video.chunk_metadata event."
    );
}

#[test]
fn stopped_session() {
    let m = one_faulty_of_three(3, "stopped = true", "");
    assert!(
        m.starts_with("The session was stopped before it finished: {"),
        "{m}"
    );
    assert!(m.contains("\"stopped\":true"), "{m}");
}

#[test]
fn out_of_order_indices() {
    let m = one_faulty_of_three(4, "out_of_order = true", "");
    assert_eq!(
        m,
        "Chunk indices are not contiguous from zero: [0, 2, 1, 3]"
    );
}

#[test]
fn duplicate_index() {
    let m = one_faulty_of_three(4, "duplicate_index = true", "");
    assert!(
        m.starts_with("Chunk indices are not contiguous from zero: [0, 1, 1"),
        "{m}"
    );
}

#[test]
fn fewer_chunks_than_asked() {
    let m = one_faulty_of_three(4, "fewer_chunks = 1", "");
    assert_eq!(m, "Expected 4 chunks for num_frames=45, received 3.");
}

#[test]
fn no_chunk_at_all() {
    let m = one_faulty_of_three(3, "fewer_chunks = 3", "");
    assert_eq!(
        m,
        "The session finished without delivering a single media chunk."
    );
}

#[test]
fn close_without_session_done() {
    let m = one_faulty_of_three(4, "close_after_chunks = 2", "");
    assert!(
        m.starts_with("The server closed the session without session.done after 2 chunk(s)"),
        "{m}"
    );
}

#[test]
fn stall_hits_the_chunk_timeout() {
    // The stalled session keeps its socket open; the 1 s chunk timeout ends it.
    let fx = video(
        4,
        2,
        "[server.video.faults]\nonly_sessions = [0]\nstall_after_chunks = 2",
    );
    let text = std::fs::read_to_string(&fx.path)
        .unwrap()
        .replace("chunk_timeout = 30.0", "chunk_timeout = 1.0");
    std::fs::write(&fx.path, text).unwrap();
    let s = fx.run();
    assert_eq!(
        failure_messages(&s),
        [
            "No media chunk for 1 s after 2 chunk(s); the server may still be loading, compiling, or capturing graphs."
        ]
    );
    assert_eq!(s.report.to_json()["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(kinds(&s), [("timeout".to_string(), 1)]);
}

/// The run's failures counted per kind.
fn kinds(s: &rtload::RunSummary) -> Vec<(String, usize)> {
    s.failures_by_kind.clone().into_iter().collect()
}

#[test]
fn slow_first_chunk_hits_the_first_chunk_timeout_despite_pongs() {
    // Pings every 100 ms are answered with pongs; pongs never extend the deadline.
    let fx = video(2, 1, "first_chunk_ms = 60000");
    let text = std::fs::read_to_string(&fx.path).unwrap().replace(
        "first_chunk_timeout = 30.0",
        "first_chunk_timeout = 0.5\nping_interval = 0.1",
    );
    std::fs::write(&fx.path, text).unwrap();
    let s = fx.run();
    assert_eq!(
        failure_messages(&s),
        [
            "No media chunk for 0.5 s after 0 chunk(s); the server may still be loading, compiling, or capturing graphs."
        ]
    );
    // Pings were sent while waiting (lateness is recorded for each scheduled message);
    // on a loaded machine the deadline may win over the last ones, so ask for one.
    let late = &s.report.to_json()["rtload"]["send_lateness"];
    assert!(
        late["count"].as_u64().unwrap() >= 2,
        "session.start + pings: {late}"
    );
}

#[test]
fn connection_refused_is_a_recorded_failure() {
    // Bind and drop a listener to get a port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let fx = video(2, 2, "");
    let text = std::fs::read_to_string(&fx.path).unwrap().replace(
        "name = \"t\"",
        &format!("name = \"t\"\n[target]\nurl = \"ws://127.0.0.1:{port}\""),
    );
    std::fs::write(&fx.path, text).unwrap();
    let s = fx.run();
    let msgs = failure_messages(&s);
    assert_eq!(msgs.len(), 2);
    assert!(
        msgs[0].starts_with(&format!(
            "connect to ws://127.0.0.1:{port}/v1/realtime/video failed"
        )),
        "{msgs:?}"
    );
    assert_eq!(kinds(&s), [("connect".to_string(), 2)]);
}

/// Issue 11 item 8: the command (a playback buffer deeper than the rollout, which
/// used to fail only at report time and exit 0) is now refused before the run, exit 2,
/// naming the key and the fix. That every report-time failure counts (kind `report`, exit
/// 1) is `runner::summary::tests::report_time_failures_count_once_with_their_kind`.
#[test]
fn a_buffer_deeper_than_the_rollout_is_refused_before_the_run() {
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/video-cadence.toml");
    for cmd in ["check", "run"] {
        let mut args = vec![cmd, scenario];
        if cmd == "run" {
            args.extend([
                "--num-chunks",
                "3",
                "--playback-buffer-chunks",
                "5",
                "--quiet",
            ]);
        }
        let out = crate::support::rtload().args(&args).output().unwrap();
        if cmd == "check" {
            assert_eq!(out.status.code(), Some(0), "the shipped scenario is valid");
            continue;
        }
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("playback_buffer_chunks") && err.contains("deeper than the rollout"),
            "{err}"
        );
    }
}
