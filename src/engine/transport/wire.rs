//! What a run's sessions put on the wire besides their messages: `TCP_NODELAY` on every
//! socket (always), the `permessage-deflate` offer (`[target] compression`), and what the
//! server agreed to, tallied over the run's connections for the result's `rtload.wire`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::deflate::{Agreed, Compression};
use super::receipts::Receipts;

/// The run's wire settings and the tally of what its connections negotiated: one per
/// run, cloned into every sample (the tally is shared).
#[derive(Debug, Clone, Default)]
pub struct Wire {
    /// What the handshake offers.
    pub compression: Compression,
    /// How many times an upgrade refused with 429 or 503 is tried again
    /// (`[target] retry_rejected`; 0: never).
    pub retry_rejected: u32,
    tally: Arc<Tally>,
}

#[derive(Debug, Default)]
struct Tally {
    /// Completed WebSocket handshakes (warm-ups included).
    connections: AtomicU64,
    /// Upgrades refused and tried again.
    retried: AtomicU64,
    /// Handshakes by the `permessage-deflate` parameters agreed in them.
    agreed: Mutex<BTreeMap<Agreed, u64>>,
    /// The first completed handshake's response headers, as received (may hold secrets:
    /// only the recording's manifest reads them, redacted).
    handshake: OnceLock<Vec<(String, String)>>,
    /// How the run's receipts were stamped.
    receipts: Arc<Receipts>,
}

impl Wire {
    /// Settings for a run offering `compression`, with an empty tally.
    pub fn new(compression: Compression) -> Wire {
        Wire {
            compression,
            retry_rejected: 0,
            tally: Arc::default(),
        }
    }

    /// These settings, retrying refused upgrades up to `retries` times.
    pub fn with_retry_rejected(mut self, retries: u32) -> Wire {
        self.retry_rejected = retries;
        self
    }

    /// Counts one refused upgrade tried again.
    pub fn record_retry(&self) {
        self.tally.retried.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one completed handshake and what it agreed to.
    pub fn record(&self, agreed: Option<&Agreed>) {
        self.tally.connections.fetch_add(1, Ordering::Relaxed);
        if let Some(a) = agreed {
            let mut map = self.tally.agreed.lock().unwrap_or_else(|p| p.into_inner());
            *map.entry(*a).or_default() += 1;
        }
    }

    /// Keeps the response headers of the run's first completed handshake (`headers` runs
    /// only for that one).
    pub fn record_handshake(&self, headers: impl FnOnce() -> Vec<(String, String)>) {
        if self.tally.handshake.get().is_none() {
            let _ = self.tally.handshake.set(headers());
        }
    }

    /// The run's receipts tally, shared by every session's reader.
    pub fn receipts(&self) -> Arc<Receipts> {
        Arc::clone(&self.tally.receipts)
    }

    /// The response headers of the run's first completed handshake, as received.
    pub fn handshake_headers(&self) -> Option<&[(String, String)]> {
        self.tally.handshake.get().map(Vec::as_slice)
    }

    /// The result's `rtload` keys: `{"wire": {"tcp_nodelay", "compression": {"setting",
    /// "offered", "connections", "negotiated", "agreed": [{parameters…, "connections"}]},
    /// "retry_rejected": {"allowed", "retried"}, "receipts": …}}` (receipts:
    /// [`Receipts::block`]).
    pub fn result_block(&self) -> serde_json::Value {
        let map = self.tally.agreed.lock().unwrap_or_else(|p| p.into_inner());
        let agreed: Vec<serde_json::Value> = map
            .iter()
            .map(|(a, n)| {
                let mut v = serde_json::to_value(a).unwrap_or_default();
                if let Some(o) = v.as_object_mut() {
                    o.insert("extension".into(), a.describe().into());
                    o.insert("outbound_compressed".into(), a.compresses_outbound().into());
                    o.insert("connections".into(), (*n).into());
                }
                v
            })
            .collect();
        serde_json::json!({"wire": {
            "tcp_nodelay": true,
            "compression": {
                "setting": self.compression.name(),
                "offered": self.compression.offer(),
                "connections": self.tally.connections.load(Ordering::Relaxed),
                "negotiated": map.values().sum::<u64>(),
                "agreed": agreed,
            },
            "retry_rejected": {
                "allowed": self.retry_rejected,
                "retried": self.tally.retried.load(Ordering::Relaxed),
            },
            "receipts": self.tally.receipts.block(),
        }})
    }
}

/// `rtload check`'s line for the wire settings of `compression` and `retry_rejected`.
pub fn describe(compression: Compression, retry_rejected: u32) -> String {
    let offer = match compression.offer() {
        Some(offer) => format!(
            "TCP_NODELAY; offers `{offer}` (used only if the server accepts; \
the embedded server never does)"
        ),
        None => "TCP_NODELAY; no compression offered".to_string(),
    };
    match retry_rejected {
        0 => offer,
        n => format!(
            "{offer}; an upgrade refused with 429/503 is retried up to {n} times after its \
Retry-After"
        ),
    }
}
