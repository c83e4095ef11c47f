use super::*;

#[test]
fn cuts_long_text_noting_its_length_and_keeps_short_text() {
    assert_eq!(bounded("héllo", 5), "héllo");
    assert_eq!(bounded("héllo wörld", 5), "héllo… (11 chars)");
    assert_eq!(bounded("", 0), "");
}
