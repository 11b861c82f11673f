//! Staging files: every write goes to `.agentenv-tmp/staged-*` first (or, for a write-once put where the
//! filesystem allows it, to an anonymous `O_TMPFILE` there), then is linked or renamed into place, so a
//! reader sees a whole object or none. A staged file is `flock`ed by its writer for its whole
//! life; the first write of a process sweeps staged files older than 60 s that no live writer holds.

use std::fs::File;
use std::io::Write;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::beneath::Dir;
use super::locks::flock;
use agent_env_store::error::{StoreError, StoreResult};

const STAGED_PREFIX: &str = "staged-";
const ABANDONED_AFTER: Duration = Duration::from_secs(60);

/// A file being written; removed on drop unless committed. An anonymous one (`O_TMPFILE`) has no name
/// until it is linked into place, so it can never be left behind. It is reached through the descriptor
/// of its folder (see [`super::beneath`]), never by path.
pub struct Staged {
    /// The folder it lives in.
    dir: Dir,
    /// Its name there; `None` for an anonymous file.
    name: Option<String>,
    /// Its path, or for an anonymous file its folder's, for messages.
    pub path: PathBuf,
    pub file: File,
    committed: bool,
}

impl Staged {
    /// An anonymous staging file in `tmp`, or `None` where the filesystem has no `O_TMPFILE`.
    pub fn create_anonymous(tmp: &Dir) -> Option<Staged> {
        let file = tmp.create_anonymous()?;
        Some(Staged {
            dir: tmp.try_clone().ok()?,
            name: None,
            path: tmp.path().to_path_buf(),
            file,
            committed: false,
        })
    }

    /// Whether anonymous staging files can be made in `tmp` and linked into place there.
    pub fn anonymous_works(tmp: &Dir) -> bool {
        let Some(staged) = Self::create_anonymous(tmp) else {
            return false;
        };
        let probe = format!("{STAGED_PREFIX}probe-{}", std::process::id());
        let _ = tmp.remove_file(&probe);
        let linked = staged.link_to(tmp, &probe).is_ok();
        let _ = tmp.remove_file(&probe);
        linked
    }

    /// Gives the staged bytes a second name, `name` in `to`, failing with `AlreadyExists` if it is taken.
    pub fn link_to(&self, to: &Dir, name: &str) -> std::io::Result<()> {
        match &self.name {
            Some(own) => self.dir.link(own, to, name),
            None => to.link_anonymous(&self.file, name),
        }
    }

    /// Moves the staged file to `name` in `to` (replacing what is there) and marks it committed.
    pub fn rename_to(&mut self, to: &Dir, name: &str) -> std::io::Result<()> {
        let Some(own) = &self.name else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "an anonymous staging file has no name to rename",
            ));
        };
        self.dir.rename(own, to, name)?;
        self.committed = true;
        Ok(())
    }

    pub fn is_anonymous(&self) -> bool {
        self.name.is_none()
    }

    /// Creates a fresh staging file in `tmp`, locked by this writer.
    pub fn create(tmp: &Dir) -> StoreResult<Staged> {
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
            let path = tmp.path().join(&name);
            match tmp.create_new(&name) {
                Ok(file) => {
                    let staged = Staged {
                        dir: tmp.try_clone()?,
                        name: Some(name),
                        path,
                        file,
                        committed: false,
                    };
                    flock(&staged.file, libc::LOCK_EX).map_err(|e| {
                        StoreError::io(format!("locking {}", staged.path.display()), &e)
                    })?;
                    return Ok(staged);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(StoreError::io(
                        format!("creating a staging file in {}", tmp.path().display()),
                        &e,
                    ))
                }
            }
        }
        Err(StoreError::Internal(format!(
            "could not pick a fresh staging file name in {}",
            tmp.path().display()
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
        std::io::copy(&mut input, &mut self.file).map_err(|e| {
            // The kernel's copy does not say which side failed; these only a write can meet.
            let writing = matches!(
                e.raw_os_error(),
                Some(libc::ENOSPC | libc::EDQUOT | libc::EFBIG | libc::EROFS)
            );
            let context = match writing {
                true => format!(
                    "copying {} into the object store, whose disk (under {}) could not take it",
                    source.display(),
                    store_root(self.dir.path()).display()
                ),
                false => format!("copying {}", source.display()),
            };
            StoreError::io(context, &e)
        })
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
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let (false, Some(name)) = (self.committed, &self.name) {
            let _ = self.dir.remove_file(name);
        }
    }
}

/// The store's folder, from its staging folder's path (`<root>/.agentenv-tmp`).
fn store_root(tmp: &Path) -> &Path {
    tmp.parent().unwrap_or(tmp)
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
pub fn sweep_abandoned(tmp: &Dir) {
    let Ok(entries) = tmp.entries() else {
        return;
    };
    let now = SystemTime::now();
    for (name, _) in entries {
        if !name.starts_with(STAGED_PREFIX) {
            continue;
        }
        let Ok(Some(file)) = tmp.open_read(&name) else {
            continue;
        };
        let old = file
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age > ABANDONED_AFTER);
        if old && flock(&file, libc::LOCK_EX | libc::LOCK_NB).is_ok() {
            let _ = tmp.remove_file(&name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn anonymous_staging_is_probed_and_links_when_it_works() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = Dir::open_root(dir.path()).unwrap().unwrap();
        let works = Staged::anonymous_works(&tmp);
        println!("anonymous staging works here: {works}");
        if works {
            let mut staged = Staged::create_anonymous(&tmp).unwrap();
            staged.write_all(b"abc").unwrap();
            staged.link_to(&tmp, "linked").unwrap();
            assert_eq!(fs::read(dir.path().join("linked")).unwrap(), b"abc");
            assert_eq!(
                staged.link_to(&tmp, "linked").unwrap_err().kind(),
                std::io::ErrorKind::AlreadyExists
            );
        }
        drop(dir);
    }

    #[test]
    fn the_sweep_removes_only_old_unheld_staged_files_and_follows_no_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tmp");
        fs::create_dir(&root).unwrap();
        let outside = dir.path().join("outside");
        fs::write(&outside, "keep").unwrap();
        let tmp = Dir::open_root(&root).unwrap().unwrap();
        let age = |name: &str| {
            let file = File::options().write(true).open(root.join(name)).unwrap();
            file.set_modified(SystemTime::now() - Duration::from_secs(120))
                .unwrap();
        };
        fs::write(root.join("staged-old"), "x").unwrap();
        age("staged-old");
        fs::write(root.join("staged-new"), "x").unwrap();
        let held = Staged::create(&tmp).unwrap();
        age(held.path.file_name().unwrap().to_str().unwrap());
        std::os::unix::fs::symlink(&outside, root.join("staged-link")).unwrap();
        sweep_abandoned(&tmp);
        let mut left: Vec<String> = fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        let held_name = held.path.file_name().unwrap().to_str().unwrap().to_string();
        let mut expected = vec!["staged-link".to_string(), "staged-new".into(), held_name];
        expected.sort();
        assert_eq!(left, expected);
        assert_eq!(fs::read_to_string(&outside).unwrap(), "keep");
    }
}
