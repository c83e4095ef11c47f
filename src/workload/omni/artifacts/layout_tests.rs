use super::*;

#[track_caller]
fn check(subset: &str, video_rel: &str, expected: &str) {
    assert_eq!(case_dir_name(subset, video_rel), expected);
}

#[test]
fn spec_vectors() {
    check("1q1a", "video.mp4", "video--a41434a9");
    check("1q1a", "videos/clip_a.mp4", "videos__clip_a--e9abac3b");
    check(
        "1qna",
        "videos_bench/nested/guide.mp4",
        "videos_bench__nested__guide--295f59aa",
    );
}

#[test]
fn stem_rules() {
    let stem = |v: &str| {
        case_dir_name("s", v)
            .rsplit_once("--")
            .map(|(s, _)| s.to_owned())
    };
    assert_eq!(stem("a\\b.c.mp4").as_deref(), Some("a__b.c"));
    assert_eq!(stem("./dir//.hidden").as_deref(), Some("dir__.hidden"));
    assert_eq!(stem("noext").as_deref(), Some("noext"));
    assert_eq!(stem("trailing.").as_deref(), Some("trailing."));
}

#[test]
fn layout_paths() {
    let l = CaseLayout::new("1q1a", "videos/clip_a.mp4");
    assert_eq!(
        l.dir(Path::new("/out")),
        Path::new("/out/1q1a/videos__clip_a--e9abac3b")
    );
    assert_eq!(l.sample_id(), "1q1a__videos__clip_a--e9abac3b");
    assert_eq!(l.label(), "1q1a/videos/clip_a.mp4");
}
