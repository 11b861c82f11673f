//! Black-box through the pipe: the built plugin binary, installed into a temp plugins directory, started
//! by the core's own host code (`PluginProcess`), answering `initialize`, `store.open`, `store.object.*`
//! and `execute`. The core's object kit (`agent_env::stores::kits::object`) runs against the plugin store
//! as the host sees it (`PluginObjectStore`), exactly as it would for a configured plugin store.

use std::path::PathBuf;
use std::process::Command;

use crate::support::pipe::{open_store, root_config, start, BINARY};
use agent_env::stores::kits::{self, object};
use agent_env::stores::ObjectStore;
use agent_env_host::PluginProcess;
use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::manifest::Manifest;
use agentenv_openciv3::cas::{CasConfig, ContentAddressedObjectStore};
use serde_json::{json, Value};

#[test]
fn the_core_object_kit_passes_through_the_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let process = start(&dir.path().join("plugins"));
    let store = open_store(&process, root_config(&dir.path().join("cas"))).unwrap();
    let kit = object::cases();
    assert_eq!(kit.cases.len(), 27);
    let report = kits::run(&kit, &store as &dyn ObjectStore, "");
    assert!(report.all_passed(), "{}", report.lines().join("\n"));
    // And again in a namespace of the same (now non-empty) root, as a shared store would be checked.
    let report = kits::run(&kit, &store as &dyn ObjectStore, "ns-2/");
    assert!(report.all_passed(), "{}", report.lines().join("\n"));
}

#[test]
fn the_core_object_kit_passes_on_the_library_store_too() {
    let dir = tempfile::tempdir().unwrap();
    let process = start(&dir.path().join("plugins"));
    let root = dir.path().join("cas");
    let store = open_store(&process, root_config(&root)).unwrap();
    let report = kits::run(&object::cases(), &store as &dyn ObjectStore, "");
    assert!(report.all_passed());
    // What the plugin wrote is readable by the library on the same root: one format, two processes.
    let library = ContentAddressedObjectStore::new(
        CasConfig::new(root.to_str().unwrap(), "openciv3").unwrap(),
    );
    assert!(!library.list("").unwrap().is_empty());
    for key in library.list("").unwrap() {
        assert_eq!(
            library.read(&key).unwrap(),
            store.read(&key).unwrap(),
            "{key}"
        );
    }
}

#[test]
fn identical_payloads_share_one_blob_through_the_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("cas");
    let process = start(&dir.path().join("plugins"));
    let store = open_store(&process, root_config(&root)).unwrap();
    let first = store
        .put("recordings/game-1.mp4", b"same bytes", "video/mp4", false)
        .unwrap();
    let second = store
        .put("recordings/game-2.mp4", b"same bytes", "video/mp4", false)
        .unwrap();
    assert_ne!(first, second);
    assert_eq!(first, "cas://openciv3/recordings/game-1.mp4");
    assert_eq!(store.get(&first).unwrap(), b"same bytes");
    assert_eq!(store.get(&second).unwrap(), b"same bytes");
    let library = ContentAddressedObjectStore::new(
        CasConfig::new(root.to_str().unwrap(), "openciv3").unwrap(),
    );
    assert_eq!(library.blob_count().unwrap(), 1);
    let meta = store
        .get_object_metadata("recordings/game-2.mp4")
        .unwrap()
        .unwrap();
    assert_eq!(meta.content_type.as_deref(), Some("video/mp4"));
}

#[test]
fn an_unknown_config_key_is_refused_with_the_keys_it_takes() {
    let dir = tempfile::tempdir().unwrap();
    let process = start(&dir.path().join("plugins"));
    let config = json!({"root": dir.path().join("cas"), "bucket": "openciv3", "compress": true});
    let err = open_store(&process, config).err().expect("refused");
    let rpc = err.rpc_error().expect("an error answer").clone();
    assert_eq!(rpc.kind(), Some(ErrorKind::ConfigError));
    assert_eq!(
        rpc.message,
        "The config table for 'agentenv-openciv3:ContentAddressedObjectStore' has unknown key 'compress'; it takes root, bucket"
    );
    assert!(!dir.path().join("cas").exists());
}

