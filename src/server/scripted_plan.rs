//! Pure core of the scripted endpoint: `[server.scripted]` compiled once per server
//! ([`Compiled`]), and one connection's timeline ([`ConnPlan`]): inbound messages in,
//! rendered messages with their due times out. No sockets, no clocks of its own.

use std::collections::BTreeMap;
use std::f64::consts::TAU;
use std::time::Duration;

use base64::Engine as _;
use serde_json::Value;
use tokio::time::Instant;

use super::config::{ScriptedServerConfig, ServerAction};
use super::vad::{Heard, Vad};
use crate::util::jsonmatch::Matcher;
use crate::util::template::{Template, closest};

/// Largest `count` of one stream action.
const MAX_COUNT: u32 = 100_000;
/// Largest delay or gap, ms.
const MAX_MS: f64 = 3_600_000.0;
/// Variables every server template may use.
const VARS: &[&str] = &["session", "seq", "uuid", "msg"];
/// Variables of `stream` templates.
const STREAM_VARS: &[&str] = &["i", "n", "count", "audio_b64"];

#[derive(Debug, Clone)]
enum Kind {
    Send(Vec<Template>),
    Stream {
        msgs: Vec<Template>,
        count: u32,
        every: Duration,
        audio_b64: String,
    },
    Close,
    Cancel,
}

#[derive(Debug, Clone)]
struct Act {
    after: Duration,
    kind: Kind,
}

/// `[server.scripted]` with patterns and templates compiled.
#[derive(Debug, Clone)]
pub(crate) struct Compiled {
    on_connect: Vec<Act>,
    rules: Vec<(Matcher, Vec<Act>)>,
    on_unmatched: Vec<Act>,
    /// The speech detector's settings: field, threshold, silence in bytes and in time.
    speech: Option<(String, f64, u64, Duration)>,
    on_speech_started: Vec<Act>,
    on_barge_in: Vec<Act>,
}

impl Compiled {
    /// Compile `cfg`; the error names the rule and action.
    pub(crate) fn new(cfg: &ScriptedServerConfig) -> Result<Compiled, String> {
        let on_connect = actions(&cfg.on_connect, "scripted.on_connect")?;
        let mut rules = Vec::new();
        for (i, r) in cfg.rules.iter().enumerate() {
            let at = format!("scripted.rules[{i}]");
            let m = Matcher::new(&r.on).map_err(|e| format!("{at}.on: {e}"))?;
            rules.push((m, actions(&r.actions, &format!("{at}.do"))?));
        }
        let on_unmatched = actions(&cfg.on_unmatched, "scripted.on_unmatched")?;
        let speech = cfg.speech.as_ref().map(|s| {
            let bytes_per_ms = f64::from(s.sample_rate) * 2.0 / 1000.0;
            let silence = (s.silence_ms * bytes_per_ms).round() as u64;
            let quiet = Duration::from_secs_f64(s.silence_ms / 1000.0);
            (s.field.clone(), s.threshold_dbfs, silence, quiet)
        });
        Ok(Compiled {
            on_connect,
            rules,
            on_unmatched,
            speech,
            on_speech_started: actions(&cfg.on_speech_started, "scripted.on_speech_started")?,
            on_barge_in: actions(&cfg.on_barge_in, "scripted.on_barge_in")?,
        })
    }
}

fn actions(list: &[ServerAction], at: &str) -> Result<Vec<Act>, String> {
    list.iter()
        .enumerate()
        .map(|(j, a)| action(a).map_err(|e| format!("{at}[{j}]: {e}")))
        .collect()
}

fn action(a: &ServerAction) -> Result<Act, String> {
    for (name, v) in [("after_ms", a.after_ms), ("every_ms", a.every_ms)] {
        if !(0.0..=MAX_MS).contains(&v) {
            return Err(format!(
                "`{name}` must be a number of ms in [0, {MAX_MS}] (got {v})"
            ));
        }
    }
    let after = Duration::from_secs_f64(a.after_ms / 1000.0);
    let kind = match (&a.send, &a.stream, a.close || a.cancel) {
        (None, None, true) if a.close && a.cancel => {
            return Err(
                "an action has exactly one of `send`, `stream`, `close = true` or `cancel = true`"
                    .into(),
            );
        }
        (None, None, true) if a.cancel => Kind::Cancel,
        (Some(m), None, false) => Kind::Send(templates(m, &[])?),
        (None, Some(m), false) => {
            if !(1..=MAX_COUNT).contains(&a.count) {
                return Err(format!(
                    "`count` must be from 1 to {MAX_COUNT} (got {})",
                    a.count
                ));
            }
            if !(8_000..=192_000).contains(&a.sample_rate) || !(1..=60_000).contains(&a.audio_ms) {
                return Err(
                    "`sample_rate` must be 8000..=192000 Hz and `audio_ms` 1..=60000".into(),
                );
            }
            Kind::Stream {
                msgs: templates(m, STREAM_VARS)?,
                count: a.count,
                every: Duration::from_secs_f64(a.every_ms / 1000.0),
                audio_b64: tone_b64(a.audio_ms, a.sample_rate),
            }
        }
        (None, None, true) => Kind::Close,
        _ => {
            return Err(
                "an action has exactly one of `send`, `stream`, `close = true` or `cancel = true`"
                    .into(),
            );
        }
    };
    Ok(Act { after, kind })
}

