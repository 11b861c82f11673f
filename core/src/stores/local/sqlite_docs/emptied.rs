//! A database file that is there but holds nothing at all (0 bytes): cut short by a full disk or a
//! bad copy. SQLite takes it for an empty database: opening it writes one there and throws away its
//! write-ahead log (`<db>-wal`), which may be the only place its records are left. So such a file is
//! never opened for a read: every command that reads it says so, until it is dealt with.
//!
//! A write is let through only when nothing is left to lose: a file of 0 bytes with a log that holds
//! frames is refused ([`refusal`]), and the warning says how to get the records back from the log.
//! (SQLite can read the log again once there is a database header for it: an empty WAL database
//! of the log's page size, with the log put back next to it before anything opens it.)

use std::path::{Path, PathBuf};

use agent_env_store::error::StoreError;

/// Whether the file at `db` is there and 0 bytes long, whatever its write-ahead log holds. A file
/// that is not there, or cannot be looked at, is not.
pub fn is_emptied(db: &Path) -> bool {
    std::fs::metadata(db).is_ok_and(|m| m.is_file() && m.len() == 0)
}

/// How many bytes the write-ahead log of `db` holds, when it is there and not empty.
pub fn log_left(db: &Path) -> Option<u64> {
    std::fs::metadata(wal_of(db))
        .ok()
        .filter(|m| m.is_file() && m.len() > 0)
        .map(|m| m.len())
}

/// What a reader of `db`, an [`is_emptied`] file, is told: that it is empty, that the records it
/// held are not there (or, with a log left, may be in the log, and how to get them back), and what
/// to do.
pub fn warning(db: &Path) -> String {
    let shown = db.display().to_string();
    let quoted = crate::quote::word(&shown);
    let Some(log_bytes) = log_left(db) else {
        return format!(
            "{shown} is empty (0 bytes), so the records it held are not there: it was probably cut \
             short by a full disk or a bad copy; put it back from a backup, or remove it (rm {quoted}) \
             to start an empty store"
        );
    };
    let page_size = log_page_size(db).unwrap_or(4096);
    let name = |path: &Path| {
        path.file_name()
            .map(|n| crate::quote::word(&n.to_string_lossy()))
            .unwrap_or_default()
    };
    let (file, log) = (name(db), name(&wal_of(db)));
    let wal = crate::quote::word(&wal_of(db).display().to_string());
    let folder = db
        .parent()
        .map(|p| crate::quote::word(&p.display().to_string()))
        .unwrap_or_else(|| ".".to_string());
    format!(
        "{shown} is empty (0 bytes), but its write-ahead log ({log_bytes} bytes) may still hold some \
         of the records: agent-env reads nothing from it and writes nothing there until it is dealt \
         with. To see what the log gives back, with sqlite3 and on copies (the two files stay as they \
         are): cd {folder} && mkdir recovered && sqlite3 recovered/{file} 'PRAGMA page_size={page_size}; \
         PRAGMA journal_mode=WAL' && cp {log} recovered/{log} && sqlite3 recovered/{file} 'PRAGMA \
         wal_checkpoint(TRUNCATE); SELECT count(*) FROM docs_task_instances'. The log holds only what \
         was written since the store last folded it into the file, so that count is every instance \
         only when nothing had been folded in; an error or a short count means the rest went with the \
         file. To keep what came back: mv {log} {log}.cut && mv recovered/{file} {file}. Else put the \
         file back from a backup, or remove both (rm {quoted} {wal}) to start an empty store"
    )
}

/// The error of a write to `db`, an [`is_emptied`] file whose log is left: the write would make a
/// new database there and throw the log away, so it is refused, with what to do.
pub fn refusal(db: &Path) -> Option<StoreError> {
    log_left(db)?;
    let shown = db.display().to_string();
    let quoted = crate::quote::word(&shown);
    let wal = crate::quote::word(&wal_of(db).display().to_string());
    Some(StoreError::Io {
        message: format!(
            "{shown} is empty (0 bytes), and its write-ahead log may still hold the records it held: \
             nothing was written there, as a new store would throw the log away; agent-env task list \
             says how to get them back, or remove both (rm {quoted} {wal}) to start an empty store"
        ),
        raw_os_error: None,
    })
}

/// The page size a write-ahead log's header gives (bytes 8..12, big-endian).
fn log_page_size(db: &Path) -> Option<u32> {
    use std::io::Read;
    let mut header = [0u8; 12];
    std::fs::File::open(wal_of(db))
        .ok()?
        .read_exact(&mut header)
        .ok()?;
    let size = u32::from_be_bytes([header[8], header[9], header[10], header[11]]);
    (512..=65536).contains(&size).then_some(size)
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
    fn a_file_of_0_bytes_is_emptied_whatever_its_log_holds() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("local.db");
        assert!(!is_emptied(&db));
        std::fs::write(&db, "").unwrap();
        assert!(is_emptied(&db));
        assert!(refusal(&db).is_none(), "nothing left to lose");
        std::fs::write(dir.path().join("local.db-wal"), "").unwrap();
        assert!(is_emptied(&db));
        assert!(refusal(&db).is_none());
        assert!(warning(&db).contains("is empty (0 bytes), so the records it held are not there"));
        std::fs::write(dir.path().join("local.db-wal"), "frames").unwrap();
        assert!(is_emptied(&db));
        assert!(warning(&db)
            .contains("its write-ahead log (6 bytes) may still hold some of the records"));
        assert!(refusal(&db)
            .unwrap()
            .to_string()
            .contains("nothing was written there, as a new store would throw the log away"));
        std::fs::remove_file(dir.path().join("local.db-wal")).unwrap();
        std::fs::write(&db, "SQLite format 3\0").unwrap();
        assert!(!is_emptied(&db));
    }

    /// The steps the warning gives do get the records back from a log left next to a file of 0 bytes.
    #[test]
    fn the_steps_the_warning_gives_get_the_records_back() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("local.db");
        {
            let conn = rusqlite::Connection::open(&db).unwrap();
            conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
                .unwrap();
            conn.execute_batch(
                "PRAGMA wal_autocheckpoint=0; CREATE TABLE t(doc); INSERT INTO t VALUES ('kept')",
            )
            .unwrap();
            // Copy the log away while the connection holds it (closing would fold it in).
            std::fs::copy(wal_of(&db), dir.path().join("log")).unwrap();
        }
        std::fs::write(&db, "").unwrap();
        std::fs::copy(dir.path().join("log"), wal_of(&db)).unwrap();
        assert_eq!(log_page_size(&db), Some(4096));
        // The steps, as the warning gives them: on copies, in recovered/.
        let warned = warning(&db);
        assert!(
            warned.contains("mkdir recovered && sqlite3 recovered/local.db"),
            "{warned}"
        );
        let recovered = dir.path().join("recovered");
        std::fs::create_dir(&recovered).unwrap();
        let copy = recovered.join("local.db");
        {
            let conn = rusqlite::Connection::open(&copy).unwrap();
            conn.execute_batch("PRAGMA page_size=4096").unwrap();
            conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
                .unwrap();
        }
        std::fs::copy(wal_of(&db), wal_of(&copy)).unwrap();
        let conn = rusqlite::Connection::open(&copy).unwrap();
        let doc: String = conn
            .query_row("SELECT doc FROM t", [], |r| r.get(0))
            .unwrap();
        // The cut file and its log are as they were.
        assert!(is_emptied(&db) && log_left(&db).is_some());
        assert_eq!(doc, "kept");
    }
}