#[test]
fn the_handshake_lists_the_three_steps_the_command_and_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let process = start(&dir.path().join("plugins"));
    let hello = process.handshake();
    let mut steps: Vec<&str> = hello
        .contributions
        .iter()
        .filter(|c| c.group == "task_steps")
        .map(|c| c.name.as_str())
        .collect();
    steps.sort();
    assert_eq!(
        steps,
        [
            "openciv3_await_game",
            "openciv3_match",
            "save_env_recording"
        ]
    );
    assert!(hello
        .contributions
        .iter()
        .any(|c| c.group == "cli_plugins" && c.name == "openciv3"));
    let store = &hello.stores[0];
    assert_eq!(
        (store.class.as_str(), store.kind.as_str()),
        ("ContentAddressedObjectStore", "object")
    );
    assert_eq!(store.config_keys, ["root", "bucket"]);
}

fn execute(
    process: &PluginProcess,
    step: Value,
    context: Value,
) -> Result<Value, (String, String)> {
    let step_type = step["type"].clone();
    process
        .call(
            "execute",
            json!({"type": step_type, "step": step, "context": context}),
        )
        .map_err(|err| {
            let rpc = err.rpc_error().expect("a step-failed answer").clone();
            assert_eq!(rpc.kind(), Some(ErrorKind::StepFailed));
            let data = rpc.data.clone().unwrap_or_default();
            (
                data["error_type"].as_str().unwrap_or("").to_string(),
                data["message"].as_str().unwrap_or("").to_string(),
            )
        })
}

fn env_context(extensions: &[&str]) -> Value {
    json!({
        "instance_id": "@local/agentenv-openciv3/openciv3/smoke-i1",
        "metadata": {"task_id": "smoke"},
        "deployed_envs": [{"env_id": "openciv3", "env_card": {"extensions": extensions.iter().map(|u| json!({"uri": u})).collect::<Vec<_>>()}}],
        "deployed_agents": [{"agent_name": "claude"}, {"agent_name": "codex"}],
    })
}

#[test]
fn every_step_fails_when_its_env_is_not_deployed() {
    let dir = tempfile::tempdir().unwrap();
    let process = start(&dir.path().join("plugins"));
    for step in [
        json!({"id": "m", "type": "openciv3_match", "env_id": "civ", "turns": 5}),
        json!({"id": "g", "type": "openciv3_await_game", "env_id": "civ"}),
        json!({"id": "r", "type": "save_env_recording", "env_id": "civ", "fail_task_on_error": true}),
    ] {
        let (error_type, message) =
            execute(&process, step.clone(), json!({"deployed_envs": []})).unwrap_err();
        assert_eq!(error_type, "ValueError", "{step}");
        assert_eq!(message, "env 'civ' is not deployed in this run", "{step}");
    }
}

#[test]
fn a_match_refuses_an_agent_that_is_also_a_human_before_calling_the_env() {
    let dir = tempfile::tempdir().unwrap();
    let process = start(&dir.path().join("plugins"));
    let step = json!({"id": "m", "type": "openciv3_match", "env_id": "openciv3", "turns": 5,
                      "civs": {"claude": "Romans"}, "humans": ["claude"]});
    // No env is deployed at all: the refusal comes from the document, before any env is looked at.
    let (error_type, message) = execute(&process, step.clone(), json!({})).unwrap_err();
    assert_eq!(error_type, "ValueError");
    assert_eq!(
        message,
        "openciv3_match step 'm': 'claude' is listed both as an agent and in humans; a seat is an agent's or a human's, not both"
    );
    let validated = process
        .call(
            "task_step.validate",
            json!({"type": "openciv3_match", "step": step}),
        )
        .unwrap_err();
    assert_eq!(
        validated.rpc_error().unwrap().kind(),
        Some(ErrorKind::InvalidValue)
    );
}

