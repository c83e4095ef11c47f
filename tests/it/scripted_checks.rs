//! Issues 29 and 30 as a user meets them through the binary: metric expressions that
//! would have crashed `check` and `run` are refused with their position; event and mark
//! names are checked at `check`; a text-only dataset runs; a stream over an item without
//! audio is refused naming the manifest line; a per-turn metric that missed turns is a
//! warning in the terminal and the JSON result (`rtload.warnings`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::rtload;

/// A scenario file `s.toml` (and any `extra` files) in a temp dir.
fn scenario(src: &str, extra: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in extra {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let path = dir.path().join("s.toml");
    std::fs::write(&path, src).unwrap();
    (dir, path)
}

/// `rtload ARGS PATH`: (exit code, stdout + stderr).
fn rt(args: &[&str], path: &Path) -> (Option<i32>, String) {
    let out = rtload().args(args).arg(path).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

/// `rtload run PATH --output-json`: (exit code, JSON, output).
fn run(path: &Path) -> (Option<i32>, Value, String) {
    let json = path.with_extension("json");
    crate::support::run_json(path, &[], &json)
}

const HEAD: &str = "name = \"t\"\n[workload]\nkind = \"scripted\"\n[[workload.steps]]\nmark = \"m\"\n[[workload.steps]]\nsend = { type = \"ping\" }\n[[workload.steps]]\nawait = { type = \"pong\" }\n[server.scripted]\n[[server.scripted.rules]]\non = { type = \"ping\" }\ndo = [{ send = { type = \"pong\" } }]\n[workload.metrics]\n";

#[test]
fn expressions_that_crashed_check_and_run_are_refused_with_their_position() {
    let deep = format!("x = \"{}1{}\"\n", "(".repeat(30_000), ")".repeat(30_000));
    let long = format!("x = \"{}\"\n", vec!["1"; 10_000].join("+"));
    let nested = format!("x = \"{}count(pong){}\"\n", "(".repeat(65), ")".repeat(65));
    let many = format!("x = \"{}\"\n", vec!["count(pong)"; 1_001].join("+"));
    let cases = [
        (
            deep,
            "15:16390: metric `x` = \"(((",
            "more than the 16384 allowed",
        ),
        (long, "15:16390: metric `x` = \"1+1+", "19999 bytes long"),
        (
            nested,
            "15:70: metric `x`",
            "parentheses nest more than 64 deep",
        ),
        (many, "15:12006: metric `x`", "more than 1000 terms"),
    ];
    for (metric, at, why) in cases {
        let (_d, path) = scenario(&format!("{HEAD}{metric}"), &[]);
        for cmd in ["check", "run"] {
            let (code, text) = rt(&[cmd], &path);
            assert_eq!(code, Some(2), "{cmd}: {text}");
            assert!(text.contains(&format!("s.toml:{at}")), "{cmd}: {text}");
            assert!(text.contains(why), "{cmd}: {text}");
            assert!(text.len() < 2_000, "the expression is quoted short: {text}");
        }
    }
}

#[test]
fn check_names_every_unknown_event_and_mark_with_the_fix() {
    let (_d, path) = scenario(
        &format!(
            "{HEAD}ok_ms = \"first(pong) - mark(m)\"\ntypo_ms = \"first(pnog) - mark(m)\"\nmark_ms = \"first(pong) - mark(n)\"\nnew = \"count(server.only)\"\n"
        ),
        &[],
    );
    let (code, text) = rt(&["check"], &path);
    assert_eq!(code, Some(2), "{text}");
    let shown = path.display();
    assert!(
        text.contains(&format!(
            "{shown}:16:18: metric `typo_ms` reads event `pnog`"
        )),
        "{text}"
    );
    assert!(text.contains("did you mean `pong`?"), "{text}");
    assert!(
        text.contains(&format!(
            "{shown}:17:31: metric `mark_ms` reads mark `n`, which no step sets; did you mean `m`?"
        )),
        "{text}"
    );
    assert!(
        text.contains(
            "declare it under [workload.events] as `\"server.only\" = { type = \"server.only\" }`"
        ),
        "{text}"
    );
    assert!(!text.contains("ok_ms"), "{text}");
}

#[test]
fn a_text_only_dataset_runs_and_a_stream_over_it_is_refused() {
    let manifest = "{\"text\": \"hello\"}\n{\"text\": \"bye\"}\n";
    let src = "name = \"t\"\n[workload]\nkind = \"scripted\"\ndataset = \"lines.jsonl\"\nfail_on = [{ type = \"error\" }]\n[[workload.steps]]\nsend = { type = \"say\", text = \"${item.text}\", turn_detection = \"${null}\" }\n[[workload.steps]]\nawait = { type = \"said\" }\nname = \"said\"\n[workload.metrics]\nsaid = \"count(said)\"\n[server.scripted]\n[[server.scripted.rules]]\non = { type = \"say\" }\ndo = [{ send = { type = \"said\", text = \"${event.text}\", td = \"${event.turn_detection}\" } }]\n";
    let (_d, path) = scenario(src, &[("lines.jsonl", manifest)]);
    let (code, v, text) = run(&path);
    assert_eq!(code, Some(0), "{text}");
    // Samples default to the items; each was said and answered (`${event.turn_detection}`
    // found the field: a missing one renders as an error event, which fails the session).
    assert_eq!(v["completed"], 2, "{v}");
    assert_eq!(v["metrics"]["said"]["mean"], 1.0, "{v}");
    let streaming = src.replace(
        "[[workload.steps]]\nawait",
        "[[workload.steps]]\nstream = \"binary\"\n[[workload.steps]]\nawait",
    );
    let (_d, path) = scenario(&streaming, &[("lines.jsonl", manifest)]);
    let (code, text) = rt(&["check"], &path);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("lines.jsonl:1: no \"audio\", but a `stream` step streams each item's audio"),
        "{text}"
    );
}

#[test]
fn a_per_turn_metric_that_missed_turns_is_a_warning() {
    // The server says `hello` only in the first of two turns.
    let src = "name = \"t\"\n[workload]\nkind = \"scripted\"\n[[workload.steps]]\nrepeat = 2\n[[workload.steps.steps]]\nmark = \"sent\"\n[[workload.steps.steps]]\nsend = { type = \"ping\", n = \"${turn}\" }\n[[workload.steps.steps]]\nawait = { type = \"pong\" }\n[workload.events]\nhello = { type = \"hello\" }\n[workload.metrics]\nhello_ms = \"first(hello) - mark(sent)\"\npong_ms = \"first(pong) - mark(sent)\"\n[load]\nsamples = 2\n[server.scripted]\n[[server.scripted.rules]]\non = { type = \"ping\", n = 0 }\ndo = [{ send = { type = \"hello\" } }]\n[[server.scripted.rules]]\non = { type = \"ping\" }\ndo = [{ after_ms = 5, send = { type = \"pong\" } }]\n";
    let (_d, path) = scenario(src, &[]);
    let (code, v, text) = run(&path);
    assert_eq!(code, Some(0), "{text}");
    let want = "`hello_ms` has 2 values for 4 turns (mark `sent` taken 4 times in 2 completed sessions): 2 turns had no matching event";
    let warnings = v["rtload"]["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{v}");
    assert!(warnings[0].as_str().unwrap().starts_with(want), "{v}");
    assert!(text.contains(&format!("WARNING: {want}")), "{text}");
    assert_eq!(v["metrics"]["pong_ms"]["count"], 4.0);
}
