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

[server.scripted]
[[server.scripted.rules]]
on = { type = "input_audio_buffer.append" }
do = [{ after_ms = 5, send = [{ type = "transcription.delta", delta = "x" }] }]
"#;

/// The script of scenario text `src` (named `path`), parsed as the loader does.
fn parse(path: &Path, src: &str, defaults: &Defaults) -> Result<Script, Vec<ScenarioError>> {
    let doc = ScenarioDoc::parse(path, src).map_err(|e| vec![e])?;
    super::parse(&doc, defaults)
}

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
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(
        e[0].starts_with("s.toml:6:15: metric `x_ms` reads event `d`, which is not a [workload.events] name, a named `await`, or a message type this scenario mentions;"),
        "{e:?}"
    );
    assert!(
        e[0].ends_with("declare it under [workload.events] as `d = { type = \"d\" }`"),
        "{e:?}"
    );
    assert!(
        e[1].starts_with("s.toml:6:25: metric `x_ms` reads mark `strat`, which no step sets; did you mean `start`?"),
        "{e:?}"
    );
}

const NAMES: &str = r#"[workload]
kind = "scripted"
fail_on = [{ type = "error" }]
[[workload.steps]]
mark = "sent"
[[workload.steps]]
await = { type = "response.audio.delta" }
name = "audio"
collect = true
until = { type = "response.done" }
[workload.events]
transcript = { type = "response.output_audio_transcript.delta" }
[server.scripted]
on_connect = [{ send = { type = "session.created" } }]
[[server.scripted.rules]]
on = { type = "x" }
do = [{ stream = [{ type = "server.only" }, { type = "${event.type}" }], count = 2 }]
[workload.metrics]
"#;

#[test]
fn metric_names_must_be_declared_awaited_or_mentioned() {
    let ok = format!(
        "{NAMES}a = \"first(audio) - mark(sent)\"\nb = \"first(transcript) - mark(sent)\"\nc = \"count(response.done)\"\nd = \"count(error)\"\ne = \"count(session.created)\"\nf = \"count(server.only)\"\ng = \"count(response.output_audio_transcript.delta)\"\nh = \"count(response.audio.delta)\"\n"
    );
    let s = parse(Path::new("s.toml"), &ok, &defaults(None)).unwrap();
    assert_eq!(s.metrics.len(), 8);
    let bad = format!(
        "{NAMES}x_ms = {{ expr = \"first(transcrpit) - mark(sent)\", per = \"snet\" }}\ny = \"count(response.output_audio.delta)\"\n"
    );
    let e = errors(&bad, None);
    assert_eq!(e.len(), 3, "{e:?}");
    assert!(
        e[0].starts_with("s.toml:19:24: metric `x_ms` reads event `transcrpit`"),
        "{e:?}"
    );
    assert!(e[0].contains("did you mean `transcript`?"), "{e:?}");
    assert!(e[1].starts_with("s.toml:19:57: metric `x_ms` reads mark `snet`, which no step sets; did you mean `sent`?"), "{e:?}");
    assert!(
        e[2].starts_with("s.toml:20:12: metric `y` reads event `response.output_audio.delta`"),
        "{e:?}"
    );
    assert!(
        e[2].ends_with("declare it under [workload.events] as `\"response.output_audio.delta\" = { type = \"response.output_audio.delta\" }`"),
        "{e:?}"
    );
}

#[test]
fn since_must_name_an_earlier_mark() {
    let src = "[workload]\nkind = \"scripted\"\n[[workload.steps]]\nmark = \"turn_start\"\n[[workload.steps]]\nawait = { type = \"x\" }\nsince = \"turn_strat\"\n[[workload.steps]]\nawait = { type = \"x\" }\nsince = \"later\"\n[[workload.steps]]\nmark = \"later\"\n";
    let e = errors(src, None);
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(
        e[0].starts_with("s.toml:7:9: `since` names mark \"turn_strat\", which no earlier step sets; did you mean `turn_start`?"),
        "{e:?}"
    );
    assert!(
        e[1].starts_with("s.toml:10:9: `since` names mark \"later\""),
        "{e:?}"
    );
    let src = "[workload]\nkind = \"scripted\"\n[[workload.steps]]\nmark = \"m\"\n[[workload.steps]]\nrepeat = 2\nsteps = [{ await = { type = \"x\" }, since = \"m\" }, { mark = \"m\" }]\n";
    let s = parse(Path::new("s.toml"), src, &defaults(None)).unwrap();
    // Each await reads the latest `m` before it.
    assert_eq!(s.watchers.get(&0), Some(&vec![1]));
    assert_eq!(s.watchers.get(&2), Some(&vec![3]));
    assert_eq!(
        s.steps
            .iter()
            .map(|s| (s.turn, s.turn_rest))
            .collect::<Vec<_>>(),
        vec![
            (0, None),
            (0, Some(1)),
            (0, Some(0)),
            (1, Some(1)),
            (1, Some(0))
        ]
    );
}

#[test]
fn nested_repeats_keep_their_inner_turns() {
    let src = "[workload]\nkind = \"scripted\"\n[[workload.steps]]\nrepeat = 2\nsteps = [{ mark = \"a\" }, { repeat = 2, steps = [{ mark = \"b\" }] }]\n";
    let s = parse(Path::new("s.toml"), src, &defaults(None)).unwrap();
    assert_eq!(
        s.steps
            .iter()
            .map(|s| (s.turn, s.turn_rest))
            .collect::<Vec<_>>(),
        vec![
            (0, Some(2)),
            (0, Some(0)),
            (1, Some(0)),
            (1, Some(2)),
            (0, Some(0)),
            (1, Some(0))
        ]
    );
}

#[test]
fn null_is_not_a_text_frame() {
    let src = "[workload]\nkind = \"scripted\"\n[[workload.steps]]\nsend_text = \"${null}\"\n[[workload.steps]]\nsend = { a = \"${null}\", b = \"$${null}\" }\n";
    let e = errors(src, None);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with("s.toml:4:13: `${null}` is JSON null, and a frame needs text"),
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

#[test]
fn a_metric_named_like_a_session_count_is_refused() {
    let src = "[workload]\nkind = \"scripted\"\n[[workload.steps]]\nmark = \"a\"\n[workload.metrics]\ncompleted = \"count(x)\"\n[workload.events]\nx = { type = \"x\" }\n";
    let e = parse(Path::new("s.toml"), src, &defaults(None)).unwrap_err();
    let text: Vec<String> = e.iter().map(ToString::to_string).collect();
    assert!(
        text.iter()
            .any(|t| t.contains("s.toml:6:1") && t.contains("metric name `completed` is taken")),
        "{text:?}"
    );
}

#[test]
fn field_functions_read_declared_events_or_types_not_await_names() {
    let ok = format!(
        "{NAMES}a = \"lag(transcript, audio_end_ms)\"\nb = \"seen(transcript, item_id, response.done)\"\n"
    );
    let s = parse(Path::new("s.toml"), &ok, &defaults(None)).unwrap();
    let reads: Vec<(String, String)> = s.field_reads();
    assert_eq!(
        reads,
        [
            ("transcript", "audio_end_ms"),
            ("transcript", "item_id"),
            ("response.done", "item_id")
        ]
        .map(|(e, f)| (e.to_string(), f.to_string()))
    );
    let bad = format!("{NAMES}x = \"repeats(audio, item_id)\"\n");
    let e = errors(&bad, None);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with("s.toml:19:14: metric `x` reads fields of `audio`, an await's name"),
        "{e:?}"
    );
}
