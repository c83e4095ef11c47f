//! `rtload report --recompute DIR`: runs of the shipped transcription (built-in) and
//! OpenAI-Realtime (scripted) scenarios, recorded against the embedded server, are
//! recomputed from their traces alone, through the binary. Every metric of the result's
//! `rtload.metrics` must equal the run's exactly (the recompute drives the same session
//! state machines with the recorded stamps, read back to the nanosecond), the threshold
//! verdicts must be the run's, and so must the exit code — for passing runs, for a run
//! whose threshold fails, for one whose sessions the server refused and for an
//! interrupted video-cadence run (exit 130), for a run given `[load]` flags over its
//! file, and for OmniInteract, whose own outputs (bundles, saved result) must be left
//! as the run wrote them. What a trace cannot hold (the generator's resources) is
//! absent; an input changed since the recording is refused with a message naming it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use rtload::scenario::{self, Overrides};
use rtload::server::EmbeddedServer;

/// A recorded run: its directory (the cwd of both commands), the run's output and result.
struct Run {
    tmp: tempfile::TempDir,
    scenario: PathBuf,
    out: Output,
    result: Value,
}

/// Runs shipped scenario `name` (its text passed through `edit`) against an embedded
/// server serving its `[server]` table (through `server`), recording into `rec`.
fn record(
    name: &str,
    edit: impl Fn(String) -> String,
    server: impl Fn(&mut rtload::server::ServerConfig),
) -> Run {
    record_with(name, edit, server, &[])
}

/// [`record`] with `args` added to the run's command line.
fn record_with(
    name: &str,
    edit: impl Fn(String) -> String,
    server: impl Fn(&mut rtload::server::ServerConfig),
    args: &[&str],
) -> Run {
    let tmp = tempfile::tempdir().unwrap();
    let sc = crate::record::copy_scenario(tmp.path(), name);
    std::fs::write(&sc, edit(std::fs::read_to_string(&sc).unwrap())).unwrap();
    let cfg = scenario::load(&sc, &Overrides::default()).unwrap();
    let mut served = cfg.server().clone();
    server(&mut served);
    let srv = EmbeddedServer::start(([127, 0, 0, 1], 0).into(), served).unwrap();
    let target = format!("ws://{}/v1/realtime", srv.addr());
    let out = Command::new(env!("CARGO_BIN_EXE_rtload"))
        .current_dir(tmp.path())
        .arg("run")
        .arg(&sc)
        .args(["--target", &target])
        .args(["--record", "rec", "--output-json", "r.json", "-q"])
        .args(args)
        .output()
        .unwrap();
    srv.stop();
    let result = read_json(&tmp.path().join("r.json"));
    Run {
        tmp,
        scenario: sc,
        out,
        result,
    }
}

/// A result file (OmniInteract's keeps vLLM's bare `NaN`).
fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    rtload::report::parse_result(&text).unwrap()
}

/// `rtload report --recompute rec --output-json re.json` in the run's directory.
fn recompute(run: &Run) -> (Output, Option<Value>) {
    let out = Command::new(env!("CARGO_BIN_EXE_rtload"))
        .current_dir(run.tmp.path())
        .args(["report", "--recompute", "rec", "--output-json", "re.json"])
        .output()
        .unwrap();
    let p = run.tmp.path().join("re.json");
    (out, p.exists().then(|| read_json(&p)))
}

fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The lines of a run's stdout that are its report and verdicts (the soak block's
/// resource lines are the generator's own, which a trace does not hold; `--print-chunks`
/// lines are the live log, not the report).
fn report_lines(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| !l.contains("RSS") && !l.contains("CPU") && !l.contains("rss"))
        // How receipts were stamped: read from rtload.wire, absent from a trace.
        .filter(|l| !l.starts_with("Receipts:"))
        .filter(|l| !l.trim_start().starts_with("session "))
        .map(str::to_string)
        .collect()
}

/// What a trace cannot hold: absent from a recomputed result (the recompute says so in
/// `rtload.recomputed`, which the run's result has not).
const ABSENT: [&str; 3] = ["wire", "recomputed", "phase_cpu"];
/// The generator's own CPU and RSS figures in `rtload.resources`: null when recomputed.
const RESOURCES: [&str; 6] = [
    "cpu_s",
    "peak_rss_mib",
    "cpu_us_per_session_s",
    "rss_at_start_mib",
    "live_rss_peak_mib",
    "rss_per_session_kib",
];

