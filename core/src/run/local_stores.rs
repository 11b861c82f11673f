//! The @local namespace's stores a bundle run writes to: `<state root>/document_store/local.db` and the
//! local object store root `<state root>/object_store`. This module is the one place that picks their
//! implementations; until the built-in SQLite and filesystem stores land it carries small ones of its own
//! (the same on-disk layout: table `docs_<collection>` with a `doc` JSON column, objects at `<root>/<key>`).
//!
//! Nothing touches disk until the first write; reads of a store that was never written find nothing, so
//! `--dry-run` leaves no trace.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, OpenFlags};
use serde_json::Value;

use crate::stores::document::eval;
use crate::stores::{
    Document, DocumentStore, Filter, ObjectMetadata, ObjectStore, Sort, StoreError, StoreResult,
    UpdateSpec,
};

/// The two @local stores a run needs.
pub struct LocalStores {
    pub documents: Box<dyn DocumentStore>,
    pub objects: Box<dyn ObjectStore>,
}

/// `<state root>/document_store/local.db`.
pub fn local_db_path() -> PathBuf {
    crate::paths::state_root()
        .join("document_store")
        .join("local.db")
}

/// `<state root>/object_store`.
pub fn local_object_root() -> PathBuf {
    crate::paths::state_root().join("object_store")
}

/// Opens (lazily) the @local document and object stores.
pub fn open() -> LocalStores {
    LocalStores {
        documents: Box::new(SqliteDocuments::new(local_db_path())),
        objects: Box::new(FileObjects::new(local_object_root())),
    }
}

