//! The scripted interpreter as a sans-IO state machine: pacing, saturate rounds, awaits
//! with timeouts and `fail_on`, collecting awaits, turns that do not leak into each other
//! (an await sees only what arrives after it starts, or since its `since` mark), and
//! metric windows that follow the session's order and end with their turn.

use std::path::Path;

use super::*;
use crate::workload::Outbound;
use crate::workload::outcome::FailureKind;
use crate::workload::scripted::parse::{Defaults, parse};

fn script(steps: &str) -> Arc<Script> {
    let src =
        format!("[workload]\nkind = \"scripted\"\nfail_on = [{{ type = \"error\" }}]\n{steps}");
    let d = Defaults {
        pacing: PacingMode::Realtime,
        await_timeout: Duration::from_secs(5),
        timeout: Duration::from_secs(60),
        item_fields: Some(vec!["name".into()]),
    };
    let doc = crate::util::scenario_doc::ScenarioDoc::parse(Path::new("s.toml"), &src).unwrap();
    Arc::new(parse(&doc, &d).unwrap())
}

fn interp(s: Arc<Script>, pcm_ms: usize) -> Interp {
    let wanted: Arc<[String]> = s.wanted_types().into();
    let mut fields = BTreeMap::new();
    fields.insert("name".into(), Value::String("a".into()));
    let item = Item {
        pcm: Bytes::from(vec![0u8; pcm_ms * 32]),
        fields,
    };
    let vars = Vars {
        model: "m".into(),
        sample_index: 3,
        session_id: "rid-3".into(),
        sample_rate: 16_000,
    };
    Interp::new(s, Arc::new(item), vars, wanted)
}

/// The ms of each hit of event `name`.
fn times(rec: &Record, name: &str) -> Vec<f64> {
    rec.events
        .get(name)
        .map(|h| h.iter().map(|h| h.ms).collect())
        .unwrap_or_default()
}

fn texts(fx: &Effects) -> Vec<String> {
    fx.outbound
        .iter()
        .map(|o| match &o.msg {
            Outbound::Text(t) => t.to_string(),
            Outbound::Binary(b) => format!("<{} bytes>", b.len()),
        })
        .collect()
}

const TRANSCRIBE: &str = r#"
[[workload.steps]]
send = { type = "session.update", model = "${model}", id = "${session_id}-${item.name}" }
[[workload.steps]]
mark = "audio_start"
[[workload.steps]]
stream = { type = "input_audio_buffer.append", audio = "${chunk_b64}", i = "${chunk_index}" }
chunk_ms = 200
[[workload.steps]]
send = { type = "input_audio_buffer.commit", final = true }
[[workload.steps]]
mark = "final"
[[workload.steps]]
await = { type = "transcription.done" }
[workload.events]
"transcription.delta" = { type = "transcription.delta" }
[workload.metrics]
ttft_ms = "first(transcription.delta) - mark(audio_start)"
final_ms = "first(transcription.done) - mark(final)"
"#;

