use super::*;

fn bounds(d: &str) -> Value {
    let mut m = Map::new();
    from_description(d).apply(&mut m);
    Value::Object(m)
}

#[test]
fn every_form_the_descriptions_use_is_read() {
    use serde_json::json;
    let cases = [
        (
            "Cap (default 1). Range [1, 1000000].",
            json!({"minimum": 1, "maximum": 1000000}),
        ),
        (
            "Bound, seconds. Range (0, 1e6].",
            json!({"exclusiveMinimum": 0, "maximum": 1000000}),
        ),
        (
            "Requests per second in [1e-6, 1e9], or \"inf\".",
            json!({"minimum": 1e-6, "maximum": 1000000000}),
        ),
        (
            "Width, multiple of 16 in [16, 4096] (default 832).",
            json!({"minimum": 16, "maximum": 4096, "multipleOf": 16}),
        ),
        (
            "Bytes (default 67108864 = 64 MiB; 1..=4294967296).",
            json!({"minimum": 1, "maximum": 4294967296_i64}),
        ),
        (
            "Range [1, the rollout's chunk count].",
            json!({"minimum": 1}),
        ),
        (
            "Seed. Range [0, 2^63-1].",
            json!({"minimum": 0, "maximum": i64::MAX}),
        ),
        (
            "Gamma shape of the gaps, > 0: 1 = Poisson.",
            json!({"exclusiveMinimum": 0}),
        ),
        (
            "in ms (default 0, range [0, 60000]); measured",
            json!({"minimum": 0, "maximum": 60000}),
        ),
        ("Sample rate, Hz (default 16000).", json!({})),
    ];
    for (d, want) in cases {
        assert_eq!(bounds(d), want, "{d}");
    }
}