fn templates(v: &Value, extra: &[&str]) -> Result<Vec<Template>, String> {
    let items: Vec<&Value> = match v {
        Value::Array(a) => a.iter().collect(),
        other => vec![other],
    };
    let check = |name: &str| -> Result<(), String> {
        if VARS.contains(&name) || extra.contains(&name) || name.starts_with("event.") {
            return Ok(());
        }
        let known = VARS.iter().chain(extra).copied();
        let hint = closest(name, known)
            .map(|c| format!("did you mean `${{{c}}}`? "))
            .unwrap_or_default();
        Err(format!(
            "unknown template variable `${{{name}}}`; {hint}variables: {}, event.<field>{}",
            VARS.join(", "),
            if extra.is_empty() {
                "; in `stream` also i, n, count, audio_b64".to_string()
            } else {
                format!(", {}", extra.join(", "))
            }
        ))
    };
    items
        .into_iter()
        .map(|m| {
            if !m.is_object() {
                return Err(format!(
                    "a message must be a table, e.g. {{ type = \"session.created\" }} (got {m})"
                ));
            }
            Template::compile(m, &check).map_err(|e| e.msg)
        })
        .collect()
}

/// `ms` of a 440 Hz PCM16 mono tone at `rate`, base64.
fn tone_b64(ms: u32, rate: u32) -> String {
    let n = (u64::from(rate) * u64::from(ms) / 1000) as usize;
    let mut bytes = Vec::with_capacity(n * 2);
    for i in 0..n {
        let v = ((TAU * 440.0 * i as f64 / f64::from(rate)).sin() * 6000.0) as i16;
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// What the connection must do at a due time.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Out {
    /// Send this text frame.
    Text(String),
    /// Close the socket.
    Close,
}

/// A scheduled entry: something to send, or a `cancel` action.
#[derive(Debug, Clone, PartialEq)]
enum Queued {
    Out(Out),
    Cancel,
}

/// One connection's scheduled messages.
#[derive(Debug)]
pub(crate) struct ConnPlan {
    compiled: std::sync::Arc<Compiled>,
    session: u64,
    seq: u64,
    /// Inbound JSON messages so far: `${msg}`, the ordinal of the one a rule answers.
    inbound: u64,
    /// Due time and order → (the firing that scheduled it, what).
    queue: BTreeMap<(Instant, u64), (u64, Queued)>,
    order: u64,
    /// Firings so far (each rule match, connect, speech start).
    firing: u64,
    vad: Option<Vad>,
    /// When the last audio arrived (no audio for `silence_ms` is silence too: a client
    /// that stops sending between turns has stopped speaking).
    last_audio: Option<Instant>,
    /// `[server.load]`'s slow-down factor (≥ 1): multiplies `after_ms` and `every_ms`.
    load: f64,
}

impl ConnPlan {
    /// A new connection with ordinal `session`.
    pub(crate) fn new(compiled: std::sync::Arc<Compiled>, session: u64) -> Self {
        let vad = (compiled.speech.as_ref()).map(|(_, dbfs, silence, _)| Vad::new(*dbfs, *silence));
        Self {
            compiled,
            session,
            seq: 0,
            inbound: 0,
            queue: BTreeMap::new(),
            order: 0,
            firing: 0,
            vad,
            last_audio: None,
            load: 1.0,
        }
    }

    /// Sets the load factor the rules scheduled from now on run at: their `after_ms`
    /// and `every_ms` are multiplied by it (`[server.load]`).
    pub(crate) fn set_load(&mut self, factor: f64) {
        self.load = factor.max(1.0);
    }

    /// The socket opened at `now`: schedule `on_connect`.
    pub(crate) fn on_open(&mut self, now: Instant) {
        let acts = self.compiled.on_connect.clone();
        self.schedule(&acts, &Value::Null, now);
    }

    /// One inbound text frame at `now`: schedule every matching rule, or `on_unmatched`
    /// when none matches. Non-JSON is ignored.
    pub(crate) fn on_text(&mut self, text: &str, now: Instant) {
        let Ok(msg) = serde_json::from_str::<Value>(text) else {
            return;
        };
        self.inbound += 1;
        let compiled = std::sync::Arc::clone(&self.compiled);
        self.hear(&msg, now);
        let mut matched = false;
        for (m, acts) in &compiled.rules {
            if m.matches(&msg) {
                matched = true;
                self.schedule(acts, &msg, now);
            }
        }
        if !matched {
            self.schedule(&compiled.on_unmatched, &msg, now);
        }
    }

    /// Speech detection on `msg` (with `speech` configured): at a start of speech,
    /// `on_speech_started`, and `on_barge_in` when earlier firings are still scheduled.
    fn hear(&mut self, msg: &Value, now: Instant) {
        let compiled = std::sync::Arc::clone(&self.compiled);
        let (Some((field, _, silence, quiet)), Some(vad)) = (&compiled.speech, self.vad.as_mut())
        else {
            return;
        };
        let Some(pcm) = (msg.get(field).and_then(Value::as_str))
            .and_then(|b| crate::util::b64::standard().decode(b).ok())
        else {
            return;
        };
        if self
            .last_audio
            .is_some_and(|t| now.saturating_duration_since(t) >= *quiet)
        {
            vad.feed(0.0, *silence);
        }
        self.last_audio = Some(now);
        let rms = crate::util::wav::pcm16_rms(&pcm);
        if vad.feed(rms, pcm.len() as u64) != Heard::Started {
            return;
        }
        let talking = !self.queue.is_empty();
        self.firing += 1;
        self.schedule_in(&compiled.on_speech_started, msg, now);
        if talking {
            self.schedule_in(&compiled.on_barge_in, msg, now);
        }
    }

    /// The earliest due time, if anything is scheduled.
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.queue.keys().next().map(|(t, _)| *t)
    }

    /// Everything due at `now`, in order.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Vec<Out> {
        let mut out = Vec::new();
        while let Some(entry) = self.queue.first_entry() {
            if entry.key().0 > now {
                break;
            }
            match entry.remove() {
                (_, Queued::Out(o)) => out.push(o),
                // Earlier firings stop: what they still had scheduled is dropped.
                (firing, Queued::Cancel) => self.queue.retain(|_, (f, _)| *f >= firing),
            }
        }
        out
    }

    fn push(&mut self, at: Instant, out: Out) {
        self.push_queued(at, Queued::Out(out));
    }

    fn push_queued(&mut self, at: Instant, q: Queued) {
        self.order += 1;
        self.queue.insert((at, self.order), (self.firing, q));
    }

    /// `acts` as a new firing, answering `event` received at `now`.
    fn schedule(&mut self, acts: &[Act], event: &Value, now: Instant) {
        self.firing += 1;
        self.schedule_in(acts, event, now);
    }

    /// `acts` as part of the current firing.
    fn schedule_in(&mut self, acts: &[Act], event: &Value, now: Instant) {
        let mut t = now;
        for a in acts {
            t += a.after.mul_f64(self.load);
            match &a.kind {
                Kind::Close => self.push(t, Out::Close),
                Kind::Cancel => self.push_queued(t, Queued::Cancel),
                Kind::Send(msgs) => {
                    for m in msgs {
                        let text = self.render(m, event, None);
                        self.push(t, text);
                    }
                }
                Kind::Stream {
                    msgs,
                    count,
                    every,
                    audio_b64,
                } => {
                    for i in 0..*count {
                        if i > 0 {
                            t += every.mul_f64(self.load);
                        }
                        for m in msgs {
                            let text = self.render(m, event, Some((i, *count, audio_b64.as_str())));
                            self.push(t, text);
                        }
                    }
                }
            }
        }
    }

    fn render(&mut self, t: &Template, event: &Value, stream: Option<(u32, u32, &str)>) -> Out {
        let seq = self.seq;
        self.seq += 1;
        let (session, inbound) = (self.session, self.inbound);
        let lookup = |name: &str| -> Option<Value> {
            match (name, stream) {
                ("session", _) => Some(Value::from(session)),
                ("msg", _) => Some(Value::from(inbound)),
                ("seq", _) => Some(Value::from(seq)),
                ("uuid", _) => Some(Value::String(format!("{:032x}", rand::random::<u128>()))),
                ("i", Some((i, _, _))) => Some(Value::from(i)),
                ("n", Some((i, _, _))) => Some(Value::from(i + 1)),
                ("count", Some((_, c, _))) => Some(Value::from(c)),
                ("audio_b64", Some((_, _, a))) => Some(Value::String(a.to_string())),
                _ => {
                    let path = name.strip_prefix("event.")?;
                    path.split('.').try_fold(event, |v, k| v.get(k)).cloned()
                }
            }
        };
        // A missing `${event.x}` renders as an error event, so a script author sees it.
        Out::Text(t.render_text(&lookup).unwrap_or_else(|e| {
            serde_json::json!({"type": "error", "error": format!("[server.scripted] {e}"), "code": "template"}).to_string()
        }))
    }
}

#[cfg(test)]
#[path = "scripted_plan_tests.rs"]
mod tests;
