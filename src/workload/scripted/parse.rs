//! Reads the script part of a `scripted` `[workload]` (`steps`, `fail_on`, `events`,
//! `metrics`) from the scenario text with positions on every key and value, so each
//! problem names file:line:col, the bad value and the fix (unknown keys get a close-match
//! suggestion; template and metric errors point into the string).

use std::ops::Range;
use std::path::Path;
use std::time::Duration;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::script::{
    Action, CHUNK_VARS, ChunkFrame, ITEM_PREFIX, Payload, SESSION_VARS, Script, Step,
};
use crate::util::jsonmatch::Matcher;
use crate::util::pacing::PacingMode;
use crate::util::pacing::parse_pacing;
use crate::util::scenario_doc::ScenarioDoc;
use crate::util::scenario_error::ScenarioError;
use crate::util::template::{Template, closest};

/// Upper bound on unrolled steps (a `repeat` typo must not exhaust memory).
const MAX_STEPS: usize = 100_000;
/// Step keys that say what a step does.
const ACTIONS: &[&str] = &[
    "send",
    "send_text",
    "send_binary",
    "stream",
    "await",
    "mark",
    "wait_ms",
    "repeat",
];

/// Settings the script parser needs from the rest of `[workload]`.
#[derive(Debug, Clone)]
pub struct Defaults {
    /// Pacing of `stream` steps that do not set their own.
    pub pacing: PacingMode,
    /// Timeout of `await` steps that do not set their own.
    pub await_timeout: Duration,
    /// Whole-session limit.
    pub timeout: Duration,
    /// Fields every dataset item has (`None` = no dataset configured).
    pub item_fields: Option<Vec<String>>,
}

type Val<'i> = Spanned<DeValue<'i>>;

struct Cx<'a> {
    path: &'a Path,
    src: &'a str,
    defaults: &'a Defaults,
    errors: Vec<ScenarioError>,
    /// Mark names set by steps so far, in source order (what `since` may name).
    marks_seen: Vec<String>,
}

impl Cx<'_> {
    fn err(&mut self, span: Range<usize>, msg: impl Into<String>) {
        self.errors
            .push(ScenarioError::at(self.path, self.src, span, msg));
    }
}

/// Parse the script of the scenario `doc` (parsed once, by the scenario loader).
pub fn parse(doc: &ScenarioDoc<'_>, defaults: &Defaults) -> Result<Script, Vec<ScenarioError>> {
    let (path, src) = (doc.path(), doc.src());
    let mut cx = Cx {
        path,
        src,
        defaults,
        errors: Vec::new(),
        marks_seen: Vec::new(),
    };
    let mut script = Script {
        timeout: defaults.timeout,
        ..Script::default()
    };
    let workload = doc
        .root()
        .get("workload")
        .and_then(|w| w.get_ref().as_table());
    let Some(w) = workload else {
        return Err(vec![ScenarioError::file(path, "missing [workload] table")]);
    };
    match w.get("steps") {
        Some(steps) => parse_steps(&mut cx, steps, &mut script.steps),
        None => cx.errors.push(ScenarioError::file(
            path,
            "[workload] needs `steps`: add `[[workload.steps]]` tables, e.g. `send = { type = \"session.update\" }`",
        )),
    }
    if let Some(f) = w.get("fail_on") {
        match f.get_ref().as_array() {
            Some(items) => {
                for item in items.iter() {
                    if let Some(m) = matcher(&mut cx, item) {
                        script.fail_on.push(m);
                    }
                }
            }
            None => cx.err(
                f.span(),
                "`fail_on` must be a list of patterns, e.g. fail_on = [{ type = \"error\" }]",
            ),
        }
    }
    if let Some(ev) = w.get("events") {
        for (k, v) in table_entries(&mut cx, ev, "events") {
            if let Some(m) = matcher(&mut cx, v) {
                script.events.push((k.get_ref().to_string(), m));
            }
        }
    }
    let known = Names::of(&script, doc.root());
    if let Some(ms) = w.get("metrics") {
        for (k, v) in table_entries(&mut cx, ms, "metrics") {
            if let Some(def) = metric_def(&mut cx, k, v, &known) {
                script.metrics.push(def);
            }
        }
    }
    script.link_since();
    if cx.errors.is_empty() {
        Ok(script)
    } else {
        Err(cx.errors)
    }
}

