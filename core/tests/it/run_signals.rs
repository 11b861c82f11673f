//! Ctrl-C, SIGTERM, SIGHUP and SIGQUIT (Ctrl-\\) during a run, and `--keep` (reference scenarios 25
//! and 26): the run is cancelled, its sandboxes are torn down, the step's child processes are gone,
//! and the exit code tells the signal.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::support::run::{running, Sandboxed};

/// A task whose second step runs a command that starts a grandchild and records both pids.
fn write_slow_bundle(s: &Sandboxed) {
    s.write(
        "slow/tasks/slow.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "wait", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "w",
             "criteria": [{"type": "bash_cmd_succeeds",
                           "command": "sleep 120 & echo $! > grandchild.pid; echo $$ > child.pid; wait"}]}]"#,
    );
}

/// Starts the command with both streams piped.
fn spawn_piped(s: &Sandboxed, args: &[&str]) -> Child {
    s.command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Starts the run and returns the child and a channel of its stdout lines.
fn start(s: &Sandboxed, args: &[&str]) -> (Child, mpsc::Receiver<String>) {
    let mut child = spawn_piped(s, args);
    let out = child.stdout.take().unwrap();
    (child, lines_of(out))
}

/// Starts the command with its stdout kept for the end (a `--json` document) and a channel of its
/// stderr lines, read as they come.
fn start_reading_stderr(s: &Sandboxed, args: &[&str]) -> (Child, mpsc::Receiver<String>) {
    let mut child = spawn_piped(s, args);
    let err = child.stderr.take().unwrap();
    (child, lines_of(err))
}

/// A channel of the lines `stream` yields, read on a thread of their own.
fn lines_of(stream: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Collects lines until one contains `needle`.
fn read_until(rx: &mpsc::Receiver<String>, needle: &str, seen: &mut Vec<String>) {
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no line with {needle:?}; got {seen:?}"));
        let hit = line.contains(needle);
        seen.push(line);
        if hit {
            return;
        }
    }
}

/// Waits until the pid files the command writes exist, and returns the pids.
fn pids(sandbox_root: &Path) -> Vec<i32> {
    for _ in 0..1200 {
        let found: Vec<i32> = std::fs::read_dir(sandbox_root)
            .into_iter()
            .flatten()
            .flatten()
            .flat_map(|e| {
                ["child.pid", "grandchild.pid"]
                    .iter()
                    .filter_map(|f| std::fs::read_to_string(e.path().join(f)).ok())
                    .filter_map(|t| t.trim().parse().ok())
                    .collect::<Vec<i32>>()
            })
            .collect();
        if found.len() == 2 {
            return found;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("the step's command never wrote its pids");
}

/// Whether a process is still running once its group has had a moment to die.
fn alive(pid: i32) -> bool {
    for _ in 0..100 {
        if !running(pid) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

fn cancel_mid_step(signal: i32, expected_code: i32) {
    let s = Sandboxed::new();
    write_slow_bundle(&s);
    let (mut child, rx) = start(&s, &["run", "./slow"]);
    let mut seen = Vec::new();
    read_until(&rx, "step 2/2 wait (verify_sandbox)", &mut seen);
    let step_pids = pids(&s.sandboxes());
    // SAFETY: sends a signal to the child we started.
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
    let status = child.wait().unwrap();
    seen.extend(rx.iter());
    let out = seen.join("\n");
    assert_eq!(status.code(), Some(expected_code), "{out}");
    assert!(out.contains("  tasks/slow.json v1: cancelled, "), "{out}");
    assert!(out.contains(", instance @local/~/slow/slow-"), "{out}");
    assert!(out.ends_with("Tore down 1 sandbox."), "{out}");
    assert!(s.sandboxes_left().is_empty());
    for pid in step_pids {
        assert!(
            !alive(pid),
            "process {pid} the step started is still running"
        );
    }
    let instance = &s.docs("task_instances")[0];
    assert_eq!(instance["status"], "cancelled");
    // The step the signal stopped is recorded as cancelled, not as a failure with no error.
    let steps = instance["completed_steps"].as_array().unwrap();
    assert_eq!(steps[0]["status"], "success", "{steps:?}");
    assert_eq!(steps.last().unwrap()["status"], "cancelled", "{steps:?}");
    let id = instance["instance_id"].as_str().unwrap();
    let shown = s.run(&["task", "get-instance", id]);
    assert!(shown.stdout.contains("\nended:    "), "{}", shown.stdout);
    assert!(
        shown.stdout.contains("  wait cancelled in "),
        "{}",
        shown.stdout
    );
}

/// agent-env killed outright has no chance to tear anything down, but the process a task's command
/// runs in goes with it: the kernel sends it SIGKILL, its parent-death signal.
#[test]
fn sigkill_takes_the_commands_own_process_with_agent_env() {
    let s = Sandboxed::new();
    write_slow_bundle(&s);
    let (mut child, rx) = start(&s, &["run", "./slow"]);
    let mut seen = Vec::new();
    read_until(&rx, "step 2/2 wait (verify_sandbox)", &mut seen);
    pids(&s.sandboxes());
    let own: i32 = std::fs::read_dir(s.sandboxes())
        .unwrap()
        .flatten()
        .find_map(|e| std::fs::read_to_string(e.path().join("child.pid")).ok())
        .and_then(|text| text.trim().parse().ok())
        .unwrap();
    // The log reaches the file while the step runs, so a run killed outright leaves it behind.
    wait_for("the step's start in the run's log", || {
        the_log(&s).contains("step 2/2 wait (verify_sandbox)")
    });
    // SAFETY: signals the child we started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGKILL);
    }
    child.wait().unwrap();
    let survived = alive(own);
    // What the command started in the background is not the kernel's to kill: the test's cleanup.
    // SAFETY: signals the group the command led, all started by this test.
    unsafe {
        libc::kill(-own, libc::SIGKILL);
    }
    assert!(!survived, "the command's process {own} outlived agent-env");
}

#[test]
fn sigint_mid_step_cancels_tears_down_and_exits_130() {
    cancel_mid_step(libc::SIGINT, 130);
}

#[test]
fn sigterm_mid_step_exits_143() {
    cancel_mid_step(libc::SIGTERM, 143);
}

/// The terminal closing (SIGHUP) tears the run down like Ctrl-C; it does not kill it where it stands.
#[test]
fn sighup_mid_step_tears_down_and_exits_129() {
    cancel_mid_step(libc::SIGHUP, 129);
}

/// Ctrl-\\ (SIGQUIT), which a person presses as a harder Ctrl-C, tears the run down like Ctrl-C; it
/// does not kill it where it stands, leaving its sandbox and a running instance.
#[test]
fn sigquit_mid_step_tears_down_and_exits_131() {
    cancel_mid_step(libc::SIGQUIT, 131);
}

#[test]
fn keep_holds_the_sandbox_until_ctrl_c_then_tears_it_down() {
    let s = Sandboxed::new();
    let (mut child, rx) = start(&s, &["run", "hello", "--keep"]);
    let mut seen = Vec::new();
    read_until(
        &rx,
        "Holding 1 sandbox up; Ctrl-C tears it down.",
        &mut seen,
    );
    let out = seen.join("\n");
    assert!(out.contains("passed (hello: 1)"), "{out}");
    assert!(out.contains("\nKept up:\n  local-"), "{out}");
    let kept = s.sandboxes_left();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let work_dir = s.sandboxes().join(&kept[0]);
    assert!(
        out.contains(&format!(
            "local sandbox 'box'  folder  {}  [tasks/hello.json]",
            work_dir.display()
        )),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(work_dir.join("greeting/hello.txt")).unwrap(),
        "hello\n"
    );
    // SAFETY: sends a signal to the child we started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    seen.extend(rx.iter());
    assert_eq!(status.code(), Some(0), "{}", seen.join("\n"));
    assert_eq!(
        seen.last().map(String::as_str),
        Some("Tore down 1 sandbox.")
    );
    assert!(s.sandboxes_left().is_empty());
}

/// `--keep --json` prints its document as the hold begins, with the sandboxes kept, so a script
/// reads where they are while they are up; Ctrl-C then tears them down and prints nothing more.
#[test]
fn keep_with_json_prints_the_document_while_the_sandboxes_are_up() {
    let s = Sandboxed::new();
    let (mut child, rx) = start(&s, &["run", "hello", "--keep", "--json"]);
    let mut lines = Vec::new();
    // The pretty document ends with its closing brace alone on a line.
    while lines.last().map(String::as_str) != Some("}") {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no whole document on stdout; got {lines:?}"));
        lines.push(line);
    }
    let doc: serde_json::Value = serde_json::from_str(&lines.join("\n")).unwrap();
    assert_eq!(doc["status"], "passed", "{doc:#}");
    assert_eq!(doc["exit_code"], 0, "{doc:#}");
    let kept = doc["kept_sandboxes"].as_array().unwrap();
    assert_eq!(kept.len(), 1, "{doc:#}");
    assert_eq!(kept[0]["task_path"], "tasks/hello.json");
    assert_eq!(kept[0]["name"], "box");
    assert_eq!(kept[0]["provider"], "local");
    let work_dir = std::path::PathBuf::from(kept[0]["work_dir"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(work_dir.join("greeting/hello.txt")).unwrap(),
        "hello\n",
        "the kept sandbox is up while the document is read"
    );
    // SAFETY: sends a signal to the child we started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let status = child.wait().unwrap();
    let after: Vec<String> = rx.iter().collect();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(after.is_empty(), "one document only: {after:?}");
    assert!(
        stderr.contains("Tearing down the kept sandboxes;"),
        "{stderr}"
    );
    assert!(!work_dir.exists(), "{stderr}");
}

/// Ctrl-C (or a script's SIGTERM, which the wait's message names with the run's pid) while the run
/// waits for another run to finish writing the bundle's ids cancels it like a signal during its
/// tasks: exit 128 + the signal, and `--json` still prints its one document.
#[test]
fn sigint_while_waiting_for_the_bundles_locks_cancels_and_prints_the_json() {
    use std::os::fd::AsRawFd;
    let s = Sandboxed::new();
    s.copy_hello("locked");
    assert_eq!(s.run(&["run", "./locked"]).code, 0);
    let locks = s.state().join("locks");
    let left: Vec<_> = std::fs::read_dir(&locks)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with("entity-"))
        .collect();
    assert!(left.is_empty(), "a run removes its lock files: {left:?}");
    // Another run holds every entity's lock (its file named by the entity's id) and, as a run
    // does, writes its process id into each file: where `/proc/locks` names no holder (seen on a
    // CI machine), that id is what the waiting run names.
    let ids: Vec<String> = ["artifacts", "tasks"]
        .iter()
        .flat_map(|c| s.docs(c))
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect();
    let held: Vec<std::fs::File> = ids
        .iter()
        .map(|id| {
            let hash = agent_env::bundle::ids::sha256_hex_prefix(id.as_bytes(), 16);
            std::fs::File::create(locks.join(format!("entity-{hash}.lock"))).unwrap()
        })
        .collect();
    assert!(!held.is_empty());
    for file in &held {
        // SAFETY: flock(2) on a descriptor this test owns.
        assert_eq!(unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) }, 0);
        use std::io::Write;
        writeln!(&*file, "{}", std::process::id()).unwrap();
    }
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let (child, rx) = start_reading_stderr(&s, &["run", "./locked", "--json"]);
        let mut seen = Vec::new();
        // It names who holds the lock: this test's process.
        read_until(
            &rx,
            &format!(
                "waiting for another agent-env run (pid {}) to finish",
                std::process::id()
            ),
            &mut seen,
        );
        let said = seen.last().cloned().unwrap_or_default();
        assert!(
            said.ends_with(&format!(
                "Ctrl-C in a terminal, SIGTERM from a script (kill {})",
                child.id()
            )),
            "{said}"
        );
        // SAFETY: sends a signal to the child we started.
        unsafe {
            libc::kill(child.id() as i32, signal);
        }
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(128 + signal), "{seen:?}");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["status"], "cancelled", "{doc:#}");
        assert_eq!(doc["exit_code"], 128 + signal);
    }
    drop(held);
}

