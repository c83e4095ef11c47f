//! Barge-in end to end: OmniInteract sessions interrupt the agent's reply against the
//! embedded server set to react in 150 ms, and the result says so — stop latency from
//! the onset, the reply's audio after the onset (checked against the session's own event
//! log), what the listener heard, and the answer's latency — in the JSON, the flat
//! metrics and the terminal block alike.

use serde_json::Value;

use crate::duplex_support::{Opts, case_dirs, duplex, out_dir, require_ffmpeg};
use crate::support::{failure_messages, sample_rows};

const REACTION_MS: f64 = 150.0;
/// How much later than its trigger a busy server loop may write `speech_started`.
const WRITE_SLACK_MS: f64 = 50.0;

/// Audio of one delta of the server below (200 ms).
const DELTA_MS: f64 = 200.0;

fn barge_run() -> (rtload::RunSummary, crate::support::Fixture) {
    require_ffmpeg();
    let fx = duplex(&Opts {
        // 2 s: every synthesized case has voice to interrupt with (one is quiet for its
        // first second).
        duration_ms: 2000,
        samples: 3,
        max_concurrency: 3,
        workload: "barge_in_after_ms = 200\nbarge_in_after_max_ms = 600\nbarge_in_speech_ms = 600\n",
        // One reply (created once 2.2 s of input arrived: after the question), 4 s of
        // audio sent at RTF 0.5: still sending when the interruption comes.
        server: "respond_every_s = 2.2\naudio_deltas = 20\ndelta_ms = 200\nrtf = 0.5\n\
                 first_response_delay_ms = 50\nfinal_decision = \"listen\"\n\
                 [server.duplex.vad]\nbarge_in_reaction_ms = 150\n",
        ..Opts::default()
    });
    let summary = fx.run();
    (summary, fx)
}

#[test]
fn a_barge_in_is_stopped_after_the_servers_reaction_and_answered() {
    let (summary, fx) = barge_run();
    assert!(
        summary.passed(),
        "{:?} {:?}",
        failure_messages(&summary),
        summary.verdicts
    );
    let rows = sample_rows(&summary);
    assert_eq!(rows.len(), 3);
    let mut stops = Vec::new();
    for row in &rows {
        let b = &row["barge_in"];
        let after = b["after_ms"].as_f64().unwrap();
        assert!((200.0..=600.0).contains(&after), "{b}");
        let offset = b["offset_ms"].as_f64().expect("an onset");
        assert!(
            offset >= after && offset < after + 200.0 + 1.0,
            "on the grid: {b}"
        );
        assert_eq!(b["stop_by"], "cleared", "{b}");
        let stop = b["stop_ms"].as_f64().unwrap();
        // Never before the reaction: the clear leaves the server 150 ms after the onset
        // append arrived, which is after its intended send time.
        assert!(stop >= REACTION_MS - 0.001, "{b}");
        assert!(stop < REACTION_MS + 100.0, "{b}");
        stops.push(stop);
        // The playback clock plays the reply without a gap (audio arrives at 2x), so
        // what the listener heard after the onset is exactly the time until the clear.
        let heard = b["heard_after_onset_ms"].as_f64().unwrap();
        assert!((heard - stop).abs() < 0.05, "to a sample at 24 kHz: {b}");
        // The answer: created at the clear, its first audio 50 ms later at the earliest.
        let answer = b["answer_ms"].as_f64().unwrap();
        assert!(
            answer >= REACTION_MS + 50.0 - 0.001 && answer < stop + 300.0,
            "{b}"
        );
        // The server's speech detector answered the onset append at once. The gap from
        // there to the clear is the server's reaction by its own stamps (checked below
        // from the event log); by this client's receipts it can read a little under it
        // when the reader took one of the two late.
        let started = b["speech_started_ms"].as_f64().unwrap();
        assert!(started >= 0.0 && started < stop, "{b}");
    }
    stops.sort_by(f64::total_cmp);

    // The reply's audio after the onset, recomputed from each case's event log.
    for (row, case) in rows.iter().zip(ordered_cases(&fx, &rows)) {
        let b = &row["barge_in"];
        let rid = b["response_id"].as_str().unwrap();
        let events = case.events();
        let first = first_audio_s(&events, rid);
        let onset = first + b["offset_ms"].as_f64().unwrap() / 1000.0;
        let after: f64 = (events.iter())
            .filter(|e| is_audio_of(e, rid) && received(e) >= onset - 1e-6)
            .map(|e| e["audio_bytes"].as_f64().unwrap() / 48.0)
            .sum();
        // The stop is the clear's receipt, and the server sent that clear about 150 ms
        // after it sent speech_started (its own stamps). The reaction counts from the
        // append's receipt and speech_started is written after it, so on a busy machine
        // the two sends can be closer by that write's delay (up to WRITE_SLACK_MS); no
        // reaction at all would put them ~0 ms apart.
        let of = |t: &str| {
            events
                .iter()
                .find(|e| e["type"] == t)
                .unwrap_or_else(|| panic!("{t}"))
        };
        let cleared = of("output_audio_buffer.cleared");
        let stop_s = onset + b["stop_ms"].as_f64().unwrap() / 1000.0;
        assert!((received(cleared) - stop_s).abs() < 1e-5, "{b}");
        let sent = |e: &Value| e["server_sent_at_s"].as_f64().unwrap();
        let started = (events.iter())
            .filter(|e| e["type"] == "input_audio_buffer.speech_started")
            .map(sent)
            .filter(|t| *t <= sent(cleared))
            .fold(f64::NAN, f64::max);
        assert!(
            sent(cleared) - started >= (REACTION_MS - WRITE_SLACK_MS) / 1000.0,
            "{b}: cleared sent {} s after speech_started",
            sent(cleared) - started
        );
        let got = b["audio_after_onset_ms"].as_f64().unwrap();
        assert!((got - after).abs() < 0.01, "{got} vs {after} from the log");
        assert!(got >= DELTA_MS, "at least one delta was in flight: {b}");
    }

    // One source: the flat metrics and the terminal block carry the same values.
    let flat = summary.report.to_json()["rtload"]["metrics"].clone();
    let max_stop = stops.last().copied().unwrap();
    assert!((flat["barge_in_stop_ms.max"].as_f64().unwrap() - max_stop).abs() < 1e-9);
    assert_eq!(flat["barge_in_stop_ms.count"].as_f64(), Some(3.0));
    let text = summary.report.render_text();
    assert!(
        text.contains("Barge-in") && text.contains("Replies stopped:"),
        "{text}"
    );
}

