//! Staging files: every write goes to `.agentenv-tmp/staged-*` first (or, for a write-once put where the
//! filesystem allows it, to an anonymous `O_TMPFILE` there), then is linked or renamed into place, so a
//! reader sees a whole object or none. A staged file is `flock`ed by its writer for its whole
//! life; the first write of a process sweeps staged files older than 60 s that no live writer holds.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::locks::flock;
use agent_env_store::error::{StoreError, StoreResult};

const STAGED_PREFIX: &str = "staged-";
const ABANDONED_AFTER: Duration = Duration::from_secs(60);

/// A file being written; removed on drop unless committed. An anonymous one (`O_TMPFILE`) has no name
/// until it is linked into place, so it can never be left behind.
pub struct Staged {
    /// Its name, or for an anonymous file the folder it lives in.
    pub path: PathBuf,
    pub file: File,
    anonymous: bool,
    committed: bool,
}

impl Staged {
    /// An anonymous staging file in `tmp_dir`, or `None` where the filesystem has no `O_TMPFILE`.
    pub fn create_anonymous(tmp_dir: &Path) -> Option<Staged> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_TMPFILE)
            .mode(0o644)
            .open(tmp_dir)
            .ok()?;
        Some(Staged {
            path: tmp_dir.to_path_buf(),
            file,
            anonymous: true,
            committed: false,
        })
    }

    /// Whether anonymous staging files can be made in `tmp_dir` and linked into place there.
    pub fn anonymous_works(tmp_dir: &Path) -> bool {
        let Some(staged) = Self::create_anonymous(tmp_dir) else {
            return false;
        };
        let probe = tmp_dir.join(format!("{STAGED_PREFIX}probe-{}", std::process::id()));
        let _ = fs::remove_file(&probe);
        let linked = staged.link_to(&probe).is_ok();
        let _ = fs::remove_file(&probe);
        linked
    }

    /// Gives the staged bytes a second name at `target`, failing with `AlreadyExists` if it is taken.
    pub fn link_to(&self, target: &Path) -> std::io::Result<()> {
        if !self.anonymous {
            return fs::hard_link(&self.path, target);
        }
        use std::os::unix::ffi::OsStrExt;
        let source = std::ffi::CString::new(format!("/proc/self/fd/{}", self.file.as_raw_fd()))
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        let dest = std::ffi::CString::new(target.as_os_str().as_bytes())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        // SAFETY: both paths are NUL-terminated strings that outlive the call.
        let rc = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                source.as_ptr(),
                libc::AT_FDCWD,
                dest.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }

    pub fn is_anonymous(&self) -> bool {
        self.anonymous
    }

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
                        anonymous: false,
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
        if !self.committed && !self.anonymous {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anonymous_staging_is_probed_and_links_when_it_works() {
        let dir = tempfile::tempdir().unwrap();
        let works = Staged::anonymous_works(dir.path());
        println!("anonymous staging works here: {works}");
        if works {
            let mut staged = Staged::create_anonymous(dir.path()).unwrap();
            staged.write_all(b"abc").unwrap();
            let target = dir.path().join("linked");
            staged.link_to(&target).unwrap();
            assert_eq!(fs::read(&target).unwrap(), b"abc");
            assert_eq!(
                staged.link_to(&target).unwrap_err().kind(),
                std::io::ErrorKind::AlreadyExists
            );
        }
        drop(dir);
    }
}
