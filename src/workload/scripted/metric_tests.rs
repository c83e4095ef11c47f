//! Declared metric expressions: windows per mark, counts, gaps and ratios, positioned
//! errors, `per` anchors.

use super::*;

fn rec() -> Record {
    let mut events = BTreeMap::new();
    events.insert("delta".into(), vec![150.0, 170.0, 250.0, 1100.0, 1150.0]);
    events.insert("done".into(), vec![400.0]);
    Record {
        marks: vec![
            ("start".into(), 100.0),
            ("end".into(), 300.0),
            ("start".into(), 1000.0),
        ],
        events,
    }
}

fn values(text: &str) -> Vec<f64> {
    parse(text).unwrap().0.eval(&rec())
}

#[test]
fn first_minus_mark_is_measured_per_mark_window() {
    assert_eq!(
        parse("first(delta) - mark(start)").unwrap().1,
        Kind::Duration
    );
    assert_eq!(values("first(delta) - mark(start)"), vec![50.0, 100.0]);
    // `done` only came in the first window: the second value is absent, not zero.
    assert_eq!(values("last(done) - mark(end)"), vec![100.0]);
    assert_eq!(values("last(done) - mark(start)"), vec![300.0]);
}

#[test]
fn counts_gaps_ratios_and_whole_session() {
    assert_eq!(values("count(delta)"), vec![5.0]);
    assert_eq!(values("count(nothing)"), vec![0.0]);
    assert_eq!(values("gaps(delta) / 10"), vec![2.0, 8.0, 85.0, 5.0]);
    assert_eq!(values("(last(delta) - first(delta)) / 1000"), vec![1.0]);
    assert_eq!(
        parse("(last(delta) - first(delta)) / (last(done) - first(delta))")
            .unwrap()
            .1,
        Kind::Number
    );
    assert!(values("first(nothing) - mark(start)").is_empty());
}

#[test]
fn errors_name_the_position() {
    let e = parse("first(delta) - mark(start) +").unwrap_err();
    assert_eq!(e.offset, 28);
    let e = parse("frist(delta) - mark(a)").unwrap_err();
    assert_eq!(e.offset, 0);
    assert!(e.msg.contains("did you mean `first`"), "{}", e.msg);
    let e = parse("first(a) + mark(b)").unwrap_err();
    assert_eq!(e.offset, 9);
    assert!(e.msg.contains("timestamp + a timestamp"), "{}", e.msg);
    assert!(
        parse("mark(a)")
            .unwrap_err()
            .msg
            .contains("timestamp alone")
    );
    assert!(parse("gaps(a) - gaps(b)").is_err());
    assert!(parse("first()").is_err());
    assert!(
        parse("first(a) - mark(b) x")
            .unwrap_err()
            .msg
            .contains("unexpected")
    );
}

#[test]
fn per_sets_the_window_anchor() {
    let (e, _) = parse("gaps(delta)").unwrap();
    assert_eq!(e.eval_per(&rec(), Some("start")), vec![20.0, 80.0, 50.0]);
    assert_eq!(e.eval(&rec()).len(), 4);
}
