//! The client's TCP socket, read with the kernel's receive time. Every client socket asks
//! for `SO_TIMESTAMPNS` and is read with `recvmsg`, whose `SCM_TIMESTAMPNS` says when the
//! kernel took in the last packet that read returned. So a message's receipt is stamped
//! where it happened, not when a busy shard thread got round to reading it: on a loaded
//! generator the two differ by the reader's wake-up lag, which is what this module measures.
//!
//! The stamp travels beside the type-erased socket awc hands out: each successful read on
//! this shard thread is numbered and kept in a thread-local ([`latest`]). The read half of
//! a WebSocket notes the number before it polls its connection; a read made during that
//! poll is its own (a shard thread runs one poll at a time), and a frame decoded from bytes
//! already buffered keeps the stamp of the read that brought them ([`super::WsStream`]).
//!
//! The kernel's stamp is on `CLOCK_REALTIME`; it is moved onto the monotonic clock by its
//! age at the read (the realtime clock read right after `recvmsg`, minus the stamp). A
//! socket where the option cannot be set, or a read without the control message, is
//! stamped at the read itself and counted as unstamped.

use std::cell::Cell;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actix_rt::net::{ActixStream, Ready};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// One successful read on this thread: its number, when its bytes arrived, and how long
/// before the read the kernel had them (`None`: no kernel stamp; `at` is the read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadStamp {
    /// The read's number on this thread (increases by one per read).
    pub seq: u64,
    /// When the read's last packet arrived (the kernel's stamp), or the read itself.
    pub at: Instant,
    /// The kernel stamp's age at the read: how late the thread read what had arrived.
    pub kernel_age: Option<Duration>,
}

thread_local! {
    static LATEST: Cell<Option<ReadStamp>> = const { Cell::new(None) };
}

/// The number of the latest read on this thread (0 before any).
pub fn seq() -> u64 {
    LATEST.get().map_or(0, |s| s.seq)
}

/// The latest read on this thread, if it came after read number `after`.
pub fn latest(after: u64) -> Option<ReadStamp> {
    LATEST.get().filter(|s| s.seq > after)
}

fn note(at: Instant, kernel_age: Option<Duration>) {
    let seq = seq() + 1;
    LATEST.set(Some(ReadStamp {
        seq,
        at,
        kernel_age,
    }));
}

/// A connected client TCP stream whose reads carry the kernel's receive time.
#[derive(Debug)]
pub struct StampedTcp {
    io: TcpStream,
    /// Whether the kernel was asked for receive stamps (`SO_TIMESTAMPNS` set).
    kernel: bool,
}

impl StampedTcp {
    /// Wraps `io`, asking the kernel to stamp what it receives (a socket that refuses is
    /// read plainly and stamped at each read; the refusal is logged once per socket).
    pub fn new(io: TcpStream) -> StampedTcp {
        let kernel = ask_kernel(&io);
        StampedTcp { io, kernel }
    }

    fn poll_plain(&mut self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        ready!(Pin::new(&mut self.io).poll_read(cx, buf))?;
        if buf.filled().len() > before {
            note(Instant::now(), None);
        }
        Poll::Ready(Ok(()))
    }
}

#[cfg(target_os = "linux")]
fn ask_kernel(io: &TcpStream) -> bool {
    use nix::sys::socket::{setsockopt, sockopt::ReceiveTimestampns};
    setsockopt(io, ReceiveTimestampns, &true)
        .inspect_err(|e| {
            tracing::debug!("SO_TIMESTAMPNS refused ({e}): receipts stamped at the read")
        })
        .is_ok()
}

#[cfg(not(target_os = "linux"))]
fn ask_kernel(_: &TcpStream) -> bool {
    false
}

/// Room for the control messages of one read: the one `SCM_TIMESTAMPNS` takes 32 bytes
/// on a 64-bit kernel (its header and a `timespec`, each aligned).
const CONTROL_BYTES: usize = 64;

/// One `recvmsg` straight into `out`'s unfilled part (no copy through a scratch buffer):
/// the bytes read, now filled in `out` (0 at the end of the stream), and the kernel's
/// receive time of the last packet, if it gave one.
#[cfg(target_os = "linux")]
fn recv_stamped(io: &TcpStream, out: &mut ReadBuf<'_>) -> io::Result<(usize, Option<SystemTime>)> {
    let mut control = [std::mem::MaybeUninit::uninit(); CONTROL_BYTES];
    let (n, control) = recvmsg_into(io, out, &mut control)?;
    Ok((n, kernel_time(control)))
}

