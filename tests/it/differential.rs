//! Differential: every shipped scenario kind, run whole and as 2 and as 3 shards of the
//! same plan (one `--start-at` barrier per set), then `rtload merge`d. The merge must be
//! the run: the same exit code, verdict, sample counts and thresholds (each with a
//! measured value), the same metric names (nothing dropped but what the catalogue says
//! has no exact rule), and every distribution statistic exactly that of the shards' raw
//! values together — the statistic one process would have computed over those values. A
//! merged `.hlog` is written, and no result breaks an invariant.
//!
//! (Two runs never measure the same latencies, so the merged percentiles are checked
//! against the union of the shards' recorded values, not against the whole run's.)

use std::path::{Path, PathBuf};
use std::process::Child;

use rtload::catalogue::{Catalogue, MergeRule};
use rtload::workload::Summary;
use serde_json::Value;

use crate::support::rtload;

/// The shipped scenario `file`, its data paths made absolute and `extra` appended, as
/// one scenario file per run (`tag`) in `dir` (each with its own artifact root).
fn scenario(dir: &Path, file: &str, extra: &str, tag: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let data = root.join("data").display().to_string();
    let out = dir.join(format!("{tag}-artifacts")).display().to_string();
    let text = std::fs::read_to_string(root.join(file))
        .unwrap()
        .replace("\"data/", &format!("\"{data}/"))
        .replace(
            "output_dir = \"quickstart-output\"",
            &format!("output_dir = \"{out}\""),
        )
        + extra;
    let p = dir.join(format!("{tag}.toml"));
    std::fs::write(&p, text).unwrap();
    p
}

fn spawn(sc: &Path, json: &Path, args: &[String]) -> Child {
    rtload()
        .arg("run")
        .arg(sc)
        .arg("--quiet")
        .args(["--max-concurrency", "6"])
        .args(args)
        .arg("--output-json")
        .arg(json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(c: Child) -> (Option<i32>, String) {
    let o = c.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code(), text)
}

fn read(p: &Path) -> Value {
    rtload::report::read_result(p).unwrap()
}

/// Run `file` whole and as 2 and 3 shards at once, merge each set, and hold every merge
/// to the run.
fn differential(file: &str, extra: &str) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let at = format!("{:.3}", now + 3.0);
    let whole_json = d.join("whole.json");
    let whole = spawn(&scenario(d, file, extra, "whole"), &whole_json, &[]);
    let mut sets = Vec::new();
    for n in [2, 3] {
        let shards: Vec<(PathBuf, Child)> = (0..n)
            .map(|i| {
                let json = d.join(format!("s{n}-{i}.json"));
                let sc = scenario(d, file, extra, &format!("s{n}-{i}"));
                let args = [
                    "--shard".to_string(),
                    format!("{i}/{n}"),
                    "--start-at".into(),
                    at.clone(),
                ];
                (json.clone(), spawn(&sc, &json, &args))
            })
            .collect();
        sets.push(shards);
    }
    let (whole_code, whole_text) = finish(whole);
    let w = read(&whole_json);
    for shards in sets {
        let n = shards.len();
        let jsons: Vec<PathBuf> = shards
            .into_iter()
            .map(|(j, c)| {
                let (code, text) = finish(c);
                assert!(code == Some(0) || code == Some(1), "{file} shard: {text}");
                j
            })
            .collect();
        let merged = d.join(format!("merged{n}.json"));
        let o = rtload()
            .arg("merge")
            .args(&jsons)
            .arg("-o")
            .arg(&merged)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        assert_eq!(
            o.status.code(),
            whole_code,
            "{file} {n} shards: merge\n{text}\nwhole\n{whole_text}"
        );
        assert!(
            merged.with_extension("hlog").is_file(),
            "{file}: merged .hlog"
        );
        let m = read(&merged);
        same_run(file, n, &w, &m);
        exact_from_the_shards(file, &jsons, &m);
    }
}

