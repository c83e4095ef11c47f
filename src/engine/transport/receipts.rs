//! The run's tally of how its receipts were stamped ([`super::stamped`]): how many
//! messages carry the kernel's receive time and how many only the read's, and for the
//! kernel-stamped ones the **reader delay** — from the kernel's stamp to the moment the
//! reader handed the message on, i.e. what a stamp taken in user space would have added.
//! It is the receive-side twin of send lateness: on an idle generator tens of
//! microseconds, on a saturated one the wait for a busy shard thread. A message that
//! shared one read with later packets carries the last packet's stamp: late by up to the
//! gap between the server writes that read took in, which only a generator far behind
//! its schedule lets happen (README, "Receipt times are the kernel's").
//!
//! One tally per run, shared by every session (warm-ups included: the figure describes
//! the generator, like its CPU); each reader fills a small batch and adds it under the
//! lock when full and when it ends, so the lock is taken once per [`BATCH`] messages.

use std::sync::Mutex;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde_json::{Value, json};

/// Messages a reader stamps before it adds them to the run's tally.
pub const BATCH: usize = 64;

/// Reader delays above this (µs, one minute) are recorded as it.
const MAX_US: u64 = 60_000_000;

/// The run's receipts (see the module header).
#[derive(Debug)]
pub struct Receipts(Mutex<Tally>);

#[derive(Debug)]
struct Tally {
    /// Reader delays of kernel-stamped messages, µs (3 significant digits).
    delay_us: Histogram<u64>,
    /// Their exact sum and largest value, µs.
    sum_us: u64,
    max_us: u64,
    /// Messages stamped at the read (no kernel stamp).
    at_read: u64,
}

impl Default for Receipts {
    fn default() -> Self {
        let delay_us = Histogram::new_with_bounds(1, MAX_US, 3).expect("valid bounds");
        Receipts(Mutex::new(Tally {
            delay_us,
            sum_us: 0,
            max_us: 0,
            at_read: 0,
        }))
    }
}

/// A reader's receipts not yet added to the run's tally.
#[derive(Debug, Default)]
pub struct Batch {
    delays_us: Vec<u64>,
    at_read: u64,
}

impl Batch {
    /// Notes one message: `Some(delay)` when it carries the kernel's stamp, `None` when
    /// it was stamped at the read. `true` when the batch is full ([`Receipts::add`] it).
    pub fn note(&mut self, reader_delay: Option<Duration>) -> bool {
        match reader_delay {
            Some(d) => {
                let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
                self.delays_us.push(us.min(MAX_US));
            }
            None => self.at_read += 1,
        }
        self.delays_us.len() + self.at_read as usize >= BATCH
    }
}

impl Receipts {
    /// Adds `batch` to the tally and empties it.
    pub fn add(&self, batch: &mut Batch) {
        if batch.delays_us.is_empty() && batch.at_read == 0 {
            return;
        }
        let mut t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        for &us in &batch.delays_us {
            // In bounds by construction (clamped to MAX_US).
            let _ = t.delay_us.record(us);
            t.sum_us = t.sum_us.saturating_add(us);
            t.max_us = t.max_us.max(us);
        }
        t.at_read += batch.at_read;
        batch.delays_us.clear();
        batch.at_read = 0;
    }

    /// The result's `receipts` block: `{"kernel_stamped", "stamped_at_read",
    /// "reader_delay": {"count", "mean_ms", "p50_ms", "p99_ms", "max_ms", "histogram_us"}}`:
    /// mean and max exact, the quantiles to 3 significant digits of µs, the histogram
    /// itself (V2 deflate, base64) so `rtload merge` adds shards' up exactly; `null`
    /// without a kernel-stamped message (missing, never zero).
    pub fn block(&self) -> Value {
        let t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        json!({
            "kernel_stamped": t.delay_us.len(),
            "stamped_at_read": t.at_read,
            "reader_delay": delay_block(&t.delay_us, t.sum_us as f64 / 1000.0, t.max_us as f64 / 1000.0),
        })
    }
}

/// The `reader_delay` object of `h` (µs) with its exact sum and max (ms): one function for
/// a run's block and a merged one, so both read their quantiles the same way.
pub fn delay_block(h: &Histogram<u64>, sum_ms: f64, max_ms: f64) -> Value {
    let ms = |us: u64| us as f64 / 1000.0;
    let some = |v: f64| (!h.is_empty()).then_some(v);
    json!({
        "count": h.len(),
        "mean_ms": some(sum_ms / h.len().max(1) as f64),
        "p50_ms": some(ms(h.value_at_quantile(0.5))),
        "p99_ms": some(ms(h.value_at_quantile(0.99))),
        "max_ms": some(max_ms),
        "histogram_us": crate::util::histlog::encode_b64(h).ok(),
    })
}

/// The terminal's line for a result's `rtload.wire.receipts` block (`None` without one,
/// or before any message was received).
pub fn text(block: &Value) -> Option<String> {
    let kernel = block.get("kernel_stamped")?.as_u64()?;
    let at_read = block.get("stamped_at_read")?.as_u64()?;
    if kernel + at_read == 0 {
        return None;
    }
    let d = &block["reader_delay"];
    let f = |k: &str| d[k].as_f64().map_or("–".to_string(), |v| format!("{v:.3}"));
    Some(format!(
        "Receipts: {kernel} stamped by the kernel, {at_read} at the read; reader delay \
         p50 {} / p99 {} / max {} ms\n",
        f("p50_ms"),
        f("p99_ms"),
        f("max_ms")
    ))
}

#[cfg(test)]
#[path = "receipts_tests.rs"]
mod tests;
