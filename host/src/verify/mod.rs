//! The protocol kit (`agent-env plugin verify`): starts a plugin, whatever its language, and holds it
//! to each rule of the protocol that a host relies on, one [`Finding`] per [`Check`].
//!
//! The plugin runs three times: once by hand, without the cookie (`cookie`); once for a whole
//! session (`session`: `initialize`, then the checks of `mid_session`: an unknown method, a line
//! that is not a request, `$/cancelRequest`; then `shutdown`); and once to see it exit when stdin
//! closes without `shutdown` (`endings`, which also says what every run left behind). A task step
//! given with `--step` runs in a start of its own (`step`), and a package with CLI commands runs
//! once more, in command mode (`command_mode`). Each run is in its own process group and is
//! killed, with everything it started, when the kit is done with it.
//!
//! This file holds the entry point and the `Kit` the runs share (the findings so far, the
//! handshake, what the runs left), with what several runs do: start the plugin and check its answer
//! to `initialize`. A run speaks to the plugin through a `conversation`, which shows the wire as it
//! is (`stdout_lines` keeps what it wrote there that is no message); `wording` says what went wrong
//! in a finding's words.

mod command_mode;
mod conversation;
mod cookie;
mod endings;
mod finding;
mod mid_session;
mod plural;
mod session;
mod spoken_protocol;
mod stdout_lines;
mod step;
mod step_timeout;
mod wording;

use std::sync::Arc;

use agent_env_protocol::methods::{HostInfo, InitializeParams, InitializeResult, INITIALIZE};
use agent_env_protocol::version::ProtocolRange;
use serde_json::{json, Map, Value};

use crate::config::HostConfig;
use crate::services::HostServices;
use crate::spawn::{self, ResolveError};
use crate::spec::SpawnSpec;

use conversation::{Answer, Conversation};
pub use finding::{Check, Finding, Status, Verification};
pub use step_timeout::{step_timeout, StepTimeoutError};
use wording::describe_failure;

/// The method the kit calls that no plugin has.
pub const UNKNOWN_METHOD: &str = "agent_env.verify.no_such_method";

/// How many stderr lines a failure message quotes.
const TAIL_LINES: usize = 5;

/// What the kit is asked to do beyond the fixed checks.
#[derive(Debug, Clone, Default)]
pub struct VerifyOptions {
    /// A task step document (with its `type`) to run with `execute`, in a start of the plugin of
    /// its own: whether it answers (`step-executes`) and its own calls to agent-env
    /// (`nested-calls`); without one both checks are skipped.
    pub step: Option<Map<String, Value>>,
    /// The CLI commands the package provides (`[provides.cli_plugins]`): with any, the plugin is
    /// also started in command mode, as running the first of them starts it.
    pub cli_commands: Vec<String>,
}

/// Why the kit could not verify the plugin at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The manifest's `exec` names nothing that can run.
    #[error("cannot verify {package}: its executable '{program}' {reason} (the manifest {manifest} names it in `exec`)")]
    NoExecutable {
        /// The package.
        package: String,
        /// The program, as the manifest writes it.
        program: String,
        /// Why it cannot run.
        reason: String,
        /// The manifest's path.
        manifest: String,
    },
}

/// Starts the plugin of `spec` as `config` says (its timeouts and grace period), answers its calls
/// back through `services`, and checks every rule. `manifest_problems` holds the `initialize`
/// answer against the manifest (each problem a sentence; none when it matches).
pub fn verify(
    spec: &SpawnSpec,
    config: &HostConfig,
    services: Arc<dyn HostServices>,
    options: &VerifyOptions,
    manifest_problems: &dyn Fn(&InitializeResult) -> Vec<String>,
) -> Result<Verification, VerifyError> {
    let executable = spawn::resolve_executable(spec.program()).map_err(|e| {
        let reason = match e {
            ResolveError::NotFound(_) => "is not there (or not on PATH)".to_string(),
            ResolveError::NotExecutable { reason, .. } => format!("cannot be run: {reason}"),
        };
        VerifyError::NoExecutable {
            package: spec.package.clone(),
            program: spec.program().to_string(),
            reason,
            manifest: spec.manifest_path.display().to_string(),
        }
    })?;
    let mut kit = Kit {
        spec,
        config,
        services,
        executable,
        findings: Vec::new(),
        handshake: None,
        stderr_tail: Vec::new(),
        leftovers: Vec::new(),
        exits_seen: 0,
        noise: stdout_lines::StdoutLines::default(),
    };
    kit.findings.push(cookie::check(
        &kit.executable,
        &spec.argv[1.min(spec.argv.len())..],
        config.grace,
    ));
    kit.session(manifest_problems);
    kit.step_run(options);
    kit.stdin_eof();
    kit.command_mode(options);
    kit.finish_leftovers();
    kit.finish_stdout();
    kit.findings.sort_by_key(|f| order(f.check));
    let (stderr_check, stderr_tail) = closing_stderr(&kit.findings, kit.stderr_tail);
    Ok(Verification {
        findings: kit.findings,
        handshake: kit.handshake,
        stderr_tail,
        stderr_check,
    })
}

