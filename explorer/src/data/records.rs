//! The stores the explorer reads, and what to do when a configured store cannot be used: as the
//! explorer starts (a plugin that fails to start, a server that is not up yet, a credential not set),
//! or later, when it stops answering under a running explorer (its server stopped, its plugin
//! refusing). Either way it is left out: the requests read the other stores and say so, and
//! [`Records`] tries it again on a later request that reads those stores, at most once per interval
//! (`[explorer] store_retry_seconds`); from the first try that opens it, it is read like any other
//! store. The explorer keeps one for the stores runs are recorded in (the configured document store)
//! and one for the object stores that hold their files.
//!
//! Each request takes one [`Reading`]: the stores it reads, and why the configured one is left out
//! of them, which the answer passes on. A store that fails during a request ([`Sources::failure`])
//! is left out of the rest of that request, the answer says so, and the next request finds it left
//! out until its next try.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use serde_json::Value;

use crate::http::page::Page;
use crate::http::problem::{ApiError, ApiResult};

pub use super::sources::{DocumentStores, ObjectStores};

/// Why the configured store is left out, and what brings it back.
#[derive(Debug, Clone, PartialEq)]
pub struct LeftOut {
    /// The sentence naming the store, what is left out and its error.
    pub why: String,
    /// The environment variables its settings name that this process does not have: a try again
    /// cannot find them, since a running process keeps the environment it started with.
    pub unset: Vec<String>,
}

impl LeftOut {
    /// Left out for `why`; nothing a restart would mend.
    pub fn new(why: impl Into<String>) -> LeftOut {
        LeftOut {
            why: why.into(),
            unset: Vec::new(),
        }
    }

    /// What an answer says: why, and what brings the store back (a try every `every`, or a restart
    /// when a variable it needs is not set).
    pub fn notice(&self, every: Duration) -> String {
        let every = seconds(every);
        match self.unset.as_slice() {
            [] => format!("{}; tried again every {every}", self.why),
            names => format!(
                "{}; the explorer can't see an environment variable set after it started: set {} and restart `agent-env up` (a change to the config file is tried again every {every})",
                self.why,
                names.join(", ")
            ),
        }
    }
}

/// A configured store that failed during a request.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// What a list says it left out: the store, what is left out and its error.
    pub left_out: String,
    /// What a lookup that only that store could answer says: the store, and that it did not answer.
    pub unavailable: String,
}

/// The first failure of the configured store since it was opened, kept for the next request, which
/// leaves the store out from then on.
#[derive(Default)]
pub struct Fault {
    first: Mutex<Option<(Failure, Instant)>>,
}

impl Fault {
    /// Keeps `failure` unless one is kept already.
    pub fn report(&self, failure: &Failure) {
        let mut first = self.first.lock().unwrap_or_else(PoisonError::into_inner);
        if first.is_none() {
            *first = Some((failure.clone(), Instant::now()));
        }
    }

