//! One process, several callers: each call's nested `host.*` requests are answered by the services it was
//! made with, because the SDK names the call they work for (`call_id`).

use std::sync::{Arc, Mutex};

use crate::support::*;
use agent_env_host::{HostServices, NoServices, RpcError};
use agent_env_protocol::codes::ErrorKind;
use serde_json::{json, Value};

/// Answers the fixture's store round trip as `name`, and notes every method it answered.
struct Named {
    name: &'static str,
    heard: Mutex<Vec<String>>,
}

impl HostServices for Named {
    fn handle(&self, _package: &str, method: &str, params: Value) -> Result<Value, RpcError> {
        self.heard.lock().unwrap().push(method.to_string());
        assert!(
            params.get("call_id").is_none(),
            "the host hands services params without call_id"
        );
        // Both calls wait here until the other is in flight too, so they overlap for sure.
        std::thread::sleep(std::time::Duration::from_millis(100));
        match method {
            "host.store.object.put" => {
                Ok(json!({"url": format!("mem://{}/roundtrip.txt", self.name)}))
            }
            // base64 of the name, so each call reads back what its own services hold.
            "host.store.object.get" => {
                Ok(json!({"data": match self.name { "alpha" => "YWxwaGE=", _ => "YmV0YQ==" }}))
            }
            "host.store.secret.get" => Ok(json!({"value": self.name})),
            other => Err(RpcError::new(ErrorKind::MethodNotFound, other.to_string())),
        }
    }
}

