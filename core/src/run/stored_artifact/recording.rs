//! A put's new version recorded in the document store, asked again while the store does not answer.
//!
//! By the time a put records its version every file is in the object store, minutes of upload
//! perhaps; a document store that blinks then (a database restarting, a connection dropped) would
//! leave them all unused. So the record is asked again, with growing pauses, for as long as a
//! task's end waits for the store (`AGENT_ENV_RECORD_WAIT_SECONDS`, default 30 s), the same errors
//! counted as passing ([`may_answer_later`]); the caller is told once the wait begins, and a cancel
//! ends it. A try whose answer was lost may have landed: before asking again, the latest version is
//! looked at, and one that names this put's object prefix and creation time is this put's.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::run::cancel::Cancel;
use crate::run::recorder::{may_answer_later, FIRST_PAUSE, LONGEST_PAUSE, SAY_WAITING_AFTER};
use crate::run::watchdog;
use crate::stores::{Document, StoreResult, VersionedEntityStore};

/// How many times a try races other writers for the next version before it gives up.
const PUT_TRIES: u32 = 10;

/// How long a record waits for the store, and whom it tells.
pub struct Patience<'a> {
    /// How long to go on asking.
    pub wait: Duration,
    /// Stops the wait.
    pub cancel: &'a Cancel,
    /// Told, with why, when the wait begins: when the first try fails, or once it has gone
    /// [`SAY_WAITING_AFTER`] unanswered, and then with the store's answer if that try fails.
    pub waiting: &'a (dyn Fn(&str) + Sync),
}

/// Writes `doc`, whose files are under `prefix`, as the next version of its id; the version, or the
/// store's last error once it refused or the wait ran out or was cancelled.
pub fn record_version(
    entities: &VersionedEntityStore<'_>,
    doc: &Document,
    prefix: &str,
    patience: &Patience<'_>,
) -> StoreResult<i64> {
    let started = Instant::now();
    let slow = || {
        (patience.waiting)(&format!(
            "it has not answered for {} s",
            crate::run::outcome::format_g(SAY_WAITING_AFTER.as_secs_f64())
        ));
    };
    let (mut answer, mut said) = match patience.wait.is_zero() {
        true => (entities.put(doc, PUT_TRIES), false),
        false => watchdog::watch(SAY_WAITING_AFTER, &slow, || entities.put(doc, PUT_TRIES)),
    };
    let mut pause = FIRST_PAUSE;
    loop {
        let e = match answer {
            Ok(version) => return Ok(version),
            Err(e) => e,
        };
        if !may_answer_later(&e) {
            return Err(e);
        }
        if let Some(version) = recorded_already(entities, doc, prefix) {
            return Ok(version);
        }
        let left = patience.wait.saturating_sub(started.elapsed());
        if left.is_zero() || patience.cancel.is_cancelled() {
            return Err(e);
        }
        if !said {
            (patience.waiting)(&e.to_string());
            said = true;
        }
        patience.cancel.pause(pause.min(left));
        pause = (pause * 2).min(LONGEST_PAUSE);
        answer = entities.put(doc, PUT_TRIES);
    }
}

