use super::*;
use crate::workload::playback::{PlaybackSummary, StreamPlayback};

fn rec(outcome: Result<(), Failure>, stalls: Option<u64>) -> SampleRecord {
    SampleRecord {
        idx: 0,
        warmup: false,
        session: Some(0),
        scheduled_s: 0.0,
        queue_wait_s: 0.002,
        started_s: 1.0,
        opened_s: Some(1.1),
        ended_s: 3.5,
        outcome,
        send_lateness_s: vec![0.001, 0.004],
        send_lateness: crate::workload::spool::lateness::SentLateness {
            count: 2,
            max_s: Some(0.004),
            ..Default::default()
        },
        playback: stalls.map(|n| PlaybackSummary {
            streams: vec![StreamPlayback {
                stream: 0,
                units: 4,
                buffer_filled: true,
                start_s: 0.25,
                stall_count: n,
                total_stall_s: 0.5 * n as f64,
                time_to_first_stall_s: None,
                first_stall_index: None,
                playback_span_s: 2.0,
            }],
            units_past_window: 0,
            spilled: None,
        }),
        output: None,
    }
}

fn no_stalls() -> Rules {
    Rules {
        reject_patterns: vec![RejectPattern::code("resource_exhausted")],
        slo: vec![SessionBound {
            metric: "stall_count".into(),
            expr: "== 0".into(),
            holds: Arc::new(|v| v == 0.0),
        }],
    }
}

#[test]
fn each_outcome_lands_in_its_class() {
    let r = no_stalls();
    let fail = |k, m: &str| Err(Failure::new(k, m));
    assert_eq!(r.classify(&rec(Ok(()), Some(0))), Some(Class::Good));
    assert_eq!(r.classify(&rec(Ok(()), Some(2))), Some(Class::Degraded));
    // No media played: the bound is not judged.
    assert_eq!(r.classify(&rec(Ok(()), None)), Some(Class::Good));
    let refused = FailureKind::Handshake { status: Some(429) };
    assert_eq!(
        r.classify(&rec(fail(refused, "429"), None)),
        Some(Class::Rejected)
    );
    let busy = FailureKind::Handshake { status: Some(503) };
    assert_eq!(
        r.classify(&rec(fail(busy, "503"), None)),
        Some(Class::Rejected)
    );
    let denied = FailureKind::Handshake { status: Some(401) };
    assert_eq!(
        r.classify(&rec(fail(denied, "401"), None)),
        Some(Class::Failed)
    );
    let closed = FailureKind::Rejected;
    assert_eq!(
        r.classify(&rec(fail(closed, "1013"), None)),
        Some(Class::Rejected)
    );
    let full = "{'type': 'error', 'error': {'code': 'resource_exhausted'}}";
    let e = FailureKind::ServerError;
    assert_eq!(r.classify(&rec(fail(e, full), None)), Some(Class::Rejected));
    assert_eq!(r.classify(&rec(fail(e, "boom"), None)), Some(Class::Failed));
    let gone = FailureKind::Interrupted;
    assert_eq!(r.classify(&rec(fail(gone, "interrupted"), None)), None);
    assert_eq!(
        r.broken(&rec(Ok(()), Some(2))),
        vec!["stall_count 2 (SLO == 0)".to_string()]
    );
}

#[test]
fn session_values_come_from_the_engines_record() {
    let r = rec(Ok(()), Some(3));
    let v = |m| session_value(&r, m);
    assert_eq!(v("stall_count"), Some(3.0));
    assert_eq!(v("stall_ms"), Some(1500.0));
    assert_eq!(v("playback_start_ms"), Some(250.0));
    assert_eq!(v("session_ms"), Some(2500.0));
    assert_eq!(v("queue_wait_ms"), Some(2.0));
    assert_eq!(v("send_lateness_max_ms"), Some(4.0));
    assert_eq!(v("nope"), None);
    for m in SESSION_METRICS {
        assert!(v(m).is_some(), "{m}");
    }
}

#[test]
fn counts_metrics_and_ratios() {
    let mut c = ClassCounts::default();
    for k in [Class::Good, Class::Good, Class::Degraded, Class::Rejected] {
        c.add(k);
    }
    assert_eq!(c.render(), "2 good, 1 degraded, 1 rejected, 0 failed");
    let m = c.metrics();
    assert_eq!(m["rejected_ratio"], 0.25);
    assert_eq!(m["degraded_ratio"], 0.25);
    assert_eq!(m[ENDED], 4.0);
    assert!(
        !m.contains_key("failed"),
        "the workload's own `failed` stays"
    );
    assert_eq!(ClassCounts::from_json(&c.to_json()), c);
    assert!(
        !ClassCounts::default()
            .metrics()
            .contains_key("rejected_ratio")
    );
    let names: Vec<String> = m.keys().cloned().collect();
    assert_eq!(catalogue().names(), names);
}
