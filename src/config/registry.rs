//! The composition root: every workload kind rtload knows. The only file outside
//! `src/workload/` that names kinds; adding a workload is one entry here.

use std::path::Path;

use crate::workload::catalogue::Catalogue;
use crate::workload::{
    DatasetSynth, SynthOptions, WorkloadKind, omni, replay, scripted, transcription, video,
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
        REPLAY,
    ]
}

/// The scenario of `rtload run --replay DIR`: the recording at `dir` replayed as a
/// `replay` workload with the recorded run's arrival and concurrency keys (its
/// manifest's effective `scenario.load`, else `scenario.text`'s), `ov` applied (the target comes from there). Writes
/// nothing. An error names the recording's file and the fix.
pub fn replay_scenario(
    dir: &Path,
    ov: &crate::config::scenario::Overrides,
) -> Result<crate::config::scenario::Scenario, Vec<crate::util::scenario_error::ScenarioError>> {
    use crate::util::scenario_error::ScenarioError;
    let trace = crate::engine::record::read::Trace::open(dir).map_err(|e| {
        vec![ScenarioError::file(
            dir,
            format!("not a readable recording: {e}; --replay takes a directory written by `rtload run SCENARIO --record DIR`"),
        )]
    })?;
    let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let recorded = trace
        .manifest
        .pointer("/scenario/text")
        .and_then(|t| t.as_str());
    let effective = trace.manifest.pointer("/scenario/load");
    let text = replay::scenario_text(&abs, recorded, effective);
    // No file: the scenario is built here, like one built in code (no path, no text).
    crate::config::scenario::parse(Path::new(""), &text, ov)
}

/// A recording's measured sessions as the replay kind takes them: read by the one trace
/// reader, each client message's payload loaded from the store (checked against its
/// digest).
fn read_recording(dir: &Path) -> Result<replay::workload::Recording, String> {
    use crate::engine::record::read::{Dir, Kind, Trace};
    use replay::plan::{RecordedEvent, RecordedSession, What, label};
    let trace = Trace::open(dir).map_err(|e| e.to_string())?;
    let mut sessions = Vec::new();
    for s in trace.measured() {
        let mut events = Vec::with_capacity(s.events.len());
        for ev in &s.events {
            let from_client = ev.dir == Dir::Out;
            let what = match ev.kind {
                Kind::Open => What::Open,
                Kind::Close => What::Close,
                Kind::Other | Kind::Wake | Kind::Failed => continue,
                Kind::Text | Kind::Binary => {
                    let binary = ev.kind == Kind::Binary;
                    let payload = match from_client {
                        false => None,
                        true => Some(outbound(trace.payload(ev), binary, &s.path)?),
                    };
                    let label = label(ev.ty.as_deref(), binary);
                    What::Message { label, payload }
                }
            };
            events.push(RecordedEvent {
                t_s: ev.t_s,
                intended_s: ev.intended_s,
                from_client,
                what,
            });
        }
        let name = s.path.display().to_string();
        sessions.push(RecordedSession { name, events });
    }
    let target_path = (trace
        .manifest
        .pointer("/target/url")
        .and_then(|u| u.as_str()))
    .and_then(url_path);
    Ok(replay::workload::Recording {
        sessions,
        target_path,
    })
}

/// The path of a URL (`ws://host:port/v1/realtime?x` → `/v1/realtime`), if it has one.
fn url_path(url: &str) -> Option<String> {
    let rest = &url[url.find("://")? + 3..];
    let path = &rest[rest.find('/')?..];
    let path = &path[..path.find(['?', '#']).unwrap_or(path.len())];
    (path.len() > 1).then(|| path.to_string())
}

/// A recorded client payload as the message to send again.
fn outbound(
    payload: Result<Option<bytes::Bytes>, crate::engine::record::read::TraceError>,
    binary: bool,
    session: &Path,
) -> Result<crate::workload::Outbound, String> {
    use crate::workload::{ByteString, Outbound};
    let bytes = payload
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("{}: a client message without a sha256", session.display()))?;
    if binary {
        return Ok(Outbound::Binary(bytes));
    }
    ByteString::try_from(bytes)
        .map(Outbound::Text)
        .map_err(|_| format!("{}: a text payload that is not UTF-8", session.display()))
}

/// The replay kind: its recording read by the engine's trace reader ([`read_recording`]).
const REPLAY: WorkloadKind = WorkloadKind {
    name: replay::KIND,
    summary: "the client side of a recording (--record DIR) replayed at its recorded cadence",
    build: |input| replay::build(input, read_recording),
    flags: replay::workload::FLAGS,
    flag_heading: "Replay workload",
    dataset: None,
    schema: |g| {
        crate::config::schema::kind_schema::<replay::workload::ReplayParams>(g, replay::KIND)
    },
    families: replay::report::FAMILIES,
    headline: replay::report::HEADLINE,
    aliases: &[],
    holds_sessions: false,
};

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
        scripted::KIND | replay::KIND => crate::workload::catalogue::chart::session_timeline(),
        _ => return None,
    })
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
