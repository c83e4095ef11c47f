//! The JSON Schema of the scenario format (`rtload schema`), derived with `schemars` from
//! the types the parser deserializes (`RawScenario`, `RawLoad`, each workload's params,
//! `ServerConfig`). Only `[thresholds]` and `[sweep]`, which have hand-written parsers,
//! describe their shape here; those parsers' tests and the schema test keep them in step.
//!
//! Made for third-party validators (check-jsonschema, taplo) to name the bad key:
//! `[workload]` is discriminated by `kind` (`if kind == K then K's keys`, so an error is
//! reported against the kind the file names, not the closest of all kinds); a key's
//! numeric range is stated once, in its description, and [`range`] turns that sentence
//! into `minimum`/`maximum`/`exclusiveMinimum`; TOML has no null, so an optional key
//! is just its type.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Map, Value};

pub(crate) mod range;

/// The scenario schema as pretty JSON.
pub fn scenario_schema_json() -> String {
    serde_json::to_string_pretty(&scenario_schema()).unwrap_or_default()
}

/// The scenario schema.
pub fn scenario_schema() -> Schema {
    let mut v = schemars::schema_for!(crate::config::scenario::RawScenario).to_value();
    tidy(&mut v);
    Schema::try_from(v).unwrap_or_default()
}

/// Every subschema: `null` dropped from optional keys, ranges from descriptions.
fn tidy(v: &mut Value) {
    match v {
        Value::Object(obj) => {
            drop_null(obj);
            if let Some(Value::Object(props)) = obj.get_mut("properties") {
                for p in props.values_mut().filter_map(Value::as_object_mut) {
                    with_range(p);
                }
            }
            obj.values_mut().for_each(tidy);
        }
        Value::Array(items) => items.iter_mut().for_each(tidy),
        _ => {}
    }
}

/// `"type": ["integer", "null"]` → `"integer"`; `anyOf: [X, {"type": "null"}]` → X.
fn drop_null(obj: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = obj.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            obj.insert("type".into(), only);
        }
    }
    let is_null = |s: &Value| s.get("type").is_some_and(|t| t == "null");
    if let Some(Value::Array(any)) = obj.get_mut("anyOf")
        && any.iter().any(is_null)
    {
        any.retain(|s| !is_null(s));
        if any.len() == 1 {
            let Some(Value::Object(only)) = obj
                .remove("anyOf")
                .and_then(|mut a| a.as_array_mut().and_then(|a| a.pop()))
            else {
                return;
            };
            for (k, v) in only {
                obj.entry(k).or_insert(v);
            }
        }
    }
}

/// A numeric key's range from its description.
fn with_range(p: &mut Map<String, Value>) {
    let numeric = |t: &Value| t == "integer" || t == "number";
    let typed = match p.get("type") {
        Some(Value::Array(ts)) => ts.iter().any(numeric),
        Some(t) => numeric(t),
        // A number-or-"inf" key: the bounds constrain its numbers only.
        None => p.contains_key("$ref") || p.contains_key("anyOf"),
    };
    let r = match p.get("description").and_then(Value::as_str) {
        Some(d) if typed => range::from_description(d),
        _ => return,
    };
    if !r.is_empty() {
        r.apply(p);
    }
}

/// `[workload]`: `kind` names a registered kind, whose keys then apply.
pub struct WorkloadSchema;

impl JsonSchema for WorkloadSchema {
    fn schema_name() -> Cow<'static, str> {
        "Workload".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let kinds = crate::config::registry::registry();
        let names: Vec<&str> = kinds.iter().map(|k| k.name).collect();
        let branches: Vec<Value> = kinds
            .iter()
            .map(|k| {
                let mut then = (k.schema)(g).to_value();
                if let Some(obj) = then.as_object_mut() {
                    obj.insert("title".into(), format!("kind = \"{}\"", k.name).into());
                }
                serde_json::json!({
                    "if": {"properties": {"kind": {"const": k.name}}, "required": ["kind"]},
                    "then": then,
                })
            })
            .collect();
        json_schema!({
            "type": "object",
            "required": ["kind"],
            "properties": {
                "kind": {"enum": names, "description": "The workload kind; the other keys are its own."}
            },
            "allOf": branches,
        })
    }
}

/// A workload's params schema with `kind` pinned to its registered name.
pub fn kind_schema<T: JsonSchema>(g: &mut SchemaGenerator, kind: &str) -> Schema {
    let mut s = T::json_schema(g);
    if let Some(obj) = s.as_object_mut() {
        if let Some(Value::Object(props)) = obj.get_mut("properties") {
            props.insert(
                "kind".into(),
                serde_json::json!({"const": kind, "description": "workload kind"}),
            );
        }
        let required = obj
            .entry("required")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(r) = required
            && !r.iter().any(|v| v == "kind")
        {
            r.push(Value::from("kind"));
        }
    }
    s
}

/// `[thresholds]`: metric name → `"<op> <number>"`.
pub struct ThresholdsSchema;

impl JsonSchema for ThresholdsSchema {
    fn schema_name() -> Cow<'static, str> {
        "Thresholds".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "description": "metric name (e.g. \"ttft_ms.p99\") → condition (e.g. \"< 500\")",
            "additionalProperties": {
                "anyOf": [
                    {"type": "string", "pattern": "^\\s*(<=|>=|==|!=|<|>)\\s*[-+0-9.eE]+\\s*$"},
                    {"type": "object", "additionalProperties": {"type": "string"}}
                ]
            }
        })
    }
}

/// `[sweep]`.
pub struct SweepSchema;

impl JsonSchema for SweepSchema {
    fn schema_name() -> Cow<'static, str> {
        "Sweep".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "additionalProperties": false,
            "required": ["param", "values"],
            "properties": {
                "param": {"enum": ["max_concurrency", "request_rate"]},
                "values": {"type": "array", "minItems": 1, "items": {"anyOf": [{"type": "number"}, {"const": "inf"}]}},
                "headline": {"type": "string", "description": "metric featured in the table and plot"}
            }
        })
    }
}
