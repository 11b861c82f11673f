//! Everything that can go wrong with a plugin process, each with a stable code.
//!
//! The codes are documented in `docs/protocol.md` ("Failure codes") and appear in `--json` output.
//! Every message names the plugin, its executable and the tail of its stderr.

use std::time::Duration;

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::message::RpcError;
use agent_env_protocol::peer::classify;
use serde::Serialize;

use crate::spawn::SearchedPath;

/// Who failed: enough to name the plugin in a message and to show what it last said.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailureContext {
    /// The package name from the manifest.
    pub package: String,
    /// The executable as resolved (or as written, when it could not be resolved).
    pub executable: String,
    /// The manifest the plugin was started from.
    pub manifest_path: String,
    /// The last lines of its stderr (empty when it wrote none or stderr was not captured).
    pub stderr_tail: Vec<String>,
    /// The first bytes of the first non-protocol line it wrote to stdout, if any.
    pub noise_sample: Option<String>,
    /// The id of the first answer it sent to a request agent-env never made (it numbers its
    /// answers itself instead of echoing each request's id), as the wire wrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsent_answer_id: Option<String>,
}

impl FailureContext {
    /// `its stderr ends with:` and the tail's lines, indented, each on its own line; `None` when
    /// the plugin wrote nothing to stderr.
    pub fn stderr_block(&self) -> Option<String> {
        if self.stderr_tail.is_empty() {
            return None;
        }
        let mut out = String::from("its stderr ends with:");
        for line in &self.stderr_tail {
            out.push_str("\n    ");
            out.push_str(line);
        }
        Some(out)
    }

    /// What the plugin said, as every failure message of it ends: the noise it wrote to stdout
    /// and the tail of its stderr (`; its stderr was empty` when it wrote none). For a caller that
    /// words a failure of its own about the plugin.
    pub fn what_it_said(&self) -> String {
        suffix(self)
    }
}

/// How a missing executable is said, with what to do: a bare name is not on `PATH` (the folders
/// searched shown), a path does not exist.
fn missing(ctx: &FailureContext, searched: Option<&SearchedPath>) -> String {
    let (executable, manifest) = (&ctx.executable, &ctx.manifest_path);
    match searched {
        Some(SearchedPath::Folders(path)) => format!(
            "its executable {executable} is not on PATH ({path}); install it or add its folder to PATH, or fix 'exec' in {manifest}"
        ),
        Some(SearchedPath::Unset) => format!(
            "its executable {executable} is not on PATH, which is not set; set PATH to include its folder, or fix 'exec' in {manifest}"
        ),
        None => format!(
            "its executable {executable} does not exist; fix 'exec' in {manifest} or reinstall the plugin"
        ),
    }
}

