//! `rtload run --record DIR`, before the run: the record directory is created (and must
//! be empty), the run's [`Recording`] is built with every upgrade header value as a
//! secret to scrub, and the manifest's caller keys are read (untimed): `scenario`
//! (`path`, `name`, `sha256` of the file, `text`: the file scrubbed like every recorded
//! text, `flags`: the `[load]` and workload flags given over it, `load`: the effective
//! `[load]` table, see `recorded_flags`; all `null` for a scenario built in code), `inputs` (every file a `[workload]`
//! string names, relative to the scenario — a directory's files one by one, up to
//! [`MAX_INPUT_FILES`] — with `sha256` and `bytes`, then every file a path-typed workload
//! flag named, relative to the current directory (`relative_to: "cwd"`); files a dataset
//! manifest names in turn are not listed), `target` (`url` redacted, `headers_sent`: names only) and `run`
//! (`request_id_prefix`, `measured_indices`: what each session's context was made
//! from; the engine adds `interrupted`). The engine
//! writes the traces and completes the manifest (`engine::record`).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::RunError;
use crate::config::scenario::Scenario;
use crate::engine::record::{
    self, DEFAULT_MAX_BLOB_BYTES, DEFAULT_MAX_EVENTS_PER_SESSION, RecordCaps, RecordTo, Recording,
};
use crate::workload::FlagKind;

/// Files a `[workload]` directory may contribute to the manifest's inputs.
const MAX_INPUT_FILES: usize = 10_000;

/// What `--record` asks for: where, and under which caps.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The record directory (created; must be empty).
    pub dir: PathBuf,
    /// Events written per session (`--record-max-events`).
    pub max_events_per_session: u64,
    /// Distinct payload bytes stored per run (`--record-max-bytes`).
    pub max_blob_bytes: u64,
}

impl Record {
    /// Recording into `dir` under the default caps.
    pub fn new(dir: impl Into<PathBuf>) -> Record {
        Record {
            dir: dir.into(),
            max_events_per_session: DEFAULT_MAX_EVENTS_PER_SESSION,
            max_blob_bytes: DEFAULT_MAX_BLOB_BYTES,
        }
    }
}

/// Creates the record directory (it must be empty: two runs' traces never mix), builds
/// the run's recording and the manifest's `scenario`, `inputs`, `target` and `run` (the
/// request-id prefix and this run's `(measured index, offset)`s: `mine`), read before the
/// run, untimed. `None` when the run does not record.
pub(super) fn prepare(
    rec: Option<&Record>,
    scenario: &Scenario,
    url: &str,
    (request_id_prefix, mine): (&str, &[(usize, f64)]),
) -> Result<Option<RecordTo>, RunError> {
    let Some(rec) = rec else {
        return Ok(None);
    };
    let fail = |msg: String| RunError::Output {
        path: rec.dir.clone(),
        msg,
    };
    if in_use(&rec.dir) {
        return Err(fail(
            "--record: the directory is not empty; choose a new or empty directory".into(),
        ));
    }
    for sub in ["sessions", "blobs"] {
        std::fs::create_dir_all(rec.dir.join(sub)).map_err(|e| fail(e.to_string()))?;
    }
    let mut headers = scenario.headers().to_vec();
    if let (_, Some(basic)) = crate::util::target::split_user_info(url) {
        headers.push(("Authorization".into(), basic));
    }
    let caps = RecordCaps {
        max_events_per_session: rec.max_events_per_session,
        max_blob_bytes: rec.max_blob_bytes,
    };
    let recording = Recording::new(caps, &headers);
    let mut head = scenario_block(scenario, &recording).map_err(fail)?;
    let names: Vec<&String> = scenario.headers().iter().map(|(k, _)| k).collect();
    head.insert(
        "target".into(),
        json!({"url": crate::util::target::redact_url(url), "headers_sent": names}),
    );
    let measured: Vec<usize> = mine.iter().map(|m| m.0).collect();
    let run = json!({"request_id_prefix": request_id_prefix, "measured_indices": measured});
    head.insert("run".into(), run);
    Ok(Some(RecordTo {
        dir: rec.dir.clone(),
        recording,
        head,
    }))
}

/// The manifest's `run.start_unix_s`: the run's clock origin in Unix time (the result's
/// `.hlog` start), known only once the engine is about to start.
pub(super) fn stamp_start(to: Option<&mut RecordTo>, run_start_unix_s: f64) {
    if let Some(Value::Object(run)) = to.and_then(|r| r.head.get_mut("run")) {
        run.insert("start_unix_s".into(), run_start_unix_s.into());
    }
}

/// Whether `dir` holds anything but the empty `sessions/` and `blobs/` a run that stopped
/// before its first session leaves behind.
fn in_use(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|d| {
        d.flatten().any(|e| {
            let sub = e.file_name() == "sessions" || e.file_name() == "blobs";
            !(sub && std::fs::read_dir(e.path()).is_ok_and(|mut s| s.next().is_none()))
        })
    })
}