    fn take(&self) -> Option<(Failure, Instant)> {
        self.first
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

/// What [`Records`] needs of the stores it keeps: the one configured store among others.
pub trait Sources: Clone {
    /// These stores as one request reads them: a failure of the configured one is reported to
    /// `fault` and leaves it out of the rest of the request.
    fn for_request(&self, fault: &Arc<Fault>) -> Self;
    /// These stores without the configured one.
    fn without_configured(&self) -> Self;
    /// How the configured store failed during this request (stores of [`Sources::for_request`]).
    fn failure(&self) -> Option<Failure>;
}

/// The stores as one try at opening them left them, and why the configured one is not among them,
/// when it is not.
pub struct Opened<S> {
    pub stores: S,
    pub left_out: Option<LeftOut>,
}

/// Where the configured store stands.
enum State<S> {
    /// It was read: the stores stay as they are until it fails (`fault`).
    Read { stores: S, fault: Arc<Fault> },
    /// It is left out: `stores` are the others, read meanwhile.
    Out {
        stores: S,
        left_out: LeftOut,
        /// When it was last tried (or failed).
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
    every: Duration,
    /// Why the state folder can't be used, when it can't: this machine's runs can't be read.
    state_unusable: Option<String>,
}

impl<S: Sources> Records<S> {
    /// The stores as they opened when the server started; a configured store left out then (or
    /// failing later) is tried again once `every` has passed.
    pub fn new(opened: Opened<S>, every: Duration) -> Records<S> {
        Records {
            every,
            state: Mutex::new(State::from(opened)),
        }
    }

    /// Why the configured store is left out now, and what brings it back, when it is (nothing is
    /// tried).
    pub fn left_out(&self) -> Option<String> {
        let mut state = self.lock();
        settle(&mut state);
        match &*state {
            State::Read { .. } => None,
            State::Out { left_out, .. } => Some(left_out.notice(self.every)),
        }
    }

    /// The stores a request reads. While the configured store is out and `every` has passed since
    /// it was last tried, this request tries it with `reopen` (which blocks: call it on the
    /// blocking pool), and reads it if it opens; requests that come meanwhile read without it.
    pub fn reading(&self, reopen: impl FnOnce() -> Opened<S>) -> Reading<S> {
        {
            let mut state = self.lock();
            settle(&mut state);
            match &mut *state {
                State::Read { stores, fault } => {
                    return self.of(stores.for_request(fault), None);
                }
                State::Out {
                    stores,
                    left_out,
                    tried,
                    trying,
                } => {
                    if *trying || tried.elapsed() < self.every {
                        let notice = left_out.notice(self.every);
                        return self.of(stores.clone(), Some(notice));
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

    fn of(&self, stores: S, left_out: Option<String>) -> Reading<S> {
        Reading {
            stores,
            left_out,
            every: self.every,
            state_unusable: None,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<S>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A store read until now that failed since is left out as of its failure.
fn settle<S: Sources>(state: &mut State<S>) {
    let State::Read { stores, fault } = state else {
        return;
    };
    if let Some((failure, at)) = fault.take() {
        *state = State::Out {
            stores: stores.without_configured(),
            left_out: LeftOut::new(failure.left_out),
            tried: at,
            trying: false,
        };
    }
}

/// One request's try at the configured store. Dropped before it ends (its opener panicked), it
/// lets the next request try.
struct Attempt<'a, S: Sources> {
    records: &'a Records<S>,
    ended: bool,
}

impl<S: Sources> Attempt<'_, S> {
    /// Keeps what the try opened: the store read from now on, or left out until the next try.
    fn end(mut self, opened: Opened<S>) -> Reading<S> {
        self.ended = true;
        let records = self.records;
        let state = State::from(opened);
        let reading = match &state {
            State::Read { stores, fault } => records.of(stores.for_request(fault), None),
            State::Out {
                stores, left_out, ..
            } => records.of(stores.clone(), Some(left_out.notice(records.every))),
        };
        *records.lock() = state;
        reading
    }
}

impl<S> From<Opened<S>> for State<S> {
    /// Read, or left out as of now (tried just now, no try under way).
    fn from(opened: Opened<S>) -> State<S> {
        match opened.left_out {
            None => State::Read {
                stores: opened.stores,
                fault: Arc::default(),
            },
            Some(left_out) => State::Out {
                stores: opened.stores,
                left_out,
                tried: Instant::now(),
                trying: false,
            },
        }
    }
}

impl<S: Sources> Drop for Attempt<'_, S> {
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
    pub fn docs(&self) -> &dyn agent_env_store::document::DocumentStore {
        self.stores.read()
    }
}

impl Reading<ObjectStores> {
    /// The object stores, in the order a URL is looked up in them.
    pub fn objects(&self) -> &[Arc<dyn agent_env_store::object::ObjectStore>] {
        &self.stores
    }
}

impl<S: Sources> Reading<S> {
    /// This reading, its answers saying `why` the state folder can't be used when it can't.
    pub fn with_state_unusable(mut self, why: Option<String>) -> Reading<S> {
        self.state_unusable = why;
        self
    }

    /// What the answer says was left out: nothing, or why the state folder can't be read, and why
    /// the configured store was left out (before this request, or failing during it).
    pub fn warnings(&self) -> Vec<String> {
        let configured = self.left_out.clone().or_else(|| {
            self.stores
                .failure()
                .map(|f| LeftOut::new(f.left_out).notice(self.every))
        });
        self.state_unusable
            .clone()
            .into_iter()
            .chain(configured)
            .collect()
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
        let warnings = self.warnings();
        answer
            .map(|mut value| {
                if let (false, Value::Object(map)) = (warnings.is_empty(), &mut value) {
                    map.insert("warnings".into(), Value::from(warnings));
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

    /// A 404 that may be wrong while a store is left out says so; one given while the configured
    /// store failed during this request is a 503 (what was asked for may be there, and only that
    /// store can say).
    fn not_found(&self, mut error: ApiError) -> ApiError {
        if error.status != StatusCode::NOT_FOUND {
            return error;
        }
        let Value::String(detail) = &mut error.detail else {
            return error;
        };
        if let Some(why) = &self.left_out {
            detail.push_str(&format!("; it may be in the store left out: {why}"));
            return error;
        }
        self.unavailable(detail).unwrap_or(error)
    }

    /// The 503 of a lookup that found nothing (`not_found` says what, as a 404 would) while the
    /// configured store failed during this request: what was asked for may be there, and only that
    /// store can say. `None` when the store did not fail.
    pub fn unavailable(&self, not_found: &str) -> Option<ApiError> {
        let failure = self.stores.failure()?;
        Some(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "{}, so this can't be answered now ({not_found} in the other stores); the explorer tries it again after {}: ask again then",
                failure.unavailable,
                seconds(self.every)
            ),
        ))
    }

    /// Whether the answer reads every store: none was left out before this request or failed in it.
    pub fn whole(&self) -> bool {
        self.left_out.is_none() && self.stores.failure().is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::OnceLock;

    fn opened(left_out: Option<&str>) -> Opened<DocumentStores> {
        Opened {
            stores: DocumentStores::new(Vec::new()),
            left_out: left_out.map(LeftOut::new),
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
    fn a_variable_not_set_asks_for_a_restart() {
        let left_out = LeftOut {
            why: "the configured object store can't be used: env:KEY".into(),
            unset: vec!["KEY".into()],
        };
        let notice = left_out.notice(Duration::from_secs(5));
        assert!(
            notice.contains("set KEY and restart `agent-env up`"),
            "{notice}"
        );
        assert!(!notice.contains("; tried again every"), "{notice}");
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

    /// Stores whose configured one fails on cue when a request reads it.
    #[derive(Clone)]
    struct OnCue {
        down: Arc<AtomicBool>,
        configured: bool,
        fault: Option<Arc<Fault>>,
        failed: Arc<OnceLock<Failure>>,
    }

    impl OnCue {
        /// A read in the request: the configured store, when there is one, fails while down.
        fn read(&self) {
            if self.configured && self.down.load(Ordering::SeqCst) {
                let failure = Failure {
                    left_out: "the configured store did not answer: gone".into(),
                    unavailable: "the configured store did not answer (gone)".into(),
                };
                if let Some(fault) = &self.fault {
                    fault.report(&failure);
                }
                let _ = self.failed.set(failure);
            }
        }
    }

    impl Sources for OnCue {
        fn for_request(&self, fault: &Arc<Fault>) -> OnCue {
            OnCue {
                fault: Some(fault.clone()),
                failed: Arc::default(),
                ..self.clone()
            }
        }
        fn without_configured(&self) -> OnCue {
            OnCue {
                configured: false,
                ..self.clone()
            }
        }
        fn failure(&self) -> Option<Failure> {
            self.failed.get().cloned()
        }
    }

    #[test]
    fn a_store_that_fails_under_a_request_is_left_out_until_its_next_try() {
        let down = Arc::new(AtomicBool::new(false));
        let stores = OnCue {
            down: down.clone(),
            configured: true,
            fault: None,
            failed: Arc::default(),
        };
        let records = Records::new(
            Opened {
                stores: stores.clone(),
                left_out: None,
            },
            Duration::from_millis(100),
        );
        let fine = records.reading(|| panic!("read, not tried"));
        fine.stores.read();
        assert!(fine.warnings().is_empty());

        down.store(true, Ordering::SeqCst);
        let failing = records.reading(|| panic!("read, not tried"));
        failing.stores.read();
        let notice = "the configured store did not answer: gone; tried again every 0.1 s";
        assert_eq!(failing.warnings(), vec![notice]);
        let lookup = failing
            .document::<Value>(Err(ApiError::not_found("Task 'x' (latest) not found")))
            .unwrap_err();
        assert_eq!(lookup.status, StatusCode::SERVICE_UNAVAILABLE);
        let detail = lookup.detail.as_str().unwrap_or_default();
        assert!(
            detail.starts_with("the configured store did not answer (gone)")
                && detail.contains("Task 'x' (latest) not found")
                && detail.contains("tries it again after 0.1 s"),
            "{detail}"
        );

        // The next request reads without it, as if it had been left out at start.
        let next = records.reading(|| panic!("not due"));
        assert!(!next.stores.configured, "left out");
        assert_eq!(next.warnings(), vec![notice]);
        assert_eq!(records.left_out().as_deref(), Some(notice));
        let missing = next
            .document::<Value>(Err(ApiError::not_found("gone too")))
            .unwrap_err();
        assert_eq!(missing.status, StatusCode::NOT_FOUND);

        // Back: the try after the interval reads it again.
        down.store(false, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(120));
        let back = records.reading(|| Opened {
            stores: stores.clone(),
            left_out: None,
        });
        back.stores.read();
        assert!(back.warnings().is_empty());
        assert_eq!(records.left_out(), None);
    }

    #[test]
    fn a_failure_reported_before_a_reopen_does_not_leave_the_reopened_store_out() {
        let down = Arc::new(AtomicBool::new(true));
        let stores = OnCue {
            down: down.clone(),
            configured: true,
            fault: None,
            failed: Arc::default(),
        };
        let records = Records::new(
            Opened {
                stores: stores.clone(),
                left_out: Some(LeftOut::new("down at start")),
            },
            Duration::ZERO,
        );
        // A request that read the store under its old opening fails late...
        let stale = Arc::new(Fault::default());
        let late = stores.for_request(&stale);
        // ...after a try opened it again.
        down.store(false, Ordering::SeqCst);
        let reopened = records.reading(|| Opened {
            stores: stores.clone(),
            left_out: None,
        });
        down.store(true, Ordering::SeqCst);
        late.read();
        assert!(reopened.warnings().is_empty());
        assert_eq!(
            records.left_out(),
            None,
            "the old opening's fault is its own"
        );
    }
}