/// Why a plugin could not be started or a call to it failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HostError {
    /// `not-found`: the executable does not exist, or a bare name is in no folder of `PATH`.
    #[error("plugin {} cannot start: {}", .ctx.package, missing(.ctx, .searched.as_ref()))]
    NotFound {
        /// Who failed.
        ctx: Box<FailureContext>,
        /// For a bare name: the `PATH` it was looked for on.
        searched: Option<SearchedPath>,
    },

    /// `not-executable`: the file exists but cannot be executed.
    #[error("plugin {} cannot start: its executable {} is not executable ({reason}); {}", .ctx.package, .ctx.executable, unrunnable_advice(reason))]
    NotExecutable {
        /// Who failed.
        ctx: Box<FailureContext>,
        /// Why, in words.
        reason: String,
    },

    /// `spawn-failed`: the system refused to start it.
    #[error("plugin {} could not be started from {}: {reason}{}", .ctx.package, .ctx.executable, suffix(.ctx))]
    SpawnFailed {
        /// Who failed.
        ctx: Box<FailureContext>,
        /// Why, in words.
        reason: String,
    },

    /// `exited-at-start`: it ended before answering `initialize`.
    #[error("plugin {} ({}) {ended} before answering initialize{}", .ctx.package, .ctx.executable, start_suffix(.ctx, *.command_mode))]
    ExitedAtStart {
        /// Who failed.
        ctx: Box<FailureContext>,
        /// How it ended, e.g. "exited with code 1".
        ended: String,
        /// Whether it was started in command mode (for a CLI command), where the message says
        /// where the protocol runs.
        command_mode: bool,
    },

    /// `handshake-timeout`: no answer to `initialize` in time.
    #[error("plugin {} ({}) did not answer initialize within {}; it is not an agent-env plugin, or it is stuck (raise AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT if it is just slow){}", .ctx.package, .ctx.executable, secs(*.timeout), start_suffix(.ctx, *.command_mode))]
    HandshakeTimeout {
        /// Who failed.
        ctx: Box<FailureContext>,
        /// The timeout that ran out.
        timeout: Duration,
        /// Whether it was started in command mode (for a CLI command), where the message says
        /// where the protocol runs.
        command_mode: bool,
    },

    /// `handshake-failed`: its answer to `initialize` is not a valid one.
    #[error("plugin {} ({}) gave a bad answer to initialize: {reason}{}", .ctx.package, .ctx.executable, suffix_beside(.ctx, reason))]
    HandshakeFailed {
        /// Who failed.
        ctx: Box<FailureContext>,
        /// Why, in words.
        reason: String,
    },

    /// `protocol-mismatch`: no protocol version both sides speak.
    #[error("plugin {} speaks protocol {plugin_speaks}, agent-env speaks {host_speaks}: {advice} (executable {}){}", .ctx.package, .ctx.executable, suffix(.ctx))]
    ProtocolMismatch {
        /// Who failed.
        ctx: Box<FailureContext>,
        /// The protocol range the plugin speaks.
        plugin_speaks: String,
        /// The protocol range agent-env speaks.
        host_speaks: String,
        /// Which side to upgrade.
        advice: String,
    },

    /// `crashed`: it ended while a call was in flight.
    #[error("plugin {} ({}) {}{}", .ctx.package, .ctx.executable, ended_mid_call(ended, method, *.in_flight), suffix(.ctx))]
    Crashed {
        /// Who failed.
        ctx: Box<FailureContext>,
        /// How it ended, e.g. "exited with code 1".
        ended: String,
        /// The method of the call.
        method: String,
        /// How many calls were in flight when it ended (this one among them).
        in_flight: usize,
    },

    /// `bad-answer`: a call's answer came as a line meant as a message that is none (its id null,
    /// no `"jsonrpc":"2.0"`, a batch...) or under the request's id written as a string; the call
    /// failed at once.
    #[error("plugin {} ({}) gave a bad answer to {method}: {detail}{}", .ctx.package, .ctx.executable, suffix_beside(.ctx, detail))]
    BadAnswer {
        /// Who failed.
        ctx: Box<FailureContext>,
        /// The method of the call.
        method: String,
        /// What is wrong with the answer, and the line.
        detail: String,
    },

    /// `call-timeout`: a call got no answer in time and was cancelled.
    #[error("plugin {} ({}) did not answer {method} within {}; {}{}", .ctx.package, .ctx.executable, secs(*.timeout), timeout_advice(*.timeout, .waited_on.as_ref(), *.unended_bytes, .ctx), suffix(.ctx))]
    CallTimeout {
        /// Who failed.
        ctx: Box<FailureContext>,
        /// The method of the call.
        method: String,
        /// The timeout that ran out.
        timeout: Duration,
        /// The plugin's own request agent-env spent longest answering during the call, and how
        /// long: when that is most of the timeout, the plugin was waiting on agent-env.
        waited_on: Option<(String, Duration)>,
        /// How many bytes of a line it had written to stdout without ending it (its answer, most
        /// likely, missing its newline).
        unended_bytes: usize,
    },

    /// `crash-loop`: it failed too often in this invocation to be started again.
    #[error("plugin {} ({}) failed {crashes} times in this invocation, so agent-env will not start it again for {} (or until the next agent-env command); last failure: {last}", .ctx.package, .ctx.executable, pause_text(*.pause))]
    CrashLoop {
        /// Who failed.
        ctx: Box<FailureContext>,
        /// Failures in this invocation.
        crashes: u32,
        /// How long it is not started again (`HostConfig::crash_loop_pause`).
        pause: Duration,
        /// The last failure, in one line.
        last: String,
    },

    /// The plugin answered a call with an error of its own: a refusal, or its own failure (an
    /// internal error: a panic or an exception its SDK caught), which is no refusal.
    #[error("plugin {} ({}) {} {method}: {}", .ctx.package, .ctx.executable, answered_with(.error), .error.message)]
    PluginError {
        /// Who failed.
        ctx: Box<FailureContext>,
        /// The method of the call.
        method: String,
        /// The error the plugin answered with.
        error: RpcError,
    },

    /// A message over the size limit, in either direction.
    #[error("{method} with plugin {} ({}) failed: {detail}", .ctx.package, .ctx.executable)]
    MessageTooLarge {
        /// Who failed.
        ctx: Box<FailureContext>,
        /// The method of the call.
        method: String,
        /// What was too large, and the limit.
        detail: String,
    },

    /// `tampered`: a file the plugin starts from changed since it was added.
    #[error("plugin {} was not started: {changed} changed since `agent-env plugin add` approved it; if you changed it, approve it with `agent-env plugin approve {}`, else reinstall the plugin", .ctx.package, .ctx.package)]
    Tampered {
        /// Who failed.
        ctx: Box<FailureContext>,
        /// Which file, and what it is now.
        changed: String,
    },

    /// `relative-argument`: a plugin `plugin add` installed whose `exec` names a file beside its
    /// manifest by a relative path in an argument after the first (see [`crate::exec_arguments`]).
    #[error("plugin {} was not started: whatever file of that name the folder agent-env runs in holds would run in its place; {reason}", .ctx.package)]
    RelativeArgument {
        /// Who failed.
        ctx: Box<FailureContext>,
        /// The argument, and what to write instead.
        reason: String,
    },

    /// A call to a process that was already shut down.
    #[error("plugin {} ({}) was already shut down, so {method} cannot be sent", .ctx.package, .ctx.executable)]
    ShutDown {
        /// Who failed.
        ctx: Box<FailureContext>,
        /// The method of the call.
        method: String,
    },

    /// `unresponsive`: a call cut short because agent-env killed the process as unresponsive (its
    /// calls timed out [`CRASH_LOOP_LIMIT`](crate::CRASH_LOOP_LIMIT) times) while this one was in
    /// flight. Not a crash: the plugin did not end by itself.
    #[error("plugin {} ({}) was stopped by agent-env while answering {method}: {timeouts} of its calls got no answer in time (the last: {last}), so agent-env took it as stuck and killed it, cutting this call short (raise AGENT_ENV_PLUGIN_CALL_TIMEOUT if it is just slow){}", .ctx.package, .ctx.executable, suffix(.ctx))]
    Unresponsive {
        /// Who failed.
        ctx: Box<FailureContext>,
        /// The method of the call that was cut short.
        method: String,
        /// How many of its calls had timed out.
        timeouts: u32,
        /// The call that timed out last, in words: "execute within 2 s".
        last: String,
    },

    /// `start-cancelled`: its caller stopped the start (a run's Ctrl-C) before the plugin answered
    /// `initialize`; the process was killed. Says nothing about the plugin.
    #[error("plugin {} ({}) was stopped while it started: agent-env was told to stop before the plugin answered initialize", .ctx.package, .ctx.executable)]
    StartCancelled {
        /// Who was starting.
        ctx: Box<FailureContext>,
    },
}

