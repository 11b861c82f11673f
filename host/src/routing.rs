//! Which services answer a plugin's `host.*` request: those of the host call it works for. A pool whose
//! processes serve several callers at once (a run's steps, the explorer's requests, the store set) gives
//! each call its own services; the plugin names the call in its request (`call_id`, which the SDKs set).
//! A request that names none (an older plugin) goes to the services of the one call in flight, and when
//! there is no single one, to the pool's defaults. A request that names a call not in flight (a host
//! handle kept past the end of its call, a step still working after its call timed out) is refused:
//! given to another call, what it writes would be credited to that call. What the plugin writes to
//! stderr before its first call with services (while it starts) is kept for that call's services,
//! which say where it goes.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::message::{Id, RpcError};
use agent_env_protocol::methods::CALL_ID;
use serde::Deserialize;
use serde_json::Value;

use super::services::HostServices;

/// The services of one process's calls in flight, by request id.
pub(crate) struct CallRouter {
    default: Arc<dyn HostServices>,
    calls: Mutex<HashMap<Id, Arc<dyn HostServices>>>,
    /// The calls in flight made without services of their own: what they ask is the defaults'.
    plain_calls: Mutex<HashSet<Id>>,
    /// The plugin's `host.*` requests agent-env is answering, and the last ones it answered.
    served: Mutex<Served>,
    /// The services of the call that began last: what the plugin writes to stderr just after a call
    /// ended is still that caller's to show.
    last: Mutex<Option<Arc<dyn HostServices>>>,
    /// The stderr lines written before any call with services began (at most [`EARLY_KEPT`], and
    /// how many more there were); `None` once one began and was given them.
    early: Mutex<Option<EarlyLines>>,
}

/// How many stderr lines a plugin wrote while it started are kept for its first call.
const EARLY_KEPT: usize = 100;

#[derive(Default)]
struct EarlyLines {
    package: String,
    lines: Vec<String>,
    dropped: usize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl CallRouter {
    pub(crate) fn new(default: Arc<dyn HostServices>) -> CallRouter {
        CallRouter {
            default,
            calls: Mutex::new(HashMap::new()),
            plain_calls: Mutex::new(HashSet::new()),
            served: Mutex::new(Served::default()),
            last: Mutex::new(None),
            early: Mutex::new(Some(EarlyLines::default())),
        }
    }

    /// `services` answer what the plugin asks while call `id` is in flight. The first call with
    /// services is given what the plugin wrote to stderr before it.
    pub(crate) fn enter(&self, id: &Id, services: Arc<dyn HostServices>) {
        *lock(&self.last) = Some(services.clone());
        lock(&self.calls).insert(id.clone(), services.clone());
        // Held while the lines are given, so a line written meanwhile comes after them.
        let mut early = lock(&self.early);
        let Some(kept) = early.take() else {
            return;
        };
        for line in &kept.lines {
            services.stderr_line(&kept.package, line);
        }
        if kept.dropped > 0 {
            let more = format!(
                "(agent-env left out {} more lines the plugin wrote while it started)",
                kept.dropped
            );
            services.stderr_line(&kept.package, &more);
        }
    }

    /// Call `id` is in flight without services of its own: the defaults answer what it asks.
    pub(crate) fn enter_without_services(&self, id: &Id) {
        lock(&self.plain_calls).insert(id.clone());
    }

    /// One line `package` wrote to its stderr: for who [`for_output`](Self::for_output) names, or
    /// kept for the first call when none has begun.
    pub(crate) fn stderr_line(&self, package: &str, line: &str) {
        {
            let mut early = lock(&self.early);
            if let Some(early) = early.as_mut() {
                if early.lines.len() < EARLY_KEPT {
                    early.package = package.to_string();
                    early.lines.push(line.to_string());
                } else {
                    early.dropped += 1;
                }
                return;
            }
        }
        self.for_output().stderr_line(package, line);
    }

    /// Notes that agent-env is answering the plugin's request `method`, until the guard drops.
    pub(crate) fn serving(&self, method: &str) -> Serving<'_> {
        let started = Instant::now();
        lock(&self.served)
            .in_flight
            .push((method.to_string(), started));
        Serving {
            router: self,
            started,
        }
    }

