//! [`PluginProcess`], one running plugin: what it was started from, its live child, its answer to
//! `initialize`, and its status (calls made, timeouts, the last failure, whether it is stopping or
//! stopped). This file holds the process and what can be read of it; its life is in the modules
//! below, one stage each:
//!
//! - `start`: from a [`SpawnSpec`] to a process that answered `initialize` ([`StartFailure`] when
//!   it does not), with `handshake` checking that answer;
//! - `calls`: calls to the plugin, their failures in words, and the timeouts that make a process
//!   unresponsive ([`CRASH_LOOP_LIMIT`]);
//! - `stop`: ending it, once, and keeping its final diagnosis;
//! - `child`: the live parts (connection, exit watch, stderr tail), connected and stopped;
//! - `describe`: what is known of it, as an error's context or as a [`Diagnosis`];
//! - `unanswerable`: the warning for a `host.*` request it sent as a notification.
//!
//! Invariants: a `PluginProcess` exists only once its plugin answered `initialize`; its status is
//! read and changed under one lock ([`lock`]), never held while waiting on the plugin; and it is
//! stopped when dropped.

mod calls;
mod child;
mod describe;
mod handshake;
mod start;
mod stop;
mod unanswerable;

use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use agent_env_protocol::methods::InitializeResult;

use crate::config::HostConfig;
use crate::diagnosis::{Diagnosis, FailureSummary};
use crate::error::HostError;
use crate::exit::Ended;
use crate::routing::CallRouter;
use crate::spec::SpawnSpec;
use child::Child;

pub use child::STDERR_CATCH_UP;
pub(crate) use describe::spec_context;
pub use start::StartFailure;

/// After this many process failures (or call timeouts of one process) in one invocation a plugin
/// is not started again.
pub const CRASH_LOOP_LIMIT: u32 = 3;

/// A plugin child process that answered `initialize`.
pub struct PluginProcess {
    spec: SpawnSpec,
    config: HostConfig,
    executable: PathBuf,
    child: Child,
    handshake: InitializeResult,
    spawned_at: SystemTime,
    spawn_time: Duration,
    initialize_time: Duration,
    status: Mutex<Status>,
    /// Told when a stop has ended: a second stop waits for the first instead of stopping again.
    stopped_signal: Condvar,
    /// Whose services answer the plugin's `host.*` requests.
    router: Arc<CallRouter>,
    /// Calls in flight now.
    in_flight: AtomicUsize,
}

/// What has become of a process since it started.
#[derive(Default)]
struct Status {
    failure: Option<FailureSummary>,
    stopped: Option<Diagnosis>,
    stopping: bool,
    calls: u64,
    /// Calls of this process that timed out.
    timeouts: u32,
    /// The last call that timed out; once `timeouts` reaches [`CRASH_LOOP_LIMIT`] the process is
    /// killed and every later call fails fast with `crash-loop` instead of waiting again.
    last_timeout: Option<HostError>,
    /// The host killed the process as unresponsive: a call that was in flight then was cut short
    /// by agent-env, not ended by a crash.
    killed_unresponsive: bool,
}

fn lock(m: &Mutex<Status>) -> MutexGuard<'_, Status> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl PluginProcess {
    /// Returns once every stderr line the plugin wrote before this call is handed to its listener,
    /// or `within` has passed ([`StderrTail::catch_up`](crate::StderrTail::catch_up)).
    pub fn catch_up_stderr(&self, within: Duration) {
        if let Some(tail) = &self.child.stderr {
            tail.catch_up(within);
        }
    }

    /// Whether a call to it is in flight.
    pub fn busy(&self) -> bool {
        self.in_flight.load(std::sync::atomic::Ordering::SeqCst) > 0
    }

    /// The plugin's answer to `initialize`.
    pub fn handshake(&self) -> &InitializeResult {
        &self.handshake
    }

    /// What it was started from.
    pub fn spec(&self) -> &SpawnSpec {
        &self.spec
    }

    /// Its package name.
    pub fn package(&self) -> &str {
        &self.spec.package
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.exit.pid() as u32
    }

    /// Whether the process runs and the connection is open.
    pub fn is_alive(&self) -> bool {
        let status = lock(&self.status);
        self.child.exit.ended().is_none()
            && !self.child.peer.is_closed()
            && status.stopped.is_none()
            && status.timeouts < CRASH_LOOP_LIMIT
    }

    /// How the process ended, if it has.
    pub fn ended(&self) -> Option<Ended> {
        self.child.exit.ended()
    }

    /// The state of the process now.
    pub fn diagnosis(&self) -> Diagnosis {
        let status = lock(&self.status);
        if let Some(stopped) = &status.stopped {
            return stopped.clone();
        }
        let mut d = self.describe_with(status.calls);
        d.failure = status.failure.clone();
        d
    }
}

impl std::fmt::Debug for PluginProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginProcess")
            .field("package", &self.spec.package)
            .field("executable", &self.executable)
            .field("pid", &self.pid())
            .finish_non_exhaustive()
    }
}

impl Drop for PluginProcess {
    fn drop(&mut self) {
        self.stop();
    }
}
