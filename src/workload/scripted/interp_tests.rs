//! The scripted interpreter as a sans-IO state machine: pacing, saturate rounds, awaits
//! with timeouts and `fail_on`, collecting awaits.

use std::path::Path;

use super::*;
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
    Arc::new(parse(Path::new("s.toml"), &src, &d).unwrap())
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
    assert_eq!(rec.events["transcription.delta"], vec![450.0]);
    assert_eq!(
        rec.marks,
        vec![("audio_start".into(), 0.0), ("final".into(), 500.0)]
    );
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
fn await_sees_early_replies_times_out_and_fail_on_wins() {
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
    assert_eq!(rec.events["d"], vec![10.0, 20.0, 40.0]);
    assert_eq!(s.metrics[0].expr.eval(&rec), vec![10.0, 10.0]);
    assert_eq!(s.metrics[1].expr.eval(&rec), vec![3.0]);
}
