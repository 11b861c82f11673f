//! Calls to a running plugin: each one sent with the services that answer what the plugin asks
//! back during it, and each failure turned into the [`HostError`] that says why it failed (the
//! plugin's error, a timeout and what it was waiting on, a crash, a stop).
//!
//! Invariants: a call of a process being stopped, or found unresponsive, fails at once without
//! reaching the plugin. Only timeouts of the host's own limit count as the plugin not answering:
//! at the [`CRASH_LOOP_LIMIT`]th the process is killed (marked first, so a call cut short by the
//! kill says `unresponsive`, not `crashed`), and every later call fails with `crash-loop`.

use std::sync::Arc;
use std::time::Duration;

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::peer::CallError;
use serde_json::Value;

use super::{lock, PluginProcess, Status, CRASH_LOOP_LIMIT};
use crate::diagnosis::FailureSummary;
use crate::error::{secs, HostError};
use crate::services::HostServices;

/// Whose limit a call has: the host's call timeout, after which a plugin is taken as not answering,
/// or one the caller set for the work itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Limit {
    Host,
    Caller,
}

impl PluginProcess {
    /// Calls `method` with the configured call timeout.
    pub fn call(&self, method: &str, params: Value) -> Result<Value, HostError> {
        self.call_with_timeout(method, params, self.config.call_timeout)
    }