/// The `ctx` field of any [`HostError`] (every variant has one), by reference or by mutable
/// reference as `$error` is.
macro_rules! failure_context {
    ($error:expr) => {
        match $error {
            HostError::NotFound { ctx, .. }
            | HostError::NotExecutable { ctx, .. }
            | HostError::SpawnFailed { ctx, .. }
            | HostError::ExitedAtStart { ctx, .. }
            | HostError::HandshakeTimeout { ctx, .. }
            | HostError::HandshakeFailed { ctx, .. }
            | HostError::ProtocolMismatch { ctx, .. }
            | HostError::Crashed { ctx, .. }
            | HostError::BadAnswer { ctx, .. }
            | HostError::CallTimeout { ctx, .. }
            | HostError::CrashLoop { ctx, .. }
            | HostError::PluginError { ctx, .. }
            | HostError::MessageTooLarge { ctx, .. }
            | HostError::Tampered { ctx, .. }
            | HostError::RelativeArgument { ctx, .. }
            | HostError::ShutDown { ctx, .. }
            | HostError::Unresponsive { ctx, .. }
            | HostError::StartCancelled { ctx } => ctx,
        }
    };
}

impl HostError {
    /// The stable code (see `docs/protocol.md`, "Failure codes").
    pub fn code(&self) -> &'static str {
        match self {
            HostError::NotFound { .. } => "not-found",
            HostError::NotExecutable { .. } => "not-executable",
            HostError::SpawnFailed { .. } => "spawn-failed",
            HostError::ExitedAtStart { .. } => "exited-at-start",
            HostError::HandshakeTimeout { .. } => "handshake-timeout",
            HostError::HandshakeFailed { .. } => "handshake-failed",
            HostError::ProtocolMismatch { .. } => "protocol-mismatch",
            HostError::Crashed { .. } => "crashed",
            HostError::BadAnswer { .. } => "bad-answer",
            HostError::CallTimeout { .. } => "call-timeout",
            HostError::CrashLoop { .. } => "crash-loop",
            HostError::PluginError { .. } => "plugin-error",
            HostError::MessageTooLarge { .. } => "message-too-large",
            HostError::Tampered { .. } => "tampered",
            HostError::RelativeArgument { .. } => "relative-argument",
            HostError::ShutDown { .. } => "shut-down",
            HostError::Unresponsive { .. } => "unresponsive",
            HostError::StartCancelled { .. } => "start-cancelled",
        }
    }

    /// Who failed.
    pub fn context(&self) -> &FailureContext {
        failure_context!(self).as_ref()
    }

    /// Replaces who failed (with a fresher stderr tail, say).
    pub(crate) fn set_context(&mut self, fresh: Box<FailureContext>) {
        *failure_context!(self) = fresh;
    }

    /// The plugin's own error, for `plugin-error`.
    pub fn rpc_error(&self) -> Option<&RpcError> {
        match self {
            HostError::PluginError { error, .. } => Some(error),
            _ => None,
        }
    }

    /// The wire kind of the plugin's own error (`not-found` stays `not-found`), for `plugin-error`;
    /// `message-too-large` and `cancelled` (a timed-out call) for those failures.
    pub fn error_kind(&self) -> Option<ErrorKind> {
        match self {
            HostError::PluginError { error, .. } => error.kind(),
            HostError::MessageTooLarge { .. } => Some(ErrorKind::MessageTooLarge),
            HostError::CallTimeout { .. } => Some(ErrorKind::Cancelled),
            HostError::ProtocolMismatch { .. } => Some(ErrorKind::ProtocolMismatch),
            _ => None,
        }
    }

    /// Whether the failure says something about the process (counted by the crash-loop breaker), as
    /// opposed to the installation (missing or unusable executable, wrong protocol) or one call.
    pub fn is_process_failure(&self) -> bool {
        matches!(
            self,
            HostError::SpawnFailed { .. }
                | HostError::ExitedAtStart { .. }
                | HostError::HandshakeTimeout { .. }
                | HostError::HandshakeFailed { .. }
                | HostError::Crashed { .. }
        )
    }

    /// Whether starting again cannot help within this invocation.
    pub fn is_permanent(&self) -> bool {
        matches!(
            self,
            HostError::NotFound { .. }
                | HostError::NotExecutable { .. }
                | HostError::ProtocolMismatch { .. }
                | HostError::CrashLoop { .. }
                | HostError::Tampered { .. }
                | HostError::RelativeArgument { .. }
        )
    }
}

