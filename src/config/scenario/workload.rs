//! `[workload]`: its `kind` picks the registered kind, the command line's workload flags
//! become typed patches of the kind's keys (by the kind's own flag table), and the kind
//! builds itself from the patched table.

use std::sync::Arc;

use super::{Patch, ScenarioDoc, ScenarioError, WorkloadFlag};
use crate::config::registry::registry;
use crate::workload::load::Load;
use crate::workload::{DynWorkload, WorkloadInput, WorkloadKind};

/// Build the scenario's workload with the command line's `flags` applied.
pub(super) fn build(
    doc: &ScenarioDoc<'_>,
    flags: &[WorkloadFlag],
    load: Option<&Load>,
    check_only: bool,
) -> Result<Arc<dyn DynWorkload>, Vec<ScenarioError>> {
    let kind = kind(doc)?;
    // A bad flag does not hide the other problems: the kind builds with the rest.
    let (patches, mut errors) = patches(kind, flags);
    let section = doc.section_with("workload", &patches);
    let built = (kind.build)(&WorkloadInput {
        section: &section,
        samples_requested: load.and_then(|l| l.samples_requested),
        seed: load.map_or(0, |l| l.arrival.seed),
        hold_s: load.and_then(|l| l.duration_s),
        check_only,
    });
    if load.and_then(|l| l.duration_s).is_some() && !kind.holds_sessions {
        errors.push(doc.key_error(&["load", "duration_s"], holds_nothing(kind)));
    }
    match built {
        Ok(w) if errors.is_empty() => Ok(Arc::from(w)),
        Ok(_) => Err(errors),
        Err(e) => {
            errors.extend(e);
            Err(errors)
        }
    }
}

/// Why `kind` refuses `[load] duration_s`, naming the kinds that take it.
fn holds_nothing(kind: &WorkloadKind) -> String {
    format!(
        "`duration_s`: a \"{}\" session ends when its media ends, so it cannot be held for a \
         set time; drop `duration_s` (kinds that hold sessions: {})",
        kind.name,
        registry()
            .iter()
            .filter(|k| k.holds_sessions)
            .map(|k| format!("\"{}\"", k.name))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The registered kind `[workload] kind` names.
fn kind(doc: &ScenarioDoc<'_>) -> Result<&'static WorkloadKind, Vec<ScenarioError>> {
    let names = || {
        registry()
            .iter()
            .map(|k| format!("\"{}\"", k.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let section = doc.section("workload");
    if let Some(v) = section.value().filter(|v| !v.get_ref().is_table()) {
        return Err(vec![doc.at(
            v.span(),
            format!(
                "`workload` must be a table (got {}); write it as `[workload]` with `kind = \"{}\"`",
                v.get_ref().type_str(),
                registry().first().map_or("", |k| k.name)
            ),
        )]);
    }
    let Some(kind) = section.get("kind") else {
        return Err(vec![doc.file_error(format!(
            "[workload] needs `kind`; add e.g. `kind = \"{}\"` (known kinds: {})",
            registry().first().map_or("", |k| k.name),
            names()
        ))]);
    };
    let Some(name) = kind.get_ref().as_str() else {
        // A shape error: `check` sets the key aside and says `kind` is missing too.
        return Err(vec![doc.at(
            kind.span(),
            format!(
                "[workload] kind: expected a string, got `{}`; use e.g. `kind = \"{}\"`",
                doc.src().get(kind.span()).unwrap_or("?").trim(),
                registry().first().map_or("", |k| k.name)
            ),
        )]);
    };
    registry().iter().find(|k| k.name == name).ok_or_else(|| {
        vec![doc.at(
            kind.span(),
            format!("unknown workload kind \"{name}\"; known kinds: {}", names()),
        )]
    })
}

/// The typed patches the workload `flags` make to `kind`'s `[workload]` table, and an
/// error naming each flag the kind does not declare or whose value it refuses.
fn patches(kind: &WorkloadKind, flags: &[WorkloadFlag]) -> (Vec<Patch>, Vec<ScenarioError>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for f in flags {
        match kind.flag(&f.flag) {
            Some(spec) => match spec.patch(&f.values) {
                Ok(p) => out.push(p),
                Err(e) => errors.push(e),
            },
            None => errors.push(ScenarioError::Flag {
                flag: format!("--{}", f.flag),
                msg: not_an_option(kind, &f.flag),
            }),
        }
    }
    (out, errors)
}

/// Why `--flag` does not apply to a scenario of `kind`, with the kinds it belongs to and
/// the ones `kind` has.
fn not_an_option(kind: &WorkloadKind, flag: &str) -> String {
    let owners: Vec<String> = registry()
        .iter()
        .filter(|k| k.flag(flag).is_some())
        .map(|k| format!("\"{}\"", k.name))
        .collect();
    let owners = match owners.split_last() {
        None => String::new(),
        Some((one, [])) => format!("the {one} workload"),
        Some((last, rest)) => format!("the {} and {last} workloads", rest.join(", ")),
    };
    let own: Vec<String> = kind.flags.iter().map(|f| f.long()).collect();
    let own = if own.is_empty() {
        "it has none".to_string()
    } else {
        format!("its options are {}", own.join(" "))
    };
    if owners.is_empty() {
        format!(
            "not a workload option; the scenario's workload is \"{}\" ({own})",
            kind.name
        )
    } else {
        format!(
            "an option of {owners}, but the scenario's workload is \"{}\" ({own}); drop \
             the flag",
            kind.name
        )
    }
}
