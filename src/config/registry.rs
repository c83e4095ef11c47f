//! The composition root: every workload kind rtload knows. The only file outside
//! `src/workload/` that names kinds; adding a workload is one entry here.

use std::path::Path;

use crate::workload::catalogue::Catalogue;
use crate::workload::{
    DatasetSynth, SynthOptions, WorkloadKind, omni, scripted, transcription, video,
};

/// Every workload kind rtload knows, by name.
pub fn registry() -> &'static [WorkloadKind] {
    &[
        WorkloadKind {
            name: video::KIND,
            summary: "LingBot-World realtime video cadence (/v1/realtime/video)",
            build: video::build,
            flags: video::FLAGS,
            flag_heading: "Video cadence workload",
            dataset: None,
            schema: |g| crate::config::schema::kind_schema::<video::VideoParams>(g, video::KIND),
            families: video::names::FAMILIES,
            headline: video::names::HEADLINE,
            aliases: video::names::ALIASES,
            holds_sessions: false,
        },
        WorkloadKind {
            name: omni::KIND,
            summary: "OmniInteract duplex speech benchmark (/v1/realtime)",
            build: omni::build,
            flags: omni::workload::FLAGS,
            flag_heading: "OmniInteract workload",
            dataset: Some(DatasetSynth {
                name: "omniinteract",
                write: omni_dataset,
            }),
            schema: |g| {
                crate::config::schema::kind_schema::<omni::workload::OmniParams>(g, omni::KIND)
            },
            families: omni::report::FAMILIES,
            headline: omni::report::HEADLINE,
            aliases: omni::report::ALIASES,
            holds_sessions: true,
        },
        WorkloadKind {
            name: transcription::KIND,
            summary: "vLLM realtime speech-to-text (/v1/realtime)",
            build: transcription::build,
            flags: transcription::workload::FLAGS,
            flag_heading: "Realtime transcription workload",
            dataset: Some(DatasetSynth {
                name: "transcription",
                write: transcription_dataset,
            }),
            schema: |g| {
                crate::config::schema::kind_schema::<transcription::workload::TranscriptionParams>(
                    g,
                    transcription::KIND,
                )
            },
            families: transcription::metrics::FAMILIES,
            headline: transcription::metrics::HEADLINE,
            aliases: transcription::metrics::ALIASES,
            holds_sessions: false,
        },
        WorkloadKind {
            name: scripted::KIND,
            summary: "any JSON-over-WebSocket protocol described as steps in the scenario",
            build: scripted::build,
            flags: scripted::workload::FLAGS,
            flag_heading: "Scripted workload",
            dataset: None,
            schema: |g| {
                crate::config::schema::kind_schema::<scripted::workload::ScriptedParams>(
                    g,
                    scripted::KIND,
                )
            },
            families: scripted::report::FAMILIES,
            headline: scripted::report::HEADLINE,
            aliases: &[],
            holds_sessions: false,
        },
    ]
}

/// Every test dataset `rtload dataset synth` can write, in registry order (the first is
/// the default).
pub fn datasets() -> Vec<DatasetSynth> {
    registry().iter().filter_map(|k| k.dataset).collect()
}

/// The OmniInteract layout (1q1a, 1q1a_math, 1qna) and a reference voice.
fn omni_dataset(dir: &Path, o: &SynthOptions) -> Result<Vec<String>, String> {
    let opts = omni::dataset::SynthOptions {
        seed: o.seed,
        cases_per_subset: o.cases_per_subset,
        duration_ms: o.duration_ms,
        tar: o.tar,
        mp4: o.mp4,
    };
    let r = omni::dataset::synth(dir, &opts).map_err(|e| e.to_string())?;
    let mut lines = vec![
        format!(
            "wrote {} cases ({} frames each) under {}",
            r.cases,
            r.frames_per_case,
            r.data_dir.display()
        ),
        format!("reference audio: {}", r.ref_audio.display()),
    ];
    lines.extend(r.archive.map(|t| format!("archive: {}", t.display())));
    Ok(lines)
}

/// WAV files with reference transcripts the embedded server transcribes exactly.
fn transcription_dataset(dir: &Path, o: &SynthOptions) -> Result<Vec<String>, String> {
    let opts = transcription::synth::SynthOptions {
        files: o.files,
        words: o.words,
        sample_rate: o.sample_rate,
        words_per_second: o.words_per_second,
        seed: o.seed,
    };
    let r = transcription::synth::synth(dir, &opts)?;
    Ok(vec![format!(
        "wrote {} audio files ({:.1} s each, with .txt references) under {}",
        r.files.len(),
        r.seconds_per_file,
        dir.display()
    )])
}

/// The metric catalogue of a result document: its own `rtload.metrics_catalogue`, or,
/// for a file written before the catalogue existed, the first registered kind whose
/// families declare every name in `names` (the file's metrics). `None` when no kind
/// declares them all: the caller then treats every metric as not a score.
///
/// A file written before `rtload.charts` gets the charts of the kind that wrote it
/// (`rtload.workload`, else the kind found by its metrics); they draw what the file has
/// of the blocks they read.
pub fn result_catalogue(doc: &serde_json::Value, names: &[&str]) -> Option<Catalogue> {
    let workload = doc.pointer("/rtload/workload").and_then(|w| w.as_str());
    let (cat, kind) = match Catalogue::from_result(doc) {
        Some(c) => (c, workload),
        None => {
            let k = registry()
                .iter()
                .find(|k| !names.is_empty() && names.iter().all(|n| k.declares(n)))?;
            let c = Catalogue::reading(names, k.families, k.headline, k.aliases);
            (c, Some(workload.unwrap_or(k.name)))
        }
    };
    if cat.declares_charts() {
        return Some(cat);
    }
    Some(match kind.and_then(kind_charts) {
        Some(charts) => cat.with_charts(charts),
        None => cat,
    })
}

/// The charts a built-in kind declares (what its results carry as `rtload.charts`).
fn kind_charts(kind: &str) -> Option<Vec<crate::workload::catalogue::Chart>> {
    Some(match kind {
        video::KIND => video::names::charts(),
        omni::KIND => omni::report::catalogue(&[]).charts(),
        transcription::KIND => transcription::report::charts(),
        scripted::KIND => scripted::report::charts(),
        _ => return None,
    })
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