/// How long a plugin given up on waits, as the crash-loop message says it: "a minute", "90 s".
fn pause_text(pause: Duration) -> String {
    if pause == Duration::from_secs(60) {
        "a minute".to_string()
    } else {
        secs(pause)
    }
}

/// What to do about an executable that cannot be run, for the reason given.
fn unrunnable_advice(reason: &str) -> &'static str {
    if reason == crate::spawn::FOLDER_NOT_SEARCHABLE {
        "let the user search each folder above it (chmod +x on the folder), or reinstall the plugin where it can"
    } else {
        "run chmod +x on it or reinstall the plugin"
    }
}

/// How a plugin's error answer reads: its own failure, or a refusal.
fn answered_with(error: &RpcError) -> &'static str {
    match error.kind() {
        Some(ErrorKind::InternalError) => "failed while answering",
        _ => "refused",
    }
}

/// `2 s`, `0.5 s`: a duration as a message says it.
pub(crate) fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s} s")
    }
}

/// What follows a failed start: [`suffix`] in normal mode. In command mode a plugin that gave no
/// answer most likely speaks the protocol on stdin and stdout, which are the terminal's there, so
/// the message says where the protocol runs; its stderr went to the terminal too, so nothing is said
/// about it unless something was captured.
fn start_suffix(ctx: &FailureContext, command_mode: bool) -> String {
    if !command_mode {
        return suffix(ctx);
    }
    let said = if ctx.stderr_tail.is_empty() && ctx.noise_sample.is_none() {
        String::new()
    } else {
        suffix(ctx)
    };
    format!("; {}{said}", crate::spawn::command_mode_contract())
}

