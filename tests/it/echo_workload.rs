//! Proof that the workload seam is a framework: a small echo workload defined only here
//! (its own 127.0.0.1 WebSocket echo server, its own session, report and metric
//! catalogue) runs end to end through the public API, and `compare`, a sweep table and
//! the HTML report show its metrics with the directions it declared, with no edit to the
//! engine, report or CLI code for it.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::sync::Arc;

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use futures_util::StreamExt;
use rtload::catalogue::{Catalogue, Direction, Family, Merge};
use rtload::scenario::SweepParam;
use rtload::workload::{
    Descriptor, Effects, Inbound, Outbound, Recorded, Report, RunRecord, STANDARD_PERCENTILES,
    Session, SessionContext, Workload, WorkloadError,
};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::support::rtload;

/// Messages each echo session sends.
const MESSAGES: usize = 5;

const FAMILIES: &[Family] = &[
    Family::new("rtt_ms", "ms", Direction::Lower, "send → echo round trip")
        .origin("a message's intended send → its echo received")
        .dist(),
    Family::new(
        "echoed_per_s",
        "msg/s",
        Direction::Higher,
        "echoes per second of run",
    )
    .origin("echoes received ÷ run duration")
    .merged(Merge::PerSecond("rtt_ms.count")),
    Family::new(
        "completed",
        "sessions",
        Direction::Higher,
        "sessions that completed",
    )
    .merged(Merge::Sum),
    Family::new(
        "failed",
        "sessions",
        Direction::Lower,
        "sessions that failed",
    )
    .merged(Merge::Sum),
    Family::new(
        "payload_bytes",
        "bytes",
        Direction::NotAScore,
        "message size (configuration)",
    )
    .merged(Merge::Same),
];

const HEADLINE: &[&str] = &["rtt_ms.p99", "echoed_per_s"];

struct EchoWorkload {
    descriptor: Descriptor,
    /// Flipped while the report is built: a signal that lands during publication.
    signal_in_report: Option<rtload::run::InterruptSwitch>,
}

impl EchoWorkload {
    /// What the echo workload is: data, built once.
    fn new(samples: usize) -> Self {
        let catalogue = Catalogue::of(FAMILIES, &STANDARD_PERCENTILES, HEADLINE);
        let mut descriptor = Descriptor::new("echo-test", "/echo", samples, catalogue);
        descriptor.params = vec![("messages".into(), MESSAGES.to_string())];
        Self {
            descriptor,
            signal_in_report: None,
        }
    }
}

struct EchoSession {
    sent: Vec<Instant>,
    rtts_ms: Vec<f64>,
}

impl Session for EchoSession {
    type Output = Vec<f64>;
    fn on_open(&mut self, now: Instant, fx: &mut Effects) {
        for i in 0..MESSAGES {
            self.sent.push(now);
            fx.send(Outbound::Text(format!("echo {i}").into()), Some(now));
        }
    }
    fn on_inbound(&mut self, msg: Inbound, at: Instant, fx: &mut Effects) {
        let Inbound::Text(t) = msg else {
            return fx.fail("binary frame from an echo server");
        };
        let i: usize = match t.strip_prefix("echo ").and_then(|n| n.parse().ok()) {
            Some(i) if i < self.sent.len() => i,
            _ => return fx.fail(format!("unexpected echo {t:?}")),
        };
        self.rtts_ms
            .push(at.duration_since(self.sent[i]).as_secs_f64() * 1000.0);
        if self.rtts_ms.len() == MESSAGES {
            fx.succeed();
        }
    }
    fn on_wake(&mut self, _now: Instant, _fx: &mut Effects) {}
    fn into_output(self) -> Vec<f64> {
        self.rtts_ms
    }
}

struct EchoReport {
    scalars: BTreeMap<String, f64>,
    rtts: Recorded,
}

impl Report for EchoReport {
    fn render_text(&self) -> String {
        format!("echo: {:?}\n", self.metrics())
    }
    fn to_json(&self) -> Value {
        json!({"echo": {"messages": MESSAGES}})
    }
    fn recorded(&self) -> &Recorded {
        &self.rtts
    }
    fn scalars(&self) -> BTreeMap<String, f64> {
        self.scalars.clone()
    }
}

impl Workload for EchoWorkload {
    type Session = EchoSession;

    fn descriptor(&self) -> &Descriptor {
        &self.descriptor
    }
    fn session(&self, _ctx: &SessionContext) -> EchoSession {
        EchoSession {
            sent: Vec::new(),
            rtts_ms: Vec::new(),
        }
    }
    fn report(&self, run: RunRecord<Vec<f64>>) -> Result<Box<dyn Report>, WorkloadError> {
        if let Some(switch) = &self.signal_in_report {
            switch.trigger();
        }
        let measured = run.samples.iter().filter(|s| !s.warmup);
        let mut rtts = Recorded::default();
        rtts.declare("rtt_ms", "ms");
        let (mut ok, mut failed) = (0.0, 0.0);
        for s in measured {
            match (&s.outcome, &s.output) {
                (Ok(()), Some(r)) => {
                    ok += 1.0;
                    rtts.extend("rtt_ms", s.ended_s, r.iter().copied());
                }
                _ => failed += 1.0,
            }
        }
        let mut m = BTreeMap::new();
        let n = rtts.values("rtt_ms").len();
        if n > 0 {
            m.insert("echoed_per_s".into(), n as f64 / run.duration_s.max(1e-9));
        }
        m.insert("completed".into(), ok);
        m.insert("failed".into(), failed);
        m.insert("payload_bytes".into(), 6.0);
        Ok(Box::new(EchoReport { scalars: m, rtts }))
    }
}

