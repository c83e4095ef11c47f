//! The realtime-transcription workload end to end: against an independent test server
//! (wire sequence, pacing and metrics checked against what that server saw), against
//! the embedded server (shipped scenario, thresholds, every fault switch).

use std::path::Path;
use std::time::Duration;

use base64::Engine as _;
use serde_json::Value;

use crate::support::{Fixture, failure_messages, rtload};
use crate::transcription_server::{DONE_DELAY, TestServer};

/// One second of 8 kHz audio (resampled to 16 kHz by the client: 5 appends of 200 ms).
fn write_wav_8k(path: &Path) {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 8_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(path, spec).unwrap();
    for i in 0..8_000i32 {
        w.write_sample(((i % 80) * 100 - 4000) as i16).unwrap();
    }
    w.finalize().unwrap();
}

fn fixture(target: &str, workload: &str, extra: &str) -> Fixture {
    let fx = Fixture::new("");
    let data = fx.dir.path().join("audio");
    std::fs::create_dir_all(&data).unwrap();
    write_wav_8k(&data.join("one.wav"));
    // The test server says word0 … word4, one per append; one deliberate miss.
    std::fs::write(data.join("one.txt"), "Word0, word1 word2 word3 wordX.").unwrap();
    let toml = format!(
        "name = \"t\"\n{target}\n[workload]\nkind = \"realtime-transcription\"\nmodel = \"m\"\n\
         dataset_path = \"audio\"\ncreated_timeout_s = 30.0\ndone_timeout_s = 30.0\n{workload}\n\
         [load]\nsamples = 1\n{extra}"
    );
    std::fs::write(&fx.path, toml).unwrap();
    fx
}

#[test]
fn against_an_independent_server_wire_pacing_and_metrics_match() {
    let server = TestServer::start();
    let fx = fixture(
        &format!("[target]\nurl = \"ws://{}/v1/realtime\"", server.addr),
        "",
        "",
    );
    let s = fx.run();
    assert!(s.passed(), "{:?}", failure_messages(&s));
    let conns = server.connections();
    assert_eq!(conns.len(), 1);
    let inbound: Vec<_> = conns[0].iter().filter(|m| !m.outbound).collect();
    let kinds: Vec<String> = inbound
        .iter()
        .map(|m| {
            let t = m.msg["type"].as_str().unwrap_or("?").to_owned();
            match m.msg.get("final") {
                Some(f) => format!("{t}:{f}"),
                None => t,
            }
        })
        .collect();
    let mut want = vec![
        "session.update".to_owned(),
        "input_audio_buffer.commit:false".to_owned(),
    ];
    want.extend(std::iter::repeat_n(
        "input_audio_buffer.append".to_owned(),
        5,
    ));
    want.push("input_audio_buffer.commit:true".to_owned());
    assert_eq!(kinds, want);
    assert_eq!(inbound[0].msg["model"], "m");
    // Every append is 200 ms of 16 kHz PCM16: 3,200 samples.
    let appends: Vec<_> = inbound[2..7].iter().collect();
    for a in &appends {
        let b64 = a.msg["audio"].as_str().unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        assert_eq!(bytes.len(), 6400);
    }
    // Pacing, on the server's stamps. The client's schedule starts when it receives
    // `session.created`, which is after this server sent it: so append k can never
    // arrive before `created + k * 200 ms` (no tolerance needed), and a generous upper
    // bound catches a stalled sender without timing the machine.
    assert_eq!(conns[0][0].msg["type"], "session.created");
    let created = conns[0][0].at;
    for (k, a) in appends.iter().enumerate() {
        let since = a.at.duration_since(created);
        let due = Duration::from_millis(200 * k as u64);
        assert!(since >= due, "append {k} at {since:?}, due {due:?}");
        assert!(
            since < due + Duration::from_secs(5),
            "append {k} at {since:?}"
        );
    }
    let commit = inbound[7].at.duration_since(created);
    assert!(commit >= Duration::from_millis(1000), "{commit:?}");

    // Metrics against what the server saw.
    let json = s.report.to_json();
    let file = &json["files"][0];
    let outbound: Vec<_> = conns[0].iter().filter(|m| m.outbound).collect();
    let deltas: Vec<_> = outbound
        .iter()
        .filter(|m| m.msg["type"] == "transcription.delta")
        .collect();
    let done = outbound
        .iter()
        .find(|m| m.msg["type"] == "transcription.done")
        .unwrap();
    assert_eq!(file["deltas"], deltas.len());
    assert_eq!(file["text"], done.msg["text"]);
    assert_eq!(
        file["usage"]["total_tokens"],
        done.msg["usage"]["total_tokens"]
    );
    assert_eq!(json["tokens"]["prompt_tokens"], 5.0);
    // The client's numbers bracket the server's: the client's clock starts no later
    // than the server's receipt and stops no earlier than the server's send.
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let server_ttft = ms(deltas[0].at.duration_since(appends[0].at));
    let ttft = file["ttft_ms"].as_f64().unwrap();
    assert!(
        ttft + 1.0 >= server_ttft,
        "client {ttft} < server {server_ttft}"
    );
    assert!(
        ttft < server_ttft + 1000.0,
        "client {ttft}, server {server_ttft}"
    );
    let server_fin = ms(done.at.duration_since(inbound[7].at));
    let fin = file["finalization_ms"].as_f64().unwrap();
    assert!(server_fin >= ms(DONE_DELAY) - 1.0);
    assert!(
        fin + 1.0 >= server_fin,
        "client {fin} < server {server_fin}"
    );
    assert!(
        fin < server_fin + 1000.0,
        "client {fin}, server {server_fin}"
    );
    // 1 of 5 reference words differs (punctuation and case do not count).
    assert!((file["wer"].as_f64().unwrap() - 0.2).abs() < 1e-9, "{file}");
    assert!((json["wer"].as_f64().unwrap() - 0.2).abs() < 1e-9);
    for key in [
        "ttft_ms",
        "finalization_ms",
        "itl_ms",
        "rtf",
        "streaming_lag_ms",
    ] {
        assert!(
            json[key]["count"].as_u64().is_some(),
            "{key}: {}",
            json[key]
        );
    }
    assert_eq!(json["itl_ms"]["count"], 4);
    let m = s.report.metrics();
    assert_eq!(m["completed"], 1.0);
    assert!(m["rtf.mean"] > 0.0);
}