/// How a plugin that ended during a call is told: a crash, or, for one that exited with code 0
/// by itself, a plugin that stopped serving too soon.
fn ended_mid_call(ended: &str, method: &str, in_flight: usize) -> String {
    if ended == "exited with code 0" {
        let calls = match in_flight {
            0 | 1 => format!("while its {method} call was in flight"),
            n => format!("while {n} calls were in flight ({method} among them)"),
        };
        return format!(
            "exited on its own (code 0) {calls}; a plugin must keep serving until its stdin closes (calls to it may overlap: answer each before exiting)"
        );
    }
    format!("crashed ({ended}) while answering {method}; this is a bug in the plugin")
}

/// [`suffix`], leaving out the noise `said` already quotes (a malformed answer a message shows).
fn suffix_beside(ctx: &FailureContext, said: &str) -> String {
    match &ctx.noise_sample {
        Some(noise) if !noise.is_empty() && said.contains(noise.as_str()) => {
            let quiet = FailureContext {
                noise_sample: None,
                ..ctx.clone()
            };
            suffix(&quiet)
        }
        _ => suffix(ctx),
    }
}

/// What the plugin said: the noise it wrote to stdout (a line meant as a message is told its
/// defect) and the tail of its stderr.
fn suffix(ctx: &FailureContext) -> String {
    let mut out = String::new();
    if let Some(noise) = &ctx.noise_sample {
        match classify(noise.as_bytes()) {
            Some(malformed) => out.push_str(&format!(
                "; it wrote a line to stdout that is no valid message, '{noise}': {}",
                malformed.defect
            )),
            None => out.push_str(&format!(
                "; it wrote non-protocol output to stdout (first: '{noise}')"
            )),
        }
    }
    // The first line stands alone (a run's step line shows only it); the lines before the last follow.
    match ctx.stderr_tail.as_slice() {
        [] => out.push_str("; its stderr was empty"),
        [.., last] => {
            // A Go panic's message comes before its goroutines' stacks, which end the stderr.
            let go_panic = ctx
                .stderr_tail
                .iter()
                .find(|l| l.starts_with("panic: ") || l.starts_with("fatal error: "));
            // Rust's panic ends with a hint about RUST_BACKTRACE: the panic's message is the line
            // before it.
            let last = ctx
                .stderr_tail
                .iter()
                .rev()
                .find(|l| !l.starts_with("note: run with `RUST_BACKTRACE"))
                .unwrap_or(last);
            match go_panic {
                Some(panic) => out.push_str(&format!("; its stderr says: '{panic}'")),
                None => out.push_str(&format!("; its stderr's last line: '{last}'")),
            }
            if let (true, Some(block)) = (ctx.stderr_tail.len() > 1, ctx.stderr_block()) {
                out.push('\n');
                out.push_str(&block);
            }
        }
    }
    out
}

