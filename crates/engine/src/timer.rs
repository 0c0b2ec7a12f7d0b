//! A sub-millisecond sleep for the open-model dispatcher. tokio's timer wheel has 1 ms
//! granularity, which would add up to 1 ms of the tool's own lag to every response time
//! measured from the intended start; a timerfd armed with the exact remaining time wakes the
//! worker's event loop within microseconds.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};
use tokio::io::unix::AsyncFd;

pub(crate) struct PreciseTimer {
    fd: AsyncFd<OwnedFd>,
}

impl PreciseTimer {
    pub(crate) fn new() -> io::Result<PreciseTimer> {
        // SAFETY: timerfd_create has no memory-safety preconditions; a negative return is
        // an error and is checked before the fd is wrapped.
        let raw = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh, valid descriptor that nothing else owns.
        let owned = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: `owned` is an open timerfd that the AsyncFd takes ownership of; nothing
        // else can close or replace it while the AsyncFd lives.
        let fd = unsafe { AsyncFd::register_with_interest(owned, tokio::io::Interest::READABLE) }
            .map_err(|e| io::Error::other(e.to_string()))?;
        Ok(PreciseTimer { fd })
    }

    fn arm(&self, after: Duration) -> io::Result<()> {
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
        // SAFETY: the fd is a valid timerfd owned by self; `spec` lives across the call and
        // a null old_value is allowed.
        let rc =
            unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Sleeps until `deadline`; returns at once when it has passed.
    pub(crate) async fn sleep_until(&self, deadline: Instant) -> io::Result<()> {
        loop {
            let now = Instant::now();
            if deadline <= now {
                return Ok(());
            }
            self.arm(deadline - now)?;
            let mut guard = self.fd.readable().await?;
            let mut buf = [0u8; 8];
            // Reading the expiration count clears the fd; WouldBlock means a stale readiness.
            let _ = guard.try_io(|fd| {
                // SAFETY: reading 8 bytes into an 8-byte stack buffer from a valid fd.
                let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), 8) };
                if n < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(())
                }
            });
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
}