/// The version of `doc`'s id that records `prefix` and `doc`'s creation time, when its latest
/// does: a try whose answer was lost landed. (The prefix alone says which files, which another put
/// of the same files names too.)
fn recorded_already(
    entities: &VersionedEntityStore<'_>,
    doc: &Document,
    prefix: &str,
) -> Option<i64> {
    let id = doc.get("id")?.as_str()?;
    let latest = entities.get(id, None).ok()??;
    let created = |d: &Document| d.get("created_at_utc").cloned();
    (latest.get("object_prefix").and_then(Value::as_str) == Some(prefix)
        && created(&latest) == created(doc))
    .then(|| latest.get("version").and_then(Value::as_i64))
    .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    use serde_json::json;

    use crate::stores::local::LocalSqliteDocumentStore;
    use crate::stores::{DocumentStore, Filter, StoreError};
    use agent_env_test_support::{Forwarding, Hooks};

    /// A document store whose first `down` inserts fail as a server that is down fails them; the
    /// first of them lands all the same when `lands` (an answer lost on the way back).
    struct Flaky {
        down: AtomicUsize,
        lands: bool,
        inserts: AtomicUsize,
    }

    impl Flaky {
        fn new(dir: &std::path::Path, down: usize, lands: bool) -> Arc<Forwarding<Flaky>> {
            let inner = LocalSqliteDocumentStore::new(dir.join("d.db"));
            Arc::new(Forwarding::new(
                Arc::new(inner),
                Flaky {
                    down: AtomicUsize::new(down),
                    lands,
                    inserts: AtomicUsize::new(0),
                },
            ))
        }
    }

    impl Hooks for Flaky {
        fn insert(&self, inner: &dyn DocumentStore, c: &str, doc: &Document) -> StoreResult<()> {
            let n = self.inserts.fetch_add(1, Ordering::SeqCst);
            let down = self.down.load(Ordering::SeqCst);
            if down > 0 {
                self.down.store(down - 1, Ordering::SeqCst);
                if self.lands && n == 0 {
                    inner.insert(c, doc)?;
                }
                return Err(StoreError::Io {
                    message: "could not reach db.internal:5432 (connection refused)".into(),
                    raw_os_error: None,
                });
            }
            inner.insert(c, doc)
        }
    }

    fn doc(prefix: &str) -> Document {
        let serde_json::Value::Object(doc) =
            json!({"id": "team/big", "type": "file", "object_prefix": prefix})
        else {
            unreachable!()
        };
        doc
    }

    /// What a record with `wait` told, and its answer.
    fn record(flaky: &Arc<Forwarding<Flaky>>, wait: Duration) -> (StoreResult<i64>, Vec<String>) {
        let docs: Arc<dyn DocumentStore> = flaky.clone();
        let entities = VersionedEntityStore::new(docs, "artifacts", &[]).unwrap();
        let told = Mutex::new(Vec::new());
        let waiting = |why: &str| told.lock().unwrap().push(why.to_string());
        let cancel = Cancel::default();
        let patience = Patience {
            wait,
            cancel: &cancel,
            waiting: &waiting,
        };
        let answer = record_version(
            &entities,
            &doc("artifacts/file/team/big/p1"),
            "artifacts/file/team/big/p1",
            &patience,
        );
        (answer, told.into_inner().unwrap())
    }

    #[test]
    fn a_store_down_for_a_moment_records_the_version_after_saying_it_waits() {
        let dir = tempfile::tempdir().unwrap();
        let flaky = Flaky::new(dir.path(), 2, false);
        let (answer, told) = record(&flaky, Duration::from_secs(30));
        assert_eq!(answer.unwrap(), 1);
        assert_eq!(
            told,
            ["could not reach db.internal:5432 (connection refused)"]
        );
        assert_eq!(flaky.inserts.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn a_try_that_landed_though_its_answer_was_lost_is_not_recorded_twice() {
        let dir = tempfile::tempdir().unwrap();
        let flaky = Flaky::new(dir.path(), 1, true);
        let (answer, _) = record(&flaky, Duration::from_secs(30));
        assert_eq!(answer.unwrap(), 1);
        assert_eq!(flaky.inserts.load(Ordering::SeqCst), 1);
        assert_eq!(flaky.inner().count("artifacts", &Filter::all()).unwrap(), 1);
    }

    #[test]
    fn no_wait_or_a_store_that_stays_down_gives_the_stores_error() {
        let dir = tempfile::tempdir().unwrap();
        let flaky = Flaky::new(dir.path(), 1, false);
        let (answer, told) = record(&flaky, Duration::ZERO);
        assert!(matches!(answer, Err(StoreError::Io { .. })), "{answer:?}");
        assert!(told.is_empty(), "{told:?}");
        let flaky = Flaky::new(dir.path(), 1_000, false);
        let (answer, told) = record(&flaky, Duration::from_millis(600));
        assert!(matches!(answer, Err(StoreError::Io { .. })), "{answer:?}");
        assert_eq!(told.len(), 1, "{told:?}");
    }
}
