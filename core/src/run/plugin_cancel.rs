//! A run's cancel and the plugin processes running its steps. The first step a process runs hands
//! the run's cancel a hook that stops that process (its whole process group), which ends every call
//! it is running at once: one hook a process, not one a call, however many tasks the run has.
//!
//! A process that has to be ended with a signal did not end when asked (its running calls were
//! cancelled with `$/cancelRequest`, then it was asked to shut down). The run says so, once a
//! plugin, in the run's warnings and its log: otherwise its author sees only a teardown that waited.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_env_host::{signal_name, PluginProcess};

use crate::run::cancel::Cancel;
use crate::run::events::{RunEvent, RunObserver};

/// The plugin processes a run's cancel stops, and the plugins it has said ignored theirs.
#[derive(Default)]
pub(crate) struct CancelStops {
    hooked: Mutex<Vec<Arc<PluginProcess>>>,
    said: Mutex<HashSet<String>>,
}

impl CancelStops {
    /// Makes the run's `cancel` stop `process`, unless it does already.
    pub(crate) fn hook(&self, cancel: &Cancel, process: &Arc<PluginProcess>) {
        {
            let Ok(mut hooked) = self.hooked.lock() else {
                return;
            };
            if hooked.iter().any(|p| Arc::ptr_eq(p, process)) {
                return;
            }
            hooked.push(process.clone());
        }
        let running = process.clone();
        cancel.on_cancel(move || {
            let running = running.clone();
            std::thread::spawn(move || {
                running.stop();
            });
        });
    }

    /// After a step's call ended in a cancelled run: waits for the stop of its process to end, and
    /// tells `observer`, once a plugin, when the process had to be ended with a signal.
    pub(crate) fn settle(
        &self,
        process: &PluginProcess,
        grace: Duration,
        observer: &dyn RunObserver,
    ) {
        let stopped = process.stop();
        let Some(signal) = stopped.signal.filter(|_| stopped.stopped_by_host) else {
            return;
        };
        let first = self
            .said
            .lock()
            .map(|mut said| said.insert(stopped.package.clone()))
            .unwrap_or(false);
        if first {
            observer.event(&RunEvent::Warning {
                task_path: None,
                message: ignored_cancel(&stopped.package, signal, grace),
            });
        }
    }
}

/// What the run says of a plugin it had to end with `signal` when it was cancelled.
fn ignored_cancel(package: &str, signal: i32, grace: Duration) -> String {
    format!(
        "plugin {package} did not end when the run was cancelled (its running step was cancelled with $/cancelRequest, then the plugin was asked to shut down), so agent-env ended it with {} after a grace of {} s; a step should return as soon as its call is cancelled",
        signal_name(signal),
        grace.as_secs_f64()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_plugin_the_signal_and_the_wait() {
        let text = ignored_cancel("agentenv-slow", libc::SIGTERM, Duration::from_secs(2));
        assert!(text.starts_with("plugin agentenv-slow did not end when the run was cancelled"));
        assert!(
            text.contains("ended it with SIGTERM after a grace of 2 s;"),
            "{text}"
        );
    }
}
