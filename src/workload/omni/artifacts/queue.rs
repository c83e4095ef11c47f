//! The finalizer's staged bundles, landed a batch at a time: one `syncfs` of the
//! output filesystem, then each bundle swapped in, in the order the cases were handed
//! over (a case run twice lands its later bundle last). A batch closes once its staged
//! bundles weigh [`STAGED_BYTES`] (each the larger of its new and its earlier bundle),
//! so what a run stages beside the bundles it replaces stays bounded: the free-space
//! check ([`super::space::shortfall`]) counts on it.

use std::path::Path;

use super::layout::{BATCH_FILES, DONE};
use super::publish::{StagedBundle, remove_files, sync_filesystem};
use super::space::STAGED_BYTES;

/// A bundle that did not land: which case (its hand-over index), whether it was a
/// failure bundle, and why.
#[derive(Debug)]
pub(super) struct Unlanded {
    pub(super) index: usize,
    pub(super) failure: bool,
    pub(super) message: String,
}

#[derive(Debug)]
struct Queued {
    index: usize,
    bundle: StagedBundle,
    failure: bool,
}

/// Bundles staged and not yet landed.
#[derive(Debug, Default)]
pub(super) struct Queue {
    items: Vec<Queued>,
    weight: u64,
}

impl Queue {
    /// Queues case `index`'s staged `bundle`, which with the bundle it replaces weighs
    /// `weight` bytes. True when the batch is full and should land.
    pub(super) fn push(
        &mut self,
        index: usize,
        bundle: StagedBundle,
        failure: bool,
        weight: u64,
    ) -> bool {
        self.items.push(Queued {
            index,
            bundle,
            failure,
        });
        self.weight = self.weight.saturating_add(weight);
        self.weight >= STAGED_BYTES
    }

    /// Syncs the output filesystem once, then lands every queued bundle in order. A
    /// failure bundle replacing a complete bundle retires the batch files first (they
    /// may list it). Returns the bundles that did not land.
    pub(super) fn land_all(&mut self, root: &Path) -> Vec<Unlanded> {
        let items = std::mem::take(&mut self.items);
        self.weight = 0;
        if items.is_empty() {
            return Vec::new();
        }
        if let Err(e) = sync_filesystem(root) {
            // Nothing lands unsynced: each staging dir goes with its bundle.
            let message = e.to_string();
            return (items.into_iter())
                .map(|q| unlanded(&q, message.clone()))
                .collect();
        }
        let mut out = Vec::new();
        for q in items {
            let (index, failure) = (q.index, q.failure);
            let retire = || match failure && q.bundle.dest().join(DONE).is_file() {
                true => remove_files(root, &BATCH_FILES),
                false => Ok(()),
            };
            if let Err(e) = retire().and_then(|()| q.bundle.land()) {
                out.push(Unlanded {
                    index,
                    failure,
                    message: e.to_string(),
                });
            }
        }
        out
    }
}

fn unlanded(q: &Queued, message: String) -> Unlanded {
    Unlanded {
        index: q.index,
        failure: q.failure,
        message,
    }
}
