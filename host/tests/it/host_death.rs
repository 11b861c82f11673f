//! When agent-env itself is killed with `SIGKILL`: nothing of the host runs any more, so only the
//! kernel can end its plugins. The test re-runs this test binary as the "host" (the ignored test
//! below, selected by an environment variable), kills it with `SIGKILL` and checks what survives.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::*;
use agent_env_host::{NoServices, PluginProcess};
use serde_json::json;

const PIDS_FILE_VAR: &str = "AGENT_ENV_TEST_HOST_DEATH_PIDS";

/// The "host": starts the setsid grandchild fixture, writes "<plugin pid> <grandchild pid>" to the
/// file named by the variable, then waits to be killed.
#[test]
#[ignore = "run by plugin_dies_with_the_host_killed_by_sigkill as its host process"]
fn host_for_the_death_test() {
    let Ok(file) = std::env::var(PIDS_FILE_VAR) else {
        return;
    };
    let mut s = spec("fixture-grandchild", "agentenv-fixture-grandchild");
    s.argv.push("--setsid".into());
    let p = PluginProcess::start(s, &quick_config(), Arc::new(NoServices)).unwrap();
    let grandchild = p.call("grandchild_pid", json!({})).unwrap()["pid"]
        .as_i64()
        .unwrap();
    let tmp = format!("{file}.tmp");
    std::fs::write(&tmp, format!("{} {grandchild}", p.pid())).unwrap();
    std::fs::rename(&tmp, &file).unwrap();
    std::thread::sleep(Duration::from_secs(600));
}

fn wait_for_pids(file: &std::path::Path) -> (i32, i32) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(text) = std::fs::read_to_string(file) {
            let pids: Vec<i32> = text.split(' ').map(|p| p.parse().unwrap()).collect();
            return (pids[0], pids[1]);
        }
        assert!(
            Instant::now() < deadline,
            "the host never started its plugin"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kills `pid` if it still runs `command` (so not a recycled pid), and reaps it if it is ours.
fn kill_and_reap(pid: i32, command: &str) {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    if comm.trim_end() != command {
        return;
    }
    // SAFETY: kill and waitpid on a pid the test process started (through its host).
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        let mut status = 0;
        let deadline = Instant::now() + Duration::from_secs(10);
        while proc_stat(pid).is_some_and(|(state, _, _)| state != 'Z') && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        libc::waitpid(pid, &mut status, libc::WNOHANG);
    }
}

#[test]
fn plugin_dies_with_the_host_killed_by_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pids");
    let mut host = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "host_death::host_for_the_death_test",
            "--ignored",
        ])
        .env(PIDS_FILE_VAR, &file)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (plugin, grandchild) = wait_for_pids(&file);
    host.kill().unwrap();
    host.wait().unwrap();
    // Guaranteed: the plugin gets SIGKILL from the kernel (PR_SET_PDEATHSIG) when its host dies. It
    // may stay a zombie of this test process when the test process is a subreaper (other tests
    // started plugins in it), so "ended" is gone or a zombie.
    let deadline = Instant::now() + Duration::from_secs(30);
    let plugin_ended = loop {
        match proc_stat(plugin) {
            None | Some(('Z', _, _)) => break true,
            Some(_) if Instant::now() >= deadline => break false,
            Some(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    };
    // Not guaranteed: a grandchild that left the plugin's session with setsid is reparented and
    // lives on (docs/protocol.md, lifecycle). End both here so the test leaves nothing behind.
    kill_and_reap(grandchild, "sleep");
    kill_and_reap(plugin, "fixture-grandch");
    assert!(
        plugin_ended,
        "plugin {plugin} outlived its host killed by SIGKILL"
    );
}
