//! The kernel's arrival times of a plain connection's bytes (`SO_TIMESTAMPNS`): each read
//! comes with the time the last segment it returns reached the socket, so a response read
//! late (the open model reads them at its next pacing slot) still ends when it arrived.
//!
//! The kernel stamps with the wall clock; a stamp becomes an `Instant` by its age against
//! the wall clock read at once, so only a step of the wall clock between the two (not its
//! setting) can move it, and the engine keeps every end between its send and its read.
//!
//! The kernel turns stamping on a moment after the first socket of the machine asks for it
//! (a static key flipped from a work queue): the first reads of a run may come unstamped,
//! and those responses are timed by the clock, read as they come (see the engine's
//! `Shared::stamped`).

use std::io;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// Asks the kernel to stamp what arrives on socket `fd`. A failure leaves reads unstamped,
/// timed by the clock when they return, as before.
pub(crate) fn enable(fd: RawFd) {
    let on: libc::c_int = 1;
    // SAFETY: `fd` is an open socket; the option value is a c_int that lives across the call.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&raw const on).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// One `recvmsg` on socket `fd` into `buf`: the bytes read and, when the kernel gave it,
/// when the last of them arrived.
pub(crate) fn recv(fd: RawFd, buf: &mut [u8]) -> io::Result<(usize, Option<Instant>)> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // Room for one SCM_TIMESTAMPNS message (a 16-byte header and a 16-byte timespec), aligned
    // as cmsghdr is.
    let mut control = [0u64; 8];
    // SAFETY: msghdr is plain data, valid when zeroed.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: `msg` points at `iov` (over `buf`) and `control`, which outlive the call.
    let n = unsafe { libc::recvmsg(fd, &mut msg, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((n as usize, stamp_in(&msg)))
}

/// The arrival time in `msg`'s control messages, if there is one.
fn stamp_in(msg: &libc::msghdr) -> Option<Instant> {
    // SAFETY: `msg` was filled by recvmsg, so its control buffer holds well-formed messages
    // within msg_controllen, which the CMSG macros walk.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            let h = &*c;
            // SO_TIMESTAMPNS_OLD (35) and _NEW (64) both carry two 64-bit fields on the
            // 64-bit targets perfbase builds for.
            let is_stamp = h.cmsg_level == libc::SOL_SOCKET && matches!(h.cmsg_type, 35 | 64);
            if is_stamp && h.cmsg_len as usize >= libc::CMSG_LEN(16) as usize {
                let data = libc::CMSG_DATA(c).cast::<[i64; 2]>();
                let [sec, nsec] = std::ptr::read_unaligned(data);
                return instant_of(sec, nsec);
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    None
}

/// The `Instant` of wall-clock time `sec`.`nsec`: now, less its age.
fn instant_of(sec: i64, nsec: i64) -> Option<Instant> {
    let mut wall = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into `wall`.
    if unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut wall) } != 0 {
        return None;
    }
    let now = Instant::now();
    let age = (i128::from(wall.tv_sec) - i128::from(sec)) * 1_000_000_000
        + (i128::from(wall.tv_nsec) - i128::from(nsec));
    // A stamp from the future (the wall clock stepped back): the read's own time.
    let age = u64::try_from(age.max(0)).ok()?;
    now.checked_sub(Duration::from_nanos(age))
}

/// The arrival times of the reads since the last request: of the first and of the last.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Arrivals {
    first: Option<Instant>,
    last: Option<Instant>,
    /// A read came without a stamp: the response's times are the clock's, not these.
    missing: bool,
}

impl Arrivals {
    pub(crate) fn note(&mut self, at: Option<Instant>) {
        match at {
            Some(t) => {
                self.first.get_or_insert(t);
                self.last = Some(t);
            }
            None => self.missing = true,
        }
    }

    /// When the first and the last bytes since the last clear arrived, if every read said.
    pub(crate) fn span(&self) -> Option<(Instant, Instant)> {
        match (self.first, self.last, self.missing) {
            (Some(first), Some(last), false) => Some((first, last)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    /// Bytes read long after they arrived are stamped with their arrival, not the read.
    #[test]
    fn a_late_read_tells_when_the_bytes_arrived() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        enable(client.as_raw_fd());
        // The kernel turns stamping on a moment after the first socket asks for it (a
        // static key flipped from a work queue): until then reads come unstamped, which the
        // engine takes as its cue to read responses as they come.
        let mut buf = [0u8; 16];
        let warm = (0..200).any(|_| {
            server.write_all(b"w").unwrap();
            let stamped = recv(client.as_raw_fd(), &mut buf).unwrap().1.is_some();
            if !stamped {
                std::thread::sleep(Duration::from_millis(5));
            }
            stamped
        });
        assert!(warm, "the kernel never stamped loopback TCP");
        let before = Instant::now();
        server.write_all(b"hello").unwrap();
        let written = Instant::now();
        std::thread::sleep(Duration::from_millis(50));
        let (n, at) = recv(client.as_raw_fd(), &mut buf).unwrap();
        assert_eq!(&buf[..n], b"hello");
        let at = at.expect("the kernel stamps loopback TCP");
        // Generous bounds: the stamp is taken when the segment reaches the socket, which is
        // during the write on loopback; the read came 50 ms later.
        assert!(at + Duration::from_millis(5) >= before, "{:?}", before - at);
        assert!(
            at <= written + Duration::from_millis(5),
            "{:?}",
            at - written
        );
        let mut a = Arrivals::default();
        a.note(Some(at));
        a.note(Some(at + Duration::from_micros(3)));
        assert_eq!(a.span(), Some((at, at + Duration::from_micros(3))));
        a.note(None);
        assert_eq!(a.span(), None);
    }
}
