//! The layering rule of ARCHITECTURE.md, checked mechanically: every `crate::…` path in
//! `src/**/*.rs` (code, `use` lines and doc links alike) must point at the same or a lower
//! layer. Layers, lowest first: `util` ← workload seam (`workload/*.rs`) ← `engine` and
//! the workload kinds (`workload/video/`, `workload/omni/`, `workload/transcription/`,
//! which never import each other or the engine) ← `config` ← `report` ←
//! `runner`/`batch`. Only `config/registry.rs`
//! names kinds, or the markers a kind's results carry, from outside `src/workload/`. `server` imports only `util` and itself, and
//! only `config` (its config types) and `runner` import it.

use std::path::{Path, PathBuf};

/// Where a module sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layer {
    Util,
    Seam,
    Engine,
    Kind(&'static str),
    Config,
    Report,
    Run,
    Server,
}

impl Layer {
    fn rank(self) -> u8 {
        match self {
            Layer::Util => 0,
            Layer::Seam => 1,
            Layer::Engine | Layer::Kind(_) => 2,
            Layer::Config => 3,
            Layer::Report => 4,
            Layer::Run => 5,
            Layer::Server => 0,
        }
    }
}

/// The layer of a module path below `crate::` (`["workload", "omni", …]`).
fn layer_of(segs: &[&str]) -> Option<Layer> {
    Some(match segs.first().copied()? {
        "util" => Layer::Util,
        "workload" => match segs.get(1).copied() {
            Some("video") => Layer::Kind("video"),
            Some("omni") => Layer::Kind("omni"),
            Some("scripted") => Layer::Kind("scripted"),
            Some("transcription") => Layer::Kind("transcription"),
            Some("replay") => Layer::Kind("replay"),
            _ => Layer::Seam,
        },
        "engine" => Layer::Engine,
        "config" => Layer::Config,
        "report" => Layer::Report,
        "runner" | "batch" => Layer::Run,
        "server" => Layer::Server,
        _ => return None,
    })
}

/// Why `from` (the file `file`) may not import `to`, if it may not.
fn forbidden(file: &str, from: Layer, to: Layer) -> Option<&'static str> {
    use Layer::*;
    match (from, to) {
        (Server, Server | Util) => None,
        (Server, _) => Some("server imports only util and itself"),
        (Config | Run, Server) => None,
        (_, Server) => Some("only config and runner import server"),
        (Kind(a), Kind(b)) if a != b => Some("workload kinds never import each other"),
        (Engine, Kind(_)) | (Kind(_), Engine) => {
            Some("engine and workload kinds meet only at the seam")
        }
        (f, Kind(_)) if !matches!(f, Kind(_)) && file != "config/registry.rs" => {
            Some("only config/registry.rs names workload kinds outside src/workload/")
        }
        (Config, Kind(_)) => None,
        (f, t) if t.rank() > f.rank() => Some("imports a higher layer"),
        _ => None,
    }
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Every `.rs` file under `src/`, with its path relative to `src/` (`/`-separated).
fn src_files() -> Vec<(String, PathBuf)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    files
        .into_iter()
        .map(|f| {
            let rel = f
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, f)
        })
        .collect()
}

/// Every module path named after `crate::` in `text` (brace groups expanded one level).
fn crate_paths(text: &str) -> Vec<Vec<String>> {
    let ident = |s: &str| -> Vec<String> {
        let end = s
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(s.len());
        s[..end]
            .split("::")
            .filter(|x| !x.is_empty())
            .map(str::to_string)
            .collect()
    };
    let mut out = Vec::new();
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(inner.split(',').map(|p| ident(p.trim())));
        } else {
            out.push(ident(rest));
        }
    }
    out
}

#[test]
fn no_source_file_imports_a_higher_layer() {
    let files = src_files();
    assert!(files.len() > 50, "found only {} files", files.len());
    let mut bad = Vec::new();
    for (rel, f) in &files {
        let segs: Vec<&str> = rel.trim_end_matches(".rs").split('/').collect();
        let Some(from) = layer_of(&segs) else {
            // lib.rs (the façade) and bin/ (the top) may name anything public.
            continue;
        };
        let text = std::fs::read_to_string(f).unwrap();
        for path in crate_paths(&text) {
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            let Some(to) = layer_of(&path) else { continue };
            if let Some(why) = forbidden(rel, from, to) {
                bad.push(format!("src/{rel}: crate::{}: {why}", path.join("::")));
            }
        }
    }
    bad.sort();
    bad.dedup();
    assert!(bad.is_empty(), "layering violations:\n{}", bad.join("\n"));
}

#[test]
fn the_checker_catches_a_back_edge() {
    let paths =
        crate_paths("use crate::{engine::writer, util::stats};\n[`crate::config::scenario`]");
    let layers: Vec<_> = paths
        .iter()
        .map(|p| layer_of(&p.iter().map(String::as_str).collect::<Vec<_>>()))
        .collect();
    assert_eq!(
        layers,
        [Some(Layer::Engine), Some(Layer::Util), Some(Layer::Config)]
    );
    assert!(
        forbidden(
            "workload/omni/report.rs",
            Layer::Kind("omni"),
            Layer::Engine
        )
        .is_some()
    );
    assert!(forbidden("workload/mod.rs", Layer::Seam, Layer::Config).is_some());
    assert!(forbidden("util/fs.rs", Layer::Util, Layer::Seam).is_some());
    assert!(forbidden("runner/mod.rs", Layer::Run, Layer::Kind("video")).is_some());
    assert!(forbidden("config/registry.rs", Layer::Config, Layer::Kind("video")).is_none());
    assert!(forbidden("engine/mod.rs", Layer::Engine, Layer::Server).is_some());
    assert!(forbidden("server/mod.rs", Layer::Server, Layer::Seam).is_some());
    assert!(forbidden("report/compare.rs", Layer::Report, Layer::Config).is_none());
}

/// What names a built-in workload in a file: its kind (quoted, as code names it) and the
/// markers its result documents carry (`"benchmark": "lingbot_world_realtime"`,
/// `"backend": "openai-realtime-duplex"`), in any form.
fn workload_names(text: &str) -> Vec<String> {
    let kinds = rtload::scenario::registry().iter().map(|k| k.name);
    const MARKERS: [&str; 2] = ["lingbot_world_realtime", "openai-realtime-duplex"];
    let quoted = kinds.map(|k| format!("\"{k}\""));
    quoted
        .chain(MARKERS.iter().map(|m| (*m).to_string()))
        .filter(|n| text.contains(n.as_str()))
        .collect()
}

#[test]
fn no_file_outside_the_workloads_names_a_built_in_workload() {
    // The check, test files under src/ included: a kind's name and its result
    // markers live in its folder and in the composition root that registers it, so
    // report/ (the HTML report, merge, compare) reads results by their generic blocks.
    let mut bad = Vec::new();
    for (rel, f) in &src_files() {
        if rel.starts_with("workload/") || rel == "config/registry.rs" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for n in workload_names(&text) {
            bad.push(format!("src/{rel} names {n}"));
        }
    }
    assert!(
        bad.is_empty(),
        "workload names outside src/workload/:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_name_check_catches_kinds_and_markers() {
    // Every built-in kind is checked: the registry lists them all.
    assert!(rtload::scenario::registry().len() >= 4);
    let kind = rtload::scenario::registry()[0].name;
    assert_eq!(workload_names(&format!("x == \"{kind}\"")).len(), 1);
    assert_eq!(
        workload_names("Some(\"lingbot_world_realtime\") | // openai-realtime-duplex").len(),
        2
    );
    assert!(workload_names("kind-agnostic text").is_empty());
}
