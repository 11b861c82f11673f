//! `ContentAddressedObjectStore`: the object-store contract over sha256-named blobs and an SQLite index.

use std::fs::{self, DirBuilder, File};
use std::io::{self, Read};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;
use serde_json::{Map, Value};

use agent_env_plugin_sdk::stores::object_key::normalize_key;

use super::blobs::{hash_bytes, hash_file, Blobs};
use super::config::CasConfig;
use super::error::{CasError, CasResult};
use super::index::{Index, NewRow, Recorded, Row};
use super::time::rfc3339_utc;

/// The content type of a write that names none.
pub const DEFAULT_CONTENT_TYPE: &str = "application/octet-stream";
/// How often a writer stores its blob again after a concurrent gc removed it before giving up.
const MAX_WRITE_ATTEMPTS: u32 = 5;

/// What the store knows about an object. `etag` is the blob's sha256, equal for equal content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ObjectMetadata {
    pub content_type: Option<String>,
    pub size: Option<u64>,
    pub last_modified: Option<String>,
    pub content_encoding: Option<String>,
    pub etag: Option<String>,
}

/// Keys map to sha256-named blobs under `<root>/blobs`, through an SQLite index at `<root>/index.sqlite`;
/// object URLs are `cas://<bucket>/<key>`. Write-once belongs to the key; identical payloads share a blob.
#[derive(Debug)]
pub struct ContentAddressedObjectStore {
    root: PathBuf,
    bucket: String,
    blobs: Blobs,
    index: Index,
}

impl ContentAddressedObjectStore {
    /// A store on `root` (created on the first write, mode 0700) whose URLs name `bucket`.
    pub fn new(config: CasConfig) -> ContentAddressedObjectStore {
        ContentAddressedObjectStore {
            blobs: Blobs::new(&config.root),
            index: Index::new(&config.root),
            root: config.root,
            bucket: config.bucket,
        }
    }