#[test]
fn concurrent_calls_to_one_process_each_get_their_own_services() {
    let process = start("fixture-works", "agentenv-fixture-works");
    let alpha = Arc::new(Named {
        name: "alpha",
        heard: Mutex::new(Vec::new()),
    });
    let beta = Arc::new(Named {
        name: "beta",
        heard: Mutex::new(Vec::new()),
    });
    let results: Vec<Value> = std::thread::scope(|scope| {
        let handles: Vec<_> = [alpha.clone(), beta.clone()]
            .into_iter()
            .map(|services| {
                let process = &process;
                scope.spawn(move || {
                    let params = json!({"type": "store_roundtrip", "step": {"id": "s", "type": "store_roundtrip", "text": "x"}, "context": {}});
                    process
                        .call_for("execute", params, std::time::Duration::from_secs(30), services)
                        .unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (result, name) in results.iter().zip(["alpha", "beta"]) {
        let roundtrip = &result["metadata"]["roundtrip"];
        assert_eq!(roundtrip["secret"], name, "{result}");
        assert_eq!(roundtrip["back"], name, "{result}");
        assert_eq!(
            roundtrip["url"],
            format!("mem://{name}/roundtrip.txt"),
            "{result}"
        );
    }
    for services in [&alpha, &beta] {
        assert_eq!(
            *services.heard.lock().unwrap(),
            // The step reads two secrets: its token, and which process serves the store.
            [
                "host.store.object.put",
                "host.store.object.get",
                "host.store.secret.get",
                "host.store.secret.get"
            ]
        );
    }
    // A plain call is answered by the services the process started with.
    let plain = process.call(
        "execute",
        json!({"type": "store_roundtrip", "step": {"id": "s", "type": "store_roundtrip"}, "context": {}}),
    );
    assert!(plain.is_err(), "{plain:?}");
    process.shutdown();
}

/// A caller done with a plugin releases it only when no other caller's call is in flight: one pool
/// serves several callers, and one finishing must not stop a process another is using.
#[test]
fn release_idle_leaves_a_process_another_caller_is_using() {
    let host = agent_env_host::PluginHost::new(quick_config(), Arc::new(NoServices));
    let spec = spec("fixture-hang-call", "agentenv-fixture-hang-call");
    let process = host.connect(&spec).unwrap();
    std::thread::scope(|scope| {
        let busy = scope.spawn(|| {
            process.call_with_timeout("hang", json!({}), std::time::Duration::from_millis(800))
        });
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(process.busy());
        assert!(
            host.release_idle(&spec.package).is_none(),
            "released mid-call"
        );
        assert!(
            host.get(&spec.package).is_some(),
            "the process went away mid-call"
        );
        let _ = busy.join().unwrap();
    });
    assert!(!process.busy());
    assert!(
        host.release_idle(&spec.package).is_some(),
        "not released when idle"
    );
    assert!(host.get(&spec.package).is_none());
}

/// Answers every request after `delay`: a store whose server has stopped answering.
struct Slow {
    delay: std::time::Duration,
}

impl HostServices for Slow {
    fn handle(&self, _package: &str, _method: &str, _params: Value) -> Result<Value, RpcError> {
        std::thread::sleep(self.delay);
        Ok(Value::Null)
    }
}

#[test]
fn a_call_that_times_out_while_agent_env_answers_the_plugin_says_so() {
    let process = start("fixture-works", "agentenv-fixture-works");
    let err = process
        .call_for(
            "call_host",
            json!({"method": "host.store.object.put", "params": {}}),
            std::time::Duration::from_millis(500),
            Arc::new(Slow {
                delay: std::time::Duration::from_secs(3),
            }),
        )
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("did not answer call_host within 0.5 s; the call was cancelled. agent-env spent ")
            && text.contains(" of it answering the plugin's own host.store.object.put request, so what that waits on (a store, its server, the network) is what was slow"),
        "{text}"
    );
    // A plugin that is itself slow is not said to wait on agent-env.
    let hanging = start("fixture-hang-call", "agentenv-fixture-hang-call");
    let err = hanging
        .call_for(
            "hang",
            json!({}),
            std::time::Duration::from_millis(300),
            Arc::new(NoServices),
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("did not answer hang within"),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("(raise AGENT_ENV_PLUGIN_CALL_TIMEOUT if it is just slow)"),
        "{err}"
    );
}

/// Services that note every method they are asked to answer, and answer none.
#[derive(Default)]
struct Noting(Mutex<Vec<String>>);

impl HostServices for Noting {
    fn handle(&self, _package: &str, method: &str, _params: Value) -> Result<Value, RpcError> {
        self.0.lock().unwrap().push(method.to_string());
        Ok(json!({"url": "mem://written"}))
    }
}

const WORKS: &str = "agentenv-fixture-works";
const LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

#[test]
fn a_host_handle_kept_past_its_call_fails_while_another_call_runs() {
    let process = start("fixture-works", WORKS);
    let first = Arc::new(Noting::default());
    let second = Arc::new(Noting::default());
    process
        .call_for("leak_host", json!({}), LIMIT, first.clone())
        .unwrap();
    let late = process
        .call_for("use_leaked_host", json!({}), LIMIT, second.clone())
        .unwrap();
    let error = late["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("host.store.object.put was not sent: the call ")
            && error.contains(" this host handle was given for has ended"),
        "{late}"
    );
    assert!(first.0.lock().unwrap().is_empty(), "nothing is written");
    assert!(second.0.lock().unwrap().is_empty(), "nothing is written");
    process.shutdown();
}

#[test]
fn a_request_for_a_call_the_host_stopped_waiting_for_is_refused_not_given_to_another() {
    let process = start("fixture-works", WORKS);
    let first = Arc::new(Noting::default());
    let second = Arc::new(Noting::default());
    // The step goes on after its call timed out here, and puts once the next call is in flight.
    let timed_out = process.call_for_within_own_limit(
        "outlive_call",
        json!({}),
        std::time::Duration::from_millis(300),
        first.clone(),
    );
    assert!(timed_out.is_err(), "{timed_out:?}");
    let late = process
        .call_for("release_outliver", json!({}), LIMIT, second.clone())
        .unwrap();
    let error = late["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(
            "this request belongs to (its call_id) has ended, so agent-env did not carry it out"
        ),
        "{late}"
    );
    assert!(first.0.lock().unwrap().is_empty(), "nothing is written");
    assert!(
        second.0.lock().unwrap().is_empty(),
        "the late put was credited to another call"
    );
    process.shutdown();
}
