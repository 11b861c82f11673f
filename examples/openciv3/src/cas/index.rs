//! The SQLite index: one row per key naming its blob's digest. WAL and a busy timeout make it safe from
//! several threads (a small connection pool, one connection per call at a time) and several processes.

use std::collections::HashSet;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior};

use super::error::{CasError, CasResult};
use super::lock::lock_exclusive;

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS objects (
    key TEXT PRIMARY KEY,
    digest TEXT NOT NULL,
    size INTEGER NOT NULL,
    content_type TEXT,
    last_modified TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS objects_by_digest ON objects (digest);";

/// How long a call waits for another process's write transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);
/// Idle connections kept for reuse.
const POOL_SIZE: usize = 4;

/// One index row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub key: String,
    pub digest: String,
    pub size: u64,
    pub content_type: Option<String>,
    pub last_modified: String,
}

/// What a write asks of the index.
pub struct NewRow<'a> {
    pub key: &'a str,
    pub digest: &'a str,
    pub size: u64,
    pub content_type: &'a str,
    pub last_modified: &'a str,
    pub allow_overwrite: bool,
}

/// The outcome of recording a row.
#[derive(Debug, PartialEq, Eq)]
pub enum Recorded {
    Written,
    KeyTaken,
    /// The blob was gone when the row was about to be written (a concurrent gc removed it): store it again.
    BlobVanished,
}

/// The index of one store root.
#[derive(Debug)]
pub struct Index {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl Index {
    pub fn new(root: &Path) -> Index {
        Index {
            path: root.join("index.sqlite"),
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Writes a row in one IMMEDIATE transaction that first checks the blob is on disk. gc removes a blob
    /// only inside its own IMMEDIATE transaction after finding no row for it, so the two serialize: either
    /// gc ran first (the blob is gone, we say so and the writer stores it again) or we did (gc sees the row).
    pub fn record(&self, row: &NewRow<'_>, blob: &Path) -> CasResult<Recorded> {
        self.with_connection(true, |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            if !blob.is_file() {
                return Ok(Recorded::BlobVanished);
            }
            let sql = if row.allow_overwrite {
                "INSERT INTO objects (key, digest, size, content_type, last_modified) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (key) DO UPDATE SET digest = excluded.digest, size = excluded.size,
                 content_type = excluded.content_type, last_modified = excluded.last_modified"
            } else {
                "INSERT INTO objects (key, digest, size, content_type, last_modified) VALUES (?1, ?2, ?3, ?4, ?5)"
            };
            let inserted = tx.execute(
                sql,
                params![row.key, row.digest, row.size as i64, row.content_type, row.last_modified],
            );
            match inserted {
                Ok(_) => {
                    tx.commit()?;
                    Ok(Recorded::Written)
                }
                Err(rusqlite::Error::SqliteFailure(failure, _))
                    if failure.code == ErrorCode::ConstraintViolation =>
                {
                    Ok(Recorded::KeyTaken)
                }
                Err(err) => Err(err),
            }
        })
        .map(|recorded| recorded.unwrap_or(Recorded::BlobVanished))
    }

    /// The row of `key`, if any.
    pub fn row(&self, key: &str) -> CasResult<Option<Row>> {
        let found = self.with_connection(false, |conn| {
            conn.query_row(
                "SELECT key, digest, size, content_type, last_modified FROM objects WHERE key = ?1",
                params![key],
                row_from_sql,
            )
            .optional()
        })?;
        Ok(found.flatten())
    }

    /// Keys whose text starts with `prefix` (a string prefix, not a directory), sorted.
    pub fn keys_with_prefix(&self, prefix: &str) -> CasResult<Vec<String>> {
        let keys = self.with_connection(false, |conn| {
            let mut statement = conn.prepare_cached(
                "SELECT key FROM objects WHERE key >= ?1 AND substr(key, 1, length(?1)) = ?1 ORDER BY key",
            )?;
            let keys = statement.query_map(params![prefix], |row| row.get::<_, String>(0))?;
            keys.collect::<rusqlite::Result<Vec<String>>>()
        })?;
        Ok(keys.unwrap_or_default())
    }

    /// Every digest some row references.
    pub fn referenced_digests(&self) -> CasResult<HashSet<String>> {
        let digests = self.with_connection(false, |conn| {
            let mut statement = conn.prepare("SELECT DISTINCT digest FROM objects")?;
            let digests = statement.query_map([], |row| row.get::<_, String>(0))?;
            digests.collect::<rusqlite::Result<HashSet<String>>>()
        })?;
        Ok(digests.unwrap_or_default())
    }

    /// gc's side of the protocol: inside one IMMEDIATE transaction, calls `remove` for each candidate
    /// digest that no row references. Returns the digests removed.
    pub fn remove_unreferenced(
        &self,
        candidates: &[String],
        mut remove: impl FnMut(&str) -> CasResult<bool>,
    ) -> CasResult<Vec<String>> {
        let mut removal_error = None;
        let removed = self.with_connection(false, |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut removed = Vec::new();
            {
                let mut referenced =
                    tx.prepare_cached("SELECT 1 FROM objects WHERE digest = ?1 LIMIT 1")?;
                for digest in candidates {
                    if referenced.exists(params![digest])? {
                        continue;
                    }
                    match remove(digest) {
                        Ok(true) => removed.push(digest.clone()),
                        Ok(false) => {}
                        Err(err) => {
                            removal_error = Some(err);
                            break;
                        }
                    }
                }
            }
            tx.commit()?;
            Ok(removed)
        })?;
        if let Some(err) = removal_error {
            return Err(err);
        }
        Ok(removed.unwrap_or_default())
    }

