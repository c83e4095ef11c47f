//! The command-line flags a recorded run was given over its scenario file, as the
//! manifest keeps them (`scenario.flags`: `load`, the `[load]` flags as the `[load]` keys
//! they set, TOML-typed with `"inf"` for infinity; `workload`, each workload flag as
//! typed, its values scrubbed like every recorded text) and the run's effective `[load]`
//! table (`scenario.load`: the file's with the flags applied). `rtload report
//! --recompute` applies the flags again; `rtload run --replay` keeps the effective
//! table's arrival keys.

use serde_json::{Map, Value, json};

use crate::config::scenario::{LoadOverrides, WorkloadFlag};

/// The `[load]` flags `ov` gives, as the `[load]` keys they set.
pub(super) fn load_keys(ov: &LoadOverrides) -> Map<String, Value> {
    let mut m = Map::new();
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            m.insert(k.into(), v);
        }
    };
    let num = |x: f64| match x.is_finite() {
        true => json!(x),
        false => json!("inf"),
    };
    put("samples", ov.num_prompts.map(|n| json!(n)));
    put("warmup_samples", ov.num_warmups.map(|n| json!(n)));
    put(
        "request_rate",
        ov.request_rate
            .as_ref()
            .map(|r| match r.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => json!(x),
                _ => json!(r),
            }),
    );
    put("burstiness", ov.burstiness.map(num));
    put("max_concurrency", ov.max_concurrency.map(|n| json!(n)));
    put("seed", ov.seed.map(|n| json!(n)));
    put(
        "ramp_up_strategy",
        ov.ramp_up_strategy.as_ref().map(|s| json!(s)),
    );
    put("ramp_up_start_rps", ov.ramp_up_start_rps.map(num));
    put("ramp_up_end_rps", ov.ramp_up_end_rps.map(num));
    put("duration_s", ov.duration_s.map(num));
    put("series_interval_s", ov.series_interval_s.map(num));
    m
}

/// The manifest's `scenario.flags` and `scenario.load` for a run of the scenario file
/// `text` given `flags`; `scrub` scrubs a workload flag's values.
pub(super) fn manifest_keys(
    text: &str,
    (load, workload): (&LoadOverrides, &[WorkloadFlag]),
    scrub: impl Fn(&str) -> String,
) -> (Value, Value) {
    let given = load_keys(load);
    let workload: Vec<Value> = (workload.iter())
        .map(|f| json!({"flag": f.flag, "values": f.values.iter().map(|v| scrub(v)).collect::<Vec<_>>()}))
        .collect();
    let mut effective = text
        .parse::<toml::Table>()
        .ok()
        .and_then(|d| d.get("load").cloned())
        .and_then(|l| serde_json::to_value(l).ok())
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default();
    effective.extend(given.clone());
    (
        json!({"load": given, "workload": workload}),
        Value::Object(effective),
    )
}

/// The flags a manifest's `scenario.flags` holds (none in a recording made before it
/// kept them), or what is wrong with them.
pub(super) fn from_manifest(flags: &Value) -> Result<(LoadOverrides, Vec<WorkloadFlag>), String> {
    let load = &flags["load"];
    let count = |k: &str| -> Result<Option<usize>, String> {
        load.get(k)
            .map(|v| {
                (v.as_u64().and_then(|n| usize::try_from(n).ok()))
                    .ok_or_else(|| format!("`scenario.flags.load.{k}` is not a count (got {v})"))
            })
            .transpose()
    };
    let num = |k: &str| -> Result<Option<f64>, String> {
        load.get(k)
            .map(|v| match v {
                Value::String(s) if s.eq_ignore_ascii_case("inf") => Ok(f64::INFINITY),
                _ => (v.as_f64())
                    .ok_or_else(|| format!("`scenario.flags.load.{k}` is not a number (got {v})")),
            })
            .transpose()
    };
    let text = |k: &str| -> Option<String> {
        load.get(k).map(|v| match v {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        })
    };
    let ov = LoadOverrides {
        num_prompts: count("samples")?,
        num_warmups: count("warmup_samples")?,
        request_rate: text("request_rate"),
        burstiness: num("burstiness")?,
        max_concurrency: count("max_concurrency")?,
        seed: (load.get("seed"))
            .map(|v| {
                (v.as_u64())
                    .ok_or_else(|| format!("`scenario.flags.load.seed` is not a seed (got {v})"))
            })
            .transpose()?,
        ramp_up_strategy: text("ramp_up_strategy"),
        ramp_up_start_rps: num("ramp_up_start_rps")?,
        ramp_up_end_rps: num("ramp_up_end_rps")?,
        duration_s: num("duration_s")?,
        series_interval_s: num("series_interval_s")?,
    };
    let workload = (flags["workload"].as_array().into_iter().flatten())
        .map(|f| {
            let flag = f["flag"]
                .as_str()
                .ok_or("a `scenario.flags.workload` entry without `flag`")?;
            let values = (f["values"].as_array().into_iter().flatten())
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .ok_or("a workload flag value that is not text")
                })
                .collect::<Result<_, _>>()?;
            Ok(WorkloadFlag {
                flag: flag.to_string(),
                values,
            })
        })
        .collect::<Result<_, &str>>()
        .map_err(str::to_string)?;
    Ok((ov, workload))
}

#[cfg(test)]
#[path = "recorded_flags_tests.rs"]
mod tests;
