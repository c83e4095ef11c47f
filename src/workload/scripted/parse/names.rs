//! The names a metric expression may read: marks the steps set; event names declared
//! under `[workload.events]` or given to an `await`; and message `type`s the scenario
//! itself mentions (in `await`/`until`/`fail_on`/`[workload.events]` patterns, or in the
//! messages its `[server.scripted]` rules send). Anything else is refused at load with a
//! close match and the declaration that fixes it, so a typo never reaches a run.

use toml::de::{DeTable, DeValue};

use crate::util::textpos::close_matches;
use crate::workload::scripted::script::{Action, Script};

/// Known names of one scenario.
#[derive(Debug, Default)]
pub(super) struct Names {
    /// Marks set by steps.
    pub marks: Vec<String>,
    /// `[workload.events]` names and named awaits.
    pub events: Vec<String>,
    /// Message types the scenario mentions.
    pub types: Vec<String>,
    /// Names only an `await` gives (no `[workload.events]` entry of that name).
    pub await_only: Vec<String>,
}

impl Names {
    /// The names `script` (steps, fail_on, events) and the scenario `doc` know.
    pub fn of(script: &Script, doc: &DeTable<'_>) -> Names {
        let mut n = Names::default();
        let ty = |m: &crate::util::jsonmatch::Matcher| {
            m.field("type")
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
        };
        for s in &script.steps {
            match &s.action {
                Action::Mark(m) => push(&mut n.marks, m.clone()),
                Action::Await {
                    matcher,
                    name,
                    until,
                    ..
                } => {
                    if let Some(name) = name {
                        push(&mut n.events, name.clone());
                    }
                    for t in std::iter::once(matcher).chain(until).filter_map(ty) {
                        push(&mut n.types, t);
                    }
                }
                _ => {}
            }
        }
        n.await_only = n.events.clone();
        n.await_only
            .retain(|a| !script.events.iter().any(|(name, _)| name == a));
        for (name, m) in &script.events {
            push(&mut n.events, name.clone());
            if let Some(t) = ty(m) {
                push(&mut n.types, t);
            }
        }
        for t in script.fail_on.iter().filter_map(ty) {
            push(&mut n.types, t);
        }
        server_types(doc, &mut n.types);
        n
    }

    /// `Err(message)` when no step sets mark `m`.
    pub fn check_mark(&self, metric: &str, m: &str) -> Result<(), String> {
        if self.marks.iter().any(|x| x == m) {
            return Ok(());
        }
        let hint = hint(m, self.marks.iter());
        Err(format!(
            "metric `{metric}` reads mark `{m}`, which no step sets; {hint}add a step `mark = \"{m}\"`"
        ))
    }

    /// `Err(message)` when field functions (`lag`, `repeats`, `descents`, `seen`) cannot
    /// read event `e`: a name only an `await` gives is recorded without its message.
    pub fn check_field_event(&self, metric: &str, e: &str) -> Result<(), String> {
        if self.await_only.iter().any(|a| a == e) && !self.types.iter().any(|t| t == e) {
            return Err(format!(
                "metric `{metric}` reads fields of `{e}`, an await's name; lag, repeats, \
                 descents and seen read [workload.events] names or message types: declare \
                 `{e}` under [workload.events] with the await's pattern"
            ));
        }
        Ok(())
    }

    /// `Err(message)` when event `e` is neither declared, an await's name, nor a type
    /// the scenario mentions.
    pub fn check_event(&self, metric: &str, e: &str) -> Result<(), String> {
        if self.events.iter().chain(&self.types).any(|x| x == e) {
            return Ok(());
        }
        let hint = hint(e, self.events.iter().chain(&self.types));
        let key = if e
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        {
            e.to_string()
        } else {
            format!("{e:?}")
        };
        Err(format!(
            "metric `{metric}` reads event `{e}`, which is not a [workload.events] name, a named `await`, or a message type this scenario mentions; {hint}if the server sends messages of type {e:?}, declare it under [workload.events] as `{key} = {{ type = {e:?} }}`"
        ))
    }
}

fn push(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) {
        v.push(s);
    }
}

fn hint<'a>(name: &str, known: impl Iterator<Item = &'a String>) -> String {
    let known: Vec<&str> = known.map(String::as_str).collect();
    match close_matches(name, &known).first() {
        Some(c) => format!("did you mean `{c}`? "),
        None => String::new(),
    }
}

/// Literal `type`s of the messages `[server.scripted]` sends (`on_connect` and every
/// rule's `do`: each action's `send` or `stream`, a message or a list).
fn server_types(doc: &DeTable<'_>, out: &mut Vec<String>) {
    let sc = doc
        .get("server")
        .and_then(|s| s.get_ref().as_table())
        .and_then(|s| s.get("scripted"))
        .and_then(|s| s.get_ref().as_table());
    let Some(sc) = sc else {
        return;
    };
    let mut actions = list(sc.get("on_connect").map(|v| v.get_ref()));
    for rule in list(sc.get("rules").map(|v| v.get_ref())) {
        if let DeValue::Table(r) = rule {
            actions.extend(list(r.get("do").map(|v| v.get_ref())));
        }
    }
    for action in actions {
        let DeValue::Table(a) = action else { continue };
        let sent = list(a.get("send").map(|v| v.get_ref()));
        for msg in sent
            .into_iter()
            .chain(list(a.get("stream").map(|v| v.get_ref())))
        {
            let t = match msg {
                DeValue::Table(m) => m.get("type").and_then(|t| t.get_ref().as_str()),
                _ => None,
            };
            if let Some(t) = t.filter(|t| !t.contains("${")) {
                push(out, t.to_string());
            }
        }
    }
}

/// A value that may be one item or a list of them.
fn list<'a, 'i>(v: Option<&'a DeValue<'i>>) -> Vec<&'a DeValue<'i>> {
    match v {
        Some(DeValue::Array(a)) => a.iter().map(|x| x.get_ref()).collect(),
        Some(other) => vec![other],
        None => Vec::new(),
    }
}
