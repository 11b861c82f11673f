//! A database file that is there but holds nothing at all (0 bytes, no write-ahead log with frames in it):
//! cut short by a full disk or a bad copy. SQLite takes it for an empty database, and opening it
//! writes one there, so the records it held would be gone without a word: it is said instead, and
//! a read leaves the file as it is, so every command that reads it says so until it is dealt with.

use std::path::{Path, PathBuf};

/// Whether the file at `db` is there, 0 bytes long, with no write-ahead log (`<db>-wal`) that
/// could hold its pages (none, or the empty one the store keeps). A file that is not there, or
/// cannot be looked at, is not.
pub fn is_emptied(db: &Path) -> bool {
    let empty = |path: &Path| std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0);
    let wal = wal_of(db);
    empty(db) && (empty(&wal) || matches!(wal.try_exists(), Ok(false)))
}

/// What a reader of `db`, an [`is_emptied`] file, is told: that it is empty, that the records it
/// held are not there, and what to do.
pub fn warning(db: &Path) -> String {
    let shown = db.display().to_string();
    let quoted = crate::quote::word(&shown);
    format!(
        "{shown} is empty (0 bytes), so the records it held are not there: it was probably cut short \
         by a full disk or a bad copy; put it back from a backup, or remove it (rm {quoted}) to start \
         an empty store"
    )
}

/// `<db>-wal`, SQLite's write-ahead log of `db`.
fn wal_of(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_os_string();
    name.push("-wal");
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_file_of_0_bytes_without_a_log_is_emptied() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("local.db");
        assert!(!is_emptied(&db));
        std::fs::write(&db, "").unwrap();
        assert!(is_emptied(&db));
        std::fs::write(dir.path().join("local.db-wal"), "").unwrap();
        assert!(is_emptied(&db));
        std::fs::write(dir.path().join("local.db-wal"), "frames").unwrap();
        assert!(!is_emptied(&db));
        std::fs::remove_file(dir.path().join("local.db-wal")).unwrap();
        std::fs::write(&db, "SQLite format 3\0").unwrap();
        assert!(!is_emptied(&db));
        assert!(warning(&db).contains("is empty (0 bytes), so the records it held are not there"));
    }
}
