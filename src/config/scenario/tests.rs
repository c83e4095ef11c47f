//! Loading reads the file once and parses it once; nothing in the scenario's parsers
//! reads the text again.

use super::*;

/// The registered kind with a `--target-fps` flag: the one that builds from its `kind`
/// alone (no dataset), named through the registry (only it names kinds).
fn kind() -> &'static str {
    crate::config::registry::registry()
        .iter()
        .find(|k| k.flag("target-fps").is_some())
        .expect("a kind with --target-fps")
        .name
}

/// Every section at once (`KIND` stands for [`kind`]), with flags for `[load]`,
/// `[target]` and `[workload]`.
const FULL: &str = r#"name = "full"
description = "every section"
[target]
url = "ws://127.0.0.1:9"
headers = { "X-Test" = "1" }
connect_timeout_s = 5
max_frame_bytes = 1048576
[workload]
kind = "KIND"
num_chunks = 4
warmup_chunks = 1
[load]
samples = 2
max_concurrency = 2
request_rate = 4.0
[output]
json = "out/result.json"
[server.video]
first_chunk_ms = 20
[thresholds]
"ttfc_ms.mean" = "< 60000"
[sweep]
param = "max_concurrency"
values = [1, 2]
headline = "ttfc_ms.mean"
"#;

fn flags() -> Overrides {
    Overrides {
        load: LoadOverrides {
            num_prompts: Some(3),
            ..LoadOverrides::default()
        },
        workload: vec![WorkloadFlag {
            flag: "target-fps".into(),
            values: vec!["8".into()],
        }],
        headers: vec![("X-Flag".into(), "2".into())],
        ..Overrides::default()
    }
}

/// (file reads, text parses) on this thread while `f` runs.
fn counted<T>(f: impl FnOnce() -> T) -> (T, usize, usize) {
    let (r0, p0) = (READS.with(|c| c.get()), crate::util::scenario_doc::parses());
    let out = f();
    let (r1, p1) = (READS.with(|c| c.get()), crate::util::scenario_doc::parses());
    (out, r1 - r0, p1 - p0)
}

#[test]
fn a_load_reads_and_parses_the_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("full.toml");
    std::fs::write(&path, FULL.replace("KIND", kind())).unwrap();
    let (sc, reads, parses) = counted(|| load(&path, &flags()));
    let sc = sc.unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!((reads, parses), (1, 1));
    assert_eq!(sc.samples(), 3, "--num-prompts reaches the workload");
    assert_eq!(sc.headers().len(), 2);
    assert_eq!(sc.thresholds().len(), 1);
    assert!(sc.sweep().is_some());
    let (_, reads, parses) = counted(|| check(&path, &flags()).unwrap());
    assert_eq!((reads, parses), (1, 1));
}

#[test]
fn a_file_full_of_errors_is_still_parsed_once() {
    let bad = FULL
        .replace("KIND", kind())
        .replace("connect_timeout_s = 5", "connect_timeout_s = \"x\"")
        .replace("num_chunks = 4", "num_chunks = 4\nbogus = 1\nwidth = 100")
        .replace("max_concurrency = 2", "max_concurrency = 0")
        .replace("\"< 60000\"", "\"< fast\"")
        .replace("first_chunk_ms = 20", "first_chunk_ms = -1");
    let (errors, _, parses) = counted(|| parse(Path::new("s.toml"), &bad, &flags()).unwrap_err());
    assert_eq!(parses, 1);
    assert!(errors.len() >= 5, "{errors:?}");
}

/// The honest half of the count: no code on the load path parses text but
/// `ScenarioDoc::parse` (which counts), and nothing re-derives positions from the text.
#[test]
fn no_scenario_parser_parses_the_text_again() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let banned = [
        "toml::from_str",
        "DeTable::parse",
        "Deserializer::parse",
        "textpos::value_span(",
    ];
    let mut hits = Vec::new();
    for dir in ["config", "workload"] {
        for file in rust_files(&root.join(dir)) {
            let name = file.to_string_lossy();
            if name.ends_with("tests.rs") || name.contains("/tests/") {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            for b in banned {
                if code.contains(b) {
                    hits.push(format!("{name}: {b}"));
                }
            }
        }
    }
    assert!(hits.is_empty(), "{hits:#?}");
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_rust_workload_builds_a_scenario_without_a_file() {
    let fx = parse(
        Path::new("s.toml"),
        &format!("[workload]\nkind = \"{}\"\nnum_chunks = 3\n", kind()),
        &Overrides::default(),
    )
    .unwrap();
    let sc = Scenario::builder(Arc::clone(fx.workload()))
        .name("in code")
        .load(Load {
            max_concurrency: 3,
            ..Load::default()
        })
        .output_json("r.json")
        .build();
    assert_eq!(sc.name(), "in code");
    assert_eq!(sc.samples(), 1, "the workload's own count");
    assert_eq!(sc.load().max_concurrency, 3);
    assert!(sc.target().is_none());
    let point = sc.to_builder().samples(7).build();
    assert_eq!(point.samples(), 7);
}