#[test]
fn saturate_sends_everything_without_waiting() {
    let server = TestServer::start();
    let fx = fixture(
        &format!("[target]\nurl = \"ws://{}/v1/realtime\"", server.addr),
        "pacing = \"saturate\"",
        "",
    );
    let s = fx.run();
    assert!(s.passed(), "{:?}", failure_messages(&s));
    let conns = server.connections();
    let n = conns[0]
        .iter()
        .filter(|m| !m.outbound && m.msg["type"] == "input_audio_buffer.append")
        .count();
    assert_eq!(n, 5);
    assert_eq!(s.report.to_json()["pacing"], "saturate");
}

/// A scenario on the embedded server with the shipped synthetic set.
fn embedded(samples: usize, extra: &str) -> Fixture {
    let fx = Fixture::new("");
    let data = fx.dir.path().join("synth");
    crate::support::synth_dataset(
        "transcription",
        &data,
        &rtload::dataset::SynthOptions {
            files: 2,
            words: 3,
            ..crate::support::synth_defaults()
        },
    );
    let toml = format!(
        "name = \"t\"\n[workload]\nkind = \"realtime-transcription\"\ndataset_path = \"synth\"\n\
         pacing = \"4x\"\ndone_timeout_s = 2.0\n[load]\nsamples = {samples}\nmax_concurrency = {samples}\n\
         [server.transcription]\nlatency_ms = 10\nfinal_delay_ms = 10\n{extra}"
    );
    std::fs::write(&fx.path, toml).unwrap();
    fx
}

#[test]
fn embedded_server_transcribes_the_synthetic_set_exactly() {
    let s = embedded(2, "").run();
    assert!(s.passed(), "{:?}", failure_messages(&s));
    let json = s.report.to_json();
    assert_eq!(json["wer"], 0.0);
    for f in json["files"].as_array().unwrap() {
        assert_eq!(f["ok"], true);
        assert_eq!(f["wer"], 0.0, "{f}");
        assert_eq!(f["deltas"], 3);
    }
}

#[track_caller]
fn fault_message(fault: &str) -> String {
    let fx = embedded(
        2,
        &format!("[server.transcription.faults]\nonly_sessions = [1]\n{fault}"),
    );
    let s = fx.run();
    let msgs = failure_messages(&s);
    assert_eq!(msgs.len(), 1, "exactly one session fails: {msgs:?}");
    assert_eq!(s.report.metrics()["completed"], 1.0);
    msgs.into_iter().next().unwrap()
}