/// The merged result says what the whole run says.
fn same_run(file: &str, n: usize, w: &Value, m: &Value) {
    let (wr, mr) = (&w["rtload"], &m["rtload"]);
    let at = format!("{file}, {n} shards");
    assert_eq!(mr["verdict"], wr["verdict"], "{at}");
    // What the workload declares about itself comes through once, as the run wrote it.
    for key in [
        "metrics_catalogue",
        "headline_metrics",
        "charts",
        "unit_rate",
    ] {
        assert_eq!(mr[key], wr[key], "{at}: {key}");
    }
    assert_eq!(mr["sample_counts"], wr["sample_counts"], "{at}");
    let th = |r: &Value| -> Vec<(Value, Value, bool)> {
        r["thresholds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["metric"].clone(),
                    t["passed"].clone(),
                    t["measured"].is_number(),
                )
            })
            .collect()
    };
    assert_eq!(th(mr), th(wr), "{at}: thresholds");
    assert!(th(mr).iter().all(|t| t.2), "{at}: every threshold measured");
    assert_eq!(
        mr["warnings"],
        serde_json::json!([]),
        "{at}: {}",
        mr["warnings"]
    );
    assert_eq!(
        wr["warnings"],
        serde_json::json!([]),
        "{at}: {}",
        wr["warnings"]
    );
    let cat = Catalogue::from_result(m).unwrap();
    // A distribution empty in one run (no response stalled, say) publishes no
    // statistics there: such timing-dependent presence is not the merge's doing.
    let in_both = |k: &String| {
        let Some(d) = cat.get(k).and_then(|i| i.distribution.clone()) else {
            return true;
        };
        let has = |r: &Value| {
            r["distributions"][&d]
                .as_array()
                .is_some_and(|a| !a.is_empty())
        };
        has(wr) && has(mr)
    };
    let names = |r: &Value| -> Vec<String> {
        r["metrics"]
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| in_both(k))
            .cloned()
            .collect()
    };
    let dropped: Vec<String> = m["rtload_merge"]["dropped"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    for d in &dropped {
        let rule = cat.get(d).and_then(|i| i.merge.clone());
        assert!(
            matches!(rule, Some(MergeRule::Unmergeable(_))),
            "{at}: {d} dropped though it has a rule ({rule:?}): {}",
            m["rtload_merge"]["dropped"]
        );
    }
    let want: Vec<String> = names(wr)
        .into_iter()
        .filter(|k| !dropped.contains(k))
        .collect();
    assert_eq!(names(mr), want, "{at}: metric names");
    nothing_silently_lost(&at, w, m);
}

/// Every key of the whole run's document, its `rtload` block and that block's objects is
/// in the merge or listed under `rtload_merge.dropped_keys`; the wire block is merged.
fn nothing_silently_lost(at: &str, w: &Value, m: &Value) {
    let listed = m["rtload_merge"]["dropped_keys"].as_object().unwrap();
    let keys = |v: &Value| -> Vec<String> {
        v.as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k.clone())
            .collect()
    };
    let mut ptrs: Vec<String> = keys(w).iter().map(|k| format!("/{k}")).collect();
    for k in keys(&w["rtload"]) {
        ptrs.push(format!("/rtload/{k}"));
        // Metrics left out are checked against their rules above (`dropped`).
        if k != "metrics" && m.pointer(&format!("/rtload/{k}")).is_some() {
            ptrs.extend(
                keys(&w["rtload"][&k])
                    .iter()
                    .map(|s| format!("/rtload/{k}/{s}")),
            );
        }
    }
    for p in ptrs {
        assert!(
            m.pointer(&p).is_some() || listed.contains_key(&p),
            "{at}: {p} is neither merged nor listed as dropped: {listed:?}"
        );
    }
    // A top-level key declared as another name of a metric is that metric, in the run
    // and in the merge (vLLM's `p99_ttft_ms` is `ttft_ms.p99`).
    let aliases = w["rtload"]["metric_aliases"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for (legacy, name) in &aliases {
        let name = name.as_str().unwrap();
        for (doc, which) in [(w, "run"), (m, "merge")] {
            let (Some(x), metric) = (doc[legacy].as_f64(), &doc["rtload"]["metrics"][name]) else {
                continue;
            };
            let y = metric.as_f64().unwrap_or(f64::NAN);
            assert!(
                (x - y).abs() <= 1e-9 * x.abs().max(1.0),
                "{at}: the {which}'s {legacy} {x} is not its {name} {y}"
            );
        }
        if w[legacy].is_number() {
            assert!(m[legacy].is_number(), "{at}: {legacy} merged");
        }
    }
    restated_and_duration(at, w, m);
    let conns = "/rtload/wire/compression/connections";
    assert_eq!(m.pointer(conns), w.pointer(conns), "{at}: connections");
    let stamped = |v: &Value| {
        let r = &v["rtload"]["wire"]["receipts"];
        r["kernel_stamped"].as_u64().unwrap() + r["stamped_at_read"].as_u64().unwrap()
    };
    assert!(
        stamped(m) > 0,
        "{at}: the merged receipts count the shards' messages"
    );
}