/// A WebSocket echo server on 127.0.0.1 (port 0), on its own actix system thread.
pub(crate) struct EchoServer {
    pub(crate) port: u16,
    handle: actix_web::dev::ServerHandle,
    thread: Option<std::thread::JoinHandle<()>>,
}

async fn echo(req: HttpRequest, body: web::Payload) -> Result<HttpResponse, actix_web::Error> {
    let (response, mut session, mut stream) = actix_ws::handle(&req, body)?;
    actix_web::rt::spawn(async move {
        while let Some(Ok(msg)) = stream.next().await {
            match msg {
                actix_ws::Message::Text(t) if session.text(t.clone()).await.is_err() => return,
                actix_ws::Message::Text(_) => {}
                actix_ws::Message::Ping(p) => {
                    let _ = session.pong(&p).await;
                }
                actix_ws::Message::Close(_) => break,
                _ => {}
            }
        }
        let _ = session.close(None).await;
    });
    Ok(response)
}

impl EchoServer {
    pub(crate) fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            actix_rt::System::new().block_on(async move {
                let server = HttpServer::new(|| App::new().route("/echo", web::get().to(echo)))
                    .workers(1)
                    .listen(listener)
                    .unwrap()
                    .run();
                let _ = tx.send(server.handle());
                let _ = server.await;
            });
        });
        Self {
            port,
            handle: rx.recv().unwrap(),
            thread: Some(thread),
        }
    }
}

