//! The stores the explorer reads, and what to do when a configured store cannot be used as the
//! explorer starts (a plugin that fails to start, a server that is not up yet, a credential not
//! set). It is left out, and [`Records`] tries it again on a later request that reads those stores,
//! at most once per interval (`[explorer] store_retry_seconds`); from the first try that opens it,
//! it is read like any other store. The explorer keeps one for the stores runs are recorded in (the
//! configured document store) and one for the object stores that hold their files. A store that
//! fails after it was read is not the business of this module: its own reconnects (a plugin store's
//! new process) handle that.
//!
//! Each request takes one [`Reading`]: the stores it reads, and why the configured one is left out
//! of them, which the answer passes on.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use agent_env::run::recorded::Recorded;
use agent_env_store::document::DocumentStore;
use agent_env_store::object::ObjectStore;
use serde_json::Value;

use crate::http::page::Page;
use crate::http::problem::{ApiError, ApiResult};

/// The stores as one try at opening them left them, and why the configured one is not among them,
/// when it is not.
pub struct Opened<S> {
    pub stores: S,
    pub left_out: Option<String>,
}

/// The record stores: the @local one and the configured one, read as one.
pub type DocumentStores = Arc<dyn DocumentStore>;

/// The object stores, in the order a URL is looked up in them: the @local one, then the configured one.
pub type ObjectStores = Vec<Arc<dyn ObjectStore>>;

impl From<Recorded> for Opened<DocumentStores> {
    fn from(recorded: Recorded) -> Opened<DocumentStores> {
        Opened {
            left_out: recorded.left_out().map(String::from),
            stores: Arc::new(recorded),
        }
    }
}

/// Where the configured store stands.
enum State<S> {
    /// It was read: the stores stay as they are for the server's life.
    Read(S),
    /// It is left out: `stores` are the others, read meanwhile.
    Out {
        stores: S,
        why: String,
        /// When it was last tried.
        tried: Instant,
        /// A request is trying it now: the others do not wait for it.
        trying: bool,
    },
}

/// Stores of the server, the configured one tried again while it is out.
pub struct Records<S> {
    every: Duration,
    state: Mutex<State<S>>,
}

/// What one request reads: the stores, and why the configured store is not among them.
pub struct Reading<S> {
    stores: S,
    left_out: Option<String>,
}

impl<S: Clone> Records<S> {
    /// The stores as they opened when the server started; a configured store left out then is
    /// tried again once `every` has passed.
    pub fn new(opened: Opened<S>, every: Duration) -> Records<S> {
        Records {
            every,
            state: Mutex::new(State::from(opened)),
        }
    }

    /// Why the configured store is left out now, and that it is tried again, when it is (nothing
    /// is tried).
    pub fn left_out(&self) -> Option<String> {
        match &*self.lock() {
            State::Read(_) => None,
            State::Out { why, .. } => Some(self.notice(why)),
        }
    }

    /// The stores a request reads. While the configured store is out and `every` has passed since
    /// it was last tried, this request tries it with `reopen` (which blocks: call it on the
    /// blocking pool), and reads it if it opens; requests that come meanwhile read without it.
    pub fn reading(&self, reopen: impl FnOnce() -> Opened<S>) -> Reading<S> {
        {
            let mut state = self.lock();
            match &mut *state {
                State::Read(stores) => return Reading::of(stores.clone(), None),
                State::Out {
                    stores,
                    why,
                    tried,
                    trying,
                } => {
                    if *trying || tried.elapsed() < self.every {
                        return Reading::of(stores.clone(), Some(self.notice(why)));
                    }
                    *trying = true;
                }
            }
        }
        let attempt = Attempt {
            records: self,
            ended: false,
        };
        let opened = reopen();
        attempt.end(opened)
    }

    /// What a request that leaves the store out says: why, and that it is tried again.
    fn notice(&self, why: &str) -> String {
        format!("{why}; tried again every {}", seconds(self.every))
    }

    fn lock(&self) -> MutexGuard<'_, State<S>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One request's try at the configured store. Dropped before it ends (its opener panicked), it
/// lets the next request try.
struct Attempt<'a, S: Clone> {
    records: &'a Records<S>,
    ended: bool,
}

impl<S: Clone> Attempt<'_, S> {
    /// Keeps what the try opened: the store read from now on, or left out until the next try.
    fn end(mut self, opened: Opened<S>) -> Reading<S> {
        self.ended = true;
        let reading = Reading::of(
            opened.stores.clone(),
            opened
                .left_out
                .as_deref()
                .map(|why| self.records.notice(why)),
        );
        *self.records.lock() = State::from(opened);
        reading
    }
}

impl<S> From<Opened<S>> for State<S> {
    /// Read, or left out as of now (tried just now, no try under way).
    fn from(opened: Opened<S>) -> State<S> {
        match opened.left_out {
            None => State::Read(opened.stores),
            Some(why) => State::Out {
                stores: opened.stores,
                why,
                tried: Instant::now(),
                trying: false,
            },
        }
    }
}

impl<S: Clone> Drop for Attempt<'_, S> {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        if let State::Out { trying, tried, .. } = &mut *self.records.lock() {
            *trying = false;
            *tried = Instant::now();
        }
    }
}

/// `30 s`, `0.5 s`.
fn seconds(d: Duration) -> String {
    format!("{} s", agent_env::run::outcome::format_g(d.as_secs_f64()))
}

impl Reading<DocumentStores> {
    /// The record stores, read as one.
    pub fn docs(&self) -> &dyn DocumentStore {
        self.stores.as_ref()
    }
}

