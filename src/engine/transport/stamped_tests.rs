//! The stamped socket against a real loopback connection: the kernel's stamp is the
//! arrival, however late the read; reads are numbered per thread; the bytes read straight
//! into the caller's buffer are exactly those written, across many reads, partial ones and
//! the end of the stream; a short read clears the readiness without losing a wake-up; the
//! control message's parse; the clock mapping.

use std::future::poll_fn;
use std::io::Write as _;
use std::mem::MaybeUninit;
use std::task::Context;
use std::time::{Duration, SystemTime};

use bytes::BufMut as _;
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

/// The clock pair a stamp is moved with: the realtime clock at the middle of its two
/// reads around the monotonic one; a pair with something run between its reads (a wide
/// straddle) is read again, and of wide ones only the tightest is kept.
#[test]
fn the_clocks_are_paired_from_reads_nothing_ran_between() {
    let mono = Instant::now();
    let real = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
    let us = Duration::from_micros;
    let reads = |spans: Vec<(Duration, Duration)>| {
        let mut k = 0;
        let mut calls = 0;
        let pair = tightest_pair(|| {
            calls += 1;
            let (before, after) = spans[k];
            k += 1;
            (real + before, mono + us(k as u64), real + after)
        });
        (pair, calls)
    };
    // 300 µs ran between the first two reads (the stamp would be off by up to that):
    // read again; the next straddles 2 µs and is kept at its middle.
    let ((m, r), calls) = reads(vec![(us(0), us(300)), (us(400), us(402))]);
    assert_eq!((m, r, calls), (mono + us(2), real + us(401), 2));
    // Every read wide: the tightest of three.
    let wide = vec![(us(0), us(90)), (us(100), us(130)), (us(200), us(280))];
    let ((m, r), calls) = reads(wide);
    assert_eq!((m, r, calls), (mono + us(2), real + us(115), 3));
    // The realtime clock stepped back across a read: never preferred to a forward one.
    let back = vec![(us(50), us(10)), (us(100), us(160)), (us(300), us(250))];
    let ((m, r), _) = reads(back);
    assert_eq!((m, r), (mono + us(2), real + us(130)));
    // The real clocks: a pair straddling nothing much reads as now.
    let (m, r) = clock_pair();
    assert!(m <= Instant::now() && r <= SystemTime::now());
}

/// `len` bytes of a pattern that no two nearby offsets share.
fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 8) as u8)
        .collect()
}

#[tokio::test(flavor = "current_thread")]
async fn many_partial_reads_into_uninitialized_buffers_return_exactly_what_was_written() {
    let (mut peer, mut ours) = pair().await;
    assert!(ours.kernel);
    // Three "frames", the middle one spanning dozens of reads, written from a thread of
    // their own (the reader is this one), then the end of the stream.
    let frames = [pattern(1000, 1), pattern(70_000, 2), pattern(5, 3)];
    let sent: Vec<u8> = frames.concat();
    let writer = std::thread::spawn(move || {
        for frame in &frames {
            peer.write_all(frame).unwrap();
        }
    });
    // Read the way the codec does: into a `BytesMut`'s uninitialized spare capacity, a
    // little at a time, so reads end inside frames.
    let mut got = bytes::BytesMut::new();
    loop {
        got.reserve(1500);
        let before = seq();
        let n = ours.read_buf(&mut (&mut got).limit(1500)).await.unwrap();
        if n == 0 {
            assert_eq!(seq(), before, "end of stream: no stamp");
            break;
        }
        let stamp = latest(before).expect("every read with bytes is stamped");
        assert_eq!(stamp.seq, before + 1);
    }
    writer.join().unwrap();
    assert_eq!(got.len(), sent.len());
    assert!(got[..] == sent[..], "the bytes read are the bytes written");
}

