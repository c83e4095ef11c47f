use super::*;
use crate::workload::scripted::metric::{Kind, parse};

fn def(name: &str, text: &str, per: Option<&str>) -> MetricDef {
    let (expr, kind) = parse(text).unwrap();
    MetricDef {
        name: name.into(),
        text: text.into(),
        expr,
        kind,
        unit: "ms".into(),
        lower_is_better: Some(true),
        description: None,
        per: per.map(str::to_string),
    }
}

#[test]
fn a_per_turn_metric_short_of_its_marks_is_named_with_the_counts() {
    let defs = [
        def("first_audio_ms", "first(audio) - mark(rr)", None),
        def("response_ms", "first(done) - mark(rr)", None),
    ];
    assert_eq!(defs[0].kind, Kind::Duration);
    let turns = BTreeMap::from([("first_audio_ms", (3, 6)), ("response_ms", (6, 6))]);
    let w = warnings(&defs, &turns, 3);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with("`first_audio_ms` has 3 values for 6 turns (mark `rr` taken 6 times in 3 completed sessions): 3 turns had no matching event"),
        "{}",
        w[0]
    );
    assert!(w[0].contains("since = \"rr\""), "{}", w[0]);
    let one = BTreeMap::from([("first_audio_ms", (0, 1))]);
    assert!(warnings(&defs, &one, 1)[0].starts_with("`first_audio_ms` has 0 values for 1 turn (mark `rr` taken 1 time in 1 completed session): 1 turn had"));
}
