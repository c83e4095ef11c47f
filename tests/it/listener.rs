//! What an OmniInteract listener hears, end to end: the embedded server paces its audio
//! deltas slower or faster than real time (`[server.duplex] rtf`), the sample's playback
//! role simulates the listener, and the `audio_stall_*` metrics reach thresholds.

use crate::duplex_support::{Opts, duplex};
use crate::support::{failure_messages, rtload};

/// `audio_stall_count.p99` must be 0.
const NO_STALLS: &str = "[thresholds]\n\"audio_stall_count.p99\" = \"== 0\"\n";

/// One case; every response is 4 deltas of 50 ms audio.
fn opts<'a>(server: &'a str, workload: &'a str) -> Opts<'a> {
    Opts {
        samples: 1,
        max_concurrency: 1,
        server,
        workload,
        prelude: NO_STALLS,
        ..Opts::default()
    }
}

#[test]
fn audio_slower_than_real_time_stalls_and_fails_the_threshold() {
    // Each 50 ms delta is sent 150 ms after the previous one: the listener runs dry
    // before every delta after the first (≈ 100 ms each), whatever the scheduling noise.
    let fx = duplex(&opts("audio_deltas = 4\nrtf = 3.0", ""));
    let s = fx.run();
    assert!(
        failure_messages(&s).is_empty(),
        "{:?}",
        failure_messages(&s)
    );
    let m = s.report.metrics();
    assert!(m["audio_stall_count.p99"] > 0.0, "{m:?}");
    assert!(m["audio_stall_ms.mean"] > 0.0, "{m:?}");
    assert!(m.contains_key("audio_time_to_first_stall_ms.p99"), "{m:?}");
    assert!(!s.passed(), "the stall threshold must fail");
    let text = s.report.render_text();
    assert!(text.contains("Listener Playback"), "{text}");

    let out = rtload().arg("run").arg(&fx.path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        format!("{stdout}{stderr}").contains("audio_stall_count.p99"),
        "{stdout}\n{stderr}"
    );
}

#[test]
fn audio_faster_than_real_time_never_stalls() {
    // Each 50 ms delta is sent 10 ms after the previous one (the fast test default
    // RTF 0.2): a stall would need one delta delayed 40 ms more than the first.
    let fx = duplex(&opts("audio_deltas = 4", ""));
    let s = fx.run();
    assert!(s.passed(), "{:?} {:?}", failure_messages(&s), s.verdicts);
    let m = s.report.metrics();
    assert_eq!(m["audio_stall_count.p99"], 0.0, "{m:?}");
    assert_eq!(m["audio_stall_ms.mean"], 0.0, "{m:?}");
    assert!(m["audio_stall_count.count"] >= 1.0, "{m:?}");
    assert!(
        !m.contains_key("audio_time_to_first_stall_ms.mean"),
        "{m:?}"
    );
}

#[test]
fn a_prebuffer_longer_than_each_response_hides_slow_audio() {
    // 200 ms of audio per response and a 500 ms prebuffer: each response plays once it
    // has fully arrived, so the slow server causes no stall.
    let fx = duplex(&opts(
        "audio_deltas = 4\nrtf = 3.0",
        "playback_prebuffer_ms = 500",
    ));
    let s = fx.run();
    assert!(s.passed(), "{:?} {:?}", failure_messages(&s), s.verdicts);
    assert_eq!(s.report.metrics()["audio_stall_count.p99"], 0.0);
}

#[test]
fn prebuffer_out_of_range_is_a_config_error() {
    let fx = duplex(&opts("", "playback_prebuffer_ms = -1"));
    let out = rtload().arg("check").arg(&fx.path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("`playback_prebuffer_ms` must be in [0, 60000] ms (got -1)"),
        "{stderr}"
    );
}