fn received(e: &Value) -> f64 {
    e["_client_received_at_s"].as_f64().unwrap()
}

fn is_audio_of(e: &Value, rid: &str) -> bool {
    e["type"]
        .as_str()
        .is_some_and(|t| t.ends_with("audio.delta"))
        && e["response_id"] == rid
}

fn first_audio_s(events: &[Value], rid: &str) -> f64 {
    events
        .iter()
        .find(|e| is_audio_of(e, rid))
        .map(received)
        .expect("the reply's audio")
}

/// The case bundles in the order of `rows` (matched by case label).
fn ordered_cases(
    fx: &crate::support::Fixture,
    rows: &[Value],
) -> Vec<crate::duplex_support::CaseDir> {
    let mut cases = case_dirs(&out_dir(fx));
    rows.iter()
        .map(|r| {
            // `<subset>/<video_rel>` → `<subset>/<video_rel, extension off, / as __>--<hash8>`.
            let label = r["case"].as_str().unwrap();
            let (subset, rel) = label.split_once('/').unwrap();
            let stem = rel
                .rsplit_once('.')
                .map_or(rel, |(s, _)| s)
                .replace('/', "__");
            let i = (cases.iter())
                .position(|c| {
                    let name = c.path.file_name().unwrap().to_string_lossy();
                    c.path.parent().unwrap().ends_with(subset)
                        && name.starts_with(&format!("{stem}--"))
                })
                .unwrap_or_else(|| panic!("no bundle for {label}"));
            cases.remove(i)
        })
        .collect()
}

/// The same measurement through the shipped OpenAI-style scripted scenario against its
/// embedded rules (cancel 150 ms after speech starts over a streaming response; answer
/// 200 ms after the commit): every session is interrupted and answered, never faster
/// than the rules allow, and the answer's latency is the configured one plus transit.
#[test]
fn the_scripted_openai_style_barge_in_measures_the_rules_reaction() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let (code, doc, err) = crate::support::run_json(
        &root.join("scenarios/openai-realtime-barge-in.toml"),
        &["--quiet"],
        &dir.path().join("r.json"),
    );
    assert_eq!(code, Some(0), "{err}");
    let m = &doc["rtload"]["metrics"];
    let v = |k: &str| m[k].as_f64().unwrap_or_else(|| panic!("{k} in {m}"));
    assert_eq!(v("stop_ms.count"), 3.0, "{m}");
    assert!(v("stop_ms.min") >= REACTION_MS - 0.001, "{m}");
    assert!(v("stop_ms.max") < REACTION_MS + 100.0, "{m}");
    assert!(v("speech_started_ms.max") < v("stop_ms.min"), "{m}");
    assert!(
        v("answer_ms.min") >= 200.0 - 0.001 && v("answer_ms.max") < 400.0,
        "{m}"
    );
}
