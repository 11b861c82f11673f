//! Striped advisory locks: 256 files `.agentenv-tmp/lock-XX`; a key's stripe is the first 8 hex digits of
//! sha256(path) mod 256. Writers take a stripe exclusively, metadata reads take it shared. Each lock opens
//! its own file description, so threads of one process exclude each other as processes do.

use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::Path;

use sha2::{Digest, Sha256};

use agent_env_store::error::{StoreError, StoreResult};

use super::beneath::Dir;

/// A held stripe lock; released on drop (closing the file releases the `flock`).
pub struct StripeLock {
    _file: File,
}

/// The stripe file name of a path: `lock-XX`.
pub fn stripe_name(path: &Path) -> String {
    let digest = Sha256::digest(path.as_os_str().as_encoded_bytes());
    let first = u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]]);
    format!("lock-{:02x}", first % 256)
}

/// Takes the stripe of `path` in the staging folder `tmp` (a symlinked stripe file is refused).
pub fn lock_stripe(tmp: &Dir, path: &Path, exclusive: bool) -> StoreResult<StripeLock> {
    let name = stripe_name(path);
    let lock_path = tmp.path().join(&name);
    let file = tmp.open_or_create(&name)?;
    flock(
        &file,
        if exclusive {
            libc::LOCK_EX
        } else {
            libc::LOCK_SH
        },
    )
    .map_err(|e| StoreError::io(format!("locking {}", lock_path.display()), &e))?;
    Ok(StripeLock { _file: file })
}

/// `flock(2)`, retried on EINTR.
pub fn flock(file: &File, op: libc::c_int) -> std::io::Result<()> {
    loop {
        // SAFETY: the descriptor is owned by `file`, open for the duration of the call.
        let rc = unsafe { libc::flock(file.as_raw_fd(), op) };
        if rc == 0 {
            return Ok(());
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}
