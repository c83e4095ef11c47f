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
