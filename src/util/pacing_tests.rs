use super::*;

#[test]
fn media_time_is_scaled_by_the_mode() {
    let s = Duration::from_secs(2);
    assert_eq!(PacingMode::Realtime.due_after_media(s), Some(s));
    assert_eq!(
        PacingMode::Speed(4.0).due_after_media(s),
        Some(Duration::from_millis(500))
    );
    assert_eq!(PacingMode::Saturate.due_after_media(s), None);
    // 32000 bytes of 16 kHz PCM16 are one second.
    assert_eq!(
        PacingMode::Realtime.due_after(32_000),
        Some(Duration::from_secs(1))
    );
}

#[test]
fn spellings_round_trip() {
    for s in ["realtime", "saturate", "2x", "0.5x"] {
        assert_eq!(parse_pacing(Some(s)).unwrap().to_string(), s);
    }
    assert_eq!(parse_pacing(None), Ok(PacingMode::Realtime));
    assert!(parse_pacing(Some("0x")).is_err());
    assert!(parse_pacing(Some("fast")).unwrap_err().contains("\"fast\""));
}
