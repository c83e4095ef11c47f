//! The capacity page drawn from a real `capacity.json` (a search against the embedded
//! server with `max_sessions = 6`: 1, 2, 4 hold, 8 breaks, 6 holds, 7 breaks, 6
//! confirms) and variants of it: every number on the page is the step's recorded one.

use serde_json::{Value, json};

use super::super::super::svg::fmt_num;
use super::super::super::tests::{CAPACITY, caption, chart, count_chart, dots, parse, render_docs};

const CHARTS: [&str; 4] = [
    "capacity-concurrency",
    "capacity-outcomes",
    "capacity-slo",
    "capacity-tput-latency",
];

fn steps(doc: &Value) -> Vec<Value> {
    doc["capacity"]["steps"].as_array().unwrap().clone()
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[test]
fn the_page_shows_the_searchs_own_answer_steps_classes_and_p99s() {
    let doc = parse(CAPACITY);
    let html = render_docs(&[("capacity.json", doc.clone())]);
    let sentence = doc["capacity"]["sentence"].as_str().unwrap();
    assert!(html.contains(&format!("<p class=\"capacity\">{}</p>", esc(sentence))));
    let answer = doc["capacity"]["answer"].as_u64().unwrap();
    for kind in CHARTS {
        assert_eq!(count_chart(&html, kind), 1, "{kind}");
        assert!(
            caption(&html, kind).contains(&format!("green: capacity {answer}")),
            "{kind}"
        );
    }
    // The capacity line on every step panel, the staircase's horizontal.
    for kind in &CHARTS[..3] {
        assert!(chart(&html, kind).contains(&format!(">capacity {answer}</text>")));
    }
    let steps = steps(&doc);
    let slo = chart(&html, "capacity-slo");
    let p99 = dots(slo, "ttfc_ms.p99");
    assert_eq!(p99.len(), steps.len());
    let bars = chart(&html, "capacity-outcomes");
    for (i, s) in steps.iter().enumerate() {
        let (n, c) = (i + 1, s["max_concurrency"].as_u64().unwrap());
        let o = &s["outcomes"];
        let (k0, k1, k2, k3) = (&o["good"], &o["degraded"], &o["rejected"], &o["failed"]);
        let row = format!(
            "<td>{n}</td><td>{}</td><td>{c}</td><td>{k0}</td><td>{k1}</td><td>{k2}</td><td>{k3}</td><td>",
            s["phase"].as_str().unwrap()
        );
        assert!(html.contains(&row), "{row}");
        let measured = s["thresholds"][0]["measured"].as_f64().unwrap();
        let cell = html.split(&row).nth(1).unwrap().split('<').next().unwrap();
        assert!(
            (cell.parse::<f64>().unwrap() - measured).abs() <= 0.005,
            "{cell}"
        );
        assert_eq!(p99[i], (n as f64, fmt_num(measured, 3).parse().unwrap()));
        for class in ["good", "rejected"] {
            let k = &o[class];
            if k.as_u64() != Some(0) {
                let tip = format!("<title>step {n}, max_concurrency {c}: {k} {class}</title>");
                assert!(bars.contains(&tip), "{tip}");
            }
        }
        let stair = chart(&html, "capacity-concurrency");
        assert!(stair.contains(&format!(
            "<title>step {n} ({}): max_concurrency {c}</title>",
            s["phase"].as_str().unwrap()
        )));
    }
    // The threshold drawn where the p99 is.
    assert!(slo.contains(">ttfc_ms.p99 &lt; 2000</text>"));
    // Throughput vs latency: sessions/s and p99 of each step, in increasing concurrency.
    let mut order = steps.clone();
    order.sort_by_key(|s| s["max_concurrency"].as_u64());
    let curve = dots(chart(&html, "capacity-tput-latency"), "ttfc_ms.p99");
    let want: Vec<(f64, f64)> = order
        .iter()
        .map(|s| {
            let r = |v: f64| fmt_num(v, 3).parse::<f64>().unwrap();
            (
                r(s["sessions_per_s"].as_f64().unwrap()),
                r(s["thresholds"][0]["measured"].as_f64().unwrap()),
            )
        })
        .collect();
    assert_eq!(curve, want);
    for c in [1, 2, 4, 6, 7, 8] {
        assert!(
            chart(&html, "capacity-tput-latency").contains(&format!(">{c}</text>")),
            "{c}"
        );
    }
    // Steps 5 and 7 held at the capacity (highlighted), 4 and 6 broke (red), on each of
    // the four panels.
    assert_eq!(html.matches("class=\"mark hl\"").count(), 8);
    assert_eq!(html.matches("class=\"mark fail\"").count(), 8);
    assert_eq!(html.matches("class=\"mark warn\"").count(), 0);
}

#[test]
fn a_search_stopped_by_an_inconclusive_step_rings_it_amber_and_says_why_in_each_caption() {
    let mut doc = parse(CAPACITY);
    let cap = &mut doc["capacity"];
    let mut steps = steps(&json!({"capacity": cap.clone()}));
    steps.truncate(4);
    steps[3]["verdict"] = json!("inconclusive");
    steps[3]["reasons"] = json!(["generator-bound (send lateness p99 40 ms)"]);
    cap["steps"] = json!(steps);
    cap["answer"] = Value::Null;
    cap["at_least"] = json!(4);
    cap["limited_by"] = Value::Null;
    cap["sentence"] = Value::Null;
    let html = render_docs(&[("capacity.json", doc)]);
    // No recorded sentence: the page works it out with the terminal's function.
    assert!(html.contains(
        "<p class=\"capacity none\">Capacity: not found: generator-bound at 8 (send lateness p99 40 ms): the capacity is at least 4"
    ));
    for kind in CHARTS {
        assert!(
            caption(&html, kind).contains("no capacity found: the search stopped at an inconclusive step (8); the capacity is at least 4"),
            "{kind}"
        );
    }
    assert_eq!(html.matches("class=\"mark warn\"").count(), 4);
    assert!(!html.contains("mark hl"));
    assert!(html.contains("<tr class=\"short\"><td>4</td>"));
}

#[test]
fn without_thresholds_the_headline_p99_is_drawn_and_no_threshold_line() {
    let mut doc = parse(CAPACITY);
    for s in doc["capacity"]["steps"].as_array_mut().unwrap() {
        s["thresholds"] = json!([]);
    }
    let headline = doc["rtload"]["headline_metrics"][0]
        .as_str()
        .unwrap()
        .to_string();
    let fam = headline.split('.').next().unwrap();
    let html = render_docs(&[("capacity.json", doc.clone())]);
    let cap = caption(&html, "capacity-slo");
    assert!(
        cap.contains(&format!(
            "no [thresholds] set: the workload&#39;s headline {headline}"
        )),
        "{cap}"
    );
    assert!(cap.contains("no threshold on this metric to draw"));
    let p99: Vec<f64> = dots(chart(&html, "capacity-slo"), &format!("{fam}.p99"))
        .iter()
        .map(|d| d.1)
        .collect();
    let want: Vec<f64> = steps(&doc)
        .iter()
        .map(|s| {
            fmt_num(s["metrics"][format!("{fam}.p99")].as_f64().unwrap(), 3)
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(p99, want);
    assert!(!chart(&html, "capacity-slo").contains("class=\"ref\""));
}

#[test]
fn an_interrupted_search_says_so_and_claims_nothing() {
    let mut doc = parse(CAPACITY);
    let cap = &mut doc["capacity"];
    for k in ["answer", "at_least", "limited_by", "sentence"] {
        cap[k] = Value::Null;
    }
    cap["interrupted"] = json!(true);
    let html = render_docs(&[("capacity.json", doc)]);
    assert!(html.contains("Capacity: not found: the search was interrupted after 7 step(s)"));
    assert!(html.contains("<p class=\"banner\">interrupted"));
    assert!(
        caption(&html, "capacity-outcomes").contains("no capacity: the search was interrupted")
    );
    assert!(!html.contains("mark hl"));
}

#[test]
fn a_capacity_document_is_its_own_kind_and_never_overlaid() {
    let doc = parse(CAPACITY);
    assert_eq!(
        super::super::super::classify(&doc),
        Ok(super::super::super::DocKind::Capacity)
    );
    let html = render_docs(&[("a.json", doc.clone()), ("b.json", doc)]);
    assert!(!html.contains("id=\"cmp-0\""));
    assert_eq!(count_chart(&html, "capacity-concurrency"), 2);
    // Malformed steps never panic and draw nothing non-finite.
    let bad = json!({"capacity": {"steps": [{"phase": "x"}, {"max_concurrency": "a"}, 3]}});
    let html = render_docs(&[("c.json", bad)]);
    assert!(!html.contains("NaN"));
}
