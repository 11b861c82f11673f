//! The limit of the call a store request is answered for. A plugin step's `host.store.*` request is
//! answered while agent-env waits for the step's `execute`, and on a thread that cannot watch the
//! step's time meanwhile: a plugin store that hung under it would hold the step past its limit and
//! then have the step's plugin blamed. So whoever answers such a request for a caller with a limit
//! ([`answering_within`]) says when the caller must have its answer, and a plugin store's call made
//! meanwhile ends by then (`plugin_stores`), leaving the caller the time to hear the store's error and
//! answer with it. The calls that ended unanswered are noted with the limit, for a caller that timed
//! out all the same to say what it was waiting on.
//!
//! The limit is the thread's while the request is answered: a store call runs on the thread that
//! answers the request that needs it.

use std::cell::RefCell;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// When the caller a store request is answered for must have its answer, and what that limit is.
#[derive(Debug)]
pub struct CallerLimit {
    until: Instant,
    /// The limit as a message says it: `step 'build''s timeout_seconds (30 s)`.
    described: String,
    /// Whether raising `timeout_seconds` in the task is what raises it (else the host's call timeout).
    own: bool,
    /// The store calls made for the caller that ended with no answer, in words, the last one last.
    unanswered: Mutex<Vec<String>>,
}

impl CallerLimit {
    /// A limit that ends at `until`: `described` says what it is, `own` whether it is the caller's
    /// own (`timeout_seconds`) rather than the host's call timeout.
    pub fn new(until: Instant, described: String, own: bool) -> CallerLimit {
        CallerLimit {
            until,
            described,
            own,
            unanswered: Mutex::new(Vec::new()),
        }
    }

    /// The time left before the limit (zero once it has passed).
    pub fn left(&self) -> Duration {
        self.until.saturating_duration_since(Instant::now())
    }

    /// What the limit is, as a message says it.
    pub fn described(&self) -> &str {
        &self.described
    }

    /// What to raise when the limit is too short for a store that is just slow.
    pub fn remedy(&self) -> &'static str {
        match self.own {
            true => "raise timeout_seconds in the task if the store is just slow",
            false => "raise AGENT_ENV_PLUGIN_CALL_TIMEOUT if the store is just slow",
        }
    }

    /// Notes a store call made for the caller that ended without an answer (`what`, in words).
    pub fn note_unanswered(&self, what: String) {
        if let Ok(mut unanswered) = self.unanswered.lock() {
            unanswered.push(what);
        }
    }

    /// The last store call made for the caller that ended without an answer, in words.
    pub fn last_unanswered(&self) -> Option<String> {
        self.unanswered.lock().ok()?.last().cloned()
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<CallerLimit>>> = const { RefCell::new(None) };
}

/// Runs `answer` (the answer to a request made for a caller with `limit`) with `limit` as the
/// thread's: the plugin store calls it makes end by it.
pub fn answering_within<R>(limit: &Arc<CallerLimit>, answer: impl FnOnce() -> R) -> R {
    let _restore = Restore(CURRENT.with(|c| c.replace(Some(limit.clone()))));
    answer()
}

/// The limit of the caller whose request this thread is answering, if any.
pub fn current() -> Option<Arc<CallerLimit>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Puts the thread's previous limit back when the answer ends (or unwinds).
struct Restore(Option<Arc<CallerLimit>>);

impl Drop for Restore {
    fn drop(&mut self) {
        let previous = self.0.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(described: &str) -> Arc<CallerLimit> {
        Arc::new(CallerLimit::new(
            Instant::now() + Duration::from_secs(60),
            described.into(),
            true,
        ))
    }

    #[test]
    fn the_limit_is_the_threads_while_the_answer_runs() {
        assert!(current().is_none());
        let outer = limit("outer");
        answering_within(&outer, || {
            assert_eq!(current().unwrap().described(), "outer");
            answering_within(&limit("inner"), || {
                assert_eq!(current().unwrap().described(), "inner");
            });
            assert_eq!(current().unwrap().described(), "outer");
            let elsewhere = std::thread::spawn(|| current().is_none()).join().unwrap();
            assert!(elsewhere, "another thread has a limit of its own");
        });
        assert!(current().is_none());
    }

    #[test]
    fn the_last_unanswered_call_is_kept() {
        let l = limit("l");
        assert_eq!(l.last_unanswered(), None);
        l.note_unanswered("first".into());
        l.note_unanswered("second".into());
        assert_eq!(l.last_unanswered().as_deref(), Some("second"));
    }
}
