//! Sending a request again when the server was briefly unable to take it. An S3 server that is
//! overloaded answers 503 (`SlowDown`, `ServiceUnavailable`), one that failed on its side 500
//! (`InternalError`), a gateway in front of it 502 or 504, and S3 clients are expected to send such a
//! request again after a pause; so is one whose connection was refused or cut before any answer. A
//! request is sent at most [`MAX_ATTEMPTS`] times, each retry after a pause that doubles from
//! [`BASE_DELAY`] up to [`MAX_DELAY`], half of it random (so that callers slowed down together do not
//! come back together), and never shorter than the server's `Retry-After` (up to [`MAX_RETRY_AFTER`]).
//!
//! Only requests that can be sent whole again come here (every request of this store: a body is bytes
//! it still holds, or a file it rewinds). A refusal (4xx) is never sent again: it would be refused
//! again. Neither is a request that timed out: `timeout_seconds` already says how long a call may wait.
//! A body cut after its answer began is not sent again whole but resumed from where it was cut
//! (`crate::resume`), and a completion answered 200 with a failure inside is sent again by its caller
//! (`crate::upload`): both count their attempts against the same [`MAX_ATTEMPTS`], after the same pauses.

use std::time::Duration;

use ureq::http::Response;
use ureq::Body;

/// How many times one request is sent at most: the first attempt and three retries.
pub const MAX_ATTEMPTS: u32 = 4;
/// The pause before the first retry; each later retry waits twice the one before, up to [`MAX_DELAY`].
/// Short, as an overloaded S3 server usually takes the request again within moments.
pub const BASE_DELAY: Duration = Duration::from_millis(100);
/// The longest pause the doubling reaches.
pub const MAX_DELAY: Duration = Duration::from_secs(2);
/// The longest `Retry-After` honoured: a server asking for a longer wait is asked again after this
/// long, so that a call never waits minutes on a header.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(5);

/// The HTTP statuses that mean "not now" rather than "no": a server failing or overloaded (500, 503),
/// a gateway whose server is down or slow (502, 504), or a server throttling with 429 (S3 itself uses
/// 503 for that, some S3-compatible servers 429).
pub fn retryable_status(status: u16) -> bool {
    matches!(status, 429 | 500 | 502 | 503 | 504)
}

/// Whether a request that got no answer failed in a way a new connection may not: the connection was
/// refused (the server is restarting), or reset or closed before the answer came.
pub fn retryable_failure(err: &ureq::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        err,
        ureq::Error::Io(io) if matches!(
            io.kind(),
            ErrorKind::ConnectionRefused
                | ErrorKind::ConnectionReset
                | ErrorKind::ConnectionAborted
                | ErrorKind::BrokenPipe
                | ErrorKind::UnexpectedEof
        )
    )
}

/// What became of one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The outcome stands: a success, a refusal, or a failure another attempt would not mend.
    Final,
    /// Worth another attempt, no sooner than `retry_after` when the server said when.
    Again {
        /// The server's `Retry-After`, if it sent one.
        retry_after: Option<Duration>,
    },
}

/// The verdict on an attempt that got `response` or failed with `err`.
pub fn verdict(outcome: &Result<Response<Body>, ureq::Error>) -> Verdict {
    match outcome {
        Ok(response) if retryable_status(response.status().as_u16()) => Verdict::Again {
            retry_after: retry_after(response),
        },
        Err(err) if retryable_failure(err) => Verdict::Again { retry_after: None },
        _ => Verdict::Final,
    }
}

/// The outcome of the last attempt, and how many were made.
#[derive(Debug)]
pub struct Tried<T> {
    /// What the last attempt came to.
    pub outcome: T,
    /// How many attempts were made, from 1 to [`MAX_ATTEMPTS`].
    pub attempts: u32,
    /// How long, in all, the pauses between them were that the server's `Retry-After` set.
    pub waited_as_asked: Duration,
}