/// What to do about a call that timed out: raise the timeout for a slow plugin, or, when agent-env
/// spent most of the call answering the plugin's own request, look at what that request waits on, or,
/// when an answer went astray on the plugin's stdout, mend that: an answer under an id agent-env
/// never sent, or one that a line the plugin did not end swallowed (the line holds a message).
fn timeout_advice(
    timeout: Duration,
    waited_on: Option<&(String, Duration)>,
    unended_bytes: usize,
    ctx: &FailureContext,
) -> String {
    if unended_bytes > 0 {
        return format!(
            "the call was cancelled. It wrote {unended_bytes} bytes on stdout without ending the line: end each message with \\n"
        );
    }
    // A message after other text on one line: one the plugin began and did not end swallowed it. A
    // line that is a message gone wrong (its id null, no "jsonrpc"...) is told its defect instead,
    // by the message's end.
    let malformed = ctx
        .noise_sample
        .as_ref()
        .is_some_and(|line| classify(line.as_bytes()).is_some());
    let swallowed = !malformed
        && ctx
            .noise_sample
            .as_ref()
            .and_then(|line| line.find("{\"jsonrpc\""))
            .is_some_and(|at| at > 0);
    match waited_on {
        _ if ctx.unsent_answer_id.is_some() => format!(
            "the call was cancelled. The plugin answered id {}, which agent-env never sent: an answer must carry the id of the request it answers",
            ctx.unsent_answer_id.as_deref().unwrap_or_default()
        ),
        _ if malformed => "the call was cancelled. Its answer may be the line on its stdout that is no valid message: mend what is named next (raise AGENT_ENV_PLUGIN_CALL_TIMEOUT only if it is just slow)".to_string(),
        _ if swallowed => "the call was cancelled. A line the plugin wrote to stdout and did not end swallowed a message written after it: write logs to stderr (raise AGENT_ENV_PLUGIN_CALL_TIMEOUT only if it is just slow)".to_string(),
        Some((method, took)) if *took * 2 >= timeout => format!(
            "the call was cancelled. agent-env spent {} of it answering the plugin's own {method} request, so what that waits on (a store, its server, the network) is what was slow: check it, or lower that store's own timeout below the call's (AGENT_ENV_PLUGIN_CALL_TIMEOUT)",
            secs(Duration::from_secs_f64((took.as_secs_f64() * 10.0).round() / 10.0))
        ),
        _ => "the call was cancelled (raise AGENT_ENV_PLUGIN_CALL_TIMEOUT if it is just slow)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crash_loop_says_how_long_it_waits() {
        let said = |pause| {
            HostError::CrashLoop {
                ctx: ctx(&[]),
                crashes: 3,
                pause,
                last: "crashed".into(),
            }
            .to_string()
        };
        assert!(said(Duration::from_secs(60)).contains("will not start it again for a minute ("));
        assert!(said(Duration::from_millis(300)).contains("will not start it again for 0.3 s ("));
    }

    #[test]
    fn a_timed_out_call_says_where_its_answer_went_astray() {
        let mut said = *ctx(&[]);
        let advice = |ctx: &FailureContext| timeout_advice(Duration::from_secs(3), None, 0, ctx);
        let quiet =
            "the call was cancelled (raise AGENT_ENV_PLUGIN_CALL_TIMEOUT if it is just slow)";
        assert_eq!(advice(&said), quiet);
        // An ended line of its own is no swallowed answer: the noise is said once, by the suffix.
        said.noise_sample = Some("I am confused".into());
        assert_eq!(advice(&said), quiet);
        said.noise_sample = Some(r#"loading{"jsonrpc":"2.0","id":3,"result":{}}"#.into());
        assert!(
            advice(&said)
                .contains("did not end swallowed a message written after it: write logs to stderr"),
            "{}",
            advice(&said)
        );
        said.unsent_answer_id = Some("12345".into());
        assert!(advice(&said).ends_with(
            "The plugin answered id 12345, which agent-env never sent: an answer must carry the id of the request it answers"
        ));
    }

    fn ctx(tail: &[&str]) -> Box<FailureContext> {
        Box::new(FailureContext {
            package: "agentenv-x".into(),
            executable: "/opt/x/bin/x".into(),
            manifest_path: "/opt/x/agent-env-plugin.toml".into(),
            stderr_tail: tail.iter().map(|s| s.to_string()).collect(),
            noise_sample: None,
            unsent_answer_id: None,
        })
    }

    #[test]
    fn a_go_panic_is_quoted_by_its_message_not_its_last_stack_frame() {
        let e = HostError::Crashed {
            ctx: ctx(&[
                "panic: assignment to entry in nil map",
                "",
                "goroutine 1 [running]:",
                "main.main()",
                "\t/src/main.go:52 +0x37c",
            ]),
            ended: "exited with code 2".into(),
            method: "execute".into(),
            in_flight: 1,
        };
        let text = e.to_string();
        assert!(
            text.contains("; its stderr says: 'panic: assignment to entry in nil map'"),
            "{text}"
        );
    }

    #[test]
    fn a_start_that_failed_in_command_mode_says_where_the_protocol_runs() {
        let exited = |command_mode| HostError::ExitedAtStart {
            ctx: ctx(&[]),
            ended: "exited with code 0".into(),
            command_mode,
        };
        let timed_out = |command_mode| HostError::HandshakeTimeout {
            ctx: ctx(&[]),
            timeout: Duration::from_secs(10),
            command_mode,
        };
        let contract = "; in command mode (a CLI command) a plugin speaks the protocol on file descriptors 3 and 4 (AGENT_ENV_RPC_FDS=3,4), not on stdin and stdout";
        for e in [exited(true), timed_out(true)] {
            let text = e.to_string();
            assert!(text.contains(contract), "{text}");
            assert!(
                text.ends_with(
                    "a hand-written plugin must read requests from fd 3 and write answers to fd 4"
                ),
                "{text}"
            );
            // Its stderr went to the terminal: nothing was captured to call empty.
            assert!(!text.contains("stderr was empty"), "{text}");
        }
        assert_eq!(
            exited(true).to_string().split(contract).next(),
            Some("plugin agentenv-x (/opt/x/bin/x) exited with code 0 before answering initialize")
        );
        // Normal (stdio) mode reads as it always did.
        assert_eq!(
            exited(false).to_string(),
            "plugin agentenv-x (/opt/x/bin/x) exited with code 0 before answering initialize; its stderr was empty"
        );
        assert!(!timed_out(false).to_string().contains("command mode"));
        assert!(timed_out(false).to_string().ends_with(
            "(raise AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT if it is just slow); its stderr was empty"
        ));
    }

    #[test]
    fn a_plugin_that_never_ran_has_no_stderr_to_speak_of() {
        let e = HostError::NotFound {
            ctx: ctx(&[]),
            searched: None,
        };
        assert!(!e.to_string().contains("stderr"), "{e}");
    }

    #[test]
    fn messages_name_the_plugin_the_executable_and_the_stderr_tail() {
        let e = HostError::Crashed {
            ctx: ctx(&["thread 'main' panicked at src/main.rs:3:5", "boom"]),
            ended: "killed by signal 6 (SIGABRT)".into(),
            method: "execute".into(),
            in_flight: 1,
        };
        let text = e.to_string();
        assert_eq!(e.code(), "crashed");
        for part in ["agentenv-x", "/opt/x/bin/x", "execute", "SIGABRT", "boom"] {
            assert!(text.contains(part), "{text}");
        }
        // The first line is whole by itself; the stderr's earlier lines follow it.
        let mut lines = text.lines();
        assert!(
            lines
                .next()
                .unwrap()
                .ends_with("a bug in the plugin; its stderr's last line: 'boom'"),
            "{text}"
        );
        assert_eq!(lines.next(), Some("its stderr ends with:"));
        assert_eq!(
            lines.next(),
            Some("    thread 'main' panicked at src/main.rs:3:5")
        );
        let one = HostError::Crashed {
            ctx: ctx(&["boom"]),
            ended: "exited with code 3".into(),
            method: "execute".into(),
            in_flight: 1,
        };
        assert_eq!(one.to_string().lines().count(), 1, "{one}");
    }

    #[test]
    fn the_protocol_mismatch_sentence_reads_as_advice() {
        let e = HostError::ProtocolMismatch {
            ctx: ctx(&[]),
            plugin_speaks: "99".into(),
            host_speaks: "1".into(),
            advice: "upgrade agent-env or install a version of the plugin for protocol 1".into(),
        };
        assert!(e.to_string().starts_with("plugin agentenv-x speaks protocol 99, agent-env speaks 1: upgrade agent-env or install a version of the plugin for protocol 1"), "{e}");
    }
}
