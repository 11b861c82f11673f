//! The connection check `agent-env config check` runs before any work: the bucket exists, the
//! credentials may list it, and they may write to it, proven without leaving an object behind.
//!
//! Writing is proven by starting a multipart upload under a scratch key and aborting it at once: a
//! started upload is no object (nothing appears in a listing, nothing is replaced), and an aborted one
//! leaves nothing at all. Credentials that may read but not write are refused at the start; a server
//! that lets the upload start but refuses its abort is said to, since every failed upload would then
//! leave its parts in the bucket.
//!
//! Each request waits at most [`CHECK_LIMIT`], not `timeout_seconds`: a server that is paused or
//! overloaded is told within seconds, as the PostgreSQL store's check does.
//!
//! [`CHECK_LIMIT`]: crate::wire::CHECK_LIMIT

use rusty_s3::actions::{CreateMultipartUpload, ListObjectsV2};
use rusty_s3::S3Action;
use ureq::http::Method;

use agent_env_store::error::{StoreError, StoreResult};

use crate::client::S3Client;
use crate::open_uploads::abort_url;
use crate::settings::CLASS;
use crate::wire::{
    Access, Answer, GIVE_WRITE_ACCESS, REQUEST_SIGNATURE_LIFETIME, SET_WRITING_CREDENTIALS,
};

/// The folder of the scratch keys the check starts its upload under.
pub const SCRATCH_PREFIX: &str = "agent-env-check/";

/// Lists the bucket, then starts an upload under a scratch key and aborts it.
pub fn connection(client: &S3Client) -> StoreResult<()> {
    list(client)?;
    may_write(client)
}

/// One key of a listing: the bucket exists and the credentials may list it.
fn list(client: &S3Client) -> StoreResult<()> {
    let mut action = ListObjectsV2::new(&client.bucket, client.credentials.as_ref());
    action.with_max_keys(1);
    let url = action.sign(REQUEST_SIGNATURE_LIFETIME);
    let listing = format!("a listing of the bucket '{}'", client.settings.bucket);
    let response = client
        .wire
        .send_checking(Method::GET, url.as_str(), None, &listing)?;
    if response.status().is_success() {
        return Ok(());
    }
    let root = client.at.root().to_string();
    Err(match client.wire.failure(response, "list", &root) {
        // S3 says NoSuchBucket (which `failure` tells as such); a bare 404 is a server that is
        // no S3 server, or one that takes the bucket elsewhere.
        StoreError::NotFound(_) => StoreError::Config(format!(
            "{CLASS}: {} answered 404 to a listing of the bucket '{}', without an S3 error; check that {} names an S3 server, and path_style for one that takes the bucket in the path",
            client.settings.endpoint, client.settings.bucket, client.wire.endpoint_place()
        )),
        other => other,
    })
}

/// Starts a multipart upload under a scratch key and aborts it: the credentials may write, and what
/// they start they may call off.
fn may_write(client: &S3Client) -> StoreResult<()> {
    let key = scratch_key();
    let url = client.at.url(&key)?;
    let action = CreateMultipartUpload::new(&client.bucket, client.credentials.as_ref(), &key);
    let signed = action.sign(REQUEST_SIGNATURE_LIFETIME);
    let starting = format!(
        "the start of an upload to the bucket '{}'",
        client.settings.bucket
    );
    let mut response =
        client
            .wire
            .send_checking(Method::POST, signed.as_str(), Some(&[]), &starting)?;
    if !response.status().is_success() {
        let answer = Answer::read(response);
        // The listing went through: credentials refused here may read and not write.
        if answer.denied() {
            return Err(read_only(client, &answer));
        }
        return Err(client
            .wire
            .told(&answer, "start an upload of", &url, Access::Write));
    }
    let text = response
        .body_mut()
        .read_to_string()
        .map_err(|e| client.wire.reading(&starting).failed(&e))?;
    let upload_id = CreateMultipartUpload::parse_response(&text)
        .map_err(|e| {
            StoreError::Internal(format!(
                "{CLASS}: {} answered the start of an upload with something that is not S3's XML ({e})",
                client.settings.endpoint
            ))
        })?
        .upload_id()
        .to_string();
    abort(client, &key, &upload_id, &url)
}

/// Calls off the check's upload; a refusal says what stays and what it means for real uploads.
fn abort(client: &S3Client, key: &str, upload_id: &str, url: &str) -> StoreResult<()> {
    let signed = abort_url(&client.bucket, client.credentials.as_ref(), key, upload_id);
    let calling_off = format!("the abort of the upload of {url}");
    let left = format!(
        "the check's own upload of {key} (upload id {upload_id}) stays unfinished, holding no data, until the bucket's lifecycle rules remove it or it is aborted by hand"
    );
    let response = client
        .wire
        .send_checking(Method::DELETE, &signed, None, &calling_off)
        .map_err(|e| match e {
            StoreError::Io { message, .. } => StoreError::Io {
                message: format!("{message}; {left}"),
                raw_os_error: None,
            },
            other => other,
        })?;
    if response.status().is_success() {
        return Ok(());
    }
    let answer = Answer::read(response);
    Err(StoreError::Config(format!(
        "{CLASS}: these credentials may write to the bucket '{}', but {} refused to call off an upload they started ({}), so an upload that fails would leave its parts in the bucket; let them abort multipart uploads (s3:AbortMultipartUpload on the bucket's objects); {left}",
        client.settings.bucket, client.settings.endpoint, answer.said
    )))
}

/// The problem of credentials that may list the bucket and not write to it.
fn read_only(client: &S3Client, answer: &Answer) -> StoreError {
    let (who, what_to_do) = if client.credentials.is_some() {
        ("these credentials", GIVE_WRITE_ACCESS)
    } else {
        ("requests without credentials", SET_WRITING_CREDENTIALS)
    };
    StoreError::Config(format!(
        "{CLASS}: {who} may read the bucket '{}' but not write to it: {} refused to start an upload ({}), so every put would fail; {what_to_do}",
        client.settings.bucket, client.settings.endpoint, answer.said
    ))
}

/// A key of its own for each check: `agent-env-check/<process id>-<nanoseconds>`.
fn scratch_key() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{SCRATCH_PREFIX}{}-{nanos}", std::process::id())
}
