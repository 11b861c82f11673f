//! The multipart uploads this process has started and not yet completed or aborted, so that a command
//! stopped at once (a second Ctrl-C) can abort them on its way out instead of leaving their parts in
//! the bucket until a lifecycle rule collects them.
//!
//! Each upload is kept with what its abort needs (the client, the bucket and credentials to sign it
//! with when it is sent, however long the upload took), nothing of the store that started it.

use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use rusty_s3::actions::AbortMultipartUpload;
use rusty_s3::{Bucket, Credentials, S3Action};
use ureq::http::Method;

use crate::client::S3Client;
use crate::wire::{Wire, REQUEST_SIGNATURE_LIFETIME};

/// One upload under way, with what its abort needs.
struct Open {
    id: u64,
    wire: Arc<Wire>,
    bucket: Bucket,
    credentials: Option<Credentials>,
    key: String,
    upload_id: String,
}

impl Open {
    /// Sends the abort; whether the server confirmed it.
    fn abort(&self) -> bool {
        let url = abort_url(
            &self.bucket,
            self.credentials.as_ref(),
            &self.key,
            &self.upload_id,
        );
        self.wire
            .send(Method::DELETE, &url, &[])
            .is_ok_and(|r| r.status().is_success())
    }
}

/// The presigned request that aborts `upload_id` of `key`.
pub(crate) fn abort_url(
    bucket: &Bucket,
    credentials: Option<&Credentials>,
    key: &str,
    upload_id: &str,
) -> String {
    AbortMultipartUpload::new(bucket, credentials, key, upload_id)
        .sign(REQUEST_SIGNATURE_LIFETIME)
        .to_string()
}

struct Registry {
    open: Vec<Open>,
    next: u64,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    open: Vec::new(),
    next: 0,
});

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// An upload noted as under way until this drops (it completed, or its own abort was sent).
pub(crate) struct UnderWay {
    id: u64,
}

impl UnderWay {
    /// Notes the upload `upload_id` of `key` that `store` started.
    pub(crate) fn note(store: &S3Client, key: &str, upload_id: &str) -> UnderWay {
        let mut registry = registry();
        let id = registry.next;
        registry.next += 1;
        registry.open.push(Open {
            id,
            wire: store.wire.clone(),
            bucket: store.bucket.clone(),
            credentials: store.credentials.clone(),
            key: key.to_string(),
            upload_id: upload_id.to_string(),
        });
        UnderWay { id }
    }
}

impl UnderWay {
    /// Aborts the upload now (it failed), so that its parts do not stay in the bucket; whether the
    /// server confirmed it (when not, the parts stay until the bucket's lifecycle rules remove them).
    pub(crate) fn abort(self) -> bool {
        let open = {
            let mut registry = registry();
            let at = registry.open.iter().position(|open| open.id == self.id);
            at.map(|at| registry.open.swap_remove(at))
        };
        open.is_none_or(|open| open.abort())
    }
}

impl Drop for UnderWay {
    fn drop(&mut self) {
        registry().open.retain(|open| open.id != self.id);
    }
}

/// What became of the uploads a process stopped at once aborted.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Aborted {
    /// How many the server confirmed aborted (their parts are gone from the bucket).
    pub confirmed: usize,
    /// Those it did not confirm in time, or refused: their parts stay until a lifecycle rule or an
    /// abort of their own removes them.
    pub left: Vec<LeftUpload>,
}

/// An upload whose abort the server did not confirm: what an abort of one's own needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftUpload {
    /// The bucket's name.
    pub bucket: String,
    /// The object's key.
    pub key: String,
    /// The server's id of the upload, which an abort names.
    pub upload_id: String,
}

/// Aborts every multipart upload of this process still under way, in parallel, waiting at most
/// `within` for the server's answers. Meant for a process about to exit: the uploads' own threads may
/// still send parts, which the server then refuses.
pub fn abort_uploads_under_way(within: Duration) -> Aborted {
    let open = std::mem::take(&mut registry().open);
    let mut aborted = Aborted::default();
    if open.is_empty() {
        return aborted;
    }
    let (done, answers) = std::sync::mpsc::channel();
    let mut unanswered: Vec<(u64, LeftUpload)> = Vec::with_capacity(open.len());
    for upload in open {
        unanswered.push((
            upload.id,
            LeftUpload {
                bucket: upload.bucket.name().to_string(),
                key: upload.key.clone(),
                upload_id: upload.upload_id.clone(),
            },
        ));
        let done = done.clone();
        // Detached: a server that does not answer must not hold the process past `within`.
        let _ = thread::Builder::new()
            .name("s3-abort".into())
            .spawn(move || {
                let _ = done.send((upload.id, upload.abort()));
            });
    }
    drop(done);
    let deadline = Instant::now() + within;
    while !unanswered.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        match answers.recv_timeout(left) {
            Ok((id, true)) => {
                unanswered.retain(|(open, _)| *open != id);
                aborted.confirmed += 1;
            }
            Ok((_, false)) => {}
            Err(_) => break,
        }
    }
    aborted.left = unanswered.into_iter().map(|(_, upload)| upload).collect();
    aborted
}
