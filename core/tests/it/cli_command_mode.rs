//! A plugin command whose plugin speaks the protocol on stdin and stdout instead of fds 3 and 4
//! (`fixture-stdio-cli`, as a hand-written plugin from before command mode does): running it fails
//! with a message that says where a command-mode plugin speaks the protocol, whether the plugin ends
//! at the end of its stdin or waits on it as it would on a terminal.

use std::process::Stdio;

use crate::support::cli::{stderr, text, Sandbox};
use crate::support::fixture;

/// Where a command-mode plugin speaks the protocol, as the error says it.
const CONTRACT: &str =
    "in command mode (a CLI command) a plugin speaks the protocol on file descriptors 3 and 4 \
     (AGENT_ENV_RPC_FDS=3,4), not on stdin and stdout, which are the terminal's: every SDK does \
     this by itself; a hand-written plugin must read requests from fd 3 and write answers to fd 4";

fn stdio_only_cli() -> Sandbox {
    let s = Sandbox::new();
    s.plugin(
        "agentenv-oldgrader",
        &format!("[\"{}\"]", fixture("fixture-stdio-cli").display()),
        "[provides.cli_plugins]\noldgrader = \"OldGrader\"\n",
    );
    s
}

#[test]
fn a_command_whose_plugin_ends_at_the_end_of_stdin_says_where_the_protocol_runs() {
    let s = stdio_only_cli();
    // stdin is /dev/null: the plugin reads its end and exits 0 without hearing initialize.
    let out = s.run(&["oldgrader", "x"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = stderr(&out);
    let exe = fixture("fixture-stdio-cli");
    assert!(
        err.contains(&format!(
            "plugin agentenv-oldgrader ({}) exited with code 0 before answering initialize; {CONTRACT}",
            exe.display()
        )),
        "{}",
        text(&out)
    );
    // Its stderr is the terminal's, not captured: nothing may call it empty.
    assert!(!err.contains("its stderr was empty"), "{}", text(&out));
}

#[test]
fn a_command_whose_plugin_waits_on_stdin_says_where_the_protocol_runs() {
    let s = stdio_only_cli();
    // stdin stays open and silent, as a terminal nobody types at: the plugin waits on it until the
    // handshake timeout (1 s in this sandbox) runs out.
    let mut child = s
        .command(&["oldgrader", "x"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start agent-env");
    let held_open = child.stdin.take();
    let out = child.wait_with_output().expect("wait for agent-env");
    drop(held_open);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "did not answer initialize within 1 s; it is not an agent-env plugin, or it is stuck \
             (raise AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT if it is just slow); {CONTRACT}"
        )),
        "{}",
        text(&out)
    );
}
