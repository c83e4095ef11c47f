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
#[cfg(test)]
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
#[path = "wer_tests.rs"]
mod tests;
