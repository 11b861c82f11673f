//! [`StoreSet`]: one store per kind, each built on first use by a builder the caller gives (the
//! configuration's, held by a session, or a run's @local stores) and then reused for the set's life.
//!
//! A build may take a while and may call into a plugin (a store a plugin provides is opened by a
//! `store.open` request), and while the host waits for a plugin's answer it answers the plugin's own
//! requests on the waiting thread, among them a step's `host.store.*` request for a store of this
//! set. So no lock is held while a store builds: another thread asking for the kind being built
//! waits for that build, and the thread that is building it, asked again on its own stack, builds
//! one of its own for that request rather than wait for itself.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, ThreadId};

use agent_env_store::document::DocumentStore;
use agent_env_store::error::{StoreError, StoreResult};
use agent_env_store::image::ImageStore;
use agent_env_store::object::ObjectStore;
use agent_env_store::secret::SecretStore;
use agent_env_store::AnyStore;
use agent_env_store::StoreKind;

type Builder = dyn Fn(StoreKind) -> StoreResult<AnyStore> + Send + Sync;

/// Where one kind's store is.
enum Slot {
    /// Built, and reused from now on.
    Built(AnyStore),
    /// Being built by this thread.
    Building(ThreadId),
}

/// The configured stores of one process: each built on first use and then reused.
pub struct StoreSet {
    builder: Box<Builder>,
    slots: Mutex<HashMap<StoreKind, Slot>>,
    /// Woken when a build ends, for the threads waiting for it.
    built: Condvar,
}

/// What a caller of [`StoreSet::get`] is to do.
enum Turn {
    Take(AnyStore),
    Build,
    BuildUncached,
}

impl StoreSet {
    /// Stores made by `builder` (called once per kind that builds, unless a build asks for its own
    /// kind again: see the module's doc).
    pub fn new(
        builder: impl Fn(StoreKind) -> StoreResult<AnyStore> + Send + Sync + 'static,
    ) -> Self {
        StoreSet {
            builder: Box::new(builder),
            slots: Mutex::new(HashMap::new()),
            built: Condvar::new(),
        }
    }

    /// The store of a kind, building it on first use.
    pub fn get(&self, kind: StoreKind) -> StoreResult<AnyStore> {
        match self.turn(kind)? {
            Turn::Take(store) => Ok(store),
            Turn::BuildUncached => self.build(kind),
            Turn::Build => {
                let mut ending = BuildEnding { set: self, kind };
                let store = self.build(kind)?;
                ending.keep(store.clone());
                Ok(store)
            }
        }
    }

    /// Whether `kind`'s store is there to take, or this thread is to build it; waits while another
    /// thread builds it.
    fn turn(&self, kind: StoreKind) -> StoreResult<Turn> {
        let me = thread::current().id();
        let mut slots = self.lock_slots(kind)?;
        loop {
            match slots.get(&kind) {
                Some(Slot::Built(store)) => return Ok(Turn::Take(store.clone())),
                Some(Slot::Building(builder)) if *builder == me => return Ok(Turn::BuildUncached),
                Some(Slot::Building(_)) => {
                    slots = self.built.wait(slots).map_err(|_| panicked_build(kind))?;
                }
                None => {
                    slots.insert(kind, Slot::Building(me));
                    return Ok(Turn::Build);
                }
            }
        }
    }

    fn build(&self, kind: StoreKind) -> StoreResult<AnyStore> {
        let store = (self.builder)(kind)?;
        if store.kind() != kind {
            return Err(wrong_kind(kind, store.kind()));
        }
        Ok(store)
    }

    fn lock_slots(&self, kind: StoreKind) -> StoreResult<MutexGuard<'_, HashMap<StoreKind, Slot>>> {
        self.slots.lock().map_err(|_| panicked_build(kind))
    }

    /// The warnings of every store built so far, since they were last taken (see
    /// [`AnyStore::take_warnings`]), for the caller to show.
    pub fn take_warnings(&self) -> Vec<String> {
        match self.slots.lock() {
            Ok(slots) => slots
                .values()
                .filter_map(|slot| match slot {
                    Slot::Built(store) => Some(store),
                    Slot::Building(_) => None,
                })
                .flat_map(AnyStore::take_warnings)
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    pub fn object(&self) -> StoreResult<Arc<dyn ObjectStore>> {
        match self.get(StoreKind::Object)? {
            AnyStore::Object(s) => Ok(s),
            other => Err(wrong_kind(StoreKind::Object, other.kind())),
        }
    }

    pub fn document(&self) -> StoreResult<Arc<dyn DocumentStore>> {
        match self.get(StoreKind::Document)? {
            AnyStore::Document(s) => Ok(s),
            other => Err(wrong_kind(StoreKind::Document, other.kind())),
        }
    }

    pub fn image(&self) -> StoreResult<Arc<dyn ImageStore>> {
        match self.get(StoreKind::Image)? {
            AnyStore::Image(s) => Ok(s),
            other => Err(wrong_kind(StoreKind::Image, other.kind())),
        }
    }

    pub fn secret(&self) -> StoreResult<Arc<dyn SecretStore>> {
        match self.get(StoreKind::Secret)? {
            AnyStore::Secret(s) => Ok(s),
            other => Err(wrong_kind(StoreKind::Secret, other.kind())),
        }
    }
}

/// The end of one build: the store kept for later callers, or (a failed build, or a panic) the
/// kind left to be built again by the next caller; either way the threads waiting are woken.
struct BuildEnding<'a> {
    set: &'a StoreSet,
    kind: StoreKind,
}

