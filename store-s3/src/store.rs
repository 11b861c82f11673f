//! `S3ObjectStore`: the object store interface over one bucket of an S3-compatible server.

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use agent_env_store::error::{StoreError, StoreResult};
use agent_env_store::grant::{HttpGetGrant, HttpPutGrant, UploadPolicy};
use agent_env_store::object::{write_to_file, ObjectMetadata, ObjectReader, ObjectStore};

use crate::client::S3Client;
use crate::resume::Resuming;
use crate::settings::S3Settings;
use crate::wire::Outgoing;
use crate::{grants, upload};

/// Objects in one S3 bucket, addressed as `s3://<bucket>/<key>`.
///
/// Writes are write-once by a conditional put (`If-None-Match: *`), which the server checks atomically,
/// so of several writers racing for one key exactly one wins. Files larger than one part go up as a
/// multipart upload whose completion is conditional too, so an upload cut short leaves no object.
#[derive(Debug)]
pub struct S3ObjectStore {
    client: S3Client,
}

impl S3ObjectStore {
    /// A store for the bucket the settings name. Nothing is sent until the first call.
    pub fn new(settings: S3Settings) -> StoreResult<S3ObjectStore> {
        Ok(S3ObjectStore {
            client: S3Client::new(settings)?,
        })
    }

    /// The settings it was built with.
    pub fn settings(&self) -> &S3Settings {
        self.client.settings()
    }

    /// Asks the server whether the bucket exists and the credentials may list it and write to it (an
    /// upload started under `agent-env-check/` and called off, which leaves no object), each request
    /// within 10 s: what `agent-env config check` runs before any work. The error names the store, the
    /// endpoint and what to do.
    pub fn check_connection(&self) -> StoreResult<()> {
        crate::check::connection(&self.client)
    }
}

impl ObjectStore for S3ObjectStore {
    fn put(
        &self,
        key: &str,
        data: &[u8],
        content_type: &str,
        allow_overwrite: bool,
    ) -> StoreResult<String> {
        let key = self.client.at.object_key(key)?;
        self.client
            .put_body(&key, Outgoing::Bytes(data), content_type, allow_overwrite)
    }

    fn get(&self, object_url: &str) -> StoreResult<Vec<u8>> {
        let key = self.client.readable_key(object_url)?;
        let mut body = Resuming::open(&self.client, &key, object_url)?;
        let mut data = Vec::new();
        body.read_to_end(&mut data).map_err(|e| {
            body.failure()
                .unwrap_or_else(|| self.client.wire.reading(object_url).failed(&e.into()))
        })?;
        Ok(data)
    }

    fn put_file(&self, key: &str, file_path: &Path, content_type: &str) -> StoreResult<String> {
        let key = self.client.at.object_key(key)?;
        upload::put_file(&self.client, &key, file_path, content_type)
    }

    fn put_file_at(
        &self,
        object_url: &str,
        file_path: &Path,
        content_type: &str,
    ) -> StoreResult<String> {
        let key = self.client.at.key_of(object_url)?;
        self.put_file(&key, file_path, content_type)
    }

    fn get_object_metadata(&self, key: &str) -> StoreResult<Option<ObjectMetadata>> {
        let key = self.client.at.prefix_key(key)?;
        self.client.metadata_of(&key)
    }

    fn get_object_metadata_at(&self, object_url: &str) -> StoreResult<Option<ObjectMetadata>> {
        let key = self.client.at.key_of(object_url)?;
        self.client.metadata_of(&key)
    }

    fn list(&self, prefix: &str) -> StoreResult<Vec<String>> {
        if prefix.starts_with('/') || prefix.contains('\0') {
            return Err(StoreError::InvalidValue(format!(
                "Key '{prefix}' escapes the store root."
            )));
        }
        self.client.list_keys(prefix)
    }

    fn list_at(&self, url_prefix: &str) -> StoreResult<Vec<String>> {
        let prefix = self.client.at.key_of(url_prefix)?;
        self.client
            .list_keys(&prefix)?
            .iter()
            .map(|k| self.client.at.url(k))
            .collect()
    }

    fn object_url(&self, key: &str) -> StoreResult<String> {
        self.client.at.url(key)
    }

    fn get_object_key(&self, object_url: &str) -> StoreResult<String> {
        self.client.at.key_of(object_url)
    }

    fn download_to_file(&self, object_url: &str, dest: &Path) -> StoreResult<()> {
        let key = self.client.readable_key(object_url)?;
        let mut body = Resuming::open(&self.client, &key, object_url)?;
        // A read that failed is the error, not the copy's words for it, which name the destination.
        write_to_file(&mut body, dest).map_err(|e| body.failure().unwrap_or(e))
    }

    fn open(&self, object_url: &str) -> StoreResult<ObjectReader> {
        let key = self.client.readable_key(object_url)?;
        let reader: Box<dyn Read + Send> =
            Box::new(Resuming::open(&self.client, &key, object_url)?);
        Ok(reader)
    }

    fn exists(&self, key: &str) -> StoreResult<bool> {
        Ok(self.get_object_metadata(key)?.is_some())
    }

    fn probe(&self) -> StoreResult<()> {
        self.check_connection()
    }

    fn supports_transfer_grants(&self) -> bool {
        self.client.grants_supported()
    }

    fn issue_read_grant(
        &self,
        object_url: &str,
        expires_in: Option<Duration>,
    ) -> StoreResult<HttpGetGrant> {
        grants::read_grant(&self.client, object_url, expires_in)
    }

    fn issue_write_grant(
        &self,
        object_url: &str,
        media_type: &str,
        max_bytes: u64,
        expires_in: Option<Duration>,
    ) -> StoreResult<HttpPutGrant> {
        grants::write_grant(&self.client, object_url, media_type, max_bytes, expires_in)
    }

    fn issue_upload_policy(
        &self,
        prefix_url: &str,
        max_object_bytes: u64,
        expires_in: Duration,
    ) -> StoreResult<UploadPolicy> {
        grants::upload_policy(&self.client, prefix_url, max_object_bytes, expires_in)
    }
}
