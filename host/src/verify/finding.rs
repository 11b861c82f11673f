//! What `plugin verify` found: one [`Finding`] per rule of the protocol, each under a stable code.

use agent_env_protocol::methods::InitializeResult;
use serde::Serialize;

/// One rule of the protocol a plugin is held to. Its [`code`](Check::code) is stable: scripts and
/// the JSON output key on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    /// Run without `AGENT_ENV_PLUGIN=1`, it exits 2 with one line on stderr.
    Cookie,
    /// It answers `initialize` within the handshake timeout, with a protocol version in common.
    Initialize,
    /// Its `initialize` answer gives what its manifest declares.
    Manifest,
    /// It answers an unknown method with error -32601.
    UnknownMethod,
    /// It keeps working after a line that is not a JSON-RPC request.
    UnparsableRequest,
    /// It keeps working after `$/cancelRequest`, and does not answer the notification.
    CancelRequest,
    /// The step given with `--step`, run in a fresh start of the plugin, answers `execute` with a
    /// result: a crash, a hang or an answer of another shape fails it, an error answer (the step
    /// failed, the protocol kept) is a warning.
    StepExecutes,
    /// During a call, its own `host.*` calls are well formed and it waits for their answers, matched
    /// by id, before answering.
    NestedCalls,
    /// It answers `shutdown` and exits 0 within the grace period once stdin closes.
    Shutdown,
    /// It exits 0 within the grace period when stdin closes without `shutdown`.
    StdinEof,
    /// A package with CLI commands, started as a command starts it (command mode), answers
    /// `initialize` and `shutdown` on fds 3 and 4 and exits 0 once fd 3 closes.
    CommandMode,
    /// Once it has exited, nothing it started is still running.
    NoLeftovers,
    /// Everything it writes on stdout is a protocol message.
    StdoutClean,
}

impl Check {
    /// Every check, in the order they are reported.
    pub const ALL: [Check; 13] = [
        Check::Cookie,
        Check::Initialize,
        Check::Manifest,
        Check::UnknownMethod,
        Check::UnparsableRequest,
        Check::CancelRequest,
        Check::StepExecutes,
        Check::NestedCalls,
        Check::Shutdown,
        Check::StdinEof,
        Check::CommandMode,
        Check::NoLeftovers,
        Check::StdoutClean,
    ];

    /// The stable code: `cookie`, `initialize`, `unknown-method`, …
    pub fn code(self) -> &'static str {
        match self {
            Check::Cookie => "cookie",
            Check::Initialize => "initialize",
            Check::Manifest => "manifest",
            Check::UnknownMethod => "unknown-method",
            Check::UnparsableRequest => "unparsable-request",
            Check::CancelRequest => "cancel-request",
            Check::StepExecutes => "step-executes",
            Check::NestedCalls => "nested-calls",
            Check::Shutdown => "shutdown",
            Check::StdinEof => "stdin-eof",
            Check::CommandMode => "command-mode",
            Check::NoLeftovers => "no-leftovers",
            Check::StdoutClean => "stdout-clean",
        }
    }

    /// The rule, as one sentence.
    pub fn rule(self) -> &'static str {
        match self {
            Check::Cookie => "without AGENT_ENV_PLUGIN=1 it exits 2 with one line on stderr",
            Check::Initialize => "it answers initialize within the handshake timeout",
            Check::Manifest => "its initialize answer gives what its manifest declares",
            Check::UnknownMethod => "it answers an unknown method with error -32601",
            Check::UnparsableRequest => "it keeps working after a line that is not a request",
            Check::CancelRequest => "it keeps working after $/cancelRequest and does not answer it",
            Check::StepExecutes => {
                "the step given with --step answers execute with a result (an error answer is a warning)"
            }
            Check::NestedCalls => {
                "its host.* calls during a call are answered, by id, before it answers"
            }
            Check::Shutdown => "it answers shutdown and exits 0 once stdin closes",
            Check::StdinEof => "it exits 0 when stdin closes without shutdown",
            Check::CommandMode => {
                "with CLI commands, it answers on fds 3 and 4 in command mode and exits 0 once fd 3 closes"
            }
            Check::NoLeftovers => "nothing it started runs on after it exits",
            Check::StdoutClean => "everything it writes on stdout is a protocol message",
        }
    }
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The plugin keeps the rule.
    Passed,
    /// The plugin keeps the rule, but what it did is worth a look (a step that answered with an
    /// error); the message says what. Not a failure.
    Warned,
    /// The plugin breaks the rule; the message says how.
    Failed,
    /// The check could not run (an earlier one failed, or nothing to run it with); the message says why.
    Skipped,
}

impl Status {
    /// `pass`, `warn`, `FAIL`, `skip`: the human report's column.
    pub fn label(self) -> &'static str {
        match self {
            Status::Passed => "pass",
            Status::Warned => "warn",
            Status::Failed => "FAIL",
            Status::Skipped => "skip",
        }
    }
}

/// The outcome of one check, with a sentence saying what was seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The rule.
    pub check: Check,
    /// How it came out.
    pub status: Status,
    /// What was seen: on a failure, what the plugin did and what it should do instead.
    pub message: String,
    /// On a failure (or a warning) in one of the plugin's runs, the last lines the process wrote on
    /// stderr during the check (its message quotes the last few); empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stderr: Vec<String>,
}

impl Finding {
    /// The plugin keeps the rule.
    pub fn passed(check: Check, message: impl Into<String>) -> Finding {
        Finding {
            check,
            status: Status::Passed,
            message: message.into(),
            stderr: Vec::new(),
        }
    }

    /// The plugin keeps the rule, with something worth a look.
    pub fn warned(check: Check, message: impl Into<String>) -> Finding {
        Finding {
            check,
            status: Status::Warned,
            message: message.into(),
            stderr: Vec::new(),
        }
    }

    /// The plugin breaks the rule.
    pub fn failed(check: Check, message: impl Into<String>) -> Finding {
        Finding {
            check,
            status: Status::Failed,
            message: message.into(),
            stderr: Vec::new(),
        }
    }

    /// The check could not run.
    pub fn skipped(check: Check, message: impl Into<String>) -> Finding {
        Finding {
            check,
            status: Status::Skipped,
            message: message.into(),
            stderr: Vec::new(),
        }
    }
}

/// Everything `plugin verify` found about one plugin.
#[derive(Debug, Clone)]
pub struct Verification {
    /// One finding per check, in [`Check::ALL`] order.
    pub findings: Vec<Finding>,
    /// The plugin's answer to `initialize`, when it gave a valid one.
    pub handshake: Option<InitializeResult>,
    /// The last lines the plugin wrote on stderr: when a check failed, those the process that
    /// failed the first such check (of those where it wrote any) wrote during it; when none did,
    /// those of its last run that wrote any.
    pub stderr_tail: Vec<String>,
    /// The failed check whose process wrote [`Self::stderr_tail`]; `None` when no check failed
    /// with lines on stderr.
    pub stderr_check: Option<Check>,
}

impl Verification {
    /// Whether no check failed (a warning is no failure).
    pub fn passed(&self) -> bool {
        self.findings.iter().all(|f| f.status != Status::Failed)
    }

    /// How many findings have `status`.
    pub fn count(&self, status: Status) -> usize {
        self.findings.iter().filter(|f| f.status == status).count()
    }
}
