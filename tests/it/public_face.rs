//! The public face stays small: everything outside the library (the binary, examples,
//! benches, these tests) names rtload by paths of at most two segments, `rtload::Item` or
//! `rtload::<facade>::Item`, and `src/lib.rs` declares no public module but the facades.
//! A deeper path would mean a layer leaked out again (the compiler already refuses
//! private ones; this keeps re-exported modules from becoming a second way in).

use std::path::{Path, PathBuf};

/// The facades `src/lib.rs` may declare as `pub mod`.
const FACADES: [&str; 8] = [
    "bench",
    "catalogue",
    "dataset",
    "report",
    "run",
    "scenario",
    "server",
    "workload",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
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

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The `::`-separated segments at the start of `s` (whitespace around `::` allowed), the
/// rest of `s` after them, and whether they ended in `::` (a group or glob follows).
fn segments(s: &str) -> (Vec<&str>, &str, bool) {
    let mut segs = Vec::new();
    let mut rest = s;
    loop {
        let end = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        if end == 0 {
            return (segs, rest, true);
        }
        segs.push(&rest[..end]);
        match rest[end..].trim_start().strip_prefix("::") {
            Some(next) => rest = next.trim_start(),
            None => return (segs, &rest[end..], false),
        }
    }
}

/// The entries of a brace group starting right after its `{`, split at top-level commas,
/// each with its byte offset in `s`.
fn group_entries(s: &str) -> Vec<(usize, &str)> {
    let (mut depth, mut start, mut out) = (0usize, 0usize, Vec::new());
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                out.push((start, &s[start..i]));
                return out;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push((start, &s[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    out
}

/// Every path under `rtload` that `s` (at byte `at` of the text) names, expanding brace
/// groups: `(byte offset, segments after rtload)`.
fn expand(s: &str, at: usize, prefix: &[String], out: &mut Vec<(usize, Vec<String>)>) {
    let body = s.trim_start();
    let at = at + s.len() - body.len();
    let (segs, rest, open) = segments(body);
    let mut path: Vec<String> = prefix.to_vec();
    path.extend(segs.iter().filter(|&&x| x != "self").map(|x| x.to_string()));
    match rest.strip_prefix('{') {
        Some(group) if open => {
            let base = at + body.len() - group.len();
            for (off, entry) in group_entries(group) {
                expand(entry, base + off, &path, out);
            }
        }
        _ if !segs.is_empty() => out.push((at, path)),
        _ => {}
    }
}

/// Every `rtload::…` path in `text` with three or more segments after `rtload`, as
/// `(line, path)`; `use rtload::{…}` groups are expanded.
fn deep_paths(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (i, _) in text.match_indices("rtload::") {
        if text[..i].chars().next_back().is_some_and(is_ident) {
            continue;
        }
        let rest = &text[i + "rtload::".len()..];
        let mut paths = Vec::new();
        expand(rest, i + "rtload::".len(), &[], &mut paths);
        for (at, path) in paths {
            if path.len() >= 3 {
                let line = text[..at].matches('\n').count() + 1;
                found.push((line, format!("rtload::{}", path.join("::"))));
            }
        }
    }
    found
}

#[test]
fn nothing_outside_the_library_names_rtload_deeper_than_a_facade() {
    let mut files = Vec::new();
    for dir in ["src/bin", "examples", "benches", "tests/it"] {
        rs_files(&root().join(dir), &mut files);
    }
    assert!(
        files.len() > 40,
        "the walk found the files: {}",
        files.len()
    );
    let mut bad = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let rel = f.strip_prefix(root()).unwrap().display().to_string();
        bad.extend(
            deep_paths(&text)
                .into_iter()
                .map(|(line, p)| format!("{rel}:{line}: {p}")),
        );
    }
    assert!(
        bad.is_empty(),
        "paths of more than two segments after `rtload` (use `rtload::Item` or \
         `rtload::<facade>::Item`; add what is genuinely needed to a facade in src/lib.rs):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_scanner_catches_deep_paths_and_passes_facade_ones() {
    // Assembled at run time, so this file's own text holds no deep path.
    let deep = ["rtload", "engine", "transport", "peek_header"].join("::");
    let text = format!(
        "use rtload::report::read_result;\nlet s = \"{deep}\";\nuse rtload::{{Scenario, \
         bench::{{Spool, python_shuffle}}}};\nuse rtload::{{\n    run::Phase,\n    {}::{{a, b}},\n}};\n",
        ["workload", "omni"].join("::")
    );
    let found = deep_paths(&text);
    assert_eq!(
        found,
        vec![
            (2, deep.clone()),
            (6, format!("rtload::{}::a", ["workload", "omni"].join("::"))),
            (6, format!("rtload::{}::b", ["workload", "omni"].join("::"))),
        ],
        "{text}"
    );
    assert!(deep_paths("rtload::run::Phase rtload::Scenario myrtload::a::b::c").is_empty());
}

#[test]
fn lib_rs_declares_no_public_module_but_the_facades() {
    let text = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let public: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("pub mod "))
        .map(|rest| rest.trim_end_matches([' ', '{', ';']))
        .collect();
    let mut sorted = public.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, FACADES, "src/lib.rs's public modules");
    // The layers are declared, privately.
    for layer in ["batch", "config", "engine", "runner", "util"] {
        assert!(
            text.lines().any(|l| l == format!("mod {layer};")),
            "src/lib.rs: `mod {layer};` (private) expected"
        );
    }
}

/// What `src/lib.rs` exports, one `rtload::[facade::]Name` a line, sorted: every
/// `pub use` at the root or in a facade, by the name it is exported as.
fn exported(lib: &str) -> Vec<String> {
    let (mut facade, mut stmt, mut out) = (None::<String>, None::<String>, Vec::new());
    for line in lib.lines() {
        if let Some(name) = line.strip_prefix("pub mod ") {
            facade = Some(name.trim_end_matches([' ', '{']).to_string());
        } else if line == "}" {
            facade = None;
        }
        let code = line.trim();
        if stmt.is_none() && code.starts_with("pub use ") {
            stmt = Some(String::new());
        }
        let Some(s) = stmt.as_mut() else { continue };
        s.push_str(code);
        s.push(' ');
        if !code.ends_with(';') {
            continue;
        }
        let text = stmt.take().unwrap();
        let body = text["pub use ".len()..].trim().trim_end_matches(';');
        let leaves: Vec<&str> = match body.split_once('{') {
            Some((_, group)) => group.trim_end_matches([' ', '}']).split(',').collect(),
            None => vec![body],
        };
        for leaf in leaves.iter().map(|l| l.trim()).filter(|l| !l.is_empty()) {
            let name = match leaf.split_once(" as ") {
                Some((_, alias)) => alias.trim(),
                None => leaf.rsplit("::").next().unwrap(),
            };
            let at = facade
                .as_deref()
                .map_or(String::new(), |f| format!("{f}::"));
            out.push(format!("rtload::{at}{name}"));
        }
    }
    out.sort();
    out
}

/// The public surface, by name, against `tests/data/public_face.txt`: a change to it is
/// deliberate (rewrite with `UPDATE_SNAPSHOTS=1 cargo test --test it public_face`).
#[test]
fn the_public_surface_matches_its_snapshot() {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    assert!(
        !lib.lines()
            .any(|l| l.trim_start().starts_with("pub use") && l.contains('*')),
        "src/lib.rs: a facade lists its items (no `pub use …::*`)"
    );
    let got = exported(&lib).join("\n") + "\n";
    assert!(got.contains("rtload::run::Phase\n"), "{got}");
    let path = root().join("tests/data/public_face.txt");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &got).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        got == want,
        "the public surface changed; if deliberate, rewrite {} with UPDATE_SNAPSHOTS=1\n--- got\n{got}--- want\n{want}",
        path.display()
    );
}