fn table_entries<'t, 'i>(
    cx: &mut Cx<'_>,
    v: &'t Val<'i>,
    what: &str,
) -> Vec<(&'t Spanned<std::borrow::Cow<'i, str>>, &'t Val<'i>)> {
    match v.get_ref().as_table() {
        Some(t) => t.iter().collect(),
        None => {
            cx.err(
                v.span(),
                format!("`{what}` must be a table, written `[workload.{what}]`"),
            );
            Vec::new()
        }
    }
}

fn parse_steps(cx: &mut Cx<'_>, v: &Val<'_>, out: &mut Vec<Step>) {
    let Some(items) = v.get_ref().as_array() else {
        cx.err(
            v.span(),
            "`steps` must be a list of step tables: write each as `[[workload.steps]]`",
        );
        return;
    };
    for item in items.iter() {
        if out.len() > MAX_STEPS {
            cx.err(
                item.span(),
                format!(
                    "the script unrolls to more than {MAX_STEPS} steps; lower a `repeat` count"
                ),
            );
            return;
        }
        step(cx, item, out);
    }
}

fn step(cx: &mut Cx<'_>, item: &Val<'_>, out: &mut Vec<Step>) {
    let Some(t) = item.get_ref().as_table() else {
        cx.err(
            item.span(),
            "a step must be a table such as { send = { type = \"x\" } }",
        );
        return;
    };
    let actions: Vec<&str> = t
        .keys()
        .map(|k| k.get_ref().as_ref())
        .filter(|k| ACTIONS.contains(k))
        .collect();
    let kind = match actions.as_slice() {
        [one] => *one,
        [] => {
            let hint = t
                .keys()
                .find_map(|k| closest(k.get_ref(), ACTIONS.iter().copied()).map(|c| (k, c)));
            let msg = match hint {
                Some((k, c)) => format!("unknown step key `{}`; did you mean `{c}`?", k.get_ref()),
                None => format!("a step needs one of {}", ACTIONS.join(", ")),
            };
            let span = hint.map_or(item.span(), |(k, _)| k.span());
            cx.err(span, msg);
            return;
        }
        many => {
            cx.err(
                item.span(),
                format!(
                    "a step does one thing; this one has {}: split it into separate steps",
                    many.join(" and ")
                ),
            );
            return;
        }
    };
    check_keys(cx, t, kind);
    let v = &t[kind];
    let action = match kind {
        "send" => template(cx, v, &[]).map(|t| Action::Send(Payload::Json(t))),
        "send_text" => string_template(cx, v).map(|t| Action::Send(Payload::Text(t))),
        "send_binary" => string_template(cx, v).map(|t| Action::Send(Payload::Binary(t))),
        "mark" => name_value(cx, v, "mark").map(|m| {
            cx.marks_seen.push(m.clone());
            Action::Mark(m)
        }),
        "stream" => stream(cx, t, v),
        "await" => await_step(cx, t, v),
        "wait_ms" => match float(v) {
            Some(ms) if ms.is_finite() && (0.0..=600_000.0).contains(&ms) => {
                Some(Action::Wait(Duration::from_secs_f64(ms / 1000.0)))
            }
            _ => {
                cx.err(
                    v.span(),
                    "`wait_ms` must be a number of ms in [0, 600000], e.g. `wait_ms = 300`",
                );
                None
            }
        },
        _ => {
            repeat(cx, t, v, out);
            None
        }
    };
    if let Some(action) = action {
        out.push(Step {
            action,
            turn: 0,
            turn_rest: None,
        });
    }
}

/// Keys of a `kind` step other than the action must be that action's own.
fn check_keys(cx: &mut Cx<'_>, t: &DeTable<'_>, kind: &str) {
    let allowed: &[&str] = match kind {
        "stream" => &["chunk_ms", "pacing"],
        "await" => &["timeout_s", "name", "collect", "until", "since"],
        "repeat" => &["steps"],
        _ => &[],
    };
    for k in t.keys() {
        let key = k.get_ref().as_ref();
        if key != kind && !allowed.contains(&key) {
            let hint = closest(key, allowed.iter().copied())
                .map(|c| format!("did you mean `{c}`? "))
                .unwrap_or_default();
            let keys = if allowed.is_empty() {
                "none".to_string()
            } else {
                allowed.join(", ")
            };
            cx.err(
                k.span(),
                format!("unknown key `{key}` in a `{kind}` step; {hint}its keys are: {keys}"),
            );
        }
    }
}