/// Takes the lock of every entity a first run of `./locked` wrote, as another run would; the files
/// stay empty until the test writes its process id into them.
fn hold_the_bundles_locks(s: &Sandboxed) -> Vec<std::fs::File> {
    use std::os::fd::AsRawFd;
    let locks = s.state().join("locks");
    ["artifacts", "tasks"]
        .iter()
        .flat_map(|c| s.docs(c))
        .map(|d| {
            let id = d["id"].as_str().unwrap().to_string();
            let hash = agent_env::bundle::ids::sha256_hex_prefix(id.as_bytes(), 16);
            let file = std::fs::File::create(locks.join(format!("entity-{hash}.lock"))).unwrap();
            // SAFETY: flock(2) on a descriptor this test owns.
            assert_eq!(unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) }, 0);
            file
        })
        .collect()
}

/// Runs started together take each other's locks for moments: a wait that short says nothing. A
/// wait that lasts is said once, naming the holder's pid even when the holder wrote it into the
/// lock file only after the wait began (as a run that has just taken a lock does).
#[test]
fn only_a_wait_that_lasts_for_the_bundles_locks_is_said_and_it_names_the_holder() {
    let s = Sandboxed::new();
    s.copy_hello("locked");
    assert_eq!(s.run(&["run", "./locked"]).code, 0);

    let held = hold_the_bundles_locks(&s);
    assert!(!held.is_empty());
    let child = spawn_piped(&s, &["run", "./locked"]);
    std::thread::sleep(Duration::from_millis(100));
    drop(held);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("waiting for"), "{stderr}");

    let held = hold_the_bundles_locks(&s);
    let (child, rx) = start_reading_stderr(&s, &["run", "./locked"]);
    for file in &held {
        use std::io::Write;
        writeln!(&*file, "{}", std::process::id()).unwrap();
    }
    let mut seen = Vec::new();
    read_until(&rx, "waiting for", &mut seen);
    let said = seen.last().cloned().unwrap_or_default();
    assert!(
        said.contains(&format!(
            "waiting for another agent-env run (pid {}) to finish writing this bundle's ids",
            std::process::id()
        )),
        "{said}"
    );
    drop(held);
    let rest: Vec<String> = rx.iter().collect();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{seen:?}{rest:?}");
    let said_again = rest.iter().filter(|l| l.contains("waiting for")).count();
    assert_eq!(said_again, 0, "said once: {rest:?}");
}

