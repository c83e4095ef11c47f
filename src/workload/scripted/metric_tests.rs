//! Declared metric expressions: windows per mark in the session's order and bounded by
//! the mark's turn, counts, gaps and ratios, positioned errors, `per` anchors, the size
//! limits, and a parser that never panics or overflows the stack.

use proptest::prelude::*;

use super::*;

/// A record where things happened in time order (a mark before an event at the same ms).
fn record(marks: &[(&str, f64)], events: &[(&str, &[f64])]) -> Record {
    let mut all: Vec<(f64, u8, &str)> = marks.iter().map(|(n, t)| (*t, 0, *n)).collect();
    for (n, ts) in events {
        all.extend(ts.iter().map(|t| (*t, 1, *n)));
    }
    all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut rec = Record::default();
    for (seq, (t, is_event, n)) in all.into_iter().enumerate() {
        if is_event == 1 {
            rec.push_event(n, seq as u64 + 1, t);
        } else {
            rec.push_mark(n, seq as u64 + 1, t);
        }
    }
    rec
}

fn rec() -> Record {
    record(
        &[("start", 100.0), ("end", 300.0), ("start", 1000.0)],
        &[
            ("delta", &[150.0, 170.0, 250.0, 1100.0, 1150.0]),
            ("done", &[400.0]),
        ],
    )
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
    let v = parse("last(done) - mark(start)")
        .unwrap()
        .0
        .eval_per(&rec(), None);
    assert_eq!((v.windows, v.measured), (2, 1));
}

#[test]
fn a_window_follows_the_session_order_not_equal_timestamps() {
    // Turn 1's `done` ended its await in the same instant turn 2's mark was taken: it
    // was recorded first, so it belongs to turn 1's window, not turn 2's (no 0.00 ms).
    let mut r = Record::default();
    r.push_mark("sent", 1, 0.0);
    r.push_event("done", 2, 100.0);
    r.push_mark("sent", 3, 100.0);
    r.push_event("done", 4, 250.0);
    let (e, _) = parse("first(done) - mark(sent)").unwrap();
    assert_eq!(e.eval(&r), vec![100.0, 150.0]);
    // A hit replayed late (an `await` with `since`) slots in by its sequence number.
    r.push_event("done", 2, 90.0);
    assert_eq!(r.events["done"][0], Hit { seq: 2, ms: 90.0 });
}

#[test]
fn a_window_ends_with_its_turn() {
    let mut r = Record::default();
    let m = r.push_mark("sent", 1, 0.0);
    r.push_event("done", 2, 40.0);
    r.end_turn(m, 3);
    // A `done` from the previous turn that comes in before the next mark: not turn 1's
    // (its turn had ended), not turn 2's (before its mark).
    r.push_event("done", 3, 60.0);
    r.push_event("late", 4, 65.0);
    r.push_mark("sent", 5, 70.0);
    r.push_event("done", 6, 90.0);
    let (e, _) = parse("last(done) - mark(sent)").unwrap();
    assert_eq!(e.eval(&r), vec![40.0, 20.0]);
    let (late, _) = parse("first(late) - mark(sent)").unwrap();
    let v = late.eval_per(&r, None);
    assert_eq!((v.values.len(), v.windows, v.measured), (0, 2, 0));
}

#[test]
fn counts_gaps_ratios_and_whole_session() {
    assert_eq!(values("count(delta)"), vec![5.0]);
    assert_eq!(values("count(nothing)"), vec![0.0]);
    assert_eq!(values("gaps(delta) / 10"), vec![2.0, 8.0, 85.0, 5.0]);
    assert_eq!(values("(last(delta) - first(delta)) / 1000"), vec![1.0]);
    assert_eq!(values("2 * (last(delta) - first(delta)) / 1000"), vec![2.0]);
    assert_eq!(values("10 - 4 - 3"), vec![3.0], "left-associative");
    assert_eq!(values("12 / 2 * 3"), vec![18.0]);
    assert_eq!(values("1 + 2 * 3"), vec![7.0]);
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
    assert!(parse("first(a b) - mark(c)").is_err());
    assert!(
        parse("first(a) - mark(b) x")
            .unwrap_err()
            .msg
            .contains("unexpected")
    );
}

#[test]
fn names_keep_their_offsets() {
    let (e, _) = parse("(first( done) - mark(sent)) * count(x)").unwrap();
    let refs: Vec<(&str, usize, bool)> = e
        .refs()
        .iter()
        .map(|r| (r.name, r.offset, r.mark))
        .collect();
    assert_eq!(
        refs,
        vec![("done", 8, false), ("sent", 21, true), ("x", 36, false)]
    );
    assert_eq!(e.anchor(), Some("sent"));
}

