//! A spilled event log decoded once reads as the same events, pass after pass, as one
//! decoded line by line by each pass; a damaged line fails both the same way.

use super::*;

/// A session's output whose events are `lines` spilled to `spool` (flushed).
fn spilled(spool: &Spool, lines: &[&str]) -> DuplexOutput {
    let mut log = spool.session();
    for line in lines {
        log.append(line.as_bytes());
    }
    spool.flush();
    DuplexOutput {
        events_spooled: Some(log.whole()),
        ..DuplexOutput::default()
    }
}

fn events_of(r: &Restored<'_>) -> Vec<(f64, Value)> {
    r.events.each().map(|(t, e)| (t, e.into_owned())).collect()
}

#[test]
fn a_log_decoded_once_reads_as_one_decoded_per_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let out = spilled(
        &spool,
        &[
            "0.5\t{\"type\":\"response.created\",\"response\":{\"id\":\"r1\"}}\n",
            "0.75\t{\"type\":\"response.audio_transcript.delta\",\"response_id\":\"r1\",\"delta\":\"Hi\"}\n",
            "1\t{\"type\":\"response.done\",\"_client_received_at_s\":9.5}\n",
        ],
    );
    let (once, e1) = restore_with(&out, Some(&spool), usize::MAX);
    let (each, e2) = restore_with(&out, Some(&spool), 0);
    assert_eq!((e1, e2), (None, None));
    assert!(matches!(once.events, Events::Decoded(_)));
    assert!(matches!(each.events, Events::Spooled(_)));
    let got = events_of(&once);
    assert_eq!(got, events_of(&each));
    assert_eq!(got, events_of(&once), "every pass reads the same");
    assert_eq!(got.len(), 3);
    // The receipt time goes in where the event lacks it, and only there.
    assert_eq!(got[0].1["_client_received_at_s"], 0.5);
    assert_eq!(got[2].1["_client_received_at_s"], 9.5);
}

#[test]
fn a_damaged_line_fails_the_read_back_either_way() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let out = spilled(&spool, &["0.5\t{\"type\":\"x\"}\n", "oops\n"]);
    for decode_once in [usize::MAX, 0] {
        let (_, error) = restore_with(&out, Some(&spool), decode_once);
        let error = error.expect("a damaged line");
        assert!(error.contains("spooled event line 2 is damaged"), "{error}");
    }
}
