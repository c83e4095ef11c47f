//! The live `--metrics-addr` tallies: starts and ends counted, rendered as Prometheus text.

use super::*;
use crate::workload::{Failure, FailureKind};

fn rec(warmup: bool, ok: bool, lateness_ms: &[f64]) -> SampleRecord {
    SampleRecord {
        idx: 0,
        warmup,
        session: None,
        scheduled_s: 0.0,
        queue_wait_s: 0.0,
        started_s: 0.0,
        opened_s: None,
        ended_s: 1.0,
        outcome: if ok {
            Ok(())
        } else {
            Err(Failure::new(FailureKind::Connect, "boom"))
        },
        send_lateness_s: lateness_ms.iter().map(|l| l / 1000.0).collect(),
        send_lateness: Default::default(),
        playback: None,
        output: None,
    }
}

#[test]
fn tallies_follow_starts_and_ends_and_render_as_prometheus_text() {
    let m = LiveMetrics::new("ttfc_ms", Some("1/4".into()));
    m.started(true, 0.0);
    m.ended(&rec(true, true, &[50.0]), None, Some(999.0));
    m.started(false, 0.002);
    m.started(false, 0.004);
    // The measured sample's sender observes each lateness as it records it (a warm-up's
    // sender has no live metrics).
    m.lateness(0.001);
    m.lateness(0.003);
    m.ended(&rec(false, false, &[1.0, 3.0]), None, None);
    let text = m.render();
    for want in [
        "rtload_sessions_active{shard=\"1/4\",phase=\"measured\"} 1\n",
        "rtload_sessions_active{shard=\"1/4\",phase=\"warmup\"} 0\n",
        "rtload_sessions_completed_total{shard=\"1/4\",phase=\"warmup\"} 1\n",
        "rtload_sessions_failed_total{shard=\"1/4\",phase=\"measured\",kind=\"connect\"} 1\n",
        "rtload_queue_wait_seconds_count{shard=\"1/4\"} 2\n",
        "rtload_queue_wait_seconds_sum{shard=\"1/4\"} 0.006\n",
        // Warm-up lateness and headline values are not measured.
        "rtload_send_lateness_seconds_count{shard=\"1/4\"} 2\n",
        "rtload_send_lateness_seconds_bucket{shard=\"1/4\",le=\"0.001\"} 1\n",
        "rtload_headline_seconds_count{shard=\"1/4\",metric=\"ttfc_ms\"} 0\n",
    ] {
        assert!(text.contains(want), "missing {want}in\n{text}");
    }
}

#[test]
fn classes_are_counted_live_and_then_set_to_the_results_counts() {
    use crate::workload::outcome::{Class, ClassCounts};
    let m = LiveMetrics::new("ttfc_ms", None);
    m.ended(&rec(false, true, &[]), Some(Class::Good), None);
    m.ended(&rec(false, false, &[]), Some(Class::Rejected), None);
    m.ended(&rec(true, true, &[]), Some(Class::Degraded), None);
    let text = m.render();
    for want in [
        "rtload_sessions_outcome{phase=\"measured\",class=\"good\"} 1\n",
        "rtload_sessions_outcome{phase=\"measured\",class=\"rejected\"} 1\n",
        "rtload_sessions_outcome{phase=\"measured\",class=\"failed\"} 0\n",
        "rtload_sessions_outcome{phase=\"warmup\",class=\"degraded\"} 1\n",
    ] {
        assert!(text.contains(want), "missing {want}in\n{text}");
    }
    // A report-time failure turned the good session failed: the result's counts win.
    m.set_outcomes(ClassCounts {
        good: 0,
        degraded: 0,
        rejected: 1,
        failed: 1,
    });
    let text = m.render();
    assert!(text.contains("rtload_sessions_outcome{phase=\"measured\",class=\"good\"} 0\n"));
    assert!(text.contains("rtload_sessions_outcome{phase=\"measured\",class=\"failed\"} 1\n"));
}
