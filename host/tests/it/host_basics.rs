//! The host against the working fixture: handshake, calls, nested calls, diagnosis, shutdown.

use std::sync::Arc;

use crate::support::*;
use agent_env_host::{NoServices, PluginHost, PluginProcess};
use agent_env_protocol::codes::ErrorKind;
use serde_json::{json, Value};

const WORKS: &str = "agentenv-fixture-works";

#[test]
fn the_working_fixture_handshakes_answers_and_shuts_down_cleanly() {
    let mut s = spec("fixture-works", WORKS);
    s.settings.insert("colour".into(), json!("teal"));
    let p = PluginProcess::start(s, &quick_config(), Arc::new(NoServices)).unwrap();
    let h = p.handshake();
    assert_eq!(h.protocol, 1);
    assert_eq!(h.plugin.name, WORKS);
    assert_eq!(h.plugin.version, "0.3.0");
    let step = h
        .contributions
        .iter()
        .find(|c| c.name == "echo_step")
        .unwrap();
    assert_eq!(step.group, "task_steps");
    assert_eq!(step.class, "EchoStep");
    assert_eq!(step.methods, ["execute", "from_dict", "validate"]);
    assert!(h
        .contributions
        .iter()
        .any(|c| c.group == "cli_plugins" && c.name == "works"));
    assert!(h
        .contributions
        .iter()
        .any(|c| c.group == "envs" && c.name == "fixture_env"));
    assert_eq!(h.stores[0].class, "MemoryObjectStore");
    assert_eq!(h.stores[0].config_keys, ["root", "bucket"]);

    assert_eq!(
        p.call("echo", json!({"a": [1, 2]})).unwrap(),
        json!({"a": [1, 2]})
    );
    assert_eq!(
        p.call("settings", json!({})).unwrap(),
        json!({"colour": "teal"})
    );

    let pid = p.pid();
    let d = p.diagnosis();
    assert_eq!(d.state, "running");
    assert_eq!(d.pid, Some(pid));
    assert_eq!(d.protocol, Some(1));
    assert!(d.spawn_us.is_some() && d.initialize_us.is_some());
    assert_eq!(d.calls, 2);

    let d = p.shutdown();
    assert_eq!(d.state, "exited");
    assert_eq!(d.exit_code, Some(0));
    assert!(d.stopped_by_host);
    assert!(d.failure.is_none());
    assert_gone(pid);
}

#[test]
fn a_step_runs_and_a_failing_step_keeps_its_error_type() {
    let p = start("fixture-works", WORKS);
    let ok = p
        .call(
            "execute",
            json!({"type": "echo_step", "step": {"id": "s1", "type": "echo_step"}, "context": {"instance_id": "i-1"}}),
        )
        .unwrap();
    assert_eq!(ok["metadata"]["echo"]["instance"], "i-1");
    let err = p
        .call(
            "execute",
            json!({"type": "echo_step", "step": {"id": "s1", "fail": true}, "context": {}}),
        )
        .unwrap_err();
    assert_eq!(err.code(), "plugin-error");
    assert_eq!(err.error_kind(), Some(ErrorKind::StepFailed));
    assert_eq!(
        err.rpc_error().unwrap().data_str("error_type"),
        Some("ValueError")
    );
    assert_eq!(
        err.rpc_error().unwrap().data_str("message"),
        Some("asked to fail")
    );
    let invalid = p
        .call(
            "task_step.validate",
            json!({"type": "echo_step", "step": {"type": "echo_step"}}),
        )
        .unwrap_err();
    assert_eq!(invalid.error_kind(), Some(ErrorKind::InvalidValue));
    let pid = p.pid();
    drop(p);
    assert_gone(pid);
}

#[test]
fn the_plugin_calls_the_host_during_a_call() {
    let services = Arc::new(TestServices::default());
    let p = PluginProcess::start(spec("fixture-works", WORKS), &quick_config(), services).unwrap();
    let out = p
        .call(
            "execute",
            json!({"type": "store_roundtrip", "step": {"text": "hello host"}, "context": {}}),
        )
        .unwrap();
    let rt = &out["metadata"]["roundtrip"];
    assert_eq!(rt["url"], format!("test://{WORKS}/roundtrip.txt"));
    assert_eq!(rt["back"], "hello host");
    assert_eq!(rt["secret"], "s3cret");
    // A host error keeps its kind on the way back through the plugin.
    let err = p
        .call(
            "call_host",
            json!({"method": "host.store.object.get", "params": {"url": "test://x/missing"}}),
        )
        .unwrap_err();
    assert_eq!(err.error_kind(), Some(ErrorKind::NotFound));
    assert!(
        err.to_string().contains("No object at test://x/missing."),
        "{err}"
    );
    assert_eq!(
        p.call("call_host", json!({"method": "host.ping", "params": {}}))
            .unwrap(),
        "pong"
    );
}

#[test]
fn progress_reaches_the_services_and_logs_reach_the_diagnosis() {
    let services = Arc::new(TestServices::default());
    let p = PluginProcess::start(
        spec("fixture-works", WORKS),
        &quick_config(),
        services.clone(),
    )
    .unwrap();
    p.call("progress", json!({})).unwrap();
    let seen = services.progress.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![
            (WORKS.to_string(), 1.0),
            (WORKS.to_string(), 2.0),
            (WORKS.to_string(), 3.0)
        ]
    );
    let d = p.shutdown();
    assert!(
        d.stderr_tail.contains("[warning] progress done"),
        "{}",
        d.stderr_tail
    );
}

