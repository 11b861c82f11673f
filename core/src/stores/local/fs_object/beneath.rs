//! Folders and files beneath the store root, reached without following any symlink.
//!
//! Every path inside the root is reached one component at a time from a descriptor of the root:
//! `openat(parent, name, O_DIRECTORY | O_NOFOLLOW)` for each folder, and the final operation (`openat`
//! with `O_NOFOLLOW`, `renameat`, `linkat`, `unlinkat`, `fstatat` without following) relative to the
//! descriptor of the folder that holds it. A symlink met on the way is refused with an error naming it.
//!
//! Why descriptors rather than canonicalising the path and checking it still starts with the root: the
//! check and the use would be two lookups of the same path, and a folder swapped for a symlink in between
//! would send the write outside anyway. Here no lookup ever crosses a symlink, so a swap makes the
//! operation fail (`ELOOP`/`ENOTDIR`) instead of escaping. `openat2(RESOLVE_NO_SYMLINKS)` would do the
//! walk in one call, but it needs Linux 5.6 and is often filtered out by container seccomp profiles.
//! The root path itself (as configured) may hold symlinks: it is resolved once when the store is made.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, CWD};
use rustix::io::Errno;

use agent_env_store::error::{StoreError, StoreResult};

const DIR_FLAGS: OFlags = OFlags::DIRECTORY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC)
    .union(OFlags::RDONLY);

/// An open folder under the root, with the path it was reached by (for messages).
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

/// The error for a symlink found inside the store.
pub fn symlink_found(path: &Path) -> StoreError {
    StoreError::InvalidValue(format!(
        "Found a symlink at {}: the local object store follows no symlink inside its root, so it neither \
         reads nor writes through it; remove the symlink, or move what it points at into the store.",
        path.display()
    ))
}

fn io_error(context: &str, path: &Path, errno: Errno) -> StoreError {
    StoreError::io(
        format!("{context} {}", path.display()),
        &io::Error::from(errno),
    )
}

impl Dir {
    /// The root folder itself; `None` when it does not exist yet.
    pub fn open_root(root: &Path) -> StoreResult<Option<Dir>> {
        let flags = OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::RDONLY;
        match rustix::fs::openat(CWD, root, flags, Mode::empty()) {
            Ok(fd) => Ok(Some(Dir {
                fd,
                path: root.to_path_buf(),
            })),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(io_error("opening", root, e)),
        }
    }

    /// The path this folder was reached by.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A second descriptor of the same folder.
    pub fn try_clone(&self) -> StoreResult<Dir> {
        let fd = self
            .fd
            .try_clone()
            .map_err(|e| StoreError::io(format!("opening {}", self.path.display()), &e))?;
        Ok(Dir {
            fd,
            path: self.path.clone(),
        })
    }

    /// The entries of this folder (not `.` and `..`), each with its own type: a symlink is a symlink.
    pub fn entries(&self) -> StoreResult<Vec<(String, FileType)>> {
        let listing = |e: Errno| io_error("listing", &self.path, e);
        let mut out = Vec::new();
        for entry in rustix::fs::Dir::read_from(&self.fd).map_err(listing)? {
            let entry = entry.map_err(listing)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == "." || name == ".." {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::Unknown => self.kind_of(&name)?.unwrap_or(FileType::Unknown),
                known => known,
            };
            out.push((name, kind));
        }
        Ok(out)
    }

