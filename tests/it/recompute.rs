//! `rtload report --recompute DIR`: runs of the shipped transcription (built-in) and
//! OpenAI-Realtime (scripted) scenarios, recorded against the embedded server, are
//! recomputed from their traces alone, through the binary. Every metric of the result's
//! `rtload.metrics` must equal the run's exactly (the recompute drives the same session
//! state machines with the recorded stamps, read back to the nanosecond), the threshold
//! verdicts must be the run's, and so must the exit code — for passing runs, for a run
//! whose threshold fails and for one whose sessions the server refused. What a trace
//! cannot hold (the generator's resources) is absent; an input changed since the
//! recording, or a workload that writes its own outputs (OmniInteract), is refused with
//! a message naming it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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
/// resource lines are the generator's own, which a trace does not hold).
fn report_lines(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| !l.contains("RSS") && !l.contains("CPU") && !l.contains("rss"))
        .map(str::to_string)
        .collect()
}

/// What a trace cannot hold: absent from a recomputed result (the recompute says so in
/// `rtload.recomputed`, which the run's result has not).
const ABSENT: [&str; 2] = ["wire", "recomputed"];
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
    assert!(
        a["metrics"].as_object().unwrap().len() > 10,
        "{}",
        a["metrics"]
    );
    assert_eq!(a["metrics"], b["metrics"], "every metric, exactly");
    assert!(b["wire"].is_null());
    for k in RESOURCES {
        assert!(
            a["resources"][k].is_number() && b["resources"][k].is_null(),
            "{k}"
        );
    }
    assert_eq!(b["recomputed"]["absent"].as_array().unwrap().len(), 4);
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
        d
    };
    assert_eq!(
        strip(&run.result),
        strip(&re),
        "the whole result but what is absent"
    );
    assert!(text(&out).contains("absent: rtload.resources' CPU and RSS"));
    assert_eq!(report_lines(&out), report_lines(&run.out));
    re
}

#[test]
fn recorded_runs_of_two_workload_kinds_recompute_to_the_runs_metrics_and_exit_code() {
    for name in ["transcription.toml", "openai-realtime.toml"] {
        let run = record(name, |t| t, |_| {});
        assert!(run.out.status.success(), "{name}: {}", text(&run.out));
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
    let mut bytes = std::fs::read(&changed).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&changed, bytes).unwrap();
    let (out, re) = recompute(&run);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(re.is_none());
    let err = text(&out);
    let name = changed.file_name().unwrap().to_string_lossy();
    assert!(
        err.contains(&*name) && err.contains("changed since the recording"),
        "{err}"
    );
}

#[test]
fn a_workload_that_writes_its_own_outputs_is_refused_and_its_outputs_are_kept() {
    let run = record("omniinteract.toml", |t| t, |_| {});
    assert!(run.out.status.success(), "{}", text(&run.out));
    let outputs = run
        .scenario
        .parent()
        .unwrap()
        .join("omniinteract-artifacts");
    let count = || std::fs::read_dir(&outputs).unwrap().count();
    let before = count();
    assert!(before > 0);
    let (out, re) = recompute(&run);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(re.is_none());
    assert!(
        text(&out).contains("writes its own outputs"),
        "{}",
        text(&out)
    );
    assert_eq!(count(), before, "the run's outputs are untouched");
}