/// Installs `agentenv-deaf`, whose `deaf_step` ignores every signal and, once `execute` reaches it,
/// sleeps for a minute, and writes `deaf/tasks/t.json`, a sandbox and that step: a run's teardown
/// waits for it. The path of the file that marks that `execute` reached the plugin.
fn write_deaf_bundle(s: &Sandboxed) -> std::path::PathBuf {
    // The plugin marks when `execute` reached it: a signal before that finds it still listening,
    // and its teardown quick.
    let executing = s.home().join("executing");
    let deaf = s.script(
        "deaf.sh",
        &r#"#!/bin/sh
trap '' TERM INT HUP
IFS= read -r line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"plugin":{"name":"agentenv-deaf","version":"1"},"contributions":[{"group":"task_steps","name":"deaf_step","type":"deaf_step","class":"DeafStep","methods":["execute","from_dict"]}]}}'
while IFS= read -r line; do
  case $line in *'"execute"'*) : > 'EXECUTING'; exec /bin/sleep 60 ;; esac
  rest=${line#*\"id\":}
  id=${rest%%[!0-9]*}
  [ -n "$id" ] && printf '{"jsonrpc":"2.0","id":%s,"result":null}\n' "$id"
done
"#
        .replace("EXECUTING", executing.to_str().unwrap()),
    );
    s.install_manifest(
        "deaf",
        &format!(
            "[plugin]\nname = \"agentenv-deaf\"\nversion = \"1\"\nexec = [\"/bin/sh\", \"{}\"]\nprotocol = [1, 1]\n[provides.task_steps]\ndeaf_step = \"DeafStep\"\n",
            deaf.display()
        ),
    );
    s.write(
        "deaf/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "d", "type": "deaf_step"}]"#,
    );
    executing
}

