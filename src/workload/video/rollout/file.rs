//! The reference's JSON rollout file format (§6.3), parsed strictly.

use std::path::Path;

use serde_json::{Map, Value};

#[allow(clippy::wildcard_imports)]
use super::*;

/// Keys a JSON workload file may hold (§6.3).
const FILE_KEYS: [&str; 14] = [
    "prompt",
    "image",
    "image_reference",
    "num_chunks",
    "camera_pattern",
    "camera_action_script",
    "width",
    "height",
    "fps",
    "seed",
    "flow_shift",
    "negative_prompt",
    "prompt_updates",
    "extra_params",
];
/// Keys a prompt-update entry may hold.
const UPDATE_KEYS: [&str; 3] = ["after_chunk", "prompt", "transition_chunks"];

/// The draft rollout of the JSON rollout file at `path`: `opts.image` (else the file's
/// image, resolved against `base_dir`) and `opts.negative_prompt` win over the file; a
/// built-in-only option in `opts` (`num_chunks`, `camera_pattern`) is an error.
pub(super) fn from_file(
    opts: &RolloutOptions,
    base_dir: &Path,
    path: &Path,
) -> Result<Draft, RolloutError> {
    if opts.num_chunks.is_some() {
        return Err(RolloutError::BuiltinOnly { key: "num_chunks" });
    }
    if opts.camera_pattern.is_some() {
        return Err(RolloutError::BuiltinOnly {
            key: "camera_pattern",
        });
    }
    let doc = read_object(path)?;
    check_keys(&doc, &FILE_KEYS, "")?;
    let f = FileFields(&doc);

    let (script, camera_pattern) = file_script(&doc, &f)?;

    let image = match &opts.image {
        Some(v) => resolve_image(v, base_dir)?,
        None => file_image(&f, base_dir, path)?,
    };

    let updates = match doc.get("prompt_updates") {
        None => Vec::new(),
        Some(Value::Array(entries)) => parse_updates(entries)?,
        Some(_) => {
            return Err(RolloutError::FieldType {
                key: "prompt_updates".into(),
                expected: "a list of objects",
            });
        }
    };
    let extra_params = match doc.get("extra_params") {
        None => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err(RolloutError::ExtraParamsNotObject),
    };

    let negative_prompt = match &opts.negative_prompt {
        Some(v) => Some(v.clone()),
        None => f.string("negative_prompt")?.map(str::to_string),
    };
    let prompt = match &opts.prompt {
        Some(v) => v.clone(),
        None => f.string("prompt")?.unwrap_or(DEFAULT_PROMPT).to_string(),
    };
    let int_or = |opt: Option<u32>, key: &str, default: u32| -> Result<i64, RolloutError> {
        Ok(match opt {
            Some(v) => v.into(),
            None => f.int(key)?.unwrap_or(default.into()),
        })
    };
    Ok(Draft {
        prompt,
        image,
        script,
        camera_pattern,
        width: int_or(opts.width, "width", DEFAULT_WIDTH)?,
        height: int_or(opts.height, "height", DEFAULT_HEIGHT)?,
        fps: int_or(opts.fps, "fps", DEFAULT_FPS)?,
        seed: match opts.seed {
            Some(v) => v,
            None => f.int("seed")?.unwrap_or(DEFAULT_SEED),
        },
        flow_shift: match opts.flow_shift {
            Some(v) => v,
            None => f.number("flow_shift")?.unwrap_or(DEFAULT_FLOW_SHIFT),
        },
        negative_prompt,
        updates,
        extra_params,
    })
}

/// A camera-action script, as [`parse_script`] returns it.
type Script = Vec<[Vec<String>; 3]>;

/// The file's camera-action script and its pattern name: the given script, or one
/// built from `num_chunks` and `camera_pattern`.
fn file_script(
    doc: &Map<String, Value>,
    f: &FileFields<'_>,
) -> Result<(Script, String), RolloutError> {
    Ok(match doc.get("camera_action_script") {
        Some(v) => (parse_script(v)?, CUSTOM_CAMERA_PATTERN.to_string()),
        None => {
            let n = f
                .int("num_chunks")?
                .ok_or(RolloutError::NeedsScriptOrChunks)?;
            let pattern = f
                .string("camera_pattern")?
                .unwrap_or(DEFAULT_CAMERA_PATTERN);
            let n = u32::try_from(n).map_err(|_| RolloutError::NumChunks)?;
            (camera_script(n, pattern)?, pattern.to_string())
        }
    })
}