#[test]
fn a_match_checks_its_seats_and_the_envs_extension() {
    let dir = tempfile::tempdir().unwrap();
    let process = start(&dir.path().join("plugins"));
    let step = json!({"id": "m", "type": "openciv3_match", "env_id": "openciv3", "turns": 5});
    let (_, message) = execute(&process, step.clone(), env_context(&[])).unwrap_err();
    assert_eq!(
        message,
        "env 'openciv3' does not advertise urn:openciv3:new-game/v1"
    );
    let undeployed = json!({"id": "m", "type": "openciv3_match", "env_id": "openciv3", "turns": 5, "agents": ["gemini"]});
    let (_, message) = execute(
        &process,
        undeployed,
        env_context(&["urn:openciv3:new-game/v1"]),
    )
    .unwrap_err();
    assert_eq!(
        message,
        "openciv3_match: agent 'gemini' is not deployed in this run"
    );
    let duplicate = json!({"id": "m", "type": "openciv3_match", "env_id": "openciv3", "turns": 5,
                           "civs": {"claude": "Romans", "codex": "Romans"}});
    let (_, message) = execute(
        &process,
        duplicate,
        env_context(&["urn:openciv3:new-game/v1"]),
    )
    .unwrap_err();
    assert_eq!(
        message,
        "openciv3_match step 'm': civ 'Romans' is given to both 'claude' and 'codex'"
    );
    let (error_type, message) =
        execute(&process, step, env_context(&["urn:openciv3:new-game/v1"])).unwrap_err();
    assert_eq!(error_type, "NotImplementedError");
    assert!(message.contains("starting a game of 2 seats"), "{message}");
}

#[test]
fn save_env_recording_does_not_fail_the_task_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let process = start(&dir.path().join("plugins"));
    // Without fail_task_on_error, the missing extension is recorded and the step succeeds.
    let step = json!({"id": "recording", "type": "save_env_recording", "env_id": "openciv3"});
    let result = execute(&process, step, env_context(&[])).unwrap();
    assert_eq!(
        result["metadata"]["recording_errors"]["recording"],
        json!({"error_type": "ValueError", "message": "env 'openciv3' does not advertise urn:openciv3:recording/v1"})
    );
    // With it, the same problem fails the step.
    let strict = json!({"id": "recording", "type": "save_env_recording", "env_id": "openciv3", "fail_task_on_error": true});
    let (_, message) = execute(&process, strict, env_context(&[])).unwrap_err();
    assert_eq!(
        message,
        "env 'openciv3' does not advertise urn:openciv3:recording/v1"
    );
}

#[test]
fn await_game_checks_its_timing_fields() {
    let dir = tempfile::tempdir().unwrap();
    let process = start(&dir.path().join("plugins"));
    let step = json!({"id": "g", "type": "openciv3_await_game", "env_id": "openciv3", "timeout_seconds": 5, "poll_seconds": 10});
    let (_, message) = execute(&process, step, env_context(&[])).unwrap_err();
    assert_eq!(
        message,
        "openciv3_await_game step 'g': poll_seconds (10) is longer than timeout_seconds (5); poll more often than the timeout"
    );
}

#[test]
fn run_by_hand_it_says_what_it_is_and_prints_its_manifest_on_request() {
    let by_hand = Command::new(BINARY)
        .env_remove("AGENT_ENV_PLUGIN")
        .output()
        .unwrap();
    assert_eq!(by_hand.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&by_hand.stderr).contains("is an agent-env plugin"));
    let manifest = Command::new(BINARY)
        .arg("--agent-env-manifest")
        .output()
        .unwrap();
    assert!(manifest.status.success());
    let text = String::from_utf8(manifest.stdout).unwrap();
    let parsed = Manifest::parse(&PathBuf::from("agent-env-plugin.toml"), &text).unwrap();
    assert_eq!(parsed.name, "agentenv-openciv3");
    assert_eq!(parsed.exec, ["./agentenv-openciv3"]);
}
