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

use std::cell::{Cell, RefCell};
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
    /// The read buffer `recvmsg` fills and its control buffer, once per shard thread.
    static SCRATCH: RefCell<(Vec<u8>, Vec<u8>)> = RefCell::new((vec![0; SCRATCH_BYTES], control()));
}

/// The most one stamped read takes (what awc's codec asks for is usually 8–16 KiB).
const SCRATCH_BYTES: usize = 64 * 1024;

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

#[cfg(target_os = "linux")]
fn control() -> Vec<u8> {
    nix::cmsg_space!(nix::sys::time::TimeSpec)
}

#[cfg(not(target_os = "linux"))]
fn control() -> Vec<u8> {
    Vec::new()
}

/// One `recvmsg` of at most `room` bytes into `out`: the bytes read (0 at the end of the
/// stream) and the kernel's receive time of the last packet, if it gave one.
#[cfg(target_os = "linux")]
fn recv_stamped(
    io: &TcpStream,
    room: usize,
    out: &mut ReadBuf<'_>,
) -> io::Result<(usize, Option<SystemTime>)> {
    use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
    use std::os::fd::AsRawFd as _;
    SCRATCH.with_borrow_mut(|(data, cmsg)| {
        let want = room.min(data.len());
        let mut iov = [io::IoSliceMut::new(&mut data[..want])];
        let msg = recvmsg::<()>(io.as_raw_fd(), &mut iov, Some(cmsg), MsgFlags::empty())?;
        let n = msg.bytes;
        let at = msg
            .cmsgs()
            .ok()
            .into_iter()
            .flatten()
            .find_map(|c| match c {
                ControlMessageOwned::ScmTimestampns(ts) => {
                    let since = Duration::new(
                        u64::try_from(ts.tv_sec()).ok()?,
                        u32::try_from(ts.tv_nsec()).ok()?,
                    );
                    Some(UNIX_EPOCH + since)
                }
                _ => None,
            });
        out.put_slice(&data[..n]);
        Ok((n, at))
    })
}

#[cfg(not(target_os = "linux"))]
fn recv_stamped(
    _: &TcpStream,
    _: usize,
    _: &mut ReadBuf<'_>,
) -> io::Result<(usize, Option<SystemTime>)> {
    Err(io::ErrorKind::Unsupported.into())
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
            let room = buf.remaining();
            match this.io.try_io(tokio::io::Interest::READABLE, || {
                recv_stamped(&this.io, room, buf)
            }) {
                Ok((n, kernel)) => {
                    if n > 0 {
                        let (now, real_now) = (Instant::now(), SystemTime::now());
                        match kernel {
                            Some(k) => {
                                let (at, age) = on_monotonic(k, now, real_now);
                                note(at, Some(age));
                            }
                            None => note(now, None),
                        }
                    }
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Poll::Ready(Err(e)),
            }
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