/// Runs `attempt` until `judge` calls its outcome final or [`MAX_ATTEMPTS`] were made, pausing before
/// each retry as the module says.
pub fn with_retries<T>(mut attempt: impl FnMut() -> T, judge: impl Fn(&T) -> Verdict) -> Tried<T> {
    let mut attempts = 1;
    let mut waited_as_asked = Duration::ZERO;
    loop {
        let outcome = attempt();
        let retry_after = match judge(&outcome) {
            Verdict::Again { retry_after } if attempts < MAX_ATTEMPTS => retry_after,
            _ => {
                return Tried {
                    outcome,
                    attempts,
                    waited_as_asked,
                }
            }
        };
        // The answer is let go first: its connection is not held through the pause.
        drop(outcome);
        let pause = pause_before_retry(attempts, retry_after, jitter());
        if set_by_retry_after(pause, retry_after) {
            waited_as_asked += pause;
        }
        std::thread::sleep(pause);
        attempts += 1;
    }
}

/// How long to wait before retry number `retry` (1 for the first): the doubled delay, of which the
/// first half is always waited and the second scaled by `jitter` (0 to 1), and at least
/// `retry_after` (capped at [`MAX_RETRY_AFTER`]).
pub fn pause_before_retry(retry: u32, retry_after: Option<Duration>, jitter: f64) -> Duration {
    let doubled = BASE_DELAY.saturating_mul(1 << retry.saturating_sub(1).min(16));
    let backoff = doubled.min(MAX_DELAY);
    let half = backoff / 2;
    let pause = half + half.mul_f64(jitter.clamp(0.0, 1.0));
    pause.max(retry_after.map_or(Duration::ZERO, |wait| wait.min(MAX_RETRY_AFTER)))
}

/// How long to wait before retry number `retry`, with this process's jitter: what a caller that
/// judges its own attempts (a completion answered 200 with an error inside, a read resumed) pauses.
pub fn pause_before(retry: u32, retry_after: Option<Duration>) -> Duration {
    pause_before_retry(retry, retry_after, jitter())
}

/// Whether `pause` is the wait the server's `retry_after` asked for (capped), not the store's own.
fn set_by_retry_after(pause: Duration, retry_after: Option<Duration>) -> bool {
    retry_after.is_some_and(|wait| !pause.is_zero() && wait.min(MAX_RETRY_AFTER) == pause)
}

/// A number from 0 to 1 that differs between calls, from the standard library's randomly keyed
/// hasher (no random-number crate for one jitter).
fn jitter() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let bits = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// The wait a `Retry-After` header asks for: a number of seconds, or an HTTP date.
pub fn retry_after(response: &Response<Body>) -> Option<Duration> {
    let value = response.headers().get("retry-after")?.to_str().ok()?.trim();
    parse_retry_after(value, jiff::Timestamp::now())
}

/// `Retry-After`'s value as a wait from `now`; a date already past is no wait.
fn parse_retry_after(value: &str, now: jiff::Timestamp) -> Option<Duration> {
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = jiff::fmt::rfc2822::parse(value).ok()?.timestamp();
    let wait = now.duration_until(at);
    Some(Duration::try_from(wait).unwrap_or(Duration::ZERO))
}

/// How a failure after retries says how many attempts were made: ` after 4 attempts`, or nothing for
/// a request sent once.
pub fn after_attempts(attempts: u32) -> String {
    if attempts > 1 {
        format!(" after {attempts} attempts")
    } else {
        String::new()
    }
}

/// How a failure after retries says the pauses the server's `Retry-After` set: `; between them it
/// waited 15 s in all, as the server's Retry-After asked (up to 5 s a pause)`, or nothing when none did.
pub fn waited_as_asked_note(waited: Duration) -> String {
    if waited.is_zero() {
        return String::new();
    }
    let seconds = (waited.as_secs_f64() * 10.0).round() / 10.0;
    format!(
        "; between attempts it waited {seconds} s in all, as the server's Retry-After asked (up to {} s a pause)",
        MAX_RETRY_AFTER.as_secs()
    )
}

/// How many attempts an answer took, and how long the pauses between them were that its
/// `Retry-After` set, kept with the response for the error that may be made of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attempts {
    /// How many attempts were made.
    pub count: u32,
    /// The pauses between them the server's `Retry-After` set, in all.
    pub waited_as_asked: Duration,
}

