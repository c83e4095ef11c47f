//! Suites: path expansion, the summary table, exit codes, problem lines and JUnit XML.

use super::*;

fn outcome(name: &str, status: Status) -> ScenarioOutcome {
    ScenarioOutcome {
        name: name.into(),
        path: PathBuf::from(format!("scenarios/{name}.toml")),
        duration_s: 1.0,
        status,
        failed_samples: Vec::new(),
        measured: 3,
        breaches: Vec::new(),
        headline: Vec::new(),
        classes: Default::default(),
    }
}

fn sample_suite() -> Vec<ScenarioOutcome> {
    let mut ok = outcome("quickstart", Status::Passed);
    ok.classes.good = 3;
    ok.duration_s = 4.25;
    ok.headline = vec![("ttft_ms.p99".into(), 412.3), ("rtf.mean".into(), 0.9)];
    let mut bad = outcome("video-stalled", Status::Failed);
    bad.duration_s = 12.0;
    bad.measured = 4;
    bad.failed_samples = vec![(2, "connection reset by peer".into())];
    bad.breaches = vec![
        Breach {
            metric: "ttft_ms.p99".into(),
            expr: "< 500".into(),
            measured: Some(612.4),
        },
        Breach {
            metric: "slo.attainment".into(),
            expr: ">= 0.99".into(),
            measured: None,
        },
    ];
    bad.headline = vec![("ttft_ms.p99".into(), 612.4), ("fps".into(), 15.5)];
    let mut err = outcome(
        "broken",
        Status::Error("s.toml:3:1: unknown field `x`".into()),
    );
    err.duration_s = 0.0;
    err.measured = 0;
    vec![ok, bad, err]
}

#[test]
fn expands_files_and_directories() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for f in ["b.toml", "a.toml", "c.txt", ".hidden.toml", "a.toml.bak"] {
        std::fs::write(d.join(f), "").unwrap();
    }
    std::fs::create_dir(d.join("sub")).unwrap();
    std::fs::write(d.join("sub/z.toml"), "").unwrap();
    std::fs::create_dir(d.join("dir.toml")).unwrap();
    let lone = d.join("sub/z.toml");
    let got = expand_paths(&[lone.clone(), d.to_path_buf(), d.join("c.txt")]).unwrap();
    assert_eq!(
        got,
        vec![lone, d.join("a.toml"), d.join("b.toml"), d.join("c.txt")]
    );
}

#[test]
fn missing_and_empty_paths_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.toml");
    let err = expand_paths(std::slice::from_ref(&missing)).unwrap_err();
    assert_eq!(
        err,
        SuiteError::NotFound {
            path: missing.clone()
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{}: no such file or directory; pass scenario files (.toml) or directories holding \
             them",
            missing.display()
        )
    );
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    std::fs::write(empty.join("notes.md"), "").unwrap();
    let err = expand_paths(std::slice::from_ref(&empty)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: directory has no *.toml scenario files; add one or pass scenario files directly",
            empty.display()
        )
    );
}

#[test]
fn table_snapshot() {
    let want = "\
scenario       status  samples  duration  ttft_ms.p99  rtf.mean    fps  breached
quickstart     pass        3/3      4.2s       412.30     0.900      -         0
video-stalled  FAIL        3/4     12.0s       612.40         -  15.50         2
broken         ERROR         -      0.0s            -         -      -         -
totals: 3 scenarios (1 passed, 1 failed, 1 errors), samples 6/7 ok, 2 thresholds breached, 16.2s
";
    assert_eq!(render_table(&sample_suite()), want);
}

#[test]
fn exit_codes() {
    let pass = outcome("a", Status::Passed);
    let fail = outcome("b", Status::Failed);
    let err = outcome("c", Status::Error("x".into()));
    assert_eq!(exit_code(&[]), 0);
    assert_eq!(exit_code(&[pass.clone(), pass.clone()]), 0);
    assert_eq!(exit_code(&[pass.clone(), fail.clone()]), 1);
    assert_eq!(exit_code(&[fail.clone(), err.clone(), pass]), 2);
    assert_eq!(exit_code(&[err, fail]), 2);
}

#[test]
fn problems_name_breaches_and_samples() {
    let o = &sample_suite()[1];
    assert_eq!(
        describe_problems(o),
        vec![
            "ttft_ms.p99 < 500: measured 612.400",
            "slo.attainment >= 0.99: missing",
            "session 2 failed: connection reset by peer",
        ]
    );
}

