//! The house rules "functions under ~80 lines, files around 400", checked mechanically:
//! every `fn` in `src/**/*.rs` (test files and inline `#[cfg(test)]` modules exempt) spans
//! at most [`MAX_LINES`] lines, counted from its `fn` line to the closing brace at the same
//! indentation; and no source file (test files — `tests.rs`, `*_tests.rs`, `tests/` —
//! exempt) is longer than [`MAX_FILE_LINES`]. Run
//! `cargo test --test it fn_lengths -- --nocapture` to print the longest of each.

use std::path::{Path, PathBuf};

/// The longest a function may be, in lines (`fn` line to closing brace, inclusive).
const MAX_LINES: usize = 80;

/// The longest a source file may be, in lines. Files are meant to stay around 400; past
/// this one splits along a real seam (a submodule, or a layer the code belongs to).
const MAX_FILE_LINES: usize = 600;

/// Functions still over the limit (open work), each with the length it may not grow
/// beyond. Split them and shrink this list; a new long function fails the test.
const KNOWN_LONG: &[(&str, &str, usize)] = &[];

/// One measured function.
#[derive(Debug)]
struct FnLen {
    file: String,
    name: String,
    line: usize,
    len: usize,
}

/// Every `.rs` file below `dir`, sorted; test files (`tests/` dirs, `tests.rs`,
/// `*_tests.rs`) only `with_tests`.
pub fn rust_files(dir: &Path, with_tests: bool, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let test = name == "tests" || name == "tests.rs" || name.ends_with("_tests.rs");
        if test && !with_tests {
            continue;
        }
        if path.is_dir() {
            rust_files(&path, with_tests, out);
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// The leading-space count of `line`.
fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The function name declared on `line`, if it starts a `fn` item.
fn fn_name(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    for prefix in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "async ",
        "unsafe ",
    ] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let rest = rest.strip_prefix("fn ")?;
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    Some(&rest[..end])
}

/// The index of the line closing the block opened at indentation `ind` on or after
/// line `start`: the first later line that is `}` (or `},`/`};`) at that indentation.
fn closing_line(lines: &[&str], start: usize, ind: usize) -> Option<usize> {
    (start + 1..lines.len())
        .find(|&j| indent(lines[j]) == ind && lines[j].trim_start().starts_with('}'))
}

/// Every function with a body in `text`, outside inline `#[cfg(test)]` modules.
fn measure(file: &str, text: &str) -> Vec<FnLen> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.trim() == "#[cfg(test)]" {
            let next = lines.get(i + 1).map_or("", |l| l.trim());
            if next.starts_with("mod ") && next.ends_with('{') {
                i = closing_line(&lines, i + 1, indent(lines[i + 1])).unwrap_or(lines.len()) + 1;
                continue;
            }
        }
        if let Some(name) = fn_name(line) {
            let ind = indent(line);
            // The signature ends at the first line with a body brace or a `;` (no body).
            let sig_end = (i..lines.len())
                .find(|&j| {
                    lines[j].trim_end().ends_with('{')
                        || lines[j].trim_end().ends_with(';')
                        || lines[j].trim_end().ends_with('}')
                })
                .unwrap_or(i);
            let sig = lines[sig_end].trim_end();
            if sig.ends_with('{')
                && let Some(end) = closing_line(&lines, sig_end, ind)
            {
                out.push(FnLen {
                    file: file.to_string(),
                    name: name.to_string(),
                    line: i + 1,
                    len: end - i + 1,
                });
            }
        }
        i += 1;
    }
    out
}

/// Every function in `src/`, longest first.
fn all_fns() -> Vec<FnLen> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), false, &mut files);
    let mut all = Vec::new();
    for path in files {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(&path).unwrap();
        all.extend(measure(&rel, &text));
    }
    all.sort_by(|a, b| b.len.cmp(&a.len).then(a.file.cmp(&b.file)));
    all
}

#[test]
fn fn_lengths_no_function_in_src_exceeds_the_limit() {
    let all = all_fns();
    for f in all.iter().take_while(|f| f.len > 60) {
        println!("{:>4}  {}:{}  {}", f.len, f.file, f.line, f.name);
    }
    let offenders: Vec<String> = all
        .iter()
        .filter(|f| f.len > MAX_LINES)
        .filter(|f| {
            !KNOWN_LONG
                .iter()
                .any(|(file, name, cap)| *file == f.file && *name == f.name && f.len <= *cap)
        })
        .map(|f| format!("{}:{} fn {} is {} lines", f.file, f.line, f.name, f.len))
        .collect();
    assert!(
        offenders.is_empty(),
        "functions over {MAX_LINES} lines (split them along a real seam into named helpers):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn fn_lengths_no_source_file_exceeds_the_file_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), false, &mut files);
    assert!(files.len() > 50, "found only {} files", files.len());
    let mut lens: Vec<(usize, String)> = files
        .iter()
        .map(|path| {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (std::fs::read_to_string(path).unwrap().lines().count(), rel)
        })
        .collect();
    lens.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for (len, file) in lens.iter().take_while(|(len, _)| *len > 450) {
        println!("{len:>4}  {file}");
    }
    let offenders: Vec<String> = lens
        .iter()
        .filter(|(len, _)| *len > MAX_FILE_LINES)
        .map(|(len, file)| format!("{file} is {len} lines"))
        .collect();
    assert!(
        offenders.is_empty(),
        "source files over {MAX_FILE_LINES} lines (split them along a real seam into \
         submodules):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn fn_lengths_measure_counts_from_fn_line_to_closing_brace() {
    let text = "fn a() {\n    x();\n}\n\ntrait T {\n    fn b(&self);\n    fn c(&self) {\n    }\n}\n#[cfg(test)]\nmod tests {\n    fn d() {\n    }\n}\nfn e(\n    x: u8,\n) -> u8 {\n    x\n}\n";
    let got: Vec<(String, usize)> = measure("f.rs", text)
        .into_iter()
        .map(|f| (f.name, f.len))
        .collect();
    assert_eq!(
        got,
        vec![
            ("a".to_string(), 3),
            ("c".to_string(), 2),
            ("e".to_string(), 5)
        ]
    );
}