    /// Calls `method`, waiting at most `timeout`; on expiry the call is cancelled (`$/cancelRequest`).
    /// What the plugin asks the host meanwhile is answered by the services the process started with.
    pub fn call_with_timeout(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, HostError> {
        self.call_inner(method, params, timeout, None, Limit::Host)
    }

    /// [`call_with_timeout`](Self::call_with_timeout), with `services` answering what the plugin asks
    /// the host for this call (its `host.*` requests that name it, its `$/progress` about it): one
    /// process serves callers with different services at once.
    pub fn call_for(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        services: Arc<dyn HostServices>,
    ) -> Result<Value, HostError> {
        self.call_inner(method, params, timeout, Some(services), Limit::Host)
    }

    /// [`call_for`](Self::call_for) with a limit the caller chose for the work itself (a task
    /// step's `timeout_seconds`): a call that runs past it says the work was slow, not that the
    /// plugin stopped answering, so it does not count towards the [`CRASH_LOOP_LIMIT`] timeouts
    /// after which every call of the process fails (three slow agents in an eval of three hundred
    /// tasks failed all the rest). Each call still ends at its limit.
    pub fn call_for_within_own_limit(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        services: Arc<dyn HostServices>,
    ) -> Result<Value, HostError> {
        self.call_inner(method, params, timeout, Some(services), Limit::Caller)
    }

    fn call_inner(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        services: Option<Arc<dyn HostServices>>,
        limit: Limit,
    ) -> Result<Value, HostError> {
        {
            let mut status = lock(&self.status);
            if status.timeouts >= CRASH_LOOP_LIMIT {
                return Err(self.unresponsive_error(&status));
            }
            if status.stopped.is_some() || status.stopping {
                return Err(HostError::ShutDown {
                    ctx: self.ctx(),
                    method: method.into(),
                });
            }
            status.calls += 1;
        }
        use std::sync::atomic::Ordering;
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        let began = std::time::Instant::now();
        let mut entered = None;
        let result = self
            .child
            .peer
            .call_noting_id(method, params, Some(timeout), |id| {
                match &services {
                    Some(services) => {
                        services.call_sent();
                        self.router.enter(id, services.clone());
                    }
                    None => self.router.enter_without_services(id),
                }
                entered = Some(id.clone());
            });
        if let Some(id) = entered {
            self.router.leave(&id);
            if let Some(services) = &services {
                services.call_ended();
            }
        }
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        result.map_err(|e| {
            let error = self.call_error(method, e, began);
            if error.is_process_failure() || matches!(error, HostError::CallTimeout { .. }) {
                let mut status = lock(&self.status);
                status.failure = Some(FailureSummary {
                    code: error.code().into(),
                    message: error.to_string(),
                });
                if matches!(error, HostError::CallTimeout { .. }) && limit == Limit::Host {
                    status.timeouts += 1;
                    status.last_timeout = Some(error.clone());
                    if status.timeouts == CRASH_LOOP_LIMIT {
                        // Unresponsive: kill it now (without the graceful shutdown call, which
                        // would only time out too); the pool does not start it again. Marked
                        // first, under the lock a call cut short by the kill reads it under.
                        status.killed_unresponsive = true;
                        self.child.exit.signal(libc::SIGKILL);
                    }
                }
            }
            error
        })
    }

    /// How many calls of this process timed out.
    pub fn timeouts(&self) -> u32 {
        lock(&self.status).timeouts
    }

    /// The error of every call after the process was found unresponsive.
    fn unresponsive_error(&self, status: &Status) -> HostError {
        let last = status
            .last_timeout
            .as_ref()
            .map(|e| {
                format!(
                    "{}: {}",
                    e.code(),
                    e.to_string().lines().next().unwrap_or("")
                )
            })
            .unwrap_or_else(|| "call-timeout".into());
        HostError::CrashLoop {
            ctx: self.ctx(),
            crashes: status.timeouts,
            pause: self.config.crash_loop_pause,
            last,
        }
    }

    /// The call error that made this process unresponsive, as a `crash-loop` error, if it is.
    pub fn unresponsive(&self) -> Option<HostError> {
        let status = lock(&self.status);
        (status.timeouts >= CRASH_LOOP_LIMIT).then(|| self.unresponsive_error(&status))
    }

    /// The host error for a call begun at `began` that failed with `error`.
    fn call_error(&self, method: &str, error: CallError, began: std::time::Instant) -> HostError {
        let method = method.to_string();
        match error {
            CallError::Rpc(error) if error.kind() == Some(ErrorKind::MessageTooLarge) => {
                HostError::MessageTooLarge {
                    ctx: self.ctx(),
                    method,
                    detail: error.message,
                }
            }
            CallError::Rpc(error) => HostError::PluginError {
                ctx: self.ctx(),
                method,
                error,
            },
            // Its answer was a line meant as a message that is none: said at once, no timeout.
            error @ CallError::Malformed { .. } => HostError::BadAnswer {
                ctx: self.ctx(),
                method,
                detail: error.to_string(),
            },
            CallError::Timeout(timeout) => HostError::CallTimeout {
                ctx: self.ctx(),
                method,
                timeout,
                waited_on: self.router.longest_served_since(began),
                unended_bytes: self.child.peer.unended_bytes(),
            },
            CallError::TooLarge { size, max } => HostError::MessageTooLarge {
                ctx: self.ctx(),
                method,
                detail: format!(
                    "the request is {size} bytes, over the {max}-byte maximum message size, so it was not sent; pass large data by file path"
                ),
            },
            CallError::Closed(reason) => {
                {
                    let status = lock(&self.status);
                    // Checked first: the stop that follows the kill (the pool's, when the next
                    // caller finds the process gone) is not why this call ended.
                    if status.killed_unresponsive {
                        // agent-env killed it as unresponsive while this call was in flight: the
                        // call was cut short, the plugin did not crash.
                        let last = match &status.last_timeout {
                            Some(HostError::CallTimeout {
                                method, timeout, ..
                            }) => format!("{method} within {}", secs(*timeout)),
                            _ => "a call".into(),
                        };
                        let timeouts = status.timeouts;
                        drop(status);
                        self.child.exit.wait_timeout(self.config.grace);
                        self.child.settle_stderr();
                        return HostError::Unresponsive {
                            ctx: self.ctx(),
                            method,
                            timeouts,
                            last,
                        };
                    }
                    if status.stopping {
                        return HostError::ShutDown {
                            ctx: self.ctx(),
                            method,
                        };
                    }
                }
                let ended = match self.child.exit.wait_timeout(self.config.grace) {
                    Some(ended) => {
                        self.child.settle_stderr();
                        ended.describe()
                    }
                    None => format!(
                        "it closed its stdout ({reason}) but is still running as pid {}",
                        self.pid()
                    ),
                };
                HostError::Crashed {
                    ctx: self.ctx(),
                    ended,
                    method,
                    in_flight: self.child.peer.calls_waiting_at_close(),
                }
            }
        }
    }
}
