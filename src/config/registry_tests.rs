use super::*;
use crate::workload::catalogue::Merge;

/// The `[workload]` keys kind `k` declares (its schema's properties).
fn declared_keys(k: &WorkloadKind) -> Vec<String> {
    let mut g = schemars::SchemaGenerator::default();
    (k.schema)(&mut g).as_value()["properties"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// Every flag a kind declares sets a `[workload]` key of that kind, once; a flag
/// several kinds declare is one command-line option, so they agree on how it is typed.
#[test]
fn every_declared_flag_sets_a_declared_workload_key() {
    let mut seen: Vec<&crate::workload::FlagSpec> = Vec::new();
    for k in registry() {
        let keys = declared_keys(k);
        assert!(!keys.is_empty(), "{}: no schema properties", k.name);
        for (i, f) in k.flags.iter().enumerate() {
            assert!(
                keys.iter().any(|key| key == f.key),
                "{}: {} sets `{}`, which is not a [workload] key",
                k.name,
                f.long(),
                f.key
            );
            assert_ne!(f.key, "kind", "{}: a flag may not change the kind", k.name);
            assert!(!f.help.is_empty() && !f.flag.starts_with('-'), "{f:?}");
            assert!(
                k.flags[..i]
                    .iter()
                    .all(|g| g.flag != f.flag && g.key != f.key),
                "{}: {} declared twice",
                k.name,
                f.long()
            );
            if let Some(other) = seen.iter().find(|g| g.flag == f.flag) {
                assert_eq!(
                    (other.kind, other.value_name),
                    (f.kind, f.value_name),
                    "{} is typed differently by two kinds",
                    f.long()
                );
            } else {
                seen.push(f);
            }
        }
    }
}

/// Every metric states where it is measured from and to, and how shards merge it.
#[test]
fn every_family_states_its_origin_and_merge_rule() {
    for k in registry() {
        for f in k.families {
            assert!(
                !f.origin.is_empty(),
                "{}: {} has no origin",
                k.name,
                f.prefix
            );
            assert_ne!(
                f.merge,
                Merge::Unmergeable("no merge rule declared"),
                "{}: {} has no merge rule",
                k.name,
                f.prefix
            );
        }
        for (alias, target) in k.aliases {
            assert!(k.declares(target), "{}: alias {alias} → {target}", k.name);
        }
    }
}
