//! Streaming a local file into the bucket with bounded memory: one PUT for a file that fits in one part,
//! else a multipart upload whose completion is conditional (`If-None-Match: *`), so the object appears
//! whole or not at all and never replaces another.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::time::Duration;

use rusty_s3::actions::{CompleteMultipartUpload, CreateMultipartUpload, UploadPart};
use rusty_s3::S3Action;
use ureq::http::Method;

use agent_env_store::error::{StoreError, StoreResult};

use crate::client::S3Client;
use crate::open_uploads::UnderWay;
use crate::retry::{attempts_of, pause_before, Attempts, MAX_ATTEMPTS};
use crate::settings::CLASS;
use crate::wire::{header, xml_field, Access, Answer, Outgoing, REQUEST_SIGNATURE_LIFETIME};

/// The size of one part of a multipart upload, and the largest file sent in one PUT. An upload holds
/// at most a few parts in memory (see `PARTS_IN_FLIGHT`).
pub const PART_SIZE: u64 = 8 * 1024 * 1024;
/// S3 refuses uploads of more parts than this.
const MAX_PARTS: u64 = 10_000;

/// Uploads `file_path` to `key` (already normalized), write-once.
pub fn put_file(
    store: &S3Client,
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
        return store.put_body(key, Outgoing::File(&mut file, len), content_type, false);
    }
    // Refusing early saves uploading a large file only to have its completion refused.
    if store.metadata_of(key)?.is_some() {
        return Err(StoreError::object_exists(&url));
    }
    let part_size = PART_SIZE.max(len.div_ceil(MAX_PARTS));
    let upload_id = create(store, key, content_type, &url)?;
    // Until it completes or is aborted here, a command stopped at once aborts it on its way out.
    let under_way = UnderWay::note(store, key, &upload_id);
    let result = upload_parts(store, key, &upload_id, &mut file, len, part_size, &url)
        .and_then(|etags| complete(store, key, &upload_id, &etags, &url));
    match result {
        Ok(()) => Ok(url),
        Err(mut failed) => {
            if !under_way.abort() {
                // The server could not take the abort either (it is down, say): its parts stay.
                if let StoreError::Io { message, .. } = &mut failed {
                    message.push_str(&format!(
                        "; the unfinished multipart upload of {key} (upload id {upload_id}) could not be called off, so its parts stay in the bucket until its lifecycle rules remove them"
                    ));
                }
            }
            Err(failed)
        }
    }
}

fn create(store: &S3Client, key: &str, content_type: &str, url: &str) -> StoreResult<String> {
    let mut action = CreateMultipartUpload::new(&store.bucket, store.credentials.as_ref(), key);
    action
        .headers_mut()
        .insert("content-type", content_type.to_string());
    let signed = action.sign(REQUEST_SIGNATURE_LIFETIME);
    let mut response = store.wire.send_body(
        Method::POST,
        signed.as_str(),
        &[("content-type", content_type)],
        Outgoing::Bytes(&[]),
        url,
    )?;
    if !response.status().is_success() {
        return Err(store
            .wire
            .write_failure(response, "start an upload of", url));
    }
    let text = response.body_mut().read_to_string().map_err(|e| {
        let answer = format!("the answer to starting the upload of {url}");
        store.wire.reading(&answer).failed(&e)
    })?;
    let parsed = CreateMultipartUpload::parse_response(&text).map_err(|e| {
        StoreError::Internal(format!(
            "{CLASS}: {} answered the start of an upload with something that is not S3's XML ({e})",
            store.wire.endpoint()
        ))
    })?;
    Ok(parsed.upload_id().to_string())
}

/// How many parts are sent at once. Each holds one part in memory, so an upload holds at most
/// `PARTS_IN_FLIGHT + 1` parts (the one being read from the file waits for a free sender).
const PARTS_IN_FLIGHT: usize = 3;

