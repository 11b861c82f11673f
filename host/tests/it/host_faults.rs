//! Every way a plugin can misbehave at start: each gives its stable code and a message naming the
//! plugin, its executable and its stderr tail; the host carries on; no process is left behind.

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

use crate::support::*;
use agent_env_host::{NoServices, PluginProcess, SpawnSpec, StartFailure};
use serde_json::json;

fn start_failure(spec: SpawnSpec) -> StartFailure {
    match PluginProcess::start_diagnosed(spec, &quick_config(), Arc::new(NoServices)) {
        Ok(p) => panic!("{} started, but should not have", p.package()),
        Err(f) => f,
    }
}

/// A working plugin still answers: one misbehaving plugin does not take the host down.
fn host_carries_on() {
    let p = start("fixture-works", "agentenv-fixture-works");
    assert_eq!(p.call("echo", json!({"ok": 1})).unwrap(), json!({"ok": 1}));
    let pid = p.pid();
    p.shutdown();
    assert_gone(pid);
}

fn assert_names(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "'{part}' missing from: {message}");
    }
}

#[test]
fn a_missing_executable_is_not_found() {
    let mut s = spec("fixture-works", "agentenv-missing");
    s.argv = vec!["/nonexistent/bin/agentenv-missing".into()];
    let f = start_failure(s);
    assert_eq!(f.error.code(), "not-found");
    assert_names(
        &f.error.to_string(),
        &[
            "plugin agentenv-missing cannot start",
            "/nonexistent/bin/agentenv-missing does not exist",
            "/fixtures/fixture-works/agent-env-plugin.toml",
        ],
    );
    assert_eq!(f.diagnosis.state, "not-started");
    assert_eq!(f.diagnosis.failure.as_ref().unwrap().code, "not-found");
    let mut bare = spec("fixture-works", "agentenv-missing");
    bare.argv = vec!["agentenv-surely-not-on-path".into()];
    let f = start_failure(bare);
    assert_eq!(f.error.code(), "not-found");
    // A bare name is looked for on PATH, not at a path: said so, with the folders searched.
    let path = std::env::var("PATH").unwrap();
    assert_names(
        &f.error.to_string(),
        &[&format!(
            "its executable agentenv-surely-not-on-path is not on PATH ({path}); install it or add its folder to PATH, or fix 'exec' in "
        )],
    );
    assert!(
        !f.error.to_string().contains("does not exist"),
        "{}",
        f.error
    );
    host_carries_on();
}

#[test]
fn a_file_without_execute_permission_is_not_executable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agentenv-noexec");
    std::fs::write(&path, "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut s = spec("fixture-works", "agentenv-noexec");
    s.argv = vec![path.display().to_string()];
    let f = start_failure(s);
    assert_eq!(f.error.code(), "not-executable");
    assert_names(
        &f.error.to_string(),
        &[
            "agentenv-noexec",
            &path.display().to_string(),
            "no execute permission",
            "chmod +x",
        ],
    );
    host_carries_on();
}

#[test]
fn a_script_with_a_missing_interpreter_fails_to_spawn() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agentenv-badshebang");
    std::fs::write(&path, "#!/nonexistent/python9\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut s = spec("fixture-works", "agentenv-badshebang");
    s.argv = vec![path.display().to_string()];
    let f = start_failure(s);
    assert_eq!(f.error.code(), "spawn-failed");
    assert_names(
        &f.error.to_string(),
        &["agentenv-badshebang", "interpreter"],
    );
}

#[test]
fn a_plugin_that_exits_at_start_reports_its_code_and_stderr() {
    let f = start_failure(spec("fixture-exit-at-start", "agentenv-fixture-exit"));
    assert_eq!(f.error.code(), "exited-at-start");
    assert_names(
        &f.error.to_string(),
        &[
            "plugin agentenv-fixture-exit",
            "fixture-exit-at-start",
            "exited with code 3 before answering initialize",
            "cannot start: the settings file is missing",
        ],
    );
    assert_eq!(f.diagnosis.exit_code, Some(3));
    assert_gone(f.diagnosis.pid.unwrap());
    host_carries_on();
}

#[test]
fn a_plugin_that_exits_zero_at_once_did_not_start() {
    let f = start_failure(spec("fixture-exit-zero", "agentenv-fixture-exit-zero"));
    assert_eq!(f.error.code(), "exited-at-start");
    assert_names(
        &f.error.to_string(),
        &[
            "agentenv-fixture-exit-zero",
            "fixture-exit-zero",
            "exited with code 0",
            "its stderr was empty",
        ],
    );
    assert_gone(f.diagnosis.pid.unwrap());
    host_carries_on();
}

