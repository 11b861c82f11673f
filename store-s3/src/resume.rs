//! A download that picks up where it was cut. When the connection under an object's body is reset or
//! closed before the body's end, the read asks for the rest (`Range: bytes=<received>-`) of the same
//! object (`If-Match:` the first answer's ETag, so that the bytes of an object that replaced it are
//! never stitched onto the old one's) and goes on from there. It asks as [`crate::retry`] sends any
//! request again: at most [`MAX_ATTEMPTS`] in all for the read, the first answer's own attempts
//! counted, after the same pauses.
//!
//! Only an answer of 206 whose `Content-Range` starts where the read was cut is taken as the rest. A
//! server that ignores the range answers the whole object (200): when its ETag is the first answer's,
//! the bytes that had arrived are read past, not appended again; else, as on a 412, the object was
//! replaced, and the read fails saying to read it again. A body that stalls is not resumed
//! (`timeout_seconds` already bounds a call, see `crate::stall`), nor one whose first answer carried
//! no strong ETag, as nothing would tell its object's bytes from another's.

use std::io::{ErrorKind, Read};
use std::sync::Arc;

use rusty_s3::actions::GetObject;
use rusty_s3::{Bucket, Credentials, S3Action};
use ureq::http::{Method, Response};
use ureq::Body;

use agent_env_store::error::{StoreError, StoreResult};

use crate::client::S3Client;
use crate::retry::{
    after_attempts, attempts_of, pause_before, verdict, Attempts, Verdict, MAX_ATTEMPTS,
};
use crate::settings::CLASS;
use crate::stall::Incoming;
use crate::wire::{header, Access, Answer, Wire, REQUEST_SIGNATURE_LIFETIME};

/// An object's body as it arrives, asked for again from where it was cut when its connection is.
pub struct Resuming {
    body: Incoming,
    /// How to ask for the rest; none when the read cannot be resumed (no strong ETag, or it failed).
    again: Option<Again>,
    /// The bytes of the object handed to the caller so far.
    received: u64,
    /// The object's size, from the first answer's `Content-Length`.
    total: Option<u64>,
    /// The bytes at the start of the body being read that had arrived already, to read past.
    skip: u64,
    /// The requests made for the read so far.
    attempts: u32,
    failure: Option<StoreError>,
}

/// What asking for the rest of one object takes.
struct Again {
    wire: Arc<Wire>,
    bucket: Bucket,
    credentials: Option<Credentials>,
    key: String,
    url: String,
    /// The first answer's ETag, as it came (quotes and all), sent back as `If-Match`.
    etag: String,
}

/// What the last attempt to ask for the rest came to, when it was worth another.
enum Last {
    /// The body was cut again (or first), in these words.
    Cut(String),
    /// The server answered that it was briefly unable to.
    Answer(Answer),
    /// The request got no answer.
    Unanswered(ureq::Error),
}

impl Resuming {
    /// Asks for the object at `key` (`url`) and reads its body as it arrives.
    pub fn open(client: &S3Client, key: &str, url: &str) -> StoreResult<Resuming> {
        let response = client.get_response(key, url)?;
        let attempts = attempts_of(&response).count;
        let total = header(&response, "content-length").and_then(|n| n.trim().parse().ok());
        // A weak ETag never matches If-Match, which compares strongly.
        let etag = header(&response, "etag").filter(|e| !e.starts_with("W/"));
        let again = etag.map(|etag| Again {
            wire: Arc::clone(&client.wire),
            bucket: client.bucket.clone(),
            credentials: client.credentials.clone(),
            key: key.to_string(),
            url: url.to_string(),
            etag,
        });
        Ok(Resuming {
            body: client.wire.incoming(response, url),
            again,
            received: 0,
            total,
            skip: 0,
            attempts,
            failure: None,
        })
    }

    /// The store error of the read that failed, if one did: what a caller whose copy failed reports
    /// instead of the copy's own words, which would blame the destination.
    pub fn failure(&mut self) -> Option<StoreError> {
        self.failure.take()
    }

