//! One number, one source, checked end to end per shipped scenario: each headline metric
//! of the JSON result (`rtload.headline_metrics`, valued in `rtload.metrics`) is the
//! number the terminal report prints for it and the value in the HTML report's headline
//! table, each compared at the precision it is printed with. A headline the terminal or
//! the page does not show fails too.
//!
//! The terminal reports are each workload's own text, so this file (a test, outside
//! `src/`) says where each one prints each headline: the line's label and which number
//! after it. The same runs check that every chart a workload declares (`rtload.charts`)
//! is drawn from the data its real result carries, and that the receipts line and the
//! generator-health row show the result's `rtload.wire.receipts`.

use std::path::{Path, PathBuf};

use crate::cli::walk;
use crate::support::rtload;

/// Where the terminal prints a headline: the label it follows (the first line that
/// contains it) and which number after the label (0 = the first).
type Printed = (&'static str, &'static str, usize);

/// Copy the shipped `scenarios/` (with `data/`, without run outputs) into `dir`.
fn copy_scenarios(dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let dst = dir.join("scenarios");
    for file in walk(&src) {
        let rel = file.strip_prefix(&src).unwrap();
        let top = rel.components().next().unwrap().as_os_str();
        if rel.components().count() == 1 || top == "data" {
            let to = dst.join(rel);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&file, &to).unwrap();
        }
    }
    dst
}

/// The numbers in `text`, each with the decimals it was printed with.
fn numbers(text: &str) -> Vec<(f64, usize)> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let starts =
            b[i].is_ascii_digit() || (b[i] == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit));
        let glued = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if !starts || glued {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
            i += 1;
        }
        let tok = text[start..i].trim_end_matches('.');
        if let Ok(v) = tok.parse::<f64>() {
            let decimals = tok.split_once('.').map_or(0, |(_, d)| d.len());
            out.push((v, decimals));
        }
    }
    out
}

/// `printed` equals `value` at the precision it was printed with (half a unit of its
/// last digit, plus float noise).
fn agrees(value: f64, (printed, decimals): (f64, usize)) -> bool {
    let half = 0.5 * 10f64.powi(-(decimals as i32));
    (value - printed).abs() <= half * (1.0 + 1e-9) + 1e-12
}

/// The number the terminal prints for a headline, per `printed`.
fn terminal_number(stdout: &str, (_, label, k): &Printed) -> Option<(f64, usize)> {
    let line = stdout.lines().find(|l| l.contains(label))?;
    let after = &line[line.find(label)? + label.len()..];
    numbers(after).get(*k).copied()
}

/// The value cell of headline `name` in the HTML headline table.
fn html_number(html: &str, name: &str) -> Option<(f64, usize)> {
    let table = html
        .split("<table class=\"headline\">")
        .nth(1)?
        .split("</table>")
        .next()?;
    let row = table.split(&format!("<tr><td>{name}</td>")).nth(1)?;
    let row = row.split("</tr>").next()?;
    let cell = row
        .split("<td class=\"value\">")
        .nth(1)?
        .split("</td>")
        .next()?;
    numbers(cell).first().copied()
}

