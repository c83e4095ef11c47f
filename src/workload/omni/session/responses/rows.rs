//! The rows of the responses that left a session's window ([`super::RESPONSE_WINDOW`]):
//! encoded as they leave, read back and merged with the rows still held only by the
//! report, after the run's flush.

use super::{RespInfo, ResponseRecord, row};
use crate::util::leb128;
use crate::workload::spool::spilled::LogParts;

/// Appends a row that left the window to `out`: its creation position (LEB128), its
/// flags byte, its id's length (LEB128) and bytes.
pub(super) fn encode_row(ordinal: u32, flags: u8, id: &str, out: &mut Vec<u8>) {
    leb128::put(out, u64::from(ordinal));
    out.push(flags);
    leb128::put(out, id.len() as u64);
    out.extend_from_slice(id.as_bytes());
}

/// The rows of the responses that left a session's window ([`RESPONSE_WINDOW`]), as
/// its end left them: the span of those spilled to the run's spool and the tail in
/// memory, and how many left (exact). The report reads them after the run's flush.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RowsLeft {
    /// The encoded rows ([`encode_row`]): the spilled span and the tail.
    pub(super) parts: LogParts,
    /// How many rows left.
    pub(super) count: u32,
    /// The creation positions of the rows the session still held, in order.
    pub(super) held: Vec<u32>,
}

impl RowsLeft {
    /// Where the spilled rows are in the run's spool (none: all in memory).
    pub fn spilled(&self) -> Option<crate::workload::spool::Span> {
        self.parts.spilled
    }

    /// Every created response's row, in creation order: these rows, given the bytes of
    /// [`RowsLeft::spilled`] read back (empty when none), merged with `held` (the rows
    /// the session still held, [`Responses::leave`]). An error when the bytes are not
    /// the rows that left or `held` are not the rows held.
    pub fn merge(
        &self,
        spilled: &[u8],
        held: &[ResponseRecord],
    ) -> Result<Vec<ResponseRecord>, String> {
        let bytes = self.parts.join(spilled)?;
        let mut rows = Vec::with_capacity(self.count as usize + held.len());
        let mut at = 0;
        while at < bytes.len() {
            let k = rows.len();
            let damaged = || format!("response row {k} that left the window is damaged");
            let ordinal = leb128::get(&bytes, &mut at).ok_or_else(damaged)?;
            let flags = *bytes.get(at).ok_or_else(damaged)?;
            at += 1;
            let len = leb128::get(&bytes, &mut at).ok_or_else(damaged)? as usize;
            let id = (bytes.get(at..at.saturating_add(len))).ok_or_else(damaged)?;
            at += len;
            let id = std::str::from_utf8(id).map_err(|_| damaged())?;
            let info = RespInfo {
                ordinal: u32::try_from(ordinal).map_err(|_| damaged())?,
                flags,
            };
            rows.push((ordinal, row(id, info)));
        }
        if rows.len() != self.count as usize {
            return Err(format!(
                "{} response rows read back of the {} that left the window",
                rows.len(),
                self.count
            ));
        }
        if held.len() != self.held.len() {
            return Err(format!(
                "{} held response rows of {}",
                held.len(),
                self.held.len()
            ));
        }
        // Rows leave in first-sight order, which creation order need not follow.
        let held = (self.held.iter())
            .map(|&o| u64::from(o))
            .zip(held.iter().cloned());
        rows.extend(held);
        rows.sort_by_key(|(ordinal, _)| *ordinal);
        Ok(rows.into_iter().map(|(_, r)| r).collect())
    }
}