    /// Builds the store from a `[stores.object] config` table, checking its keys.
    pub fn from_config(
        impl_name: &str,
        table: &Map<String, Value>,
    ) -> CasResult<ContentAddressedObjectStore> {
        CasConfig::from_table(impl_name, table).map(ContentAddressedObjectStore::new)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// The blob directory (`<root>/blobs`).
    pub fn blob_dir(&self) -> &Path {
        self.blobs.dir()
    }

    /// Writes `data` under `key`; a taken key is refused unless `allow_overwrite` points it at the new bytes.
    pub fn put(
        &self,
        key: &str,
        data: &[u8],
        content_type: &str,
        allow_overwrite: bool,
    ) -> CasResult<String> {
        let key = &check_key(key)?;
        if !allow_overwrite {
            self.refuse_taken(key)?;
        }
        self.ensure_root()?;
        let digest = hash_bytes(data);
        self.write(
            key,
            &digest,
            data.len() as u64,
            content_type,
            allow_overwrite,
            || self.blobs.store_bytes(&digest, data),
        )
    }

    /// Write-once upload of a local file, hashed and copied in chunks (never whole in memory).
    pub fn put_file(&self, key: &str, file_path: &Path, content_type: &str) -> CasResult<String> {
        let key = &check_key(key)?;
        self.refuse_taken(key)?;
        self.ensure_root()?;
        let (digest, size) = hash_file(file_path)?;
        self.write(key, &digest, size, content_type, false, || {
            self.blobs.store_file(&digest, file_path)
        })
    }

    /// `put_file` to an explicit URL of this store.
    pub fn put_file_at(
        &self,
        object_url: &str,
        file_path: &Path,
        content_type: &str,
    ) -> CasResult<String> {
        let key = self.get_object_key(object_url)?;
        self.put_file(&key, file_path, content_type)
    }

    /// The whole object.
    pub fn get(&self, object_url: &str) -> CasResult<Vec<u8>> {
        let (mut file, path) = self.open_blob(object_url)?;
        let mut data = Vec::new();
        file.read_to_end(&mut data)
            .map_err(CasError::io("read", path))?;
        Ok(data)
    }

    /// `get(object_url(key))`.
    pub fn read(&self, key: &str) -> CasResult<Vec<u8>> {
        self.get(&self.object_url(key))
    }

    /// A readable stream of the object (its blob file, opened).
    pub fn open(&self, object_url: &str) -> CasResult<File> {
        self.open_blob(object_url).map(|(file, _)| file)
    }

    fn open_blob(&self, object_url: &str) -> CasResult<(File, PathBuf)> {
        let key = check_key(&self.get_object_key(object_url)?)?;
        // A concurrent overwrite plus gc can remove the blob between reading the row and opening it; the
        // row then names another digest, so read it again. An open file stays readable after an unlink.
        let mut last_missing = None;
        for _ in 0..MAX_WRITE_ATTEMPTS {
            let row = self.row_or_not_found(&key, object_url)?;
            let path = self.blobs.path(&row.digest);
            match File::open(&path) {
                Ok(file) => return Ok((file, path)),
                Err(err) if err.kind() == io::ErrorKind::NotFound => {
                    if last_missing.as_ref() == Some(&row.digest) {
                        break;
                    }
                    last_missing = Some(row.digest);
                }
                Err(err) => return Err(CasError::io("open", path)(err)),
            }
        }
        let digest = last_missing.unwrap_or_default();
        Err(CasError::MissingBlob {
            url: object_url.to_string(),
            path: self.blobs.path(&digest),
            digest,
        })
    }

    /// Streams the object to `dest_path`, creating its parent directories. A missing source is not-found; a
    /// bad destination (e.g. a directory) is the filesystem's own error.
    pub fn download_to_file(&self, object_url: &str, dest_path: &Path) -> CasResult<()> {
        let mut source = self.open(object_url)?;
        if let Some(parent) = dest_path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent).map_err(CasError::io("create", parent))?;
        }
        let mut dest = File::create(dest_path).map_err(CasError::io("create", dest_path))?;
        io::copy(&mut source, &mut dest).map_err(CasError::io("write", dest_path))?;
        Ok(())
    }

    /// The object's metadata, `None` when no object is at `key` (including when `key` is a prefix).
    pub fn get_object_metadata(&self, key: &str) -> CasResult<Option<ObjectMetadata>> {
        Ok(self.index.row(&check_key(key)?)?.map(|row| ObjectMetadata {
            content_type: row.content_type,
            size: Some(row.size),
            last_modified: Some(row.last_modified),
            content_encoding: None,
            etag: Some(row.digest),
        }))
    }

    /// `get_object_metadata` by URL.
    pub fn get_object_metadata_at(&self, object_url: &str) -> CasResult<Option<ObjectMetadata>> {
        self.get_object_metadata(&self.get_object_key(object_url)?)
    }

    /// Keys whose text starts with `prefix` (`p` also matches `pother/x`), sorted.
    pub fn list(&self, prefix: &str) -> CasResult<Vec<String>> {
        self.index.keys_with_prefix(prefix)
    }

    /// Object URLs under an explicit URL prefix of this store.
    pub fn list_at(&self, url_prefix: &str) -> CasResult<Vec<String>> {
        let prefix = self.get_object_key(url_prefix)?;
        Ok(self
            .list(&prefix)?
            .iter()
            .map(|key| self.object_url(key))
            .collect())
    }

    /// What `put(key)` returns: `cas://<bucket>/<key>`.
    pub fn object_url(&self, key: &str) -> String {
        format!("cas://{}/{key}", self.bucket)
    }

    /// The inverse of `object_url`; a URL that is not this store's is [`CasError::ForeignUrl`].
    pub fn get_object_key(&self, object_url: &str) -> CasResult<String> {
        object_url
            .strip_prefix("cas://")
            .and_then(|rest| rest.strip_prefix(self.bucket.as_str()))
            .and_then(|rest| rest.strip_prefix('/'))
            .map(str::to_string)
            .ok_or_else(|| CasError::ForeignUrl {
                url: object_url.to_string(),
                bucket: self.bucket.clone(),
            })
    }

    /// Whether an object is at `key`.
    pub fn exists(&self, key: &str) -> CasResult<bool> {
        Ok(self.index.row(&check_key(key)?)?.is_some())
    }

    /// Whether `object_url` is a URL of this store (an object's or a prefix's).
    pub fn owns(&self, object_url: &str) -> bool {
        self.get_object_key(object_url).is_ok()
    }

    /// How many blobs are on disk (staged files not counted).
    pub fn blob_count(&self) -> CasResult<usize> {
        Ok(self.blobs.digests()?.len())
    }

    pub(crate) fn blobs(&self) -> &Blobs {
        &self.blobs
    }

    pub(crate) fn index(&self) -> &Index {
        &self.index
    }

    /// Stores the blob, then its index row, in that order (a row never names a blob that is not yet on
    /// disk); repeats when a concurrent gc removed the blob in between (see `gc`).
    fn write(
        &self,
        key: &str,
        digest: &str,
        size: u64,
        content_type: &str,
        allow_overwrite: bool,
        store_blob: impl Fn() -> CasResult<()>,
    ) -> CasResult<String> {
        let url = self.object_url(key);
        let last_modified = rfc3339_utc(SystemTime::now());
        let row = NewRow {
            key,
            digest,
            size,
            content_type,
            last_modified: &last_modified,
            allow_overwrite,
        };
        for _ in 0..MAX_WRITE_ATTEMPTS {
            store_blob()?;
            match self.index.record(&row, &self.blobs.path(digest))? {
                Recorded::Written => return Ok(url),
                Recorded::KeyTaken => return Err(CasError::AlreadyExists { url }),
                Recorded::BlobVanished => continue,
            }
        }
        Err(CasError::BlobKeptVanishing {
            url,
            attempts: MAX_WRITE_ATTEMPTS,
        })
    }

    /// A cheap early refusal so a taken key costs no hashing or copying; the INSERT stays the authority.
    fn refuse_taken(&self, key: &str) -> CasResult<()> {
        if self.index.row(key)?.is_some() {
            return Err(CasError::AlreadyExists {
                url: self.object_url(key),
            });
        }
        Ok(())
    }

    fn row_or_not_found(&self, key: &str, object_url: &str) -> CasResult<Row> {
        self.index.row(key)?.ok_or_else(|| CasError::NotFound {
            url: object_url.to_string(),
        })
    }

    fn ensure_root(&self) -> CasResult<()> {
        if self.root.is_dir() {
            return Ok(());
        }
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.root)
            .map_err(CasError::io("create the store root", &self.root))
    }
}

