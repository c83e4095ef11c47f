use super::*;

#[test]
fn a_session_counts_its_socket_the_workload_files_and_the_embedded_server_side() {
    assert_eq!(fds_per_session(false, 0), 1);
    assert_eq!(fds_per_session(true, 0), 2);
    assert_eq!(fds_per_session(true, 2), 4);
}

#[test]
fn too_many_sessions_for_the_limit_is_an_error_with_the_fix() {
    let b = FdBudget {
        soft: Some(1024),
        hard: Some(1024),
        needed: 1100 * 3 + RESERVE_FDS,
    };
    let e = check(&b, 1100).unwrap_err();
    assert!(
        e.contains("max_concurrency 1100 needs about 3364 open files"),
        "{e}"
    );
    assert!(e.contains("ulimit -n 3364"), "{e}");
    assert!(e.contains("lower max_concurrency to 320"), "{e}");
    assert!(
        check(
            &FdBudget {
                soft: None,
                ..b.clone()
            },
            1100
        )
        .is_ok()
    );
    assert!(
        check(
            &FdBudget {
                soft: Some(4096),
                ..b
            },
            1100
        )
        .is_ok()
    );
}