/// The recompute of `run` agrees with it: the same exit code, the same report and
/// verdicts printed, and the same result document — every metric exactly, the
/// thresholds, failures, outcomes, distributions, queue wait and send lateness, the
/// report's own keys — but for what a trace cannot hold, which is absent.
fn agrees(run: &Run) -> Value {
    agrees_but(run, &[])
}

/// Every value under a key named in `fresh`, anywhere in `v`, replaced by `"fresh"`.
fn mask(v: &mut Value, fresh: &[&str]) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match fresh.contains(&k.as_str()) {
                    true => *x = Value::from("fresh"),
                    false => mask(x, fresh),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| mask(x, fresh)),
        _ => {}
    }
}

/// [`agrees`], but for the values of the keys in `fresh`: ids a session makes afresh
/// each time it runs (OmniInteract's `session_id` holds a clock reading, which it
/// sends: the recompute's differ from the run's in value, not in length) and a
/// workload's own publication time (OmniInteract's vLLM-style `date`).
fn agrees_but(run: &Run, fresh: &[&str]) -> Value {
    let (out, re) = recompute(run);
    let re = re.unwrap_or_else(|| panic!("no recomputed result:\n{}", text(&out)));
    assert_eq!(
        out.status.code(),
        run.out.status.code(),
        "run:\n{}\nrecompute:\n{}",
        text(&run.out),
        text(&out)
    );
    let (a, b) = (&run.result["rtload"], &re["rtload"]);
    assert!(!a["metrics"].as_object().unwrap().is_empty());
    assert_eq!(a["metrics"], b["metrics"], "every metric, exactly");
    assert!(b["wire"].is_null());
    for k in RESOURCES {
        assert!(
            a["resources"][k].is_number() && b["resources"][k].is_null(),
            "{k}"
        );
    }
    assert_eq!(b["recomputed"]["absent"].as_array().unwrap().len(), 6);
    assert_eq!(b["soak"]["resources"], serde_json::json!([]));
    let strip = |doc: &Value| {
        let mut d = doc.clone();
        let rt = d["rtload"].as_object_mut().unwrap();
        for k in ABSENT {
            rt.remove(k);
        }
        rt["soak"].as_object_mut().unwrap().remove("resources");
        for k in RESOURCES {
            rt["resources"].as_object_mut().unwrap().remove(k);
        }
        // The wall-clock time the result was published (the video report's own key):
        // the recompute's, and said so.
        d.as_object_mut().unwrap().remove("timestamp");
        mask(&mut d, fresh);
        d
    };
    let differ = differences(&strip(&run.result), &strip(&re), "");
    assert!(
        differ.is_empty(),
        "the whole result but what is absent: {differ:#?}"
    );
    assert!(text(&out).contains("absent: rtload.resources' CPU and RSS"));
    // Where a workload that writes its own outputs wrote them: the recompute's scratch.
    let mut lines = [report_lines(&out), report_lines(&run.out)];
    for l in lines.iter_mut().flatten() {
        if let Some(at) = ["Artifacts:", "Saved result:"]
            .iter()
            .find(|p| l.starts_with(**p))
        {
            *l = at.to_string();
        }
    }
    assert_eq!(lines[0], lines[1]);
    re
}

/// Every path at which `a` and `b` differ, with both values.
fn differences(a: &Value, b: &Value, at: &str) -> Vec<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            let null = Value::Null;
            (keys.into_iter())
                .flat_map(|k| {
                    let (va, vb) = (x.get(k).unwrap_or(&null), y.get(k).unwrap_or(&null));
                    differences(va, vb, &format!("{at}.{k}"))
                })
                .collect()
        }
        _ if a == b => Vec::new(),
        _ => vec![format!("{at}: {a} | {b}")],
    }
}

