//! Wire truth, against a server rtload did not write ([`crate::raw_server`]: raw tokio
//! sockets, delayed ACK on, its own stamps): for every workload kind, the first
//! messages of a session reach the server within [`ON_TIME`] of when rtload meant to send
//! them, and every latency rtload reports agrees with the same interval on the server's
//! stamps within [`AGREE`]. Without `TCP_NODELAY` on rtload's sockets a small message
//! sent right after another waits ~40 ms for the server's delayed ACK, and these fail.
//!
//! rtload runs in-process, so both sides read the same monotonic clock. No sleeps: every
//! wait is the session's own.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::raw_server::{Conn, RawServer, Script, Seen};
use crate::support::{Fixture, failure_messages};

/// How late a first message may reach the server (the issue saw 39–48 ms).
const ON_TIME: f64 = 5.0;
/// How far a reported latency may be from the server's own interval, ms.
const AGREE: f64 = 2.0;
/// Sessions per test, one after another. The machine is shared and busy, so a session
/// may be disturbed by a few ms; every check must hold together in one of them. Without
/// `TCP_NODELAY` none can: the delayed ACK holds every session's messages ≥ 40 ms.
const SESSIONS: usize = 3;
/// Whole runs [`until_one_holds`] tries.
const ATTEMPTS: usize = 3;

/// The wire tests one at a time: their own sessions do not compete for the cores.
pub static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn ms(from: Instant, to: Instant) -> f64 {
    to.saturating_duration_since(from).as_secs_f64() * 1000.0
        - from.saturating_duration_since(to).as_secs_f64() * 1000.0
}

/// The checks of each session: what held and what did not.
#[derive(Default)]
pub struct Checks {
    /// Per session, each check's verdict line and whether it held.
    sessions: Vec<Vec<(String, bool)>>,
}

impl Checks {
    /// Starts the next session's checks.
    pub fn session(&mut self) {
        self.sessions.push(Vec::new());
    }

    fn note(&mut self, line: String, held: bool) {
        self.sessions
            .last_mut()
            .expect("a session")
            .push((line, held));
    }

    /// `what` was due at `due` and reached the server at `arrived`: within [`ON_TIME`],
    /// and never before (the client's clock starts at a message the server sent).
    pub fn on_time(&mut self, what: &str, due: Instant, arrived: Instant) {
        let late = ms(due, arrived);
        let held = (-0.5..=ON_TIME).contains(&late);
        self.note(format!("{what}: {late:.2} ms after it was due"), held);
    }

    /// rtload reported `reported` ms where the server's stamps say `server`.
    pub fn agrees(&mut self, what: &str, reported: f64, server: f64) {
        let held = (reported - server).abs() <= AGREE;
        self.note(
            format!("{what}: rtload {reported:.3} ms, server {server:.3} ms"),
            held,
        );
    }

    /// Some session passed every check; otherwise each session's lines, as the error.
    pub fn verdict(self) -> Result<(), String> {
        if (self.sessions.iter()).any(|s| s.iter().all(|(_, held)| *held)) {
            return Ok(());
        }
        let shown: Vec<String> = (self.sessions.iter().enumerate())
            .map(|(i, s)| {
                let lines: Vec<String> = (s.iter())
                    .map(|(l, held)| format!("  {} {l}", if *held { "ok  " } else { "FAIL" }))
                    .collect();
                format!("session {i}:\n{}", lines.join("\n"))
            })
            .collect();
        Err(shown.join("\n"))
    }

    /// Some session passed every check (each session's lines are shown otherwise).
    #[track_caller]
    pub fn assert(self) {
        if let Err(shown) = self.verdict() {
            panic!(
                "no session had every message on time (≤ {ON_TIME} ms) and every latency \
                 agreeing with the server's stamps (±{AGREE} ms):\n{shown}"
            );
        }
    }
}