/// The first signal says at once that the run is stopping; a second during the teardown (here a
/// plugin step deaf to cancellation holds it for seconds) stops agent-env at once, and a `--json`
/// run still prints its one document.
#[test]
fn a_second_signal_during_the_teardown_stops_at_once_with_a_cancelled_document() {
    let s = Sandboxed::new();
    let executing = write_deaf_bundle(&s);
    let (child, rx) = start_reading_stderr(&s, &["run", "./deaf", "--json"]);
    let mut seen = Vec::new();
    read_until(&rx, "step 2/2 d (deaf_step)", &mut seen);
    agent_env_test_support::deadline::wait_until(
        Duration::from_secs(60),
        "the step to reach the plugin",
        || executing.exists(),
    );
    // SAFETY: sends a signal to the child we started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    read_until(&rx, "Stopping: cancelling the running steps", &mut seen);
    // The same signal at once is the first one's echo (below); a person's second comes later.
    std::thread::sleep(agent_env::run::cancel::SAME_STOP_WITHIN + Duration::from_millis(100));
    // SAFETY: as above.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{seen:?}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["status"], "cancelled", "{doc:#}");
    assert_eq!(doc["exit_code"], 130);
    // The run's document as far as it came, not a bare error: a script reads its tasks as ever.
    assert!(doc["run_group_id"].is_string(), "{doc:#}");
    assert_eq!(doc["tasks"][0]["path"], "tasks/t.json", "{doc:#}");
    assert!(doc["error"]
        .as_str()
        .unwrap()
        .starts_with("stopped at once by a second signal"));
    read_until(&rx, "Stopped at once", &mut seen);
    // The log is written out before the exit, and says which signal did what.
    let log = the_log(&s);
    assert_eq!(
        doc["log"].as_str().map(Path::new),
        Some(the_log_path(&s).as_path())
    );
    assert!(log.contains("step 1/2 box done"), "{log}");
    assert!(log.contains(" SIGINT received: cancelling"), "{log}");
    assert!(
        log.contains(" SIGINT received again: stopped at once"),
        "{log}"
    );
}

