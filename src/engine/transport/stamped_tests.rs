//! The stamped socket against a real loopback connection: the kernel's stamp is the
//! arrival, however late the read; reads are numbered per thread; the clock mapping.

use std::io::Write as _;
use std::time::{Duration, SystemTime};

use tokio::io::AsyncReadExt as _;
use tokio::time::Instant;

use super::*;

/// A connected pair: the peer's std socket and our stamped end.
async fn pair() -> (std::net::TcpStream, StampedTcp) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let ours = TcpStream::connect(listener.local_addr().unwrap())
        .await
        .unwrap();
    let (peer, _) = listener.accept().unwrap();
    (peer, StampedTcp::new(ours))
}

#[tokio::test(flavor = "current_thread")]
async fn a_late_read_is_stamped_when_the_bytes_arrived() {
    let (mut peer, mut ours) = pair().await;
    assert!(ours.kernel, "SO_TIMESTAMPNS is available on Linux");
    // The kernel turns its receive stamps on a little after the first socket asks (a
    // deferred static key): until then a read is stamped at the read. Bounded tries.
    for _ in 0..100 {
        peer.write_all(b"hello").unwrap();
        // The bytes are in the kernel once the socket is readable; then the reader is late.
        ours.io.readable().await.unwrap();
        let ready = Instant::now();
        std::thread::sleep(Duration::from_millis(30));
        let before = seq();
        let mut buf = [0u8; 16];
        let n = ours.read(&mut buf).await.unwrap();
        let read = Instant::now();
        assert_eq!(&buf[..n], b"hello");
        let stamp = latest(before).expect("the read is numbered");
        assert_eq!(stamp.seq, before + 1);
        assert_eq!(latest(stamp.seq), None, "no later read");
        let Some(age) = stamp.kernel_age else {
            assert!(stamp.at >= ready, "unstamped: the read's own time");
            continue;
        };
        assert!(age >= Duration::from_millis(30), "{age:?}");
        assert!(
            stamp.at <= ready,
            "arrival {:?} after readiness",
            stamp.at - ready
        );
        assert!(read - stamp.at >= Duration::from_millis(30));
        return;
    }
    panic!("the kernel never stamped a receipt");
}

#[tokio::test(flavor = "current_thread")]
async fn every_read_is_numbered_and_the_end_is_not_a_read() {
    let (mut peer, mut ours) = pair().await;
    let mut buf = [0u8; 4];
    let start = seq();
    for round in 1..=3u64 {
        peer.write_all(b"ab").unwrap();
        assert_eq!(ours.read(&mut buf).await.unwrap(), 2);
        assert_eq!(seq(), start + round);
    }
    drop(peer);
    assert_eq!(ours.read(&mut buf).await.unwrap(), 0);
    assert_eq!(seq(), start + 3, "end of stream: no stamp");
}

#[test]
fn the_kernel_stamp_moves_to_the_monotonic_clock_by_its_age() {
    let now = Instant::now() + Duration::from_secs(10);
    let real = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
    let (at, age) = on_monotonic(real - Duration::from_micros(1500), now, real);
    assert_eq!(age, Duration::from_micros(1500));
    assert_eq!(now - at, Duration::from_micros(1500));
    // The realtime clock stepped back below the stamp: the arrival is taken as now.
    let (at, age) = on_monotonic(real + Duration::from_secs(1), now, real);
    assert_eq!((at, age), (now, Duration::ZERO));
}
