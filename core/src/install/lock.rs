//! One change at a time: `<state root>/locks/plugin-<first 16 hex of sha256(plugins dir)>.lock`, held with an
//! exclusive `flock` for as long as the [`ChangeLock`] lives. A change finding it held fails at once, or
//! (`--wait`) asks again every 100 ms until it is free, and says it waits once the wait has lasted as
//! long as a run's does before it says so ([`SAY_WAITING_AFTER`]); a signal meanwhile ends the process
//! as it would anywhere before a change starts, with nothing changed.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::error::InstallError;
use crate::run::recorder::SAY_WAITING_AFTER;

/// The held lock; dropping it (or the process ending) releases it.
#[derive(Debug)]
pub struct ChangeLock {
    _file: File,
    pub path: PathBuf,
}

/// The lock file in `locks_dir` for changes to `plugins_dir`.
pub fn lock_path(plugins_dir: &Path, locks_dir: &Path) -> PathBuf {
    let digest = Sha256::digest(plugins_dir.as_os_str().as_encoded_bytes());
    let hex = hex::encode(digest);
    locks_dir.join(format!("plugin-{}.lock", &hex[..16]))
}

/// What a change waiting for the lock is told, once the wait has lasted [`SAY_WAITING_AFTER`]: the
/// lock file, and the pid of the process that holds it when that process wrote it there (read then,
/// so a change that had just taken the lock has written it).
pub type Waiting<'a> = &'a dyn Fn(&Path, Option<u32>);

/// Takes the lock (and writes this process's pid in its file, for a change that waits to name), or
/// says another change holds it; with `waiting`, waits for it instead, and tells `waiting` once when
/// the wait has lasted [`SAY_WAITING_AFTER`]: changes started together take the lock from each other
/// for moments, which are not worth a line each.
pub fn acquire(
    plugins_dir: &Path,
    locks_dir: &Path,
    waiting: Option<Waiting<'_>>,
) -> Result<ChangeLock, InstallError> {
    let path = lock_path(plugins_dir, locks_dir);
    let fail = |source: std::io::Error| InstallError::Lock {
        path: path.clone(),
        source,
    };
    if let Some(dir) = path.parent() {
        crate::stores::local::private_dir::create_private_dir_all(dir).map_err(fail)?;
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .map_err(fail)?;
    let waiting_since = std::time::Instant::now();
    let mut told = false;
    loop {
        // SAFETY: flock on a descriptor this function owns; no memory is shared.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc == 0 {
            // Only said to a change that waits: a file that cannot take it loses nothing.
            let _ = file.set_len(0);
            let _ = (&file).write_all(format!("{}\n", std::process::id()).as_bytes());
            return Ok(ChangeLock { _file: file, path });
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(fail(err));
        }
        let Some(waiting) = waiting else {
            return Err(InstallError::Busy);
        };
        if !told && waiting_since.elapsed() >= SAY_WAITING_AFTER {
            let holder = std::fs::read_to_string(&path)
                .ok()
                .and_then(|text| text.trim().parse::<u32>().ok());
            waiting(&path, holder);
            told = true;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// What a change that waits for the lock says: the lock file and, when known, the pid holding it.
pub fn waiting_for(path: &Path, holder: Option<u32>) -> String {
    let who = match holder {
        Some(pid) => format!("pid {pid} holds"),
        None => "it holds".to_string(),
    };
    format!(
        "waiting for another `agent-env plugin add` or `remove` to finish changing this environment ({who} {})",
        path.display()
    )
}