/// The `cancelled` document a second signal prints goes through the CLI's writer: a stdout that was
/// never open (`>&-`) is said as every command says it, the exit code still the signal's.
#[test]
fn a_second_signal_says_a_stdout_that_was_never_open() {
    use std::os::unix::process::CommandExt;
    let s = Sandboxed::new();
    let executing = write_deaf_bundle(&s);
    let mut cmd = s.command(&["run", "./deaf", "--json"]);
    // SAFETY: close is async-signal-safe; it runs in the child, after its stdio is set up.
    unsafe {
        cmd.pre_exec(|| {
            libc::close(libc::STDOUT_FILENO);
            Ok(())
        });
    }
    let mut child = cmd.stderr(Stdio::piped()).spawn().unwrap();
    let rx = lines_of(child.stderr.take().unwrap());
    let mut seen = Vec::new();
    read_until(&rx, "step 2/2 d (deaf_step)", &mut seen);
    wait_for("the step to reach the plugin", || executing.exists());
    // SAFETY: sends a signal to the child we started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    read_until(&rx, "Stopping: cancelling the running steps", &mut seen);
    std::thread::sleep(agent_env::run::cancel::SAME_STOP_WITHIN + Duration::from_millis(100));
    // SAFETY: as above.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    seen.extend(rx.iter());
    let said = seen.join("\n");
    assert_eq!(status.code(), Some(130), "{said}");
    assert!(
        said.contains("Error: could not write the output to stdout: Bad file descriptor (os error 9); what was written is incomplete (the command itself ended with exit code 130)"),
        "{said}"
    );
}

/// `timeout -s INT N agent-env run …` sends SIGINT to agent-env and then to its process group, so it
/// arrives twice at once: that is one Ctrl-C, and the run tears down in full.
#[test]
fn the_same_signal_twice_at_once_is_one_stop() {
    let s = Sandboxed::new();
    write_slow_bundle(&s);
    let mut child = spawn_piped(&s, &["run", "./slow"]);
    let (out, err) = (
        lines_of(child.stdout.take().unwrap()),
        lines_of(child.stderr.take().unwrap()),
    );
    let mut seen = Vec::new();
    read_until(&out, "step 2/2 wait (verify_sandbox)", &mut seen);
    // SAFETY: sends signals to the child we started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    // The echo comes once the first was taken (sent at once, the kernel may merge the two).
    read_until(&err, "Stopping", &mut seen);
    // SAFETY: as above.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    seen.extend(out.iter());
    let shown = seen.join("\n");
    assert_eq!(status.code(), Some(130), "{shown}");
    assert!(shown.ends_with("Tore down 1 sandbox."), "{shown}");
    assert!(s.sandboxes_left().is_empty());
    assert_eq!(s.docs("task_instances")[0]["status"], "cancelled");
    assert!(!err.iter().any(|l| l.contains("Stopped at once")));
    let log = the_log(&s);
    assert!(!log.contains("received again"), "{log}");
}