/// Runs `attempt` (a fresh server and run each time) until one of [`ATTEMPTS`] has a
/// session that passes every check. On a shared 2-core machine under the full suite, a
/// descheduled reader can make all three sessions of one run a few ms late (CI, stop
/// 42: one 19 ms, two 5-6 ms); without `TCP_NODELAY` every attempt fails by ≥ 40 ms.
/// What is not timing (the run passing, counts, message contents) is asserted inside
/// every attempt.
#[track_caller]
pub fn until_one_holds(attempt: impl Fn() -> Checks) {
    let mut misses = Vec::new();
    for k in 0..ATTEMPTS {
        match attempt().verdict() {
            Ok(()) => return,
            Err(shown) => misses.push(format!("attempt {k}:\n{shown}")),
        }
    }
    panic!(
        "no attempt had a session with every message on time (≤ {ON_TIME} ms) and every \
         latency agreeing with the server's stamps (±{AGREE} ms):\n{}",
        misses.join("\n")
    );
}

/// The run's connections, one per session, in order.
fn conns(server: &RawServer) -> Vec<Conn> {
    let conns = server.connections();
    assert_eq!(conns.len(), SESSIONS, "one connection per session");
    conns
}

/// The first message of `msgs` whose `type` is `t` (and `final` is `fin`, when given).
fn find<'a>(msgs: &[&'a Seen], t: &str, fin: Option<bool>) -> &'a Seen {
    msgs.iter()
        .copied()
        .find(|m| m.msg["type"] == t && fin.is_none_or(|f| (m.msg["final"] == true) == f))
        .unwrap_or_else(|| panic!("no {t} (final {fin:?}) in {msgs:?}"))
}

/// The numbers under `key` of each session, in order.
fn per_session(rows: &serde_json::Value, key: &str) -> Vec<f64> {
    let v: Vec<f64> = (rows.as_array().into_iter().flatten())
        .map(|r| {
            r.pointer(key)
                .and_then(serde_json::Value::as_f64)
                .unwrap_or_else(|| panic!("no {key} in {r}"))
        })
        .collect();
    assert_eq!(v.len(), SESSIONS, "{key} in {rows}");
    v
}

/// `samples` of 16 kHz audio (16,000: one second, 5 appends of 200 ms).
pub fn write_wav(path: &Path, samples: i32) {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(path, spec).unwrap();
    for i in 0..samples {
        w.write_sample(((i % 160) * 50 - 4000) as i16).unwrap();
    }
    w.finalize().unwrap();
}

/// A scenario aimed at `server` whose `[workload]` is `workload`, with one WAV in `audio/`.
fn fixture(server: &RawServer, path: &str, workload: &str) -> Fixture {
    let fx = Fixture::new("");
    std::fs::create_dir_all(fx.dir.path().join("audio")).unwrap();
    write_wav(&fx.dir.path().join("audio/one.wav"), 16_000);
    let toml = format!(
        "name = \"wire\"\n[target]\nurl = \"ws://{}{path}\"\n[workload]\n{workload}\n\
         [load]\nsamples = {SESSIONS}\nmax_concurrency = 1\n",
        server.addr
    );
    std::fs::write(&fx.path, toml).unwrap();
    fx
}

/// The transcription wire (`session.created` → update, commit, appends every 200 ms,
/// the final commit when the second of audio ends): the messages rtload sends at
/// `session.created`, the first appends and the final commit, on time; and the server's
/// intervals, from when rtload meant to send (where both kinds measure from, so a late
/// send shows in the latency): from the first append's due time to the first delta
/// (TTFT), and from the final commit's to `transcription.done` (finalization).
fn transcription_wire(c: &Conn, checks: &mut Checks) -> (f64, f64) {
    let (inb, out) = (c.inbound(), c.outbound());
    let created = find(&out, "session.created", None).at;
    checks.on_time(
        "session.update",
        created,
        find(&inb, "session.update", None).at,
    );
    let opening = find(&inb, "input_audio_buffer.commit", Some(false)).at;
    checks.on_time("the opening commit", created, opening);
    let appends: Vec<_> = inb
        .iter()
        .filter(|m| m.msg["type"] == "input_audio_buffer.append")
        .collect();
    assert_eq!(appends.len(), 5);
    for (k, a) in appends.iter().take(3).enumerate() {
        let due = created + Duration::from_millis(200 * k as u64);
        checks.on_time(&format!("append {k}"), due, a.at);
    }
    let commit_due = created + Duration::from_secs(1);
    let commit = find(&inb, "input_audio_buffer.commit", Some(true)).at;
    checks.on_time("the final commit", commit_due, commit);
    let first_delta = find(&out, "transcription.delta", None).at;
    let done = find(&out, "transcription.done", None).at;
    (ms(created, first_delta), ms(commit_due, done))
}

