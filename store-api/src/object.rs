//! The object store: write-once blobs addressed by a `/`-separated key, read back by an opaque URL.

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use crate::error::{StoreError, StoreResult};
use crate::grant::{grants_unsupported, HttpGetGrant, HttpPutGrant, UploadPolicy};

/// The content type a write gets when the caller names none. A store may read it back as unknown (`None`).
pub const DEFAULT_CONTENT_TYPE: &str = "application/octet-stream";

/// What a store knows about one object. Fields a backend does not keep are `None`. The same shape
/// crosses the wire to and from plugin stores, so it is the protocol's struct.
pub type ObjectMetadata = agent_env_protocol::methods::WireObjectMetadata;

/// A readable stream of one object's bytes.
pub type ObjectReader = Box<dyn Read + Send>;

/// A write-once blob store. Every write returns the object's URL, which every read accepts back.
///
/// Reads of an address that holds no object (an absent key, a prefix, a path below an object) fail with
/// [`StoreError::NotFound`]; a write to a taken key without `allow_overwrite` fails with
/// [`StoreError::AlreadyExists`]; a URL of another store is [`StoreError::ForeignUrl`].
///
/// Only [`ObjectStore::put`] and [`ObjectStore::get`] must be written. The file operations default to
/// going through them; the rest default to [`StoreError::unimplemented`] (`not-supported` on the wire), so
/// a store implements what it offers. The conformance kit ([`crate::kits::object`]) expects them all.
pub trait ObjectStore: Send + Sync {
    /// Writes `data` at `key`; refuses to replace an existing object unless `allow_overwrite`.
    /// `content_type` is [`DEFAULT_CONTENT_TYPE`] when the caller named none.
    fn put(
        &self,
        key: &str,
        data: &[u8],
        content_type: &str,
        allow_overwrite: bool,
    ) -> StoreResult<String>;

    /// The whole object.
    fn get(&self, object_url: &str) -> StoreResult<Vec<u8>>;

    /// Write-once upload of a local file. Stores override it to stream the file; the default reads it
    /// whole and calls [`ObjectStore::put`].
    fn put_file(&self, key: &str, file_path: &Path, content_type: &str) -> StoreResult<String> {
        let data = std::fs::read(file_path)
            .map_err(|e| StoreError::io(format!("reading {}", file_path.display()), &e))?;
        self.put(key, &data, content_type, false)
    }

    /// Write-once upload of a local file to an explicit URL of this store.
    fn put_file_at(
        &self,
        _object_url: &str,
        _file_path: &Path,
        _content_type: &str,
    ) -> StoreResult<String> {
        Err(StoreError::unimplemented("put_file_at"))
    }

    /// Metadata of the object at `key`; `None` when there is none (a prefix counts as none).
    fn get_object_metadata(&self, _key: &str) -> StoreResult<Option<ObjectMetadata>> {
        Err(StoreError::unimplemented("get_object_metadata"))
    }

    /// Metadata of the object at an explicit URL; `None` when there is none.
    fn get_object_metadata_at(&self, _object_url: &str) -> StoreResult<Option<ObjectMetadata>> {
        Err(StoreError::unimplemented("get_object_metadata_at"))
    }

    /// Keys whose text starts with `prefix` (a string prefix, not a directory: `p` matches `pother/x`),
    /// sorted by byte order.
    fn list(&self, _prefix: &str) -> StoreResult<Vec<String>> {
        Err(StoreError::unimplemented("list"))
    }

    /// Object URLs under an explicit URL prefix of this store, sorted by byte order; a URL of another
    /// store is [`StoreError::ForeignUrl`].
    fn list_at(&self, _url_prefix: &str) -> StoreResult<Vec<String>> {
        Err(StoreError::unimplemented("list_at"))
    }

    /// The URL `put(key)` returns, without writing.
    fn object_url(&self, _key: &str) -> StoreResult<String> {
        Err(StoreError::unimplemented("object_url"))
    }

    /// The key of one of this store's URLs; [`StoreError::ForeignUrl`] for any other.
    fn get_object_key(&self, _object_url: &str) -> StoreResult<String> {
        Err(StoreError::unimplemented("get_object_key"))
    }