#[test]
fn each_fault_switch_fails_its_session_with_the_right_message() {
    let m = fault_message("error_after_deltas = 1\nerror_message = \"GPU fell over\"");
    assert!(m.starts_with("server error processing_error"), "{m}");
    assert!(m.ends_with(": GPU fell over"), "{m}");
    let m = fault_message("no_done = true");
    assert_eq!(m, "no transcription.done within 2 s of the final commit");
    let m = fault_message("close_after_deltas = 1");
    assert!(
        m.starts_with("the server closed the WebSocket before transcription.done"),
        "{m}"
    );
    let m = fault_message("garbage_after_deltas = 2");
    assert!(m.starts_with("invalid JSON from the server"), "{m}");
}

#[test]
fn shipped_scenario_runs_and_a_threshold_gates_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.json");
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/transcription.toml");
    let run = rtload()
        .arg("run")
        .arg(&scenario)
        .args(["--quiet", "--output-json"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    let json: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert!(json["ttft_ms"]["mean"].as_f64().is_some(), "{json}");
    assert!(json["finalization_ms"]["mean"].as_f64().is_some());
    assert_eq!(json["wer"], 0.0);
    let html = dir.path().join("t.html");
    let report = rtload()
        .arg("report")
        .arg(&out)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    assert_eq!(
        report.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("data-chart=\"dist-ttft_ms\""));

    let fx = embedded(1, "");
    let mut toml = std::fs::read_to_string(&fx.path).unwrap();
    toml.push_str("\n[thresholds]\n\"ttft_ms.p99\" = \"< 0.001\"\n");
    std::fs::write(&fx.path, toml).unwrap();
    let run = rtload()
        .arg("run")
        .arg(&fx.path)
        .arg("--quiet")
        .output()
        .unwrap();
    assert_eq!(
        run.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn dataset_synth_kind_transcription_writes_a_set_the_workload_reads() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("set");
    let run = rtload()
        .args([
            "dataset",
            "synth",
            "--kind",
            "transcription",
            "--files",
            "2",
            "--words",
            "3",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // What the workload reads from a directory: audio files, each with its reference
    // transcript beside it (`a.wav` + `a.txt`), checked here without its reader.
    let mut wavs: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wav"))
        .collect();
    wavs.sort();
    assert_eq!(wavs.len(), 2, "{wavs:?}");
    for wav in &wavs {
        let reference = std::fs::read_to_string(wav.with_extension("txt")).unwrap();
        assert!(!reference.trim().is_empty(), "{}", wav.display());
    }
}

/// `rtload serve`'s transcription endpoint as vLLM 0.34 serves it, seen by vLLM's own
/// realtime client example (its messages, run twice on one connection): two utterances
/// on one connection each get their transcript, audio before `session.update` is queued (no
/// error), and an empty append and a `session.update` without a model get vLLM's codes
/// and texts.
#[test]
fn two_utterances_on_one_connection_as_vllm_serves_them() {
    let dir = tempfile::tempdir().unwrap();
    crate::support::synth_dataset(
        "transcription",
        dir.path(),
        &crate::support::synth_defaults(),
    );
    let (mut server, addr) = crate::support::serve(&[], "ws");
    let client =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/py/vllm_realtime_two_utterances.py");
    let wav = |i: usize| dir.path().join(format!("utt_{i:03}.wav"));
    let out = std::process::Command::new(crate::support::python())
        .arg(&client)
        .arg(format!("ws://{addr}/v1/realtime"))
        .args([wav(0), wav(1)])
        .output()
        .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    for (i, u) in v["utterances"].as_array().unwrap().iter().enumerate() {
        let want = std::fs::read_to_string(dir.path().join(format!("utt_{i:03}.txt"))).unwrap();
        let want = want.trim().trim_end_matches('.').to_lowercase();
        assert_eq!(u["text"], want.as_str(), "utterance {i}: {v}");
    }
    assert_eq!(v["utterances"].as_array().map(Vec::len), Some(2), "{v}");
    let errors = &v["errors"];
    assert_eq!(errors["append_before_update"], Value::Null, "{v}");
    assert_eq!(
        errors["update_without_model"],
        serde_json::json!(["invalid_event", "Missing required field: model"])
    );
    assert_eq!(
        errors["empty_audio"],
        serde_json::json!(["invalid_audio", "Invalid audio data"])
    );
}
