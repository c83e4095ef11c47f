//! The terminal blocks of the conversation metrics (barge-in, turns): a title, a few
//! counts, then each metric's mean and percentiles from the run's recorded values.

use super::json::pct_label;
use crate::workload::omni::bench_metrics::aggregate;
use crate::workload::results::Recorded;

/// `title` over `counts` (label, value) and, per `(metric, label)` of `rows`, its mean
/// and percentiles `pcts` in `rec` ("none" when it has no value).
pub(super) fn block(
    title: &str,
    counts: &[(&str, usize)],
    rows: &[(&str, &str)],
    rec: &Recorded,
    pcts: &[f64],
) -> String {
    let mut t = format!("{title:-^50}\n");
    let row = |t: &mut String, k: &str, v: String| t.push_str(&format!("{k:<40} {v:<10}\n"));
    for (label, n) in counts {
        row(&mut t, label, n.to_string());
    }
    for (name, label) in rows {
        let agg = aggregate(rec.values(name), 1.0, f64::NAN, pcts);
        if agg.count == 0 {
            row(&mut t, &format!("{label}:"), "none".into());
            continue;
        }
        row(
            &mut t,
            &format!("Mean {label}:"),
            format!("{:.2}", agg.mean),
        );
        for (p, v) in &agg.percentiles {
            row(
                &mut t,
                &format!("P{} {label}:", pct_label(*p)),
                format!("{v:.2}"),
            );
        }
    }
    t
}
