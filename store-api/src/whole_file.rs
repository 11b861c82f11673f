//! A downloaded file appears whole or not at all.
//!
//! The bytes go to a hidden file beside the destination, which takes the destination's name only
//! once every byte is written, so a transfer that fails midway (a server that stops sending, a full
//! disk) leaves no truncated file that looks complete, and a file already there stays as it was. A
//! destination that exists and is not a plain file (a device such as `/dev/stdout`, a pipe, a
//! symlink) is written in place, as renaming over it would replace it.

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{StoreError, StoreResult};

/// Streams `source` into `dest` (see the module's docs), creating its parent folders.
pub fn write_whole<R: Read + ?Sized>(source: &mut R, dest: &Path) -> StoreResult<()> {
    if let Some(parent) = dest.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)
            .map_err(|e| StoreError::io(format!("creating {}", parent.display()), &e))?;
    }
    let writing = |e: std::io::Error| StoreError::io(format!("writing {}", dest.display()), &e);
    let in_place = fs::symlink_metadata(dest).is_ok_and(|m| !m.file_type().is_file());
    if in_place {
        let mut out = File::create(dest).map_err(writing)?;
        std::io::copy(source, &mut out).map_err(writing)?;
        return Ok(());
    }
    let (partial, mut out) = partial_beside(dest).map_err(writing)?;
    let copied = std::io::copy(source, &mut out)
        .map_err(writing)
        .and_then(|_| fs::rename(&partial, dest).map_err(writing));
    if copied.is_err() {
        let _ = fs::remove_file(&partial);
    }
    copied
}

/// A new hidden file in `dest`'s folder, named after it (after its first 100 bytes: a name near the
/// file system's 255-byte limit leaves no room for the staging name's additions).
fn partial_beside(dest: &Path) -> std::io::Result<(PathBuf, File)> {
    let whole = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut cut = whole.len().min(100);
    while !whole.is_char_boundary(cut) {
        cut -= 1;
    }
    let name = &whole[..cut];
    // Unique within this process by the counter; another process's file of the same name (a pid
    // reused in another container sharing the folder) is skipped by `create_new`.
    static NEXT: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let partial = dest.with_file_name(format!(".{name}.{}-{n}.partial", std::process::id()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&partial)
        {
            Ok(file) => return Ok((partial, file)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_at_the_file_systems_limit_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("L".repeat(250));
        let (partial, _file) = partial_beside(&dest).unwrap();
        assert!(partial.file_name().unwrap().len() < 255);
    }

    /// Gives `good` bytes, then fails.
    struct Breaks {
        good: usize,
    }

    impl Read for Breaks {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.good == 0 {
                return Err(std::io::Error::new(
                    ErrorKind::TimedOut,
                    "the server stopped",
                ));
            }
            let n = buf.len().min(self.good);
            buf[..n].fill(b'x');
            self.good -= n;
            Ok(n)
        }
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_whole_transfer_lands_under_its_name_and_nothing_else_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("sub/out.bin");
        write_whole(&mut &b"all of it"[..], &dest).unwrap();
        assert_eq!(fs::read(&dest).unwrap(), b"all of it");
        assert_eq!(names(&dir.path().join("sub")), ["out.bin"]);
    }

    #[test]
    fn a_failed_transfer_leaves_no_file_and_keeps_one_that_was_there() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.bin");
        let err = write_whole(&mut Breaks { good: 100_000 }, &dest).unwrap_err();
        assert!(err.to_string().contains("the server stopped"), "{err}");
        assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
        fs::write(&dest, "before").unwrap();
        write_whole(&mut Breaks { good: 10 }, &dest).unwrap_err();
        assert_eq!(fs::read_to_string(&dest).unwrap(), "before");
        assert_eq!(names(dir.path()), ["out.bin"]);
    }

    #[test]
    fn a_destination_that_is_not_a_plain_file_is_written_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.txt");
        fs::write(&target, "old").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_whole(&mut &b"new"[..], &link).unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
    }
}