#[test]
fn junit_structure() {
    let xml = junit_xml("nightly", &sample_suite());
    let root = parse_xml(&xml).unwrap();
    assert_eq!(root.name, "testsuites");
    let suite = &root.children[0];
    assert_eq!(suite.name, "testsuite");
    for el in [&root, suite] {
        assert_eq!(el.attr("tests"), Some("3"));
        assert_eq!(el.attr("failures"), Some("1"));
        assert_eq!(el.attr("errors"), Some("1"));
        assert_eq!(el.attr("time"), Some("16.250"));
    }
    assert_eq!(suite.attr("name"), Some("nightly"));
    let cases = &suite.children;
    assert_eq!(cases.len(), 3);
    assert!(cases.iter().all(|c| c.name == "testcase"));
    assert_eq!(cases[0].attr("name"), Some("quickstart"));
    assert_eq!(cases[0].attr("classname"), Some("rtload.quickstart"));
    assert_eq!(cases[0].attr("time"), Some("4.250"));
    assert_eq!(cases[0].children.len(), 1);
    assert_eq!(cases[0].children[0].name, "system-out");
    assert_eq!(
        cases[0].children[0].text,
        "samples: 3/3 ok\nsessions: 3 good, 0 degraded, 0 rejected, 0 failed\nttft_ms.p99 = 412.300\nrtf.mean = 0.900\n"
    );
    let failure = &cases[1].children[0];
    assert_eq!(failure.name, "failure");
    assert_eq!(
        failure.attr("message"),
        Some(
            "ttft_ms.p99 < 500: measured 612.400; slo.attainment >= 0.99: missing; session 2 \
             failed: connection reset by peer"
        )
    );
    assert_eq!(
        failure.text,
        "ttft_ms.p99 < 500: measured 612.400\nslo.attainment >= 0.99: missing\nsession 2 failed: \
         connection reset by peer"
    );
    assert_eq!(cases[2].attr("classname"), Some("rtload.broken"));
    let error = &cases[2].children[0];
    assert_eq!(error.name, "error");
    assert_eq!(error.attr("message"), Some("s.toml:3:1: unknown field `x`"));
    assert_eq!(error.text, "error: s.toml:3:1: unknown field `x`");
    assert_eq!(
        cases[2].children.len(),
        1,
        "no system-out without samples or metrics"
    );
}

#[test]
fn junit_escapes_attributes_and_text() {
    let nasty = "a <&\"> 'b'\nline two\u{1}\u{7f}\tend";
    let mut o = outcome("n<&\">", Status::Failed);
    o.path = PathBuf::from("dir/we&ird.toml");
    o.failed_samples = vec![(0, nasty.into())];
    let mut e = outcome("e", Status::Error(nasty.into()));
    e.measured = 0;
    let xml = junit_xml("s\"<&>", &[o, e]);
    assert!(!xml.contains('\u{1}') && !xml.contains('\u{7f}'));
    assert!(xml.contains("message=\"session 0 failed: a &lt;&amp;&quot;&gt; &apos;b&apos;&#10;"));
    let root = parse_xml(&xml).unwrap();
    let suite = &root.children[0];
    assert_eq!(suite.attr("name"), Some("s\"<&>"));
    let case = &suite.children[0];
    assert_eq!(case.attr("name"), Some("n<&\">"));
    assert_eq!(case.attr("classname"), Some("rtload.we&ird"));
    let clean = "a <&\"> 'b'\nline two\tend";
    let failure = &case.children[0];
    assert_eq!(
        failure.attr("message"),
        Some(format!("session 0 failed: {clean}").as_str())
    );
    assert_eq!(failure.text, format!("session 0 failed: {clean}"));
    let error = &suite.children[1].children[0];
    assert_eq!(error.attr("message"), Some(clean));
    assert_eq!(error.text, format!("error: {clean}"));
}

#[test]
fn failure_message_caps_samples_but_body_lists_all() {
    let mut o = outcome("many", Status::Failed);
    o.measured = 10;
    o.failed_samples = (0..7).map(|i| (i, format!("boom {i}"))).collect();
    let root = parse_xml(&junit_xml("s", &[o])).unwrap();
    let failure = &root.children[0].children[0].children[0];
    let msg = failure.attr("message").unwrap();
    assert!(msg.contains("session 4 failed: boom 4; 2 more failed sessions listed below"));
    assert!(!msg.contains("boom 5"));
    assert_eq!(failure.text.lines().count(), 7);
    assert!(failure.text.ends_with("session 6 failed: boom 6"));
    let mut bare = outcome("bare", Status::Failed);
    bare.measured = 1;
    let root = parse_xml(&junit_xml("s", &[bare])).unwrap();
    let failure = &root.children[0].children[0].children[0];
    assert_eq!(failure.attr("message"), Some("scenario failed"));
}