#[test]
fn a_plugin_that_hangs_in_the_handshake_times_out_and_is_killed() {
    let f = start_failure(spec("fixture-hang-handshake", "agentenv-fixture-hang"));
    assert_eq!(f.error.code(), "handshake-timeout");
    assert_names(
        &f.error.to_string(),
        &[
            "agentenv-fixture-hang",
            "fixture-hang-handshake",
            "did not answer initialize within 3 s",
            "AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT",
            "thinking very hard before the handshake",
        ],
    );
    assert!(f.diagnosis.stopped_by_host);
    assert_gone(f.diagnosis.pid.unwrap());
    host_carries_on();
}

#[test]
fn a_plugin_for_another_protocol_is_a_protocol_mismatch() {
    let f = start_failure(spec("fixture-protocol99", "agentenv-fixture-protocol99"));
    assert_eq!(f.error.code(), "protocol-mismatch");
    let message = f.error.to_string();
    assert!(
        message.starts_with("plugin agentenv-fixture-protocol99 speaks protocol 99, agent-env speaks 1: upgrade agent-env or install a version of the plugin for protocol 1"),
        "{message}"
    );
    assert_names(&message, &["fixture-protocol99"]);
    assert_gone(f.diagnosis.pid.unwrap());
    host_carries_on();
}

#[test]
fn garbage_on_stdout_is_counted_and_the_connection_lives() {
    let p = start("fixture-garbage", "agentenv-fixture-garbage");
    for i in 0..3 {
        assert_eq!(
            p.call("noisy_echo", json!({"i": i})).unwrap(),
            json!({"i": i})
        );
    }
    let d = p.diagnosis();
    assert_eq!(d.noise_lines, 1 + 3 * 2);
    assert_eq!(d.noise_samples[0], "DEBUG: fixture-garbage starting up");
    assert_eq!(d.noise_samples[1], "progress: 50% (not JSON)");
    assert!(d
        .render()
        .contains("7 non-protocol line(s); first: 'DEBUG: fixture-garbage starting up'"));
    let pid = p.pid();
    let d = p.shutdown();
    assert_eq!(d.exit_code, Some(0));
    assert_gone(pid);
}

#[test]
fn ten_megabytes_of_stderr_neither_block_nor_bloat() {
    let p = start("fixture-stderr-flood", "agentenv-fixture-stderr-flood");
    assert_eq!(
        p.call("echo", json!({"after": "flood"})).unwrap(),
        json!({"after": "flood"})
    );
    let pid = p.pid();
    let d = p.shutdown();
    assert!(d.stderr_bytes >= 10 * 1024 * 1024, "{}", d.stderr_bytes);
    assert!(d.stderr_lines > 10_000);
    assert!(d.stderr_tail.len() <= 64 * 1024);
    assert!(d
        .stderr_tail
        .trim_end()
        .ends_with("10 MB written, now serving"));
    assert_gone(pid);
}

#[test]
fn a_plugin_that_exits_at_start_behind_a_grandchild_is_seen_by_wait_status() {
    let mut s = spec("fixture-grandchild", "agentenv-fixture-grandchild");
    s.argv.push("--exit-at-start".into());
    let f = start_failure(s);
    // The grandchild holds stdout open, so only the wait status can say the plugin ended.
    assert_eq!(f.error.code(), "exited-at-start");
    assert_names(
        &f.error.to_string(),
        &["exited with code 4", "exiting at start"],
    );
    assert_gone(f.diagnosis.pid.unwrap());
}

#[test]
fn a_program_that_prints_garbage_and_exits_names_what_it_printed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("not-a-plugin");
    std::fs::write(
        &path,
        "echo 'this is not json'\necho '{\"neither\": \"is this\"}'\nexit 0\n",
    )
    .unwrap();
    let mut s = spec("fixture-works", "agentenv-not-a-plugin");
    s.argv = vec!["/bin/sh".into(), path.display().to_string()];
    let f = start_failure(s);
    assert_eq!(f.error.code(), "exited-at-start");
    assert_eq!(f.diagnosis.noise_lines, 2, "{:?}", f.diagnosis);
    assert_names(
        &f.error.to_string(),
        &[
            "exited with code 0",
            "non-protocol output to stdout (first: 'this is not json')",
        ],
    );
    assert_gone(f.diagnosis.pid.unwrap());
}
