//! A `host.*` request the plugin sent as a notification (no id, or id null): it cannot be
//! answered, so rather than dropping it in silence (the plugin would wait for an answer that never
//! comes, until its call times out), the host logs a warning naming the plugin and the method, as
//! a `$/log` line of the plugin's: shown where its logs go (`run -v`, the run's log, the stderr
//! tail `plugin show` prints).

use agent_env_protocol::message::RpcError;
use agent_env_protocol::methods::{CALL_ID, LOG};
use agent_env_protocol::peer::{CloseReason, Handler, RequestContext};
use serde_json::{json, Value};

/// `inner`, warning of the `host.*` notifications that reach it.
pub(super) struct WarnUnanswerable<H> {
    pub(super) package: String,
    pub(super) inner: H,
}

/// The warning for a plugin that sent `method` as a notification.
pub(super) fn unanswerable_warning(package: &str, method: &str) -> String {
    format!(
        "agent-env: plugin {package} sent {method} as a notification (no id, or id null), so it cannot be answered: give the request an integer or string id"
    )
}

impl<H: Handler> Handler for WarnUnanswerable<H> {
    fn request(
        &self,
        ctx: &RequestContext,
        method: &str,
        params: Value,
    ) -> Result<Value, RpcError> {
        self.inner.request(ctx, method, params)
    }

    fn notification(&self, method: &str, params: Value) {
        if !method.starts_with("host.") {
            return self.inner.notification(method, params);
        }
        let mut log = json!({
            "level": "warning",
            "message": unanswerable_warning(&self.package, method),
        });
        if let Some(call) = params.get(CALL_ID) {
            log[CALL_ID] = call.clone();
        }
        self.inner.notification(LOG, log);
    }

    fn closed(&self, reason: &CloseReason) {
        self.inner.closed(reason)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[derive(Default)]
    struct Heard(Mutex<Vec<(String, Value)>>);

    impl Handler for &'static Heard {
        fn request(&self, _: &RequestContext, _: &str, _: Value) -> Result<Value, RpcError> {
            Ok(Value::Null)
        }
        fn notification(&self, method: &str, params: Value) {
            self.0.lock().unwrap().push((method.into(), params));
        }
    }

    #[test]
    fn a_host_request_sent_as_a_notification_is_warned_of_on_the_plugins_log() {
        let heard: &'static Heard = Box::leak(Box::default());
        let guard = WarnUnanswerable {
            package: "agentenv-x".into(),
            inner: heard,
        };
        guard.notification("host.store.object.get", json!({"call_id": 2}));
        guard.notification("$/progress", json!({"id": 2}));
        let seen = heard.0.lock().unwrap();
        assert_eq!(seen[0].0, LOG);
        assert_eq!(seen[0].1["level"], "warning");
        assert_eq!(seen[0].1[CALL_ID], 2);
        assert!(seen[0].1["message"].as_str().unwrap().contains(
            "plugin agentenv-x sent host.store.object.get as a notification (no id, or id null), so it cannot be answered"
        ));
        assert_eq!(seen[1].0, "$/progress");
    }
}
