//! Bodies that stop moving. `timeout_seconds` bounds each wait for a body's next bytes (ureq's
//! per-read and per-write timeouts, which start again whenever a byte moves), not a body's whole
//! transfer: a large object on a slow link that keeps moving is never cut off, and one the server
//! stops sending, or stops taking, fails the call with a sentence naming the object and what to do.

use std::io::Read;
use std::time::Duration;

use agent_env_store::error::StoreError;

use crate::settings::CLASS;

/// What to do about a stall, said after what stalled.
const WHAT_TO_DO: &str = "check that the server is running and not paused or overloaded and that the network to it is up, or, for a link that slow, raise timeout_seconds in [stores.object.config]";

/// Whether `err` is a body that stopped moving: nothing arrived (a read) or left (a write) for the
/// timeout.
pub fn is_stall(err: &ureq::Error) -> bool {
    matches!(
        err,
        ureq::Error::Timeout(ureq::Timeout::PerRead | ureq::Timeout::PerWrite)
    )
}

/// The ureq error an I/O error from a body's reader carries, if it carries one.
fn ureq_error(err: &std::io::Error) -> Option<&ureq::Error> {
    err.get_ref()?.downcast_ref::<ureq::Error>()
}

/// One body's transfer, as its failures are told: what was being done, with which server, and how
/// long a byte was waited for.
#[derive(Debug)]
pub struct Transfer {
    /// `S3ObjectStore: reading s3://b/k from http://…`.
    doing: String,
    /// How a stall is told: what did not move.
    still: &'static str,
    timeout: Duration,
}

impl Transfer {
    /// Reading `what` (an object's URL, `a listing`) from `endpoint`.
    pub fn reading(what: &str, endpoint: &str, timeout: Duration) -> Transfer {
        Transfer {
            doing: format!("{CLASS}: reading {what} from {endpoint}"),
            still: "no data arrived",
            timeout,
        }
    }

    /// Sending `target` (an object, or a part of one) to `endpoint`.
    pub fn writing(target: &str, endpoint: &str, timeout: Duration) -> Transfer {
        Transfer {
            doing: format!("{CLASS}: writing {target} to {endpoint}"),
            still: "the server took no data",
            timeout,
        }
    }

    /// The error of this transfer stalling.
    pub fn stalled(&self) -> StoreError {
        StoreError::Io {
            message: format!(
                "{} stalled: {} for {} s; {WHAT_TO_DO}",
                self.doing,
                self.still,
                self.timeout.as_secs()
            ),
            raw_os_error: None,
        }
    }

    /// The error of this transfer failing with `err`: a stall told as one, anything else in ureq's
    /// words.
    pub fn failed(&self, err: &ureq::Error) -> StoreError {
        if is_stall(err) {
            return self.stalled();
        }
        self.failed_with(err, None)
    }

    fn failed_with(&self, err: &dyn std::fmt::Display, errno: Option<i32>) -> StoreError {
        StoreError::Io {
            message: format!("{} failed: {err}", self.doing),
            raw_os_error: errno,
        }
    }

    /// The error a reader of this transfer's body returns for `err`, and the store error it stands
    /// for. A stall becomes an I/O error of kind `TimedOut` whose message is the store's sentence.
    fn read_failure(&self, err: std::io::Error) -> (std::io::Error, StoreError) {
        match ureq_error(&err) {
            Some(cause) if is_stall(cause) => {
                let stalled = self.stalled();
                let told = std::io::Error::new(std::io::ErrorKind::TimedOut, stalled.to_string());
                (told, stalled)
            }
            _ => {
                let failed = self.failed_with(&err, err.raw_os_error());
                (err, failed)
            }
        }
    }
}

/// A response body as it arrives, for a caller that reads it as a stream: a stall fails the read
/// with the store's sentence, and the first failure is kept for [`Incoming::failure`].
pub struct Incoming {
    body: ureq::BodyReader<'static>,
    transfer: Transfer,
    failure: Option<StoreError>,
}

impl Incoming {
    /// Reads `body`, whose failures are told as `transfer`'s.
    pub fn new(body: ureq::Body, transfer: Transfer) -> Incoming {
        Incoming {
            body: body.into_reader(),
            transfer,
            failure: None,
        }
    }

    /// The store error of the read that failed, if one did: what a caller whose copy failed reports
    /// instead of the copy's own words, which would blame the destination.
    pub fn failure(&mut self) -> Option<StoreError> {
        self.failure.take()
    }
}

impl Read for Incoming {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.body.read(buf).map_err(|err| {
            if err.kind() == std::io::ErrorKind::Interrupted {
                return err;
            }
            let (told, failure) = self.transfer.read_failure(err);
            self.failure.get_or_insert(failure);
            told
        })
    }
}
