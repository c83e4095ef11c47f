use serde_json::json;

use super::*;
use crate::workload::catalogue::{Catalogue, Direction, Family};

fn catalogue() -> Catalogue {
    let families = [
        Family::new("ttft_ms", "ms", Direction::Lower, "ttft").dist(),
        Family::new("itl_ms", "ms", Direction::Lower, "itl").dist(),
        Family::new("deadline_ms", "ms", Direction::NotAScore, "deadline"),
    ];
    Catalogue::of(&families, &[50.0, 99.0], &["ttft_ms.p99"])
}

fn series() -> Chart {
    Chart {
        id: "cadence".into(),
        title: "cadence".into(),
        draw: Draw::SessionSeries {
            series: "cadence".into(),
            x: Scale {
                label: "index".into(),
                unit: String::new(),
                integer: true,
            },
            y: Scale {
                label: "gap".into(),
                unit: "ms".into(),
                integer: false,
            },
            reference: Some(Reference {
                metric: "deadline_ms".into(),
                label: "deadline".into(),
            }),
            band: None,
        },
    }
}

#[test]
fn every_distribution_is_plotted_after_the_declared_charts() {
    let none = catalogue();
    assert!(!none.declares_charts());
    let ids: Vec<String> = none.charts().into_iter().map(|c| c.id).collect();
    assert_eq!(ids, ["itl_ms", "ttft_ms"]);
    let declared = catalogue().with_charts(vec![
        series(),
        distribution("ttft_ms", None),
        timeline("t", &["session"], Vec::new()),
    ]);
    let ids: Vec<String> = declared.charts().into_iter().map(|c| c.id).collect();
    assert_eq!(ids, ["cadence", "ttft_ms", "timeline", "itl_ms"]);
}

#[test]
fn charts_travel_in_the_result_and_a_merged_results_repeats_read_once() {
    let cat = catalogue().with_charts(vec![series()]);
    let mut doc = json!({});
    cat.write_into(&mut doc);
    let written = doc["rtload"][CHARTS_KEY].clone();
    assert_eq!(written[0]["kind"], "session_series");
    assert_eq!(written[0]["reference"]["metric"], "deadline_ms");
    let back = Catalogue::from_result(&doc).expect("catalogue");
    assert_eq!(back.charts(), cat.charts());
    // Merge concatenates arrays: the same chart twice, and one this version cannot read.
    let mut merged = doc.clone();
    let mut twice = written.as_array().unwrap().clone();
    twice.extend(written.as_array().unwrap().iter().cloned());
    twice.push(json!({"id": "new", "title": "from a later version", "kind": "heatmap"}));
    merged["rtload"][CHARTS_KEY] = json!(twice);
    assert_eq!(of_result(&merged), Some(cat.charts()));
    assert_eq!(of_result(&json!({"rtload": {}})), None);
}

#[test]
fn timeline_rows_carry_the_session_number_and_spans_never_run_backwards() {
    let s = Span::new("input", "streaming", 2.0, 1.5);
    assert_eq!((s.start_s, s.end_s), (2.0, 2.0));
    let row = TimelineRow {
        session: Some(7),
        label: None,
        start_s: 1.0,
        end_s: 3.0,
        error: Some("closed".into()),
        spans: vec![s],
    };
    let v = serde_json::to_value(&row).unwrap();
    assert_eq!(v["session"], 7);
    assert!(v.get("label").is_none());
    let t = timeline("t", &["session", "input"], Vec::new());
    let Draw::Timeline { kinds, lanes } = &t.draw else {
        panic!("a timeline")
    };
    assert_eq!(lanes.len(), 2);
    assert_eq!(kinds[0].kind, QUEUE_KIND);
}