    /// The request of the plugin agent-env spent longest answering since `since` (one still being
    /// answered counts what it took so far), and that time: what a call that timed out was waiting on
    /// when agent-env itself was the slow one.
    pub(crate) fn longest_served_since(&self, since: Instant) -> Option<(String, Duration)> {
        let served = lock(&self.served);
        let now = Instant::now();
        served
            .in_flight
            .iter()
            .map(|(method, started)| (method, *started, now.duration_since(*started)))
            .chain(
                served
                    .done
                    .iter()
                    .map(|(m, started, took)| (m, *started, *took)),
            )
            .filter(|(_, started, _)| *started >= since)
            .max_by_key(|(_, _, took)| *took)
            .map(|(method, _, took)| (method.clone(), took))
    }

    /// Who hears a stderr line: the one call in flight; with none, the call that began last; with
    /// several, the services they all share (a run's), else the defaults.
    pub(crate) fn for_output(&self) -> Arc<dyn HostServices> {
        let calls = lock(&self.calls);
        match calls.len() {
            1 => calls
                .values()
                .next()
                .cloned()
                .unwrap_or_else(|| self.default.clone()),
            0 => lock(&self.last)
                .clone()
                .unwrap_or_else(|| self.default.clone()),
            _ => shared_by_all(&calls).unwrap_or_else(|| self.default.clone()),
        }
    }

    /// Call `id` ended.
    pub(crate) fn leave(&self, id: &Id) {
        lock(&self.calls).remove(id);
        lock(&self.plain_calls).remove(id);
    }

    /// The services of call `id`, which must be in flight; with no id, those of the one call in
    /// flight, or when several are, the services they all share, else the defaults.
    pub(crate) fn for_call(
        &self,
        id: Option<&Id>,
    ) -> Result<Arc<dyn HostServices>, CallNotInFlight> {
        let calls = lock(&self.calls);
        let Some(id) = id else {
            if calls.len() == 1 {
                if let Some(only) = calls.values().next() {
                    return Ok(only.clone());
                }
            }
            // Several in flight and none named: services all of them share, if they share one.
            return Ok(shared_by_all(&calls).unwrap_or_else(|| self.default.clone()));
        };
        if let Some(services) = calls.get(id) {
            return Ok(services.clone());
        }
        if lock(&self.plain_calls).contains(id) {
            return Ok(self.default.clone());
        }
        Err(CallNotInFlight { call: id.clone() })
    }

    /// The services for a request with `params`, and the params without the call's id.
    pub(crate) fn for_params(
        &self,
        mut params: Value,
    ) -> Result<(Arc<dyn HostServices>, Value), RpcError> {
        let named = params.as_object_mut().and_then(|p| p.remove(CALL_ID));
        let id = match named {
            None | Some(Value::Null) => None,
            Some(value) => Some(
                serde_json::from_value::<Id>(value.clone()).map_err(|_| not_a_call_id(&value))?,
            ),
        };
        Ok((self.for_call(id.as_ref())?, params))
    }

    /// The services for a notification with `params` (which keeps them as they are). One that
    /// names a call not in flight goes where a stderr line would: it cannot be refused, and it is
    /// no more that call's than a line on stderr is.
    pub(crate) fn for_notification(&self, params: &Value) -> Arc<dyn HostServices> {
        let id = params.get(CALL_ID).and_then(|v| Id::deserialize(v).ok());
        self.for_call(id.as_ref())
            .unwrap_or_else(|_| self.for_output())
    }
}

/// A plugin's request named a call (`call_id`) agent-env does not have in flight to it: that call
/// ended (its handler returned, or agent-env stopped waiting for it), or never began.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "the call {call} this request belongs to (its call_id) has ended, so agent-env did not carry it out; \
     a plugin may call the host only while the call it works for runs, and a host handle is valid only \
     until its call returns"
)]
pub(crate) struct CallNotInFlight {
    call: Id,
}

impl From<CallNotInFlight> for RpcError {
    fn from(refused: CallNotInFlight) -> RpcError {
        RpcError::new(ErrorKind::InvalidRequest, refused.to_string())
    }
}

