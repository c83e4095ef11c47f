//! The composition root: every workload kind rtload knows. The only file outside
//! `src/workload/` that names kinds; adding a workload is one entry here.

use crate::workload::catalogue::Catalogue;
use crate::workload::{WorkloadKind, omni, scripted, transcription, video};

/// Every workload kind rtload knows, by name.
pub fn registry() -> &'static [WorkloadKind] {
    &[
        WorkloadKind {
            name: video::KIND,
            summary: "LingBot-World realtime video cadence (/v1/realtime/video)",
            build: video::build,
            schema: |g| crate::config::schema::kind_schema::<video::VideoParams>(g, video::KIND),
            families: video::names::FAMILIES,
            headline: video::names::HEADLINE,
            aliases: video::names::ALIASES,
        },
        WorkloadKind {
            name: omni::KIND,
            summary: "OmniInteract duplex speech benchmark (/v1/realtime)",
            build: omni::build,
            schema: |g| {
                crate::config::schema::kind_schema::<omni::workload::OmniParams>(g, omni::KIND)
            },
            families: omni::report::FAMILIES,
            headline: omni::report::HEADLINE,
            aliases: omni::report::ALIASES,
        },
        WorkloadKind {
            name: transcription::KIND,
            summary: "vLLM realtime speech-to-text (/v1/realtime)",
            build: transcription::build,
            schema: |g| {
                crate::config::schema::kind_schema::<transcription::workload::TranscriptionParams>(
                    g,
                    transcription::KIND,
                )
            },
            families: transcription::metrics::FAMILIES,
            headline: transcription::metrics::HEADLINE,
            aliases: transcription::metrics::ALIASES,
        },
        WorkloadKind {
            name: scripted::KIND,
            summary: "any JSON-over-WebSocket protocol described as steps in the scenario",
            build: scripted::build,
            schema: |g| {
                crate::config::schema::kind_schema::<scripted::workload::ScriptedParams>(
                    g,
                    scripted::KIND,
                )
            },
            families: scripted::report::FAMILIES,
            headline: scripted::report::HEADLINE,
            aliases: &[],
        },
    ]
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
mod tests {
    use super::*;
    use crate::workload::catalogue::Merge;

    /// Every metric states where it is measured from and to, and how shards merge it.
    #[test]
    fn every_family_states_its_origin_and_merge_rule() {
        for k in registry() {
            for f in k.families {
                assert!(
                    !f.origin.is_empty(),
                    "{}: {} has no origin",
                    k.name,
                    f.prefix
                );
                assert_ne!(
                    f.merge,
                    Merge::Unmergeable("no merge rule declared"),
                    "{}: {} has no merge rule",
                    k.name,
                    f.prefix
                );
            }
            for (alias, target) in k.aliases {
                assert!(k.declares(target), "{}: alias {alias} → {target}", k.name);
            }
        }
    }
}
