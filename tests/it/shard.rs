//! Distributed runs: N local `rtload run --shard I/N` processes started exactly as the
//! Kubernetes Indexed Job starts its pods (`JOB_COMPLETION_INDEX` in the environment,
//! `--shard $(JOB_COMPLETION_INDEX)/N`, one shared `--start-at` barrier, results to one
//! shared directory), then `rtload merge`, checked against one unsharded run of the same
//! plan.

use std::path::Path;
use std::process::{Command, Output};

use rtload::workload::Summary;
use serde_json::Value;

use crate::support::rtload;

fn json(p: &Path) -> Value {
    // The duplex result carries Python's bare `NaN`, as vllm's does.
    rtload::report::read_result(p).unwrap()
}

fn ok(out: &Output) -> String {
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{text}");
    text
}

/// The container args of `deploy/kubernetes/job.yaml`, as written.
fn job_args() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let job = std::fs::read_to_string(root.join("deploy/kubernetes/job.yaml")).unwrap();
    let mut lines = job.lines().skip_while(|l| l.trim() != "args:").skip(1);
    let mut args = Vec::new();
    for l in lines.by_ref() {
        let Some(a) = l.trim().strip_prefix("- ") else {
            break;
        };
        if l.contains(':') && !a.contains('$') && !a.starts_with('/') {
            break; // the next list (e.g. `- name:`), not an arg
        }
        args.push(a.to_string());
    }
    assert!(args.len() > 4, "{args:?}");
    args
}

/// The pod of `deploy/kubernetes/job.yaml` with completion index `index`: its args with
/// `$(VAR)` expanded from the pod's environment as the kubelet does, the ConfigMap and
/// the results volume mapped to local paths.
fn pod(scenario: &Path, results: &Path, index: usize, n: usize, start_at: &str) -> Command {
    let env = [
        ("JOB_COMPLETION_INDEX", index.to_string()),
        ("SHARDS", n.to_string()),
        ("START_AT", start_at.to_string()),
    ];
    let mut c = rtload();
    for a in job_args() {
        let mut a = a.replace("/scenario/scenario.toml", &scenario.display().to_string());
        a = a.replace("/results/", &format!("{}/", results.display()));
        for (k, v) in &env {
            a = a.replace(&format!("$({k})"), v);
        }
        assert!(!a.contains("$("), "unexpanded {a}");
        c.arg(a);
    }
    c.envs(env);
    c
}

#[test]
fn manifests_agree_on_the_shard_count() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/kubernetes");
    let job = std::fs::read_to_string(root.join("job.yaml")).unwrap();
    let merge = std::fs::read_to_string(root.join("merge-job.yaml")).unwrap();
    let n = 4;
    for want in [
        "completionMode: Indexed".to_string(),
        format!("completions: {n} "),
        format!("parallelism: {n}\n"),
        format!("value: \"{n}\""),
    ] {
        assert!(job.contains(&want), "job.yaml lacks {want:?}");
    }
    assert!(job_args().contains(&"$(JOB_COMPLETION_INDEX)/$(SHARDS)".to_string()));
    for i in 0..n {
        assert!(merge.contains(&format!("/results/shard-{i}.json")), "{i}");
    }
    assert!(!merge.contains(&format!("/results/shard-{n}.json")));
}

const VIDEO: &str = r#"
name = "sharded-video"
[workload]
kind = "video-cadence"
num_chunks = 4
target_fps = 16
[load]
samples = 7
warmup_samples = 2
max_concurrency = 6
request_rate = 8.0
seed = 11
[server.video]
first_chunk_ms = 40
chunk_interval_ms = 20
jitter_ms = 5
[thresholds]
"failed" = "== 0"
"ttfc_ms.p99" = "< 5000"
"#;

