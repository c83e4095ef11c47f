//! A delta's text is byte for byte the text the server wrote for the same event built as
//! JSON (`wire::event_text` of the `Value` with `server_sent_at_s` inserted), for every
//! shape a response's script makes: both event name sets, the omitted fields, every
//! per-delta fault, the last delta's stage metrics, `response.created` and
//! `response.done` (every status, the duplicated and orphan ones), and stamps of every
//! form.

use std::time::Duration;

use serde_json::{Value, json};

use super::super::super::wire::event_text;
use super::super::events::Responder;
use super::{Delta, Step};
use crate::server::config::{DuplexFaults, DuplexServerConfig};

/// The old way: the event as JSON, stamped, then written.
fn by_value(delta: &Delta, stamp: f64) -> String {
    let mut event = delta.to_value();
    if let Value::Object(map) = &mut event {
        map.insert("server_sent_at_s".to_string(), json!(stamp));
    }
    event_text(event)
}

fn configs() -> Vec<DuplexServerConfig> {
    let base = DuplexServerConfig {
        audio_deltas: 4,
        delta_ms: 100,
        rtf: 0.37,
        first_response_delay_ms: 123.4,
        ..DuplexServerConfig::default()
    };
    let faults = [
        DuplexFaults::default(),
        DuplexFaults {
            audio_bad_base64: true,
            transcript_unknown_response: true,
            audio_unknown_response: true,
            ..DuplexFaults::default()
        },
        DuplexFaults {
            audio_odd_length: true,
            audio_wrong_format: true,
            audio_wrong_rate: true,
            ..DuplexFaults::default()
        },
        DuplexFaults {
            omit_format: true,
            omit_sample_rate: true,
            ..DuplexFaults::default()
        },
        DuplexFaults {
            done_without_created: true,
            duplicate_created: true,
            duplicate_done: true,
            failed_response: true,
            ..DuplexFaults::default()
        },
        DuplexFaults {
            cancelled_response: true,
            ..DuplexFaults::default()
        },
    ];
    let mut out = Vec::new();
    for faults in faults {
        for upstream_event_names in [false, true] {
            out.push(DuplexServerConfig {
                faults: faults.clone(),
                upstream_event_names,
                ..base.clone()
            });
        }
    }
    out
}

#[test]
fn every_delta_text_is_what_the_json_event_gave() {
    let stamps = [0.0, 1.0, 0.1 + 0.2, 1_234.000_001, 3e-7, 86_400.5];
    let mut deltas = 0;
    for cfg in configs() {
        let responder = Responder::new(&cfg, 42);
        for index in [0, 1, 17] {
            for load in [1.0, 1.7] {
                let script = responder.response(index, Duration::from_millis(250), load);
                for (_, step, _) in &script.events {
                    let Step::Delta(delta) = step else { continue };
                    deltas += 1;
                    for stamp in stamps {
                        assert_eq!(delta.text(stamp), by_value(delta, stamp), "{delta:?}");
                    }
                }
            }
        }
    }
    // 12 configs × 3 responses × 2 loads × (created + 4 words + 4 audio + done), plus
    // the two stray deltas of each first response with unknown ids, and the orphan
    // done, the second created and the second done of each first response with those.
    assert_eq!(deltas, 12 * 3 * 2 * 10 + 2 * 2 * 2 + 3 * 2 * 2);
}

#[test]
fn audio_deltas_share_the_payload_and_the_id() {
    let cfg = DuplexServerConfig::default();
    let responder = Responder::new(&cfg, 1);
    let script = responder.response(0, Duration::ZERO, 1.0);
    let audio: Vec<_> = (script.events.iter())
        .filter_map(|(_, step, _)| match step {
            Step::Delta(Delta::Audio(a)) => Some(a),
            _ => None,
        })
        .collect();
    assert!(audio.len() >= 2);
    for pair in audio.windows(2) {
        assert!(std::sync::Arc::ptr_eq(&pair[0].payload, &pair[1].payload));
        assert!(std::sync::Arc::ptr_eq(&pair[0].id, &pair[1].id));
    }
}