fn repeat(cx: &mut Cx<'_>, t: &DeTable<'_>, v: &Val<'_>, out: &mut Vec<Step>) {
    let n = match int(v) {
        Some(n) if (1..=100_000).contains(&n) => n as u32,
        _ => {
            cx.err(v.span(), "`repeat` must be a whole number of times from 1 to 100000, with the repeated steps in `steps`");
            return;
        }
    };
    let Some(inner) = t.get("steps") else {
        cx.err(v.span(), "a `repeat` step needs `steps = [...]` (or `[[workload.steps.steps]]` tables) to repeat");
        return;
    };
    let mut body = Vec::new();
    parse_steps(cx, inner, &mut body);
    let last = body.len().saturating_sub(1);
    for i in 0..n {
        if out.len() + body.len() > MAX_STEPS {
            cx.err(
                v.span(),
                format!(
                    "the script unrolls to more than {MAX_STEPS} steps; lower this `repeat` count"
                ),
            );
            return;
        }
        // The body's own steps belong to turn `i`; steps of a nested `repeat` keep
        // their (inner) turn.
        out.extend(body.iter().enumerate().map(|(k, s)| match s.turn_rest {
            None => Step {
                action: s.action.clone(),
                turn: i,
                turn_rest: Some((last - k) as u32),
            },
            Some(_) => s.clone(),
        }));
    }
}

fn stream(cx: &mut Cx<'_>, t: &DeTable<'_>, v: &Val<'_>) -> Option<Action> {
    if cx.defaults.item_fields.is_none() {
        cx.err(v.span(), "a `stream` step streams the sample's audio: set `[workload] dataset` to a directory of WAV files or a JSONL manifest");
    }
    let frame = match v.get_ref() {
        DeValue::String(s) if s == "binary" => ChunkFrame::Binary,
        DeValue::Table(_) => ChunkFrame::Json(template(cx, v, CHUNK_VARS)?),
        _ => {
            cx.err(v.span(), "`stream` is a message template wrapping each chunk, e.g. { type = \"input_audio_buffer.append\", audio = \"${chunk_b64}\" }, or \"binary\" for raw PCM frames");
            return None;
        }
    };
    let chunk_ms = match t.get("chunk_ms") {
        None => 200,
        Some(c) => match int(c) {
            Some(n) if (1..=60_000).contains(&n) => n as u32,
            _ => {
                cx.err(
                    c.span(),
                    "`chunk_ms` must be a whole number of milliseconds from 1 to 60000",
                );
                return None;
            }
        },
    };
    let pacing = match t.get("pacing") {
        None => cx.defaults.pacing,
        Some(p) => match parse_pacing(p.get_ref().as_str()) {
            Ok(m) if p.get_ref().is_str() => m,
            Ok(_) => {
                cx.err(p.span(), "`pacing` must be a string: \"realtime\", \"saturate\" or a speed factor like \"2x\"");
                return None;
            }
            Err(msg) => {
                cx.err(p.span(), msg);
                return None;
            }
        },
    };
    Some(Action::Stream {
        frame,
        chunk_ms,
        pacing,
    })
}

fn await_step(cx: &mut Cx<'_>, t: &DeTable<'_>, v: &Val<'_>) -> Option<Action> {
    let pattern = matcher(cx, v)?;
    let timeout = match t.get("timeout_s") {
        None => cx.defaults.await_timeout,
        Some(s) => match float(s) {
            Some(x) if x.is_finite() && x > 0.0 && x <= 1e6 => Duration::from_secs_f64(x),
            _ => {
                cx.err(
                    s.span(),
                    "`timeout_s` must be a number of seconds > 0 (at most 1e6)",
                );
                return None;
            }
        },
    };
    let name = match t.get("name") {
        Some(n) => Some(name_value(cx, n, "name")?),
        None => None,
    };
    let collect = match t.get("collect") {
        None => false,
        Some(c) => match c.get_ref().as_bool() {
            Some(b) => b,
            None => {
                cx.err(c.span(), "`collect` must be true or false");
                return None;
            }
        },
    };
    let until = match t.get("until") {
        None => None,
        Some(u) if !collect => {
            cx.err(u.span(), "`until` ends a collecting await: add `collect = true`, or await the `until` pattern itself");
            None
        }
        Some(u) => Some(matcher(cx, u)?),
    };
    let since = match t.get("since") {
        None => None,
        Some(s) => Some(since_mark(cx, s)?),
    };
    Some(Action::Await {
        matcher: pattern,
        name,
        timeout,
        collect,
        until,
        since,
    })
}

