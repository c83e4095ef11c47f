//! The soak's terminal block: one column per interval (the first and last
//! [`SHOWN_EACH_END`] when there are more; `rtload.soak` in the JSON has them all), one
//! row per figure, so each row reads as a curve over the run or over session age.

use super::{Slice, Soak, core_share};

/// Columns shown from each end of a long series.
pub const SHOWN_EACH_END: usize = 5;

/// The indices of `n` columns shown, `None` marking the elided middle.
fn shown(n: usize) -> Vec<Option<usize>> {
    if n <= 2 * SHOWN_EACH_END {
        return (0..n).map(Some).collect();
    }
    (0..SHOWN_EACH_END)
        .map(Some)
        .chain(std::iter::once(None))
        .chain((n - SHOWN_EACH_END..n).map(Some))
        .collect()
}

fn cell(v: Option<f64>, decimals: usize) -> String {
    v.filter(|v| v.is_finite())
        .map_or_else(|| "-".to_string(), |v| format!("{v:.decimals$}"))
}

/// One row: its label, then a cell per shown column (`…` for the elided middle).
fn row(label: &str, cols: &[Option<usize>], value: impl Fn(usize) -> String) -> String {
    let mut line = format!("{label:<40}");
    for c in cols {
        let v = c.map_or_else(|| "…".to_string(), &value);
        line.push_str(&format!(" {v:>9}"));
    }
    line.trim_end().to_string() + "\n"
}

fn secs(s: f64) -> String {
    crate::util::textpos::num((s * 10.0).round() / 10.0)
}

impl Soak {
    /// The terminal block (empty when the run fit in one interval of both clocks).
    pub fn text(&self) -> String {
        if !self.spans_intervals() {
            return String::new();
        }
        let mut t = format!(
            "{:-^50}\n",
            format!(" Over time (every {} s) ", secs(self.interval_s))
        );
        t.push_str(&self.resources_text());
        t.push_str(&self.age_text());
        if !self.by_turn.is_empty() {
            t.push_str(&slices_text("By turn", &self.by_turn, |s| {
                format!("{}", s.from_s)
            }));
        }
        t.push_str(&format!("{:=^50}\n", ""));
        t
    }

    fn resources_text(&self) -> String {
        let r = &self.resources;
        if r.is_empty() {
            return String::new();
        }
        let cols = shown(r.len());
        let mut t = row("Live phase, interval end (s):", &cols, |i| secs(r[i].to_s));
        t.push_str(&row("Sessions in flight:", &cols, |i| {
            r[i].sessions.to_string()
        }));
        t.push_str(&row("RSS at the end (MiB):", &cols, |i| {
            cell(r[i].rss_mib, 1)
        }));
        t.push_str(&row("RSS, largest (MiB):", &cols, |i| {
            cell(r[i].rss_max_mib, 1)
        }));
        t.push_str(&row("CPU (% of a core):", &cols, |i| {
            cell(core_share(&r[i]).map(|c| c * 100.0), 1)
        }));
        t
    }

    fn age_text(&self) -> String {
        if self.by_age.is_empty() {
            return String::new();
        }
        let a = &self.by_age;
        let cols = shown(a.len());
        let mut t = row("Session age, interval start (s):", &cols, |i| {
            secs(a[i].from_s)
        });
        t.push_str(&row("Sessions open:", &cols, |i| a[i].sessions.to_string()));
        t.push_str(&row("Sessions failed:", &cols, |i| a[i].failed.to_string()));
        t.push_str(&metric_rows(a, &cols));
        t
    }
}

/// A p99 row per metric stamped in any of `slices`.
fn metric_rows(slices: &[Slice], cols: &[Option<usize>]) -> String {
    let mut names: Vec<&str> = (slices.iter())
        .flat_map(|s| s.metrics.keys().map(String::as_str))
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut t = String::new();
    for name in names {
        t.push_str(&row(&format!("{name} p99:"), cols, |i| {
            cell(
                slices[i].metrics.get(name).and_then(|m| m.percentile(99.0)),
                3,
            )
        }));
    }
    t
}

fn slices_text(head: &str, slices: &[Slice], label: impl Fn(&Slice) -> String) -> String {
    let cols = shown(slices.len());
    let mut t = row(&format!("{head}:"), &cols, |i| label(&slices[i]));
    t.push_str(&metric_rows(slices, &cols));
    t
}
