//! One thread for the whole process that says when a piece of work is late.
//!
//! [`watch`] runs a piece of work on the caller's thread and, if it has not returned by a deadline,
//! has the watchdog thread call the caller's `overdue` callback once, while the work goes on. A
//! task's end uses it to say that the document store has not answered its write for a second.
//!
//! It used to be a thread started for each piece of work: one `clone`, a stack mapped and unmapped,
//! and two context switches for every task's end, though the store answers almost all of them within
//! a millisecond. Here a watch costs two short holds of one lock (its deadline put in a list, then
//! taken out) and nothing else while the work is on time. The thread is started on the first watch and
//! sleeps until the earliest deadline it was given (even once that watch is gone); a new watch wakes
//! it only when it is due sooner than that, or when the thread waits for none, so in a run of many
//! short writes it wakes about once a deadline's length (a second), not once a write.
//!
//! The callback is borrowed from the caller, not owned: [`watch`] takes its watch out of the list
//! before it returns (or unwinds), and waits for a call of the callback under way to return first, so
//! the watchdog never calls a callback its caller has dropped. Callbacks are called one at a time.
//! Should the thread fail to start, work runs unwatched: nothing is said early, the rest is unchanged.

use std::panic::AssertUnwindSafe;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// What the watchdog calls for a watch that is late; the caller's borrow, held by the watchdog only
/// while the watch is in its list (see [`Watch::overdue`]).
type Overdue = &'static (dyn Fn() + Sync);

/// Runs `work` on this thread; if it has not returned `after` from now, `overdue` is called once on
/// the watchdog's thread while it goes on. Its answer, and whether `overdue` was called (it has
/// returned by the time this does, or panicked: a panic is caught there and ends only that call).
pub(crate) fn watch<T>(
    after: Duration,
    overdue: &(dyn Fn() + Sync),
    work: impl FnOnce() -> T,
) -> (T, bool) {
    let Some(watchdog) = Watchdog::started() else {
        return (work(), false);
    };
    let mut watching = watchdog.add(after, overdue);
    let answer = work();
    (answer, watching.end())
}

/// The watches of the process and the thread that keeps them.
struct Watchdog {
    state: Mutex<State>,
    /// Wakes the thread: a watch due sooner than it meant to wake.
    wake: Condvar,
    /// Wakes the owners of watches waiting for a call of their callback to return.
    called: Condvar,
}

#[derive(Default)]
struct State {
    watches: Vec<Watch>,
    /// The id the next watch gets.
    next_id: u64,
    /// When the thread will wake next (or has been asked to); `None` while it waits for a watch.
    /// A watch due later does not wake it.
    wakes_at: Option<Instant>,
    /// The watch whose callback the thread is calling now.
    calling: Option<u64>,
}

struct Watch {
    id: u64,
    due: Instant,
    /// The caller's callback. Only valid while the watch is in the list and, once taken out, until
    /// the thread's call of it (if `calling` names it) returns; [`Watching::end`] makes it so.
    overdue: Overdue,
    /// The callback was called (or is being called).
    told: bool,
}

/// A watch in the list; taken out by [`Watching::end`], or when dropped (the work panicked).
struct Watching<'w> {
    watchdog: &'w Watchdog,
    id: u64,
    ended: Option<bool>,
}

impl Watching<'_> {
    /// Takes the watch out of the list, once the thread is no longer calling its callback; whether it
    /// was called.
    fn end(&mut self) -> bool {
        if let Some(told) = self.ended {
            return told;
        }
        let mut state = self.watchdog.lock();
        while state.calling == Some(self.id) {
            state = self
                .watchdog
                .called
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        let told = match state.watches.iter().position(|w| w.id == self.id) {
            Some(at) => state.watches.swap_remove(at).told,
            None => false,
        };
        self.ended = Some(told);
        told
    }
}

impl Drop for Watching<'_> {
    fn drop(&mut self) {
        self.end();
    }
}

