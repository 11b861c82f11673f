//! A database path longer than SQLite opens: SQLite's unix VFS takes paths of at most 512 bytes
//! (`mxPathname`), and keeps 8 of them for the name of the database's journal, so a database at a
//! longer path cannot be opened (SQLite says only "unable to open database file"). Said as such, with
//! what to do, rather than as a permission problem; and before a read, which would otherwise find an
//! empty store where no run can ever record.

use std::path::{Path, PathBuf};

use agent_env_store::error::StoreError;

/// What SQLite keeps of its path limit for the journal's name beside the database (`-journal`).
const JOURNAL_ROOM: usize = 8;

/// The error for a database at `db` whose full path is longer than SQLite opens; `None` when it is
/// not (or SQLite's limit cannot be learnt).
pub fn too_long(db: &Path) -> Option<StoreError> {
    let longest = longest_database_path()?;
    let length = full_path(db).as_os_str().len();
    (length > longest).then(|| StoreError::Io {
        message: too_long_words(db, length, longest),
        raw_os_error: None,
    })
}

/// The longest full path SQLite opens a database at, in bytes: its default VFS's `mxPathname`
/// less the room kept for the journal's name.
fn longest_database_path() -> Option<usize> {
    // SAFETY: sqlite3_vfs_find initializes SQLite when needed and returns the default VFS, which
    // lives as long as the process, or null; mxPathname is a plain int read once.
    let max = unsafe {
        let vfs = rusqlite::ffi::sqlite3_vfs_find(std::ptr::null());
        if vfs.is_null() {
            return None;
        }
        (*vfs).mxPathname
    };
    usize::try_from(max).ok()?.checked_sub(JOURNAL_ROOM)
}

/// The path as SQLite sees it: absolute, its folder's links followed when the folder is there.
fn full_path(db: &Path) -> PathBuf {
    let absolute = std::path::absolute(db).unwrap_or_else(|_| db.to_path_buf());
    match (absolute.parent(), absolute.file_name()) {
        (Some(folder), Some(name)) => std::fs::canonicalize(folder)
            .map(|folder| folder.join(name))
            .unwrap_or(absolute),
        _ => absolute,
    }
}

fn too_long_words(db: &Path, length: usize, longest: usize) -> String {
    format!(
        "{} can't be opened: its path is {length} bytes long, and SQLite opens a database at a path of at most \
         {longest} bytes; point XDG_STATE_HOME (or the store's path in the config) at a folder with a shorter path",
        db.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SQLite itself refuses a database one byte past the limit said, and opens one at it.
    #[test]
    fn the_limit_said_is_the_one_sqlite_keeps() {
        let longest = longest_database_path().expect("SQLite's limit");
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        // Folders of 100 bytes, then a file name that brings the path to `length` bytes.
        let at = |length: usize| {
            let mut folder = base.clone();
            while folder.as_os_str().len() + 1 + 100 + 1 + 10 < length {
                folder = folder.join("f".repeat(100));
            }
            std::fs::create_dir_all(&folder).unwrap();
            let name_length = length - folder.as_os_str().len() - 1;
            folder.join("d".repeat(name_length))
        };
        let fits = at(longest);
        assert_eq!(fits.as_os_str().len(), longest);
        assert!(too_long(&fits).is_none());
        rusqlite::Connection::open(&fits).expect("SQLite opens a path at the limit");
        let over = at(longest + 1);
        assert!(rusqlite::Connection::open(&over).is_err());
        let said = too_long(&over).expect("said too long").to_string();
        assert!(
            said.contains(&format!(
                "can't be opened: its path is {} bytes long, and SQLite opens a database at a path of at most {longest} bytes; point XDG_STATE_HOME",
                longest + 1
            )),
            "{said}"
        );
    }
}