    /// Asks for the rest of the object, the body having been cut as `cut` says, until an answer
    /// carries it or the read's attempts run out.
    fn resume(&mut self, again: Again, cut: &std::io::Error) -> StoreResult<()> {
        let mut last = Last::Cut(cut.to_string());
        let mut retry_after = None;
        while self.attempts < MAX_ATTEMPTS {
            std::thread::sleep(pause_before(self.attempts, retry_after));
            self.attempts += 1;
            let outcome = again.send(self.received);
            match (verdict(&outcome), outcome) {
                (Verdict::Again { retry_after: wait }, Ok(response)) => {
                    retry_after = wait;
                    last = Last::Answer(Answer::read(response));
                }
                (Verdict::Again { .. }, Err(err)) => {
                    retry_after = None;
                    last = Last::Unanswered(err);
                }
                (Verdict::Final, Err(err)) => {
                    let failed = again.wire.failed_call(&err, self.attempts);
                    return Err(self.noting_arrived(failed));
                }
                (Verdict::Final, Ok(response)) => return self.take_over(again, response),
            }
        }
        Err(self.gave_up(&again, last))
    }

    /// Goes on with `response`, the answer to asking for the rest, if it carries the rest.
    fn take_over(&mut self, again: Again, mut response: Response<Body>) -> StoreResult<()> {
        match response.status().as_u16() {
            206 => {
                let range = header(&response, "content-range").unwrap_or_default();
                if range_start(&range) != Some(self.received) {
                    return Err(StoreError::Io {
                        message: format!(
                            "{CLASS}: {} answered a request for the rest of {} from byte {} with another part of it (Content-Range: {range}); read it again",
                            again.wire.endpoint(),
                            again.url,
                            self.received
                        ),
                        raw_os_error: None,
                    });
                }
                self.skip = 0;
            }
            // The server ignored the range: the whole object again, whose start had arrived.
            200 if header(&response, "etag").as_deref() == Some(again.etag.as_str()) => {
                self.skip = self.received;
            }
            200 | 412 => return Err(self.replaced(&again)),
            _ => {
                response.extensions_mut().insert(Attempts {
                    count: self.attempts,
                    waited_as_asked: std::time::Duration::ZERO,
                });
                let refused = again.wire.failure(response, "read", &again.url);
                return Err(self.noting_arrived(refused));
            }
        }
        self.body = again.wire.incoming(response, &again.url);
        self.again = Some(again);
        Ok(())
    }

    /// The error of a read whose attempts ran out, the last having come to `last`.
    fn gave_up(&self, again: &Again, last: Last) -> StoreError {
        match last {
            Last::Cut(said) => StoreError::Io {
                message: format!(
                    "{CLASS}: reading {} from {} was cut off{}, with {} arrived ({said}); check that the server is running and not overloaded and that the network to it is up, then read it again",
                    again.url,
                    again.wire.endpoint(),
                    after_attempts(self.attempts),
                    self.arrived()
                ),
                raw_os_error: None,
            },
            Last::Answer(mut answer) => {
                answer.attempts = self.attempts;
                let told = again
                    .wire
                    .told(&answer, "read", &again.url, Access::Read);
                self.noting_arrived(told)
            }
            Last::Unanswered(err) => {
                self.noting_arrived(again.wire.failed_call(&err, self.attempts))
            }
        }
    }

    /// The error of reading an object that was replaced while it was being read.
    fn replaced(&self, again: &Again) -> StoreError {
        StoreError::Io {
            message: format!(
                "{CLASS}: {} was replaced on {} while it was being read: the read was cut with {} arrived, and the object there now is another; read it again",
                again.url,
                again.wire.endpoint(),
                self.arrived()
            ),
            raw_os_error: None,
        }
    }

    /// `failed`, saying how much of the object had arrived when the read was cut.
    fn noting_arrived(&self, mut failed: StoreError) -> StoreError {
        if let StoreError::Io { message, .. } = &mut failed {
            message.push_str(&format!(
                "; {} had arrived when the read was cut",
                self.arrived()
            ));
        }
        failed
    }

