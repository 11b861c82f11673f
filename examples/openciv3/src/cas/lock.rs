//! Advisory `flock(2)` locks: gc's lock, staged files' locks, and the index's set-up lock.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// Blocks until this process holds an exclusive advisory lock on `file`.
pub fn lock_exclusive(file: &File) -> io::Result<()> {
    flock(file, libc::LOCK_EX)
}

/// Takes an exclusive advisory lock on `file` if nobody holds one; `Ok(false)` when somebody does.
pub fn try_lock_exclusive(file: &File) -> io::Result<bool> {
    match flock(file, libc::LOCK_EX | libc::LOCK_NB) {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::WouldBlock => Ok(false),
        Err(err) => Err(err),
    }
}

/// Releases this process's lock on `file` now, even where a child forked meanwhile still holds a
/// copy of the descriptor (closing ours alone would leave the lock held until that child execs).
pub fn unlock(file: &File) -> io::Result<()> {
    flock(file, libc::LOCK_UN)
}

fn flock(file: &File, operation: libc::c_int) -> io::Result<()> {
    loop {
        // SAFETY: flock only reads the descriptor, which `file` keeps open for the call.
        let result = unsafe { libc::flock(file.as_raw_fd(), operation) };
        if result == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}
