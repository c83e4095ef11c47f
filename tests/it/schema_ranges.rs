//! The schema's numeric ranges are the parser's: for every numeric key of `[load]`,
//! `[target]`, `[server]` (and its endpoint tables) and each workload kind's `[workload]`,
//! values around its schema bounds (and 0, ±1) are checked with `rtload check`'s
//! validation; a value the schema refuses must be refused at that key, and one it allows
//! must raise no error there. So a range stated in a description (which the schema reads)
//! and the parser's check cannot drift apart in either direction.

use std::path::{Path, PathBuf};

use rtload::scenario::{self, Overrides, ScenarioError};
use serde_json::Value;

/// The shipped scenarios, copied with their data into a temp dir; probe files go there.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    copy_dir(&src, dir.path());
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// Follows a `$ref` into `$defs`.
fn resolve<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    match node.get("$ref").and_then(Value::as_str) {
        Some(r) => &root["$defs"][r.rsplit('/').next().unwrap()],
        None => node,
    }
}

/// A numeric key's schema bounds, with its integer format's own limits.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    int: bool,
    min: Option<(f64, bool)>,
    max: Option<(f64, bool)>,
    multiple: Option<f64>,
}

impl Bounds {
    fn of(prop: &Value) -> Option<Bounds> {
        let f = |k: &str| prop.get(k).and_then(Value::as_f64);
        let int = prop["type"] == "integer";
        let number_or_inf = prop.get("x-number-or-inf").is_some();
        if !(int || prop["type"] == "number" || number_or_inf) {
            return None;
        }
        let format_max = match prop["format"].as_str() {
            Some("uint32") => Some(f64::from(u32::MAX)),
            _ => None,
        };
        Some(Bounds {
            int,
            min: f("exclusiveMinimum")
                .map(|v| (v, true))
                .or(f("minimum").map(|v| (v, false))),
            max: f("exclusiveMaximum")
                .map(|v| (v, true))
                .or(f("maximum").map(|v| (v, false)))
                .or(format_max.map(|v| (v, false))),
            multiple: f("multipleOf"),
        })
    }

    fn allows(&self, v: f64) -> bool {
        let above = self
            .min
            .is_none_or(|(m, open)| if open { v > m } else { v >= m });
        let below = self
            .max
            .is_none_or(|(m, open)| if open { v < m } else { v <= m });
        let multiple = self.multiple.is_none_or(|m| (v / m).fract() == 0.0);
        above && below && multiple
    }

    /// 0, ±1 and the values on and next to each bound (within what TOML can hold).
    fn probes(&self) -> Vec<f64> {
        let step = |m: f64| {
            if self.int {
                1.0
            } else {
                (m.abs() * 1e-3).max(1e-3)
            }
        };
        let mut v = vec![-1.0, 0.0, 1.0];
        for (m, _) in self.min.into_iter().chain(self.max) {
            v.extend([m - step(m), m, m + step(m)]);
        }
        if let Some(m) = self.multiple {
            v.push(m + 1.0);
        }
        v.retain(|x| x.abs() < 9.2e18);
        v.dedup();
        v
    }
}

/// Each numeric key under `section` (a TOML key path) with its bounds.
fn numeric_keys(root: &Value, props: &Value) -> Vec<(String, Bounds)> {
    props
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, p)| Bounds::of(&merged(root, p)).map(|b| (k.clone(), b)))
        .collect()
}

/// A property with its `$ref` target's keys merged under its own (bounds sit beside a
/// `$ref` for number-or-"inf" keys).
fn merged(root: &Value, p: &Value) -> Value {
    let mut out = p.clone();
    if let (Some(o), Some(t)) = (out.as_object_mut(), resolve(root, p).as_object()) {
        let numeric = |s: &Value| s["type"] == "number" || s["type"] == "integer";
        if p.get("$ref").is_some()
            && t.get("anyOf")
                .and_then(Value::as_array)
                .is_some_and(|a| a.iter().any(numeric))
        {
            // A number or "inf": the bounds beside the `$ref` constrain its numbers.
            o.insert("x-number-or-inf".into(), true.into());
            return out;
        }
        for (k, v) in t {
            o.entry(k.clone()).or_insert(v.clone());
        }
    }
    out
}

/// Errors of checking `base` with `path` (table keys) set to `v`, and where the key sits.
fn check_with(
    dir: &Path,
    base: &toml::Table,
    path: &[&str],
    v: f64,
    int: bool,
) -> (Vec<ScenarioError>, String, PathBuf) {
    let mut doc = base.clone();
    let mut t = &mut doc;
    for k in &path[..path.len() - 1] {
        t = t
            .entry(k.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .unwrap();
    }
    let value = if int {
        toml::Value::Integer(v as i64)
    } else {
        toml::Value::Float(v)
    };
    t.insert(path[path.len() - 1].to_string(), value);
    let text = toml::to_string(&doc).unwrap();
    let file = dir.join("probe.toml");
    std::fs::write(&file, &text).unwrap();
    let errors = scenario::check(&file, &Overrides::default())
        .err()
        .unwrap_or_default();
    (errors, text, file)
}

/// The 1-based line of the value at `path` in `text` as `toml::to_string` lays it out:
/// the key's line under its `[table]` header (read here, not with rtload's positions).
fn value_line(text: &str, path: &[&str]) -> usize {
    let (key, tables) = path.split_last().unwrap();
    let header = format!("[{}]", tables.join("."));
    let mut in_table = tables.is_empty();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.starts_with('[') {
            in_table = line == header;
        } else if in_table && line.split('=').next().map(str::trim) == Some(*key) {
            return i + 1;
        }
    }
    panic!("no {} in\n{text}", path.join("."))
}

