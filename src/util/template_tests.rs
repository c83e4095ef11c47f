//! `${var}` templates: typed whole-string variables, `$` escapes, positioned errors,
//! missing variables named, typo suggestions.

use super::*;
use serde_json::json;

fn any(_: &str) -> Result<(), String> {
    Ok(())
}

fn vars(name: &str) -> Option<Value> {
    match name {
        "model" => Some(json!("m1")),
        "idx" => Some(json!(7)),
        "chunk_b64" => Some(json!("QUJD")),
        _ => None,
    }
}

#[test]
fn whole_string_variable_keeps_its_type_and_splices_elsewhere() {
    let t = Template::compile(
        &json!({"type": "x", "n": "${idx}", "id": "s-${idx}-${model}", "a": ["${chunk_b64}", 1, true]}),
        &any,
    )
    .unwrap();
    let v = t.render(&vars).unwrap();
    assert_eq!(
        v,
        json!({"type": "x", "n": 7, "id": "s-7-m1", "a": ["QUJD", 1, true]})
    );
    let mut names = t.vars();
    names.sort_unstable();
    assert_eq!(names, vec!["chunk_b64", "idx", "idx", "model"]);
}

#[test]
fn dollar_escapes_and_plain_dollars() {
    let t = Template::compile_text("cost $$5 or $3 ${model}", &any).unwrap();
    assert_eq!(t.render_text(&vars).unwrap(), "cost $5 or $3 m1");
    let lit = Template::compile(&json!("$${x}"), &any).unwrap();
    assert_eq!(lit, Template::Lit(json!("${x}")));
}

#[test]
fn errors_carry_path_and_offset() {
    let err = Template::compile(&json!({"a": [0, "ab ${x"]}), &any).unwrap_err();
    assert_eq!(err.path, vec![PathSeg::Key("a".into()), PathSeg::Index(1)]);
    assert_eq!(err.offset, 3);
    assert!(err.msg.contains("unclosed"), "{}", err.msg);
    let check = |n: &str| {
        if n == "model" {
            Ok(())
        } else {
            Err(format!("unknown variable `{n}`"))
        }
    };
    let err = Template::compile(&json!("${model} ${modle}"), &check).unwrap_err();
    assert_eq!(
        (err.offset, err.msg.as_str()),
        (9, "unknown variable `modle`")
    );
    assert!(Template::compile(&json!("${a b}"), &any).is_err());
}

#[test]
fn render_names_a_missing_variable() {
    let t = Template::compile(&json!("${nope}"), &any).unwrap();
    assert!(t.render(&vars).unwrap_err().contains("${nope}"));
    let j = Template::compile(&json!({"k": "${model}"}), &any).unwrap();
    assert_eq!(j.render_text(&vars).unwrap(), r#"{"k":"m1"}"#);
}

#[test]
fn closest_suggests_typos_only() {
    assert_eq!(closest("modle", ["model", "sample_index"]), Some("model"));
    assert_eq!(closest("zzz", ["model"]), None);
}

#[test]
fn a_whole_string_null_is_json_null_and_escaped_null_stays_text() {
    let strict = |n: &str| Err(format!("unknown `{n}`"));
    let t = Template::compile(
        &json!({"session": {"turn_detection": "${null}", "keep": "$${null}", "n": ["${null}"]}}),
        &strict,
    )
    .unwrap();
    assert_eq!(
        t.render_text(&vars).unwrap(),
        r#"{"session":{"keep":"${null}","n":[null],"turn_detection":null}}"#
    );
    assert_eq!(
        Template::compile(&json!("${ null }"), &strict).unwrap(),
        Template::Lit(Value::Null)
    );
    let e = Template::compile(&json!("x ${null}"), &strict).unwrap_err();
    assert_eq!(e.offset, 2);
    assert!(e.msg.contains("only as a whole string"), "{}", e.msg);
    assert!(e.msg.contains("`$${null}`"), "{}", e.msg);
    // An escape before a variable does not shift the variable's reported position.
    let e = Template::compile(&json!("$${a} ${bad}"), &strict).unwrap_err();
    assert_eq!((e.offset, e.msg.as_str()), (6, "unknown `bad`"));
}
