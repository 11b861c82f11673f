//! Putting a child's fds at the numbers it expects, between its fork (or clone) and its exec: every
//! source first moves above the numbers handed out, since one may already sit on another's number,
//! then each goes to its number. System calls only: nothing here allocates or locks.

use std::os::fd::RawFd;

/// The most fds a child is given at chosen numbers (stdin, stdout, stderr, the protocol's 3 and 4).
pub(crate) const MAX_FDS: usize = 5;
/// Where the sources move before they go to their numbers: above any number handed out.
const MOVE_ABOVE: RawFd = 10;

/// Gives the child each `(ours, theirs)` of `fds` as its fd `theirs`, left open across exec. `false`
/// when a call failed (its errno is left as it set it) or `fds` holds more than [`MAX_FDS`].
///
/// # Safety
///
/// To be called in the child only, before its exec, with every `ours` open.
pub(crate) unsafe fn place(fds: &[(RawFd, RawFd)]) -> bool {
    if fds.len() > MAX_FDS {
        return false;
    }
    let mut moved = [-1; MAX_FDS];
    for (high, (ours, _)) in moved.iter_mut().zip(fds) {
        // SAFETY: fcntl is async-signal-safe; the caller guarantees `ours` is open.
        *high = unsafe { libc::fcntl(*ours, libc::F_DUPFD_CLOEXEC, MOVE_ABOVE) };
        if *high < 0 {
            return false;
        }
    }
    for (high, (_, theirs)) in moved.iter().zip(fds) {
        // SAFETY: dup2 is async-signal-safe; `high` was opened just above. The copy dup2 makes
        // does not carry the close-on-exec flag.
        if unsafe { libc::dup2(*high, *theirs) } < 0 {
            return false;
        }
    }
    true
}
