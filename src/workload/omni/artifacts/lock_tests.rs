use super::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{TryRecvError, sync_channel};
use std::time::Duration;

/// Safety net only: nothing waits on time for synchronization.
const SAFETY: Duration = Duration::from_secs(30);

#[test]
fn second_holder_blocks_until_first_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("out");
    let first = OutputLock::acquire(&root).unwrap();
    assert!(first.is_held(), "{:?}", first.warning());
    assert_eq!(first.path(), root.join(LOCK_FILE));

    let released = Arc::new(AtomicBool::new(false));
    let (started_tx, started_rx) = sync_channel(1);
    let (acquired_tx, acquired_rx) = sync_channel(1);
    let handle = {
        let (root, released) = (root.clone(), Arc::clone(&released));
        std::thread::spawn(move || {
            started_tx.send(()).unwrap();
            let second = OutputLock::acquire(&root).unwrap();
            // Must only get here after the first lock was released.
            acquired_tx.send(released.load(Ordering::SeqCst)).unwrap();
            drop(second);
        })
    };
    started_rx.recv_timeout(SAFETY).unwrap();
    // Whatever the scheduling, the second holder cannot have the lock yet.
    assert_eq!(acquired_rx.try_recv().err(), Some(TryRecvError::Empty));
    released.store(true, Ordering::SeqCst);
    drop(first);
    let saw_release = acquired_rx.recv_timeout(SAFETY);
    assert_eq!(saw_release, Ok(true));
    handle.join().unwrap();
    // Re-acquirable afterwards.
    assert!(OutputLock::acquire(&root).unwrap().is_held());
}

#[test]
fn a_held_lock_names_its_holder_and_a_wait_limit_fails_fast() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("out");
    let first = OutputLock::acquire(&root).unwrap();
    assert!(first.is_held());
    let second = OpenOptions::new()
        .read(true)
        .append(true)
        .open(first.path())
        .unwrap();
    let err = wait_for(&second, first.path(), Some(Duration::ZERO)).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains(&format!("pid {}", std::process::id())),
        "{msg}"
    );
    assert!(msg.contains("--lock-timeout"), "{msg}");
    drop(first);
    assert!(matches!(
        wait_for(&second, &root.join(LOCK_FILE), Some(Duration::ZERO)),
        Ok(Ok(()))
    ));
}

#[test]
fn unsupported_errnos_fall_back() {
    use rustix::io::Errno;
    for errno in [Errno::NOLCK, Errno::OPNOTSUPP, Errno::ACCESS, Errno::INVAL] {
        assert!(
            lock_unsupported(&io::Error::from_raw_os_error(errno.raw_os_error())),
            "{errno}"
        );
    }
    assert!(!lock_unsupported(&io::Error::from_raw_os_error(
        Errno::BADF.raw_os_error()
    )));
    assert!(!lock_unsupported(&io::Error::other("x")));
}

#[test]
fn root_that_is_a_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("file");
    fs::write(&root, b"x").unwrap();
    assert!(matches!(
        OutputLock::acquire(&root),
        Err(ArtifactError::CreateDir { .. })
    ));
}