    /// How much of the object arrived: `300 of 1000 bytes`, or `300 bytes` when its size is unknown.
    fn arrived(&self) -> String {
        match self.total {
            Some(total) => format!("{} of {total} bytes", self.received),
            None => format!("{} bytes", self.received),
        }
    }
}

impl Read for Resuming {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            let want = usize::try_from(self.skip)
                .ok()
                .filter(|skip| *skip > 0)
                .map_or(buf.len(), |skip| skip.min(buf.len()));
            let failure = match self.body.read(&mut buf[..want]) {
                Ok(n) if self.skip == 0 => {
                    self.received += n as u64;
                    return Ok(n);
                }
                // The whole object again, ending before the bytes that had arrived did.
                Ok(0) => match self.again.take() {
                    Some(again) => self.replaced(&again),
                    None => return Ok(0),
                },
                Ok(n) => {
                    self.skip -= n as u64;
                    continue;
                }
                Err(err) if err.kind() == ErrorKind::Interrupted => return Err(err),
                Err(err) => match self.again.take() {
                    Some(again) if is_cut(&err) => match self.resume(again, &err) {
                        Ok(()) => continue,
                        Err(failure) => failure,
                    },
                    _ => {
                        self.failure = self.body.failure();
                        return Err(err);
                    }
                },
            };
            let told = std::io::Error::other(failure.to_string());
            self.failure = Some(failure);
            return Err(told);
        }
    }
}

impl Again {
    /// Asks once for the object's bytes from `from` on, if it is still the object whose ETag this is.
    fn send(&self, from: u64) -> Result<Response<Body>, ureq::Error> {
        // Signed anew each time: a read resumed may outlast a signature.
        let signed = GetObject::new(&self.bucket, self.credentials.as_ref(), &self.key)
            .sign(REQUEST_SIGNATURE_LIFETIME);
        let range = format!("bytes={from}-");
        self.wire.send_once(
            Method::GET,
            signed.as_str(),
            &[("range", &range), ("if-match", &self.etag)],
        )
    }
}

/// Whether a body's read failed because its connection was cut: reset, aborted or closed before the
/// body's end (ureq's words for a body shorter than its `Content-Length`), not stalled.
fn is_cut(err: &std::io::Error) -> bool {
    let cut = |kind: ErrorKind| {
        matches!(
            kind,
            ErrorKind::ConnectionReset
                | ErrorKind::ConnectionAborted
                | ErrorKind::UnexpectedEof
                | ErrorKind::BrokenPipe
        )
    };
    let wrapped = err
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<ureq::Error>());
    cut(err.kind()) || matches!(wrapped, Some(ureq::Error::Io(io)) if cut(io.kind()))
}

/// Where a `Content-Range` (`bytes 300-999/1000`) starts.
fn range_start(content_range: &str) -> Option<u64> {
    let range = content_range.trim().strip_prefix("bytes ")?;
    range.split('-').next()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::{is_cut, range_start};
    use std::io::{Error, ErrorKind};

    #[test]
    fn a_range_is_read_from_where_it_starts() {
        assert_eq!(range_start("bytes 300-999/1000"), Some(300));
        assert_eq!(range_start("bytes 0-0/*"), Some(0));
        assert_eq!(range_start("bytes */1000"), None);
        assert_eq!(range_start("300-999/1000"), None);
    }

    #[test]
    fn a_connection_cut_is_resumed_and_a_stall_is_not() {
        for kind in [
            ErrorKind::ConnectionReset,
            ErrorKind::ConnectionAborted,
            ErrorKind::UnexpectedEof,
            ErrorKind::BrokenPipe,
        ] {
            assert!(is_cut(&Error::from(kind)), "{kind:?}");
            let wrapped = Error::other(ureq::Error::Io(Error::from(kind)));
            assert!(is_cut(&wrapped), "wrapped {kind:?}");
        }
        assert!(!is_cut(&Error::from(ErrorKind::TimedOut)));
        assert!(!is_cut(&Error::other(ureq::Error::Timeout(
            ureq::Timeout::PerRead
        ))));
    }
}