#[tokio::test(flavor = "current_thread")]
async fn a_read_lands_after_what_the_buffer_already_holds() {
    let (mut peer, mut ours) = pair().await;
    peer.write_all(b"world").unwrap();
    ours.io.readable().await.unwrap();
    let mut storage = [MaybeUninit::<u8>::uninit(); 64];
    let mut buf = ReadBuf::uninit(&mut storage);
    buf.put_slice(b"hello ");
    poll_fn(|cx| Pin::new(&mut ours).poll_read(cx, &mut buf))
        .await
        .unwrap();
    assert_eq!(buf.filled(), b"hello world");
    assert_eq!(buf.initialized().len(), b"hello world".len());
}

#[tokio::test(flavor = "current_thread")]
async fn a_short_read_clears_the_readiness_and_the_next_bytes_still_wake_the_reader() {
    let (mut peer, mut ours) = pair().await;
    peer.write_all(&pattern(100, 4)).unwrap();
    let mut buf = [0u8; 4096];
    let mut got = 0;
    while got < 100 {
        // Every read here is short: the buffer has room for far more than was written.
        got += ours.read(&mut buf).await.unwrap();
    }
    assert_eq!(got, 100);
    // More bytes arrive, but the runtime has not yet polled epoll for them (no await in
    // between): the short read cleared the readiness, so this poll makes no read and
    // sleeps; before, it made a `recvmsg` (which, finding bytes now, returned them).
    peer.write_all(b"next").unwrap();
    let mut cx = Context::from_waker(std::task::Waker::noop());
    let mut read = ReadBuf::new(&mut buf);
    let before = seq();
    assert!(
        Pin::new(&mut ours)
            .poll_read(&mut cx, &mut read)
            .is_pending()
    );
    assert_eq!(seq(), before, "no read was made");
    // epoll's new event marks the socket readable again: nothing is lost.
    let n = ours.read(&mut buf).await.unwrap();
    assert_eq!(&buf[..n], b"next");
    assert_eq!(seq(), before + 1);
}

/// One control message in the kernel's layout (64-bit: `size_t` length, level, type).
fn cmsg(level: i32, kind: i32, body: &[u8]) -> Vec<u8> {
    let len = 16 + body.len();
    let mut out = Vec::new();
    out.extend_from_slice(&len.to_ne_bytes());
    out.extend_from_slice(&level.to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(body);
    out.resize(len.next_multiple_of(8), 0);
    out
}

#[test]
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn the_receive_time_is_found_among_the_control_messages() {
    use nix::libc::{SCM_TIMESTAMPNS, SOL_SOCKET};
    let mut stamp = 1_700_000_000i64.to_ne_bytes().to_vec();
    stamp.extend_from_slice(&123_456_789i64.to_ne_bytes());
    let at = SystemTime::UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_789);
    assert_eq!(kernel_time(&[]), None);
    assert_eq!(
        kernel_time(&cmsg(SOL_SOCKET, SCM_TIMESTAMPNS, &stamp)),
        Some(at)
    );
    // Another message first (a 3-byte body, padded), then the stamp.
    let two = [
        cmsg(SOL_SOCKET, 1, b"abc"),
        cmsg(SOL_SOCKET, SCM_TIMESTAMPNS, &stamp),
    ]
    .concat();
    assert_eq!(kernel_time(&two), Some(at));
    // Cut short, or a length past the buffer: no stamp, no panic.
    let whole = cmsg(SOL_SOCKET, SCM_TIMESTAMPNS, &stamp);
    assert_eq!(kernel_time(&whole[..20]), None);
    let mut lying = whole.clone();
    lying[..8].copy_from_slice(&4096usize.to_ne_bytes());
    assert_eq!(kernel_time(&lying), None);
    // A negative second: no stamp.
    let mut before_epoch = (-1i64).to_ne_bytes().to_vec();
    before_epoch.extend_from_slice(&0i64.to_ne_bytes());
    assert_eq!(
        kernel_time(&cmsg(SOL_SOCKET, SCM_TIMESTAMPNS, &before_epoch)),
        None
    );
}