impl Drop for EchoServer {
    fn drop(&mut self) {
        actix_rt::System::new().block_on(self.handle.stop(true));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A scenario aimed at the echo server on `port`, built in code around `workload` (no
/// scenario file, no borrowed kind): two samples at a time.
pub(crate) fn echo_scenario(
    workload: Arc<dyn rtload::workload::DynWorkload>,
    port: u16,
) -> rtload::ScenarioBuilder {
    rtload::Scenario::builder(workload)
        .name("echo")
        .target(format!("ws://127.0.0.1:{port}"))
        .load(rtload::scenario::Load {
            max_concurrency: 2,
            ..Default::default()
        })
}

#[test]
fn a_workload_defined_outside_the_crate_runs_compares_sweeps_and_reports() {
    let server = EchoServer::start();
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.json");
    let sc = echo_scenario(Arc::new(EchoWorkload::new(2)), server.port)
        .output_json(&base)
        .build();
    assert_eq!(sc.samples(), 2, "the workload's own count");
    let s = rtload::run(&sc, Box::new(std::io::sink())).expect("run");
    assert!(s.passed(), "{:?}", s.failures);
    assert_eq!(s.report.metrics()["completed"], 2.0);

    // The result file carries the workload's own catalogue.
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
    let cat = &doc["rtload"]["metrics_catalogue"];
    let row = |name: &str| {
        cat.as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} in {cat}"))
    };
    assert_eq!(row("rtt_ms.p99")["direction"], "lower");
    assert_eq!(row("rtt_ms.p99")["unit"], "ms");
    assert_eq!(row("echoed_per_s")["direction"], "higher");
    assert_eq!(row("payload_bytes")["direction"], "not_a_score");
    assert_eq!(doc["rtload"]["headline_metrics"], json!(HEADLINE));

    // The generator block is the runner's, the same for every workload.
    let rt = &doc["rtload"];
    assert_eq!(rt["queue_wait"]["count"], 2, "{rt}");
    assert_eq!(rt["send_lateness"]["count"], 2 * MESSAGES, "{rt}");
    assert_eq!(rt["failures_by_kind"], json!({}));
    let res = &rt["resources"];
    assert!(res["cpu_s"].as_f64().is_some_and(|c| c >= 0.0), "{res}");
    assert!(
        res["peak_rss_mib"].as_f64().is_some_and(|m| m > 0.0),
        "{res}"
    );
    assert!(
        res["live_session_s"].as_f64().is_some_and(|s| s > 0.0),
        "{res}"
    );
    assert!(res["cpu_us_per_session_s"].as_f64().is_some(), "{res}");
    // Memory per session in flight: the RSS growth over the phase, shared by the peak.
    assert!(
        res["rss_at_start_mib"].as_f64().is_some_and(|m| m > 0.0),
        "{res}"
    );
    let (start, peak) = (
        res["rss_at_start_mib"].as_f64(),
        res["live_rss_peak_mib"].as_f64(),
    );
    assert!(peak >= start, "{res}");
    let peak_sessions = res["peak_sessions_in_flight"].as_u64();
    assert!(peak_sessions.is_some_and(|n| (1..=2).contains(&n)), "{res}");
    assert!(
        res["rss_per_session_kib"]
            .as_f64()
            .is_some_and(|k| k >= 0.0),
        "{res}"
    );

    // compare (the CLI): a slower, lower-throughput NEW regresses both ways.
    let mut worse = doc.clone();
    let m = &mut worse["rtload"]["metrics"];
    m["rtt_ms.p99"] = json!(m["rtt_ms.p99"].as_f64().unwrap() * 3.0 + 10.0);
    m["echoed_per_s"] = json!(m["echoed_per_s"].as_f64().unwrap() / 3.0);
    m["payload_bytes"] = json!(600.0);
    let new = dir.path().join("new.json");
    std::fs::write(&new, worse.to_string()).unwrap();
    let o = rtload()
        .args(["compare", base.to_str().unwrap(), new.to_str().unwrap()])
        .args(["--max-regression", "10%"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} in\n{text}"))
            .to_string()
    };
    assert!(line("rtt_ms.p99").contains("lower") && line("rtt_ms.p99").contains("REGRESSED"));
    assert!(line("echoed_per_s").contains("higher") && line("echoed_per_s").contains("REGRESSED"));
    assert!(!line("payload_bytes").contains("REGRESSED"), "{text}");
    assert!(text.contains("2 metrics regressed past 10%"), "{text}");

    // A sweep over concurrency: the table's columns are the workload's headline.
    let sweep = rtload::scenario::Sweep {
        param: SweepParam::MaxConcurrency,
        values: vec![1.0, 2.0],
        headline: None,
        samples_per_point: None,
    };
    let sweep_dir = dir.path().join("sweep");
    let r = rtload::run::run_sweep(&sc, &sweep, &sweep_dir, true).expect("sweep");
    assert!(r.points.iter().all(|p| p.passed));
    let catalogue = sc.workload().catalogue();
    let cols: Vec<&str> = catalogue.headline().iter().map(String::as_str).collect();
    // The echo workload declares no unit rate: no unit column, none recorded.
    assert!(catalogue.unit_rate().is_none());
    assert!(r.points.iter().all(|p| p.unit_rate.is_none()));
    let table = rtload::report::sweep_table(&sweep, &r.points, None, &cols);
    assert!(
        table.lines().next().unwrap().contains("rtt_ms.p99"),
        "{table}"
    );
    let legend = rtload::report::direction_legend(&cols, catalogue);
    assert!(
        legend.contains("rtt_ms.p99 lower is better (ms)"),
        "{legend}"
    );
    assert!(
        legend.contains("echoed_per_s higher is better (msg/s)"),
        "{legend}"
    );
    let sweep_doc: Value =
        serde_json::from_str(&std::fs::read_to_string(sweep_dir.join("sweep.json")).unwrap())
            .unwrap();
    assert_eq!(sweep_doc["sweep"]["headline"], "rtt_ms.p99");

    // The HTML report: recognised by its metrics, units and directions from the file.
    use rtload::report::{HtmlInput, IntervalLog, render_html};
    let html = render_html(&[HtmlInput {
        name: "base.json".into(),
        doc,
        log: IntervalLog::Absent,
    }])
    .expect("html");
    assert!(html.contains("(rtload result)"), "kind shown");
    assert!(html.contains("<td>rtt_ms.p99</td><td>ms</td><td>lower</td>"));
    assert!(html.contains("<td>echoed_per_s</td><td>msg/s</td><td>higher</td>"));
    assert!(html.contains("<td>payload_bytes</td><td>bytes</td><td>–</td>"));
    drop(server);
}

/// A signal that lands while the results are published (here: while the workload builds
/// its report, after every session ended) lets the writing finish and still ends the run
/// as interrupted: the summary, the JSON result and its verdict all say so.
#[test]
fn a_signal_during_publication_finishes_the_files_and_marks_the_run_interrupted() {
    use rtload::run::{Interrupt, InterruptSwitch};

    let server = EchoServer::start();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    let switch = InterruptSwitch::new();
    let mut workload = EchoWorkload::new(2);
    workload.signal_in_report = Some(switch.clone());
    let sc = echo_scenario(Arc::new(workload), server.port)
        .output_json(&path)
        .build();
    let interrupt = Interrupt {
        switch,
        grace: std::time::Duration::ZERO,
    };
    let s = rtload::run_interruptible(&sc, Box::new(std::io::sink()), None, Some(interrupt))
        .expect("run");
    assert!(s.interrupted, "a signal during publication was forgotten");
    assert_eq!(
        s.report.metrics()["completed"],
        2.0,
        "sessions ran to the end"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(doc["interrupted"], true, "{doc}");
    assert_eq!(doc["rtload"]["verdict"], "interrupted", "{}", doc["rtload"]);
}
