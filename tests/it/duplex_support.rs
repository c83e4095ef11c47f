//! Harness for the OmniInteract duplex end-to-end tests: a synthesized dataset and a
//! scenario in one temp dir, run through the real engine and embedded reference server,
//! and readers for the case bundles and batch files it leaves on disk.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use rtload::dataset::SynthOptions;
use serde_json::Value;

use crate::support::{Fixture, failure_messages};

/// The five files of a successful case bundle (spec §4.2), `.done` last.
pub const SUCCESS_FILES: [&str; 5] = [
    "output.wav",
    "wav_transcript.json",
    "events.json",
    "result.json",
    ".done",
];

/// Fast `[server.duplex]` defaults: a response after every 0.5 s of input, 5 deltas of
/// 50 ms audio at RTF 0.2, first audio 20 ms after `response.created`.
const SERVER_DEFAULTS: [(&str, &str); 4] = [
    ("respond_every_s", "0.5"),
    ("delta_ms", "50"),
    ("rtf", "0.2"),
    ("first_response_delay_ms", "20"),
];

/// Workload defaults. `timeout_s` is only a safety net here: it must stay well above the
/// workload's fixed 2.0 s settle (the server's idle timeout is set to it, too).
const WORKLOAD_DEFAULTS: [(&str, &str); 1] = [("timeout_s", "30.0")];

/// What [`duplex`] builds.
pub struct Opts<'a> {
    /// Audio length of every synthesized case, ms.
    pub duration_ms: u32,
    /// Cases per subset (three subsets).
    pub cases_per_subset: usize,
    /// `[load] samples` (cases selected, a total across subsets).
    pub samples: usize,
    /// `[load] max_concurrency`.
    pub max_concurrency: usize,
    /// Extra `[workload]` keys (replacing same-named defaults).
    pub workload: &'a str,
    /// Extra `[server.duplex]` keys (replacing same-named defaults); may open further
    /// tables such as `[server.duplex.faults]`.
    pub server: &'a str,
    /// Text appended before `[workload]` (e.g. a `[target]` table).
    pub prelude: &'a str,
    /// Extra `[load]` keys.
    pub load: &'a str,
}

impl Default for Opts<'_> {
    fn default() -> Self {
        Opts {
            duration_ms: 1000,
            cases_per_subset: 1,
            samples: 3,
            max_concurrency: 3,
            workload: "",
            server: "",
            prelude: "",
            load: "",
        }
    }
}

/// `defaults` rendered as TOML lines, minus the keys `extra` sets itself.
fn defaults_unless(defaults: &[(&str, &str)], extra: &str) -> String {
    defaults
        .iter()
        .filter(|(k, _)| {
            !extra
                .lines()
                .any(|l| l.trim_start().split([' ', '=']).next() == Some(k))
        })
        .map(|(k, v)| format!("{k} = {v}\n"))
        .collect()
}

/// A duplex scenario in its own temp dir: the dataset is synthesized into `ds/`, the
/// artifacts go to `out/` (see [`out_dir`]).
pub fn duplex(o: &Opts<'_>) -> Fixture {
    let fx = Fixture::new("");
    let ds = fx.dir.path().join("ds");
    let said = crate::support::synth_dataset(
        "omniinteract",
        &ds,
        &SynthOptions {
            duration_ms: o.duration_ms,
            cases_per_subset: o.cases_per_subset,
            ..crate::support::synth_defaults()
        },
    );
    // "wrote N cases (…) under DIR", as `rtload dataset synth` prints it.
    let cases: usize = said[0]
        .strip_prefix("wrote ")
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no case count in {said:?}"));
    assert!(cases >= o.samples, "not enough synthesized cases");
    let text = format!(
        r#"
name = "duplex-e2e"
{prelude}
[workload]
kind = "omniinteract"
dataset_path = "ds/data"
ref_audio = "ds/ref_audio.wav"
output_dir = "out"
{wdefaults}{workload}
[load]
samples = {samples}
max_concurrency = {conc}
{load}
[server.duplex]
{sdefaults}{server}
"#,
        prelude = o.prelude,
        wdefaults = defaults_unless(&WORKLOAD_DEFAULTS, o.workload),
        workload = o.workload,
        samples = o.samples,
        conc = o.max_concurrency,
        load = o.load,
        sdefaults = defaults_unless(&SERVER_DEFAULTS, o.server),
        server = o.server,
    );
    std::fs::write(&fx.path, text).unwrap();
    fx
}

/// The artifact root of a [`duplex`] fixture.
pub fn out_dir(fx: &Fixture) -> PathBuf {
    fx.dir.path().join("out")
}

/// One case directory (`<root>/<subset>/<stem>--<hash8>`) and what it holds.
#[derive(Debug)]
pub struct CaseDir {
    /// The directory.
    pub path: PathBuf,
}

impl CaseDir {
    /// Whether `name` exists in the case dir.
    pub fn has(&self, name: &str) -> bool {
        self.path.join(name).is_file()
    }

    /// `name` parsed as JSON.
    pub fn json(&self, name: &str) -> Value {
        read_json(&self.path.join(name))
    }

