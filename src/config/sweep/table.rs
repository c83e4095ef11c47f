//! The scenario's `[sweep]` table: TOML with spans in, a validated [`Sweep`] out, every
//! problem positioned (file:line:col) with its fix.

use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

use super::{Lit, Origin, SAMPLES_PER_SLOT, Sweep, SweepParam, check_order, check_value};
use crate::config::scenario::MAX_SAMPLES;
use crate::util::scenario_doc::Section;
use crate::util::scenario_error::ScenarioError;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSweep {
    param: Option<Spanned<String>>,
    values: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    headline: Option<Spanned<String>>,
    samples_per_point: Option<Spanned<toml::Value>>,
}

/// Parse a scenario's optional `[sweep]` table:
/// `param = "max_concurrency" | "request_rate"`, `values = [...]` (strictly increasing;
/// `inf` or `"inf"` allowed for `request_rate`), optional `headline = "metric"`.
/// `Ok(None)` when there is no `[sweep]`. Every problem is returned, positioned.
pub fn parse_table(section: &Section<'_>) -> Result<Option<Sweep>, Vec<ScenarioError>> {
    let doc = section.doc();
    let src = doc.src();
    let at = |span: Range<usize>, msg: String| doc.at(span, msg);
    let Some(value) = section.value() else {
        return Ok(None);
    };
    if !value.get_ref().is_table() {
        let msg = format!(
            "`sweep` must be a table (got {}); write it as `[sweep]`",
            value.get_ref().type_str()
        );
        return Err(vec![at(value.span(), msg)]);
    }
    let table: Spanned<RawSweep> = section.deserialize().map_err(|e| vec![e])?;
    let header = table.span();
    let raw = table.into_inner();
    let mut errors = Vec::new();
    let param = sweep_param(raw.param.as_ref(), &header, &at, &mut errors);
    let headline = raw.headline.and_then(|h| {
        if h.get_ref().trim().is_empty() {
            errors.push(at(
                h.span(),
                "`headline` must name a metric; use e.g. `headline = \"ttft_ms.p99\"` or \
                 leave it out"
                    .into(),
            ));
            return None;
        }
        Some(h.into_inner())
    });
    let samples_per_point = samples_per_point(raw.samples_per_point, src, &at, &mut errors);
    let values = match (raw.values, param) {
        (None, _) => {
            errors.push(at(
                header,
                format!(
                    "[sweep] needs `values`; add e.g. {}",
                    param
                        .unwrap_or(SweepParam::MaxConcurrency)
                        .example(Origin::File)
                ),
            ));
            None
        }
        (Some(_), None) => None,
        (Some(vs), Some(param)) => file_values(param, vs, src, &at, &mut errors),
    };
    match (param, values) {
        (Some(param), Some(values)) if errors.is_empty() => Ok(Some(Sweep {
            param,
            values,
            headline,
            samples_per_point,
        })),
        _ => Err(errors),
    }
}

/// The `param` of a `[sweep]` table (spanning `header`), pushing an error when it is
/// missing or unknown.
fn sweep_param(
    raw_param: Option<&Spanned<String>>,
    header: &Range<usize>,
    at: &dyn Fn(Range<usize>, String) -> ScenarioError,
    errors: &mut Vec<ScenarioError>,
) -> Option<SweepParam> {
    match raw_param {
        None => {
            errors.push(at(
                header.clone(),
                "[sweep] needs `param`; add `param = \"max_concurrency\"` or \
             `param = \"request_rate\"`"
                    .into(),
            ));
            None
        }
        Some(p) => SweepParam::from_name(p.get_ref()).or_else(|| {
            errors.push(at(
                p.span(),
                format!(
                    "unknown sweep param \"{}\"; use \"max_concurrency\" or \"request_rate\"",
                    p.get_ref()
                ),
            ));
            None
        }),
    }
}

/// The optional `samples_per_point` of a `[sweep]` table, pushing an error when it is not
/// an integer in `[0, MAX_SAMPLES]`.
fn samples_per_point(
    raw: Option<Spanned<toml::Value>>,
    src: &str,
    at: &dyn Fn(Range<usize>, String) -> ScenarioError,
    errors: &mut Vec<ScenarioError>,
) -> Option<usize> {
    raw.and_then(|v| {
        let n = v
            .get_ref()
            .as_integer()
            .filter(|n| (0..=MAX_SAMPLES).contains(n));
        if n.is_none() {
            let text = src.get(v.span()).unwrap_or("?");
            errors.push(at(
                v.span(),
                format!(
                    "`samples_per_point` value `{text}` must be an integer in [0, {MAX_SAMPLES}]; \
                 use e.g. `samples_per_point = 32`, `0` to run every point with the \
                 scenario's `samples`, or leave it out for {SAMPLES_PER_SLOT} × concurrency"
                ),
            ));
        }
        n.map(|n| n as usize)
    })
}

fn file_values(
    param: SweepParam,
    vs: Spanned<Vec<Spanned<toml::Value>>>,
    src: &str,
    at: &dyn Fn(Range<usize>, String) -> ScenarioError,
    errors: &mut Vec<ScenarioError>,
) -> Option<Vec<f64>> {
    if vs.get_ref().is_empty() {
        let eg = param.example(Origin::File);
        errors.push(at(
            vs.span(),
            format!("`values` needs at least one value; use e.g. {eg}"),
        ));
        return None;
    }
    let before = errors.len();
    let mut values = Vec::new();
    let mut texts = Vec::new();
    let mut spans = Vec::new();
    for v in vs.into_inner() {
        let span = v.span();
        let text = src.get(span.clone()).unwrap_or("?");
        let lit = match v.get_ref() {
            toml::Value::Integer(n) => Lit::Int(*n),
            toml::Value::Float(f) => Lit::Float(*f),
            toml::Value::String(s) => Lit::Text(s),
            _ => Lit::Other,
        };
        match check_value(param, lit, text, Origin::File) {
            Ok(x) => values.push(x),
            Err(msg) => errors.push(at(span.clone(), msg)),
        }
        texts.push(text);
        spans.push(span);
    }
    if errors.len() > before {
        return None;
    }
    if let Some((i, msg)) = check_order(param, &values, &texts, Origin::File) {
        errors.push(at(spans[i].clone(), msg));
        return None;
    }
    Some(values)
}