#[test]
fn per_sets_the_window_anchor() {
    let (e, _) = parse("gaps(delta)").unwrap();
    assert_eq!(
        e.eval_per(&rec(), Some("start")).values,
        vec![20.0, 80.0, 50.0]
    );
    assert_eq!(e.eval(&rec()).len(), 4);
}

#[test]
fn nesting_terms_and_length_are_bounded_with_positions() {
    let ok = format!("{}1{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
    assert_eq!(parse(&ok).unwrap().1, Kind::Number);
    let deep = format!("{}1{}", "(".repeat(1_000), ")".repeat(1_000));
    let e = parse(&deep).unwrap_err();
    assert_eq!(e.offset, MAX_DEPTH);
    assert!(e.msg.contains("nest more than 64 deep"), "{}", e.msg);
    // Issue 30's inputs: 30,000 parentheses, a sum of 10,000 terms.
    let deeper = format!("{}1{}", "(".repeat(30_000), ")".repeat(30_000));
    assert!(parse(&deeper).unwrap_err().msg.contains("bytes long"));
    let e = parse(&vec!["1"; 10_000].join("+")).unwrap_err();
    assert!(e.msg.contains("19999 bytes long"), "{}", e.msg);
    let sum = vec!["1"; MAX_TERMS].join("+");
    assert_eq!(
        parse(&sum).unwrap().0.eval(&Record::default()),
        vec![1000.0]
    );
    let long = vec!["1"; 5_000].join("+");
    let e = parse(&long).unwrap_err();
    assert_eq!(e.offset, 2 * MAX_TERMS);
    assert!(e.msg.contains("more than 1000 terms"), "{}", e.msg);
    let huge = format!("count({})", "x".repeat(MAX_LEN));
    let e = parse(&huge).unwrap_err();
    assert_eq!(e.offset, MAX_LEN);
    assert!(e.msg.contains("more than the 16384 allowed"), "{}", e.msg);
}

#[test]
fn unicode_whitespace_and_text_do_not_split_characters() {
    assert!(parse("count(a)\u{3000}+\u{3000}1").is_ok());
    assert!(
        parse("count(a) é")
            .unwrap_err()
            .msg
            .contains("unexpected `é`")
    );
    assert!(parse("é").is_err());
}

/// Readings of field `f` of event `seg`: (value, audio cursor) in arrival order, after a
/// mark `m` taken first.
fn readings(r: &[(f64, f64)]) -> Record {
    let mut rec = Record::default();
    rec.push_mark("m", 1, 0.0);
    for (i, (value, audio_ms)) in r.iter().enumerate() {
        let seq = i as u64 + 2;
        rec.push_event("seg", seq, *audio_ms);
        let reading = Reading {
            seq,
            value: *value,
            audio_ms: *audio_ms,
        };
        rec.push_reading("seg", "f", reading);
    }
    rec
}

#[test]
fn lag_is_the_audio_cursor_minus_the_field_per_event() {
    let rec = readings(&[(100.0, 300.0), (400.0, 600.0), (900.0, 950.0)]);
    let (e, k) = parse("lag(seg, f)").unwrap();
    assert_eq!(k, Kind::Series);
    assert_eq!(e.eval(&rec), vec![200.0, 200.0, 50.0]);
    assert_eq!(e.fields(), vec![("seg", "f")]);
    assert_eq!(e.events(), vec!["seg"]);
    // Within a mark's window, and scaled like gaps.
    let (e, _) = parse("lag(seg, f) / 1000").unwrap();
    assert_eq!(e.eval_per(&rec, Some("m")).values, vec![0.2, 0.2, 0.05]);
    // No readings: no values (absent, not zero).
    assert!(e.eval(&Record::default()).is_empty());
}

#[test]
fn repeats_and_descents_count_field_values() {
    let rec = readings(&[(0.0, 1.0), (1.0, 2.0), (1.0, 3.0), (0.0, 4.0), (2.0, 5.0)]);
    let one = |t: &str| parse(t).unwrap().0.eval(&rec);
    assert_eq!(one("repeats(seg, f)"), vec![2.0]);
    assert_eq!(one("descents(seg, f)"), vec![1.0]);
    assert_eq!(parse("repeats(seg, f)").unwrap().1, Kind::Number);
    let clean = readings(&[(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)]);
    assert_eq!(parse("repeats(seg,f)").unwrap().0.eval(&clean), vec![0.0]);
    assert_eq!(parse("descents(seg,f)").unwrap().0.eval(&clean), vec![0.0]);
}

#[test]
fn seen_counts_events_whose_field_an_earlier_other_event_had() {
    // partial 0, final 0, partial 0 (after its final), partial 1, final 1.
    let mut rec = Record::default();
    for (seq, (name, id)) in [("p", 0.0), ("f", 0.0), ("p", 0.0), ("p", 1.0), ("f", 1.0)]
        .into_iter()
        .enumerate()
    {
        let r = Reading {
            seq: seq as u64 + 1,
            value: id,
            audio_ms: 0.0,
        };
        rec.push_reading(name, "segment_id", r);
    }
    let (e, k) = parse("seen(p, segment_id, f)").unwrap();
    assert_eq!(k, Kind::Number);
    assert_eq!(e.eval(&rec), vec![1.0]);
    assert_eq!(e.fields(), vec![("p", "segment_id"), ("f", "segment_id")]);
    let names: Vec<(&str, usize)> = e.refs().iter().map(|r| (r.name, r.offset)).collect();
    assert_eq!(names, vec![("p", 5), ("f", 20)]);
    // Both finals had a partial before them.
    assert_eq!(
        parse("seen(f, segment_id, p)").unwrap().0.eval(&rec),
        vec![2.0]
    );
}

#[test]
fn field_functions_need_an_event_and_a_field() {
    for bad in [
        "lag(seg)",
        "lag(seg, )",
        "lag(seg, a b)",
        "repeats(seg, f, g)",
        "descents(seg, .f)",
    ] {
        let e = parse(bad).unwrap_err();
        assert_eq!(e.offset, bad.find('(').unwrap() + 1, "{bad}");
        assert!(e.msg.contains("numeric fields"), "{bad}: {}", e.msg);
    }
    assert!(parse("first(seg, f)").is_err());
    for bad in [
        "seen(p, f)",
        "seen(p, f, )",
        "seen(p, f, g h)",
        "seen(p, f, g, h)",
    ] {
        let e = parse(bad).unwrap_err();
        assert!(e.msg.contains("two event names"), "{bad}: {}", e.msg);
    }
    assert!(parse("lag(seg, a.b_2)").is_ok());
    let e = parse("lagg(seg, f)").unwrap_err();
    assert!(e.msg.contains("did you mean `lag`"), "{}", e.msg);
}

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("(".to_string()),
        Just(")".to_string()),
        Just(" + ".to_string()),
        Just("-".to_string()),
        Just("*".to_string()),
        Just("/".to_string()),
        Just("first(a)".to_string()),
        Just("mark(m)".to_string()),
        Just("gaps(a)".to_string()),
        Just("count(".to_string()),
        Just("lag(a, f)".to_string()),
        Just("repeats(a,f.g)".to_string()),
        Just("descents(a, )".to_string()),
        Just("seen(a, f, b)".to_string()),
        Just("1.5".to_string()),
        Just("1..".to_string()),
        Just("\u{3000}".to_string()),
        "[a-z(). ,\u{e9}]{1,4}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any text: an expression or an error at a valid offset, never a panic.
    #[test]
    fn the_parser_never_panics(text in "\\PC{0,64}") {
        if let Err(e) = parse(&text) {
            prop_assert!(e.offset <= text.len() && text.is_char_boundary(e.offset));
        }
    }

    /// Expression-shaped text, evaluated too when it parses.
    #[test]
    fn expression_shaped_text_parses_or_errs_and_evaluates(
        parts in prop::collection::vec(token(), 0..40),
    ) {
        let text = parts.concat();
        match parse(&text) {
            Ok((e, _)) => {
                let _ = e.eval(&rec());
            }
            Err(e) => prop_assert!(e.offset <= text.len()),
        }
    }

    /// Deep nesting and long sums (far past the limits) are refused without recursion
    /// proportional to their size.
    #[test]
    fn deep_or_long_input_is_refused_without_overflow(
        depth in 0usize..200_000,
        open in prop::sample::select(vec!["(", "((1+", "-(", "first(a)*("]),
    ) {
        let text = format!("{}count(a){}", open.repeat(depth), ")".repeat(depth));
        let _ = parse(&text);
        let sum = vec!["count(a)"; depth.min(5_000)].join("+");
        let _ = parse(&sum);
    }
}