/// Creates a private state directory: mode 0700 with a `.gitignore` of `*` when first made.
fn create_private_dir(dir: &Path) -> StoreResult<()> {
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|e| StoreError::io(dir.display(), &e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    let _ = std::fs::write(dir.join(".gitignore"), "*\n");
    Ok(())
}

struct SqliteDocuments {
    path: PathBuf,
    conn: Mutex<Option<Connection>>,
    unique: Mutex<Vec<(String, Vec<String>)>>,
}

fn table(collection: &str) -> String {
    let safe: String = collection
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("docs_{safe}")
}

fn db_error(path: &Path, e: rusqlite::Error) -> StoreError {
    StoreError::Io {
        message: format!("{}: {e}", path.display()),
        raw_os_error: None,
    }
}

impl SqliteDocuments {
    fn new(path: PathBuf) -> Self {
        SqliteDocuments {
            path,
            conn: Mutex::new(None),
            unique: Mutex::new(Vec::new()),
        }
    }

    /// Runs `f` with the connection; `create` opens (and makes) the file when needed, otherwise a missing
    /// file gives `None`.
    fn with<T>(
        &self,
        create: bool,
        f: impl FnOnce(&Connection) -> StoreResult<T>,
    ) -> StoreResult<Option<T>> {
        let mut guard = self
            .conn
            .lock()
            .map_err(|_| StoreError::Internal("the document store lock is poisoned".into()))?;
        if guard.is_none() {
            if !create && !self.path.exists() {
                return Ok(None);
            }
            if let Some(parent) = self.path.parent() {
                create_private_dir(parent)?;
            }
            let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            let conn = Connection::open_with_flags(&self.path, flags)
                .map_err(|e| db_error(&self.path, e))?;
            conn.busy_timeout(std::time::Duration::from_secs(5))
                .map_err(|e| db_error(&self.path, e))?;
            let _ = conn.pragma_update(None, "journal_mode", "WAL");
            *guard = Some(conn);
        }
        match guard.as_ref() {
            Some(conn) => f(conn).map(Some),
            None => Ok(None),
        }
    }

    fn ensure_table(&self, conn: &Connection, collection: &str) -> StoreResult<()> {
        conn.execute_batch(&format!(
            "CREATE TABLE IF NOT EXISTS {} (rowid INTEGER PRIMARY KEY, doc TEXT NOT NULL)",
            table(collection)
        ))
        .map_err(|e| db_error(&self.path, e))
    }

    fn rows(&self, conn: &Connection, collection: &str) -> StoreResult<Vec<(i64, Document)>> {
        let exists: bool = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?1",
                [table(collection)],
                |r| r.get::<_, i64>(0),
            )
            .map_err(|e| db_error(&self.path, e))?
            > 0;
        if !exists {
            return Ok(Vec::new());
        }
        let mut stmt = conn
            .prepare(&format!(
                "SELECT rowid, doc FROM {} ORDER BY rowid",
                table(collection)
            ))
            .map_err(|e| db_error(&self.path, e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| db_error(&self.path, e))?;
        let mut out = Vec::new();
        for row in rows {
            let (rowid, text) = row.map_err(|e| db_error(&self.path, e))?;
            if let Ok(Value::Object(doc)) = serde_json::from_str(&text) {
                out.push((rowid, doc));
            }
        }
        Ok(out)
    }

    fn matching(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
    ) -> StoreResult<Vec<(i64, Document)>> {
        let rows = self
            .with(false, |c| self.rows(c, collection))?
            .unwrap_or_default();
        let mut hits: Vec<(i64, Document)> = rows
            .into_iter()
            .filter(|(_, d)| eval::matches(d, filter))
            .collect();
        if let Some(sort) = sort {
            hits.sort_by(|a, b| eval::query_order(&a.1, &b.1, sort));
        }
        Ok(hits)
    }

    fn check_unique(
        &self,
        conn: &Connection,
        collection: &str,
        doc: &Document,
        skip: Option<i64>,
    ) -> StoreResult<()> {
        let unique = self
            .unique
            .lock()
            .map_err(|_| StoreError::Internal("the index lock is poisoned".into()))?
            .clone();
        for (coll, fields) in unique.iter().filter(|(c, _)| c == collection) {
            let key: Vec<Option<&Value>> = fields.iter().map(|f| doc.get(f)).collect();
            for (rowid, other) in self.rows(conn, coll)? {
                if Some(rowid) == skip {
                    continue;
                }
                let other_key: Vec<Option<&Value>> = fields.iter().map(|f| other.get(f)).collect();
                if other_key == key {
                    return Err(StoreError::DuplicateKey(format!(
                        "a document in '{collection}' already has this {}",
                        fields.join(", ")
                    )));
                }
            }
        }
        Ok(())
    }

    fn write_row(
        &self,
        conn: &Connection,
        collection: &str,
        rowid: Option<i64>,
        doc: &Document,
    ) -> StoreResult<()> {
        self.ensure_table(conn, collection)?;
        self.check_unique(conn, collection, doc, rowid)?;
        let text = Value::Object(doc.clone()).to_string();
        let result = match rowid {
            Some(id) => conn.execute(
                &format!("UPDATE {} SET doc = ?1 WHERE rowid = ?2", table(collection)),
                rusqlite::params![text, id],
            ),
            None => conn.execute(
                &format!("INSERT INTO {} (doc) VALUES (?1)", table(collection)),
                [text],
            ),
        };
        result.map(|_| ()).map_err(|e| db_error(&self.path, e))
    }
}

impl DocumentStore for SqliteDocuments {
    fn find_one(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
    ) -> StoreResult<Option<Document>> {
        Ok(self
            .matching(collection, filter, sort)?
            .into_iter()
            .next()
            .map(|(_, d)| d))
    }

    fn query(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
        limit: Option<usize>,
        offset: usize,
    ) -> StoreResult<Vec<Document>> {
        let docs = self
            .matching(collection, filter, sort)?
            .into_iter()
            .map(|(_, d)| d)
            .collect();
        Ok(eval::window(docs, None, eval::query_order, limit, offset))
    }

    fn count(&self, collection: &str, filter: &Filter) -> StoreResult<u64> {
        Ok(self.matching(collection, filter, None)?.len() as u64)
    }

    fn insert(&self, collection: &str, doc: &Document) -> StoreResult<()> {
        self.with(true, |c| self.write_row(c, collection, None, doc))?;
        Ok(())
    }

    fn update(
        &self,
        collection: &str,
        filter: &Filter,
        update: &UpdateSpec,
        upsert: bool,
    ) -> StoreResult<u64> {
        Ok(self
            .update_one_and_get(collection, filter, update, true, upsert)?
            .map_or(0, |_| 1))
    }

    fn update_one_and_get(
        &self,
        collection: &str,
        filter: &Filter,
        update: &UpdateSpec,
        return_after: bool,
        upsert: bool,
    ) -> StoreResult<Option<Document>> {
        match self.matching(collection, filter, None)?.into_iter().next() {
            Some((rowid, before)) => {
                let mut after = before.clone();
                eval::apply_update(&mut after, update)?;
                self.with(true, |c| self.write_row(c, collection, Some(rowid), &after))?;
                Ok(Some(if return_after { after } else { before }))
            }
            None if upsert => {
                let doc = eval::synthesize_upsert(filter, update)?;
                self.insert(collection, &doc)?;
                Ok(return_after.then_some(doc))
            }
            None => Ok(None),
        }
    }

    fn replace(
        &self,
        collection: &str,
        filter: &Filter,
        doc: &Document,
        upsert: bool,
    ) -> StoreResult<u64> {
        match self.matching(collection, filter, None)?.into_iter().next() {
            Some((rowid, _)) => {
                self.with(true, |c| self.write_row(c, collection, Some(rowid), doc))?;
                Ok(1)
            }
            None if upsert => {
                self.insert(collection, &eval::synthesize_replace(filter, doc)?)?;
                Ok(1)
            }
            None => Ok(0),
        }
    }

    fn delete(&self, collection: &str, filter: &Filter) -> StoreResult<u64> {
        match self.matching(collection, filter, None)?.into_iter().next() {
            Some((rowid, _)) => {
                self.with(true, |c| {
                    c.execute(
                        &format!("DELETE FROM {} WHERE rowid = ?1", table(collection)),
                        [rowid],
                    )
                    .map_err(|e| db_error(&self.path, e))
                })?;
                Ok(1)
            }
            None => Ok(0),
        }
    }

    fn ensure_index(&self, collection: &str, fields: &[&str], unique: bool) -> StoreResult<()> {
        if unique {
            let mut guard = self
                .unique
                .lock()
                .map_err(|_| StoreError::Internal("the index lock is poisoned".into()))?;
            let entry = (
                collection.to_string(),
                fields.iter().map(|f| f.to_string()).collect(),
            );
            if !guard.contains(&entry) {
                guard.push(entry);
            }
        }
        Ok(())
    }

    fn check_id(&self, id: &str) -> StoreResult<()> {
        if id.starts_with("@local/") {
            Ok(())
        } else {
            Err(StoreError::InvalidValue(format!(
                "id '{id}' isn't an @local id, and the @local namespace's store holds only those"
            )))
        }
    }
}

struct FileObjects {
    root: PathBuf,
}

impl FileObjects {
    fn new(root: PathBuf) -> Self {
        FileObjects { root }
    }

    fn path_of(&self, key: &str) -> StoreResult<PathBuf> {
        if key.split('/').any(|s| s == ".." || s.is_empty()) || key.starts_with('/') {
            return Err(StoreError::InvalidValue(format!(
                "Key '{key}' escapes the store root."
            )));
        }
        Ok(self.root.join(key))
    }

    fn path_of_url(&self, url: &str) -> StoreResult<PathBuf> {
        let path = url.strip_prefix("file://").unwrap_or(url);
        let path = PathBuf::from(path);
        if path.starts_with(&self.root) {
            Ok(path)
        } else {
            Err(StoreError::ForeignUrl(format!(
                "'{url}' is not a file:// url of this store."
            )))
        }
    }

    fn prepare(&self, key: &str, allow_overwrite: bool) -> StoreResult<PathBuf> {
        let path = self.path_of(key)?;
        create_private_dir(&self.root)?;
        if !allow_overwrite && path.exists() {
            return Err(StoreError::object_exists(&path.display().to_string()));
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| StoreError::io(parent.display(), &e))?;
        }
        Ok(path)
    }
}