    /// `events.json`.
    pub fn events(&self) -> Vec<Value> {
        self.json("events.json")
            .as_array()
            .cloned()
            .expect("events.json is a list")
    }
}

/// Every case directory under `root` (two levels: subset, case), sorted.
pub fn case_dirs(root: &Path) -> Vec<CaseDir> {
    let mut out = Vec::new();
    for subset in std::fs::read_dir(root).unwrap().flatten() {
        if !subset.path().is_dir() {
            continue;
        }
        for case in std::fs::read_dir(subset.path()).unwrap().flatten() {
            if case.path().is_dir() {
                out.push(case.path());
            }
        }
    }
    out.sort();
    out.into_iter().map(|path| CaseDir { path }).collect()
}

/// A JSON file.
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// Checks the on-disk outcome of a run: `failed` case dirs hold a `.failed.json` and no
/// success file, the others the five-file bundle with `success: true`; the
/// `batch_summary.json` counts match. Returns the case dirs (failed ones first).
#[track_caller]
pub fn assert_bundles(root: &Path, total: usize, failed: usize) -> Vec<CaseDir> {
    let mut dirs = case_dirs(root);
    assert_eq!(dirs.len(), total, "case dirs under {}", root.display());
    dirs.sort_by_key(|d| !d.has(".failed.json"));
    let n_failed = dirs.iter().filter(|d| d.has(".failed.json")).count();
    assert_eq!(n_failed, failed, "failed bundles: {dirs:?}");
    for d in &dirs {
        if d.has(".failed.json") {
            for f in SUCCESS_FILES {
                assert!(!d.has(f), "failed case {} has {f}", d.path.display());
            }
            let r = d.json(".failed.json");
            assert_eq!(r["success"], false);
            assert_eq!(r["eligible_for_official_eval"], false);
            let reasons = r["official_eval_ineligible_reasons"].as_array().unwrap();
            assert!(reasons.iter().any(|x| x == "case_failed"), "{r}");
        } else {
            for f in SUCCESS_FILES {
                assert!(d.has(f), "successful case {} lacks {f}", d.path.display());
            }
            assert_eq!(d.json("result.json")["success"], true);
            assert_eq!(d.json(".done")["success"], true);
        }
    }
    let batch = read_json(&root.join("batch_summary.json"));
    assert_eq!(batch["total"], total as u64, "{batch}");
    assert_eq!(batch["failed"], failed as u64, "{batch}");
    assert_eq!(batch["success"], (total - failed) as u64, "{batch}");
    assert_eq!(batch["results"].as_array().unwrap().len(), total);
    dirs
}

