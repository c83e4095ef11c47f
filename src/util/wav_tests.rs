//! Worked numbers for the WAV helpers.

use super::*;

#[test]
fn resample_worked_numbers() {
    // 8 kHz → 16 kHz: twice the samples, midpoints interpolated.
    let up = resample(&[0.0, 1.0, 0.0, -1.0], 8_000, 16_000);
    assert_eq!(up, [0.0, 0.5, 1.0, 0.5, 0.0, -0.5, -1.0, -1.0]);
    // 48 kHz → 16 kHz keeps every third sample.
    let x: Vec<f32> = (0..9).map(|i| i as f32).collect();
    assert_eq!(resample(&x, 48_000, 16_000), [0.0, 3.0, 6.0]);
    assert_eq!(resample(&x, 16_000, 16_000), x);
}

#[test]
fn mix_down_and_pcm16() {
    assert_eq!(mix_down(&[1.0, 0.0, -1.0, -1.0, 0.5], 2), [0.5, -1.0]);
    assert_eq!(
        to_pcm16(&[1.5, -1.0, 0.5]),
        [0xff, 0x7f, 0x01, 0x80, 0x00, 0x40]
    );
}
