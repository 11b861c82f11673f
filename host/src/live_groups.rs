//! The process groups of the plugins this process started that may still hold a process: one list
//! for the whole process, kept as each plugin's exit is watched (the exit watch, a [`WatchedGroup`]: a
//! group joins when the watch starts and leaves when the watch goes, or once the group is seen empty).
//!
//! Two uses. A command stopped at once (a second Ctrl-C while a run tears down) kills every group on
//! the list before it exits ([`kill_plugin_groups`]): the kernel's parent-death signal ends each
//! plugin, but not the children a plugin started, which would keep running under init. And a run's
//! journal notes each group as it starts ([`watch_plugin_groups`]), so that the run after a SIGKILL,
//! which leaves no code of agent-env running to do it, can stop what is left of them.
//!
//! The kill runs on a thread that watches the signals (signal-hook's iterator), not in a signal
//! handler, so it may take locks and read `/proc`. Nothing here runs a watcher or drops a watch
//! while holding the list's lock: a watch dropped there would take the lock again to leave it.

use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use crate::descendants::{self, ProcessTable};

/// What the list needs of the watch of a plugin that leads a process group of its own.
pub(crate) trait WatchedGroup: Send + Sync {
    /// The plugin's pid: the group's id.
    fn leader(&self) -> i32;
    /// Whether the plugin has ended (its group may still hold its children).
    fn has_ended(&self) -> bool;
    /// SIGKILLs the whole group at once while it may still hold a process; whether it sent the signal.
    fn kill_group_now(&self) -> bool;
}

/// Told the pid of each plugin process that leads a group of its own (the group's id).
type Watcher = Arc<dyn Fn(u32) + Send + Sync>;

struct Registry {
    groups: Vec<Weak<dyn WatchedGroup>>,
    watchers: Vec<(u64, Watcher)>,
    next_watcher: u64,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    groups: Vec::new(),
    watchers: Vec::new(),
    next_watcher: 0,
});

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Puts the group `watch` leads on the list, and tells the watchers.
pub(crate) fn joined<W: WatchedGroup + 'static>(watch: &Arc<W>) {
    let listed: Weak<W> = Arc::downgrade(watch);
    let listed: Weak<dyn WatchedGroup> = listed;
    let watchers: Vec<Watcher> = {
        let mut registry = registry();
        registry.groups.push(listed);
        registry.watchers.iter().map(|(_, w)| w.clone()).collect()
    };
    let pid = watch.leader() as u32;
    for watcher in watchers {
        watcher(pid);
    }
}

/// Takes the group of the watch at `watch` (its address) off the list: its watch is going.
pub(crate) fn left(watch: *const ()) {
    registry()
        .groups
        .retain(|w| !std::ptr::eq(w.as_ptr() as *const (), watch) && w.strong_count() > 0);
}

/// Whether the group `leader` leads is on the list.
#[cfg(test)]
pub(crate) fn is_listed(leader: i32) -> bool {
    live().iter().any(|w| w.leader() == leader)
}

/// The watches of the groups on the list, taken out of the lock.
fn live() -> Vec<Arc<dyn WatchedGroup>> {
    registry().groups.iter().filter_map(Weak::upgrade).collect()
}

/// SIGKILLs the whole process group of every plugin this process started whose group may still hold
/// a process, and the descendants of each plugin still running that left its group (`setsid`), found
/// in `/proc`; returns how many groups it signalled. For a command about to exit at once: nothing is
/// waited for, and what the kill leaves as zombies is reaped by whoever inherits it.
pub fn kill_plugin_groups() -> usize {
    let watches = live();
    if watches.is_empty() {
        return 0;
    }
    // Read while the plugins still run: once one dies, its children no longer say whose they were.
    let table = ProcessTable::read();
    let escaped: Vec<_> = watches
        .iter()
        .filter(|w| !w.has_ended())
        .flat_map(|w| table.descendants_of(w.leader()))
        .collect();
    let killed = watches.iter().filter(|w| w.kill_group_now()).count();
    descendants::kill_all(&escaped, Duration::ZERO);
    killed
}

/// Watching the plugin groups started ([`watch_plugin_groups`]) until dropped.
#[must_use = "the watcher is told of no group once this is dropped"]
pub struct PluginGroupsWatched(u64);

impl Drop for PluginGroupsWatched {
    fn drop(&mut self) {
        let gone = {
            let mut registry = registry();
            let at = registry.watchers.iter().position(|(id, _)| *id == self.0);
            at.map(|at| registry.watchers.remove(at))
        };
        drop(gone);
    }
}

impl std::fmt::Debug for PluginGroupsWatched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("PluginGroupsWatched").field(&self.0).finish()
    }
}

/// Tells `watcher` the pid of each plugin process this process starts from now on that leads a
/// process group of its own (the group's id), and, at once, of each such plugin already running,
/// until the returned guard is dropped. A plugin started meanwhile may be told twice. The watcher
/// runs on the thread that started the plugin, once it runs; it must not start a plugin itself.
pub fn watch_plugin_groups(watcher: impl Fn(u32) + Send + Sync + 'static) -> PluginGroupsWatched {
    let watcher: Watcher = Arc::new(watcher);
    let (id, running) = {
        let mut registry = registry();
        let id = registry.next_watcher;
        registry.next_watcher += 1;
        registry.watchers.push((id, watcher.clone()));
        let running: Vec<Arc<dyn WatchedGroup>> =
            registry.groups.iter().filter_map(Weak::upgrade).collect();
        (id, running)
    };
    for watch in &running {
        if !watch.has_ended() {
            watcher(watch.leader() as u32);
        }
    }
    drop(running);
    PluginGroupsWatched(id)
}