    /// Streams the object to `dest`, creating parent directories. A missing source is
    /// [`StoreError::NotFound`]; a bad destination is the filesystem's own error ([`StoreError::Io`]).
    /// The default reads the object whole with [`ObjectStore::get`]; streaming stores override it.
    fn download_to_file(&self, object_url: &str, dest: &Path) -> StoreResult<()> {
        let data = self.get(object_url)?;
        write_to_file(&mut data.as_slice(), dest)
    }

    /// A readable stream of the object. The default wraps [`ObjectStore::get`]; streaming stores override it.
    fn open(&self, object_url: &str) -> StoreResult<ObjectReader> {
        Ok(Box::new(std::io::Cursor::new(self.get(object_url)?)))
    }

    /// Whether an object exists at `key`. The default asks [`ObjectStore::get_object_metadata`]; a store
    /// that leaves that unimplemented is asked to [`ObjectStore::read`] the key instead.
    fn exists(&self, key: &str) -> StoreResult<bool> {
        match self.get_object_metadata(key) {
            Ok(metadata) => Ok(metadata.is_some()),
            Err(StoreError::NotSupported(_)) => match self.read(key) {
                Ok(_) => Ok(true),
                Err(StoreError::NotFound(_)) => Ok(false),
                Err(err) => Err(err),
            },
            Err(err) => Err(err),
        }
    }

    /// Whether `object_url` is one of this store's URLs (an object or a prefix).
    fn owns(&self, object_url: &str) -> StoreResult<bool> {
        match self.get_object_key(object_url) {
            Ok(_) => Ok(true),
            Err(err) if err.is_value_error() => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// The object at `key`.
    fn read(&self, key: &str) -> StoreResult<Vec<u8>> {
        self.get(&self.object_url(key)?)
    }

    /// Checks that the store can serve requests now (a hosted store reaches its server, finds its bucket
    /// and is let in): what `agent-env config check` runs before any work. Stores on this machine have
    /// nothing to check.
    fn probe(&self) -> StoreResult<()> {
        Ok(())
    }

    /// Whether the store issues remote transfer grants ([`ObjectStore::issue_read_grant`] and the
    /// others). Callers check it rather than rely on the defaults failing.
    fn supports_transfer_grants(&self) -> bool {
        false
    }

    /// The certificate (PEM) a client must trust to use this store's grants, when they are served by a
    /// private CA (the local store's grant server); `None` when public CAs vouch for them.
    fn grant_trust_pem(&self) -> Option<String> {
        None
    }

    /// A signed GET of the object at `object_url`, valid for `expires_in` (the store's default lifetime
    /// when `None`). Anyone holding the grant can read the object until it expires.
    fn issue_read_grant(
        &self,
        _object_url: &str,
        _expires_in: Option<Duration>,
    ) -> StoreResult<HttpGetGrant> {
        Err(grants_unsupported("this store"))
    }

    /// A signed PUT of `object_url` that must declare `media_type` and carry at most `max_bytes`.
    fn issue_write_grant(
        &self,
        _object_url: &str,
        _media_type: &str,
        _max_bytes: u64,
        _expires_in: Option<Duration>,
    ) -> StoreResult<HttpPutGrant> {
        Err(grants_unsupported("this store"))
    }

    /// A POST policy that uploads objects of at most `max_object_bytes` to any key under `prefix_url`
    /// for the whole of `expires_in`.
    fn issue_upload_policy(
        &self,
        _prefix_url: &str,
        _max_object_bytes: u64,
        _expires_in: Duration,
    ) -> StoreResult<UploadPolicy> {
        Err(grants_unsupported("this store"))
    }
}

/// Streams `source` into the file `dest`, creating its parent folders: what `download_to_file` does once
/// a store has the object open. The file appears whole or not at all ([`crate::whole_file`]): a
/// transfer that fails midway leaves no truncated file. A bad destination is the filesystem's own
/// error ([`StoreError::Io`]).
///
/// Generic over the reader so that a `File` source keeps its concrete type down to `std::io::copy`,
/// which then copies in the kernel (`copy_file_range`) instead of through an 8 KiB buffer: three times
/// as fast for a 134 MB object here.
pub fn write_to_file<R: Read + ?Sized>(source: &mut R, dest: &Path) -> StoreResult<()> {
    crate::whole_file::write_whole(source, dest)
}