#[test]
fn a_plugin_store_opens_with_checked_config_and_keeps_error_kinds() {
    let p = start("fixture-works", WORKS);
    let err = p
        .call(
            "store.open",
            json!({"kind": "object", "class": "MemoryObjectStore", "config": {"root": "/r", "compress": true}}),
        )
        .unwrap_err();
    assert_eq!(err.error_kind(), Some(ErrorKind::ConfigError));
    assert_eq!(
        err.rpc_error().unwrap().message,
        format!("The config table for '{WORKS}:MemoryObjectStore' has unknown key 'compress'; it takes root, bucket")
    );
    let missing = p
        .call(
            "store.open",
            json!({"kind": "object", "class": "MemoryObjectStore", "config": {}}),
        )
        .unwrap_err();
    assert!(
        missing.to_string().contains("required key 'root'"),
        "{missing}"
    );

    let open = p
        .call(
            "store.open",
            json!({"kind": "object", "class": "MemoryObjectStore", "config": {"root": "/r", "bucket": "b"}}),
        )
        .unwrap();
    let handle = open["handle"].as_str().unwrap().to_string();
    let put = p
        .call(
            "store.object.put",
            json!({"handle": handle, "key": "k", "data": "aGk=", "content_type": null, "allow_overwrite": false}),
        )
        .unwrap();
    assert_eq!(put["url"], "mem://b/k");
    let again = p
        .call(
            "store.object.put",
            json!({"handle": handle, "key": "k", "data": "aGk=", "content_type": null, "allow_overwrite": false}),
        )
        .unwrap_err();
    assert_eq!(again.error_kind(), Some(ErrorKind::AlreadyExists));
    let got = p
        .call(
            "store.object.get",
            json!({"handle": handle, "url": "mem://b/k"}),
        )
        .unwrap();
    assert_eq!(got["data"], "aGk=");
    let missing = p
        .call(
            "store.object.get",
            json!({"handle": handle, "url": "mem://b/nope"}),
        )
        .unwrap_err();
    assert_eq!(missing.code(), "plugin-error");
    assert_eq!(missing.error_kind(), Some(ErrorKind::NotFound));
    assert_eq!(
        p.call(
            "store.object.exists",
            json!({"handle": handle, "key": "nope"})
        )
        .unwrap(),
        json!({"exists": false})
    );
    let listed = p
        .call(
            "store.object.list_at",
            json!({"handle": handle, "url_prefix": "mem://b/"}),
        )
        .unwrap();
    assert_eq!(listed, json!({"urls": ["mem://b/k"]}));
}

#[test]
fn a_stray_println_goes_to_stderr_not_the_protocol() {
    let p = start("fixture-works", WORKS);
    assert_eq!(p.call("stray_print", json!({})).unwrap(), json!("printed"));
    assert_eq!(
        p.call("echo", json!({"still": "fine"})).unwrap(),
        json!({"still": "fine"})
    );
    let d = p.shutdown();
    assert_eq!(d.noise_lines, 0);
    assert!(
        d.stderr_tail
            .contains("this stray line must land on stderr"),
        "{}",
        d.stderr_tail
    );
}

#[test]
fn the_pool_reuses_one_process_per_package_and_shuts_all_down() {
    let host = PluginHost::new(quick_config(), Arc::new(NoServices));
    let a = host.connect(&spec("fixture-works", WORKS)).unwrap();
    let b = host
        .connect(&spec("fixture-works", "AgentEnv_Fixture.Works"))
        .unwrap();
    assert_eq!(a.pid(), b.pid());
    let results = host.start_all_parallel(&[
        spec("fixture-works", WORKS),
        spec("fixture-crash", "agentenv-fixture-crash"),
        spec("fixture-hang-call", "agentenv-fixture-hang-call"),
    ]);
    assert_eq!(results.len(), 3);
    let pids: Vec<u32> = results
        .iter()
        .map(|(_, r)| r.as_ref().unwrap().pid())
        .collect();
    assert_eq!(pids[0], a.pid());
    let diagnoses = host.shutdown_all();
    assert_eq!(diagnoses.len(), 3);
    assert!(
        diagnoses.iter().all(|d| d.exit_code == Some(0)),
        "{diagnoses:?}"
    );
    for pid in pids {
        assert_gone(pid);
    }
    let _: Value = json!(null);
}

#[test]
fn a_released_process_is_stopped_and_the_next_connect_starts_afresh_without_a_failure() {
    let host = PluginHost::new(quick_config(), Arc::new(NoServices));
    let first = host.connect(&spec("fixture-works", WORKS)).unwrap();
    let pid = first.pid();
    let diagnosis = host.release(WORKS).expect("it was running");
    assert_eq!(diagnosis.exit_code, Some(0), "{diagnosis:?}");
    assert_gone(pid);
    assert!(host.get(WORKS).is_none());
    assert!(host.release(WORKS).is_none(), "nothing left to release");
    for _ in 0..4 {
        let again = host.connect(&spec("fixture-works", WORKS)).unwrap();
        assert_ne!(again.pid(), pid);
        host.release(WORKS);
    }
    assert_eq!(host.failures(WORKS), 0, "releases are not crashes");
    host.shutdown_all();
}
