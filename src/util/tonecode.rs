//! A tiny "speech" code shared by `rtload dataset synth --kind transcription` and the
//! embedded server's transcription endpoint, so the server can transcribe synthetic
//! audio exactly: each word of a 16-word vocabulary is a tone burst at its own
//! frequency, one word per slot of `1 / words_per_second` seconds (tone for the first
//! 80 % of the slot, then silence). Decoding is a Goertzel filter per vocabulary
//! frequency over the tone part of a slot.
//!
//! Pure code with no dependencies on either side: the client side (synth) and the server
//! both use it, and neither imports the other.

/// The vocabulary, in frequency order (word `i` is a tone at [`frequency`]`(i)`).
pub const VOCAB: [&str; 16] = [
    "the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "a", "small", "red", "bird",
    "sings", "in", "morning", "light",
];

/// Default speaking rate, words per second (a 400 ms slot per word).
pub const DEFAULT_WORDS_PER_SECOND: f64 = 2.5;
/// Peak amplitude of a tone.
const AMPLITUDE: f64 = 8_000.0;
/// Share of a slot that carries the tone.
const TONE_SHARE: f64 = 0.8;
/// RMS below which a slot is silence.
const SILENCE_RMS: f64 = 300.0;

/// Frequency of word `i`, Hz (500, 650, … 2750).
pub fn frequency(i: usize) -> f64 {
    500.0 + 150.0 * i as f64
}

/// Samples in one word slot at `rate` Hz (at least 1).
pub fn slot_samples(rate: u32, words_per_second: f64) -> usize {
    ((f64::from(rate) / words_per_second).round() as usize).max(1)
}

/// The audio of `words` (indices into [`VOCAB`]) at `rate` Hz, one slot per word.
pub fn encode(words: &[usize], rate: u32, words_per_second: f64) -> Vec<i16> {
    let slot = slot_samples(rate, words_per_second);
    let tone = (slot as f64 * TONE_SHARE) as usize;
    let mut out = Vec::with_capacity(slot * words.len());
    for &w in words {
        let f = frequency(w % VOCAB.len());
        for n in 0..slot {
            let v = if n < tone {
                // 5 ms fade in and out so the bursts do not click.
                let fade = (f64::from(rate) * 0.005).max(1.0);
                let env = (n as f64 / fade).min((tone - n) as f64 / fade).min(1.0);
                let phase = 2.0 * std::f64::consts::PI * f * n as f64 / f64::from(rate);
                AMPLITUDE * env * phase.sin()
            } else {
                0.0
            };
            out.push(v.round() as i16);
        }
    }
    out
}

/// Power of frequency `f` in `x` (Goertzel).
fn goertzel(x: &[i16], rate: u32, f: f64) -> f64 {
    let coeff = 2.0 * (2.0 * std::f64::consts::PI * f / f64::from(rate)).cos();
    let (mut s1, mut s2) = (0.0, 0.0);
    for &v in x {
        let s = f64::from(v) + coeff * s1 - s2;
        s2 = s1;
        s1 = s;
    }
    s1 * s1 + s2 * s2 - coeff * s1 * s2
}

/// What one slot of audio holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// Quiet: no word.
    Silence,
    /// A vocabulary word (its index).
    Word(usize),
    /// Sound that is not one of the tones (real speech, noise).
    Other,
}

/// Decode one slot of audio (its first `TONE_SHARE` is examined).
pub fn decode_slot(slot: &[i16], rate: u32) -> Slot {
    let tone = &slot[..((slot.len() as f64 * TONE_SHARE) as usize)
        .max(1)
        .min(slot.len())];
    if tone.is_empty() {
        return Slot::Silence;
    }
    let energy: f64 = tone.iter().map(|&v| f64::from(v) * f64::from(v)).sum();
    if (energy / tone.len() as f64).sqrt() < SILENCE_RMS {
        return Slot::Silence;
    }
    let powers: Vec<f64> = (0..VOCAB.len())
        .map(|i| goertzel(tone, rate, frequency(i)))
        .collect();
    let (best, &p) = powers
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .unwrap_or((0, &0.0));
    // A pure tone of amplitude A over N samples has Goertzel power (A N / 2)^2 and
    // energy N A^2 / 2, so power / (energy N / 2) is 1 for one clean tone and 0.5 for
    // two equal ones: accept a clear majority.
    let n = tone.len() as f64;
    if p > 0.6 * energy * n / 2.0 {
        Slot::Word(best)
    } else {
        Slot::Other
    }
}

/// The sentence for `words` (indices into [`VOCAB`]), space separated.
pub fn sentence(words: &[usize]) -> String {
    let w: Vec<&str> = words.iter().map(|&i| VOCAB[i % VOCAB.len()]).collect();
    w.join(" ")
}

#[cfg(test)]
#[path = "tonecode_tests.rs"]
mod tests;