/// A task that ends at once, and one whose step runs until it is cancelled.
fn write_short_and_hanging_bundle(s: &Sandboxed) {
    for (task, command) in [("a_short", "true"), ("e_hang", "sleep 120")] {
        s.write(
            &format!("two/tasks/{task}.json"),
            &serde_json::json!([
                {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
                {"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "w",
                 "criteria": [{"type": "bash_cmd_succeeds", "command": command}]}
            ])
            .to_string(),
        );
    }
}

/// A task that has ended (its end taken by the store at once) leaves nothing counted as waiting for
/// the store: a signal while another task's step runs says it cancels that step, as with no task
/// ended, not that no step is running.
#[test]
fn a_signal_once_a_task_has_ended_says_it_cancels_the_step_still_running() {
    let s = Sandboxed::new();
    write_short_and_hanging_bundle(&s);
    let mut child = spawn_piped(&s, &["run", "./two"]);
    let (out, err) = (
        lines_of(child.stdout.take().unwrap()),
        lines_of(child.stderr.take().unwrap()),
    );
    let mut seen = Vec::new();
    for needle in [
        "[tasks/a_short.json] passed in ",
        "[tasks/e_hang.json] step 2/2 v (verify_sandbox)",
    ] {
        if !seen.iter().any(|l: &String| l.contains(needle)) {
            read_until(&out, needle, &mut seen);
        }
    }
    // SAFETY: sends a signal to the child we started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    seen.extend(out.iter());
    let said: Vec<String> = err.iter().collect();
    let (shown, said) = (seen.join("\n"), said.join("\n"));
    assert_eq!(status.code(), Some(130), "{shown}\n{said}");
    assert!(
        said.contains(
            "Stopping: cancelling the running steps and tearing down the sandboxes; another Ctrl-C stops at once"
        ),
        "{said}"
    );
    assert!(!said.contains("no step is running"), "{said}");
    assert!(
        shown.contains("[tasks/e_hang.json] step 2/2 v cancelled"),
        "{shown}"
    );
    assert!(shown.contains("  tasks/a_short.json v1: passed"), "{shown}");
    let log = the_log(&s);
    assert!(
        log.contains(" SIGINT received: cancelling the running steps"),
        "{log}"
    );
}

/// Installs `agentenv-nap`, whose `nap` step reports progress (4 of 30, `napping`) and then sleeps
/// for a minute without reading its cancel, so a cancelled run stops it only after the grace a
/// plugin gets; `<home>/napping` marks that the step reached it. Writes `nap/tasks/t.json`, a
/// sandbox and that step; the path of the marker.
fn write_nap_bundle(s: &Sandboxed) -> std::path::PathBuf {
    let napping = s.home().join("napping");
    let nap = s.script(
        "nap.sh",
        &r#"#!/bin/sh
IFS= read -r line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"plugin":{"name":"agentenv-nap","version":"1"},"contributions":[{"group":"task_steps","name":"nap","type":"nap","class":"Nap","methods":["execute","from_dict"]}]}}'
while IFS= read -r line; do
  rest=${line#*\"id\":}
  id=${rest%%[!0-9]*}
  case $line in *'"execute"'*)
    printf '{"jsonrpc":"2.0","method":"$/progress","params":{"id":%s,"progress":4,"total":30,"message":"napping"}}\n' "$id"
    : > 'NAPPING'
    exec /bin/sleep 60 ;;
  esac
  [ -n "$id" ] && printf '{"jsonrpc":"2.0","id":%s,"result":null}\n' "$id"
done
"#
        .replace("NAPPING", napping.to_str().unwrap()),
    );
    s.install_manifest(
        "nap",
        &format!(
            "[plugin]\nname = \"agentenv-nap\"\nversion = \"1\"\nexec = [\"/bin/sh\", \"{}\"]\nprotocol = [1, 1]\n[provides.task_steps]\nnap = \"Nap\"\n",
            nap.display()
        ),
    );
    s.write(
        "nap/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "n", "type": "nap"}]"#,
    );
    napping
}

/// A step the run cancelled that has not ended yet (its plugin given its grace) is said to be
/// stopping, never still running.
#[test]
fn a_cancelled_step_not_yet_ended_is_said_stopping_not_still_running() {
    let s = Sandboxed::new();
    let napping = write_nap_bundle(&s);
    let mut child = s
        .command(&["run", "./nap", "--json"])
        .env("AGENT_ENV_PROGRESS_SECONDS", "0.5")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = lines_of(child.stderr.take().unwrap());
    let mut seen = Vec::new();
    read_until(&err, "step 2/2 n (nap)", &mut seen);
    wait_for("the step to reach the plugin", || napping.exists());
    // SAFETY: sends a signal to the child we started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    seen.extend(err.iter());
    let said = seen.join("\n");
    assert_eq!(status.code(), Some(130), "{said}");
    let stopping = said.find("Stopping: ").expect(&said);
    let after = &said[stopping..];
    assert!(
        after.contains("\n[tasks/t.json] step 2/2 n stopping ("),
        "{said}"
    );
    assert!(!after.contains("still running"), "{said}");
    assert!(after.contains("step 2/2 n cancelled"), "{said}");
}

/// Runs `./nap` with its stderr on a pseudo-terminal, so that its progress is a bar drawn in place;
/// sends `signal` once the bar is up; what the terminal showed, raw, and the exit code.
fn nap_on_a_terminal_until(s: &Sandboxed, signal: i32) -> (String, Option<i32>) {
    let (mut child, screen) =
        agent_env_test_support::terminal::stderr_on_a_terminal(s.command(&["run", "./nap"]));
    wait_for("the progress bar", || screen.so_far().contains("napping"));
    // SAFETY: sends a signal to the child we started.
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
    let code = child.wait().unwrap().code();
    (screen.finish(), code)
}

