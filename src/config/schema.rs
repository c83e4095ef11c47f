//! The JSON Schema of the scenario format (`rtload schema`), derived with `schemars` from
//! the types the parser deserializes (`RawScenario`, `RawLoad`, each workload's params,
//! `ServerConfig`). Only `[thresholds]` and `[sweep]`, which have hand-written parsers,
//! describe their shape here; those parsers' tests and the schema test keep them in step.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::Value;

/// The scenario schema as pretty JSON.
pub fn scenario_schema_json() -> String {
    serde_json::to_string_pretty(&scenario_schema()).unwrap_or_default()
}

/// The scenario schema.
pub fn scenario_schema() -> Schema {
    schemars::schema_for!(crate::config::scenario::RawScenario)
}

/// `[workload]`: one of the registered kinds, chosen by `kind`.
pub struct WorkloadSchema;

impl JsonSchema for WorkloadSchema {
    fn schema_name() -> Cow<'static, str> {
        "Workload".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let kinds: Vec<Value> = crate::config::registry::registry()
            .iter()
            .map(|k| (k.schema)(g).to_value())
            .collect();
        json_schema!({ "oneOf": kinds })
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
