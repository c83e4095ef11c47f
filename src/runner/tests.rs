//! Tests of what the runner hands the engine (the engine's parts are tested beside them).

use std::path::Path;

use crate::config::scenario::{Overrides, parse};
use crate::engine::{EngineConfig, run, transport};

/// Two warm-ups and one measured sample of a video-cadence scenario, one at a time, no
/// server (every sample fails to connect, which is fine for ordering): the warm-ups are
/// run first and end before the measured sample starts.
#[test]
fn warmups_run_before_the_measured_samples() {
    let text = "name = \"t\"\n[workload]\nkind = \"video-cadence\"\nnum_chunks = 3\n\
                [load]\nsamples = 1\nwarmup_samples = 2\nmax_concurrency = 1\n";
    let sc = parse(Path::new("t.toml"), text, &Overrides::default()).expect("scenario");
    let plan = crate::workload::plan::plan(sc.samples(), &sc.load().arrival).unwrap();
    let out = run(
        EngineConfig {
            url: String::new(),
            headers: Vec::new(),
            n_warmup: sc.load().warmup_samples,
            offsets_s: plan.offsets_s,
            holds_s: Vec::new(),
            max_concurrency: Some(1),
            shards: Some(2),
            connect_timeout: std::time::Duration::from_secs(5),
            tls: None,
            max_frame_bytes: transport::MAX_MESSAGE_BYTES,
            wire: transport::Wire::default(),
            request_id_prefix: "t-".into(),
            artifact_root: None,
            record: None,
            lines: None,
            progress: None,
            generator_bound_ms: 5.0,
            placement: Default::default(),
            live: None,
            rules: Default::default(),
            interrupt: None,
        },
        sc.workload().clone().begin_run(),
    );
    let run = out.unwrap().run;
    assert_eq!(run.samples.len(), 3);
    assert_eq!(run.samples.iter().filter(|s| s.warmup).count(), 2);
    let measured = run.samples.iter().find(|s| !s.warmup).unwrap();
    for w in run.samples.iter().filter(|s| s.warmup) {
        assert!(
            w.ended_s <= measured.started_s,
            "a warm-up ran after the measured phase began"
        );
    }
}