/// Each session's transcription wire checked ([`transcription_wire`]) and its reported
/// `ttft` and `fin` held to the server's intervals.
fn transcription_checks(server: &RawServer, ttft: &[f64], fin: &[f64]) -> Checks {
    let mut checks = Checks::default();
    for (i, c) in conns(server).iter().enumerate() {
        checks.session();
        let (server_ttft, server_fin) = transcription_wire(c, &mut checks);
        checks.agrees("ttft_ms", ttft[i], server_ttft);
        checks.agrees("finalization_ms", fin[i], server_fin);
    }
    checks
}

#[test]
fn transcription_first_messages_are_on_time_and_ttft_and_finalization_match_the_server() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    until_one_holds(|| {
        let server = RawServer::start(Script::Transcription {
            delta_after: Duration::ZERO,
            done_after: Duration::from_millis(50),
        });
        let fx = fixture(
            &server,
            "/v1/realtime",
            "kind = \"realtime-transcription\"\nmodel = \"m\"\ndataset_path = \"audio\"",
        );
        let s = fx.run();
        assert!(s.passed(), "{:?}", failure_messages(&s));
        let files = &s.report.to_json()["files"];
        let (ttft, fin) = (
            per_session(files, "/ttft_ms"),
            per_session(files, "/finalization_ms"),
        );
        // rtload measures finalization from the commit's intended time.
        transcription_checks(&server, &ttft, &fin)
    });
}

#[test]
fn scripted_first_messages_are_on_time_and_its_metrics_match_the_server() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    until_one_holds(|| {
        // The issue's case: a model answering 80 ms after each append read as 121-127 ms.
        let server = RawServer::start(Script::Transcription {
            delta_after: Duration::from_millis(80),
            done_after: Duration::from_millis(150),
        });
        let workload = r#"kind = "scripted"
dataset = "audio"
sample_rate = 16000
[[workload.steps]]
await = { type = "session.created" }
[[workload.steps]]
send = { type = "session.update", model = "m" }
[[workload.steps]]
send = { type = "input_audio_buffer.commit", final = false }
[[workload.steps]]
mark = "audio_start"
[[workload.steps]]
stream = { type = "input_audio_buffer.append", audio = "${chunk_b64}" }
chunk_ms = 200
[[workload.steps]]
send = { type = "input_audio_buffer.commit", final = true }
[[workload.steps]]
mark = "final_commit"
[[workload.steps]]
await = { type = "transcription.done" }
[workload.events]
delta = { type = "transcription.delta" }
[workload.metrics]
ttft_ms = "first(delta) - mark(audio_start)"
finalization_ms = "first(transcription.done) - mark(final_commit)""#;
        let fx = fixture(&server, "/v1/realtime", workload);
        let s = fx.run();
        assert!(s.passed(), "{:?}", failure_messages(&s));
        let sessions = &s.report.to_json()["sessions"];
        let ttft = per_session(sessions, "/values/ttft_ms/0");
        let fin = per_session(sessions, "/values/finalization_ms/0");
        // `mark(final_commit)` stamps the moment its step is due: the commit's intended
        // time (the paced stream's end), not when the commit left.
        transcription_checks(&server, &ttft, &fin)
    });
}