/// The stderr the report closes with: when a check failed, what the process that failed the first
/// one (of those where it wrote any) wrote during it, and that check; when none failed,
/// `last_run`'s (the last lines of the last run that wrote any).
fn closing_stderr(findings: &[Finding], last_run: Vec<String>) -> (Option<Check>, Vec<String>) {
    let mut failed = findings
        .iter()
        .filter(|f| f.status == Status::Failed)
        .peekable();
    if failed.peek().is_none() {
        return (None, last_run);
    }
    failed
        .find(|f| !f.stderr.is_empty())
        .map_or((None, Vec::new()), |f| (Some(f.check), f.stderr.clone()))
}

fn order(check: Check) -> usize {
    Check::ALL
        .iter()
        .position(|c| *c == check)
        .unwrap_or(usize::MAX)
}

/// The state of one verification.
struct Kit<'a> {
    spec: &'a SpawnSpec,
    config: &'a HostConfig,
    services: Arc<dyn HostServices>,
    executable: std::path::PathBuf,
    findings: Vec<Finding>,
    handshake: Option<InitializeResult>,
    /// The last lines of the last run that wrote any on stderr.
    stderr_tail: Vec<String>,
    /// Processes left behind by a run that exited, as `pid (command line)`.
    leftovers: Vec<String>,
    /// Runs that exited on their own (so that leftovers could be looked for).
    exits_seen: usize,
    /// The lines on stdout over every run that were no protocol message.
    noise: stdout_lines::StdoutLines,
}

impl Kit<'_> {
    fn start(&self) -> Result<Conversation, String> {
        Conversation::start(
            self.spec,
            &self.executable,
            self.config,
            self.services.clone(),
        )
    }

    /// `initialize`, checked. `None` (with the reason) when it did not give a valid answer.
    fn initialize(&self, run: &mut Conversation) -> Result<InitializeResult, String> {
        self.initialize_telling_protocol(run)
            .map_err(|(why, _)| why)
    }

    /// As [`Self::initialize`], and when the plugin refused the handshake over the protocol, where
    /// the range its process says it speaks disagrees with its manifest's (a sentence).
    fn initialize_telling_protocol(
        &self,
        run: &mut Conversation,
    ) -> Result<InitializeResult, (String, Option<String>)> {
        let exchange = run.call(
            INITIALIZE,
            self.initialize_params(),
            self.config.handshake_timeout,
        );
        let disagreement = spoken_protocol::refused_with(&exchange.answer)
            .and_then(|spoken| spoken_protocol::disagreement(&self.spec.manifest_path, spoken));
        self.initialize_result(exchange.answer)
            .map_err(|why| (why, disagreement))
    }

    /// The params of `initialize`, as the host sends them.
    fn initialize_params(&self) -> Value {
        let params = InitializeParams {
            host: HostInfo {
                name: "agent-env".into(),
                version: self.config.host_version.clone(),
            },
            protocol: ProtocolRange::ours(),
            package: self.spec.package.clone(),
            settings: self.spec.settings.clone(),
        };
        serde_json::to_value(&params).unwrap_or_else(|_| json!({}))
    }

    /// The plugin's answer to `initialize`, checked.
    fn initialize_result(&self, answer: Answer) -> Result<InitializeResult, String> {
        let value = match answer {
            Answer::Result(value) => value,
            other => return Err(describe_failure(INITIALIZE, &other)),
        };
        let answer: InitializeResult = serde_json::from_value(value).map_err(|e| {
            format!(
                "its initialize answer is not the protocol's shape ({e}); it needs protocol, plugin \
                 {{name, version}}, contributions and stores"
            )
        })?;
        if !ProtocolRange::ours().contains(answer.protocol) {
            let ours = ProtocolRange::ours();
            return Err(format!(
                "it answered initialize with protocol {}, which agent-env does not speak ({}..={}); \
                 answer with a version in the host's range",
                answer.protocol, ours.min, ours.max
            ));
        }
        Ok(answer)
    }

    fn skip_all(&mut self, checks: &[Check], why: &str) {
        for check in checks {
            self.findings.push(Finding::skipped(*check, why));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed_with(check: Check, stderr: &[&str]) -> Finding {
        let mut finding = Finding::failed(check, "it broke the rule");
        finding.stderr = stderr.iter().map(|l| l.to_string()).collect();
        finding
    }

    #[test]
    fn the_closing_stderr_is_the_first_failed_check_that_has_any() {
        let last_run = vec!["starting up".to_string()];
        let findings = [
            Finding::passed(Check::Initialize, "answered"),
            failed_with(Check::UnparsableRequest, &[]),
            failed_with(Check::StepExecutes, &["loading", "KeyError"]),
            failed_with(Check::Shutdown, &["closing down"]),
        ];
        assert_eq!(
            closing_stderr(&findings, last_run.clone()),
            (
                Some(Check::StepExecutes),
                vec!["loading".to_string(), "KeyError".to_string()]
            )
        );
        // A failure with nothing on stderr is not given another run's lines.
        let findings = [failed_with(Check::StepExecutes, &[])];
        assert_eq!(closing_stderr(&findings, last_run.clone()), (None, vec![]));
        // With nothing failed, the last run's lines.
        let findings = [Finding::passed(Check::StepExecutes, "answered")];
        assert_eq!(
            closing_stderr(&findings, last_run.clone()),
            (None, last_run)
        );
    }
}
