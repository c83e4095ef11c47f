use super::*;

#[test]
fn subset_names_round_trip() {
    for s in Subset::ALL {
        assert_eq!(Subset::from_name(s.name()), Some(s));
    }
    assert_eq!(Subset::Q1aMath.to_string(), "1q1a_math");
}

#[test]
fn parse_list_keeps_order_and_reports_unknown_sorted() {
    let got = Subset::parse_list(&["1qna", "1q1a"]).unwrap();
    assert_eq!(got, vec![Subset::Qna, Subset::Q1a]);
    let err = Subset::parse_list(&["zz", "1q1a", "abc", "zz"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Unsupported OmniInteract subsets: ['abc', 'zz']"
    );
}

#[test]
fn py_repr_quotes_like_python() {
    assert_eq!(py_repr("a/b"), "'a/b'");
    assert_eq!(py_repr("it's"), "\"it's\"");
    assert_eq!(py_repr("a'\"b"), "'a\\'\"b'");
}