/// Run shipped scenario `name`, render its HTML report, and compare every headline.
fn check(name: &str, printed: &[Printed]) {
    let tmp = tempfile::tempdir().unwrap();
    copy_scenarios(tmp.path());
    let json = tmp.path().join(format!("{name}.json"));
    let html = tmp.path().join(format!("{name}.html"));
    let scenario = format!("scenarios/{name}.toml");
    let run = rtload()
        .args([
            "run",
            &scenario,
            "--output-json",
            json.to_str().unwrap(),
            "-q",
        ])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{name}: {stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let report = rtload()
        .args([
            "report",
            json.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(report.status.code(), Some(0), "{name}: report failed");
    let doc = rtload::report::read_result(&json).expect("result JSON");
    let page = std::fs::read_to_string(&html).unwrap();
    let heads: Vec<&str> = doc["rtload"]["headline_metrics"]
        .as_array()
        .expect("headline_metrics")
        .iter()
        .filter_map(|h| h.as_str())
        .collect();
    assert!(!heads.is_empty(), "{name}: no headline metrics");
    let mut bad = Vec::new();
    for h in &heads {
        let Some(value) = doc["rtload"]["metrics"][h].as_f64() else {
            bad.push(format!("{h}: not in rtload.metrics"));
            continue;
        };
        match printed.iter().find(|p| p.0 == *h) {
            None => bad.push(format!(
                "{h}: this test does not know where the terminal prints it"
            )),
            Some(p) => match terminal_number(&stdout, p) {
                Some(t) if agrees(value, t) => {}
                t => bad.push(format!("{h}: JSON {value}, terminal {t:?} ({:?})", p.1)),
            },
        }
        match html_number(&page, h) {
            Some(x) if agrees(value, x) => {}
            x => bad.push(format!("{h}: JSON {value}, HTML headline table {x:?}")),
        }
    }
    bad.extend(undrawn(&doc, &page));
    bad.extend(receipts_disagree(&doc, &stdout, &page));
    assert!(
        bad.is_empty(),
        "{name}:\n{}\n--- terminal:\n{stdout}",
        bad.join("\n")
    );
}

/// Where the terminal's receipts line or the HTML generator-health row departs from the
/// result's `rtload.wire.receipts` block (counts, reader delay p50 / p99 / max); also
/// that the kernel stamped some receipts (Linux).
fn receipts_disagree(doc: &serde_json::Value, stdout: &str, page: &str) -> Vec<String> {
    let block = &doc["rtload"]["wire"]["receipts"];
    let d = &block["reader_delay"];
    let want = [
        block["kernel_stamped"].as_f64(),
        block["stamped_at_read"].as_f64(),
        d["p50_ms"].as_f64(),
        d["p99_ms"].as_f64(),
        d["max_ms"].as_f64(),
    ];
    let mut bad = Vec::new();
    if !want[0].is_some_and(|n| n > 0.0) {
        bad.push(format!("receipts: none stamped by the kernel: {block}"));
    }
    let line = stdout.lines().find_map(|l| l.strip_prefix("Receipts:"));
    let got = line.map(numbers).unwrap_or_default();
    if got.len() != want.len()
        || !want
            .iter()
            .zip(&got)
            .all(|(w, g)| w.is_some_and(|w| agrees(w, *g)))
    {
        bad.push(format!("receipts: JSON {block}, terminal {line:?}"));
    }
    let row = "<tr><td>receipt reader delay p99 (kernel stamp → reader)</td><td>ms</td><td>";
    let cell = page.split(row).nth(1).and_then(|r| r.split("</td>").next());
    match (cell.and_then(|c| numbers(c).first().copied()), want[3]) {
        (Some(x), Some(w)) if agrees(w, x) => {}
        (x, w) => bad.push(format!("receipts: JSON p99 {w:?}, HTML {x:?} ({cell:?})")),
    }
    bad.extend(phase_rows_disagree(doc, page));
    bad
}

/// Where the HTML generator-health rows of `rtload.phase_cpu` depart from the block.
fn phase_rows_disagree(doc: &serde_json::Value, page: &str) -> Vec<String> {
    let p = &doc["rtload"]["phase_cpu"];
    [
        ("setup CPU per session", &p["setup"]["cpu_us_per_session"]),
        (
            "publication CPU per session",
            &p["publication"]["cpu_us_per_session"],
        ),
        (
            "generator CPU through publication per live session-second",
            &p["through_publication"]["cpu_us_per_session_s"],
        ),
    ]
    .into_iter()
    .filter_map(|(label, want)| {
        let row = page.split(&format!("<tr><td>{label}")).nth(1)?;
        let cell = row.split("<td>").nth(2)?.split("</td>").next()?;
        let got = numbers(cell).first().copied();
        match (want.as_f64(), got) {
            (Some(w), Some(x)) if agrees(w, x) => None,
            (w, x) => Some(format!("{label}: JSON {w:?}, HTML {x:?} ({cell:?})")),
        }
    })
    .chain(
        (!page.contains("<tr><td>generator CPU through publication"))
            .then(|| "no through-publication row in the HTML".to_string()),
    )
    .collect()
}

/// The charts `doc` declares that `page` does not draw: a series or timeline always, a
/// distribution when the result has values of it.
fn undrawn(doc: &serde_json::Value, page: &str) -> Vec<String> {
    let charts = doc["rtload"]["charts"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut bad = Vec::new();
    if charts.is_empty() {
        bad.push("no rtload.charts".to_string());
    }
    for c in charts {
        let id = c["id"].as_str().unwrap_or("?");
        let (svg_id, needed) = match c["kind"].as_str() {
            Some("distribution") => {
                let d = c["distribution"].as_str().unwrap_or("?");
                let n = doc["rtload"]["distributions"][d]
                    .as_array()
                    .map_or(0, Vec::len);
                (format!("dist-{id}"), n > 0)
            }
            _ => (id.to_string(), true),
        };
        let drawn = page.contains(&format!("<svg class=\"chart\" data-chart=\"{svg_id}\""));
        if needed && !drawn {
            bad.push(format!("chart {svg_id} declared but not drawn"));
        }
    }
    bad
}

#[test]
fn parsing_printed_numbers() {
    assert_eq!(
        numbers("Mean AUDIO_RTF: 0.47 p99 -42.9 x2 12"),
        [(0.47, 2), (-42.9, 1), (12.0, 0)]
    );
    assert!(agrees(0.4706, (0.47, 2)) && !agrees(0.476, (0.47, 2)));
    assert!(!agrees(1.0, (100.0, 0)) && agrees(354.1, (354.1, 1)));
}

#[test]
fn omni_headlines_agree_in_terminal_json_and_html() {
    check(
        "quickstart",
        &[
            ("ttft_ms.p99", "P99 TTFT (ms):", 0),
            ("audio_ttfp_ms.p99", "P99 AUDIO_TTFP (ms):", 0),
            ("audio_rtf.mean", "Mean AUDIO_RTF:", 0),
            ("request_throughput", "Request throughput (req/s):", 0),
        ],
    );
}

#[test]
fn video_headlines_agree_in_terminal_json_and_html() {
    check(
        "video-quickstart",
        &[
            ("ttfc_ms.mean", "TTFC mean", 0),
            ("chunk_interval_ms.p99", "steady interval p50 / p99", 1),
            ("video_rtf.mean", "fps mean (lower is better)", 0),
            ("slo_attainment", "SLO attainment", 0),
        ],
    );
}

#[test]
fn transcription_headlines_agree_in_terminal_json_and_html() {
    check(
        "transcription",
        &[
            ("ttft_ms.p50", "p50 TTFT (ms):", 0),
            ("ttft_ms.p99", "p99 TTFT (ms):", 0),
            ("finalization_ms.p99", "p99 Finalization (ms):", 0),
            ("wer", "WER (corpus):", 0),
        ],
    );
}

#[test]
fn scripted_headlines_agree_in_terminal_json_and_html() {
    // The table's columns after the name: n, mean, p50, p90, p99, max.
    check(
        "scripted-transcription",
        &[
            ("ttft_ms.mean", "ttft_ms (ms)", 1),
            ("ttft_ms.p99", "ttft_ms (ms)", 4),
            ("failed", "completed,", 0),
        ],
    );
    check(
        "openai-realtime",
        &[
            ("first_audio_ms.mean", "first_audio_ms (ms)", 1),
            ("first_audio_ms.p99", "first_audio_ms (ms)", 4),
            ("failed", "completed,", 0),
        ],
    );
}
