use super::*;

#[test]
fn switch_wakes_a_waiter_flipped_before_or_after() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let s = InterruptSwitch::new();
    assert!(!s.is_triggered());
    let s2 = s.clone();
    rt.block_on(async move {
        let waiter = tokio::spawn(async move { s2.triggered().await });
        tokio::task::yield_now().await;
        s.trigger();
        waiter.await.unwrap();
        s.triggered().await; // already flipped: returns at once
        assert!(!s.is_cancelled());
        let s3 = s.clone();
        let waiter = tokio::spawn(async move { s3.cancelled().await });
        tokio::task::yield_now().await;
        s.cancel_now();
        waiter.await.unwrap();
        s.trigger(); // never lowers the stage
        assert!(s.is_triggered() && s.is_cancelled());
    });
}
