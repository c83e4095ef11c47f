//! The crate's `unsafe` rule, checked mechanically: Cargo.toml denies `unsafe_code`, and
//! exactly one function in `src/` allows it, the stamped read's `recvmsg_into`
//! (`src/engine/transport/stamped.rs`: the kernel writes straight into the codec's
//! uninitialized read buffer). Every `unsafe` block lies inside that function with a
//! `// SAFETY:` comment right above it. Another `unsafe` anywhere in `src/` fails here,
//! so it is a deliberate, reviewed change to this test, never a quiet one.

use std::path::Path;

/// The one file, and the one function in it, that may use `unsafe`.
const FILE: &str = "src/engine/transport/stamped.rs";
const FUNCTION: &str = "fn recvmsg_into";

/// Every `src/` file's path (relative to the crate) and text.
fn sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    // Test files included: the lint covers them too.
    crate::fn_lengths::rust_files(&root.join("src"), true, &mut files);
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let rel = path.strip_prefix(root).unwrap().to_string_lossy();
            (rel.replace('\\', "/"), text)
        })
        .collect()
}

/// Whether `line` is code that uses `unsafe` (comments and doc text do not count).
fn uses_unsafe(line: &str) -> bool {
    let code = line.split("//").next().unwrap_or_default();
    [
        "unsafe {",
        "unsafe fn",
        "unsafe impl",
        "unsafe extern",
        "unsafe trait",
    ]
    .iter()
    .any(|k| code.contains(k))
}

/// The line range (0-based, inclusive) of the function whose signature starts on `start`:
/// up to the closing brace at the signature's indentation.
fn body(lines: &[&str], start: usize) -> (usize, usize) {
    let indent = lines[start].len() - lines[start].trim_start().len();
    let close = format!("{}}}", " ".repeat(indent));
    let end = (start..lines.len())
        .find(|&i| lines[i] == close)
        .expect("the function closes");
    (start, end)
}

#[test]
fn unsafe_rule_the_lint_denies_unsafe_code() {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let lints = manifest
        .split("[lints.rust]")
        .nth(1)
        .expect("a [lints.rust] table");
    let lints = lints.split("\n[").next().unwrap();
    assert!(
        lints.lines().any(|l| l.trim() == r#"unsafe_code = "deny""#),
        "Cargo.toml's [lints.rust] must deny unsafe_code:\n{lints}"
    );
}

#[test]
fn unsafe_rule_one_function_in_src_allows_unsafe_code() {
    let mut allows = Vec::new();
    for (file, text) in sources() {
        for (i, line) in text.lines().enumerate() {
            let attr = line.trim_start();
            if (attr.starts_with("#[") || attr.starts_with("#![")) && attr.contains("unsafe_code") {
                allows.push((file.clone(), i));
            }
        }
    }
    let found: Vec<_> = allows
        .iter()
        .map(|(f, i)| format!("{f}:{}", i + 1))
        .collect();
    assert_eq!(
        allows.len(),
        1,
        "attributes naming unsafe_code in src/: {found:?}"
    );
    let (file, at) = &allows[0];
    assert_eq!(file, FILE, "{found:?}");
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(FILE)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[*at].trim(), "#[allow(unsafe_code)]");
    assert!(
        lines[at + 1].trim_start().starts_with(FUNCTION),
        "the allow sits on {FUNCTION}, not {:?}",
        lines[at + 1]
    );
}

#[test]
fn unsafe_rule_every_unsafe_block_is_in_that_function_with_its_safety_comment() {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(FILE)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim_start().starts_with(FUNCTION))
        .expect("the stamped read's function");
    let (first, last) = body(&lines, start);
    let mut blocks = 0;
    for (file, text) in sources() {
        for (i, line) in text.lines().enumerate().filter(|(_, l)| uses_unsafe(l)) {
            assert!(
                file == FILE && (first..=last).contains(&i),
                "unsafe outside {FUNCTION}: {file}:{}: {line}",
                i + 1
            );
            // The comment above the block: `// SAFETY:` then its continuation lines.
            let comment = lines[..i]
                .iter()
                .rev()
                .take_while(|l| l.trim_start().starts_with("//"))
                .last();
            assert!(
                comment.is_some_and(|c| c.trim_start().starts_with("// SAFETY:")),
                "{FILE}:{}: an unsafe block without its `// SAFETY:` comment",
                i + 1
            );
            blocks += 1;
        }
    }
    assert!(blocks >= 1, "the function's unsafe blocks were found");
}