    /// The kind of the entry `name`, not following it; `None` when there is none.
    pub fn kind_of(&self, name: &str) -> StoreResult<Option<FileType>> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(FileType::from_raw_mode(stat.st_mode))),
            Err(Errno::NOENT | Errno::NOTDIR) => Ok(None),
            Err(e) => Err(io_error("reading", &self.path.join(name), e)),
        }
    }

    /// The sub-folder `name`, created (mode 0700, the user's alone whatever the umask) when missing and
    /// `create` is set; `None` when it is missing (or is not a folder) and `create` is not set. A symlink
    /// is refused.
    pub fn child(&self, name: &str, create: bool) -> StoreResult<Option<Dir>> {
        let path = self.path.join(name);
        loop {
            match rustix::fs::openat(&self.fd, name, DIR_FLAGS, Mode::empty()) {
                Ok(fd) => return Ok(Some(Dir { fd, path })),
                Err(Errno::NOENT) if create => {
                    match rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o700)) {
                        Ok(()) | Err(Errno::EXIST) => continue,
                        Err(e) => return Err(io_error("creating", &path, e)),
                    }
                }
                Err(Errno::NOENT) => return Ok(None),
                Err(e @ (Errno::LOOP | Errno::NOTDIR)) => {
                    if self.kind_of(name)? == Some(FileType::Symlink) {
                        return Err(symlink_found(&path));
                    }
                    if create {
                        return Err(io_error("creating", &path, e));
                    }
                    return Ok(None);
                }
                Err(e) => return Err(io_error("opening", &path, e)),
            }
        }
    }

    /// The folder `parts` below this one (see [`Dir::child`]).
    pub fn walk(&self, parts: &[&str], create: bool) -> StoreResult<Option<Dir>> {
        let mut dir = self.try_clone()?;
        for part in parts {
            match dir.child(part, create)? {
                Some(next) => dir = next,
                None => return Ok(None),
            }
        }
        Ok(Some(dir))
    }

    /// Opens the entry `name` for reading without following it; `None` when there is none. A symlink is
    /// refused. Opening does not block on a FIFO; the caller checks it is a regular file.
    pub fn open_read(&self, name: &str) -> StoreResult<Option<File>> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        match rustix::fs::openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => Ok(Some(File::from(fd))),
            Err(Errno::NOENT | Errno::NOTDIR) => Ok(None),
            Err(Errno::LOOP) => Err(symlink_found(&self.path.join(name))),
            Err(e) => Err(io_error("reading", &self.path.join(name), e)),
        }
    }

    /// Opens (creating if missing) the file `name` for reading and writing, refusing a symlink.
    pub fn open_or_create(&self, name: &str) -> StoreResult<File> {
        let flags = OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(0o600)) {
            Ok(fd) => Ok(File::from(fd)),
            Err(Errno::LOOP) => Err(symlink_found(&self.path.join(name))),
            Err(e) => Err(io_error("opening", &self.path.join(name), e)),
        }
    }

    /// Creates the file `name`, failing with `AlreadyExists` when any entry (a symlink too) has that name.
    pub fn create_new(&self, name: &str) -> io::Result<File> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(0o600))?;
        Ok(File::from(fd))
    }

    /// An anonymous file (`O_TMPFILE`) in this folder, or `None` where the filesystem has none.
    pub fn create_anonymous(&self) -> Option<File> {
        let flags = OFlags::WRONLY | OFlags::TMPFILE | OFlags::CLOEXEC;
        rustix::fs::openat(&self.fd, ".", flags, Mode::from_raw_mode(0o600))
            .ok()
            .map(File::from)
    }

    /// Renames `name` here to `to_name` in `to`, replacing an entry there (a symlink is replaced, never
    /// followed).
    pub fn rename(&self, name: &str, to: &Dir, to_name: &str) -> io::Result<()> {
        Ok(rustix::fs::renameat(&self.fd, name, &to.fd, to_name)?)
    }

    /// Gives `name` here a second name `to_name` in `to`; `AlreadyExists` when that is taken.
    pub fn link(&self, name: &str, to: &Dir, to_name: &str) -> io::Result<()> {
        Ok(rustix::fs::linkat(
            &self.fd,
            name,
            &to.fd,
            to_name,
            AtFlags::empty(),
        )?)
    }

    /// Gives the anonymous file `file` the name `to_name` in this folder; `AlreadyExists` when taken.
    pub fn link_anonymous(&self, file: &File, to_name: &str) -> io::Result<()> {
        let source = format!("/proc/self/fd/{}", file.as_fd().as_raw_fd());
        Ok(rustix::fs::linkat(
            CWD,
            source.as_str(),
            &self.fd,
            to_name,
            AtFlags::SYMLINK_FOLLOW,
        )?)
    }

    /// Removes the file (or symlink) `name`.
    pub fn remove_file(&self, name: &str) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlinked_folder_is_refused_and_never_created_through() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        let dir = Dir::open_root(&root).unwrap().unwrap();
        let err = dir
            .walk(&["link", "deeper"], true)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("Found a symlink at") && err.contains("link"),
            "{err}"
        );
        assert!(!outside.join("deeper").exists());
        assert!(dir.walk(&["a", "b"], true).unwrap().is_some());
        assert!(root.join("a/b").is_dir());
        assert!(dir.walk(&["missing"], false).unwrap().is_none());
    }
}