/// Reads the file part by part and sends the parts on [`PARTS_IN_FLIGHT`] connections; the ETags come
/// back in part order. The first failure stops the reading, and it is the error returned.
fn upload_parts(
    store: &S3Client,
    key: &str,
    upload_id: &str,
    file: &mut File,
    len: u64,
    part_size: u64,
    url: &str,
) -> StoreResult<Vec<String>> {
    let parts = len.div_ceil(part_size);
    if parts > u64::from(u16::MAX) {
        return Err(StoreError::InvalidValue(format!(
            "{url}: the file needs more parts than S3 allows"
        )));
    }
    let etags: std::sync::Mutex<Vec<Option<String>>> =
        std::sync::Mutex::new(vec![None; parts as usize]);
    let failure: std::sync::Mutex<Option<StoreError>> = std::sync::Mutex::new(None);
    let failed = || failure.lock().map(|f| f.is_some()).unwrap_or(true);
    let fail = |err: StoreError| {
        if let Ok(mut slot) = failure.lock() {
            slot.get_or_insert(err);
        }
    };
    let (sender, receiver) = std::sync::mpsc::sync_channel::<(u16, Vec<u8>)>(0);
    let receiver = std::sync::Mutex::new(receiver);
    std::thread::scope(|scope| {
        for _ in 0..PARTS_IN_FLIGHT {
            scope.spawn(|| loop {
                let next = receiver.lock().ok().and_then(|r| r.recv().ok());
                let Some((number, buffer)) = next else { break };
                if failed() {
                    continue;
                }
                match send_part(store, key, upload_id, number, &buffer, url) {
                    Ok(etag) => {
                        if let Ok(mut etags) = etags.lock() {
                            etags[usize::from(number) - 1] = Some(etag);
                        }
                    }
                    Err(err) => fail(err),
                }
            });
        }
        let mut sent = 0u64;
        let mut number: u16 = 0;
        while sent < len && !failed() {
            number += 1;
            let want = part_size.min(len - sent);
            let mut buffer = Vec::with_capacity(want as usize);
            if let Err(e) = (&mut *file).take(want).read_to_end(&mut buffer) {
                fail(StoreError::io(format!("reading the file for {url}"), &e));
                break;
            }
            if buffer.len() as u64 != want {
                fail(StoreError::Io {
                    message: format!("the file for {url} shrank while it was being uploaded"),
                    raw_os_error: None,
                });
                break;
            }
            if sender.send((number, buffer)).is_err() {
                break;
            }
            sent += want;
        }
        drop(sender);
    });
    if let Some(err) = failure.into_inner().ok().flatten() {
        return Err(err);
    }
    etags
        .into_inner()
        .map_err(|_| StoreError::Internal(format!("{url}: a part's sender panicked")))?
        .into_iter()
        .enumerate()
        .map(|(i, etag)| {
            etag.ok_or_else(|| {
                StoreError::Internal(format!("{url}: part {} was never sent", i + 1))
            })
        })
        .collect()
}

/// Sends one part; its ETag.
fn send_part(
    store: &S3Client,
    key: &str,
    upload_id: &str,
    number: u16,
    buffer: &[u8],
    url: &str,
) -> StoreResult<String> {
    let action = UploadPart::new(
        &store.bucket,
        store.credentials.as_ref(),
        key,
        number,
        upload_id,
    );
    let signed = action.sign(REQUEST_SIGNATURE_LIFETIME);
    let response = store.wire.send_body(
        Method::PUT,
        signed.as_str(),
        &[],
        Outgoing::Bytes(buffer),
        &format!("part {number} of {url}"),
    )?;
    if !response.status().is_success() {
        return Err(store.wire.write_failure(response, "upload a part of", url));
    }
    header(&response, "etag").ok_or_else(|| {
        StoreError::Internal(format!(
            "{CLASS}: {} accepted part {number} of {url} without an ETag",
            store.wire.endpoint()
        ))
    })
}

/// S3 error codes that, inside an answer of 200 to a completion, mean what a 500 or a 503 would:
/// the server failed or was overloaded after it had sent the status, and the completion is sent again.
const FAILED_AFTER_ANSWERING: [&str; 3] = ["InternalError", "ServiceUnavailable", "SlowDown"];

