//! WAV to PCM16 mono at a chosen rate, shared by the datasets that stream recorded audio
//! (transcription and scripted): decode any `hound` sample format to floats, average the
//! channels, resample by linear interpolation, quantize to PCM16 little-endian; and the
//! RMS level of PCM16 (the barge-in speech detectors of client and server).

/// A WAV reader's samples as floats in [-1, 1] (integer formats scaled by their bit depth),
/// interleaved as stored.
pub fn samples_f32<R: std::io::Read>(
    reader: &mut hound::WavReader<R>,
) -> Result<Vec<f32>, hound::Error> {
    let spec = reader.spec();
    match spec.sample_format {
        hound::SampleFormat::Float => reader.samples::<f32>().collect(),
        hound::SampleFormat::Int => {
            let scale = 1.0 / (1u64 << (spec.bits_per_sample.clamp(1, 32) - 1)) as f32;
            reader
                .samples::<i32>()
                .map(|s| s.map(|v| v as f32 * scale))
                .collect()
        }
    }
}

/// Average interleaved channels into one (a trailing partial frame is dropped).
pub fn mix_down(samples: &[f32], channels: usize) -> Vec<f32> {
    if channels <= 1 {
        return samples.to_vec();
    }
    samples
        .chunks_exact(channels)
        .map(|f| f.iter().sum::<f32>() / channels as f32)
        .collect()
}

/// Linear-interpolation resampling from `from` Hz to `to` Hz (output length
/// `round(len * to / from)`).
pub fn resample(x: &[f32], from: u32, to: u32) -> Vec<f32> {
    if from == to || x.is_empty() || from == 0 {
        return x.to_vec();
    }
    let n = ((x.len() as u64 * u64::from(to) + u64::from(from) / 2) / u64::from(from)) as usize;
    let step = f64::from(from) / f64::from(to);
    (0..n)
        .map(|i| {
            let pos = i as f64 * step;
            let k = pos.floor() as usize;
            let frac = (pos - k as f64) as f32;
            let a = x[k.min(x.len() - 1)];
            let b = x[(k + 1).min(x.len() - 1)];
            a + (b - a) * frac
        })
        .collect()
}

/// Float samples in [-1, 1] to PCM16 LE bytes (clamped).
pub fn to_pcm16(x: &[f32]) -> Vec<u8> {
    x.iter()
        .flat_map(|v| ((v.clamp(-1.0, 1.0) * 32767.0).round() as i16).to_le_bytes())
        .collect()
}

/// A whole WAV reader as PCM16 mono LE at `rate` Hz.
pub fn to_pcm16_mono<R: std::io::Read>(
    reader: &mut hound::WavReader<R>,
    rate: u32,
) -> Result<Vec<u8>, hound::Error> {
    let spec = reader.spec();
    let mono = mix_down(&samples_f32(reader)?, usize::from(spec.channels.max(1)));
    Ok(to_pcm16(&resample(&mono, spec.sample_rate, rate)))
}

#[cfg(test)]
#[path = "wav_tests.rs"]
mod tests;

/// RMS of little-endian PCM16 samples, in sample units (0 for none): 327.68 is -40 dBFS.
pub fn pcm16_rms(pcm: &[u8]) -> f64 {
    let n = pcm.len() / 2;
    if n == 0 {
        return 0.0;
    }
    let sum: f64 = (pcm.chunks_exact(2))
        .map(|s| f64::from(i16::from_le_bytes([s[0], s[1]])).powi(2))
        .sum();
    (sum / n as f64).sqrt()
}