/// Whether an error is about the value at `path` in `text`.
fn at_key(errors: &[ScenarioError], text: &str, path: &[&str]) -> bool {
    let line = value_line(text, path);
    errors.iter().any(|e| match e {
        ScenarioError::At { line: l, .. } => *l == line,
        _ => false,
    })
}

/// Keys whose parser also checks them against another key, which no schema range says:
/// only values outside their range are probed (those must be refused).
const RELATIONAL: &[&str] = &[
    // At most the rollout's chunk count.
    "workload.playback_buffer_chunks",
];

/// `base` arranged so `path` is in use: a ramp bound is read only under a ramp strategy
/// (and never with a fixed rate); the other bound is put where it cannot conflict. The
/// barge-in's range top and speech length need its offset (at 0, below any top).
fn in_use(base: &toml::Table, path: &[&str]) -> toml::Table {
    let mut b = base.clone();
    if let ["workload", "barge_in_after_max_ms" | "barge_in_speech_ms"] = path {
        let w = b["workload"].as_table_mut().unwrap();
        w.insert("barge_in_after_ms".into(), toml::Value::Float(0.0));
        return b;
    }
    let other = match path {
        ["load", "ramp_up_start_rps"] => ("ramp_up_end_rps", 1e9),
        ["load", "ramp_up_end_rps"] => ("ramp_up_start_rps", 0.0),
        _ => return b,
    };
    let load = b["load"].as_table_mut().unwrap();
    load.remove("request_rate");
    load.insert("ramp_up_strategy".into(), "linear".into());
    load.insert(other.0.into(), toml::Value::Float(other.1));
    b
}

fn probe_section(
    dir: &Path,
    base: &toml::Table,
    root: &Value,
    at: &[&str],
    props: &Value,
    probed: &mut usize,
) -> Vec<String> {
    let mut wrong = Vec::new();
    for (key, b) in numeric_keys(root, props) {
        *probed += 1;
        let mut path: Vec<&str> = at.to_vec();
        path.push(&key);
        let relational = RELATIONAL.contains(&path.join(".").as_str());
        let base = in_use(base, &path);
        for v in b
            .probes()
            .into_iter()
            .filter(|v| !(relational && b.allows(*v)))
        {
            let (errors, text, _) = check_with(dir, &base, &path, v, b.int);
            let refused = at_key(&errors, &text, &path);
            if refused == b.allows(v) {
                let said: Vec<String> = errors.iter().map(ToString::to_string).collect();
                wrong.push(format!(
                    "[{}] = {v}: schema {} it, the parser {} ({b:?}) {said:?}",
                    path.join("."),
                    if b.allows(v) { "allows" } else { "refuses" },
                    if refused { "refuses" } else { "allows" },
                ));
            }
        }
    }
    wrong
}

#[test]
fn every_schema_range_is_the_parsers_range() {
    let dir = workspace();
    let root = rtload::scenario::scenario_schema().to_value();
    let base = |name: &str| -> toml::Table {
        toml::from_str(&std::fs::read_to_string(dir.path().join(name)).unwrap()).unwrap()
    };
    let video = base("video-quickstart.toml");
    let props = |node: &Value| resolve(&root, node)["properties"].clone();
    let mut wrong = Vec::new();
    let mut probed = 0;
    let server = props(&root["properties"]["server"]);
    let sections: Vec<(Vec<&str>, Value)> = vec![
        (vec!["load"], props(&root["properties"]["load"])),
        (vec!["target"], props(&root["properties"]["target"])),
        (vec!["server"], server.clone()),
        (vec!["server", "video"], props(&server["video"])),
        (vec!["server", "duplex"], props(&server["duplex"])),
        (
            vec!["server", "transcription"],
            props(&server["transcription"]),
        ),
        (
            vec!["server", "video", "faults"],
            props(&props(&server["video"])["faults"]),
        ),
        (
            vec!["server", "duplex", "faults"],
            props(&props(&server["duplex"])["faults"]),
        ),
    ];
    // `[load]` on a kind that holds sessions, so `duration_s` is in use.
    let omni = base("omniinteract.toml");
    for (at, p) in &sections {
        assert!(!p.as_object().unwrap().is_empty(), "{at:?}");
        let base = if at == &["load"] { &omni } else { &video };
        wrong.extend(probe_section(dir.path(), base, &root, at, p, &mut probed));
    }
    let kinds = resolve(&root, &root["properties"]["workload"])["allOf"].clone();
    for (kind, file) in [
        ("video-cadence", "video-quickstart.toml"),
        ("omniinteract", "omniinteract.toml"),
        ("realtime-transcription", "transcription.toml"),
        ("scripted", "scripted-transcription.toml"),
    ] {
        let branch = kinds
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["if"]["properties"]["kind"]["const"] == kind)
            .unwrap_or_else(|| panic!("no branch for {kind}"));
        let base = base(file);
        let props = &branch["then"]["properties"];
        wrong.extend(probe_section(
            dir.path(),
            &base,
            &root,
            &["workload"],
            props,
            &mut probed,
        ));
    }
    assert!(probed >= 70, "only {probed} numeric keys probed");
    assert!(
        wrong.is_empty(),
        "{} disagreements:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