/// The crate's one use of `unsafe` (held by tests/it/unsafe_rule.rs): `recvmsg` into
/// `out`'s unfilled, uninitialized part and into `control`, then those bytes the kernel
/// wrote taken as initialized. Returns the bytes read (filled in `out`) and the control
/// messages written. Zeroing the room first instead (safe) costs a pass over all of it
/// on every read, most of which a short read never touches.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn recvmsg_into<'c>(
    io: &TcpStream,
    out: &mut ReadBuf<'_>,
    control: &'c mut [std::mem::MaybeUninit<u8>],
) -> io::Result<(usize, &'c [u8])> {
    let room = out.remaining();
    // SAFETY: `unfilled_mut` only asks that no initialized byte be de-initialized; the
    // slice is handed to the kernel alone, which only ever writes bytes into it.
    let unfilled = unsafe { out.unfilled_mut() };
    let mut data = [socket2::MaybeUninitSlice::new(unfilled)];
    let mut msg = socket2::MsgHdrMut::new()
        .with_buffers(&mut data)
        .with_control(control);
    let n = socket2::SockRef::from(io).recvmsg(&mut msg, 0)?;
    let written = msg.control_len();
    assert!(
        n <= room && written <= control.len(),
        "recvmsg past its buffers"
    );
    // SAFETY: recvmsg(2) returned `n`: the kernel wrote exactly the first `n` bytes of
    // `out`'s unfilled part (`n` ≤ that slice's length, checked above), and set
    // msg_controllen to the `written` bytes of control messages it wrote at the start of
    // `control` (≤ its length, checked above). Nothing else is taken as initialized.
    let control = unsafe {
        out.assume_init(n);
        control[..written].assume_init_ref()
    };
    out.advance(n);
    Ok((n, control))
}

/// The `SCM_TIMESTAMPNS` receive time among the control messages `control` holds, if
/// there is one. The headers are the kernel's (`size_t` length, `int` level and type;
/// each header and message aligned to `size_t`), read byte by byte.
#[cfg(target_os = "linux")]
fn kernel_time(control: &[u8]) -> Option<SystemTime> {
    use nix::libc::{SCM_TIMESTAMPNS, SOL_SOCKET, c_int, c_long};
    const WORD: usize = size_of::<usize>();
    const INT: usize = size_of::<c_int>();
    const LONG: usize = size_of::<c_long>();
    const HEADER: usize = (WORD + 2 * INT).next_multiple_of(WORD);
    let mut rest = control;
    while rest.len() >= HEADER {
        let len = usize::from_ne_bytes(field::<WORD>(rest, 0)?);
        let level = c_int::from_ne_bytes(field::<INT>(rest, WORD)?);
        let kind = c_int::from_ne_bytes(field::<INT>(rest, WORD + INT)?);
        let body = rest.get(HEADER..len)?;
        if (level, kind) == (SOL_SOCKET, SCM_TIMESTAMPNS) {
            let sec = c_long::from_ne_bytes(field::<LONG>(body, 0)?);
            let nsec = c_long::from_ne_bytes(field::<LONG>(body, LONG)?);
            let since = Duration::new(u64::try_from(sec).ok()?, u32::try_from(nsec).ok()?);
            return Some(UNIX_EPOCH + since);
        }
        rest = rest.get(len.next_multiple_of(WORD)..).unwrap_or_default();
    }
    None
}

/// `N` bytes of `bytes` from `at`, if there are that many.
#[cfg(target_os = "linux")]
fn field<const N: usize>(bytes: &[u8], at: usize) -> Option<[u8; N]> {
    bytes.get(at..at.checked_add(N)?)?.try_into().ok()
}

#[cfg(not(target_os = "linux"))]
fn recv_stamped(_: &TcpStream, _: &mut ReadBuf<'_>) -> io::Result<(usize, Option<SystemTime>)> {
    Err(io::ErrorKind::Unsupported.into())
}

/// The widest straddle of the two realtime reads around the monotonic one that
/// [`clock_pair`] accepts at once: wider means something ran between the reads (an
/// interrupt, a VM exit; on the development machine 1 pair in ~75,000 straddled more
/// than 10 µs and 1 in 20 million more than 250 µs).
const PAIR_SLACK: Duration = Duration::from_micros(5);

/// Reads [`clock_pair`] takes at most before it keeps the tightest.
const PAIR_TRIES: usize = 3;

