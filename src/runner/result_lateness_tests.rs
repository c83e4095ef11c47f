//! One number, one source: a run whose samples spilled their send lateness to the spool
//! (chunks of a few bytes, so nearly every value went there) publishes every lateness
//! output equal to one whose logs never spilled: the JSON generator block, each sample's
//! `send_lateness_max_ms`, the per-session SLO value, the HDR series, the live Prometheus
//! histogram, the progress line's tallies and the terminal's generator-bound warning.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::engine_series;
use crate::engine::lateness::{CHUNK_BYTES, LatenessLog, LatenessSetup};
use crate::engine::live::LiveMetrics;
use crate::workload::kit;
use crate::workload::outcome::{Rules, SessionBound};
use crate::workload::spool::Spool;
use crate::workload::spool::lateness::restore_run;
use crate::workload::{RunRecord, SampleRecord};

/// Sample `k`'s lateness values: mostly sub-millisecond, some of seconds, one zero.
fn values(k: u64) -> Vec<Duration> {
    let mut x = 0x9e37_79b9_7f4a_7c15_u64 ^ k;
    (0..400 + 37 * k)
        .map(|i| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            match i % 50 {
                0 => Duration::ZERO,
                7 => Duration::from_nanos(x % 3_000_000_000),
                _ => Duration::from_nanos(x % 2_000_000),
            }
        })
        .collect()
}

/// A run of five samples (the first a warm-up) whose senders keep their lateness as
/// `spool` says; returns it (read back) and its live metrics.
fn run(spool: Option<&Spool>) -> (RunRecord, Arc<LiveMetrics>, Vec<(u64, u64)>, bool) {
    let live = Arc::new(LiveMetrics::new("ttfc_ms", None));
    let mut samples = Vec::new();
    for k in 0..5u64 {
        let warmup = k == 0;
        let mut log = LatenessLog::new(LatenessSetup {
            spool: spool.map(|s| s.session().log()),
            bound_s: 0.0015,
            live: Some(Arc::clone(&live)).filter(|_| !warmup),
            chunk_bytes: if spool.is_some() { 16 } else { CHUNK_BYTES },
        });
        for d in values(k) {
            log.push(d);
        }
        samples.push(SampleRecord {
            idx: k as usize,
            warmup,
            session: k.checked_sub(1).map(|i| i as usize),
            scheduled_s: k as f64,
            queue_wait_s: 0.0,
            started_s: k as f64 + 0.5,
            opened_s: Some(k as f64 + 0.6),
            ended_s: k as f64 + 9.0,
            outcome: Ok(()),
            send_lateness_s: Vec::new(),
            send_lateness: log.hand_over(),
            playback: None,
            output: None,
        });
    }
    let spilled = samples
        .iter()
        .all(|s| s.send_lateness.parts.spilled.is_some());
    let tallies = (samples.iter()).map(|s| (s.send_lateness.count, s.send_lateness.late));
    let tallies = tallies.collect();
    let mut run = RunRecord {
        samples,
        duration_s: 9.0,
        endpoint: String::new(),
        load: None,
        interrupted: false,
        measured_indices: None,
    };
    restore_run(&mut run, spool);
    (run, live, tallies, spilled)
}

/// Every lateness output of `run`, rendered.
fn outputs(run: &RunRecord, live: &LiveMetrics) -> Vec<String> {
    let block = kit::generator_block(run, &BTreeMap::new(), &Default::default());
    let (_, lateness) = kit::wait_and_lateness(run);
    let mut out = vec![
        block["send_lateness"].to_string(),
        format!("{:?}", engine_series(run)),
        live.render(),
        format!(
            "{:?}",
            kit::generator_bound(lateness["p99_ms"].as_f64(), None, 1.0)
        ),
    ];
    // The per-session SLO value, as the outcome rules see it.
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let into = Arc::clone(&seen);
    let rules = Rules {
        reject_patterns: Vec::new(),
        slo: vec![SessionBound {
            metric: "send_lateness_max_ms".into(),
            expr: "< 1000".into(),
            holds: Arc::new(move |v| {
                into.lock().unwrap().push(v);
                v < 1000.0
            }),
        }],
    };
    for s in &run.samples {
        out.push(kit::sample_row(s)["send_lateness_max_ms"].to_string());
        out.push(format!("{:?}", rules.classify(s)));
    }
    out.push(format!("{:?}", seen.lock().unwrap()));
    out
}

#[test]
fn a_spilled_runs_lateness_outputs_equal_an_unspilled_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let (spilled, spilled_live, spilled_tallies, all_spilled) = run(Some(&spool));
    let (kept, kept_live, kept_tallies, none_spilled) = run(None);
    assert!(all_spilled, "every sample spilled");
    assert!(!none_spilled);
    assert_eq!(outputs(&spilled, &spilled_live), outputs(&kept, &kept_live));
    assert_eq!(spilled_tallies, kept_tallies);
    // The values are the ones recorded, and the tallies read during the run are theirs.
    for (s, k) in spilled.samples.iter().zip(0..) {
        let want: Vec<f64> = values(k).iter().map(Duration::as_secs_f64).collect();
        assert_eq!(s.send_lateness_s, want);
        assert_eq!(s.send_lateness.count, want.len() as u64);
        assert_eq!(
            s.send_lateness.late,
            want.iter().filter(|l| **l > 0.0015).count() as u64
        );
        assert_eq!(s.send_lateness.max_s, want.iter().copied().reduce(f64::max));
        assert!(s.outcome.is_ok());
    }
    let text = spilled_live.render();
    let measured: usize = (1..5).map(|k| values(k).len()).sum();
    assert!(
        text.contains(&format!("rtload_send_lateness_seconds_count {measured}\n")),
        "{text}"
    );
}
