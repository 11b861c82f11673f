//! What a task's command leaves running after it ends. What stays in its process group stops with
//! it; what it started in a session of its own (`setsid`) runs on, so a later step of the task may
//! use it, until the task's sandbox is torn down, which stops it before the folder is removed.

use std::path::Path;
use std::time::Duration;

use crate::support::run::Sandboxed;

/// The pid in `file`.
fn pid_in(file: &Path) -> i32 {
    std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .trim()
        .parse()
        .unwrap()
}

/// Whether the process `pid` runs (neither gone nor a zombie).
fn runs(pid: i32) -> bool {
    // SAFETY: signal 0 only asks whether the process exists.
    let exists = unsafe { libc::kill(pid, 0) } == 0;
    exists
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit_once(')')
                .is_some_and(|(_, s)| s.trim_start().starts_with('Z'))
        })
}

/// Whether the process `pid` has stopped running within 5 s (its killer may still be at it).
fn stops_soon(pid: i32) -> bool {
    (0..250).any(|_| {
        let running = runs(pid);
        if running {
            std::thread::sleep(Duration::from_millis(20));
        }
        !running
    })
}

#[test]
fn what_a_command_started_in_its_own_session_serves_later_steps_and_stops_at_teardown() {
    let s = Sandboxed::new();
    let outside = s.dir.path().join("server.pid");
    // The criterion waits until the kernel shows the marker in the server's environment (it is
    // set as the `exec` completes), then leaves the server running and ends.
    let start = format!(
        "setsid sleep 600 & pid=$!; \
         until [ \"$(cat /proc/$pid/comm 2>/dev/null)\" = sleep ] && grep -qz AGENT_ENV_TASK_COMMAND_DIR= /proc/$pid/environ; do sleep 0.01; done; \
         echo $pid > server.pid; echo $pid > '{}'; exit 0",
        outside.display()
    );
    let task = serde_json::json!([
        {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
        {"id": "serve", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "serve",
         "criteria": [{"type": "bash_cmd_succeeds", "command": start}]},
        {"id": "use", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "use",
         "criteria": [{"type": "bash_cmd_succeeds", "command": "kill -0 \"$(cat server.pid)\""}]}
    ]);
    s.write("bg/tasks/b.json", &task.to_string());
    let r = s.run(&["run", "./bg"]);
    let pid = pid_in(&outside);
    let stopped = stops_soon(pid);
    if !stopped {
        // SAFETY: the test's own leftover, found by the pid it wrote.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    assert_eq!(r.code, 0, "{}", r.both());
    r.assert_stdout_has("tasks/b.json v1: passed (serve: 1, use: 1)");
    assert!(
        stopped,
        "the server {pid} started in the sandbox outlived it: {}",
        r.both()
    );
    assert!(s.sandboxes_left().is_empty(), "{:?}", s.sandboxes_left());
}