/// An `await`'s `since`: a mark some earlier step sets.
fn since_mark(cx: &mut Cx<'_>, v: &Val<'_>) -> Option<String> {
    let m = name_value(cx, v, "since")?;
    if cx.marks_seen.contains(&m) {
        return Some(m);
    }
    let hint = closest(&m, cx.marks_seen.iter().map(String::as_str))
        .map(|c| format!("did you mean `{c}`? "))
        .unwrap_or_default();
    cx.err(
        v.span(),
        format!("`since` names mark {m:?}, which no earlier step sets; {hint}add a step `mark = {m:?}` before the step whose replies this `await` may miss (e.g. before a `stream`)"),
    );
    None
}

fn name_value(cx: &mut Cx<'_>, v: &Val<'_>, key: &str) -> Option<String> {
    match v.get_ref().as_str() {
        Some(s)
            if !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')) =>
        {
            Some(s.to_string())
        }
        _ => {
            cx.err(v.span(), format!("`{key}` must be a name of letters, digits, `_`, `-` and `.`, e.g. \"audio_start\""));
            None
        }
    }
}

fn matcher(cx: &mut Cx<'_>, v: &Val<'_>) -> Option<Matcher> {
    let json = to_json(cx, v)?;
    Matcher::new(&json)
        .map_err(|msg| cx.err(v.span(), msg))
        .ok()
}

fn string_template(cx: &mut Cx<'_>, v: &Val<'_>) -> Option<Template> {
    if !v.get_ref().is_str() {
        cx.err(
            v.span(),
            "this step's value must be a string template, e.g. \"hello ${session_id}\"",
        );
        return None;
    }
    let t = template(cx, v, &[])?;
    if t == Template::Lit(serde_json::Value::Null) {
        cx.err(v.span(), "`${null}` is JSON null, and a frame needs text: use it inside a `send` message, e.g. turn_detection = \"${null}\"");
        return None;
    }
    Some(t)
}

fn template(cx: &mut Cx<'_>, v: &Val<'_>, extra: &[&str]) -> Option<Template> {
    let json = to_json(cx, v)?;
    let fields = cx.defaults.item_fields.clone();
    let check = |name: &str| -> Result<(), String> {
        if SESSION_VARS.contains(&name) || extra.contains(&name) {
            return Ok(());
        }
        if let Some(field) = name.strip_prefix(ITEM_PREFIX) {
            return match &fields {
                None => Err(format!(
                    "`${{{name}}}` reads the dataset item, but `[workload] dataset` is not set"
                )),
                Some(f) if f.iter().any(|x| x == field) => Ok(()),
                Some(f) => Err(format!(
                    "not every dataset item has field `{field}`; fields every item has: {}",
                    f.join(", ")
                )),
            };
        }
        let known = SESSION_VARS.iter().chain(extra).copied();
        let hint = closest(name, known)
            .map(|c| format!("did you mean `${{{c}}}`? "))
            .unwrap_or_default();
        let stream_only = if CHUNK_VARS.contains(&name) {
            " (chunk variables exist only in a `stream` template)"
        } else {
            ""
        };
        Err(format!(
            "unknown template variable `${{{name}}}`{stream_only}; {hint}variables: {}, item.<field>; in a `stream` template also {}",
            SESSION_VARS.join(", "),
            CHUNK_VARS.join(", ")
        ))
    };
    match Template::compile(&json, &check) {
        Ok(t) => Some(t),
        Err(e) => {
            let (span, inner) = locate(v, &e.path);
            let s = inner.get_ref().as_str().unwrap_or_default();
            // Point into the string when its source spelling has no escapes.
            let start = if span.len() == s.len() + 2 {
                span.start + 1 + e.offset
            } else {
                span.start
            };
            cx.err(start..start + 1, e.msg);
            None
        }
    }
}

mod metrics;
mod names;
mod values;

use metrics::metric_def;
use names::Names;
use values::{float, int, locate, to_json};

#[cfg(test)]
mod tests;