/// The refusal of a request whose `call_id` is not a request id.
fn not_a_call_id(value: &Value) -> RpcError {
    RpcError::new(
        ErrorKind::InvalidParams,
        format!(
            "call_id must be the id of the host's request this one works for (a number or a string), not {value}"
        ),
    )
}

/// How many answered requests are remembered.
const SERVED_KEPT: usize = 16;

/// The plugin's requests agent-env answers: those in flight (method, when it began) and the last
/// [`SERVED_KEPT`] it answered (method, when it began, how long it took).
#[derive(Default)]
struct Served {
    in_flight: Vec<(String, Instant)>,
    done: std::collections::VecDeque<(String, Instant, Duration)>,
}

/// A request agent-env is answering, while it lives.
pub(crate) struct Serving<'r> {
    router: &'r CallRouter,
    started: Instant,
}

impl Drop for Serving<'_> {
    fn drop(&mut self) {
        let mut served = lock(&self.router.served);
        if let Some(at) = served
            .in_flight
            .iter()
            .position(|(_, s)| *s == self.started)
        {
            let (method, started) = served.in_flight.remove(at);
            if served.done.len() == SERVED_KEPT {
                served.done.pop_front();
            }
            served.done.push_back((method, started, started.elapsed()));
        }
    }
}

/// The services every call in `calls` shares, when they all share the same ones.
fn shared_by_all<K>(calls: &HashMap<K, Arc<dyn HostServices>>) -> Option<Arc<dyn HostServices>> {
    let mut shared = calls.values().map(|s| s.shared());
    let first = shared.next()??;
    shared
        .all(|s| s.is_some_and(|s| Arc::ptr_eq(&s, &first)))
        .then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::NoServices;
    use agent_env_protocol::message::RpcError;
    use serde_json::json;

    struct Named(&'static str);

    impl HostServices for Named {
        fn handle(&self, _: &str, _: &str, _: Value) -> Result<Value, RpcError> {
            Ok(json!(self.0))
        }
    }

    /// A call's services that defer to shared ones for requests that name no call.
    struct Sharing(Arc<dyn HostServices>);

    impl HostServices for Sharing {
        fn handle(&self, _: &str, _: &str, _: Value) -> Result<Value, RpcError> {
            Ok(json!("own"))
        }
        fn shared(&self) -> Option<Arc<dyn HostServices>> {
            Some(self.0.clone())
        }
    }

    #[test]
    fn unnamed_requests_of_several_calls_go_to_what_they_share() {
        let run: Arc<dyn HostServices> = Arc::new(Named("run"));
        let router = CallRouter::new(Arc::new(NoServices));
        router.enter(&Id::Number(1), Arc::new(Sharing(run.clone())));
        router.enter(&Id::Number(2), Arc::new(Sharing(run.clone())));
        assert_eq!(answer(&router, json!({})).0, "run");
        assert_eq!(answer(&router, json!({"call_id": 2})).0, "own");
        router.enter(&Id::Number(3), Arc::new(Named("other")));
        assert_eq!(answer(&router, json!({})).0, Value::Null);
    }

    /// Services that keep the stderr lines they are given.
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

    #[test]
    fn stderr_written_while_the_plugin_started_reaches_its_first_call() {
        let router = CallRouter::new(Arc::new(NoServices));
        for n in 0..EARLY_KEPT + 2 {
            router.stderr_line("p", &format!("line {n}"));
        }
        let first = Arc::new(Hearing::default());
        router.enter(&Id::Number(1), first.clone());
        router.stderr_line("p", "during the call");
        let heard = lock(&first.0).clone();
        assert_eq!(heard.len(), EARLY_KEPT + 2);
        assert_eq!(heard[0], "p: line 0");
        assert_eq!(
            heard[EARLY_KEPT],
            "p: (agent-env left out 2 more lines the plugin wrote while it started)"
        );
        assert_eq!(heard[EARLY_KEPT + 1], "p: during the call");
        router.leave(&Id::Number(1));
        let second = Arc::new(Hearing::default());
        router.enter(&Id::Number(2), second.clone());
        assert!(lock(&second.0).is_empty(), "given once");
    }

    #[test]
    fn stderr_of_several_calls_goes_to_what_they_share() {
        let run: Arc<dyn HostServices> = Arc::new(Named("run"));
        let router = CallRouter::new(Arc::new(NoServices));
        let heard = |router: &CallRouter| {
            router
                .for_output()
                .handle("p", "host.x", Value::Null)
                .unwrap_or(Value::Null)
        };
        router.enter(&Id::Number(1), Arc::new(Sharing(run.clone())));
        assert_eq!(heard(&router), "own", "one call: its own services");
        router.enter(&Id::Number(2), Arc::new(Sharing(run.clone())));
        assert_eq!(
            heard(&router),
            "run",
            "several: the run's, not the defaults"
        );
        router.enter(&Id::Number(3), Arc::new(Named("other")));
        assert_eq!(heard(&router), Value::Null, "nothing shared: the defaults");
    }

    fn answer(router: &CallRouter, params: Value) -> (Value, Value) {
        let (services, params) = router.for_params(params).unwrap();
        (
            services
                .handle("p", "host.x", Value::Null)
                .unwrap_or(Value::Null),
            params,
        )
    }

    #[test]
    fn a_named_call_gets_its_services_and_the_id_is_taken_out() {
        let router = CallRouter::new(Arc::new(NoServices));
        router.enter(&Id::Number(1), Arc::new(Named("one")));
        router.enter(&Id::Number(2), Arc::new(Named("two")));
        let (who, params) = answer(&router, json!({"key": "k", "call_id": 2}));
        assert_eq!(who, "two");
        assert_eq!(params, json!({"key": "k"}));
        assert_eq!(answer(&router, json!({"call_id": 1})).0, "one");
        // Two in flight and none named: the defaults (which answer nothing).
        assert_eq!(answer(&router, json!({})).0, Value::Null);
        router.leave(&Id::Number(1));
        // One in flight: a request that names none is its.
        assert_eq!(answer(&router, json!({})).0, "two");
        assert_eq!(answer(&router, json!({"call_id": null})).0, "two");
    }

    #[test]
    fn a_request_naming_a_call_not_in_flight_is_refused_not_given_to_another() {
        let router = CallRouter::new(Arc::new(Named("defaults")));
        router.enter(&Id::Number(1), Arc::new(Named("one")));
        router.enter(&Id::Number(2), Arc::new(Named("two")));
        router.leave(&Id::Number(1));
        for ended in [json!({"call_id": 1}), json!({"call_id": 99})] {
            let refused = router.for_params(ended).err().unwrap();
            assert_eq!(refused.kind(), Some(ErrorKind::InvalidRequest));
            assert!(
                refused
                    .message
                    .contains("has ended, so agent-env did not carry it out"),
                "{}",
                refused.message
            );
        }
        let refused = router.for_params(json!({"call_id": [1]})).err().unwrap();
        assert_eq!(refused.kind(), Some(ErrorKind::InvalidParams));
        // A notification cannot be refused: it goes where a stderr line would.
        let log = json!({"level": "info", "message": "m", "call_id": 1});
        let heard = router.for_notification(&log);
        assert_eq!(heard.handle("p", "host.x", Value::Null).unwrap(), "two");
    }

    #[test]
    fn a_call_made_without_services_is_answered_by_the_defaults() {
        let router = CallRouter::new(Arc::new(Named("defaults")));
        router.enter(&Id::Number(1), Arc::new(Named("one")));
        router.enter_without_services(&Id::Number(2));
        assert_eq!(answer(&router, json!({"call_id": 2})).0, "defaults");
        assert_eq!(answer(&router, json!({})).0, "one");
        router.leave(&Id::Number(2));
        assert!(router.for_params(json!({"call_id": 2})).is_err());
    }

    #[test]
    fn a_notification_goes_to_the_call_it_names() {
        let router = CallRouter::new(Arc::new(NoServices));
        router.enter(&Id::Number(1), Arc::new(Named("one")));
        router.enter(&Id::Number(2), Arc::new(Named("two")));
        let params = json!({"level": "info", "message": "m", "call_id": 2});
        let who = router.for_notification(&params);
        assert_eq!(who.handle("p", "host.x", Value::Null).unwrap(), "two");
        assert_eq!(params["call_id"], 2, "the params are left as they are");
    }
}
