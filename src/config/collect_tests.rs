use super::*;
use std::path::Path;

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Load {
    samples: Option<u32>,
    max_concurrency: Option<u32>,
    warmups: Option<u32>,
}

#[test]
fn every_bad_entry_is_listed_and_the_rest_still_read() {
    let src = "[load]\nsamples = \"x\" # no\nmax_concurrency = 2\nbogus = 1\nwarmups = -1\n";
    let doc = ScenarioDoc::parse(Path::new("s.toml"), src).unwrap();
    let (load, mut errors) = collecting(&doc, |d| {
        d.section("load").deserialize::<Load>().map_err(|e| vec![e])
    });
    let load = load.expect("read past every bad entry");
    assert_eq!(load.max_concurrency, Some(2));
    assert_eq!((load.samples, load.warmups), (None, None));
    sort_errors(&mut errors);
    let at: Vec<String> = errors
        .iter()
        .map(|e| e.to_string().split(": ").next().unwrap().to_string())
        .collect();
    assert_eq!(
        at,
        ["s.toml:2:11", "s.toml:4:1", "s.toml:5:11"],
        "{errors:?}"
    );
}