/// Nearest-rank-free percentile: linear interpolation between closest ranks (`q` in
/// [0, 100]) of an unsorted sample.
pub fn percentile(values: &[f64], q: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = q / 100.0 * (v.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (rank - lo as f64)
}

/// A run of three cases where one server session had a fault.
pub struct Faulty {
    /// Keeps the temp dir alive while the test looks at it.
    pub _fx: Fixture,
    /// The failed case's message.
    pub msg: String,
    /// The failed case.
    pub failed: CaseDir,
}

/// Three 1 s cases at max_concurrency 3; `fault` (keys of `[server.duplex.faults]`) hits
/// only the server's second session (`server`: other `[server.duplex]` keys, `workload`:
/// extra `[workload]` keys). Checks that exactly that one case failed, the run did not
/// pass, the other two succeeded, and the bundles and batch summary agree.
#[track_caller]
pub fn one_faulty_of_three(server: &str, fault: &str, workload: &str) -> Faulty {
    let server = format!("{server}\n[server.duplex.faults]\nonly_sessions = [1]\n{fault}");
    let fx = duplex(&Opts {
        workload,
        server: &server,
        ..Opts::default()
    });
    let s = fx.run();
    assert!(!s.passed(), "the run must not pass");
    assert_eq!(s.measured, 3);
    let msgs = failure_messages(&s);
    assert_eq!(msgs.len(), 1, "exactly one case fails: {msgs:?}");
    let mut dirs = assert_bundles(&out_dir(&fx), 3, 1);
    let failed = dirs.remove(0);
    let msg = msgs.into_iter().next().unwrap();
    assert_eq!(failed.json(".failed.json")["error"], msg.as_str());
    for ok in &dirs {
        let r = ok.json("result.json");
        assert_eq!(r["input_audio_chunks"], 5, "{r}");
        assert!(r["responses"].as_u64().unwrap() >= 2, "{r}");
        assert_eq!(r["error"], "", "the reference writes \"\" for no error");
    }
    Faulty {
        _fx: fx,
        msg,
        failed,
    }
}

/// The failure message of a server `error` event with `message`: the Python rendering of
/// the whole event (keys in the client's map order, which is sorted), with the varying
/// value of the server's `server_sent_at_s` stamp replaced by `X`.
#[track_caller]
pub fn assert_error_event_message(got: &str, message: &str) {
    let (head, tail) = got
        .split_once("'server_sent_at_s': ")
        .unwrap_or_else(|| panic!("no server stamp in {got}"));
    let (stamp, rest) = tail.split_once(',').unwrap_or_else(|| panic!("{got}"));
    assert!(stamp.parse::<f64>().is_ok(), "{got}");
    assert_eq!(
        format!("{head}'server_sent_at_s': X,{rest}"),
        format!("{{'message': '{message}', 'server_sent_at_s': X, 'type': 'error'}}"),
    );
}

/// Three cases, `fault` on the server's second session (`server`: other
/// `[server.duplex]` keys), all must succeed; returns the `artifact_warnings` of each case.
#[track_caller]
pub fn all_succeed_with(server: &str, fault: &str) -> (Fixture, Vec<Vec<String>>) {
    let server = format!("{server}\n[server.duplex.faults]\nonly_sessions = [1]\n{fault}");
    let fx = duplex(&Opts {
        server: &server,
        ..Opts::default()
    });
    let s = fx.run();
    assert!(s.passed(), "{:?}", failure_messages(&s));
    let dirs = assert_bundles(&out_dir(&fx), 3, 0);
    let warnings = dirs
        .iter()
        .map(|d| {
            d.json("result.json")["artifact_warnings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_str().unwrap().to_string())
                .collect()
        })
        .collect();
    (fx, warnings)
}

/// Exactly one case recorded warnings, and just `expected`.
#[track_caller]
pub fn assert_one_case_warned(warnings: &[Vec<String>], expected: &str) {
    let warned: Vec<_> = warnings.iter().filter(|w| !w.is_empty()).collect();
    assert_eq!(warned.len(), 1, "{warnings:?}");
    assert_eq!(warned[0], &[expected.to_string()], "{warnings:?}");
}

/// Per response: (client TTFP, server TTFP) in seconds, from one case's `events.json`.
/// Client TTFP = receipt(first audio delta) − receipt(response.created); server TTFP =
/// the same difference of the server's `server_sent_at_s` stamps.
pub fn ttfp_pairs(events: &[Value]) -> Vec<(f64, f64)> {
    let stamps = |e: &Value| {
        (
            e["_client_received_at_s"].as_f64().expect("receipt stamp"),
            e["server_sent_at_s"].as_f64().expect("server stamp"),
        )
    };
    let mut created: HashMap<String, (f64, f64)> = HashMap::new();
    let mut out = Vec::new();
    for e in events {
        match e["type"].as_str() {
            Some("response.created") => {
                let id = e["response"]["id"].as_str().unwrap().to_string();
                created.insert(id, stamps(e));
            }
            Some("response.audio.delta") => {
                let id = e["response_id"].as_str().unwrap();
                if let Some((c0, s0)) = created.remove(id) {
                    let (c1, s1) = stamps(e);
                    out.push((c1 - c0, s1 - s0));
                }
            }
            _ => {}
        }
    }
    out
}

/// `ffmpeg`/`ffprobe` must be installed for the MP4 test; never skipped.
pub fn require_ffmpeg() {
    for tool in ["ffmpeg", "ffprobe"] {
        let ok = Command::new(tool)
            .arg("-version")
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(ok, "install ffmpeg (apt-get install ffmpeg)");
    }
}

/// Every file under `dir`.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    crate::cli::walk(dir)
}

/// Fails when `text` (named `what`) contains either secret.
#[track_caller]
pub fn assert_no_secret(what: &str, text: &str) {
    for secret in [API_KEY, HEADER_SECRET] {
        assert!(!text.contains(secret), "{what} leaks {secret}:\n{text}");
    }
}

/// `OPENAI_API_KEY` of the secrets tests.
pub const API_KEY: &str = "sk-test-secret";
/// A `[target] headers` value of the secrets tests.
pub const HEADER_SECRET: &str = "hdr-secret-4242";

/// `rtload run` as a subprocess with `OPENAI_API_KEY` set; returns (exit code, stdout,
/// stderr) after checking that neither secret appears in them, in the JSON result or in
/// any file under the artifact root. The run's temporary directory (`TMPDIR`, where the
/// capture spool goes) is the fixture's `tmp/`: the spool must be gone afterwards, and
/// no spool file may be under the artifact root.
#[track_caller]
pub fn run_with_secrets(fx: &Fixture) -> (Option<i32>, String, String) {
    let json = fx.dir.path().join("result.json");
    let tmp = fx.dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rtload"))
        .arg("run")
        .arg(&fx.path)
        .arg("--output-json")
        .arg(&json)
        .env("OPENAI_API_KEY", API_KEY)
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with("rtload-spool-"))
        .collect();
    assert!(
        left.is_empty(),
        "the capture spool was not removed: {left:?}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_no_secret("stdout", &stdout);
    assert_no_secret("stderr", &stderr);
    if json.is_file() {
        assert_no_secret("the JSON result", &std::fs::read_to_string(&json).unwrap());
    }
    let artifacts = files(&out_dir(fx));
    assert!(!artifacts.is_empty());
    for f in artifacts {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            !name.ends_with(".pcm"),
            "a spool file under the output root: {f:?}"
        );
        let bytes = std::fs::read(&f).unwrap();
        assert_no_secret(&f.display().to_string(), &String::from_utf8_lossy(&bytes));
    }
    (out.status.code(), stdout, stderr)
}
