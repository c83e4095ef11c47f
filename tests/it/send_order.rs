//! Messages a session emits faster than the socket takes them reach the server whole and
//! in the order emitted: the first go out at once from the session's host, the rest
//! through the sender role as the socket drains (`engine/outbox.rs`); every scheduled one
//! gets a lateness sample. A burst of 24 MB is more than a fresh loopback socket takes
//! at once (in a run checked with a temporary print, 92 messages went out at once, one
//! write was finished by the sender and 307 messages queued for it); a second burst,
//! emitted when the first echo comes back, must not overtake what of the first still
//! waits. The test asserts the order and the bytes, whichever path each message took.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rtload::catalogue::{Catalogue, Direction, Family};
use rtload::workload::{
    Descriptor, Effects, Inbound, Outbound, Report, RunRecord, Session, SessionContext, Workload,
    WorkloadError,
};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::echo_workload::{EchoServer, echo_scenario};

/// Messages in the first burst, in the second, and the padding each carries (under
/// actix-ws's 64 KiB frames).
const BURST: usize = 400;
const SECOND: usize = 20;
const PAD: usize = 60 * 1024;
const TOTAL: usize = BURST + SECOND;

/// Messages `range`, all meant for `now`.
fn burst(range: std::ops::Range<usize>, now: Instant, fx: &mut Effects) {
    let pad = "x".repeat(PAD);
    for i in range {
        fx.send(Outbound::Text(format!("{i} {pad}").into()), Some(now));
    }
}

struct BurstWorkload(Descriptor);

impl BurstWorkload {
    fn new() -> Self {
        let catalogue = Catalogue::build(vec!["echoed"], FAMILIES, &["echoed"]);
        let mut d = Descriptor::new("burst-test", "/echo", 1, catalogue);
        d.params = vec![("messages".into(), TOTAL.to_string())];
        Self(d)
    }
}

/// Expects the echoes back in order, each with its whole padding.
struct BurstSession {
    next: usize,
}

impl Session for BurstSession {
    type Output = usize;
    fn on_open(&mut self, now: Instant, fx: &mut Effects) {
        burst(0..BURST, now, fx);
        // A safety net only: the burst takes well under a second.
        fx.wake(now + Duration::from_secs(120));
    }
    fn on_inbound(&mut self, msg: Inbound, at: Instant, fx: &mut Effects) {
        let Inbound::Text(t) = msg else {
            return fx.fail("binary frame from an echo server");
        };
        let (i, pad) = t.split_once(' ').unwrap_or_default();
        if i != self.next.to_string() || pad.len() != PAD || pad.bytes().any(|b| b != b'x') {
            let n = self.next;
            return fx.fail(format!(
                "echo {n} came back as #{i} with {} bytes",
                pad.len()
            ));
        }
        self.next += 1;
        if self.next == 1 {
            burst(BURST..TOTAL, at, fx);
        }
        if self.next == TOTAL {
            fx.succeed();
        }
    }
    fn on_wake(&mut self, _now: Instant, fx: &mut Effects) {
        fx.fail(format!("only {} of {TOTAL} echoes in 120 s", self.next));
    }
    fn into_output(self) -> usize {
        self.next
    }
}

struct Counts(BTreeMap<String, f64>, rtload::workload::Recorded);

impl Report for Counts {
    fn render_text(&self) -> String {
        format!("{:?}\n", self.0)
    }
    fn to_json(&self) -> Value {
        json!({"rtload": {"metrics": self.0}})
    }
    fn recorded(&self) -> &rtload::workload::Recorded {
        &self.1
    }
    fn scalars(&self) -> BTreeMap<String, f64> {
        self.0.clone()
    }
}

const FAMILIES: &[Family] = &[Family::new(
    "echoed",
    "messages",
    Direction::Higher,
    "echoes received in order",
)];

impl Workload for BurstWorkload {
    type Session = BurstSession;
    fn descriptor(&self) -> &Descriptor {
        &self.0
    }
    fn session(&self, _ctx: &SessionContext) -> BurstSession {
        BurstSession { next: 0 }
    }
    fn report(&self, run: RunRecord<usize>) -> Result<Box<dyn Report>, WorkloadError> {
        let echoed = run.samples.iter().filter_map(|s| s.output).sum::<usize>();
        Ok(Box::new(Counts(
            BTreeMap::from([("echoed".to_string(), echoed as f64)]),
            Default::default(),
        )))
    }
}

#[test]
fn a_burst_larger_than_the_socket_arrives_whole_in_order_and_timed() {
    let server = EchoServer::start();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("burst.json");
    let sc = echo_scenario(Arc::new(BurstWorkload::new()), server.port)
        .output_json(&out)
        .build();
    assert_eq!(sc.samples(), 1, "the workload's own count");
    let s = rtload::run(&sc, Box::new(std::io::sink())).expect("run");
    assert!(s.passed(), "{:?}", s.failures);
    assert_eq!(s.report.metrics()["echoed"], TOTAL as f64);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let lateness = &doc["rtload"]["send_lateness"];
    assert_eq!(lateness["count"], TOTAL, "{lateness}");
    // Each burst was meant for one instant; its last messages waited for the socket.
    assert!(
        lateness["max_ms"].as_f64().is_some_and(|m| m > 0.0),
        "{lateness}"
    );
    drop(server);
}
