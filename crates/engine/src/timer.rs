//! A sub-millisecond sleep for the open-model dispatcher. tokio's timer wheel has 1 ms
//! granularity, which would add up to 1 ms of the tool's own lag to every response time
//! measured from the intended start; a timerfd armed with the exact remaining time wakes the
//! worker's event loop within microseconds.
//!
//! The timer can also put the whole thread to sleep ([`PreciseTimer::block_until`]): a
//! second timerfd, blocking and outside the event loop, so that nothing but the deadline wakes
//! the thread (see `open.rs`: reading responses late, by their kernel arrival times).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};
use tokio::io::unix::AsyncFd;

pub(crate) struct PreciseTimer {
    fd: AsyncFd<OwnedFd>,
    /// A blocking timerfd that only [`PreciseTimer::block_until`] reads.
    blocking: OwnedFd,
}

/// A new timerfd on the monotonic clock (`Instant`'s), with `flags`.
fn timerfd(flags: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: timerfd_create has no memory-safety preconditions; a negative return is
    // an error and is checked before the fd is wrapped.
    let raw = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, flags) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a fresh, valid descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// Arms timerfd `fd` to expire once, `after` from now.
fn arm(fd: &OwnedFd, after: Duration) -> io::Result<()> {
    // A zero it_value would disarm the timer, so wait at least 1 ns.
    let after = after.max(Duration::from_nanos(1));
    let spec = libc::itimerspec {
        it_interval: libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: libc::timespec {
            tv_sec: after.as_secs() as libc::time_t,
            tv_nsec: after.subsec_nanos() as libc::c_long,
        },
    };
    // SAFETY: the fd is a valid timerfd; `spec` lives across the call and a null old_value is
    // allowed.
    let rc = unsafe { libc::timerfd_settime(fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Reads timerfd `fd`'s expiration count (blocking until it expires, for a blocking fd).
fn read_expirations(fd: std::os::fd::RawFd) -> io::Result<()> {
    let mut buf = [0u8; 8];
    // SAFETY: reading 8 bytes into an 8-byte stack buffer from a valid fd.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), 8) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl PreciseTimer {
    pub(crate) fn new() -> io::Result<PreciseTimer> {
        let owned = timerfd(libc::TFD_NONBLOCK | libc::TFD_CLOEXEC)?;
        // SAFETY: `owned` is an open timerfd that the AsyncFd takes ownership of; nothing
        // else can close or replace it while the AsyncFd lives.
        let fd = unsafe { AsyncFd::register_with_interest(owned, tokio::io::Interest::READABLE) }
            .map_err(|e| io::Error::other(e.to_string()))?;
        let blocking = timerfd(libc::TFD_CLOEXEC)?;
        Ok(PreciseTimer { fd, blocking })
    }

    /// Puts the thread itself to sleep until `deadline`: the event loop does not run, so no
    /// socket's readiness wakes it. Returns at once when the deadline has passed.
    pub(crate) fn block_until(&self, deadline: Instant) -> io::Result<()> {
        loop {
            let now = Instant::now();
            if deadline <= now {
                return Ok(());
            }
            arm(&self.blocking, deadline - now)?;
            match read_expirations(self.blocking.as_raw_fd()) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => return other,
            }
        }
    }

    /// Sleeps until `deadline`; returns at once when it has passed.
    pub(crate) async fn sleep_until(&self, deadline: Instant) -> io::Result<()> {
        loop {
            let now = Instant::now();
            if deadline <= now {
                return Ok(());
            }
            arm(self.fd.get_ref(), deadline - now)?;
            let mut guard = self.fd.readable().await?;
            // Reading the expiration count clears the fd; WouldBlock means a stale readiness.
            let _ = guard.try_io(|fd| read_expirations(fd.as_raw_fd()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn wakes_close_to_the_deadline() {
        let t = PreciseTimer::new().unwrap();
        let mut worst = Duration::ZERO;
        for _ in 0..50 {
            let target = Instant::now() + Duration::from_micros(300);
            t.sleep_until(target).await.unwrap();
            let late = Instant::now().saturating_duration_since(target);
            assert!(Instant::now() >= target);
            worst = worst.max(late);
        }
        // Generous bound for a loaded CI machine; tokio's wheel alone would be ~1 ms.
        assert!(worst < Duration::from_millis(20), "worst lag {worst:?}");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn blocking_the_thread_wakes_close_to_the_deadline_and_never_before() {
        let t = PreciseTimer::new().unwrap();
        let mut worst = Duration::ZERO;
        for _ in 0..50 {
            let target = Instant::now() + Duration::from_micros(300);
            t.block_until(target).unwrap();
            assert!(Instant::now() >= target);
            worst = worst.max(Instant::now().saturating_duration_since(target));
        }
        assert!(worst < Duration::from_millis(20), "worst lag {worst:?}");
        // A deadline already passed returns at once.
        t.block_until(Instant::now() - Duration::from_millis(1))
            .unwrap();
    }
}