/// On a terminal, what the signal says starts on a line of its own, not after the progress bar on
/// the line the bar is drawn on.
#[test]
fn on_a_terminal_the_signals_notice_is_not_written_after_the_progress_bar() {
    let s = Sandboxed::new();
    write_nap_bundle(&s);
    let (shown, code) = nap_on_a_terminal_until(&s, libc::SIGINT);
    assert_eq!(code, Some(130), "{shown:?}");
    let at = shown.find("Stopping: ").expect(&shown);
    let before = &shown[..at];
    assert!(before.contains("napping"), "the bar was drawn: {shown:?}");
    assert!(
        before.ends_with("\r\x1b[2K") || before.ends_with('\n'),
        "{shown:?}"
    );
}

/// The one run log of the sandbox's state.
fn the_log_path(s: &Sandboxed) -> std::path::PathBuf {
    let logs: Vec<_> = std::fs::read_dir(s.state().join("logs"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(logs.len() <= 1, "{logs:?}");
    logs.into_iter().next().unwrap_or_default()
}

/// What the one run log holds so far (nothing before it is made).
fn the_log(s: &Sandboxed) -> String {
    std::fs::read_to_string(the_log_path(s)).unwrap_or_default()
}

/// Waits, up to a minute, for `ready` to hold.
fn wait_for(what: &str, ready: impl Fn() -> bool) {
    agent_env_test_support::deadline::wait_until(Duration::from_secs(60), what, ready);
}

#[test]
fn the_next_run_cleans_up_after_a_killed_one() {
    let s = Sandboxed::new();
    s.write(
        "stuck/tasks/stuck.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "wait", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "w",
             "criteria": [{"type": "bash_cmd_succeeds", "command": "sleep 120"}]}]"#,
    );
    let mut child = s.command(&["run", "./stuck"]).spawn().unwrap();
    // Killed once its instance is recorded running and its sandbox is up.
    wait_for("the instance recorded running", || {
        s.local_db().exists()
            && s.docs("task_instances")
                .iter()
                .any(|d| d["status"] == "running")
    });
    wait_for("the sandbox", || s.sandboxes_left().len() == 1);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(s.sandboxes_left().len(), 1, "a killed run cannot tear down");

    let listed = s.run(&["task", "list"]);
    assert!(
        listed
            .stderr
            .contains("1 earlier run ended without finishing"),
        "{}",
        listed.both()
    );

    let r = s.run(&["run", "hello", "-q"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(
        r.stderr.contains(
            "note: 1 earlier run ended without finishing (agent-env was killed or stopped at once by a second signal, its machine stopped, or the state folder was copied while it ran): 1 task instance it left running marked failed, 1 sandbox it left removed"
        ),
        "{}",
        r.both()
    );
    assert!(s.sandboxes_left().is_empty(), "{:?}", s.sandboxes_left());
    let stuck: Vec<_> = s
        .docs("task_instances")
        .into_iter()
        .filter(|d| d["task_id"].as_str().unwrap_or("").ends_with("/stuck"))
        .collect();
    assert_eq!(stuck.len(), 1);
    assert_eq!(stuck[0]["status"], "failed");
    assert!(
        stuck[0]["error"]
            .as_str()
            .unwrap()
            .starts_with("the run that was running this task ended without finishing it"),
        "{}",
        stuck[0]
    );
    // When it ended is not known: its view says so, and when it was marked.
    let shown = s.run(&[
        "task",
        "get-instance",
        stuck[0]["instance_id"].as_str().unwrap(),
    ]);
    assert!(
        shown
            .stdout
            .contains("\nended:     unknown; a later run marked it failed at "),
        "{}",
        shown.both()
    );
    // Cleaned up once: the next run has nothing to say.
    let again = s.run(&["run", "hello", "-q"]);
    assert!(!again.stderr.contains("earlier run"), "{}", again.both());
}

/// Installs `agentenv-leaver`, whose `leave_step` starts a child of its own (`sleep 500`, which stays
/// in the plugin's process group), writes that child's pid, then sleeps for a minute; with `deaf`,
/// the plugin ignores SIGTERM, SIGINT and SIGHUP, so a run's teardown waits for it. Writes
/// `leaver/tasks/t.json`, that one step. The path of the file the child's pid is written to.
fn write_leaving_bundle(s: &Sandboxed, deaf: bool) -> std::path::PathBuf {
    let child_pid = s.home().join("plugin-child.pid");
    let leaver = s.script(
        "leaver.sh",
        &r#"#!/bin/sh
TRAP
IFS= read -r line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"plugin":{"name":"agentenv-leaver","version":"1"},"contributions":[{"group":"task_steps","name":"leave_step","type":"leave_step","class":"LeaveStep","methods":["execute","from_dict"]}]}}'
while IFS= read -r line; do
  case $line in *'"execute"'*)
    /bin/sleep 500 </dev/null >/dev/null 2>&1 &
    echo $! > 'CHILD_PID.tmp' && mv 'CHILD_PID.tmp' 'CHILD_PID'
    exec /bin/sleep 60 ;;
  esac
  rest=${line#*\"id\":}
  id=${rest%%[!0-9]*}
  [ -n "$id" ] && printf '{"jsonrpc":"2.0","id":%s,"result":null}\n' "$id"
done
"#
        .replace("TRAP", if deaf { "trap '' TERM INT HUP" } else { ":" })
        .replace("CHILD_PID", child_pid.to_str().unwrap()),
    );
    s.install_manifest(
        "leaver",
        &format!(
            "[plugin]\nname = \"agentenv-leaver\"\nversion = \"1\"\nexec = [\"/bin/sh\", \"{}\"]\nprotocol = [1, 1]\n[provides.task_steps]\nleave_step = \"LeaveStep\"\n",
            leaver.display()
        ),
    );
    s.write(
        "leaver/tasks/t.json",
        r#"[{"id": "p", "type": "leave_step"}]"#,
    );
    child_pid
}

