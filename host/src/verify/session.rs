//! The second run, the whole session: `initialize` (and its answer held to the manifest), then
//! the checks that need a working plugin ([`super::mid_session`]) and `shutdown`.
//!
//! Invariants: once the plugin has ended, every check after it is skipped, naming the check where it
//! ended, rather than failed for a plugin that is no longer there; and each check begins the
//! conversation's stderr anew, so a failure quotes only what the plugin wrote during it (not its
//! answers to an earlier check's deliberate junk), up to the moment it failed (a crash, a wrong
//! answer, a wait that ran out).

use std::time::Duration;

use agent_env_protocol::methods::{InitializeResult, SHUTDOWN};
use serde_json::json;

use super::conversation::{Answer, Conversation};
use super::plural::plural;
use super::wording::{describe_failure, quoting_stderr};
use super::{Check, Finding, Kit};

/// One check taken while the session is open: the kit and the conversation.
type MidSessionCheck = for<'k> fn(&Kit<'k>, &mut Conversation) -> Finding;

impl Kit<'_> {
    /// The whole-session run: every check that needs a working plugin.
    pub(super) fn session(&mut self, manifest_problems: &dyn Fn(&InitializeResult) -> Vec<String>) {
        let later = [
            Check::Manifest,
            Check::UnknownMethod,
            Check::UnparsableRequest,
            Check::CancelRequest,
            Check::Shutdown,
        ];
        let mut run = match self.start() {
            Ok(run) => run,
            Err(why) => {
                self.findings.push(Finding::failed(Check::Initialize, why));
                self.skip_all(&later, "the plugin did not start");
                return;
            }
        };
        let handshake = match self.initialize_telling_protocol(&mut run) {
            Ok(handshake) => handshake,
            Err((why, disagreement)) => {
                let finding = quoting_stderr(&run, Finding::failed(Check::Initialize, why));
                self.findings.push(finding);
                // What the process says it speaks is enough to hold its manifest to.
                let not_taken = match disagreement {
                    Some(problem) => {
                        self.findings
                            .push(Finding::failed(Check::Manifest, problem));
                        &later[1..]
                    }
                    None => &later[..],
                };
                self.skip_all(not_taken, "initialize failed");
                self.end_run(&mut run, &[]);
                return;
            }
        };
        self.findings.push(Finding::passed(
            Check::Initialize,
            format!(
                "answered initialize as {} {} (protocol {}, {} contribution{}, {} store class{})",
                handshake.plugin.name,
                handshake.plugin.version,
                handshake.protocol,
                handshake.contributions.len(),
                plural(handshake.contributions.len()),
                handshake.stores.len(),
                if handshake.stores.len() == 1 {
                    ""
                } else {
                    "es"
                }
            ),
        ));
        let problems = manifest_problems(&handshake);
        self.findings.push(if problems.is_empty() {
            Finding::passed(
                Check::Manifest,
                "its answer gives what its manifest declares",
            )
        } else {
            Finding::failed(Check::Manifest, problems.join("; "))
        });
        self.handshake = Some(handshake);

        let steps: [(Check, MidSessionCheck); 3] = [
            (Check::UnknownMethod, |kit, run| kit.unknown_method(run)),
            (Check::UnparsableRequest, |kit, run| kit.unparsable(run)),
            (Check::CancelRequest, |kit, run| kit.cancel(run)),
        ];
        let mut ended_at: Option<Check> = None;
        for (check, step) in steps {
            let finding = match ended_at {
                Some(earlier) => Finding::skipped(
                    check,
                    format!("the plugin had ended (see {})", earlier.code()),
                ),
                None => {
                    run.begin_check();
                    let finding = step(self, &mut run);
                    quoting_stderr(&run, finding)
                }
            };
            if ended_at.is_none() && run.wait_exit(Duration::ZERO).is_some() {
                ended_at = Some(check);
            }
            self.findings.push(finding);
        }
        if let Some(earlier) = ended_at {
            self.findings.push(Finding::skipped(
                Check::Shutdown,
                format!("the plugin had ended (see {})", earlier.code()),
            ));
            self.end_run(&mut run, &[]);
            return;
        }
        self.shutdown(&mut run);
    }

    fn shutdown(&mut self, run: &mut Conversation) {
        let check = Check::Shutdown;
        run.begin_check();
        let descendants = run.descendants();
        let exchange = run.call(SHUTDOWN, json!({}), self.config.call_timeout);
        let finding = match &exchange.answer {
            Answer::Result(_) => {
                run.close_stdin();
                self.exit_finding(run, check, "answered shutdown and stdin closed", &descendants)
            }
            Answer::Error(e) => Finding::failed(
                check,
                format!(
                    "answered shutdown with error {} ({}); it answers null and exits 0 once stdin closes",
                    e.code, e.message
                ),
            ),
            other => Finding::failed(check, describe_failure(SHUTDOWN, other)),
        };
        let finding = quoting_stderr(run, finding);
        self.findings.push(finding);
        self.end_run(run, &descendants);
    }
}
