//! What a handler gets besides its arguments: the host, cancellation, progress, settings, and for a
//! task step the deadline the host gave it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_env_protocol::peer::RequestContext;
use serde_json::{Map, Value};

use crate::host::HostHandle;

/// The context of one call from the host (an `execute`, a store operation, a raw method).
pub struct StepContext<'a> {
    request: &'a RequestContext,
    /// Set once the plugin is shutting down (`shutdown` came or stdin ended): every call is cancelled.
    stopping: &'a AtomicBool,
    host: HostHandle,
    package: &'a str,
    settings: Arc<Map<String, Value>>,
    /// When the request was read, which the host's `timeout_ms` counts from.
    received: Instant,
    deadline: Option<Instant>,
}

/// The same context, for calls that are not task steps.
pub type CallContext<'a> = StepContext<'a>;

impl<'a> StepContext<'a> {
    pub(crate) fn new(
        request: &'a RequestContext,
        stopping: &'a AtomicBool,
        package: &'a str,
        settings: Arc<Map<String, Value>>,
    ) -> Self {
        StepContext {
            host: HostHandle::new(request.peer().clone(), request.id().clone()),
            request,
            stopping,
            package,
            settings,
            received: Instant::now(),
            deadline: None,
        }
    }

    /// The same context, for a step the host gave `timeout_ms` (`execute`'s field; `None` from a
    /// host that does not say).
    pub(crate) fn with_timeout_ms(mut self, timeout_ms: Option<u64>) -> Self {
        self.deadline = deadline_after(self.received, timeout_ms);
        self
    }

    /// The host, to call `host.store.*` while this call runs.
    pub fn host(&self) -> &HostHandle {
        &self.host
    }

    /// True once the host cancelled this call (it timed out there, or a run was cancelled), and once
    /// the plugin is shutting down (`shutdown` came or stdin ended: the call then has one second,
    /// [`SHUTDOWN_GRACE`](crate::SHUTDOWN_GRACE), before the plugin exits); stop and return any error.
    pub fn is_cancelled(&self) -> bool {
        self.request.is_cancelled() || self.stopping.load(Ordering::Relaxed)
    }

    /// When the host will give up on this step and cancel it: the time it gave the step (its
    /// `timeout_seconds`, else the host's call timeout), counted from when the request arrived.
    /// `None` when the host did not say (a host older than the field) and for calls that are not
    /// task steps. A step that waits on something slow stops a little before it, with what it has.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// How long is left until [`deadline`](Self::deadline) (zero once it has passed); `None` when
    /// no deadline is known.
    pub fn remaining(&self) -> Option<Duration> {
        self.deadline
            .map(|deadline| deadline.saturating_duration_since(Instant::now()))
    }

    /// Reports progress on this call (`$/progress`).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.request.progress(progress, total, message);
    }

    /// This plugin's package name, as the host knows it.
    pub fn package(&self) -> &str {
        self.package
    }

    /// The plugin's `[plugins.<package>]` settings, as sent in `initialize`.
    pub fn settings(&self) -> &Map<String, Value> {
        &self.settings
    }
}

/// The deadline of a step given `timeout_ms` from `received`; none without one, or when it is past
/// what the clock can hold (no limit, in effect).
fn deadline_after(received: Instant, timeout_ms: Option<u64>) -> Option<Instant> {
    received.checked_add(Duration::from_millis(timeout_ms?))
}

/// The call ends with its context: a host handle cloned out of it fails from now on.
impl Drop for StepContext<'_> {
    fn drop(&mut self) {
        self.host.end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deadline_is_the_timeout_after_the_request_arrived() {
        let received = Instant::now();
        assert_eq!(
            deadline_after(received, Some(5_000)),
            Some(received + Duration::from_secs(5))
        );
        assert_eq!(deadline_after(received, Some(0)), Some(received));
    }

    #[test]
    fn no_timeout_is_no_deadline() {
        assert_eq!(deadline_after(Instant::now(), None), None);
    }
}