/// The manifest's `scenario` and `inputs`: the file (scrubbed) and every file its
/// `[workload]` strings name, hashed.
fn scenario_block(scenario: &Scenario, r: &Recording) -> Result<Map<String, Value>, String> {
    let path = scenario.path();
    let mut m = Map::new();
    if path.as_os_str().is_empty() {
        m.insert(
            "scenario".into(),
            json!({"path": null, "name": scenario.name(), "text": null}),
        );
        m.insert("inputs".into(), json!([]));
        return Ok(m);
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    let base = path.parent().unwrap_or(Path::new("."));
    let mut inputs = Vec::new();
    if let Ok(doc) = text.parse::<toml::Table>()
        && let Some(w) = doc.get("workload")
    {
        named_files(w, "workload", base, &mut inputs);
    }
    flag_files(scenario, &|v| r.scrub_text(v), &mut inputs);
    let (flags, load) =
        super::recorded_flags::manifest_keys(&text, scenario.applied_flags(), |v| r.scrub_text(v));
    let block = json!({
        "path": r.scrub_text(&path.display().to_string()),
        "name": scenario.name(),
        "sha256": record::hex(&Sha256::digest(&bytes)),
        "text": r.scrub_text(&text),
        "flags": flags,
        "load": load,
    });
    m.insert("scenario".into(), block);
    m.insert("inputs".into(), Value::Array(inputs));
    Ok(m)
}

/// Every existing file (or directory's files) a string under `v` names, relative to
/// `base`, as `{"key", "path", "sha256", "bytes"}`.
fn named_files(v: &toml::Value, key: &str, base: &Path, out: &mut Vec<Value>) {
    match v {
        toml::Value::String(s) if !s.is_empty() && !s.contains("://") => {
            let p = base.join(s);
            let mut files = Vec::new();
            collect(&p, &mut files);
            for f in files {
                if out.len() >= MAX_INPUT_FILES {
                    return;
                }
                if let Ok((sha256, bytes)) = hash_file(&f) {
                    let shown = f.strip_prefix(base).unwrap_or(&f).display().to_string();
                    out.push(json!({"key": key, "path": shown, "sha256": sha256, "bytes": bytes}));
                }
            }
        }
        toml::Value::Table(t) => {
            for (k, v) in t {
                named_files(v, &format!("{key}.{k}"), base, out);
            }
        }
        toml::Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                named_files(v, &format!("{key}[{i}]"), base, out);
            }
        }
        _ => {}
    }
}

/// Every existing file (or directory's files) a path-typed workload flag named, relative
/// to the current directory as the flag was, as `{"key": "--FLAG", "path", "sha256",
/// "bytes", "relative_to": "cwd"}` (a `--dataset` given over the file is checked by a
/// recompute like the file's own `dataset`).
fn flag_files(scenario: &Scenario, scrub: &dyn Fn(&str) -> String, out: &mut Vec<Value>) {
    let kind = scenario.workload().kind();
    let Some(kind) = crate::config::registry::registry()
        .iter()
        .find(|k| k.name == kind)
    else {
        return;
    };
    for f in scenario.applied_flags().1 {
        let is_path = kind
            .flag(&f.flag)
            .is_some_and(|s| matches!(s.kind, FlagKind::Path | FlagKind::UrlOrPath));
        for v in f.values.iter().filter(|v| is_path && !v.contains("://")) {
            let mut files = Vec::new();
            collect(Path::new(v), &mut files);
            for file in files {
                if out.len() >= MAX_INPUT_FILES {
                    return;
                }
                if let Ok((sha256, bytes)) = hash_file(&file) {
                    let shown = scrub(&file.display().to_string());
                    out.push(json!({"key": format!("--{}", f.flag), "path": shown,
                        "sha256": sha256, "bytes": bytes, "relative_to": "cwd"}));
                }
            }
        }
    }
}

/// The sha256 (hex) and length of the file at `p`, read in pieces.
fn hash_file(p: &Path) -> std::io::Result<(String, u64)> {
    use std::io::Read as _;
    let mut f = std::fs::File::open(p)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut n = 0u64;
    loop {
        match f.read(&mut buf)? {
            0 => return Ok((record::hex(&h.finalize()), n)),
            k => {
                h.update(&buf[..k]);
                n += k as u64;
            }
        }
    }
}

/// `p` if it is a file, or every file under it (sorted), up to [`MAX_INPUT_FILES`].
fn collect(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_file() {
        out.push(p.to_path_buf());
    } else if let Ok(rd) = std::fs::read_dir(p) {
        let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for e in entries {
            if out.len() >= MAX_INPUT_FILES {
                return;
            }
            collect(&e, out);
        }
    }
}
