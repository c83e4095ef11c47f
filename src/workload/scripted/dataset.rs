//! The items sessions use: a directory of WAV files (sorted by name, each with an
//! optional `<name>.txt` reference text beside it) or a JSONL manifest of
//! `{"audio": "path.wav", ...}` lines whose other fields become `${item.<field>}`. A
//! manifest line may have no `audio` (`{"text": "hello"}`): a text-only item, fine for a
//! script that streams nothing (the workload refuses it when a step streams). Listing
//! reads only WAV headers (at load); [`load_pcm`] decodes, downmixes and resamples to the
//! script's rate before timing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use serde_json::Value;

/// One dataset item before decoding.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemSpec {
    /// The WAV file (`None`: a text-only manifest line).
    pub audio: Option<PathBuf>,
    /// Template fields: `name`, `file`, `duration_ms` (items with audio), `text` when
    /// known, manifest fields.
    pub fields: BTreeMap<String, Value>,
    /// Where it was listed: the WAV path, or `manifest:line`.
    pub origin: String,
}

/// List the items at `path` (a directory of `.wav` files or a `.jsonl` manifest).
pub fn discover(path: &Path) -> Result<Vec<ItemSpec>, String> {
    let items = if path.is_dir() {
        from_dir(path)?
    } else if path.is_file() {
        from_manifest(path)?
    } else {
        return Err(format!(
            "dataset {} does not exist; point `dataset` at a directory of WAV files or a JSONL manifest (relative to the scenario file)",
            path.display()
        ));
    };
    if items.is_empty() {
        return Err(format!(
            "dataset {} has no items (.wav files or manifest lines)",
            path.display()
        ));
    }
    Ok(items)
}

fn from_dir(dir: &Path) -> Result<Vec<ItemSpec>, String> {
    let read = std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    let mut wavs: Vec<PathBuf> = read
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("wav")))
        .collect();
    wavs.sort();
    wavs.into_iter()
        .map(|audio| {
            let mut fields = BTreeMap::new();
            let txt = audio.with_extension("txt");
            if txt.is_file() {
                let text = std::fs::read_to_string(&txt)
                    .map_err(|e| format!("cannot read {}: {e}", txt.display()))?;
                fields.insert("text".to_string(), Value::String(text.trim().to_string()));
            }
            item(audio, fields)
        })
        .collect()
}

/// The first item without audio (a `stream` step needs every item's), as an error.
pub fn require_audio(items: &[ItemSpec]) -> Result<(), String> {
    match items.iter().find(|i| i.audio.is_none()) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{}: no \"audio\", but a `stream` step streams each item's audio; add \"audio\": \"path.wav\" (relative to the manifest) to every line, or remove the `stream` step for a text-only script",
            i.origin
        )),
    }
}

fn from_manifest(path: &Path) -> Result<Vec<ItemSpec>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let at = format!("{}:{}", path.display(), i + 1);
        let v: Value =
            serde_json::from_str(line).map_err(|e| format!("{at}: not a JSON object: {e}"))?;
        let Value::Object(map) = v else {
            return Err(format!(
                "{at}: each line must be a JSON object like {{\"audio\": \"a.wav\", \"text\": \"...\"}}"
            ));
        };
        let audio = match map.get("audio") {
            None => None,
            Some(Value::String(a)) => Some(base.join(a)),
            Some(other) => {
                return Err(format!(
                    "{at}: \"audio\" must be the WAV path as a string, relative to the manifest (got {other})"
                ));
            }
        };
        let fields: BTreeMap<String, Value> =
            map.into_iter().filter(|(k, _)| k != "audio").collect();
        let spec = match audio {
            Some(a) => item(a, fields).map_err(|e| format!("{at}: {e}"))?,
            None => ItemSpec {
                audio: None,
                fields,
                origin: at.clone(),
            },
        };
        out.push(ItemSpec { origin: at, ..spec });
    }
    Ok(out)
}

fn item(audio: PathBuf, mut fields: BTreeMap<String, Value>) -> Result<ItemSpec, String> {
    let reader = hound::WavReader::open(&audio)
        .map_err(|e| format!("{}: not a readable WAV file ({e})", audio.display()))?;
    let spec = reader.spec();
    let ms = u64::from(reader.duration()) * 1000 / u64::from(spec.sample_rate.max(1));
    let stem = audio
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file = audio
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    fields.entry("name".into()).or_insert(Value::String(stem));
    fields.entry("file".into()).or_insert(Value::String(file));
    fields
        .entry("duration_ms".into())
        .or_insert(Value::from(ms));
    Ok(ItemSpec {
        origin: audio.display().to_string(),
        audio: Some(audio),
        fields,
    })
}

/// Fields every item has (what `${item.<field>}` may name).
pub fn common_fields(items: &[ItemSpec]) -> Vec<String> {
    let Some(first) = items.first() else {
        return Vec::new();
    };
    first
        .fields
        .keys()
        .filter(|k| items.iter().all(|i| i.fields.contains_key(*k)))
        .cloned()
        .collect()
}

/// Decode `path` to PCM16 mono little-endian at `rate` Hz (channels averaged, linear
/// resampling).
pub fn load_pcm(path: &Path, rate: u32) -> Result<Bytes, String> {
    let mut reader =
        hound::WavReader::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    crate::util::wav::to_pcm16_mono(&mut reader, rate)
        .map(Bytes::from)
        .map_err(|e| format!("{}: cannot decode: {e}", path.display()))
}

#[cfg(test)]
#[path = "dataset_tests.rs"]
mod tests;
