//! `[workload.metrics]` entries: an expression string or `{ expr, unit, better,
//! description, per }`, parsed with positions; every mark and event name it reads is
//! checked against the scenario's [`Names`], each error pointing at the name.

use std::borrow::Cow;
use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::{Cx, Names, Val};
use crate::util::template::closest;
use crate::workload::scripted::metric::{self, Kind};
use crate::workload::scripted::script::MetricDef;

/// Longest expression text quoted in an error.
const QUOTE: usize = 80;

/// Names every scripted result reports itself (session counts).
const RESERVED: [&str; 2] = ["completed", "failed"];

/// The metric `k = v` of `[workload.metrics]`: an expression string or a table with
/// `expr` and optional `unit`, `better`, `description`, `per`; the names it reads must
/// be `known`; problems go to `cx`.
pub(super) fn metric_def(
    cx: &mut Cx<'_>,
    k: &Spanned<Cow<'_, str>>,
    v: &Val<'_>,
    known: &Names,
) -> Option<MetricDef> {
    let name = k.get_ref().to_string();
    if let Some(msg) = bad_name(&name) {
        cx.err(k.span(), msg);
        return None;
    }
    let (expr_v, t) = expr_and_table(cx, &name, v)?;
    let Some(text) = expr_v.get_ref().as_str() else {
        cx.err(expr_v.span(), "`expr` must be a string");
        return None;
    };
    let (expr, kind) = match metric::parse(text) {
        Ok(x) => x,
        Err(e) => {
            let at = inside(expr_v.span(), text, e.offset);
            cx.err(at, format!("metric `{name}` = {}: {}", quote(text), e.msg));
            return None;
        }
    };
    let mut bad = !names_ok(cx, &name, &expr, known, expr_v.span(), text);
    let str_key = |cx: &mut Cx<'_>, key: &str| -> Option<String> {
        let v = t?.get(key)?;
        match v.get_ref().as_str() {
            Some(s) => Some(s.to_string()),
            None => {
                cx.err(v.span(), format!("`{key}` must be a string"));
                None
            }
        }
    };
    let unit = str_key(cx, "unit").unwrap_or_else(|| match kind {
        Kind::Duration | Kind::Series => "ms".into(),
        _ => String::new(),
    });
    let better = str_key(cx, "better");
    let lower_is_better = lower_is_better(cx, better.as_deref(), kind, t, v);
    let description = str_key(cx, "description");
    let per = str_key(cx, "per");
    if let (Some(p), Some(t)) = (&per, t)
        && let Err(msg) = known.check_mark(&name, p)
    {
        cx.err(t.get("per").map_or(v.span(), |x| x.span()), msg);
        bad = true;
    }
    if bad {
        return None;
    }
    Some(MetricDef {
        name,
        text: text.to_string(),
        expr,
        kind,
        unit,
        lower_is_better,
        description,
        per,
    })
}

/// Whether every name `expr` (of metric `name`, written as `text` at `span`) reads is
/// known, and every event it reads fields of is recorded with its message; problems go
/// to `cx` at the name.
fn names_ok(
    cx: &mut Cx<'_>,
    name: &str,
    expr: &metric::Expr,
    known: &Names,
    span: Range<usize>,
    text: &str,
) -> bool {
    let mut ok = true;
    for r in expr.refs() {
        let check = if r.mark {
            known.check_mark(name, r.name)
        } else {
            known.check_event(name, r.name)
        };
        if let Err(msg) = check {
            cx.err(inside(span.clone(), text, r.offset), msg);
            ok = false;
        }
    }
    for (e, _) in expr.fields() {
        if let Err(msg) = known.check_field_event(name, e) {
            let at = expr
                .refs()
                .iter()
                .find(|r| r.name == e)
                .map_or(0, |r| r.offset);
            cx.err(inside(span.clone(), text, at), msg);
            ok = false;
        }
    }
    ok
}

/// Why `name` cannot name a metric (bad characters, or a name every scripted result
/// already reports), or `None` when it can.
fn bad_name(name: &str) -> Option<String> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Some(format!(
            "metric name `{name}` must be letters, digits and `_` (e.g. ttft_ms)"
        ));
    }
    if RESERVED.contains(&name) {
        let which = if name == "completed" {
            "completed"
        } else {
            "failed"
        };
        return Some(format!(
            "metric name `{name}` is taken: every scripted result reports `{name}` itself \
             (the sessions that {which}); choose another name, e.g. `{name}_turns`"
        ));
    }
    None
}

/// A metric's expression value and, for the table form, its table; errors (unknown key,
/// missing `expr`, wrong type) are pushed and give `None`.
fn expr_and_table<'a, 'b>(
    cx: &mut Cx<'_>,
    name: &str,
    v: &'a Val<'b>,
) -> Option<(&'a Val<'b>, Option<&'a DeTable<'b>>)> {
    match v.get_ref() {
        DeValue::String(_) => Some((v, None)),
        DeValue::Table(t) => {
            for key in t.keys() {
                let kk = key.get_ref().as_ref();
                if !["expr", "unit", "better", "description", "per"].contains(&kk) {
                    let hint = closest(kk, ["expr", "unit", "better", "description", "per"])
                        .map(|c| format!("did you mean `{c}`? "))
                        .unwrap_or_default();
                    cx.err(key.span(), format!("unknown key `{kk}` in metric `{name}`; {hint}its keys are: expr, unit, better, description, per"));
                }
            }
            match t.get("expr") {
                Some(e) => Some((e, Some(t))),
                None => {
                    cx.err(v.span(), format!("metric `{name}` needs `expr`, e.g. {{ expr = \"first(E) - mark(M)\", unit = \"ms\", better = \"lower\" }}"));
                    None
                }
            }
        }
        _ => {
            cx.err(
                v.span(),
                format!(
                    "metric `{name}` must be an expression string or a table with `expr`; {}",
                    metric::FORM
                ),
            );
            None
        }
    }
}

/// Whether lower is better for a metric of `kind` given its `better` key (default: lower
/// for durations and series, no direction otherwise); a bad value is pushed as an error.
fn lower_is_better(
    cx: &mut Cx<'_>,
    better: Option<&str>,
    kind: Kind,
    t: Option<&DeTable<'_>>,
    v: &Val<'_>,
) -> Option<bool> {
    match better {
        None => matches!(kind, Kind::Duration | Kind::Series).then_some(true),
        Some("lower") => Some(true),
        Some("higher") => Some(false),
        Some("none") => None,
        Some(other) => {
            let span = t
                .and_then(|t| t.get("better"))
                .map_or(v.span(), |b| b.span());
            cx.err(
                span,
                format!("`better` must be \"lower\", \"higher\" or \"none\" (got {other:?})"),
            );
            None
        }
    }
}

/// The span of byte `offset` of string value `text` whose source is `span`: inside the
/// quotes when the source spelling has no escapes, else the whole value.
fn inside(span: Range<usize>, text: &str, offset: usize) -> Range<usize> {
    let start = if span.len() == text.len() + 2 {
        span.start + 1 + offset
    } else {
        span.start
    };
    start..start + 1
}

/// `text` quoted for an error, shortened when long.
fn quote(text: &str) -> String {
    if text.chars().count() <= QUOTE {
        return format!("{text:?}");
    }
    let head: String = text.chars().take(QUOTE).collect();
    format!("{head:?}… ({} bytes)", text.len())
}
