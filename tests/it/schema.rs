//! `rtload schema`: every shipped scenario validates against it; bad files do not.

use std::process::Command;

fn schema() -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_rtload"))
        .arg("schema")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice(&out.stdout).expect("rtload schema prints JSON")
}

fn as_json(toml_text: &str) -> serde_json::Value {
    let t: toml::Table = toml::from_str(toml_text).unwrap();
    serde_json::to_value(t).unwrap()
}

#[test]
fn every_shipped_scenario_validates() {
    let v = jsonschema::validator_for(&schema()).expect("the schema is a valid JSON Schema");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let doc = as_json(&std::fs::read_to_string(&path).unwrap());
            let errors: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{}: {errors:?}", path.display());
            n += 1;
        }
    }
    assert!(n >= 4, "found only {n} scenarios");
}

#[test]
fn schema_rejects_what_the_parser_rejects() {
    let v = jsonschema::validator_for(&schema()).unwrap();
    for bad in [
        "[workload]\nkind = \"video-cadence\"\nnum_chunk = 3\n",
        "[workload]\nkind = \"video-cadense\"\n",
        "bogus = 1\n[workload]\nkind = \"video-cadence\"\n",
        "[workload]\nkind = \"omniinteract\"\n[load]\nsamples = \"three\"\n",
        "[workload]\nkind = \"video-cadence\"\n[server.video]\nfirst_chunk_msx = 1\n",
        "[workload]\nkind = \"video-cadence\"\n[thresholds]\n\"ttfc_ms.mean\" = \"about 5\"\n",
    ] {
        assert!(!v.is_valid(&as_json(bad)), "schema accepted:\n{bad}");
    }
    assert!(v.is_valid(&as_json("[workload]\nkind = \"omniinteract\"\ndataset_path = \"d\"\n[thresholds]\n\"ttft_ms.p99\" = \"< 500\"\n")));
}

/// `check-jsonschema` (from PyPI, a validator we did not write) on TOML files against
/// `rtload schema`: its exit code and report.
fn check_jsonschema(files: &[std::path::PathBuf]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let schema_path = dir.path().join("rtload.schema.json");
    std::fs::write(&schema_path, schema().to_string()).unwrap();
    let out = Command::new(crate::support::python())
        .args(["-m", "check_jsonschema", "--no-cache", "--schemafile"])
        .arg(&schema_path)
        .args(files)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), said)
}

#[test]
fn check_jsonschema_accepts_the_shipped_scenarios() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    assert!(files.len() >= 4);
    let (code, said) = check_jsonschema(&files);
    assert_eq!(code, Some(0), "{said}");
}

#[test]
fn check_jsonschema_names_the_bad_key_of_the_kind_the_file_names() {
    let dir = tempfile::tempdir().unwrap();
    // Each file: its TOML, and what the validator must say about it.
    let cases: [(&str, &str, &[&str]); 6] = [
        (
            "range.toml",
            "[workload]\nkind = \"video-cadence\"\n[load]\nmax_concurrency = 0\n",
            &["$.load.max_concurrency: 0 is less than the minimum of 1"],
        ),
        (
            "exclusive.toml",
            "[workload]\nkind = \"omniinteract\"\ndataset_path = \"d\"\ntimeout_s = 0\n",
            &["$.workload.timeout_s: 0 is less than or equal to the minimum of 0"],
        ),
        (
            "multiple.toml",
            "[workload]\nkind = \"video-cadence\"\nwidth = 100\n",
            &["$.workload.width: 100 is not a multiple of 16"],
        ),
        (
            // A video key under the transcription kind: that kind's keys are the ones
            // checked, so the stray key is named (not "does not match any kind").
            "wrong_kind_key.toml",
            "[workload]\nkind = \"realtime-transcription\"\ndataset_path = \"d\"\nnum_chunks = 3\n",
            &["$.workload: Additional properties are not allowed ('num_chunks' was unexpected)"],
        ),
        (
            "kind_range.toml",
            "[workload]\nkind = \"realtime-transcription\"\ndataset_path = \"d\"\nchunk_ms = 0\n",
            &["$.workload.chunk_ms: 0 is less than the minimum of 1"],
        ),
        (
            "server.toml",
            "[workload]\nkind = \"scripted\"\n[server.duplex]\ntone_hz = 20000\n",
            &["$.server.duplex.tone_hz: 20000 is greater than the maximum of 12000"],
        ),
    ];
    for (name, text, wants) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let (code, said) = check_jsonschema(std::slice::from_ref(&path));
        assert_eq!(code, Some(1), "{name} accepted:\n{said}");
        for want in wants {
            assert!(said.contains(want), "{name}: missing {want:?} in\n{said}");
        }
        assert!(
            !said.contains("is not valid under any of the given schemas"),
            "{name}:\n{said}"
        );
    }
}
