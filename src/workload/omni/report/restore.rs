//! One case's captured output as its report needs it: what the session spilled (events,
//! played segments) read back from the run's spool and each response's transcript
//! rebuilt, held only while that case is built and published, so the report's memory
//! does not grow with the number or the length of the sessions.

use std::borrow::Cow;

use bytes::Bytes;
use serde_json::Value;

use super::super::playback::{Segment, SegmentPcm, decode_segments};
use super::super::session::{DuplexOutput, ResponseRecord, events, fill_texts};
use crate::workload::spool::Spool;

/// A case's output with its spilled parts read back.
pub(super) struct Restored<'a> {
    /// The session's output.
    pub out: &'a DuplexOutput,
    /// Every event the session observed, with its receipt time.
    pub events: Cow<'a, [(f64, Value)]>,
    /// Every played segment, in clock order.
    pub segments: Cow<'a, [Segment]>,
    /// The created responses, transcripts rebuilt from `events`.
    pub responses: Vec<ResponseRecord>,
}

/// Reads `out`'s spilled events and segments back from `spool` (flushed beforehand) and
/// rebuilds the transcripts. A read-back error (naming the spool file or the damage) comes
/// beside what was in memory.
pub(super) fn restore<'a>(
    out: &'a DuplexOutput,
    spool: Option<&Spool>,
) -> (Restored<'a>, Option<String>) {
    let mut r = Restored {
        out,
        events: Cow::Borrowed(&out.events),
        segments: Cow::Borrowed(&out.segments),
        responses: out.responses.clone(),
    };
    let error = spool.and_then(|s| read_back(&mut r, s).err());
    fill_texts(&mut r.responses, &r.events);
    (r, error)
}

fn read_back(r: &mut Restored<'_>, spool: &Spool) -> Result<(), String> {
    let o = r.out;
    let in_file = |e: String| format!("{e} (spool file {})", spool.dir().display());
    if !o.segments_spooled.is_empty() {
        let mut all = Vec::new();
        for span in &o.segments_spooled {
            let bytes = spool.load(*span).map_err(|e| e.to_string())?;
            all.extend(decode_segments(&bytes).map_err(in_file)?);
        }
        all.extend_from_slice(&o.segments);
        r.segments = Cow::Owned(all);
    }
    if let Some(span) = o.events_spooled {
        let bytes = spool.load(span).map_err(|e| e.to_string())?;
        r.events = Cow::Owned(events::decode(&bytes).map_err(in_file)?);
    }
    Ok(())
}

/// A segment's kept bytes: in memory, or read back from the run's spool (flushed).
pub(super) fn segment_pcm(pcm: &SegmentPcm, spool: Option<&Spool>) -> Result<Bytes, String> {
    match (pcm, spool) {
        (SegmentPcm::Memory(b), _) => Ok(b.clone()),
        (SegmentPcm::Spooled(span), Some(spool)) => spool.load(*span).map_err(|e| e.to_string()),
        (SegmentPcm::Spooled(_), None) => Err("spooled output PCM without a spool".into()),
    }
}
