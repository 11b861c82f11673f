//! Staging files: every write goes to `.agentenv-tmp/staged-*` first, then is linked or renamed into
//! place, so a reader sees a whole object or none. A staged file is `flock`ed by its writer for its whole
//! life; the first write of a process sweeps staged files older than 60 s that no live writer holds.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::locks::flock;
use crate::stores::error::{StoreError, StoreResult};

const STAGED_PREFIX: &str = "staged-";
const ABANDONED_AFTER: Duration = Duration::from_secs(60);

/// A file being written; removed on drop unless committed.
pub struct Staged {
    pub path: PathBuf,
    pub file: File,
    committed: bool,
}

impl Staged {
    /// Creates a fresh staging file in `tmp_dir`, locked by this writer.
    pub fn create(tmp_dir: &Path) -> StoreResult<Staged> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        for _ in 0..16 {
            let mut random = [0u8; 8];
            getrandom::getrandom(&mut random).map_err(|e| {
                StoreError::Internal(format!("no randomness for a staging name: {e}"))
            })?;
            let name = format!(
                "{STAGED_PREFIX}{}-{}-{}",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::Relaxed),
                hex::encode(random)
            );
            let path = tmp_dir.join(name);
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => {
                    flock(&file, libc::LOCK_EX)
                        .map_err(|e| StoreError::io(format!("locking {}", path.display()), &e))?;
                    return Ok(Staged {
                        path,
                        file,
                        committed: false,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(StoreError::io(
                        format!("creating a staging file in {}", tmp_dir.display()),
                        &e,
                    ))
                }
            }
        }
        Err(StoreError::Internal(format!(
            "could not pick a fresh staging file name in {}",
            tmp_dir.display()
        )))
    }

    /// Writes all of `data`.
    pub fn write_all(&mut self, data: &[u8]) -> StoreResult<()> {
        self.file
            .write_all(data)
            .map_err(|e| StoreError::io(format!("writing {}", self.path.display()), &e))
    }

    /// Copies a whole local file in, streaming (`copy_file_range` where the kernel has it).
    pub fn copy_from(&mut self, source: &Path) -> StoreResult<u64> {
        let mut input = File::open(source)
            .map_err(|e| StoreError::io(format!("opening {}", source.display()), &e))?;
        std::io::copy(&mut input, &mut self.file)
            .map_err(|e| StoreError::io(format!("copying {}", source.display()), &e))
    }

    /// Stamps a modification time no other write of this process has used, and returns it in ns.
    pub fn stamp_unique_mtime(&self) -> StoreResult<i64> {
        let ns = unique_now_ns();
        let spec = libc::timespec {
            tv_sec: ns.div_euclid(1_000_000_000) as libc::time_t,
            tv_nsec: ns.rem_euclid(1_000_000_000) as libc::c_long,
        };
        let times = [spec, spec];
        // SAFETY: `times` is two valid timespecs and the descriptor is owned by `self.file`.
        let rc = unsafe { libc::futimens(self.file.as_raw_fd(), times.as_ptr()) };
        if rc != 0 {
            let err = std::io::Error::last_os_error();
            return Err(StoreError::io(
                format!("stamping {}", self.path.display()),
                &err,
            ));
        }
        Ok(ns)
    }

    /// Marks the file as moved into place, so drop leaves it.
    pub fn committed(&mut self) {
        self.committed = true;
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Nanoseconds since the epoch, strictly increasing within this process.
fn unique_now_ns() -> i64 {
    static LAST: AtomicI64 = AtomicI64::new(0);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0);
    let mut last = LAST.load(Ordering::Relaxed);
    loop {
        let next = now.max(last + 1);
        match LAST.compare_exchange(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(seen) => last = seen,
        }
    }
}

/// Removes staged files older than 60 s that no live writer holds. Errors are ignored: a sweep is tidying.
pub fn sweep_abandoned(tmp_dir: &Path) {
    let Ok(entries) = fs::read_dir(tmp_dir) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        if !entry
            .file_name()
            .to_string_lossy()
            .starts_with(STAGED_PREFIX)
        {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age > ABANDONED_AFTER);
        if !old {
            continue;
        }
        if let Ok(file) = OpenOptions::new().read(true).open(entry.path()) {
            if flock(&file, libc::LOCK_EX | libc::LOCK_NB).is_ok() {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}
