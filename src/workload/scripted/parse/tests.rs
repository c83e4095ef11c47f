//! Parsing a script from the scenario: repeats unrolled, metrics declared, and every
//! mistake positioned and explained.

use super::*;

fn defaults(fields: Option<&[&str]>) -> Defaults {
    Defaults {
        pacing: PacingMode::Realtime,
        await_timeout: Duration::from_secs(30),
        timeout: Duration::from_secs(600),
        item_fields: fields.map(|f| f.iter().map(|s| s.to_string()).collect()),
    }
}

const GOOD: &str = r#"name = "t"
[workload]
kind = "scripted"
fail_on = [{ type = "error" }]

[[workload.steps]]
send = { type = "session.update", model = "${model}" }

[[workload.steps]]
mark = "audio_start"

[[workload.steps]]
stream = { type = "input_audio_buffer.append", audio = "${chunk_b64}" }
chunk_ms = 100
pacing = "2x"

[[workload.steps]]
repeat = 2
steps = [ { send = { type = "response.create", turn = "${turn}" } }, { await = { type = "response.done", response.status = "completed" }, timeout_s = 5 } ]

[workload.events]
audio = { type = "response.output_audio.delta" }

[workload.metrics]
ttft_ms = "first(transcription.delta) - mark(audio_start)"
deltas = { expr = "count(audio)", better = "higher" }
"#;

fn errors(src: &str, fields: Option<&[&str]>) -> Vec<String> {
    parse(Path::new("s.toml"), src, &defaults(fields))
        .unwrap_err()
        .into_iter()
        .map(|e| e.to_string())
        .collect()
}

#[test]
fn a_good_script_unrolls_repeats_and_declares_metrics() {
    let s = parse(Path::new("s.toml"), GOOD, &defaults(Some(&["name"]))).unwrap();
    assert_eq!(s.steps.len(), 7);
    assert_eq!(s.steps[3].turn, 0);
    assert_eq!(s.steps[5].turn, 1);
    assert!(
        matches!(&s.steps[2].action, Action::Stream { chunk_ms: 100, pacing: PacingMode::Speed(x), .. } if *x == 2.0)
    );
    let Action::Await {
        matcher, timeout, ..
    } = &s.steps[4].action
    else {
        panic!()
    };
    assert_eq!(*timeout, Duration::from_secs(5));
    assert!(matcher.matches(
        &serde_json::json!({"type": "response.done", "response": {"status": "completed"}})
    ));
    assert_eq!(s.metrics.len(), 2);
    let d = &s.metrics.iter().find(|m| m.name == "deltas").unwrap();
    assert_eq!((d.unit.as_str(), d.lower_is_better), ("", Some(false)));
    let t = &s.metrics.iter().find(|m| m.name == "ttft_ms").unwrap();
    assert_eq!((t.unit.as_str(), t.lower_is_better), ("ms", Some(true)));
    assert_eq!(s.wanted_types(), vec!["transcription.delta".to_string()]);
    assert_eq!(s.fail_on.len(), 1);
}

#[test]
fn unknown_keys_get_positions_and_suggestions() {
    let src = "[workload]\nkind = \"scripted\"\n[[workload.steps]]\nawiat = { type = \"x\" }\n";
    let e = errors(src, None);
    assert_eq!(
        e,
        vec!["s.toml:4:1: unknown step key `awiat`; did you mean `await`?"]
    );
    let src = "[workload]\nkind = \"scripted\"\n[[workload.steps]]\nawait = { type = \"x\" }\ntimeout = 3\n";
    let e = errors(src, None);
    assert!(
        e[0].starts_with(
            "s.toml:5:1: unknown key `timeout` in a `await` step; did you mean `timeout_s`?"
        ),
        "{e:?}"
    );
}

#[test]
fn bad_templates_point_into_the_string() {
    let src = "[workload]\nkind = \"scripted\"\n[[workload.steps]]\nsend = { type = \"x\", m = \"a ${modle}\" }\n";
    let e = errors(src, None);
    assert!(
        e[0].starts_with(
            "s.toml:4:29: unknown template variable `${modle}`; did you mean `${model}`?"
        ),
        "{e:?}"
    );
    let src =
        "[workload]\nkind = \"scripted\"\n[[workload.steps]]\nsend = { a = \"${chunk_b64}\" }\n";
    assert!(errors(src, None)[0].contains("only in a `stream` template"));
    let src =
        "[workload]\nkind = \"scripted\"\n[[workload.steps]]\nsend = { a = \"${item.txt}\" }\n";
    let e = errors(src, Some(&["name", "text"]));
    assert!(
        e[0].contains("field `txt`; fields every item has: name, text"),
        "{e:?}"
    );
}

#[test]
fn bad_metric_expressions_name_the_position() {
    let src = "[workload]\nkind = \"scripted\"\n[[workload.steps]]\nmark = \"a\"\n[workload.metrics]\nx_ms = \"first(d) -- mark(a)\"\n";
    let e = errors(src, None);
    assert!(
        e[0].starts_with("s.toml:6:19: metric `x_ms` = \"first(d) -- mark(a)\": unexpected `-`"),
        "{e:?}"
    );
    let src = "[workload]\nkind = \"scripted\"\n[[workload.steps]]\nmark = \"start\"\n[workload.metrics]\nx_ms = \"first(d) - mark(strat)\"\n";
    let e = errors(src, None);
    assert!(
        e[0].contains("reads mark `strat`, which no step sets; did you mean `start`?"),
        "{e:?}"
    );
}

#[test]
fn structural_mistakes_are_explained() {
    let e = errors("[workload]\nkind = \"scripted\"\n", None);
    assert!(e[0].contains("needs `steps`"), "{e:?}");
    let src =
        "[workload]\nkind = \"scripted\"\n[[workload.steps]]\nsend = {type=\"a\"}\nmark = \"b\"\n";
    assert!(errors(src, None)[0].contains("does one thing"));
    let src = "[workload]\nkind = \"scripted\"\n[[workload.steps]]\nstream = \"binary\"\n";
    assert!(errors(src, None)[0].contains("set `[workload] dataset`"));
    let src = "[workload]\nkind = \"scripted\"\n[[workload.steps]]\nrepeat = 0\nsteps = []\n";
    assert!(errors(src, None)[0].starts_with("s.toml:4:10: `repeat` must be"));
    let src = "[workload]\nkind = \"scripted\"\n[[workload.steps]]\nawait = {}\n";
    assert!(errors(src, None)[0].contains("at least one field"));
    let src = "[workload]\nkind = \"scripted\"\n[[workload.steps]]\nawait = {type=\"a\"}\nuntil = {type=\"b\"}\n";
    assert!(errors(src, None)[0].contains("collect = true"));
}
