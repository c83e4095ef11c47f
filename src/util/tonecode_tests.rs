use super::*;

#[test]
fn every_word_round_trips_at_common_rates() {
    for rate in [8_000, 16_000, 24_000] {
        let words: Vec<usize> = (0..VOCAB.len()).collect();
        let pcm = encode(&words, rate, DEFAULT_WORDS_PER_SECOND);
        let slot = slot_samples(rate, DEFAULT_WORDS_PER_SECOND);
        assert_eq!(pcm.len(), slot * words.len());
        for (i, chunk) in pcm.chunks(slot).enumerate() {
            assert_eq!(decode_slot(chunk, rate), Slot::Word(i), "rate {rate}");
        }
    }
}

#[test]
fn silence_and_noise_are_not_words() {
    assert_eq!(decode_slot(&[0; 6400], 16_000), Slot::Silence);
    assert_eq!(decode_slot(&[], 16_000), Slot::Silence);
    // Two tones of equal strength: no clear word.
    let a = encode(&[0], 16_000, 2.5);
    let b = encode(&[9], 16_000, 2.5);
    let mix: Vec<i16> = a.iter().zip(&b).map(|(x, y)| x / 2 + y / 2).collect();
    assert_eq!(decode_slot(&mix, 16_000), Slot::Other);
}

#[test]
fn sentence_joins_vocabulary_words() {
    assert_eq!(sentence(&[0, 1, 2, 3]), "the quick brown fox");
}
