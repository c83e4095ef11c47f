//! Issue 7: the shipped `scripted-transcription.toml` is the built-in
//! `realtime-transcription` workload written as a script. Both run against the same
//! independent vLLM-protocol test server: they must put the same message sequence (and
//! the same append sizes) on the wire, and their TTFT and finalization must agree with
//! that server's own stamps — so with each other — within the same bounds.

use std::time::Duration;

use crate::support::{Fixture, failure_messages};
use crate::transcription_server::TestServer;

/// One second of 16 kHz mono PCM16 (5 appends of 200 ms) with a reference transcript.
fn write_audio(dir: &std::path::Path) {
    std::fs::create_dir_all(dir).unwrap();
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(dir.join("one.wav"), spec).unwrap();
    for i in 0..16_000i32 {
        w.write_sample(((i % 160) * 50 - 4000) as i16).unwrap();
    }
    w.finalize().unwrap();
    std::fs::write(dir.join("one.txt"), "word0 word1 word2 word3 word4").unwrap();
}

/// The wire as the server saw it: inbound `type[:final]` in order, the append sizes (in
/// base64 characters), and (server TTFT, server finalization) in ms.
fn wire(server: &TestServer) -> (Vec<String>, Vec<usize>, f64, f64) {
    let conns = server.connections();
    assert_eq!(conns.len(), 1);
    let c = &conns[0];
    let inbound: Vec<_> = c.iter().filter(|m| !m.outbound).collect();
    let kinds = inbound
        .iter()
        .map(|m| {
            let t = m.msg["type"].as_str().unwrap_or("?").to_owned();
            match m.msg.get("final") {
                Some(f) => format!("{t}:{f}"),
                None => t,
            }
        })
        .collect();
    let appends: Vec<_> = inbound
        .iter()
        .filter(|m| m.msg["type"] == "input_audio_buffer.append")
        .collect();
    let sizes = appends
        .iter()
        .map(|m| m.msg["audio"].as_str().map_or(0, str::len))
        .collect();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let first_delta = c
        .iter()
        .find(|m| m.outbound && m.msg["type"] == "transcription.delta")
        .unwrap();
    let done = c
        .iter()
        .find(|m| m.outbound && m.msg["type"] == "transcription.done")
        .unwrap();
    let final_commit = inbound.last().unwrap();
    (
        kinds,
        sizes,
        ms(first_delta.at.duration_since(appends[0].at)),
        ms(done.at.duration_since(final_commit.at)),
    )
}

/// The client's figure brackets the server's: its clock starts no later than the
/// server's receipt and stops no earlier than the server's send (1 ms of rounding), and a
/// generous bound catches a wrong anchor without timing the machine.
#[track_caller]
fn brackets(what: &str, client: f64, server: f64) {
    assert!(
        client + 1.0 >= server,
        "{what}: client {client} < server {server}"
    );
    assert!(
        client < server + 1000.0,
        "{what}: client {client}, server {server}"
    );
}

#[test]
fn scripted_transcription_matches_the_built_in_workload_on_the_wire_and_in_its_figures() {
    // The built-in workload.
    let builtin = TestServer::start();
    let fx = Fixture::new("");
    write_audio(&fx.dir.path().join("audio"));
    std::fs::write(
        &fx.path,
        format!(
            "name = \"builtin\"\n[target]\nurl = \"ws://{}/v1/realtime\"\n[workload]\n\
             kind = \"realtime-transcription\"\nmodel = \"m\"\ndataset_path = \"audio\"\n\
             created_timeout_s = 30.0\ndone_timeout_s = 30.0\n[load]\nsamples = 1\n",
            builtin.addr
        ),
    )
    .unwrap();
    let b = fx.run();
    assert!(b.passed(), "{:?}", failure_messages(&b));
    let (b_kinds, b_sizes, b_srv_ttft, b_srv_fin) = wire(&builtin);
    let bj = b.report.to_json();
    brackets(
        "built-in ttft",
        bj["files"][0]["ttft_ms"].as_f64().unwrap(),
        b_srv_ttft,
    );
    brackets(
        "built-in finalization",
        bj["files"][0]["finalization_ms"].as_f64().unwrap(),
        b_srv_fin,
    );

    // The shipped script, aimed at the same kind of server, on the same audio.
    let scripted = TestServer::start();
    let shipped = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/scripted-transcription.toml"
    ))
    .unwrap();
    let body = shipped
        .split("\n[load]")
        .next()
        .unwrap()
        .replace("dataset = \"data/speech.jsonl\"", "dataset = \"audio\"");
    let sfx = Fixture::new("");
    write_audio(&sfx.dir.path().join("audio"));
    std::fs::write(
        &sfx.path,
        format!(
            "{body}\n[target]\nurl = \"ws://{}/v1/realtime\"\n[load]\nsamples = 1\n",
            scripted.addr
        ),
    )
    .unwrap();
    let s = sfx.run();
    assert!(s.passed(), "{:?}", failure_messages(&s));
    let (s_kinds, s_sizes, s_srv_ttft, s_srv_fin) = wire(&scripted);

    assert_eq!(s_kinds, b_kinds, "the same message sequence");
    assert_eq!(s_sizes, b_sizes, "the same appends");
    let m = s.report.metrics();
    brackets("scripted ttft", m["ttft_ms.p50"], s_srv_ttft);
    brackets("scripted finalization", m["finalization_ms.p50"], s_srv_fin);
}
