//! The `command-mode` check: a package that provides CLI commands is started as running one starts
//! it (command mode: the protocol on fds 3 and 4), but away from the terminal: stdin reads
//! `/dev/null`, stdout and stderr are captured. It is sent `initialize` on fd 3, its answer is
//! expected on fd 4, and it is shut down. A plugin that speaks the protocol on stdin and stdout only
//! passes every other check, yet no command of it can run: this check is where that shows.

use serde_json::json;

use agent_env_protocol::methods::{INITIALIZE, SHUTDOWN};

use super::conversation::{Answer, Conversation};
use super::wording::{describe_failure, describe_failure_via, quoting_stderr, AnswersOn};
use super::{Check, Finding, Kit, VerifyOptions};
use crate::spawn::command_mode_contract;

impl Kit<'_> {
    /// The fourth run, for a package with CLI commands: `initialize` and `shutdown` in command mode.
    pub(super) fn command_mode(&mut self, options: &VerifyOptions) {
        let finding = self.command_mode_finding(options);
        self.findings.push(finding);
    }

    fn command_mode_finding(&mut self, options: &VerifyOptions) -> Finding {
        let check = Check::CommandMode;
        let Some(command) = options.cli_commands.first() else {
            return Finding::skipped(
                check,
                "the plugin provides no CLI command, so nothing starts it in command mode",
            );
        };
        if self.handshake.is_none() {
            return Finding::skipped(
                check,
                "it did not answer initialize on stdin and stdout (see initialize)",
            );
        }
        let started_as = format!("started in command mode as `agent-env {command}` starts it");
        let mut run = match Conversation::start_in_command_mode(
            self.spec,
            &self.executable,
            self.config,
            self.services.clone(),
        ) {
            Ok(run) => run,
            Err(why) => return Finding::failed(check, format!("{started_as}, {why}")),
        };
        let exchange = run.call(
            INITIALIZE,
            self.initialize_params(),
            self.config.handshake_timeout,
        );
        if let Err(why) = self.initialize_answer(&run, exchange.answer) {
            let finding =
                quoting_stderr(&run, Finding::failed(check, format!("{started_as}, {why}")));
            self.end_run(&mut run, &[]);
            return finding;
        }
        let descendants = run.descendants();
        let exchange = run.call(SHUTDOWN, json!({}), self.config.call_timeout);
        let finding = match &exchange.answer {
            Answer::Result(_) => {
                run.close_stdin();
                self.exit_finding(
                    &run,
                    check,
                    &format!(
                        "{started_as}, it answered initialize and shutdown on fds 3 and 4, and once fd 3 closed"
                    ),
                    &descendants,
                )
            }
            Answer::Error(e) => Finding::failed(
                check,
                format!(
                    "{started_as}, it answered shutdown with error {} ({}); it answers null and exits 0 once fd 3 closes",
                    e.code, e.message
                ),
            ),
            other => Finding::failed(
                check,
                format!(
                    "{started_as}, it answered initialize, then {}",
                    describe_failure(SHUTDOWN, other)
                ),
            ),
        };
        let finding = quoting_stderr(&run, finding);
        self.end_run(&mut run, &descendants);
        finding
    }

    /// Why a command-mode `initialize` failed: as in normal mode, and when no answer came at all,
    /// where a command-mode plugin speaks the protocol (and any answer it wrote to stdout instead).
    fn initialize_answer(&self, run: &Conversation, answer: Answer) -> Result<(), String> {
        if !matches!(answer, Answer::TimedOut(_) | Answer::Ended(_)) {
            return self.initialize_result(answer).map(|_| ());
        }
        let failure = describe_failure_via(INITIALIZE, &answer, AnswersOn::Fd4);
        let on_stdout = match run.protocol_line_on_terminal() {
            Some(line) => format!("; it wrote a protocol message to stdout instead: '{line}'"),
            None => String::new(),
        };
        Err(format!("{failure}{on_stdout}; {}", command_mode_contract()))
    }
}
