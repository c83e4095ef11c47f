//! Per-turn completeness: a metric measured per mark should have one value each time
//! its mark was taken in a completed session. When it has fewer, some turn's window
//! (from its mark to the end of its turn) never saw the event, and a threshold on the
//! pooled values would pass on the turns that were measured alone; the report says so.

use std::collections::BTreeMap;

use super::script::MetricDef;

/// One warning per declared metric whose values, pooled over `completed` sessions, are
/// fewer than its anchor mark's windows: `turns` maps a metric to (windows with a
/// value, windows).
pub fn warnings(
    defs: &[MetricDef],
    turns: &BTreeMap<&str, (usize, usize)>,
    completed: usize,
) -> Vec<String> {
    defs.iter()
        .filter_map(|d| {
            let &(got, of) = turns.get(d.name.as_str())?;
            let mark = d.anchor()?;
            (got < of).then(|| {
                format!(
                    "`{}` has {got} value{} for {of} turn{} (mark `{mark}` taken {of} time{} in {completed} completed session{}): {} turn{} had no matching event between the mark and the end of its turn; check the event's pattern, or give the `await` that waits for it `since = \"{mark}\"` if its reply can come before the await starts",
                    d.name,
                    plural(got),
                    plural(of),
                    plural(of),
                    plural(completed),
                    of - got,
                    plural(of - got),
                )
            })
        })
        .collect()
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
#[path = "turns_tests.rs"]
mod tests;