impl Reading<ObjectStores> {
    /// The object stores, in the order a URL is looked up in them.
    pub fn objects(&self) -> &[Arc<dyn ObjectStore>] {
        &self.stores
    }
}

impl<S> Reading<S> {
    fn of(stores: S, left_out: Option<String>) -> Reading<S> {
        Reading { stores, left_out }
    }

    /// What the answer says was left out: nothing, or why the configured store was.
    pub fn warnings(&self) -> Vec<String> {
        self.left_out.iter().cloned().collect()
    }

    /// `answer` as this reading gives it: a page says what it left out, and a 404 adds that what
    /// was asked for may be in the store left out.
    pub fn page(&self, answer: ApiResult<Page>) -> ApiResult<Page> {
        answer
            .map(|mut page| {
                page.warnings = self.warnings();
                page
            })
            .map_err(|e| self.not_found(e))
    }

    /// An object the explorer makes (a run group, an instance with its progress) with `warnings`
    /// when something was left out; a 404 as [`Reading::page`] gives it.
    pub fn object(&self, answer: ApiResult<Value>) -> ApiResult<Value> {
        answer
            .map(|mut value| {
                if let (Some(why), Value::Object(map)) = (&self.left_out, &mut value) {
                    map.insert("warnings".into(), Value::from(vec![why.clone()]));
                }
                value
            })
            .map_err(|e| self.not_found(e))
    }

    /// An answer as the store gives it, no field added (a document, an object found); a 404 as
    /// [`Reading::page`] gives it.
    pub fn document<T>(&self, answer: ApiResult<T>) -> ApiResult<T> {
        answer.map_err(|e| self.not_found(e))
    }

    /// A 404 that may be wrong while a store is left out says so.
    fn not_found(&self, mut error: ApiError) -> ApiError {
        if let (Some(why), axum::http::StatusCode::NOT_FOUND, Value::String(detail)) =
            (&self.left_out, error.status, &mut error.detail)
        {
            detail.push_str(&format!("; it may be in the store left out: {why}"));
        }
        error
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_env::run::recorded::Recorded;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn opened(left_out: Option<&str>) -> Opened<DocumentStores> {
        Opened {
            stores: Arc::new(Recorded::of(Vec::new())),
            left_out: left_out.map(String::from),
        }
    }

    #[test]
    fn a_store_read_at_start_is_never_tried_again() {
        let records = Records::new(opened(None), Duration::ZERO);
        let reading = records.reading(|| panic!("not tried"));
        assert!(reading.warnings().is_empty());
        assert_eq!(records.left_out(), None);
    }

    #[test]
    fn a_store_left_out_is_tried_once_per_interval_until_it_opens() {
        let tries = AtomicUsize::new(0);
        let failing = || {
            tries.fetch_add(1, Ordering::SeqCst);
            opened(Some("down"))
        };
        let records = Records::new(opened(Some("down")), Duration::from_millis(100));
        let early = records.reading(failing);
        assert_eq!(tries.load(Ordering::SeqCst), 0, "not before the interval");
        assert_eq!(early.warnings(), vec!["down; tried again every 0.1 s"]);
        std::thread::sleep(Duration::from_millis(120));
        let tried = records.reading(failing);
        assert_eq!(tries.load(Ordering::SeqCst), 1);
        assert_eq!(tried.warnings().len(), 1);
        records.reading(failing);
        assert_eq!(tries.load(Ordering::SeqCst), 1, "the interval starts again");

        std::thread::sleep(Duration::from_millis(120));
        let read = records.reading(|| opened(None));
        assert!(read.warnings().is_empty());
        assert_eq!(records.left_out(), None);
        assert!(records
            .reading(|| panic!("not tried"))
            .warnings()
            .is_empty());
    }

    #[test]
    fn requests_during_a_try_do_not_wait_for_it() {
        let records = Records::new(opened(Some("down")), Duration::ZERO);
        let reading = records.reading(|| {
            let meanwhile = records.reading(|| panic!("one try at a time"));
            assert_eq!(meanwhile.warnings().len(), 1);
            opened(None)
        });
        assert!(reading.warnings().is_empty());
    }

    #[test]
    fn a_try_that_panics_lets_the_next_request_try() {
        let records = Records::new(opened(Some("down")), Duration::ZERO);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            records.reading(|| panic!("the opener failed"))
        }));
        assert!(caught.is_err());
        assert!(records.reading(|| opened(None)).warnings().is_empty());
    }

    #[test]
    fn answers_say_what_was_left_out() {
        let records = Records::new(opened(Some("down")), Duration::from_secs(30));
        let reading = records.reading(|| panic!("not due"));
        let notice = "down; tried again every 30 s";
        let window = crate::http::page::Window {
            limit: 10,
            offset: 0,
        };
        let page = reading.page(Ok(Page::new(Vec::new(), 0, window))).unwrap();
        assert_eq!(page.warnings, vec![notice]);
        let object = reading.object(Ok(serde_json::json!({"a": 1}))).unwrap();
        assert_eq!(object["warnings"][0], notice);
        let missing = reading
            .document::<Value>(Err(ApiError::not_found("Task 'x' (latest) not found")))
            .unwrap_err();
        assert_eq!(
            missing.detail,
            format!("Task 'x' (latest) not found; it may be in the store left out: {notice}")
        );
        let other = reading
            .document::<Value>(Err(ApiError::bad_request("bad")))
            .unwrap_err();
        assert_eq!(other.detail, "bad");
    }
}