#[test]
fn realtime_stream_is_paced_on_an_absolute_schedule() {
    let mut it = interp(script(TRANSCRIBE), 500);
    let t0 = Instant::now();
    let mut fx = Effects::default();
    it.start(t0, &mut fx);
    let sent = texts(&fx);
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(
        sent[0],
        r#"{"id":"rid-3-a","model":"m","type":"session.update"}"#
    );
    assert!(sent[1].contains(r#""i":0"#) && sent[1].contains("input_audio_buffer.append"));
    assert_eq!(fx.outbound[1].intended, Some(t0));
    assert_eq!(fx.wake_at, Some(t0 + Duration::from_millis(200)));
    // A late wake sends the second chunk with its own intended time.
    let mut fx = Effects::default();
    it.wake(t0 + Duration::from_millis(230), &mut fx);
    assert_eq!(fx.outbound.len(), 1);
    assert_eq!(
        fx.outbound[0].intended,
        Some(t0 + Duration::from_millis(200))
    );
    let mut fx = Effects::default();
    it.wake(t0 + Duration::from_millis(400), &mut fx);
    assert_eq!(texts(&fx).len(), 1);
    assert_eq!(fx.wake_at, Some(t0 + Duration::from_millis(500)));
    // The commit is due when the audio ends (500 ms), not after the last chunk is sent.
    let mut fx = Effects::default();
    it.inbound(
        r#"{"type":"transcription.delta","delta":"hi"}"#,
        t0 + Duration::from_millis(450),
        &mut fx,
    );
    assert!(fx.outbound.is_empty());
    let mut fx = Effects::default();
    it.wake(t0 + Duration::from_millis(500), &mut fx);
    assert_eq!(
        texts(&fx),
        vec![r#"{"final":true,"type":"input_audio_buffer.commit"}"#]
    );
    let mut fx = Effects::default();
    it.inbound(
        r#"{"type":"transcription.done","text":"hi"}"#,
        t0 + Duration::from_millis(700),
        &mut fx,
    );
    assert!(matches!(fx.finish, Some(Ok(()))));
    let rec = it.record();
    assert_eq!(times(rec, "transcription.delta"), vec![450.0]);
    let marks: Vec<(&str, f64)> = rec.marks.iter().map(|m| (m.name.as_str(), m.ms)).collect();
    assert_eq!(marks, vec![("audio_start", 0.0), ("final", 500.0)]);
}

#[test]
fn saturate_sends_one_chunk_per_round_and_binary_frames() {
    let s =
        script("[[workload.steps]]\nstream = \"binary\"\npacing = \"saturate\"\nchunk_ms = 100\n");
    let mut it = interp(s, 250);
    let t0 = Instant::now();
    let mut fx = Effects::default();
    it.start(t0, &mut fx);
    assert_eq!(texts(&fx), vec!["<3200 bytes>"]);
    assert_eq!(fx.outbound[0].intended, None);
    assert_eq!(fx.wake_at, Some(t0));
    let mut n = 1;
    while fx.finish.is_none() {
        fx = Effects::default();
        it.wake(t0, &mut fx);
        n += fx.outbound.len();
    }
    assert_eq!(n, 3);
    assert!(matches!(fx.finish, Some(Ok(()))));
}

#[test]
fn await_times_out_and_fail_on_wins() {
    let s = script(
        "[[workload.steps]]\nsend = { type = \"go\" }\n[[workload.steps]]\nawait = { type = \"done\" }\ntimeout_s = 1\n",
    );
    let t0 = Instant::now();
    let mut it = interp(Arc::clone(&s), 0);
    let mut fx = Effects::default();
    it.start(t0, &mut fx);
    it.inbound(r#"{"type":"done"}"#, t0, &mut fx);
    assert!(matches!(fx.finish, Some(Ok(()))));
    let mut it = interp(Arc::clone(&s), 0);
    let mut fx = Effects::default();
    it.start(t0, &mut fx);
    it.wake(t0 + Duration::from_secs(1), &mut fx);
    let Some(Err(f)) = &fx.finish else {
        panic!("{:?}", fx.finish)
    };
    assert_eq!(f.kind, FailureKind::Timeout);
    let msg = &f.message;
    assert!(
        msg.contains("step 2: no message matching {type = \"done\"} within 1.0 s"),
        "{msg}"
    );
    let mut it = interp(s, 0);
    let mut fx = Effects::default();
    it.start(t0, &mut fx);
    it.inbound(
        r#"{"type":"error","error":"model not loaded","code":"x"}"#,
        t0,
        &mut fx,
    );
    let Some(Err(f)) = &fx.finish else {
        panic!("{:?}", fx.finish)
    };
    assert_eq!(
        (f.kind, f.message.as_str()),
        (
            FailureKind::ServerError,
            "server sent error: model not loaded"
        )
    );
}

#[test]
fn collecting_await_records_every_match_until_the_end_marker() {
    let s = script(
        "[[workload.steps]]\nrepeat = 2\n[[workload.steps.steps]]\nmark = \"turn\"\n[[workload.steps.steps]]\nsend = { type = \"response.create\", n = \"${turn}\" }\n[[workload.steps.steps]]\nawait = { type = \"delta\" }\nname = \"d\"\ncollect = true\nuntil = { type = \"response.done\" }\n[workload.metrics]\nfirst_ms = \"first(d) - mark(turn)\"\nn = \"count(d)\"\n",
    );
    let mut it = interp(s.clone(), 0);
    let t0 = Instant::now();
    let ms = |x: u64| t0 + Duration::from_millis(x);
    let mut fx = Effects::default();
    it.start(t0, &mut fx);
    for (t, m) in [
        (10, "delta"),
        (20, "delta"),
        (30, "response.done"),
        (40, "delta"),
        (50, "response.done"),
    ] {
        it.inbound(&format!(r#"{{"type":"{m}"}}"#), ms(t), &mut fx);
    }
    assert!(matches!(fx.finish, Some(Ok(()))));
    assert_eq!(texts(&fx)[1], r#"{"n":1,"type":"response.create"}"#);
    let rec = it.record().clone();
    assert_eq!(times(&rec, "d"), vec![10.0, 20.0, 40.0]);
    assert_eq!(s.metrics[0].expr.eval(&rec), vec![10.0, 10.0]);
    assert_eq!(s.metrics[1].expr.eval(&rec), vec![3.0]);
}

/// Issue 29: `first(done) - mark(sent)` in a 2-turn script, where turn 2's mark is taken
/// in the same instant turn 1's `response.done` ended its await. Each turn must get its
/// own value (100 and 150 ms), not one 0.00 ms value per session.
#[test]
fn each_turn_measures_its_own_done_not_the_one_that_ended_the_previous_turn() {
    let s = script(
        "[[workload.steps]]\nrepeat = 2\n[[workload.steps.steps]]\nmark = \"sent\"\n[[workload.steps.steps]]\nsend = { type = \"response.create\" }\n[[workload.steps.steps]]\nawait = { type = \"response.done\" }\n[workload.events]\ndone = { type = \"response.done\" }\n[workload.metrics]\nresponse_ms = \"first(done) - mark(sent)\"\n",
    );
    let mut it = interp(s.clone(), 0);
    let t0 = Instant::now();
    let ms = |x: u64| t0 + Duration::from_millis(x);
    let mut fx = Effects::default();
    it.start(t0, &mut fx);
    it.inbound(r#"{"type":"response.done"}"#, ms(100), &mut fx);
    it.inbound(r#"{"type":"response.done"}"#, ms(250), &mut fx);
    assert!(matches!(fx.finish, Some(Ok(()))));
    assert_eq!(texts(&fx).len(), 2);
    assert_eq!(s.metrics[0].eval(it.record()).values, vec![100.0, 150.0]);
}

/// Two turns of stream, `response.create`, and a collecting await. Turn 1's server also
/// sent a second response whose delta and `response.done` arrive while turn 2 streams.
const TWO_TURNS: &str = r#"
[[workload.steps]]
repeat = 2
[[workload.steps.steps]]
mark = "turn_start"
[[workload.steps.steps]]
stream = "binary"
chunk_ms = 100
[[workload.steps.steps]]
send = { type = "response.create" }
[[workload.steps.steps]]
mark = "rr"
[[workload.steps.steps]]
await = { type = "delta" }
name = "audio"
collect = true
until = { type = "response.done" }
[workload.events]
done = { type = "response.done" }
[workload.metrics]
first_audio_ms = "first(audio) - mark(rr)"
response_ms = "last(done) - mark(rr)"
"#;

#[test]
fn a_reply_left_over_from_turn_1_cannot_end_turn_2() {
    let s = script(TWO_TURNS);
    let mut it = interp(Arc::clone(&s), 100);
    let t0 = Instant::now();
    let ms = |x: u64| t0 + Duration::from_millis(x);
    let mut fx = Effects::default();
    it.start(t0, &mut fx);
    it.wake(ms(100), &mut fx);
    it.inbound(r#"{"type":"delta"}"#, ms(150), &mut fx);
    it.inbound(r#"{"type":"response.done"}"#, ms(200), &mut fx);
    // Turn 2 streams; the extra response of turn 1 arrives meanwhile.
    it.inbound(r#"{"type":"delta"}"#, ms(240), &mut fx);
    it.inbound(r#"{"type":"response.done"}"#, ms(250), &mut fx);
    let mut fx = Effects::default();
    it.wake(ms(300), &mut fx);
    assert_eq!(texts(&fx), vec![r#"{"type":"response.create"}"#]);
    assert!(fx.finish.is_none(), "turn 2 waits for its own reply");
    it.inbound(r#"{"type":"delta"}"#, ms(380), &mut fx);
    it.inbound(r#"{"type":"response.done"}"#, ms(400), &mut fx);
    assert!(matches!(fx.finish, Some(Ok(()))));
    let rec = it.record();
    assert_eq!(times(rec, "audio"), vec![150.0, 380.0]);
    let first = s.metrics[0].eval(rec);
    assert_eq!(first.values, vec![50.0, 80.0]);
    assert_eq!((first.measured, first.windows), (2, 2));
    // Turn 1's window ends with turn 1: the extra `done` at 250 is in no window.
    assert_eq!(s.metrics[1].eval(rec).values, vec![100.0, 100.0]);
}

#[test]
fn since_a_mark_an_await_sees_what_arrived_while_streaming() {
    let src = |since: &str| {
        format!(
            "[[workload.steps]]\nmark = \"turn_start\"\n[[workload.steps]]\nstream = \"binary\"\nchunk_ms = 100\n[[workload.steps]]\nawait = {{ type = \"reply\" }}\nname = \"r\"\ntimeout_s = 1\n{since}[workload.metrics]\nreply_ms = \"first(r) - mark(turn_start)\"\n"
        )
    };
    let t0 = Instant::now();
    let ms = |x: u64| t0 + Duration::from_millis(x);
    let run = |s: &Arc<Script>| {
        let mut it = interp(Arc::clone(s), 200);
        let mut fx = Effects::default();
        it.start(t0, &mut fx);
        it.inbound(r#"{"type":"reply","n":1}"#, ms(50), &mut fx);
        it.wake(ms(100), &mut fx);
        it.wake(ms(200), &mut fx);
        (it, fx)
    };
    let s = script(&src("since = \"turn_start\"\n"));
    let (it, fx) = run(&s);
    assert!(matches!(fx.finish, Some(Ok(()))), "{:?}", fx.finish);
    assert_eq!(s.metrics[0].eval(it.record()).values, vec![50.0]);
    // Without `since` the reply came before the await started: it waits, then times out.
    let s = script(&src(""));
    let (mut it, mut fx) = run(&s);
    assert!(fx.finish.is_none());
    it.wake(ms(1200), &mut fx);
    assert!(matches!(&fx.finish, Some(Err(f)) if f.kind == FailureKind::Timeout));
}

#[test]
fn since_collects_until_its_end_marker_and_ignores_what_came_before_the_mark() {
    let s = script(
        "[[workload.steps]]\nawait = { type = \"ready\" }\n[[workload.steps]]\nmark = \"m\"\n[[workload.steps]]\nstream = \"binary\"\nchunk_ms = 100\n[[workload.steps]]\nawait = { type = \"d\" }\nname = \"d\"\ncollect = true\nuntil = { type = \"end\" }\nsince = \"m\"\n",
    );
    let t0 = Instant::now();
    let ms = |x: u64| t0 + Duration::from_millis(x);
    let mut it = interp(s, 200);
    let mut fx = Effects::default();
    it.start(t0, &mut fx);
    it.inbound(r#"{"type":"d"}"#, ms(5), &mut fx);
    it.inbound(r#"{"type":"ready"}"#, ms(10), &mut fx);
    for (t, m) in [(20, "d"), (30, "d"), (40, "end"), (50, "d")] {
        it.inbound(&format!(r#"{{"type":"{m}"}}"#), ms(t), &mut fx);
    }
    it.wake(ms(110), &mut fx);
    it.wake(ms(210), &mut fx);
    assert!(matches!(fx.finish, Some(Ok(()))), "{:?}", fx.finish);
    assert_eq!(times(it.record(), "d"), vec![20.0, 30.0]);
}

#[test]
fn a_field_reading_carries_the_audio_cursor_when_it_arrived() {
    let steps = TRANSCRIBE.replace(
        "[workload.metrics]",
        "[workload.metrics]\nlag_ms = \"lag(transcription.delta, audio_end_ms)\"\n",
    );
    let mut it = interp(script(&steps), 500);
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    it.start(t0, &mut Effects::default());
    let delta = |end: u64| format!(r#"{{"type":"transcription.delta","audio_end_ms":{end}}}"#);
    // At 150 ms one 200 ms chunk was sent (its wake at 200 ms has not come yet).
    it.inbound(&delta(100), at(150), &mut Effects::default());
    // At 210 ms the second chunk was due at 200 ms: counted even before its wake runs.
    it.inbound(&delta(200), at(210), &mut Effects::default());
    it.wake(at(400), &mut Effects::default());
    // After the stream (500 ms of audio): the whole item; a reading without the field is
    // not one.
    it.wake(at(500), &mut Effects::default());
    it.inbound(&delta(450), at(600), &mut Effects::default());
    it.inbound(
        r#"{"type":"transcription.delta","delta":"x"}"#,
        at(610),
        &mut Effects::default(),
    );
    let r = &it.record().readings[&("transcription.delta".into(), "audio_end_ms".into())];
    let got: Vec<(f64, f64)> = r.iter().map(|r| (r.audio_ms, r.value)).collect();
    assert_eq!(got, vec![(200.0, 100.0), (400.0, 200.0), (500.0, 450.0)]);
    let s = script(&steps);
    let m = s.metrics.iter().find(|m| m.name == "lag_ms").unwrap();
    assert_eq!(m.eval(it.record()).values, vec![100.0, 200.0, 50.0]);
}
