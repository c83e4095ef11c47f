//! Realtime-transcription result charts: one histogram per `rtload.distributions` entry
//! (TTFT, finalization, delta inter-arrival, streaming lag, RTF, per-file WER), in a
//! fixed order.

use serde_json::Value;

use super::histogram_figure;

/// The distributions drawn, with their axis label and unit.
const DISTS: [(&str, &str, &str); 6] = [
    (
        "ttft_ms",
        "TTFT (first non-empty delta − first audio sent)",
        "ms",
    ),
    (
        "finalization_ms",
        "finalization (final commit → transcription.done)",
        "ms",
    ),
    ("itl_ms", "delta inter-arrival", "ms"),
    (
        "streaming_lag_ms",
        "streaming lag (delta − speech front)",
        "ms",
    ),
    ("rtf", "RTF ((done − first audio) / audio duration)", ""),
    ("wer", "WER per file", ""),
];

/// Transcription result: a histogram per distribution.
pub fn transcription(doc: &Value) -> String {
    let dists = doc.pointer("/rtload/distributions").unwrap_or(&Value::Null);
    let mut out = String::new();
    for (i, (key, what, unit)) in DISTS.iter().enumerate() {
        let values: Vec<f64> = dists
            .get(key)
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|v| v.as_f64().unwrap_or(f64::NAN))
            .collect();
        out.push_str(&histogram_figure(
            &format!("stt-{key}"),
            &values,
            what,
            unit,
            i,
            None,
        ));
    }
    out
}
