use super::*;
use crate::workload::omni::dataset::layout::tests::minimal_dataset;
use std::fs;

fn subsets_of(sel: &Selection) -> Vec<Subset> {
    sel.cases.iter().map(|c| c.subset).collect()
}

#[test]
fn spec_vector_without_shuffle() {
    let tmp = tempfile::tempdir().unwrap();
    minimal_dataset(tmp.path());
    let all = discover(tmp.path(), &Subset::ALL, 0, 0, true).unwrap();
    assert_eq!(subsets_of(&all), Subset::ALL);
    let last = all.cases.last().unwrap();
    assert_eq!(last.video_rel, "videos_bench/nested/guide.mp4");
    assert!(all.warnings.is_empty());
    let two = discover(tmp.path(), &Subset::ALL, 2, 0, true).unwrap();
    assert_eq!(subsets_of(&two), [Subset::Q1a, Subset::Q1aMath]);
}

#[test]
fn order_follows_subset_list_and_num_prompts_is_total() {
    let tmp = tempfile::tempdir().unwrap();
    let data = minimal_dataset(tmp.path());
    let order = [Subset::Qna, Subset::Q1a];
    let sel = discover(&data, &order, 0, 0, true).unwrap();
    assert_eq!(subsets_of(&sel), order);
    let one = discover(&data, &order, 1, 0, true).unwrap();
    assert_eq!(subsets_of(&one), [Subset::Qna]);
}

#[test]
fn too_many_prompts_selects_all_with_warning() {
    let tmp = tempfile::tempdir().unwrap();
    minimal_dataset(tmp.path());
    let sel = discover(tmp.path(), &Subset::ALL, 5, 0, true).unwrap();
    assert_eq!(sel.cases.len(), 3);
    let want = "Requested 5 OmniInteract prompts but only 3 are available; using all cases";
    assert_eq!(sel.warnings, [want]);
}

#[test]
fn shuffle_matches_cpython_permutation() {
    let tmp = tempfile::tempdir().unwrap();
    minimal_dataset(tmp.path());
    let plain = discover(tmp.path(), &Subset::ALL, 0, 42, true).unwrap();
    for seed in [0u64, 1, 42] {
        let mut want = plain.cases.clone();
        crate::workload::omni::dataset::shuffle::python_shuffle(&mut want, seed);
        let got = discover(tmp.path(), &Subset::ALL, 0, seed, false).unwrap();
        assert_eq!(got.cases, want, "seed {seed}");
        let again = discover(tmp.path(), &Subset::ALL, 0, seed, false).unwrap();
        assert_eq!(again, got);
    }
}

#[test]
fn validation_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let data = minimal_dataset(tmp.path());
    let msg = |r: Result<Selection, DatasetError>| r.unwrap_err().to_string();
    let root = tmp.path();
    assert_eq!(
        msg(discover(root, &[], 0, 0, true)),
        "At least one OmniInteract subset is required"
    );
    assert_eq!(
        msg(discover(root, &[Subset::Q1a, Subset::Q1a], 0, 0, true)),
        "OmniInteract subsets must not contain duplicates"
    );
    fs::write(data.join("1q1a/video_json_map.json"), r#"{"entries":[]}"#).unwrap();
    assert_eq!(
        msg(discover(root, &Subset::ALL, 0, 0, true)),
        "No OmniInteract sessions found for requested subset '1q1a'"
    );
    let dup = r#"{"entries":[{"video":"videos/talk.mp4","annotation":"annotations/talk.json"},
                             {"video":"./videos/talk.mp4","annotation":"annotations/talk.json"}]}"#;
    fs::write(data.join("1q1a/video_json_map.json"), dup).unwrap();
    assert_eq!(
        msg(discover(root, &Subset::ALL, 0, 0, true)),
        "OmniInteract dataset contains duplicate video paths"
    );
    let nowhere = tmp.path().join("data/1qna/annotations");
    assert!(
        msg(discover(&nowhere, &Subset::ALL, 0, 0, true))
            .starts_with("OmniInteract data not found under ")
    );
}