#[test]
fn recorded_runs_of_two_workload_kinds_recompute_to_the_runs_metrics_and_exit_code() {
    for name in ["transcription.toml", "openai-realtime.toml"] {
        let run = record(name, |t| t, |_| {});
        assert!(run.out.status.success(), "{name}: {}", text(&run.out));
        let metrics = run.result["rtload"]["metrics"].as_object().unwrap().len();
        assert!(metrics > 10, "{name}: {metrics} metrics");
        agrees(&run);
    }
}

#[test]
fn a_run_that_failed_its_thresholds_recomputes_to_the_same_failure() {
    let run = record(
        "transcription.toml",
        |t| t.replace(r#""ttft_ms.p99" = "< 2000""#, r#""ttft_ms.p99" = "< 1""#),
        |_| {},
    );
    assert_eq!(run.out.status.code(), Some(1), "{}", text(&run.out));
    let re = agrees(&run);
    assert_eq!(re["rtload"]["verdict"], "failed");
}

#[test]
fn a_run_whose_sessions_the_server_refused_recomputes_to_the_same_failures() {
    let run = record("transcription.toml", |t| t, |s| s.max_sessions = Some(1));
    assert_eq!(run.out.status.code(), Some(1), "{}", text(&run.out));
    let re = agrees(&run);
    assert!(re["rtload"]["failures"].to_string().contains("handshake"));
}

#[test]
fn an_input_changed_since_the_recording_is_refused_naming_it() {
    let run = record("transcription.toml", |t| t, |_| {});
    let dir = run
        .scenario
        .parent()
        .unwrap()
        .join("data/transcription-synth");
    let changed = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "wav"))
        .unwrap();
    let name = changed.file_name().unwrap().to_string_lossy().into_owned();
    changed_input_is_refused(&run, &changed, &name);
}

/// A dataset a path-typed workload flag gave (`--dataset-path`, relative to the directory
/// the run ran in) is in the manifest's `inputs` like the file's own, and a change to one
/// of its files refuses the recompute naming it and the flag.
#[test]
fn a_dataset_given_by_a_flag_is_hashed_and_checked_by_the_recompute() {
    let run = record_with(
        "transcription.toml",
        |t| t,
        |_| {},
        &["--dataset-path", "scenarios/data/transcription-synth"],
    );
    assert!(run.out.status.success(), "{}", text(&run.out));
    let manifest = read_json(&run.tmp.path().join("rec/manifest.json"));
    let by_flag: Vec<&Value> = (manifest["inputs"].as_array().unwrap().iter())
        .filter(|i| i["key"] == "--dataset-path")
        .collect();
    assert!(!by_flag.is_empty(), "{}", manifest["inputs"]);
    for i in &by_flag {
        assert_eq!(i["relative_to"], "cwd");
        let bytes = std::fs::read(run.tmp.path().join(i["path"].as_str().unwrap())).unwrap();
        assert_eq!(i["sha256"], crate::record::sha256(&bytes).as_str());
    }
    agrees(&run);
    std::fs::remove_file(run.tmp.path().join("re.json")).unwrap();
    let changed = run.tmp.path().join(by_flag[0]["path"].as_str().unwrap());
    changed_input_is_refused(&run, &changed, "--dataset-path");
}

/// Every file under `dir` (recursively) with its bytes and modification time.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let modified = std::fs::metadata(&p).unwrap().modified().unwrap();
                out.push((p.clone(), std::fs::read(&p).unwrap(), modified));
            }
        }
    }
    out.sort();
    out
}

/// OmniInteract clears and writes its own output folder (and saves a result file): the
/// recompute runs it again with both pointed at a scratch folder of its own, so the
/// recorded run's bundles and saved result are left as they were, and every metric and
/// the exit code are the run's.
#[test]
fn an_omniinteract_run_recomputes_to_its_metrics_and_leaves_its_outputs_alone() {
    let run = record("omniinteract.toml", |t| t, |_| {});
    assert!(run.out.status.success(), "{}", text(&run.out));
    let base = run.scenario.parent().unwrap();
    let (outputs, results) = (base.join("omniinteract-artifacts"), base.join("results"));
    let before = (snapshot(&outputs), snapshot(&results));
    assert!(!before.0.is_empty() && !before.1.is_empty());
    let re = agrees_but(&run, &["session_id", "date"]);
    let metrics = re["rtload"]["metrics"].as_object().unwrap();
    assert!(metrics.len() > 10, "{metrics:?}");
    let (out, _) = recompute(&run);
    let said = text(&out);
    let saved = (said.lines())
        .find_map(|l| l.strip_prefix("Saved result: "))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(saved.contains("rtload-recompute-"), "{said}");
    assert!(!Path::new(saved).exists(), "the scratch folder is removed");
    assert!(said.contains("scratch folder"), "{said}");
    assert!(
        (snapshot(&outputs), snapshot(&results)) == before,
        "the recorded run's outputs and saved result are untouched"
    );
}

