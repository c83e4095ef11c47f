//! What an `await` with `since = "M"` will see when it runs: from the time mark `M` was
//! taken, each inbound message is checked against that await's own patterns, and only
//! the matches are kept (sequence number, receipt time, which pattern). A watch stops
//! collecting once the await would have ended (its first match, or its `until`), so it
//! holds at most what the await itself would record.

use serde_json::Value;
use tokio::time::Instant;

use crate::workload::scripted::script::{Action, Script};

/// One message as an await sees it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Hit {
    /// The message's sequence number.
    pub seq: u64,
    /// When it was read.
    pub at: Instant,
    /// It matches the await's pattern.
    pub main: bool,
    /// It matches the await's `until`.
    pub until: bool,
}

impl Hit {
    /// How the await at step `pc` sees `msg`; `None` when it matches neither pattern.
    pub fn of(script: &Script, pc: usize, msg: &Value, seq: u64, at: Instant) -> Option<Hit> {
        let Some(Action::Await { matcher, until, .. }) = script.steps.get(pc).map(|s| &s.action)
        else {
            return None;
        };
        let main = matcher.matches(msg);
        let until = until.as_ref().is_some_and(|u| u.matches(msg));
        (main || until).then_some(Hit {
            seq,
            at,
            main,
            until,
        })
    }
}

/// The matches an await with `since` has had before it runs.
#[derive(Debug)]
pub(super) struct Watch {
    /// The await's step index.
    pub step: usize,
    /// Its matches so far, in order.
    pub hits: Vec<Hit>,
    done: bool,
}

impl Watch {
    /// Start watching for the await at step `step`.
    pub fn new(step: usize) -> Self {
        Self {
            step,
            hits: Vec::new(),
            done: false,
        }
    }

    /// One inbound message.
    pub fn see(&mut self, script: &Script, msg: &Value, seq: u64, at: Instant) {
        if self.done {
            return;
        }
        let Some(hit) = Hit::of(script, self.step, msg, seq, at) else {
            return;
        };
        let collect = matches!(
            script.steps.get(self.step).map(|s| &s.action),
            Some(Action::Await { collect: true, .. })
        );
        self.done = hit.until || (hit.main && !collect);
        self.hits.push(hit);
    }
}
