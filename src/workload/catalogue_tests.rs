use super::*;

const FAMILIES: [Family; 3] = [
    Family::new("ttfc_ms", "ms", Direction::Lower, "time to first chunk"),
    Family::new("ttfc_ms_mean", "ms", Direction::Lower, "mean TTFC"),
    Family::new(
        "completed",
        "count",
        Direction::Higher,
        "sessions completed",
    ),
];

#[test]
fn longest_prefix_wins_and_count_is_not_a_score() {
    let c = Catalogue::build(
        [
            "ttfc_ms.p99",
            "ttfc_ms_mean",
            "ttfc_ms.count",
            "completed",
            "odd",
        ],
        &FAMILIES,
        &["ttfc_ms.p99", "missing"],
    );
    assert_eq!(c.direction("ttfc_ms.p99"), Direction::Lower);
    assert_eq!(
        c.get("ttfc_ms_mean").map(|m| m.description.as_str()),
        Some("mean TTFC")
    );
    assert_eq!(c.direction("ttfc_ms.count"), Direction::NotAScore);
    assert_eq!(c.direction("completed"), Direction::Higher);
    assert_eq!(c.direction("nope"), Direction::NotAScore);
    assert_eq!(c.headline(), ["ttfc_ms.p99".to_string()]);
    assert_eq!(c.check(&FAMILIES), Err(Undeclared(vec!["odd".into()])));
}

#[test]
fn per_second_is_missing_without_a_duration() {
    assert_eq!(per_second(96.0, 4.0), Some(24.0));
    assert_eq!(per_second(0.0, 2.0), Some(0.0));
    assert_eq!(per_second(5.0, 0.0), None);
    assert_eq!(per_second(5.0, -1.0), None);
    assert_eq!(per_second(f64::NAN, 1.0), None);
    assert_eq!(per_second(1.0, f64::INFINITY), None);
}

#[test]
fn unit_rate_must_be_declared() {
    let c = Catalogue::build(["completed"], &FAMILIES, &[]);
    assert_eq!(c.clone().with_unit_rate("nope", "x/s").unit_rate(), None);
    let c = c.with_unit_rate("completed", "sessions/s");
    assert_eq!(
        c.unit_rate(),
        Some(&UnitRate {
            metric: "completed".into(),
            unit: "sessions/s".into()
        })
    );
}

#[test]
fn round_trips_through_a_result_document() {
    let c = Catalogue::build(["ttfc_ms.p99", "completed"], &FAMILIES, &["completed"])
        .with_unit_rate("completed", "sessions/s");
    let mut doc = serde_json::json!({"metrics": {}});
    c.write_into(&mut doc);
    assert_eq!(doc["rtload"]["metrics_catalogue"][0]["direction"], "higher");
    assert_eq!(doc["rtload"]["unit_rate"]["unit"], "sessions/s");
    // A result carries every chart (declared and default) as declared ones.
    let charts = c.charts();
    assert_eq!(Catalogue::from_result(&doc), Some(c.with_charts(charts)));
    assert_eq!(
        Catalogue::from_result(&serde_json::json!({"rtload": {}})),
        None
    );
}
