//! Word error rate against a reference transcript: both texts lower-cased, punctuation
//! stripped, split on whitespace; WER = word-level edit distance (substitutions +
//! deletions + insertions) / reference words. Pure code.

/// The words of `text` as WER compares them: lower-cased, every punctuation character
/// removed (`"Don't!"` → `dont`), split on whitespace.
pub fn normalize(text: &str) -> Vec<String> {
    let cleaned: String = text
        .chars()
        .filter(|c| !c.is_ascii_punctuation() && !is_unicode_punctuation(*c))
        .flat_map(char::to_lowercase)
        .collect();
    cleaned.split_whitespace().map(str::to_owned).collect()
}

/// Common non-ASCII punctuation (quotes, dashes, ellipsis, inverted marks).
fn is_unicode_punctuation(c: char) -> bool {
    matches!(
        c,
        '\u{2010}'..='\u{2027}' | '\u{2030}'..='\u{205E}' | '¡' | '¿' | '«' | '»' | '、' | '。'
    )
}

/// Word-level edit distance between `reference` and `hypothesis` (Levenshtein over words).
pub fn edit_distance(reference: &[String], hypothesis: &[String]) -> usize {
    let mut prev: Vec<usize> = (0..=hypothesis.len()).collect();
    let mut cur = vec![0; hypothesis.len() + 1];
    for (i, r) in reference.iter().enumerate() {
        cur[0] = i + 1;
        for (j, h) in hypothesis.iter().enumerate() {
            let sub = prev[j] + usize::from(r != h);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[hypothesis.len()]
}

/// Edits and reference length of one transcript, so a run can pool them (corpus WER).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WerCount {
    /// Word edits needed to turn the hypothesis into the reference.
    pub edits: usize,
    /// Words in the normalized reference.
    pub ref_words: usize,
}

impl WerCount {
    /// The rate `edits / ref_words`; `None` when the reference has no words.
    pub fn rate(self) -> Option<f64> {
        (self.ref_words > 0).then(|| self.edits as f64 / self.ref_words as f64)
    }
}

/// Compare `hypothesis` with `reference` after normalization.
pub fn count(reference: &str, hypothesis: &str) -> WerCount {
    let r = normalize(reference);
    let h = normalize(hypothesis);
    WerCount {
        edits: edit_distance(&r, &h),
        ref_words: r.len(),
    }
}

/// WER of one transcript; `None` (absent, never 0) when the reference has no words.
pub fn wer(reference: &str, hypothesis: &str) -> Option<f64> {
    count(reference, hypothesis).rate()
}

/// Corpus WER: total edits over total reference words; `None` without reference words.
pub fn pooled(counts: &[WerCount]) -> Option<f64> {
    let edits = counts.iter().map(|c| c.edits).sum::<usize>();
    let words = counts.iter().map(|c| c.ref_words).sum::<usize>();
    WerCount {
        edits,
        ref_words: words,
    }
    .rate()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization_lowercases_and_strips_punctuation() {
        assert_eq!(
            normalize("  Hello, World! Don't — stop…  "),
            ["hello", "world", "dont", "stop"]
        );
        assert!(normalize("?!.").is_empty());
    }

    #[test]
    fn identical_after_normalization_is_zero() {
        assert_eq!(wer("The cat sat.", "the CAT sat"), Some(0.0));
    }

    #[test]
    fn worked_example_one_of_each_edit() {
        // ref: the cat sat on the mat (6 words)
        // hyp: the bat sat on mat today
        // cat→bat (S), delete "the" (D), insert "today" (I): 3 edits / 6 words = 0.5
        let c = count("the cat sat on the mat", "the bat sat on mat today");
        assert_eq!(
            c,
            WerCount {
                edits: 3,
                ref_words: 6
            }
        );
        assert_eq!(c.rate(), Some(0.5));
    }

    #[test]
    fn empty_hypothesis_is_all_deletions_and_insertions_can_exceed_one() {
        assert_eq!(wer("one two three", ""), Some(1.0));
        assert_eq!(wer("one", "one two three"), Some(2.0));
    }

    #[test]
    fn no_reference_words_is_absent() {
        assert_eq!(wer("", "anything"), None);
        assert_eq!(wer("...", ""), None);
        assert_eq!(pooled(&[]), None);
    }

    #[test]
    fn pooled_weights_by_reference_length() {
        let a = count("a b c d", "a b c d"); // 0 / 4
        let b = count("x y", "x"); // 1 / 2
        // mean of rates would be 0.25; the corpus rate is 1 / 6
        assert!((pooled(&[a, b]).unwrap() - 1.0 / 6.0).abs() < 1e-12);
    }
}
