//! The shard timer's IO edge (Linux): one non-blocking, one-shot `timerfd` on the
//! monotonic clock (the clock tokio's `Instant` reads), registered with the shard's
//! runtime, and the local task that reads it, fires what is due and sets the next alarm.
//! **Owns** the `timerfd` and the alarm it is set to.

use std::cell::{Cell, RefCell};
use std::os::fd::OwnedFd;
use std::rc::Rc;
use std::time::Duration;

use rustix::io::Errno;
use rustix::time::{
    Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec, timerfd_create,
    timerfd_settime,
};
use tokio::io::unix::AsyncFd;
use tokio::runtime::{Handle, Id, RuntimeFlavor};
use tokio::time::Instant;

use super::{Deadlines, GRID, Slot};

/// A shard thread's timer (see the parent module).
pub struct Timer {
    deadlines: RefCell<Deadlines>,
    /// The alarm the `timerfd` is set to; `None` while it is not set.
    armed: Cell<Option<Instant>>,
    fd: AsyncFd<OwnedFd>,
}

thread_local! {
    /// This thread's timer and the runtime it is registered with.
    static HERE: RefCell<Option<(Id, Rc<Timer>)>> = const { RefCell::new(None) };
}

impl Timer {
    /// This thread's timer: made (with its reading task) on first use in a task of a
    /// current-thread runtime's `LocalSet`; `None` on another flavour of runtime, outside
    /// one, or when the system refuses a `timerfd`.
    pub fn here() -> Option<Rc<Timer>> {
        let handle = Handle::try_current().ok()?;
        if handle.runtime_flavor() != RuntimeFlavor::CurrentThread {
            return None;
        }
        let id = handle.id();
        HERE.with(|here| {
            let mut here = here.borrow_mut();
            if let Some((at, timer)) = here.as_ref()
                && *at == id
            {
                return Some(timer.clone());
            }
            let timer = Rc::new(Timer::new().ok()?);
            tokio::task::spawn_local(drive(timer.clone()));
            *here = Some((id, timer.clone()));
            Some(timer)
        })
    }

    fn new() -> std::io::Result<Timer> {
        let flags = TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC;
        let fd = timerfd_create(TimerfdClockId::Monotonic, flags)?;
        // `AsyncFd::new` is deprecated as unsound for a `T` whose descriptor can change or
        // close while registered; an `OwnedFd` it owns can do neither (it is closed only
        // after the registration is dropped), and `register` would be this crate's second
        // `unsafe` block for the same guarantee.
        #[allow(deprecated)]
        let fd = AsyncFd::new(fd)?;
        Ok(Timer {
            deadlines: RefCell::new(Deadlines::new(Instant::now(), GRID)),
            armed: Cell::new(None),
            fd,
        })
    }

    /// Sets `slot` to go off at `at`.
    pub(super) fn set(&self, slot: &Rc<Slot>, at: Instant) {
        let alarm = self.deadlines.borrow_mut().set(slot, at);
        self.arm(alarm);
    }

    /// Sets the `timerfd` to `alarm` unless it goes off at or before it already.
    fn arm(&self, alarm: Instant) {
        if self.armed.get().is_some_and(|a| a <= alarm) {
            return;
        }
        // A zero `it_value` would disarm the timer: an alarm already passed is 1 ns away.
        let wait = alarm
            .saturating_duration_since(Instant::now())
            .max(Duration::from_nanos(1));
        let spec = Itimerspec {
            it_interval: Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: Timespec::try_from(wait).expect("an alarm within i64 seconds"),
        };
        timerfd_settime(self.fd.get_ref(), TimerfdTimerFlags::empty(), &spec)
            .expect("timerfd_settime on the timer's own timerfd with a valid time");
        self.armed.set(Some(alarm));
    }

    /// The alarm went off: fire what is due and set the next alarm.
    fn went_off(&self) {
        self.armed.set(None);
        let next = {
            let mut deadlines = self.deadlines.borrow_mut();
            deadlines.fire(Instant::now());
            deadlines.next_alarm()
        };
        if let Some(alarm) = next {
            self.arm(alarm);
        }
    }
}

/// The timer's reading task: each time the `timerfd` goes off, fires what is due. Ends
/// when the runtime shuts down (the registration fails).
async fn drive(timer: Rc<Timer>) {
    let mut expirations = [0u8; 8];
    loop {
        let Ok(mut ready) = timer.fd.readable().await else {
            return;
        };
        match rustix::io::read(timer.fd.get_ref(), &mut expirations) {
            // One-shot: nothing more can be read until the next alarm is set below.
            Ok(_) => ready.clear_ready(),
            Err(Errno::AGAIN) => {
                ready.clear_ready();
                continue;
            }
            Err(Errno::INTR) => continue,
            Err(e) => panic!("reading the shard timer's timerfd failed: {e}"),
        }
        timer.went_off();
    }
}