    /// Runs `work` on a pooled connection. Without `create`, a store that was never written has no index
    /// file and `work` is not run (`Ok(None)`), so reading creates nothing.
    fn with_connection<T>(
        &self,
        create: bool,
        work: impl FnOnce(&mut Connection) -> rusqlite::Result<T>,
    ) -> CasResult<Option<T>> {
        let pooled = self.idle.lock().map(|mut idle| idle.pop()).unwrap_or(None);
        let mut conn = match pooled {
            Some(conn) => conn,
            None => {
                if !create && !self.path.exists() {
                    return Ok(None);
                }
                self.open()?
            }
        };
        let result = work(&mut conn).map_err(|source| self.failed(source))?;
        if let Ok(mut idle) = self.idle.lock() {
            if idle.len() < POOL_SIZE {
                idle.push(conn);
            }
        }
        Ok(Some(result))
    }

    /// Opens a connection, switching a new database to WAL and creating the schema. Processes opening
    /// the index together take turns under `<root>/index.lock`: SQLite can answer a concurrent switch to
    /// WAL with "database is locked" without waiting for its busy timeout.
    fn open(&self) -> CasResult<Connection> {
        let lock_path = self.path.with_file_name("index.lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(CasError::io("open", &lock_path))?;
        lock_exclusive(&lock).map_err(CasError::io("lock", &lock_path))?;
        let conn = self.open_unlocked().map_err(|source| self.failed(source))?;
        drop(lock);
        Ok(conn)
    }

    fn open_unlocked(&self) -> rusqlite::Result<Connection> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.path, flags)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.query_row("PRAGMA journal_mode = WAL", [], |row| {
            row.get::<_, String>(0)
        })?;
        conn.execute_batch("PRAGMA synchronous = NORMAL;")?;
        conn.execute_batch(SCHEMA)?;
        Ok(conn)
    }

    fn failed(&self, source: rusqlite::Error) -> CasError {
        CasError::Index {
            path: self.path.clone(),
            source,
        }
    }
}

fn row_from_sql(row: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    Ok(Row {
        key: row.get(0)?,
        digest: row.get(1)?,
        size: row.get::<_, i64>(2)?.max(0) as u64,
        content_type: row.get(3)?,
        last_modified: row.get(4)?,
    })
}
