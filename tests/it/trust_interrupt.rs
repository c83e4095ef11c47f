//! Interrupted runs beyond `rtload run` (issue 11 item 1 follow-ups): a signal during a
//! sweep stops it after the current point's graceful interruption; a second signal
//! cancels the in-flight sessions at once and the run still writes what it has.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use crate::support::{rtload, video};

#[test]
fn sigint_during_a_sweep_stops_it_after_the_current_point_and_exits_130() {
    // ~4 s sessions; the first point's first chunk proves the sweep is running.
    let fx = video(20, 1, "chunk_interval_ms = 200");
    let dir = fx.dir.path().join("sweep");
    let mut child = rtload()
        .arg("run")
        .arg(&fx.path)
        .args(["--sweep", "max_concurrency=1,2", "--print-chunks"])
        .args(["--grace-period", "0", "--sweep-dir"])
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut lines = stderr.lines();
    let mut seen = false;
    for line in lines.by_ref() {
        if line.unwrap().contains("session  0  chunk") {
            seen = true;
            break;
        }
    }
    assert!(seen, "the first point never streamed");
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let out = child.wait_with_output().unwrap();
    let rest = rest.join("\n");
    assert_eq!(out.status.code(), Some(130), "{rest}");
    assert!(
        rest.contains("the sweep stopped after 0 finished point(s)"),
        "{rest}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(doc["interrupted"], true);
    assert_eq!(doc["sweep"]["points"], serde_json::json!([]));
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names
            .iter()
            .filter(|n| n.starts_with("max_concurrency") && n.ends_with(".json"))
            .count(),
        1,
        "{names:?}"
    );
    let point = names
        .iter()
        .find(|n| n.starts_with("max_concurrency") && n.ends_with(".json"))
        .unwrap();
    let point: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(point)).unwrap()).unwrap();
    assert_eq!(
        point["interrupted"], true,
        "the interrupted point's own file says so"
    );
}

/// Two SIGINTs: the first starts a grace period far longer than the sessions, the second
/// cancels them at once — the run still returns, writes its JSON marked interrupted, with
/// each cancelled session's own outcome, and exits 130 (the CLI says each step; the
/// library prints nothing).
#[test]
fn a_second_sigint_cancels_in_flight_sessions_at_once_and_still_writes_the_result() {
    // Two ~10 s sessions at once; the grace period (600 s) would outlast them.
    let fx = video(50, 2, "chunk_interval_ms = 200");
    let json = fx.dir.path().join("out.json");
    let mut child = rtload()
        .arg("run")
        .arg(&fx.path)
        .args([
            "--print-chunks",
            "--quiet",
            "--grace-period",
            "600",
            "--output-json",
        ])
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (streaming_tx, streaming) = std::sync::mpsc::channel();
    let drain = std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if line.contains("session  0  chunk") {
                let _ = streaming_tx.send(());
            }
        }
    });
    streaming.recv().expect("the first session never streamed");
    let pid = child.id().to_string();
    let sigint = || {
        let killed = std::process::Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap();
        assert!(killed.success());
    };
    sigint();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut said = Vec::new();
    for line in stderr.by_ref().map_while(Result::ok) {
        let first = line.starts_with("interrupted: releasing no new sessions");
        said.push(line);
        if first {
            break;
        }
    }
    sigint();
    said.extend(stderr.map_while(Result::ok));
    let status = child.wait().unwrap();
    drain.join().unwrap();
    let said = said.join("\n");
    assert_eq!(status.code(), Some(130), "{said}");
    assert!(
        said.contains("interrupted again: cancelling the in-flight sessions now"),
        "{said}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["interrupted"], true);
    let rows = doc["rtload"]["samples"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    for r in rows {
        let e = r["error"].as_str().unwrap_or_default();
        assert!(
            e.starts_with(
                "interrupted: the run was interrupted again and the session was cancelled at once"
            ),
            "{rows:?}"
        );
    }
}

/// An OmniInteract run interrupted before any case ran: every complete bundle of the run
/// before survives (a cancelled or unstarted case is not "not re-run" by choice), and
/// `batch_summary.json` says `"interrupted": true` while listing only what this run did.
#[test]
fn an_interrupted_omni_run_keeps_earlier_bundles_and_marks_the_batch_summary() {
    use crate::duplex_support::{Opts, case_dirs, duplex, out_dir, read_json};
    use rtload::run::{Interrupt, InterruptSwitch};

    let fx = duplex(&Opts::default());
    assert!(fx.run().passed());
    let root = out_dir(&fx);
    let complete = || case_dirs(&root).iter().filter(|d| d.has(".done")).count();
    assert_eq!(complete(), 3);

    let switch = InterruptSwitch::new();
    switch.trigger();
    let interrupt = Interrupt {
        switch,
        grace: std::time::Duration::ZERO,
    };
    let s = rtload::run_interruptible(
        &fx.scenario(),
        Box::new(std::io::sink()),
        None,
        Some(interrupt),
    )
    .expect("run");
    assert!(s.interrupted);
    assert_eq!(complete(), 3, "an interrupt removed complete bundles");
    let batch = read_json(&root.join("batch_summary.json"));
    assert_eq!(batch["interrupted"], true, "{batch}");
    assert_eq!(batch["total"], 0, "{batch}");
    let manifest = std::fs::read_to_string(root.join("official_eval_manifest.jsonl")).unwrap();
    assert_eq!(manifest, "", "the manifest lists only this run's bundles");
}