/// The monotonic and the realtime clock as at one instant, for moving a kernel stamp
/// from one to the other: the realtime clock read on both sides of the monotonic one and
/// its middle taken, read again while the two straddle more than [`PAIR_SLACK`]. Read
/// one after the other, the pair was off by whatever ran between the reads, and so was
/// the stamp: a soak saw a `response.created` stamped ~0.25 ms early, before the commit
/// that caused it was due, and the turn waited for a reply for 900 s.
pub(crate) fn clock_pair() -> (Instant, SystemTime) {
    tightest_pair(|| (SystemTime::now(), Instant::now(), SystemTime::now()))
}

/// [`clock_pair`] over the reads `read` makes (realtime, monotonic, realtime): the first
/// whose realtime reads straddle at most [`PAIR_SLACK`], else the tightest of
/// [`PAIR_TRIES`]; a read across which the realtime clock stepped back counts as the
/// widest.
fn tightest_pair(
    mut read: impl FnMut() -> (SystemTime, Instant, SystemTime),
) -> (Instant, SystemTime) {
    let mut best: Option<(Duration, Instant, SystemTime)> = None;
    for _ in 0..PAIR_TRIES {
        let (before, mono, after) = read();
        let (span, real) = match after.duration_since(before) {
            Ok(span) => (span, before + span / 2),
            Err(_) => (Duration::MAX, after),
        };
        if best.is_none_or(|(b, _, _)| span < b) {
            best = Some((span, mono, real));
        }
        if span <= PAIR_SLACK {
            break;
        }
    }
    let (_, mono, real) = best.expect("at least one read");
    (mono, real)
}

/// Where a kernel stamp `kernel` (realtime) lies on the monotonic clock, seen at the
/// instant `now` when the realtime clock read `real_now`; a stamp "in the future" (the
/// realtime clock stepped back) is taken as `now`.
pub fn on_monotonic(kernel: SystemTime, now: Instant, real_now: SystemTime) -> (Instant, Duration) {
    let age = real_now.duration_since(kernel).unwrap_or(Duration::ZERO);
    (now.checked_sub(age).unwrap_or(now), age)
}

impl AsyncRead for StampedTcp {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.kernel || buf.remaining() == 0 {
            return this.poll_plain(cx, buf);
        }
        loop {
            ready!(this.io.poll_read_ready(cx))?;
            match this.read_once(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Poll::Ready(Err(e)),
                Ok((0, _)) => return Poll::Ready(Ok(())),
                Ok((_, kernel)) => {
                    let (now, real_now) = clock_pair();
                    match kernel {
                        Some(k) => {
                            let (at, age) = on_monotonic(k, now, real_now);
                            note(at, Some(age));
                        }
                        None => note(now, None),
                    }
                    return Poll::Ready(Ok(()));
                }
            }
        }
    }
}

impl StampedTcp {
    /// One stamped read if the socket is marked readable (`WouldBlock` if it is not, or
    /// if the kernel had nothing). A short read (some bytes, fewer than `buf` had room
    /// for) drained the socket, so it also clears the readiness, as tokio's own
    /// `TcpStream::poll_read` does: the next poll sleeps until epoll reports new bytes
    /// instead of making a `recvmsg` that finds nothing. It does so by handing `try_io` a
    /// `WouldBlock` and keeping the read aside. That is race-free: `try_io` takes the
    /// readiness event (its tick) before the read and clears only that tick, so bytes
    /// that arrive after the kernel's copy raise a new edge-triggered event, which either
    /// has already moved the tick on (the clear does nothing) or is still queued in epoll
    /// (it marks the socket readable again and wakes the reader); a peer's close
    /// (`READ_CLOSED`) is never cleared, so the end of the stream is still read.
    fn read_once(&self, buf: &mut ReadBuf<'_>) -> io::Result<(usize, Option<SystemTime>)> {
        let room = buf.remaining();
        let mut short = None;
        let read = self.io.try_io(tokio::io::Interest::READABLE, || {
            let (n, kernel) = recv_stamped(&self.io, buf)?;
            if 0 < n && n < room {
                short = Some((n, kernel));
                return Err(io::ErrorKind::WouldBlock.into());
            }
            Ok((n, kernel))
        });
        match (read, short) {
            (_, Some(read)) => Ok(read),
            (read, None) => read,
        }
    }
}

impl AsyncWrite for StampedTcp {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

impl ActixStream for StampedTcp {
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<Ready>> {
        <TcpStream as ActixStream>::poll_read_ready(&self.io, cx)
    }

    fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<Ready>> {
        <TcpStream as ActixStream>::poll_write_ready(&self.io, cx)
    }
}

#[cfg(test)]
#[path = "stamped_tests.rs"]
mod tests;