/// Completes the upload, write-once. S3 sends a completion's 200 before the work is done, and reports a
/// failure after it in the body: one that a 500 or a 503 would have meant is sent again like them, up to
/// [`MAX_ATTEMPTS`] in all (the server's own retries counted).
fn complete(
    store: &S3Client,
    key: &str,
    upload_id: &str,
    etags: &[String],
    url: &str,
) -> StoreResult<()> {
    let mut earlier = Attempts {
        count: 0,
        waited_as_asked: Duration::ZERO,
    };
    loop {
        match complete_once(store, key, upload_id, etags, url, earlier)? {
            Completion::Done => return Ok(()),
            Completion::FailedAfterAnswering(answer) if answer.attempts < MAX_ATTEMPTS => {
                std::thread::sleep(pause_before(answer.attempts, None));
                earlier = Attempts {
                    count: answer.attempts,
                    waited_as_asked: answer.waited_as_asked,
                };
            }
            Completion::FailedAfterAnswering(answer) => {
                return Err(store
                    .wire
                    .told(&answer, "complete the upload of", url, Access::Write))
            }
        }
    }
}

/// What one sending of a completion came to, when it was no error.
enum Completion {
    Done,
    /// Answered 200 with a failure a 500 or a 503 would have meant, told as that answer (its attempts
    /// counting the earlier sendings).
    FailedAfterAnswering(Answer),
}

/// Sends the completion once (as many times as [`crate::retry`] sends any request), after `earlier`
/// attempts.
fn complete_once(
    store: &S3Client,
    key: &str,
    upload_id: &str,
    etags: &[String],
    url: &str,
    earlier: Attempts,
) -> StoreResult<Completion> {
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
    let mut response = store.wire.send_body(
        Method::POST,
        signed.as_str(),
        &[("if-none-match", "*")],
        Outgoing::Bytes(body.as_bytes()),
        &format!("the part list that completes {url}"),
    )?;
    let these = attempts_of(&response);
    let attempts = earlier.count + these.count;
    let waited_as_asked = earlier.waited_as_asked + these.waited_as_asked;
    if !response.status().is_success() {
        let mut answer = Answer::read(response);
        answer.attempts = attempts;
        answer.waited_as_asked = waited_as_asked;
        // A completion sent again whose upload is gone, and whose object is there, is one an earlier
        // attempt made (the server failed to answer it): uploads end only by completing, or by an
        // abort, which this one has not had.
        if answer.attempts > 1 && answer.code == "NoSuchUpload" && store.metadata_of(key)?.is_some()
        {
            return Ok(Completion::Done);
        }
        return Err(store
            .wire
            .told(&answer, "complete the upload of", url, Access::Write));
    }
    // S3 may answer 200 and report a failure in the body.
    let text = response.body_mut().read_to_string().map_err(|e| {
        let answer = format!("the answer to completing the upload of {url}");
        store.wire.reading(&answer).failed(&e)
    })?;
    if !text.contains("<Error>") {
        return Ok(Completion::Done);
    }
    let code = xml_field(&text, "Code").unwrap_or_default();
    let message = xml_field(&text, "Message").unwrap_or_default();
    let message = message.trim().trim_end_matches('.');
    if FAILED_AFTER_ANSWERING.contains(&code.as_str()) {
        return Ok(Completion::FailedAfterAnswering(Answer {
            // Told as the status it stands for: S3 slows its callers down with 503.
            status: if code == "InternalError" { 500 } else { 503 },
            said: if message.is_empty() {
                code.clone()
            } else {
                format!("{code}: {message}")
            },
            code,
            attempts,
            waited_as_asked,
        }));
    }
    Err(match code.as_str() {
        "PreconditionFailed" | "ConditionalRequestConflict" => StoreError::object_exists(url),
        _ => StoreError::Io {
            message: format!(
                "{CLASS}: {} failed to complete the upload of {url} ({code}: {message})",
                store.wire.endpoint(),
            ),
            raw_os_error: None,
        },
    })
}
