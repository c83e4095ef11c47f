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
