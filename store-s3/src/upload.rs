//! Streaming a local file into the bucket with bounded memory: one PUT for a file that fits in one part,
//! else a multipart upload whose completion is conditional (`If-None-Match: *`), so the object appears
//! whole or not at all and never replaces another.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use rusty_s3::actions::{
    AbortMultipartUpload, CompleteMultipartUpload, CreateMultipartUpload, UploadPart,
};
use rusty_s3::S3Action;
use ureq::http::Method;

use agent_env_store::error::{StoreError, StoreResult};
use agent_env_store::object::ObjectStore;

use crate::settings::CLASS;
use crate::store::S3ObjectStore;
use crate::wire::{header, xml_field, Outgoing, REQUEST_SIGNATURE_LIFETIME};

/// The size of one part of a multipart upload, and the largest file sent in one PUT. Memory use of an
/// upload is one part.
pub const PART_SIZE: u64 = 8 * 1024 * 1024;
/// S3 refuses uploads of more parts than this.
const MAX_PARTS: u64 = 10_000;

/// Uploads `file_path` to `key` (already normalized), write-once.
pub fn put_file(
    store: &S3ObjectStore,
    key: &str,
    file_path: &Path,
    content_type: &str,
) -> StoreResult<String> {
    let url = store.at.url(key)?;
    let mut file = File::open(file_path)
        .map_err(|e| StoreError::io(format!("reading {}", file_path.display()), &e))?;
    let len = file
        .metadata()
        .map_err(|e| StoreError::io(format!("reading {}", file_path.display()), &e))?
        .len();
    if len <= PART_SIZE {
        return store.put_body(key, Outgoing::Stream(&mut file, len), content_type, false);
    }
    // Refusing early saves uploading a large file only to have its completion refused.
    if store.exists(key)? {
        return Err(StoreError::object_exists(&url));
    }
    let part_size = PART_SIZE.max(len.div_ceil(MAX_PARTS));
    let upload_id = create(store, key, content_type, &url)?;
    let result = upload_parts(store, key, &upload_id, &mut file, len, part_size, &url)
        .and_then(|etags| complete(store, key, &upload_id, &etags, &url));
    if result.is_err() {
        abort(store, key, &upload_id);
    }
    result.map(|()| url)
}

fn create(store: &S3ObjectStore, key: &str, content_type: &str, url: &str) -> StoreResult<String> {
    let mut action = CreateMultipartUpload::new(&store.bucket, store.credentials.as_ref(), key);
    action
        .headers_mut()
        .insert("content-type", content_type.to_string());
    let signed = action.sign(REQUEST_SIGNATURE_LIFETIME);
    let mut response = store.wire.send(
        Method::POST,
        signed.as_str(),
        &[("content-type", content_type)],
        Outgoing::Empty,
    )?;
    if !response.status().is_success() {
        return Err(store.wire.failure(response, "start an upload of", url));
    }
    let text = response
        .body_mut()
        .read_to_string()
        .map_err(|e| store.io("starting an upload", &e))?;
    let parsed = CreateMultipartUpload::parse_response(&text).map_err(|e| {
        StoreError::Internal(format!(
            "{CLASS}: {} answered the start of an upload with something that is not S3's XML ({e})",
            store.wire.endpoint()
        ))
    })?;
    Ok(parsed.upload_id().to_string())
}

fn upload_parts(
    store: &S3ObjectStore,
    key: &str,
    upload_id: &str,
    file: &mut File,
    len: u64,
    part_size: u64,
    url: &str,
) -> StoreResult<Vec<String>> {
    let mut etags = Vec::new();
    let mut buffer = Vec::with_capacity(part_size as usize);
    let mut sent = 0u64;
    let mut number: u16 = 0;
    while sent < len {
        number = number.checked_add(1).ok_or_else(|| {
            StoreError::InvalidValue(format!("{url}: the file needs more parts than S3 allows"))
        })?;
        buffer.clear();
        let want = part_size.min(len - sent);
        (&mut *file)
            .take(want)
            .read_to_end(&mut buffer)
            .map_err(|e| StoreError::io(format!("reading the file for {url}"), &e))?;
        if buffer.len() as u64 != want {
            return Err(StoreError::Io {
                message: format!("the file for {url} shrank while it was being uploaded"),
                raw_os_error: None,
            });
        }
        let action = UploadPart::new(
            &store.bucket,
            store.credentials.as_ref(),
            key,
            number,
            upload_id,
        );
        let signed = action.sign(REQUEST_SIGNATURE_LIFETIME);
        let response =
            store
                .wire
                .send(Method::PUT, signed.as_str(), &[], Outgoing::Bytes(&buffer))?;
        if !response.status().is_success() {
            return Err(store.wire.failure(response, "upload a part of", url));
        }
        let etag = header(&response, "etag").ok_or_else(|| {
            StoreError::Internal(format!(
                "{CLASS}: {} accepted part {number} of {url} without an ETag",
                store.wire.endpoint()
            ))
        })?;
        etags.push(etag);
        sent += want;
    }
    Ok(etags)
}

fn complete(
    store: &S3ObjectStore,
    key: &str,
    upload_id: &str,
    etags: &[String],
    url: &str,
) -> StoreResult<()> {
    let mut action = CompleteMultipartUpload::new(
        &store.bucket,
        store.credentials.as_ref(),
        key,
        upload_id,
        etags.iter().map(String::as_str),
    );
    action.headers_mut().insert("if-none-match", "*");
    let signed = action.sign(REQUEST_SIGNATURE_LIFETIME);
    let body = action.body();
    let mut response = store.wire.send(
        Method::POST,
        signed.as_str(),
        &[("if-none-match", "*")],
        Outgoing::Bytes(body.as_bytes()),
    )?;
    if !response.status().is_success() {
        return Err(store.wire.failure(response, "complete the upload of", url));
    }
    // S3 may answer 200 and report a failure in the body.
    let text = response
        .body_mut()
        .read_to_string()
        .map_err(|e| store.io("completing an upload", &e))?;
    if text.contains("<Error>") {
        let code = xml_field(&text, "Code").unwrap_or_default();
        return Err(match code.as_str() {
            "PreconditionFailed" | "ConditionalRequestConflict" => StoreError::object_exists(url),
            _ => StoreError::Io {
                message: format!(
                    "{CLASS}: {} failed to complete the upload of {url} ({code}: {})",
                    store.wire.endpoint(),
                    xml_field(&text, "Message").unwrap_or_default()
                ),
                raw_os_error: None,
            },
        });
    }
    Ok(())
}

/// Drops the parts of an upload that will not complete; a failure here only leaves parts for the
/// bucket's lifecycle rules to collect, so it is not reported.
fn abort(store: &S3ObjectStore, key: &str, upload_id: &str) {
    let action =
        AbortMultipartUpload::new(&store.bucket, store.credentials.as_ref(), key, upload_id);
    let signed = action.sign(REQUEST_SIGNATURE_LIFETIME);
    let _ = store
        .wire
        .send(Method::DELETE, signed.as_str(), &[], Outgoing::Empty);
}