/// A top-level object of the whole run that restates its metrics field by field (`rtf`:
/// `rtf.count`, `rtf.p99`, …) is in the merge, restating the merged metrics; a top-level
/// `duration_s` is the merged run's span.
fn restated_and_duration(at: &str, w: &Value, m: &Value) {
    // A field restates `key.field` (`rtf.p99`) or `field.total` (`tokens.prompt_tokens`).
    let name = |doc: &Value, k: &str, f: &str, x: f64| {
        [format!("{k}.{f}"), format!("{f}.total")]
            .into_iter()
            .find(|n| doc["rtload"]["metrics"][n].as_f64() == Some(x))
    };
    for (k, v) in w.as_object().unwrap() {
        let Some(o) = v.as_object().filter(|o| !o.is_empty()) else {
            continue;
        };
        let names: Option<Vec<(&String, String)>> = (o.iter())
            .map(|(f, x)| Some((f, name(w, k, f, x.as_f64()?)?)))
            .collect();
        for (f, n) in names.into_iter().flatten() {
            let (got, want) = (m[k][f].as_f64(), m["rtload"]["metrics"][&n].as_f64());
            assert!(
                got.is_some() && got == want,
                "{at}: /{k}/{f} {got:?} is not the merged {n} {want:?}"
            );
        }
    }
    if w["duration_s"].is_number() {
        assert_eq!(
            m["duration_s"], m["rtload"]["duration_s"],
            "{at}: duration_s"
        );
    }
}

/// Every distribution statistic of the merge is that of the shards' values together.
fn exact_from_the_shards(file: &str, shards: &[PathBuf], m: &Value) {
    // Each shard's soak block is the merge's, whole, under its index.
    for p in shards {
        let d = read(p);
        let (Some(soak), Some(i)) = (
            d.pointer("/rtload/soak"),
            d["rtload_shard"]["index"].as_u64(),
        ) else {
            continue;
        };
        let kept = m["rtload"]["soak_by_shard"]
            .as_array()
            .into_iter()
            .flatten();
        let kept: Vec<&Value> = kept.filter(|k| k["shard"] == i).collect();
        assert_eq!(kept.len(), 1, "{file}: shard {i}'s soak kept once");
        assert_eq!(&kept[0]["soak"], soak, "{file}: shard {i}'s soak");
    }
    let cat = Catalogue::from_result(m).unwrap();
    let metrics = m["rtload"]["metrics"].as_object().unwrap();
    let mut checked = 0;
    for dist in cat.distributions() {
        let all: Vec<f64> = shards
            .iter()
            .flat_map(|p| {
                let d = read(p);
                let v: Vec<f64> = d["rtload"]["distributions"][&dist]
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_f64).collect())
                    .unwrap_or_default();
                v
            })
            .collect();
        let Some(s) = Summary::of(&all, &[50.0, 90.0, 99.0]) else {
            assert!(
                !metrics.contains_key(&format!("{dist}.p50")),
                "{file}: {dist}"
            );
            continue;
        };
        for (stat, want) in [
            ("count", Some(s.count as f64)),
            ("min", Some(s.min)),
            ("p50", s.percentile(50.0)),
            ("p90", s.percentile(90.0)),
            ("p99", s.percentile(99.0)),
            ("max", Some(s.max)),
        ] {
            let got = metrics[&format!("{dist}.{stat}")].as_f64();
            assert_eq!(got, want, "{file}: {dist}.{stat}");
        }
        let mean = metrics[&format!("{dist}.mean")].as_f64().unwrap();
        assert!(
            (mean - s.mean).abs() <= 1e-9 * s.mean.abs().max(1.0),
            "{file}: {dist}.mean"
        );
        checked += 1;
    }
    assert!(checked > 0, "{file}: no distribution had values");
}

#[test]
fn video_quickstart_merges_to_the_run() {
    differential(
        "video-quickstart.toml",
        "\n[thresholds]\n\"failed\" = \"== 0\"\n\"ttfc_ms.p99\" = \"< 60000\"\n",
    );
}

#[test]
fn duplex_quickstart_merges_to_the_run() {
    differential(
        "quickstart.toml",
        "\n[thresholds]\n\"failed\" = \"== 0\"\n\"audio_ttfp_ms.p99\" = \"< 60000\"\n",
    );
}

#[test]
fn transcription_merges_to_the_run() {
    differential("transcription.toml", "");
}

#[test]
fn scripted_transcription_merges_to_the_run() {
    differential("scripted-transcription.toml", "");
}

#[test]
fn openai_realtime_merges_to_the_run() {
    differential("openai-realtime.toml", "");
}