impl Watchdog {
    /// The process's watchdog, its thread started on the first call; `None` if it could not start.
    fn started() -> Option<&'static Watchdog> {
        static WATCHDOG: Watchdog = Watchdog {
            state: Mutex::new(State {
                watches: Vec::new(),
                next_id: 0,
                wakes_at: None,
                calling: None,
            }),
            wake: Condvar::new(),
            called: Condvar::new(),
        };
        static STARTED: OnceLock<bool> = OnceLock::new();
        let started = STARTED.get_or_init(|| {
            std::thread::Builder::new()
                .name("watchdog".into())
                .spawn(|| WATCHDOG.run())
                .is_ok()
        });
        started.then_some(&WATCHDOG)
    }

    /// Puts a watch due `after` from now in the list, waking the thread if it is due sooner than the
    /// thread meant to wake.
    fn add<'w>(&'w self, after: Duration, overdue: &(dyn Fn() + Sync)) -> Watching<'w> {
        // SAFETY: only the lifetime changes. The watch holding the reference is taken out of the
        // list by `Watching::end` before `watch` returns or unwinds (its `Watching` lives on
        // `watch`'s stack and cannot be forgotten), and `end` first waits for a call of it under way
        // to return; the thread reads the reference only under the lock, while the watch is listed.
        // So it is never used after the caller's borrow ends.
        let overdue: Overdue =
            unsafe { std::mem::transmute::<&(dyn Fn() + Sync), Overdue>(overdue) };
        let due = Instant::now() + after;
        let mut state = self.lock();
        let id = state.next_id;
        state.next_id += 1;
        state.watches.push(Watch {
            id,
            due,
            overdue,
            told: false,
        });
        if state.wakes_at.is_none_or(|at| due < at) {
            state.wakes_at = Some(due);
            self.wake.notify_one();
        }
        Watching {
            watchdog: self,
            id,
            ended: None,
        }
    }

    /// The thread: calls the callback of each watch whose deadline has passed, then sleeps until the
    /// earliest deadline left (or the wake promised before, if sooner), or until a watch due sooner
    /// is added.
    fn run(&self) {
        let mut state = self.lock();
        loop {
            let now = Instant::now();
            if let Some(late) = state.watches.iter_mut().find(|w| !w.told && w.due <= now) {
                late.told = true;
                let (id, overdue) = (late.id, late.overdue);
                state.calling = Some(id);
                drop(state);
                // A callback that panics ends its own call, not the watchdog.
                let _ = std::panic::catch_unwind(AssertUnwindSafe(overdue));
                state = self.lock();
                state.calling = None;
                self.called.notify_all();
                continue;
            }
            // A wake already promised (by `add`) is kept though its watch has gone: otherwise a
            // watch added and taken out before the thread ran would leave it waiting for none, and
            // the next watch would wake it again, once a watch in a run of short ones.
            let promised = state.wakes_at.filter(|&at| at > now);
            let next = state
                .watches
                .iter()
                .filter(|w| !w.told)
                .map(|w| w.due)
                .chain(promised)
                .min();
            state.wakes_at = next;
            state = match next {
                Some(at) => {
                    self.wake
                        .wait_timeout(state, at.saturating_duration_since(now))
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
                None => self
                    .wake
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner),
            };
        }
    }

    /// The state, even if a thread panicked holding it (no change leaves it half made).
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::mpsc;

    /// Work that returns well before its deadline is never said to be late.
    #[test]
    fn work_on_time_is_not_told() {
        let calls = AtomicUsize::new(0);
        let overdue = || {
            calls.fetch_add(1, Ordering::SeqCst);
        };
        for i in 0..50 {
            let (answer, told) = watch(Duration::from_secs(3600), &overdue, || i * 2);
            assert_eq!(answer, i * 2);
            assert!(!told);
        }
        assert_eq!(calls.load(Ordering::SeqCst), 0);
    }

    /// Work still running at its deadline is told once, while it runs: here the work cannot end
    /// before it is told.
    #[test]
    fn late_work_is_told_once_while_it_runs() {
        let calls = AtomicUsize::new(0);
        let (said, heard) = mpsc::channel::<()>();
        let said = Mutex::new(said);
        let overdue = || {
            calls.fetch_add(1, Ordering::SeqCst);
            let _ = said.lock().unwrap().send(());
        };
        let (answer, told) = watch(Duration::from_millis(5), &overdue, || {
            heard.recv().unwrap();
            "done"
        });
        assert_eq!(answer, "done");
        assert!(told);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    /// A late watch due after a wake promised for a watch already gone is still told: the thread
    /// wakes for the one gone, then sleeps on to the late one's deadline.
    #[test]
    fn a_watch_due_after_a_promised_wake_is_told() {
        let overdue = || {};
        let ((), told) = watch(Duration::from_millis(5), &overdue, || ());
        assert!(!told);
        let (said, heard) = mpsc::channel::<()>();
        let said = Mutex::new(said);
        let late = || {
            let _ = said.lock().unwrap().send(());
        };
        let ((), told) = watch(Duration::from_millis(50), &late, || heard.recv().unwrap());
        assert!(told);
    }

    /// A watch's end waits for a call of its callback under way: the callback here is still running
    /// when the work returns, and has finished by the time `watch` does.
    #[test]
    fn the_end_waits_for_the_callback_to_return() {
        let finished = AtomicBool::new(false);
        let (started, callback_started) = mpsc::channel::<()>();
        let (work_done, heard_work_done) = mpsc::channel::<()>();
        let (started, heard_work_done) = (Mutex::new(started), Mutex::new(heard_work_done));
        let overdue = || {
            let _ = started.lock().unwrap().send(());
            let _ = heard_work_done.lock().unwrap().recv();
            finished.store(true, Ordering::SeqCst);
        };
        let ((), told) = watch(Duration::from_millis(5), &overdue, || {
            callback_started.recv().unwrap();
            work_done.send(()).unwrap();
        });
        assert!(told);
        assert!(finished.load(Ordering::SeqCst));
    }

    /// Watches of several threads at once: the late one is told, the ones on time are not, and a
    /// panicking callback leaves the watchdog working.
    #[test]
    fn watches_at_once_are_each_told_for_themselves() {
        std::thread::scope(|scope| {
            let late = scope.spawn(|| {
                let (said, heard) = mpsc::channel::<()>();
                let said = Mutex::new(said);
                let overdue = || {
                    let _ = said.lock().unwrap().send(());
                    panic!("a callback that panics");
                };
                watch(Duration::from_millis(5), &overdue, || heard.recv().unwrap()).1
            });
            let on_time: Vec<_> = (0..4)
                .map(|_| {
                    scope.spawn(|| {
                        let overdue = || {};
                        (0..100)
                            .filter(|_| watch(Duration::from_secs(3600), &overdue, || ()).1)
                            .count()
                    })
                })
                .collect();
            assert!(late.join().unwrap());
            for thread in on_time {
                assert_eq!(thread.join().unwrap(), 0);
            }
        });
        let (said, heard) = mpsc::channel::<()>();
        let said = Mutex::new(said);
        let overdue = || {
            let _ = said.lock().unwrap().send(());
        };
        let ((), told) = watch(Duration::from_millis(5), &overdue, || heard.recv().unwrap());
        assert!(told, "the watchdog still calls after a callback panicked");
    }

    /// Work that panics takes its watch out of the list as it unwinds.
    #[test]
    fn work_that_panics_leaves_no_watch_behind() {
        let watchdog = Watchdog::started().unwrap();
        let overdue = || {};
        let id = std::sync::atomic::AtomicU64::new(u64::MAX);
        let unwound = std::panic::catch_unwind(AssertUnwindSafe(|| {
            let watching = watchdog.add(Duration::from_secs(3600), &overdue);
            id.store(watching.id, Ordering::SeqCst);
            assert!(watchdog.lock().watches.iter().any(|w| w.id == watching.id));
            panic!("the work panics");
        }));
        assert!(unwound.is_err());
        let id = id.load(Ordering::SeqCst);
        assert_ne!(id, u64::MAX);
        assert!(!watchdog.lock().watches.iter().any(|w| w.id == id));
    }
}
