//! Waiting for the incoming stream to be readable, for a deadline, or for the connection's own close
//! (a wake pipe).

use std::io;
use std::os::fd::RawFd;
use std::time::Instant;

/// A pipe whose write end wakes a reader blocked in [`wait_readable`] (both ends non-blocking and
/// close-on-exec); `(-1, -1)` when none could be made.
pub(super) fn wake_pipe() -> (RawFd, RawFd) {
    let mut fds = [-1; 2];
    // SAFETY: pipe2 fills the two-element array.
    let r = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) };
    if r == 0 {
        (fds[0], fds[1])
    } else {
        (-1, -1)
    }
}

pub(super) enum Readiness {
    Readable,
    TimedOut,
    Woken,
    Failed(String),
}

/// Waits until `fd` is readable, `wake` fires, or `deadline` passes. Data already waiting wins over
/// the wake pipe, so what was written before a close is still read; a passed deadline still looks once.
pub(super) fn wait_readable(fd: RawFd, wake: RawFd, deadline: Option<Instant>) -> Readiness {
    loop {
        let timeout_ms = match deadline {
            None => -1,
            Some(d) => d
                .saturating_duration_since(Instant::now())
                .as_micros()
                .div_ceil(1000)
                .min(i32::MAX as u128) as i32,
        };
        let mut fds = [
            libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: wake,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: poll on a live two-element array.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout_ms) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Readiness::Failed(e.to_string());
        }
        if fds[0].revents != 0 {
            // Readable, or hung up / in error: the read says which.
            return Readiness::Readable;
        }
        if fds[1].revents != 0 {
            return Readiness::Woken;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Readiness::TimedOut;
        }
    }
}