/// The key as the store keeps it, by the key rule every object store holds to
/// ([`normalize_key`]: `a//./b` is `a/b`; an absolute key or one whose `..` climbs above the store is
/// refused), or why the store cannot hold it.
fn check_key(key: &str) -> CasResult<String> {
    let invalid = |reason| CasError::InvalidKey {
        key: key.to_string(),
        reason,
    };
    if key.is_empty() {
        return Err(invalid("it is empty"));
    }
    if key.contains('\0') {
        return Err(invalid("it contains a NUL byte"));
    }
    match normalize_key(key) {
        Ok(normal) if normal.is_empty() => Err(invalid("it names the store itself, not an object")),
        Ok(normal) => Ok(normal),
        Err(_) => Err(invalid(
            "it escapes the store (it is absolute, or its `..` climbs above the store)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cas::gc::GcOptions;
    use std::cell::Cell;
    use std::time::Duration;

    fn store() -> (tempfile::TempDir, ContentAddressedObjectStore) {
        let dir = tempfile::tempdir().unwrap();
        let config = CasConfig::new(dir.path().to_str().unwrap(), "openciv3").unwrap();
        (dir, ContentAddressedObjectStore::new(config))
    }

    fn age(path: &Path) {
        let file = File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(60))
            .unwrap();
    }

    /// The interleaving the gc protocol exists for, made to happen: a writer finds the blob it needs
    /// already on disk (unreferenced), then gc collects that blob before the writer records its row.
    /// The writer must notice inside its transaction and store the blob again.
    #[test]
    fn a_writer_whose_blob_gc_collected_stores_it_again() {
        let (_dir, store) = store();
        store
            .put("old", b"revived", DEFAULT_CONTENT_TYPE, false)
            .unwrap();
        store
            .put("old", b"other", DEFAULT_CONTENT_TYPE, true)
            .unwrap();
        let digest = hash_bytes(b"revived");
        let blob = store.blobs.path(&digest);
        age(&blob);

        let attempts = Cell::new(0);
        let url = store
            .write("new", &digest, 7, DEFAULT_CONTENT_TYPE, false, || {
                attempts.set(attempts.get() + 1);
                store.blobs.store_bytes(&digest, b"revived")?;
                if attempts.get() == 1 {
                    // The blob was there, so nothing was written; now gc runs before the row is.
                    let report = store.gc(&GcOptions::default())?;
                    assert_eq!(report.blobs_removed, 1);
                    assert!(!blob.exists());
                }
                Ok(())
            })
            .unwrap();
        assert_eq!(attempts.get(), 2, "the writer stored its blob again");
        assert_eq!(store.get(&url).unwrap(), b"revived");
        assert!(store
            .gc(&GcOptions::default())
            .unwrap()
            .dangling_digests
            .is_empty());
    }

    #[test]
    fn recording_a_row_for_a_missing_blob_is_refused() {
        let (_dir, store) = store();
        store.put("k", b"v", DEFAULT_CONTENT_TYPE, false).unwrap();
        let row = NewRow {
            key: "x",
            digest: "ab",
            size: 1,
            content_type: DEFAULT_CONTENT_TYPE,
            last_modified: "2026-01-01T00:00:00.000000Z",
            allow_overwrite: false,
        };
        let missing = store.root().join("nope");
        assert_eq!(
            store.index.record(&row, &missing).unwrap(),
            Recorded::BlobVanished
        );
        assert!(!store.exists("x").unwrap());
    }
}