impl ObjectStore for FileObjects {
    fn put(
        &self,
        key: &str,
        data: &[u8],
        _content_type: &str,
        allow_overwrite: bool,
    ) -> StoreResult<String> {
        let path = self.prepare(key, allow_overwrite)?;
        std::fs::write(&path, data).map_err(|e| StoreError::io(path.display(), &e))?;
        Ok(format!("file://{}", path.display()))
    }

    fn put_file(&self, key: &str, file_path: &Path, _content_type: &str) -> StoreResult<String> {
        let path = self.prepare(key, false)?;
        std::fs::copy(file_path, &path).map_err(|e| StoreError::io(file_path.display(), &e))?;
        Ok(format!("file://{}", path.display()))
    }

    fn put_file_at(
        &self,
        object_url: &str,
        file_path: &Path,
        content_type: &str,
    ) -> StoreResult<String> {
        let key = self.get_object_key(object_url)?;
        self.put_file(&key, file_path, content_type)
    }

    fn get(&self, object_url: &str) -> StoreResult<Vec<u8>> {
        let path = self.path_of_url(object_url)?;
        std::fs::read(&path).map_err(|_| StoreError::object_not_found(object_url))
    }

    fn get_object_metadata(&self, key: &str) -> StoreResult<Option<ObjectMetadata>> {
        let path = self.path_of(key)?;
        Ok(std::fs::metadata(&path)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| ObjectMetadata {
                size: Some(m.len()),
                ..ObjectMetadata::default()
            }))
    }

    fn get_object_metadata_at(&self, object_url: &str) -> StoreResult<Option<ObjectMetadata>> {
        let key = self.get_object_key(object_url)?;
        self.get_object_metadata(&key)
    }

    fn list(&self, prefix: &str) -> StoreResult<Vec<String>> {
        let mut out = Vec::new();
        let tree = crate::bundle::tree::Tree::Disk(&self.root);
        for rel in tree.files_below("").unwrap_or_default() {
            if rel.starts_with(prefix) {
                out.push(rel);
            }
        }
        Ok(out)
    }

    fn list_at(&self, url_prefix: &str) -> StoreResult<Vec<String>> {
        let key = self.get_object_key(url_prefix)?;
        Ok(self
            .list(&key)?
            .into_iter()
            .map(|k| format!("file://{}", self.root.join(k).display()))
            .collect())
    }

    fn object_url(&self, key: &str) -> StoreResult<String> {
        Ok(format!("file://{}", self.path_of(key)?.display()))
    }

    fn get_object_key(&self, object_url: &str) -> StoreResult<String> {
        let path = self.path_of_url(object_url)?;
        Ok(path
            .strip_prefix(&self.root)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default())
    }

    fn download_to_file(&self, object_url: &str, dest: &Path) -> StoreResult<()> {
        let src = self.path_of_url(object_url)?;
        if !src.is_file() {
            return Err(StoreError::object_not_found(object_url));
        }
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|e| StoreError::io(parent.display(), &e))?;
        }
        std::fs::copy(&src, dest).map_err(|e| StoreError::io(dest.display(), &e))?;
        Ok(())
    }
}
