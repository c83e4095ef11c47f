//! The parsed scenario document: positions from the one tree, sections with and without
//! command-line patches, and errors naming the flag that set a value.

use super::*;

#[derive(Debug, serde::Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct W {
    kind: String,
    #[serde(default)]
    n: u32,
    #[serde(default)]
    list: Vec<String>,
}

fn doc(src: &str) -> ScenarioDoc<'_> {
    ScenarioDoc::parse(Path::new("s.toml"), src).unwrap()
}

#[test]
fn value_span_finds_the_value_in_a_section() {
    let src = "[load]\nx = 1\n[workload]\nkind = \"v\"\n  x = -3\n";
    let d = doc(src);
    let span = d.value_span(&["workload", "x"]).unwrap();
    assert_eq!(&src[span.clone()], "-3");
    assert_eq!(textpos::line_col(src, span.start), (5, 7));
    assert!(d.value_span(&["workload", "y"]).is_none());
    assert_eq!(
        d.key_error(&["workload", "y"], "bad").to_string(),
        "s.toml: [workload]: bad"
    );
}

#[test]
fn a_syntax_error_is_positioned() {
    let err = ScenarioDoc::parse(Path::new("s.toml"), "a = b\n").unwrap_err();
    assert!(err.to_string().starts_with("s.toml:1:5: "), "{err}");
}

#[test]
fn an_unknown_key_is_positioned() {
    let src = "name = \"x\"\n[workload]\nkind = \"v\"\nbogus = 1\n";
    let err = doc(src).section("workload").deserialize::<W>().unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("s.toml:4:1: [workload] unknown field `bogus`"),
        "{text}"
    );
    assert!(err.is_shape_error());
}

#[test]
fn a_type_error_names_its_key_in_words() {
    let src = "[workload]\nkind = \"v\"\nn = \"seven\"\n";
    let err = doc(src).section("workload").deserialize::<W>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "s.toml:3:5: [workload] n: expected a whole number ≥ 0, got the string \"seven\""
    );
    assert!(err.is_shape_error());
}

#[test]
fn a_section_that_is_not_a_table_says_how_to_write_it() {
    let err = doc("workload = 3\n")
        .section("workload")
        .deserialize::<W>()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "s.toml:1:12: `workload` must be a table (got integer); write it as `[workload]`"
    );
}

#[test]
fn patches_win_and_errors_about_them_name_their_flag() {
    let src = "[workload]\nkind = \"v\"\nn = 1\n";
    let d = doc(src);
    let patches = [
        Patch::new("n", "--n-flag", toml::Value::Integer(7)),
        Patch::new(
            "list",
            "--list",
            toml::Value::Array(vec!["a".into(), "b".into()]),
        ),
    ];
    let s = d.section_with("workload", &patches);
    let w: W = s.deserialize().unwrap();
    assert_eq!((w.n, w.list.len()), (7, 2));
    assert_eq!(s.flag_of("n"), Some("--n-flag"));
    assert_eq!(s.key_error("n", "too big").to_string(), "--n-flag: too big");
    assert!(
        s.key_error("kind", "bad")
            .to_string()
            .starts_with("s.toml:2:8: bad"),
        "the file's own key is positioned in the file"
    );
    let bad = [Patch::new("n", "--n-flag", toml::Value::Integer(-5))];
    let err = d
        .section_with("workload", &bad)
        .deserialize::<W>()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "--n-flag: expected a whole number ≥ 0, got the integer `-5`"
    );
}

#[test]
fn a_patch_makes_an_absent_section() {
    let d = doc("name = \"x\"\n");
    let patches = [Patch::new("kind", "--kind", "v".into())];
    let w: W = d.section_with("workload", &patches).deserialize().unwrap();
    assert_eq!(w.kind, "v");
    assert!(d.section("workload").value().is_none());
}

#[test]
fn an_entry_can_be_set_aside_without_parsing_again() {
    let src = "[load]\nsamples = \"x\"\nmax_concurrency = 2\n[bogus]\na = 1\n";
    let d = doc(src);
    let fewer = d.without_entry_at(src.find("\"x\"").unwrap()).unwrap();
    assert!(fewer.value_span(&["load", "samples"]).is_none());
    assert!(fewer.value_span(&["load", "max_concurrency"]).is_some());
    let fewer = fewer.without_entry_at(src.find("bogus").unwrap()).unwrap();
    assert!(fewer.root().get("bogus").is_none());
    assert!(d.without_entry_at(src.len() + 10).is_none());
}
