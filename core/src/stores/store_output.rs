//! Who hears what plugin stores write to stderr. A store call belongs to no run or command of its own
//! (one store set serves the whole invocation, its runs, the explorer's requests), so the lines a store
//! plugin writes go to whoever listens to the invocation's store output now: a run while it runs (its
//! output and its log, as its plugin steps' lines do), the CLI under `-v`; with nobody listening they
//! are dropped (the host still keeps each plugin's stderr tail for its failure messages and `plugin show`).
//!
//! The listener that began last hears, alone: a run inside a `-v` command takes the lines to its own
//! output and log, and hands them back when it ends, so no line is shown twice.
//!
//! A plugin's stderr is read on a thread of its own, so a line written just before an answer may
//! arrive after it. A listener that stops first has the pools that report here catch up (every line
//! their plugins wrote until then is handed over), so the last lines of a run reach its log.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, Weak};
use std::time::Duration;

use agent_env_host::{HostServices, PluginHost};

/// How long a listener that stops waits for the lines already written to arrive.
const CATCH_UP_WITHIN: Duration = Duration::from_millis(500);

/// Where the stderr lines of plugin stores go: a stack of listeners, the last of which hears.
#[derive(Clone, Default)]
pub struct StoreOutput {
    inner: Arc<Listeners>,
}

#[derive(Default)]
struct Listeners {
    /// (id, services) in the order they began listening.
    stack: Mutex<Vec<(u64, Arc<dyn HostServices>)>>,
    next: AtomicU64,
    /// The pools whose plugins' stderr lines come here.
    sources: Mutex<Vec<Source>>,
}

/// A pool whose plugins' stderr lines come here, and the packages whose stores it runs.
struct Source {
    host: Weak<PluginHost>,
    packages: Vec<String>,
}

impl Listeners {
    /// Hands over every line the sources' plugins wrote so far.
    fn catch_up(&self) {
        let sources: Vec<Arc<PluginHost>> = {
            let mut sources = lock(&self.sources);
            sources.retain(|s| s.host.strong_count() > 0);
            sources.iter().filter_map(|s| s.host.upgrade()).collect()
        };
        for host in sources {
            host.catch_up_stderr(CATCH_UP_WITHIN);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The invocation's store output, which every plugin store of the process reports to unless it was
/// given another.
static INVOCATION: LazyLock<StoreOutput> = LazyLock::new(StoreOutput::default);

impl StoreOutput {
    /// The store output of this invocation (this process).
    pub fn invocation() -> StoreOutput {
        INVOCATION.clone()
    }

    /// A store output of its own, which no one else reports to (for tests and embedders).
    pub fn new() -> StoreOutput {
        StoreOutput::default()
    }

    /// Makes `services` hear every store plugin's stderr line ([`HostServices::stderr_line`]) until the
    /// returned guard drops; a listener that begins later hears instead of it meanwhile.
    pub fn listen(&self, services: Arc<dyn HostServices>) -> Listening {
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        lock(&self.inner.stack).push((id, services));
        Listening {
            inner: self.inner.clone(),
            id,
        }
    }

    /// Notes that `package`'s process in `host` runs a store that reports its stderr lines here, so
    /// that a listener that stops has it hand over what it wrote until then.
    pub fn report_from(&self, host: &Arc<PluginHost>, package: &str) {
        let mut sources = lock(&self.inner.sources);
        let source = match sources.iter().position(|s| same_host(s, host)) {
            Some(at) => &mut sources[at],
            None => {
                sources.push(Source {
                    host: Arc::downgrade(host),
                    packages: Vec::new(),
                });
                let last = sources.len() - 1;
                &mut sources[last]
            }
        };
        if !source.packages.iter().any(|p| p == package) {
            source.packages.push(package.to_string());
        }
    }

    /// The packages whose processes in `host` run stores that report here.
    pub fn store_packages(&self, host: &Arc<PluginHost>) -> Vec<String> {
        lock(&self.inner.sources)
            .iter()
            .find(|s| same_host(s, host))
            .map(|s| s.packages.clone())
            .unwrap_or_default()
    }

    /// Who hears now: the listener that began last, if any.
    pub fn listener(&self) -> Option<Arc<dyn HostServices>> {
        lock(&self.inner.stack).last().map(|(_, s)| s.clone())
    }

    /// One line `package` (a store plugin) wrote to its stderr, for the listener; dropped without one.
    pub fn line(&self, package: &str, line: &str) {
        // Taken out of the lock first: a listener may take a while, or listen itself.
        if let Some(listener) = self.listener() {
            listener.stderr_line(package, line);
        }
    }
}

fn same_host(source: &Source, host: &Arc<PluginHost>) -> bool {
    std::ptr::eq(source.host.as_ptr(), Arc::as_ptr(host))
}

/// A listener of a [`StoreOutput`]; it stops hearing when this drops.
#[must_use = "the listener stops hearing when this guard drops"]
pub struct Listening {
    inner: Arc<Listeners>,
    id: u64,
}

impl Drop for Listening {
    fn drop(&mut self) {
        // Before it leaves the stack, and outside its lock: the lines handed over now are still its.
        self.inner.catch_up();
        lock(&self.inner.stack).retain(|(id, _)| *id != self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_env_protocol::message::RpcError;
    use serde_json::Value;

    #[derive(Default)]
    struct Hearing(Mutex<Vec<String>>);

    impl HostServices for Hearing {
        fn handle(&self, _: &str, _: &str, _: Value) -> Result<Value, RpcError> {
            Ok(Value::Null)
        }
        fn stderr_line(&self, package: &str, line: &str) {
            lock(&self.0).push(format!("{package}: {line}"));
        }
    }

    fn heard(h: &Hearing) -> Vec<String> {
        lock(&h.0).clone()
    }

    #[test]
    fn the_last_listener_hears_alone_until_it_stops() {
        let output = StoreOutput::new();
        output.line("p", "nobody hears this");
        let outer = Arc::new(Hearing::default());
        let outer_guard = output.listen(outer.clone());
        output.line("p", "one");
        let inner = Arc::new(Hearing::default());
        let inner_guard = output.listen(inner.clone());
        output.line("p", "two");
        drop(inner_guard);
        output.line("p", "three");
        assert_eq!(heard(&outer), ["p: one", "p: three"]);
        assert_eq!(heard(&inner), ["p: two"]);
        drop(outer_guard);
        assert!(output.listener().is_none());
    }

    #[test]
    fn a_listener_that_stops_out_of_order_leaves_the_others_be() {
        let output = StoreOutput::new();
        let first = Arc::new(Hearing::default());
        let second = Arc::new(Hearing::default());
        let first_guard = output.listen(first.clone());
        let second_guard = output.listen(second.clone());
        drop(first_guard);
        output.line("p", "to the second");
        drop(second_guard);
        assert!(heard(&first).is_empty());
        assert_eq!(heard(&second), ["p: to the second"]);
    }
}
