//! What a handler gets besides its arguments: the host, cancellation, progress, settings.

use std::sync::Arc;

use agent_env_protocol::peer::RequestContext;
use serde_json::{Map, Value};

use crate::host::HostHandle;

/// The context of one call from the host (an `execute`, a store operation, a raw method).
pub struct StepContext<'a> {
    request: &'a RequestContext,
    host: HostHandle,
    package: &'a str,
    settings: Arc<Map<String, Value>>,
}

/// The same context, for calls that are not task steps.
pub type CallContext<'a> = StepContext<'a>;

impl<'a> StepContext<'a> {
    pub(crate) fn new(
        request: &'a RequestContext,
        package: &'a str,
        settings: Arc<Map<String, Value>>,
    ) -> Self {
        StepContext {
            host: HostHandle::new(request.peer().clone(), request.id().clone()),
            request,
            package,
            settings,
        }
    }

    /// The host, to call `host.store.*` while this call runs.
    pub fn host(&self) -> &HostHandle {
        &self.host
    }

    /// True once the host cancelled this call (it timed out there); stop and return any error.
    pub fn is_cancelled(&self) -> bool {
        self.request.is_cancelled()
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

/// The call ends with its context: a host handle cloned out of it fails from now on.
impl Drop for StepContext<'_> {
    fn drop(&mut self) {
        self.host.end();
    }
}