impl BuildEnding<'_> {
    fn keep(&mut self, store: AnyStore) {
        let mut slots = self.set.slots.lock().unwrap_or_else(|p| p.into_inner());
        slots.insert(self.kind, Slot::Built(store));
    }
}

impl Drop for BuildEnding<'_> {
    fn drop(&mut self) {
        let mut slots = self.set.slots.lock().unwrap_or_else(|p| p.into_inner());
        if matches!(slots.get(&self.kind), Some(Slot::Building(_))) {
            slots.remove(&self.kind);
        }
        drop(slots);
        self.set.built.notify_all();
    }
}

fn panicked_build(kind: StoreKind) -> StoreError {
    StoreError::Internal(format!(
        "the {kind} store cannot be built: another store's build in this process failed with a panic, a bug in agent-env; run the command again, and report it if it happens again"
    ))
}

/// A wrong-kind answer from a builder, which a correct builder never gives.
fn wrong_kind(wanted: StoreKind, got: StoreKind) -> StoreError {
    StoreError::Internal(format!("asked for the {wanted} store, built a {got} store"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    use std::sync::{OnceLock, Weak};
    use std::time::Duration;

    struct Named(&'static str);

    impl SecretStore for Named {
        fn get(&self, _name: &str) -> StoreResult<Option<String>> {
            Ok(Some(self.0.to_string()))
        }
    }

    fn secret(name: &'static str) -> AnyStore {
        AnyStore::Secret(Arc::new(Named(name)))
    }

    fn value_of(set: &StoreSet) -> String {
        set.secret().unwrap().get("x").unwrap().unwrap()
    }

    /// Runs `f` on a thread of its own and fails the test when it has not finished in 20 s (a
    /// deadlock), rather than hang the test run.
    fn within_20s<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (done, finished) = mpsc::channel();
        thread::spawn(move || {
            let _ = done.send(f());
        });
        finished
            .recv_timeout(Duration::from_secs(20))
            .expect("the store set deadlocked")
    }

    #[test]
    fn a_build_that_asks_for_its_own_kind_again_gets_a_store_of_its_own_and_no_deadlock() {
        // As when the host, waiting for a plugin's `store.open` answer, answers that plugin's step
        // asking for the same store, on the same thread.
        let calls = within_20s(|| {
            let this: Arc<OnceLock<Weak<StoreSet>>> = Arc::new(OnceLock::new());
            let calls = Arc::new(AtomicUsize::new(0));
            let (seen, counted) = (this.clone(), calls.clone());
            let set = Arc::new(StoreSet::new(move |_| {
                if counted.fetch_add(1, Ordering::SeqCst) == 0 {
                    let set = seen.get().and_then(Weak::upgrade).unwrap();
                    assert_eq!(value_of(&set), "nested");
                    return Ok(secret("outer"));
                }
                Ok(secret("nested"))
            }));
            this.set(Arc::downgrade(&set)).unwrap();
            assert_eq!(value_of(&set), "outer");
            // The outer build is the one kept.
            assert_eq!(value_of(&set), "outer");
            calls.load(Ordering::SeqCst)
        });
        assert_eq!(calls, 2);
    }

    #[test]
    fn threads_asking_while_a_store_builds_wait_for_that_build() {
        let calls = within_20s(|| {
            let calls = Arc::new(AtomicUsize::new(0));
            let counted = calls.clone();
            let set = Arc::new(StoreSet::new(move |_| {
                counted.fetch_add(1, Ordering::SeqCst);
                thread::sleep(Duration::from_millis(50));
                Ok(secret("one"))
            }));
            let askers: Vec<_> = (0..4)
                .map(|_| {
                    let set = set.clone();
                    thread::spawn(move || value_of(&set))
                })
                .collect();
            for asker in askers {
                assert_eq!(asker.join().unwrap(), "one");
            }
            calls.load(Ordering::SeqCst)
        });
        assert_eq!(calls, 1);
    }

    #[test]
    fn a_failed_build_is_tried_again_by_the_next_caller_and_wakes_those_waiting() {
        within_20s(|| {
            let calls = Arc::new(AtomicUsize::new(0));
            let counted = calls.clone();
            let set = Arc::new(StoreSet::new(move |_| {
                thread::sleep(Duration::from_millis(30));
                match counted.fetch_add(1, Ordering::SeqCst) {
                    0 => Err(StoreError::Config("not yet".into())),
                    _ => Ok(secret("later")),
                }
            }));
            let askers: Vec<_> = (0..3)
                .map(|_| {
                    let set = set.clone();
                    thread::spawn(move || set.secret().map(|s| s.get("x").unwrap().unwrap()))
                })
                .collect();
            let answers: Vec<_> = askers.into_iter().map(|a| a.join().unwrap()).collect();
            assert_eq!(
                answers.iter().filter(|a| a.is_err()).count(),
                1,
                "{answers:?}"
            );
            assert_eq!(value_of(&set), "later");
        });
    }

    #[test]
    fn a_build_that_panics_leaves_the_kind_to_be_built_again() {
        within_20s(|| {
            let calls = Arc::new(AtomicUsize::new(0));
            let counted = calls.clone();
            let set = Arc::new(StoreSet::new(move |_| {
                if counted.fetch_add(1, Ordering::SeqCst) == 0 {
                    panic!("a builder's bug");
                }
                Ok(secret("second"))
            }));
            let first = set.clone();
            assert!(thread::spawn(move || value_of(&first)).join().is_err());
            assert_eq!(value_of(&set), "second");
        });
    }
}