// ---- a tiny XML well-formedness checker (elements, attributes, text, entities) ----

#[derive(Debug)]
struct Elem {
    name: String,
    attrs: Vec<(String, String)>,
    children: Vec<Elem>,
    text: String,
}

impl Elem {
    fn attr(&self, k: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
    }
}

fn decode(s: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let end = rest[i..].find(';').ok_or("unterminated entity")? + i;
        let ent = &rest[i + 1..end];
        out.push(match ent {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let n = ent.strip_prefix('#').ok_or(format!("bad entity &{ent};"))?;
                let code = match n.strip_prefix('x') {
                    Some(h) => u32::from_str_radix(h, 16),
                    None => n.parse(),
                }
                .map_err(|_| format!("bad entity &{ent};"))?;
                char::from_u32(code).ok_or("bad char ref")?
            }
        });
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn is_name(s: &str) -> bool {
    let mut cs = s.chars();
    cs.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && cs.all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c))
}

/// Parse `xml` into its root element, failing on anything not well-formed.
fn parse_xml(xml: &str) -> Result<Elem, String> {
    if let Some(c) = xml.chars().find(|c| !keep(c)) {
        return Err(format!("forbidden character {c:?}"));
    }
    let mut s = xml;
    if let Some(rest) = s.strip_prefix("<?xml") {
        s = &rest[rest.find("?>").ok_or("unterminated declaration")? + 2..];
    }
    let mut stack: Vec<Elem> = Vec::new();
    let mut root = None;
    while !s.is_empty() {
        let lt = s.find('<').unwrap_or(s.len());
        let txt = &s[..lt];
        if txt.contains('>') && txt.contains("]]>") {
            return Err("]]> in text".into());
        }
        match stack.last_mut() {
            Some(top) => top.text.push_str(&decode(txt)?),
            None if !txt.trim().is_empty() => return Err(format!("text outside root: {txt:?}")),
            None => {}
        }
        s = &s[lt..];
        if s.is_empty() {
            break;
        }
        let gt = s.find('>').ok_or("unterminated tag")?;
        let tag = &s[1..gt];
        s = &s[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let el = stack.pop().ok_or("close without open")?;
            if el.name != name {
                return Err(format!("</{name}> closes <{}>", el.name));
            }
            match stack.last_mut() {
                Some(parent) => parent.children.push(el),
                None if root.is_none() => root = Some(el),
                None => return Err("two roots".into()),
            }
            continue;
        }
        let (body, selfclose) = match tag.strip_suffix('/') {
            Some(b) => (b, true),
            None => (tag, false),
        };
        let name_end = body.find(char::is_whitespace).unwrap_or(body.len());
        let mut el = Elem {
            name: body[..name_end].into(),
            attrs: Vec::new(),
            children: Vec::new(),
            text: String::new(),
        };
        if !is_name(&el.name) {
            return Err(format!("bad element name {:?}", el.name));
        }
        let mut a = body[name_end..].trim_start();
        while !a.is_empty() {
            let eq = a.find('=').ok_or("attribute without =")?;
            let key = &a[..eq];
            let v = a[eq + 1..].strip_prefix('"').ok_or("unquoted attribute")?;
            let close = v.find('"').ok_or("unterminated attribute")?;
            let raw = &v[..close];
            if !is_name(key) || raw.contains('<') || el.attr(key).is_some() {
                return Err(format!("bad attribute {key}={raw:?}"));
            }
            el.attrs.push((key.into(), decode(raw)?));
            let after = &v[close + 1..];
            if !after.is_empty() && !after.starts_with(char::is_whitespace) {
                return Err("attributes must be separated by whitespace".into());
            }
            a = after.trim_start();
        }
        if selfclose {
            stack
                .last_mut()
                .ok_or("self-closing root")?
                .children
                .push(el);
        } else {
            stack.push(el);
        }
    }
    if !stack.is_empty() {
        return Err("unclosed elements".into());
    }
    root.ok_or_else(|| "no root".into())
}

#[test]
fn checker_rejects_bad_xml() {
    assert!(parse_xml("<a><b></a></b>").is_err());
    assert!(parse_xml("<a x=\"1\" x=\"2\"/>").is_err());
    assert!(parse_xml("<a>&bogus;</a>").is_err());
    assert!(parse_xml("<a x=\"<\"></a>").is_err());
    assert!(parse_xml("<a>\u{1}</a>").is_err());
    assert!(parse_xml("<a></a><b></b>").is_err());
    assert_eq!(
        parse_xml("<a x=\"&#10;\">&lt;&amp;</a>").unwrap().text,
        "<&"
    );
}
