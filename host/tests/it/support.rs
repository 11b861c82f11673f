//! What the host tests share: specs starting the fixture plugins (built once per test process by
//! `agent-env-test-support`), short timeouts, test services, and process checks.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use agent_env_host::{HostConfig, HostServices, ProgressParams, SpawnSpec};
use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::message::RpcError;
use agent_env_protocol::methods::bytes;
use serde_json::{json, Map, Value};

pub use agent_env_test_support::fixture;

/// A spec that starts fixture `name` as package `package`.
pub fn spec(name: &str, package: &str) -> SpawnSpec {
    let exe = fixture(name);
    SpawnSpec {
        package: package.into(),
        version: "0.1.0".into(),
        manifest_path: PathBuf::from(format!("/fixtures/{name}/agent-env-plugin.toml")),
        argv: vec![exe.display().to_string()],
        settings: Map::new(),
        command_mode: false,
        env: Vec::new(),
    }
}

/// Fixture `fixture` started as package `package` with the quick config and no host services.
pub fn start(fixture: &str, package: &str) -> agent_env_host::PluginProcess {
    agent_env_host::PluginProcess::start(
        spec(fixture, package),
        &quick_config(),
        std::sync::Arc::new(agent_env_host::NoServices),
    )
    .unwrap()
}

/// Short timeouts, so failing fixtures fail fast.
pub fn quick_config() -> HostConfig {
    HostConfig {
        host_version: env!("CARGO_PKG_VERSION").into(),
        start_timeout: Duration::from_secs(5),
        handshake_timeout: Duration::from_secs(3),
        call_timeout: Duration::from_secs(20),
        grace: Duration::from_millis(500),
        crash_loop_pause: Duration::from_secs(60),
        pins: None,
        parent_env: None,
    }
}

/// Services with a tiny object store and one secret, recording progress.
#[derive(Default)]
pub struct TestServices {
    objects: Mutex<HashMap<String, Vec<u8>>>,
    pub progress: Mutex<Vec<(String, f64)>>,
}

impl HostServices for TestServices {
    fn handle(&self, package: &str, method: &str, params: Value) -> Result<Value, RpcError> {
        let mut objects = self.objects.lock().unwrap();
        match method {
            "host.store.object.put" => {
                let key = params["key"].as_str().unwrap_or_default().to_string();
                let data = bytes::decode(params["data"].as_str().unwrap_or_default())
                    .map_err(|e| RpcError::new(ErrorKind::InvalidParams, e.to_string()))?;
                objects.insert(key.clone(), data);
                Ok(json!({ "url": format!("test://{package}/{key}") }))
            }
            "host.store.object.get" => {
                let url = params["url"].as_str().unwrap_or_default();
                let key = url.rsplit('/').next().unwrap_or_default();
                objects
                    .get(key)
                    .map(|d| json!({ "data": bytes::encode(d) }))
                    .ok_or_else(|| {
                        RpcError::new(ErrorKind::NotFound, format!("No object at {url}."))
                    })
            }
            "host.store.secret.get" => {
                Ok(json!({ "value": (params["name"] == "token").then_some("s3cret") }))
            }
            "host.ping" => Ok(json!("pong")),
            _ => Err(RpcError::new(ErrorKind::MethodNotFound, method.to_string())),
        }
    }

    fn progress(&self, package: &str, p: &ProgressParams) {
        self.progress
            .lock()
            .unwrap()
            .push((package.to_string(), p.progress.unwrap_or(0.0)));
    }
}

/// (state, ppid, pgrp) of a process, from `/proc/<pid>/stat`.
pub fn proc_stat(pid: i32) -> Option<(char, i32, i32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 2..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, ppid, pgrp))
}

/// Every process (pid, state) whose process group is `group`.
pub fn group_members(group: i32) -> Vec<(i32, char)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if let Some((state, _, pgrp)) = proc_stat(pid) {
            if pgrp == group {
                out.push((pid, state));
            }
        }
    }
    out
}

/// Asserts that the plugin process `pid` is gone (reaped: no zombie) and that nothing of its
/// process group is left (no orphaned grandchild), waiting a little for the kernel to catch up.
pub fn assert_gone(pid: u32) {
    let pid = pid as i32;
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let own = proc_stat(pid);
        let members = group_members(pid);
        if own.is_none() && members.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            panic!("plugin process {pid} left behind: itself {own:?}, its group {members:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