#[test]
fn duplex_first_messages_and_the_first_ack_are_on_time_and_ttft_ttfp_match_the_server() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    until_one_holds(|| {
        // The response to the first append ends its 153 ms of audio 203 ms after that append
        // arrived: its playback.ack is due 3 ms after the second append (the issue's case).
        let (text_after, audio_after, audio_ms) = (30, 50, 153);
        let server = RawServer::start(Script::Duplex {
            text_after: Duration::from_millis(text_after),
            audio_after: Duration::from_millis(audio_after),
            audio_ms: audio_ms as u32,
        });
        let fx = crate::duplex_support::duplex(&crate::duplex_support::Opts {
            cases_per_subset: 1,
            samples: SESSIONS,
            max_concurrency: 1,
            prelude: &format!("[target]\nurl = \"ws://{}/v1/realtime\"", server.addr),
            ..Default::default()
        });
        // A 0.1 s reference voice: `session.update` carries it (the synthesized 2 s make it
        // 86 KB, whose transfer in a debug build is not what is measured here).
        write_wav(&fx.dir.path().join("ds/ref_audio.wav"), 1_600);
        let s = fx.run();
        assert!(s.passed(), "{:?}", failure_messages(&s));
        // The recorded values every output reads (JSON distributions, flat metrics, .hlog).
        let rec = s.report.recorded();
        let mut checks = Checks::default();
        for (i, c) in conns(&server).iter().enumerate() {
            checks.session();
            assert!(c.target.contains("duplex=1"), "{}", c.target);
            let (inb, out) = (c.inbound(), c.outbound());
            checks.on_time(
                "session.update",
                c.opened,
                find(&inb, "session.update", None).at,
            );
            let created = find(&out, "session.created", None).at;
            let appends: Vec<_> = inb
                .iter()
                .filter(|m| m.msg["type"] == "input_audio_buffer.append")
                .collect();
            for (k, a) in appends.iter().take(3).enumerate() {
                let due = created + Duration::from_millis(200 * k as u64);
                checks.on_time(&format!("append {k}"), due, a.at);
            }
            // The serial playback clock: the audio plays from its arrival; the ack is due
            // when it has played.
            let audio = find(&out, "response.audio.delta", None).at;
            let ack = find(&inb, "playback.ack", None);
            assert_eq!(ack.msg["played_ms"], audio_ms);
            let played = audio + Duration::from_millis(audio_ms);
            checks.on_time("the first playback.ack", played, ack.at);
            let resp_created = find(&out, "response.created", None).at;
            let text = find(&out, "response.audio_transcript.delta", None).at;
            let reported = |k: &str| {
                *rec.values(k)
                    .get(i)
                    .unwrap_or_else(|| panic!("{k}: {:?}", rec.values(k)))
            };
            checks.agrees("ttft_ms", reported("ttft_ms"), ms(resp_created, text));
            checks.agrees(
                "audio_ttfp_ms",
                reported("audio_ttfp_ms"),
                ms(resp_created, audio),
            );
        }
        checks
    });
}

#[test]
fn video_session_start_is_on_time_and_ttfc_matches_the_server() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    until_one_holds(|| {
        let server = RawServer::start(Script::Video {
            chunks: 3,
            first_after: Duration::from_millis(40),
            every: Duration::from_millis(20),
        });
        let fx = fixture(
            &server,
            "/v1/realtime/video",
            "kind = \"video-cadence\"\nnum_chunks = 3\nwarmup_chunks = 1\n\
         first_chunk_timeout = 30.0\nchunk_timeout = 30.0",
        );
        let s = fx.run();
        assert!(s.passed(), "{:?}", failure_messages(&s));
        let ttfc = per_session(&s.report.to_json()["sessions"], "/metrics/ttfc_ms");
        let mut checks = Checks::default();
        for (i, c) in conns(&server).iter().enumerate() {
            checks.session();
            let (inb, out) = (c.inbound(), c.outbound());
            let start = find(&inb, "session.start", None).at;
            checks.on_time("session.start", c.opened, start);
            let media = out.iter().find(|m| m.msg.is_null()).expect("a media chunk");
            checks.agrees("ttfc_ms", ttfc[i], ms(start, media.at));
        }
        checks
    });
}