/// The JSON object in the file at `path`, with its null values dropped.
fn read_object(path: &Path) -> Result<Map<String, Value>, RolloutError> {
    let text = std::fs::read_to_string(path).map_err(|source| RolloutError::ReadFile {
        path: path.to_path_buf(),
        source,
    })?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| RolloutError::Json {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let Value::Object(mut doc) = doc else {
        return Err(RolloutError::NotAnObject);
    };
    // A JSON null means "not given", as for the reference's `merged.get(...) is None`.
    doc.retain(|_, v| !v.is_null());
    Ok(doc)
}

/// The file's `image` (or `image_reference`), resolved next to the file; empty means none.
fn file_image(
    f: &FileFields<'_>,
    base_dir: &Path,
    path: &Path,
) -> Result<(String, String), RolloutError> {
    let file_image = f.string("image")?.filter(|s| !s.is_empty());
    let value = match file_image {
        Some(v) => Some(v),
        None => f.string("image_reference")?,
    };
    let value = value.ok_or(RolloutError::NeedsImage)?;
    if value.is_empty() {
        Ok((String::new(), String::new()))
    } else {
        resolve_image(value, path.parent().unwrap_or(base_dir))
    }
}

/// Reject keys outside `known`; `prefix` names the enclosing entry in the message.
fn check_keys(obj: &Map<String, Value>, known: &[&str], prefix: &str) -> Result<(), RolloutError> {
    match obj.keys().find(|k| !known.contains(&k.as_str())) {
        None => Ok(()),
        Some(key) => Err(RolloutError::UnknownKey {
            key: format!("{prefix}{key}"),
            expected: format!(
                "[{}]",
                known
                    .iter()
                    .map(|k| format!("'{k}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
    }
}

/// Typed access to a workload file's (null-free) top-level keys.
struct FileFields<'a>(&'a Map<String, Value>);

impl<'a> FileFields<'a> {
    fn string(&self, key: &str) -> Result<Option<&'a str>, RolloutError> {
        self.0.get(key).map(|v| as_str(v, key)).transpose()
    }
    fn int(&self, key: &str) -> Result<Option<i64>, RolloutError> {
        self.0.get(key).map(|v| as_int(v, key)).transpose()
    }
    fn number(&self, key: &str) -> Result<Option<f64>, RolloutError> {
        self.0
            .get(key)
            .map(|v| {
                v.as_f64().ok_or_else(|| RolloutError::FieldType {
                    key: key.into(),
                    expected: "a number",
                })
            })
            .transpose()
    }
}

fn as_str<'a>(v: &'a Value, key: &str) -> Result<&'a str, RolloutError> {
    v.as_str().ok_or_else(|| RolloutError::FieldType {
        key: key.into(),
        expected: "a string",
    })
}

/// An integer, also accepting integral floats such as `16.0` (the reference calls `int()`).
fn as_int(v: &Value, key: &str) -> Result<i64, RolloutError> {
    let integral = v.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15);
    v.as_i64()
        .or(integral.map(|f| f as i64))
        .ok_or_else(|| RolloutError::FieldType {
            key: key.into(),
            expected: "an integer",
        })
}

fn parse_script(v: &Value) -> Result<Vec<[Vec<String>; 3]>, RolloutError> {
    let Value::Array(chunks) = v else {
        return Err(RolloutError::ScriptNotList);
    };
    let mut script = Vec::with_capacity(chunks.len());
    for (i, chunk) in chunks.iter().enumerate() {
        let Value::Array(frames) = chunk else {
            return Err(RolloutError::ScriptEntryNotList(i));
        };
        if frames.len() != 3 {
            return Err(RolloutError::ScriptEntryLen {
                chunk: i,
                got: frames.len(),
            });
        }
        let mut out: [Vec<String>; 3] = Default::default();
        for (j, frame) in frames.iter().enumerate() {
            let Value::Array(actions) = frame else {
                return Err(RolloutError::ScriptFrameNotList(i, j));
            };
            out[j] = actions
                .iter()
                .map(|a| a.as_str().map(str::to_string))
                .collect::<Option<_>>()
                .ok_or(RolloutError::ScriptFrameNotStrings(i, j))?;
        }
        script.push(out);
    }
    if script.is_empty() {
        return Err(RolloutError::ScriptEmpty);
    }
    Ok(script)
}

fn parse_updates(entries: &[Value]) -> Result<Vec<(i64, String, i64)>, RolloutError> {
    let mut out = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let key = |k: &str| format!("prompt_updates[{i}].{k}");
        let Value::Object(obj) = entry else {
            return Err(RolloutError::FieldType {
                key: format!("prompt_updates[{i}]"),
                expected: "an object with after_chunk, prompt and transition_chunks",
            });
        };
        check_keys(obj, &UPDATE_KEYS, &format!("prompt_updates[{i}]."))?;
        let required = |k: &str, expected| RolloutError::FieldType {
            key: key(k),
            expected,
        };
        let after = match obj.get("after_chunk").filter(|v| !v.is_null()) {
            Some(v) => as_int(v, &key("after_chunk"))?,
            None => return Err(required("after_chunk", "given (an integer)")),
        };
        let prompt = match obj.get("prompt").filter(|v| !v.is_null()) {
            Some(v) => as_str(v, &key("prompt"))?.to_string(),
            None => return Err(required("prompt", "given (a string)")),
        };
        let transition = match obj.get("transition_chunks").filter(|v| !v.is_null()) {
            Some(v) => as_int(v, &key("transition_chunks"))?,
            None => DEFAULT_TRANSITION_CHUNKS.into(),
        };
        if after < 0 {
            return Err(RolloutError::UpdateAfterNegative);
        }
        if prompt.trim().is_empty() {
            return Err(RolloutError::UpdateBlankPrompt);
        }
        if transition < 0 {
            return Err(RolloutError::UpdateTransitionNegative);
        }
        out.push((after, prompt, transition));
    }
    Ok(out)
}
