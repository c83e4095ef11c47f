//! Run summaries: failures only the report sees count once, with their kind.

use std::collections::BTreeMap;

use super::add_report_failures;
use crate::workload::{Failure, FailureKind, Report};

/// A report that found failures of its own (measured positions 0 and 2).
struct LateFailures(crate::workload::results::Recorded);

impl Report for LateFailures {
    fn render_text(&self) -> String {
        String::new()
    }
    fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
    fn recorded(&self) -> &crate::workload::results::Recorded {
        &self.0
    }
    fn scalars(&self) -> BTreeMap<String, f64> {
        BTreeMap::new()
    }
    fn report_failures(&self) -> Vec<(usize, String)> {
        vec![(0, "too few chunks".into()), (2, "too few chunks".into())]
    }
}

/// Issue 11 item 8: failures only the report can see count like any other, as kind
/// `report`, at the sample index of their measured position — but never twice for a
/// sample that already failed, and never for one an interrupt cancelled.
#[test]
fn report_time_failures_count_once_with_their_kind() {
    // Warm-up at index 0; measured samples are indices 1, 2, 3.
    let measured_idx = [1, 2, 3];
    let mut failures = vec![(3, Failure::new(FailureKind::Timeout, "late"))];
    add_report_failures(
        &mut failures,
        &LateFailures(Default::default()),
        &measured_idx,
        &[],
    );
    let got: Vec<(usize, FailureKind)> = failures.iter().map(|(i, f)| (*i, f.kind)).collect();
    assert_eq!(got, [(1, FailureKind::Report), (3, FailureKind::Timeout)]);
    let mut failures = Vec::new();
    add_report_failures(
        &mut failures,
        &LateFailures(Default::default()),
        &measured_idx,
        &[1],
    );
    let got: Vec<(usize, FailureKind)> = failures.iter().map(|(i, f)| (*i, f.kind)).collect();
    assert_eq!(got, [(3, FailureKind::Report)]);
}