#[test]
fn sharded_processes_merge_to_the_unsharded_plan_with_exact_percentiles() {
    let dir = tempfile::tempdir().unwrap();
    let sc = dir.path().join("scenario.toml");
    std::fs::write(&sc, VIDEO).unwrap();
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    let n = 3;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let start_at = format!("{:.3}", now + 2.0);
    let pods: Vec<_> = (0..n)
        .map(|i| pod(&sc, &results, i, n, &start_at).output_async())
        .collect();
    for p in pods {
        ok(&p.wait_with_output().unwrap());
    }
    let whole = dir.path().join("whole.json");
    ok(&rtload()
        .arg("run")
        .arg(&sc)
        .arg("--quiet")
        .arg("--output-json")
        .arg(&whole)
        .output()
        .unwrap());
    let merged = dir.path().join("merged.json");
    let mut merge = rtload();
    merge.arg("merge").arg("-o").arg(&merged);
    for i in 0..n {
        merge.arg(results.join(format!("shard-{i}.json")));
    }
    let text = ok(&merge.output().unwrap());
    assert!(
        text.contains(
            "verdict: passed — merged 3 shard results: 7 measured, 7 completed, 0 failed"
        ),
        "{text}"
    );
    assert!(text.contains("PASS"), "{text}");
    assert!(merged.with_extension("hlog").is_file(), "a merged .hlog");

    let (m, w) = (json(&merged), json(&whole));
    let rec = &m["rtload_merge"];
    assert_eq!(rec["measured"], 7);
    // The union of the shards' intended releases is the unsharded run's plan.
    let scenario = rtload::scenario::load(&sc, &Default::default()).unwrap();
    let plan = rtload::scenario::plan(scenario.samples(), &scenario.load().arrival).unwrap();
    assert_eq!(
        rec["samples"],
        serde_json::json!((0..7).collect::<Vec<usize>>())
    );
    assert_eq!(rec["intended_release_s"], serde_json::json!(plan.offsets_s));
    assert!(
        w.get("rtload_shard").is_none(),
        "a plain run keeps the reference layout"
    );
    assert_eq!(
        w["rtload"]["samples"].as_array().unwrap().len(),
        m["rtload"]["samples"].as_array().unwrap().len()
    );
    assert_eq!(
        rec["start_at_unix_s"].as_f64().unwrap(),
        start_at.parse::<f64>().unwrap()
    );
    // The generator block: counts from the merged histograms, failure kinds summed.
    assert_eq!(m["rtload"]["queue_wait"]["count"], 7, "{}", m["rtload"]);
    assert_eq!(m["rtload"]["failures_by_kind"], serde_json::json!({}));
    // Outcome classes summed over the shards: the unsharded run's counts and metrics.
    let counts = |d: &Value| {
        let mut o = d["rtload"]["outcomes"].clone();
        o.as_object_mut().unwrap().remove("sessions");
        o
    };
    assert_eq!(counts(&m), counts(&w), "{}", m["rtload"]["outcomes"]);
    assert_eq!(
        m["rtload"]["outcomes"]["sessions"]
            .as_array()
            .unwrap()
            .len(),
        7
    );
    for k in ["good", "ended_sessions", "rejected_ratio"] {
        assert_eq!(m["rtload"]["metrics"][k], w["rtload"]["metrics"][k], "{k}");
    }
    assert!(m["rtload"]["resources"]["cpu_s"].as_f64().is_some());
    // Each shard is its own process: memory per session is the largest shard's, not a sum.
    let per_session = |i: usize| {
        json(&results.join(format!("shard-{i}.json")))["rtload"]["resources"]["rss_per_session_kib"]
            .as_f64()
            .unwrap()
    };
    let largest = (0..n).map(per_session).fold(f64::MIN, f64::max);
    assert_eq!(
        m["rtload"]["resources"]["rss_per_session_kib_max_shard"].as_f64(),
        Some(largest)
    );
    let samples = m["rtload"]["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 7);
    assert_eq!(
        m["rtload"]["metrics"]["completed"],
        w["rtload"]["metrics"]["completed"]
    );
    // The merged verdict, thresholds and counts are the run's, in the JSON itself.
    assert_eq!(m["rtload"]["verdict"], "passed");
    assert_eq!(m["rtload"]["sample_counts"], w["rtload"]["sample_counts"]);
    assert_eq!(m["rtload"]["thresholds"].as_array().unwrap().len(), 2);
    // Percentiles of the merge are exactly those of every shard's raw values together.
    let ttfc: Vec<f64> = (0..n)
        .flat_map(|i| {
            let d = json(&results.join(format!("shard-{i}.json")));
            let v: Vec<f64> = d["rtload"]["distributions"]["ttfc_ms"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            v
        })
        .collect();
    assert_eq!(ttfc.len(), 7);
    let want = Summary::of(&ttfc, &[50.0, 99.0]).unwrap();
    for (name, q) in [("ttfc_ms.p50", 50.0), ("ttfc_ms.p99", 99.0)] {
        assert_eq!(
            m["rtload"]["metrics"][name].as_f64(),
            want.percentile(q),
            "{name}"
        );
    }
    assert_eq!(
        m["rtload"]["metrics"]["ttfc_ms.max"].as_f64(),
        Some(want.max)
    );
}

/// Poll-free helper: spawn now, collect later.
trait Spawn {
    fn output_async(&mut self) -> std::process::Child;
}

impl Spawn for Command {
    fn output_async(&mut self) -> std::process::Child {
        self.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }
}

#[test]
fn two_quickstart_shards_merge_to_the_same_count_and_verdict_as_one_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let dir = tempfile::tempdir().unwrap();
    let sc = dir.path().join("quickstart.toml");
    let data = root.join("data").display().to_string();
    let text = std::fs::read_to_string(root.join("quickstart.toml"))
        .unwrap()
        .replace("\"data/", &format!("\"{data}/"))
        + "\n[thresholds]\n\"failed\" = \"== 0\"\n\"completed\" = \">= 3\"\n\"ttft_ms.p99\" = \"< 60000\"\n";
    std::fs::write(&sc, text).unwrap();
    let run = |extra: &[&str], out: &str| {
        let o = rtload()
            .arg("run")
            .arg(&sc)
            .arg("--quiet")
            .args(extra)
            .arg("--omniinteract-output-dir")
            .arg(dir.path().join(format!("{out}-artifacts")))
            .arg("--output-json")
            .arg(dir.path().join(format!("{out}.json")))
            .output()
            .unwrap();
        ok(&o)
    };
    let one = run(&[], "one");
    run(&["--shard", "0/2"], "s0");
    run(&["--shard", "1/2"], "s1");
    let out = rtload()
        .arg("merge")
        .arg(dir.path().join("s0.json"))
        .arg(dir.path().join("s1.json"))
        .arg("-o")
        .arg(dir.path().join("merged.json"))
        .output()
        .unwrap();
    let merged_text = ok(&out);
    let (m, w) = (
        json(&dir.path().join("merged.json")),
        json(&dir.path().join("one.json")),
    );
    assert_eq!(m["completed"], w["completed"]);
    assert_eq!(m["rtload_merge"]["measured"], 3);
    assert_eq!(
        m["rtload"]["metrics"]["completed"],
        w["rtload"]["metrics"]["completed"]
    );
    // Each shard ran the whole run's cases k (k mod 2 == shard), not its own first ones.
    let cases = |d: &Value| -> Vec<String> {
        let mut c: Vec<String> = d["rtload"]["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["case"].as_str().unwrap().to_string())
            .collect();
        c.sort();
        c
    };
    assert_eq!(cases(&m), cases(&w));
    let verdicts = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with("PASS") || l.starts_with("FAIL"))
            .map(|l| l.split("measured").next().unwrap().trim().to_string())
            .collect()
    };
    assert_eq!(
        verdicts(&merged_text),
        verdicts(&one),
        "{merged_text}\n{one}"
    );
    assert_eq!(verdicts(&one).len(), 3, "{one}");
}

#[test]
fn bad_shard_and_start_at_values_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let sc = dir.path().join("scenario.toml");
    std::fs::write(&sc, VIDEO).unwrap();
    for (flag, value, says) in [
        ("--shard", "3/3", "I/N"),
        ("--start-at", "soon", "RFC 3339"),
        ("--shard", "0/7", "raise max_concurrency"),
    ] {
        let out = rtload()
            .arg("run")
            .arg(&sc)
            .args([flag, value])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(says), "{err}");
    }
    let out = rtload()
        .args(["merge", "-o"])
        .arg(dir.path().join("m.json"))
        .arg(&sc)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
