//! [`Child`], the live parts of a started plugin: its connection, the watch on its exit and the tail
//! of its stderr; connecting them to a freshly launched process, and ending it.
//!
//! Invariants: a `Child` exists only once its exit is watched (a launch whose reaper could not
//! start is aborted, not kept), so every way out of [`Child::stop`] leaves the process reaped, its
//! group and escaped descendants killed and its connection closed. Nothing here knows of calls in
//! flight or of a process's status: [`super::PluginProcess`] decides when to stop, this decides how.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_env_protocol::methods::SHUTDOWN;
use agent_env_protocol::peer::{CallError, CloseReason, Peer, PeerConfig, ReaderMode};
use serde_json::json;

use super::unanswerable::WarnUnanswerable;
use crate::descendants::{self, ProcessTable};
use crate::exit::{ExitWatch, NoReaper};
use crate::handler::HostHandler;
use crate::routing::CallRouter;
use crate::spawn::{self, ChildIo};
use crate::spec::SpawnSpec;
use crate::stderr::StderrTail;

/// How long to wait for the last stderr bytes of a child that ended.
const STDERR_SETTLE: Duration = Duration::from_millis(250);

/// How long a child that ended (or was stopped) is given for the lines its stderr pipe still holds
/// to reach their listener: a pipe holds at most a few thousand lines, handed over in well under
/// this unless the listener is stuck.
pub const STDERR_CATCH_UP: Duration = Duration::from_secs(5);

/// How long a plugin that did not heed a cancel is given to answer `shutdown`.
const DEAF_SHUTDOWN_WAIT: Duration = Duration::from_millis(500);

/// The live parts of a started child.
pub(super) struct Child {
    pub(super) peer: Peer,
    pub(super) exit: Arc<ExitWatch>,
    pub(super) stderr: Option<StderrTail>,
}

impl Child {
    /// Connects to a process just `launched` from `spec`: the peer over its stdio (or, in command
    /// mode, its protocol fds), its stderr captured and handed line by line to `router`, and the
    /// watch on its exit, which fails the calls in flight when it ends.
    pub(super) fn connect(
        spec: &SpawnSpec,
        launched: spawn::Launched,
        router: Arc<CallRouter>,
    ) -> Result<Child, NoReaper> {
        let name = spec.package.clone();
        let peer_config = PeerConfig {
            name: name.clone(),
            // The caller reads its own answer: one thread hop fewer per call. Nothing the plugin
            // sends outside a call needs an answer, and its exit is seen by the reaper.
            mode: ReaderMode::Callers,
            ..PeerConfig::default()
        };
        let (peer, stderr) = match launched.io {
            ChildIo::Stdio {
                stdin,
                stdout,
                stderr,
            } => {
                let line_router = router.clone();
                let package = spec.package.clone();
                let tail = StderrTail::capture_pipe_lines(stderr, &name, move |line| {
                    line_router.stderr_line(&package, line)
                });
                let handler = WarnUnanswerable {
                    package: spec.package.clone(),
                    inner: HostHandler {
                        package: spec.package.clone(),
                        settings: spec.settings.clone(),
                        router,
                        log: Some(tail.clone()),
                    },
                };
                let peer = Peer::start(stdout, stdin, Arc::new(handler), peer_config);
                (peer, Some(tail))
            }
            ChildIo::Fds {
                to_child,
                from_child,
            } => {
                let handler = WarnUnanswerable {
                    package: spec.package.clone(),
                    inner: HostHandler {
                        package: spec.package.clone(),
                        settings: spec.settings.clone(),
                        router,
                        log: None,
                    },
                };
                let peer = Peer::start(from_child, to_child, Arc::new(handler), peer_config);
                (peer, None)
            }
        };
        let exit_peer = peer.clone();
        let exit = ExitWatch::start(launched.pid, launched.own_group, &name, move |ended| {
            // Calls in flight fail now, even if a grandchild still holds the plugin's stdout open.
            exit_peer.abort(CloseReason::Aborted(format!(
                "the plugin {}",
                ended.describe()
            )));
        });
        match exit {
            Ok(exit) => Ok(Child { peer, exit, stderr }),
            Err(e) => {
                peer.abort(CloseReason::Aborted(e.to_string()));
                Err(e)
            }
        }
    }

    /// Ends the child: if `polite`, its calls cancelled and `shutdown` asked; then stdin closed,
    /// `grace`, SIGTERM to its group, `grace`, SIGKILL. It is always reaped, and what is left of
    /// its group and the descendants that left it (found in `table` if given, else in `/proc`)
    /// are killed.
    pub(super) fn stop(&self, grace: Duration, polite: bool, table: Option<&ProcessTable>) {
        // Taken while the plugin still runs: the descendants that left its process group.
        let escaped = match table {
            _ if self.exit.ended().is_some() => Vec::new(),
            Some(table) => table.descendants_of(self.exit.pid()),
            None => descendants::snapshot(self.exit.pid()),
        };
        if self.exit.ended().is_none() {
            let mut deaf = !polite;
            if polite && !self.peer.is_closed() {
                // Calls still running (a step when Ctrl-C came) are cancelled first, and given the
                // grace to answer, so that work watching for cancellation ends and says so now,
                // rather than being cut off at the grace's end.
                let heeded = self.peer.cancel_pending(grace);
                // A plugin that did not heed the cancel may still answer `shutdown` at once (its
                // step is busy, its loop is not), but is not waited on for a whole grace again.
                let shutdown_wait = match heeded {
                    true => grace,
                    false => grace.min(DEAF_SHUTDOWN_WAIT),
                };
                let answer = self.peer.call(SHUTDOWN, json!({}), Some(shutdown_wait));
                // No answer to `shutdown`: it would not exit of its own accord in the grace either.
                deaf = matches!(answer, Err(CallError::Timeout(_)));
            }
            self.peer.close_output();
            let first_wait = if deaf {
                grace.min(Duration::from_millis(100))
            } else {
                grace
            };
            if self.exit.wait_timeout(first_wait).is_none() {
                self.exit.signal(libc::SIGTERM);
                if self.exit.wait_timeout(grace).is_none() {
                    self.exit.signal(libc::SIGKILL);
                    self.exit.wait_timeout(Duration::from_secs(30));
                }
            }
        } else {
            self.peer.close_output();
        }
        self.exit.kill_leftovers(Duration::from_millis(500));
        descendants::kill_all(&escaped, Duration::from_millis(500));
        self.peer.abort(CloseReason::Aborted(
            "agent-env shut the plugin down".into(),
        ));
        self.settle_stderr();
    }

    /// Hands the listener what the stderr pipe of a child that ended still holds, and gives the
    /// reader a moment to see the end of the stream.
    pub(super) fn settle_stderr(&self) {
        let Some(tail) = &self.stderr else { return };
        tail.catch_up(STDERR_CATCH_UP);
        let deadline = Instant::now() + STDERR_SETTLE;
        while !tail.ended() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
