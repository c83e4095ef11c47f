//! `rtload check SCENARIO --metrics`: every metric a shipped scenario reports, with the
//! start and end event it is measured between — the same `measurement_origin` the JSON
//! result's catalogue carries.

use std::path::Path;

use crate::support::rtload;

#[test]
fn check_lists_every_metric_with_its_origin_as_the_result_catalogue_has_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    for file in [
        "transcription.toml",
        "video-quickstart.toml",
        "openai-realtime.toml",
    ] {
        let path = root.join(file);
        let out = rtload()
            .args(["check", "--metrics"])
            .arg(&path)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{file}: {text}");
        let s = rtload::scenario::check(&path, &Default::default()).unwrap();
        let cat = s.workload().catalogue();
        assert!(!cat.metrics().is_empty());
        for m in cat.metrics().iter().filter(|m| !m.name.ends_with(".count")) {
            let name = m
                .distribution
                .as_ref()
                .map_or(m.name.clone(), |d| format!("{d}.<stat>"));
            assert!(!m.origin.is_empty(), "{file}: {} has no origin", m.name);
            let row = text
                .lines()
                .skip_while(|l| !l.starts_with("  metrics ("))
                .find(|l| l.trim_start().starts_with(&format!("{name} ")))
                .unwrap_or_else(|| panic!("{file}: no row for {name}\n{text}"));
            assert!(
                row.ends_with(&m.origin),
                "{file}: {row:?} vs {:?}",
                m.origin
            );
        }
    }
}
