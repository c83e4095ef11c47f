//! Property-test strategies shared by the workloads' inbound-message fuzz tests: arbitrary
//! JSON (shaped like protocol events or not), text and binary frames, in any order, with
//! wake-ups and a final close, fed to a [`Session`] state machine. Test-only.

use std::time::Duration;

use bytes::Bytes;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::{Effects, Inbound, Session};

/// One step of a fuzzed conversation.
#[derive(Debug, Clone)]
pub enum Step {
    /// An inbound frame `dt_ms` after the previous step.
    Frame(u32, Inbound),
    /// A wake-up `dt_ms` later.
    Wake(u32),
}

/// Arbitrary JSON, a few levels deep.
pub fn any_json() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(".{0,8}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
    .boxed()
}

/// An event of one of `types` with protocol-ish keys set to arbitrary values.
pub fn event(
    types: &'static [&'static str],
    keys: &'static [&'static str],
) -> BoxedStrategy<Value> {
    (
        prop::sample::select(types),
        prop::collection::vec((prop::sample::select(keys), any_json()), 0..6),
    )
        .prop_map(|(kind, fields)| {
            let mut m = Map::new();
            m.insert("type".into(), json!(kind));
            for (k, v) in fields {
                m.insert(k.to_string(), v);
            }
            Value::Object(m)
        })
        .boxed()
}

/// Steps mixing shaped events, arbitrary JSON, text, binary frames and wake-ups.
pub fn steps(shaped: BoxedStrategy<Value>) -> BoxedStrategy<Vec<Step>> {
    let dt = 0u32..3000;
    let step = prop_oneof![
        4 => (dt.clone(), shaped).prop_map(|(d, v)| Step::Frame(d, Inbound::Text(v.to_string().into()))),
        1 => (dt.clone(), any_json()).prop_map(|(d, v)| Step::Frame(d, Inbound::Text(v.to_string().into()))),
        1 => (dt.clone(), ".{0,40}").prop_map(|(d, s)| Step::Frame(d, Inbound::Text(s.into()))),
        1 => (dt.clone(), prop::collection::vec(any::<u8>(), 0..64))
            .prop_map(|(d, b)| Step::Frame(d, Inbound::Binary(Bytes::from(b)))),
        2 => dt.prop_map(Step::Wake),
    ];
    prop::collection::vec(step, 0..40).boxed()
}

/// Feeds `steps` to `session` (already opened at `t0`), then closes it. Checks that every
/// failure is a non-empty message and that the session never asks to wake in the past
/// by more than the step granularity.
pub fn drive<S: Session>(session: &mut S, t0: Instant, steps: &[Step], close: Option<String>) {
    let mut now = t0;
    for step in steps {
        let mut fx = Effects::default();
        match step {
            Step::Frame(dt, msg) => {
                now += Duration::from_millis(u64::from(*dt));
                session.on_inbound(msg.clone(), now, &mut fx);
            }
            Step::Wake(dt) => {
                now += Duration::from_millis(u64::from(*dt));
                session.on_wake(now, &mut fx);
            }
        }
        check(&fx);
        if fx.finish.is_some() {
            return;
        }
    }
    let mut fx = Effects::default();
    session.on_closed(now, close, &mut fx);
    check(&fx);
}

fn check(fx: &Effects) {
    if let Some(Err(msg)) = &fx.finish {
        assert!(
            !msg.message.trim().is_empty(),
            "a failure without a message"
        );
    }
}