/// The pid a plugin's child wrote, once it is there; killed when dropped, should a test fail while
/// it still runs.
struct PluginChild(i32);

impl PluginChild {
    fn when_written(path: &Path) -> PluginChild {
        wait_for("the plugin to start its child", || path.exists());
        PluginChild(
            std::fs::read_to_string(path)
                .unwrap()
                .trim()
                .parse()
                .unwrap(),
        )
    }

    /// Whether it ends within a minute (polled: nothing here waits on a moment).
    fn ends(&self) -> bool {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while crate::support::run::running(self.0) {
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }
}

impl Drop for PluginChild {
    fn drop(&mut self) {
        if crate::support::run::running(self.0) {
            // SAFETY: kill(2) on the test's own leftover; no memory effects.
            unsafe {
                libc::kill(self.0, libc::SIGKILL);
            }
        }
    }
}

/// A second Ctrl-C while a plugin step holds the teardown stops agent-env at once: the plugin ends
/// with it (the kernel's parent-death signal), and so does the child the plugin started, which kept
/// the plugin's process group and would otherwise run on under init.
#[test]
fn a_second_signal_kills_what_a_plugin_started() {
    let s = Sandboxed::new();
    let child_pid = write_leaving_bundle(&s, true);
    let (child, rx) = start_reading_stderr(&s, &["run", "./leaver"]);
    let plugin_child = PluginChild::when_written(&child_pid);
    assert!(crate::support::run::running(plugin_child.0));
    let mut seen = Vec::new();
    // SAFETY: sends a signal to the child we started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    read_until(&rx, "Stopping: cancelling the running steps", &mut seen);
    std::thread::sleep(agent_env::run::cancel::SAME_STOP_WITHIN + Duration::from_millis(100));
    // SAFETY: as above.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let out = child.wait_with_output().unwrap();
    seen.extend(rx.iter());
    assert_eq!(out.status.code(), Some(130), "{seen:?}");
    assert!(
        seen.iter().any(|l| l.contains("Stopped at once")),
        "{seen:?}"
    );
    assert!(
        plugin_child.ends(),
        "the plugin's child {} outlived agent-env stopped at once",
        plugin_child.0
    );
}

/// A run killed outright leaves its plugin's child running (the kernel ends only the plugin); the
/// next run stops it, and says so with the rest of what it cleaned up.
#[test]
fn the_next_run_stops_what_a_killed_runs_plugin_started() {
    let s = Sandboxed::new();
    let child_pid = write_leaving_bundle(&s, false);
    let mut child = s
        .command(&["run", "./leaver"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let plugin_child = PluginChild::when_written(&child_pid);
    wait_for("the instance recorded running", || {
        s.local_db().exists()
            && s.docs("task_instances")
                .iter()
                .any(|d| d["status"] == "running")
    });
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        crate::support::run::running(plugin_child.0),
        "a killed run can stop nothing"
    );

    let r = s.run(&["run", "hello", "-q"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(
        r.stderr.contains(
            "note: 1 earlier run ended without finishing (agent-env was killed or stopped at once by a second signal, its machine stopped, or the state folder was copied while it ran): 1 task instance it left running marked failed, 0 sandboxes it left removed, 1 process its plugins left running stopped"
        ),
        "{}",
        r.both()
    );
    assert!(
        plugin_child.ends(),
        "the plugin's child {} outlived the next run",
        plugin_child.0
    );
    // Cleaned up once: the next run has nothing to say.
    let again = s.run(&["run", "hello", "-q"]);
    assert!(!again.stderr.contains("earlier run"), "{}", again.both());
}
