//! Advisory locks on files (`flock`) taken without waiting, as a run's journals, logs and bundle-id
//! locks are held and tested.

use std::fs::File;
use std::os::fd::AsRawFd;

/// Takes `file`'s lock of the kind `kind` (`LOCK_SH` or `LOCK_EX`) without waiting; false when
/// another open file holds one that excludes it (or the call failed: errno says which, read at
/// once by a caller that must tell).
pub(crate) fn lock_without_waiting(file: &File, kind: libc::c_int) -> bool {
    // SAFETY: flock(2) on a descriptor we own; no memory is shared with the kernel.
    unsafe { libc::flock(file.as_raw_fd(), kind | libc::LOCK_NB) == 0 }
}
