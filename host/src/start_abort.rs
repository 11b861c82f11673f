//! Stopping plugin starts from another thread: a run's Ctrl-C ends the wait for a slow plugin's
//! answer to `initialize` at once, instead of after the handshake timeout, and the plugin is killed
//! and reaped; no start given the same [`StartAbort`] begins after that.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use agent_env_protocol::peer::{CloseReason, Peer};

/// A switch that stops the starts it was given to ([`PluginHost::connect_unless`]). Cheap to
/// clone; every clone is the same switch.
///
/// [`PluginHost::connect_unless`]: crate::PluginHost::connect_unless
#[derive(Clone, Default)]
pub struct StartAbort {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    aborted: AtomicBool,
    /// The connections of the starts waiting for their handshake now, by a number of their own.
    waiting: Mutex<Vec<(u64, Peer)>>,
    next: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl StartAbort {
    /// A switch not yet thrown.
    pub fn new() -> StartAbort {
        StartAbort::default()
    }

    /// Stops every start waiting for its handshake now (its wait ends at once; the start then
    /// kills its process), and every later one before it spawns anything. Cheap: it only closes
    /// the waiting connections, so a signal handler's thread can call it.
    pub fn abort(&self) {
        // Set before the list is read: a start that registers after this sees it (`enter`).
        self.inner.aborted.store(true, Ordering::SeqCst);
        for (_, peer) in lock(&self.inner.waiting).iter() {
            peer.abort(CloseReason::Aborted(
                "agent-env stopped the plugin's start".into(),
            ));
        }
    }

    /// Whether [`abort`](Self::abort) was called.
    pub fn is_aborted(&self) -> bool {
        self.inner.aborted.load(Ordering::SeqCst)
    }

    /// Notes a start waiting on `peer` for its handshake until the guard drops; `None` when the
    /// switch was thrown already.
    pub(crate) fn enter(&self, peer: &Peer) -> Option<Waiting<'_>> {
        let mut waiting = lock(&self.inner.waiting);
        // Read under the lock `abort` takes after setting the flag: either it is seen here, or
        // this start is on the list `abort` then goes through.
        if self.is_aborted() {
            return None;
        }
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        waiting.push((id, peer.clone()));
        Some(Waiting { abort: self, id })
    }
}

impl std::fmt::Debug for StartAbort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StartAbort")
            .field("aborted", &self.is_aborted())
            .finish_non_exhaustive()
    }
}

/// A start on a [`StartAbort`]'s list while it lives.
pub(crate) struct Waiting<'a> {
    abort: &'a StartAbort,
    id: u64,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        lock(&self.abort.inner.waiting).retain(|(id, _)| *id != self.id);
    }
}
