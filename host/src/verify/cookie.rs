//! The cookie check: run by hand (without `AGENT_ENV_PLUGIN=1`), a plugin says what it is on one
//! stderr line and exits 2, instead of waiting for a host that is not there.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use agent_env_protocol::version::{
    COOKIE_VAR, HOST_VERSION_VAR, PACKAGE_VAR, PROTOCOL_VERSIONS_VAR, RPC_FDS_VAR,
};

use super::finding::{Check, Finding};
use crate::exit::{Ended, ExitWatch};
use crate::stderr::StderrTail;

/// The exit code a plugin run without the cookie gives.
pub(crate) const NO_COOKIE_EXIT: i32 = 2;

/// Runs `executable` with `args`, without the cookie and with stdin at end of file, for up to
/// `grace`, and holds what it did to the rule.
pub(crate) fn check(executable: &Path, args: &[String], grace: Duration) -> Finding {
    let mut command = Command::new(executable);
    command
        .args(args)
        .env_remove(COOKIE_VAR)
        .env_remove(PROTOCOL_VERSIONS_VAR)
        .env_remove(HOST_VERSION_VAR)
        .env_remove(PACKAGE_VAR)
        .env_remove(RPC_FDS_VAR)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return Finding::failed(
                Check::Cookie,
                format!("cannot start {}: {e}", executable.display()),
            )
        }
    };
    let stderr = child
        .stderr
        .take()
        .map(|s| StderrTail::capture(s, "verify-cookie"))
        .unwrap_or_default();
    // Whether anything came on stdout, seen on a thread of its own (a descendant may hold the pipe).
    let (wrote_tx, wrote_rx) = std::sync::mpsc::channel();
    if let Some(mut out) = child.stdout.take() {
        thread::spawn(move || {
            let mut byte = [0u8; 1];
            let _ = wrote_tx.send(matches!(out.read(&mut byte), Ok(n) if n > 0));
        });
    }
    let watch = match ExitWatch::start(child.id(), true, "verify-cookie", |_| {}) {
        Ok(watch) => watch,
        Err(e) => return Finding::failed(Check::Cookie, format!("cannot watch the plugin: {e}")),
    };
    let ended = watch.wait_timeout(grace);
    if ended.is_none() {
        watch.signal(libc::SIGKILL);
        watch.wait_timeout(Duration::from_secs(30));
    }
    watch.kill_leftovers(Duration::from_millis(500));
    let settle = Instant::now() + Duration::from_millis(250);
    while !stderr.ended() && Instant::now() < settle {
        thread::sleep(Duration::from_millis(1));
    }
    let wrote_stdout = wrote_rx
        .recv_timeout(Duration::from_millis(250))
        .unwrap_or(false);
    judge(ended, &stderr.last_lines(usize::MAX), wrote_stdout, grace)
}

/// Whether the one line says the program is an agent-env plugin (`… is an agent-env plugin; …`), and
/// is not an interpreter's own complaint that happens to exit 2 (`python3: can't open file …`).
fn says_it_is_a_plugin(line: &str) -> bool {
    let lower = line.to_lowercase();
    let names_agent_env = ["agent-env", "agentenv", "agent_env"]
        .iter()
        .any(|n| lower.contains(n));
    let interpreter_error = [
        "can't open file",
        "no such file or directory",
        "command not found",
        "traceback (most recent call last)",
        "modulenotfounderror",
        "importerror",
        "syntaxerror",
    ]
    .iter()
    .any(|e| lower.contains(e));
    names_agent_env && lower.contains("plugin") && !interpreter_error
}

fn judge(ended: Option<Ended>, stderr: &[String], wrote_stdout: bool, grace: Duration) -> Finding {
    let how = match ended {
        None => {
            return Finding::failed(
                Check::Cookie,
                format!(
                    "without {COOKIE_VAR}=1 it was still running after {:.1} s (killed); a plugin run by hand \
                     prints one line on stderr saying it is an agent-env plugin and exits {NO_COOKIE_EXIT}: check \
                     for {COOKIE_VAR} first thing, before slow imports (one that takes over {:.1} s to get there \
                     fails this rule too)",
                    grace.as_secs_f64(),
                    grace.as_secs_f64()
                ),
            )
        }
        Some(Ended::Exited(NO_COOKIE_EXIT)) => None,
        Some(other) => Some(other.describe()),
    };
    if let Some(how) = how {
        return Finding::failed(
            Check::Cookie,
            format!("without {COOKIE_VAR}=1 it {how}; it must exit {NO_COOKIE_EXIT}"),
        );
    }
    if stderr.len() != 1 {
        return Finding::failed(
            Check::Cookie,
            format!(
                "without {COOKIE_VAR}=1 it exited {NO_COOKIE_EXIT} but wrote {} lines on stderr; it must write \
                 exactly one, saying it is an agent-env plugin",
                stderr.len()
            ),
        );
    }
    if wrote_stdout {
        return Finding::failed(
            Check::Cookie,
            format!("without {COOKIE_VAR}=1 it wrote to stdout; its one line goes to stderr"),
        );
    }
    if !says_it_is_a_plugin(&stderr[0]) {
        return Finding::failed(
            Check::Cookie,
            format!(
                "without {COOKIE_VAR}=1 it exited {NO_COOKIE_EXIT}, but its line does not say it is an agent-env plugin: {}; \
                 that exit may be its interpreter's own (a missing script or module exits 2 too)",
                stderr[0]
            ),
        );
    }
    Finding::passed(
        Check::Cookie,
        format!(
            "without {COOKIE_VAR}=1 it exits {NO_COOKIE_EXIT} saying: {}",
            stderr[0]
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_that_says_what_it_is_passes_and_an_interpreters_complaint_does_not() {
        assert!(says_it_is_a_plugin(
            "agentenv-x 0.1.0 is an agent-env plugin; agent-env starts it (try agent-env plugin show agentenv-x)"
        ));
        assert!(!says_it_is_a_plugin(
            "/venvs/agentenv-x/bin/python3: can't open file '/srv/agentenv_x/plugin.py': [Errno 2] No such file or directory"
        ));
        assert!(!says_it_is_a_plugin("usage: tool [-h] FILE"));
        let finding = judge(
            Some(Ended::Exited(2)),
            &["python3: can't open file 'agentenv_plugin.py': [Errno 2] No such file or directory".into()],
            false,
            Duration::from_secs(1),
        );
        assert!(
            finding
                .message
                .contains("does not say it is an agent-env plugin"),
            "{}",
            finding.message
        );
    }
}
