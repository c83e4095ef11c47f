//! Tests of the SVG primitives: escaping, coordinates, nice ticks, integer axes, lines
//! broken at non-finite points, middle-ellipsis labels.

use super::*;

#[test]
fn esc_escapes_markup_and_quotes() {
    assert_eq!(
        esc(r#"<a href="x">'&'</a>"#),
        "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
    );
    assert_eq!(esc("ok\u{1}\tµs"), "ok\tµs");
}

#[test]
fn coord_rejects_non_finite_and_normalises_zero() {
    assert_eq!(coord(f64::NAN), None);
    assert_eq!(coord(f64::INFINITY), None);
    assert_eq!(coord(-0.001).as_deref(), Some("0.00"));
    assert_eq!(coord(12.345).as_deref(), Some("12.35"));
}

#[track_caller]
fn check_ticks(lo: f64, hi: f64, max: usize, want: &[f64]) {
    let got = nice_ticks(lo, hi, max);
    assert_eq!(got, want, "ticks of [{lo}, {hi}] max {max}");
}

#[test]
fn nice_ticks_cover_the_range_with_round_steps() {
    check_ticks(0.0, 750.0, 6, &[0.0, 200.0, 400.0, 600.0, 800.0]);
    check_ticks(52.4, 97.1, 6, &[50.0, 60.0, 70.0, 80.0, 90.0, 100.0]);
    check_ticks(0.0, 1.0, 5, &[0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
    check_ticks(0.1, 0.3, 4, &[0.1, 0.15, 0.2, 0.25, 0.3]);
    check_ticks(-3.0, 7.0, 5, &[-4.0, -2.0, 0.0, 2.0, 4.0, 6.0, 8.0]);
    check_ticks(5.0, 5.0, 5, &[4.4, 4.6, 4.8, 5.0, 5.2, 5.4, 5.6]);
    // Equal values widen without crossing zero: all zeros (every WER 0, no failures)
    // get [0, 1], never [-1, 1].
    check_ticks(0.0, 0.0, 5, &[0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
    for v in [0.05, 3.0, -2.0, -0.001] {
        let t = nice_ticks(v, v, 5);
        let (first, last) = (t[0], t[t.len() - 1]);
        assert!(first < v && v < last, "{v}: {t:?}");
        assert!(v < 0.0 || first >= 0.0, "{v}: {t:?}");
        assert!(v > 0.0 || last <= 0.0, "{v}: {t:?}");
    }
    let zeros = Axis::fit("failed", [0.0, 0.0, 0.0], true).expect("axis");
    assert_eq!((zeros.lo, zeros.hi), (0.0, 1.0));
    assert!(nice_ticks(f64::NAN, 1.0, 5).is_empty());
    assert!(nice_ticks(0.0, f64::INFINITY, 5).is_empty());
    assert!(nice_ticks(-1e308, 1e308, 5).is_empty());
}

#[test]
fn integer_axis_has_integer_ticks() {
    let a = Axis::fit("chunk", [1.0, 3.0], true).expect("axis");
    let mut p = Plot::linear(
        "t",
        "t",
        a,
        Axis::fit("y", [0.0, 1.0], false).expect("axis"),
    );
    p.line(&[(1.0, 0.5), (3.0, 0.5)], 0, "s");
    let svg = p.finish();
    assert!(svg.contains(">1</text>") && svg.contains(">3</text>"));
    assert!(!svg.contains(">1.5</text>"));
}

#[test]
fn nan_points_break_the_line_instead_of_dropping_to_zero() {
    let x = Axis::fit("x", [0.0, 4.0], true).expect("axis");
    let y = Axis::fit("y", [10.0, 20.0], false).expect("axis");
    let mut p = Plot::linear("t", "t", x, y);
    p.line(
        &[
            (0.0, 10.0),
            (1.0, f64::NAN),
            (2.0, 20.0),
            (3.0, f64::INFINITY),
            (4.0, 15.0),
        ],
        0,
        "s",
    );
    let svg = p.finish();
    assert_eq!(svg.matches("<circle class=\"mark dot\"").count(), 3);
    // Three separate sub-paths: every finite point starts a new "M" after a gap.
    let d = svg
        .split("class=\"mark line\" d=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("path");
    assert_eq!(d.matches('M').count(), 3, "path {d}");
    assert!(!svg.contains("NaN") && !svg.contains("inf"));
}

#[test]
fn long_labels_are_shortened_in_the_middle_with_the_full_name_on_hover() {
    assert_eq!(ellipsize_middle("abcdef", 6), "abcdef");
    assert_eq!(ellipsize_middle("case_0001_000.frames", 9), "case…ames");
    assert_eq!(label("a<b", 10), "a&lt;b");
    assert_eq!(label("0123456789", 5), "<title>0123456789</title>01…89");
}