/// The attempts `response` took (1 and no wait when not noted).
pub fn attempts_of(response: &Response<Body>) -> Attempts {
    response
        .extensions()
        .get::<Attempts>()
        .copied()
        .unwrap_or(Attempts {
            count: 1,
            waited_as_asked: Duration::ZERO,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn the_pause_doubles_from_the_base_is_capped_and_half_of_it_is_jitter() {
        let ms = |retry, jitter| pause_before_retry(retry, None, jitter).as_millis();
        assert_eq!(
            [ms(1, 1.0), ms(2, 1.0), ms(3, 1.0), ms(4, 1.0)],
            [100, 200, 400, 800]
        );
        assert_eq!([ms(1, 0.0), ms(2, 0.0), ms(3, 0.0)], [50, 100, 200]);
        assert_eq!(ms(30, 1.0), MAX_DELAY.as_millis());
        assert_eq!(ms(1, 0.5), 75);
    }

    #[test]
    fn retry_after_lengthens_the_pause_up_to_its_cap() {
        let pause = |after: u64| pause_before_retry(1, Some(Duration::from_secs(after)), 1.0);
        assert_eq!(pause(0), Duration::from_millis(100));
        assert_eq!(pause(2), Duration::from_secs(2));
        assert_eq!(pause(3600), MAX_RETRY_AFTER);
    }

    #[test]
    fn retry_after_is_read_as_seconds_or_as_a_date() {
        let now: jiff::Timestamp = "2026-12-04T03:17:30Z".parse().unwrap();
        assert_eq!(parse_retry_after("3", now), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_retry_after("Fri, 04 Dec 2026 03:17:38 GMT", now),
            Some(Duration::from_secs(8))
        );
        assert_eq!(
            parse_retry_after("Fri, 04 Dec 2026 03:17:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
    }

    #[test]
    fn server_failures_and_throttling_are_retried_and_refusals_are_not() {
        for status in [429, 500, 502, 503, 504] {
            assert!(retryable_status(status), "{status}");
        }
        for status in [200, 400, 403, 404, 408, 409, 412, 501, 505] {
            assert!(!retryable_status(status), "{status}");
        }
        let io = |kind| ureq::Error::Io(std::io::Error::from(kind));
        use std::io::ErrorKind;
        for kind in [
            ErrorKind::ConnectionRefused,
            ErrorKind::ConnectionReset,
            ErrorKind::UnexpectedEof,
        ] {
            assert!(retryable_failure(&io(kind)), "{kind:?}");
        }
        assert!(!retryable_failure(&io(ErrorKind::PermissionDenied)));
        assert!(!retryable_failure(&ureq::Error::HostNotFound));
        assert!(!retryable_failure(&ureq::Error::Timeout(
            ureq::Timeout::RecvResponse
        )));
    }

    #[test]
    fn attempts_stop_at_a_final_outcome_or_at_the_limit() {
        let made = Cell::new(0);
        let tried = with_retries(
            || {
                made.set(made.get() + 1);
                made.get()
            },
            |n| {
                if *n < 2 {
                    Verdict::Again {
                        retry_after: Some(Duration::ZERO),
                    }
                } else {
                    Verdict::Final
                }
            },
        );
        assert_eq!((tried.outcome, tried.attempts), (2, 2));

        made.set(0);
        let tried = with_retries(
            || made.set(made.get() + 1),
            |()| Verdict::Again { retry_after: None },
        );
        assert_eq!((made.get(), tried.attempts), (MAX_ATTEMPTS, MAX_ATTEMPTS));
        assert_eq!(tried.waited_as_asked, Duration::ZERO);
        assert_eq!(after_attempts(1), "");
        assert_eq!(after_attempts(4), " after 4 attempts");
    }

    #[test]
    fn only_the_pauses_retry_after_set_are_said_as_waited_as_asked() {
        let second = Duration::from_secs(1);
        assert!(set_by_retry_after(second, Some(second)));
        assert!(set_by_retry_after(
            MAX_RETRY_AFTER,
            Some(Duration::from_secs(60))
        ));
        assert!(!set_by_retry_after(
            Duration::from_millis(80),
            Some(Duration::ZERO)
        ));
        assert!(!set_by_retry_after(Duration::from_millis(80), None));
        assert_eq!(waited_as_asked_note(Duration::ZERO), "");
        assert_eq!(
            waited_as_asked_note(Duration::from_secs(15)),
            "; between attempts it waited 15 s in all, as the server's Retry-After asked (up to 5 s a pause)"
        );
        assert!(waited_as_asked_note(Duration::from_millis(1250)).contains(" waited 1.3 s in all"));
    }
}