/// `[load]` flags given when recording (an OmniInteract run: 2 cases of the file's 3,
/// one at a time, at a rate, each session held for `--duration-s`, which changes what it
/// sends) are the manifest's: the recompute runs what the run ran, so the whole result
/// agrees (without them it would select 3 cases and its sessions would diverge).
#[test]
fn load_flags_given_when_recording_are_recomputed_as_given() {
    let args = [
        "--num-prompts",
        "2",
        "--max-concurrency",
        "1",
        "--request-rate",
        "20",
    ];
    let run = record_with(
        "omniinteract.toml",
        |t| t,
        |_| {},
        &[&args[..], &["--duration-s", "2"]].concat(),
    );
    assert!(run.out.status.success(), "{}", text(&run.out));
    let manifest = read_json(&run.tmp.path().join("rec/manifest.json"));
    let given = serde_json::json!({"samples": 2, "max_concurrency": 1, "request_rate": 20.0, "duration_s": 2.0});
    assert_eq!(manifest["scenario"]["flags"]["load"], given);
    assert_eq!(manifest["scenario"]["load"]["max_concurrency"], 1);
    assert_eq!(
        manifest["scenario"]["load"]["warmup_samples"], 0,
        "the file's key is kept"
    );
    let re = agrees_but(&run, &["session_id", "date"]);
    assert_eq!(re["rtload"]["sample_counts"]["measured"], 2);
}

/// A video-cadence run (a third kind) interrupted while its sessions stream: the sessions
/// the interrupt cancelled recompute as cancelled, and the recompute exits 130 as the
/// run did, with the run's numbers.
#[test]
fn an_interrupted_run_recomputes_as_interrupted_with_exit_130() {
    // Two ~10 s sessions; the first chunk proves they stream, then SIGINT with a short
    // grace cancels them.
    let fx = crate::support::video(50, 2, "chunk_interval_ms = 200");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rtload"))
        .current_dir(fx.dir.path())
        .arg("run")
        .arg(&fx.path)
        .args(["--print-chunks", "--quiet", "--grace-period", "0.05"])
        .args(["--record", "rec", "--output-json", "r.json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (streaming_tx, streaming) = std::sync::mpsc::channel();
    let drain = std::thread::spawn(move || {
        let mut all = Vec::new();
        for line in stdout.lines().map_while(Result::ok) {
            if line.contains("session  0  chunk") {
                let _ = streaming_tx.send(());
            }
            all.push(line);
        }
        all
    });
    streaming.recv().expect("the first session never streamed");
    let pid = child.id().to_string();
    let killed = Command::new("kill").args(["-INT", &pid]).status().unwrap();
    assert!(killed.success());
    let mut out = child.wait_with_output().unwrap();
    out.stdout = drain.join().unwrap().join("\n").into_bytes();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    let result = read_json(&fx.dir.path().join("r.json"));
    assert_eq!(result["interrupted"], true);
    let run = Run {
        tmp: fx.dir,
        scenario: fx.path,
        out,
        result,
    };
    let re = agrees(&run);
    assert_eq!(re["interrupted"], true);
}

/// Flips the last byte of `changed`, an input of `run`'s recording: the recompute exits 2
/// without a result, its message naming `named` and saying the input changed.
fn changed_input_is_refused(run: &Run, changed: &Path, named: &str) {
    let mut bytes = std::fs::read(changed).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(changed, bytes).unwrap();
    let (out, re) = recompute(run);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(re.is_none());
    let err = text(&out);
    assert!(
        err.contains(named) && err.contains("changed since the recording"),
        "{err}"
    );
}
