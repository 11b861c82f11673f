//! The protocol kit (`agent-env plugin verify`): starts a plugin, whatever its language, and holds it
//! to each rule of the protocol that a host relies on, one [`Finding`] per [`Check`].
//!
//! The plugin runs three times: once by hand, without the cookie ([`cookie`]); once for a whole
//! session (`initialize`, an unknown method, a line that is not a request, `$/cancelRequest`, a task
//! step when one is given, `shutdown`); and once to see it exit when stdin closes without
//! `shutdown`. A package with CLI commands runs a fourth time, in command mode ([`command_mode`]).
//! Each run is in its own process group and is killed, with everything it started, when the kit is
//! done with it.

mod command_mode;
mod conversation;
mod cookie;
mod finding;

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::methods::{
    HostInfo, InitializeParams, InitializeResult, CANCEL_REQUEST, EXECUTE, INITIALIZE, SHUTDOWN,
};
use agent_env_protocol::version::ProtocolRange;
use serde_json::{json, Map, Value};

use crate::config::HostConfig;
use crate::descendants::Descendant;
use crate::exit::Ended;
use crate::services::HostServices;
use crate::spawn::{self, ResolveError};
use crate::spec::SpawnSpec;

use conversation::{Answer, Conversation, Exchange};
pub use finding::{Check, Finding, Status, Verification};

/// The method the kit calls that no plugin has.
pub const UNKNOWN_METHOD: &str = "agent_env.verify.no_such_method";

/// How many stderr lines a failure message quotes.
const TAIL_LINES: usize = 5;

/// What the kit is asked to do beyond the fixed checks.
#[derive(Debug, Clone, Default)]
pub struct VerifyOptions {
    /// A task step document (with its `type`) to run with `execute`, so that the step's own calls to
    /// agent-env are seen; without one the nested-calls check is skipped.
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
        noise: (0, Vec::new()),
    };
    kit.findings.push(cookie::check(
        &kit.executable,
        &spec.argv[1.min(spec.argv.len())..],
        config.grace,
    ));
    kit.session(options, manifest_problems);
    kit.stdin_eof();
    kit.command_mode(options);
    kit.finish_leftovers();
    kit.finish_stdout();
    kit.findings.sort_by_key(|f| order(f.check));
    Ok(Verification {
        findings: kit.findings,
        handshake: kit.handshake,
        stderr_tail: kit.stderr_tail,
    })
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
    stderr_tail: Vec<String>,
    /// Processes left behind by a run that exited, as `pid (command line)`.
    leftovers: Vec<String>,
    /// Runs that exited on their own (so that leftovers could be looked for).
    exits_seen: usize,
    /// Noise lines on stdout over every run, and the first few.
    noise: (usize, Vec<String>),
}

/// One check taken while the session is open: the kit, the conversation, the options.
type MidSessionCheck = for<'k> fn(&Kit<'k>, &mut Conversation, &VerifyOptions) -> Finding;

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
        let exchange = run.call(
            INITIALIZE,
            self.initialize_params(),
            self.config.handshake_timeout,
        );
        self.initialize_result(run, exchange.answer)
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
    fn initialize_result(
        &self,
        run: &Conversation,
        answer: Answer,
    ) -> Result<InitializeResult, String> {
        let value = match answer {
            Answer::Result(value) => value,
            other => return Err(self.describe_failure(run, INITIALIZE, &other)),
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

    /// The whole-session run: every check that needs a working plugin.
    fn session(
        &mut self,
        options: &VerifyOptions,
        manifest_problems: &dyn Fn(&InitializeResult) -> Vec<String>,
    ) {
        let later = [
            Check::Manifest,
            Check::UnknownMethod,
            Check::UnparsableRequest,
            Check::CancelRequest,
            Check::NestedCalls,
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
        let handshake = match self.initialize(&mut run) {
            Ok(handshake) => handshake,
            Err(why) => {
                self.findings.push(Finding::failed(Check::Initialize, why));
                self.skip_all(&later, "initialize failed");
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

        let steps: [(Check, MidSessionCheck); 4] = [
            (Check::UnknownMethod, |kit, run, _| kit.unknown_method(run)),
            (Check::UnparsableRequest, |kit, run, _| kit.unparsable(run)),
            (Check::CancelRequest, |kit, run, _| kit.cancel(run)),
            (Check::NestedCalls, |kit, run, options| {
                kit.nested(run, options)
            }),
        ];
        let mut ended_at: Option<Check> = None;
        for (check, step) in steps {
            let finding = match ended_at {
                Some(earlier) => Finding::skipped(
                    check,
                    format!("the plugin had ended (see {})", earlier.code()),
                ),
                None => step(self, &mut run, options),
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

    fn unknown_method(&self, run: &mut Conversation) -> Finding {
        let exchange = run.call(UNKNOWN_METHOD, json!({}), self.config.call_timeout);
        let check = Check::UnknownMethod;
        match &exchange.answer {
            Answer::Error(e) if e.code == ErrorKind::MethodNotFound.code() => Finding::passed(
                check,
                format!("answered '{UNKNOWN_METHOD}' with error -32601"),
            ),
            Answer::Error(e) => Finding::failed(
                check,
                format!(
                    "answered the unknown method '{UNKNOWN_METHOD}' with error {} ({}); an unknown method \
                     gets error -32601 (method-not-found)",
                    e.code, e.message
                ),
            ),
            Answer::Result(v) => Finding::failed(
                check,
                format!(
                    "answered the unknown method '{UNKNOWN_METHOD}' with the result {}; an unknown method \
                     gets error -32601 (method-not-found)",
                    short(v)
                ),
            ),
            other => Finding::failed(check, self.describe_failure(run, UNKNOWN_METHOD, other)),
        }
    }

    /// A cut-off request and a JSON value that is not a request, then a request that must be answered.
    fn unparsable(&self, run: &mut Conversation) -> Finding {
        let check = Check::UnparsableRequest;
        run.send_raw(br#"{"jsonrpc":"2.0","id":99,"method":"execute","params":{"#);
        run.send_raw(b"[\"not\", \"a\", \"request\"]");
        let exchange = run.call(UNKNOWN_METHOD, json!({}), self.config.call_timeout);
        match &exchange.answer {
            Answer::Result(_) | Answer::Error(_) => match exchange.problems.first() {
                Some(problem) => Finding::failed(check, format!("after a line that is not a request it {problem}")),
                None => Finding::passed(
                    check,
                    format!(
                        "kept answering after a cut-off request and a JSON array{}",
                        if exchange.unattributed.is_empty() {
                            String::new()
                        } else {
                            format!(
                                " (it answered {} of them with error {})",
                                exchange.unattributed.len(),
                                exchange.unattributed[0].code
                            )
                        }
                    ),
                ),
            },
            other => Finding::failed(
                check,
                format!(
                    "after a line that is not a request, {}; a plugin answers such a line with error -32700 \
                     (or ignores it) and keeps reading",
                    self.describe_failure(run, UNKNOWN_METHOD, other)
                ),
            ),
        }
    }

    /// `$/cancelRequest` for a request already answered and for one never sent; neither gets an
    /// answer, and the plugin keeps answering.
    fn cancel(&self, run: &mut Conversation) -> Finding {
        let check = Check::CancelRequest;
        let answered = run.next_id() - 1;
        run.notify(CANCEL_REQUEST, json!({ "id": answered }));
        run.notify(CANCEL_REQUEST, json!({ "id": conversation::NEVER_SENT_ID }));
        let exchange = run.call(UNKNOWN_METHOD, json!({}), self.config.call_timeout);
        match &exchange.answer {
            Answer::Result(_) | Answer::Error(_) => {
                if let Some(error) = exchange.unattributed.first() {
                    return Finding::failed(
                        check,
                        format!(
                            "answered the notification $/cancelRequest (error {}: {}); a notification gets no answer",
                            error.code, error.message
                        ),
                    );
                }
                match exchange.problems.first() {
                    Some(problem) => Finding::failed(check, format!("after $/cancelRequest it {problem}")),
                    None => Finding::passed(
                        check,
                        "kept answering after $/cancelRequest for a finished and an unknown request",
                    ),
                }
            }
            other => Finding::failed(
                check,
                format!(
                    "after $/cancelRequest, {}; a cancel for a request that is not running is ignored",
                    self.describe_failure(run, UNKNOWN_METHOD, other)
                ),
            ),
        }
    }

    /// Runs the given step, answering its calls to agent-env last first, with a stray
    /// `$/cancelRequest` before each answer.
    fn nested(&self, run: &mut Conversation, options: &VerifyOptions) -> Finding {
        let check = Check::NestedCalls;
        let Some(step) = &options.step else {
            let offers_steps = self
                .handshake
                .as_ref()
                .is_none_or(|h| h.contributions.iter().any(|c| c.group == "task_steps"));
            return Finding::skipped(
                check,
                if offers_steps {
                    "no step to run: give one with --step '{\"id\": \"s\", \"type\": \"<task step>\", …}' to check the calls \
                     a step makes to agent-env"
                } else {
                    "the plugin offers no task step, so there is no step to run"
                },
            );
        };
        let type_name = step.get("type").and_then(Value::as_str).unwrap_or("");
        // Held to the plugin's answer only when that answer keeps to its manifest (else the
        // manifest check has said what is missing already).
        let answer_kept_manifest = self
            .findings
            .iter()
            .any(|f| f.check == Check::Manifest && f.status == Status::Passed);
        if let (Some(handshake), true) = (&self.handshake, answer_kept_manifest) {
            let steps: Vec<&str> = handshake
                .contributions
                .iter()
                .filter(|c| c.group == "task_steps")
                .map(|c| c.type_name.as_str())
                .collect();
            if !steps.contains(&type_name) {
                let offered = if steps.is_empty() {
                    "it offers no task step".to_string()
                } else {
                    format!("its task steps: {}", steps.join(", "))
                };
                return Finding::failed(
                    check,
                    format!(
                        "--step names the type '{type_name}', which is not a task step of this plugin ({offered}); give --step one of them"
                    ),
                );
            }
        }
        // The step's own limit, as a run gives it (plus the grace for its own answer), else the
        // host's call timeout; the step is told it, less the grace, as a run tells it.
        let own = step
            .get("timeout_seconds")
            .and_then(Value::as_f64)
            .filter(|s| s.is_finite() && *s > 0.0 && *s < crate::config::MAX_SECONDS)
            .map(Duration::from_secs_f64);
        let told = own.unwrap_or(self.config.call_timeout);
        let limit = own.map_or(told, |own| own + crate::config::STEP_TIMEOUT_GRACE);
        let params = json!({
            "type": type_name,
            "step": step,
            "context": {"instance_id": "agent-env-verify", "metadata": {}},
            "timeout_ms": u64::try_from(told.as_millis()).unwrap_or(u64::MAX),
        });
        let exchange: Exchange = run.call(EXECUTE, params, limit);
        let answered = matches!(exchange.answer, Answer::Result(_) | Answer::Error(_));
        if let Some(problem) = exchange.problems.first() {
            return Finding::failed(
                check,
                format!("while running the step '{type_name}' it {problem}"),
            );
        }
        if !answered {
            return Finding::failed(
                check,
                format!(
                    "while running the step '{type_name}', {}",
                    self.describe_failure(run, EXECUTE, &exchange.answer)
                ),
            );
        }
        let how = match &exchange.answer {
            Answer::Error(e) => format!("failed with error {} ({})", e.code, e.message),
            _ => "succeeded".into(),
        };
        if exchange.nested.is_empty() {
            return Finding::skipped(
                check,
                format!("the step '{type_name}' {how} without calling agent-env; give a step that calls host.*"),
            );
        }
        let methods: Vec<&str> = exchange.nested.iter().map(|n| n.method.as_str()).collect();
        Finding::passed(
            check,
            format!(
                "the step '{type_name}' made {} call{} to agent-env ({}), took each answer by its id, and {how}",
                methods.len(),
                plural(methods.len()),
                methods.join(", ")
            ),
        )
    }

    fn shutdown(&mut self, run: &mut Conversation) {
        let check = Check::Shutdown;
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
            other => Finding::failed(check, self.describe_failure(run, SHUTDOWN, other)),
        };
        self.findings.push(finding);
        self.end_run(run, &descendants);
    }

    /// The third run: `initialize`, then stdin closes without `shutdown`.
    fn stdin_eof(&mut self) {
        let check = Check::StdinEof;
        let mut run = match self.start() {
            Ok(run) => run,
            Err(why) => {
                self.findings.push(Finding::failed(check, why));
                return;
            }
        };
        if let Err(why) = self.initialize(&mut run) {
            self.findings.push(Finding::skipped(
                check,
                format!("initialize failed on a second start: {why}"),
            ));
            self.end_run(&mut run, &[]);
            return;
        }
        let descendants = run.descendants();
        run.close_stdin();
        let finding = self.exit_finding(&run, check, "stdin closed without shutdown", &descendants);
        self.findings.push(finding);
        self.end_run(&mut run, &descendants);
    }

    /// How the plugin ended within the grace period after `what`: exit 0 passes.
    fn exit_finding(
        &mut self,
        run: &Conversation,
        check: Check,
        what: &str,
        descendants: &[Descendant],
    ) -> Finding {
        let grace = self.config.grace;
        match run.wait_exit(grace) {
            Some(Ended::Exited(0)) => {
                self.note_exit(run, descendants);
                Finding::passed(check, format!("{what}, it exited 0"))
            }
            Some(other) => {
                self.note_exit(run, descendants);
                Finding::failed(
                    check,
                    format!(
                        "{what}, it {}; it must exit 0{}",
                        other.describe(),
                        tail_note(&run.final_stderr_tail(TAIL_LINES))
                    ),
                )
            }
            None => Finding::failed(
                check,
                format!(
                    "{what}, it was still running {:.1} s later (killed); it must exit 0 within that grace period",
                    grace.as_secs_f64()
                ),
            ),
        }
    }

    /// A run ended on its own: note what it left behind.
    fn note_exit(&mut self, run: &Conversation, descendants: &[Descendant]) {
        self.exits_seen += 1;
        // The last processes of a group may take a moment to go after its leader.
        let deadline = Instant::now() + Duration::from_millis(200);
        let mut left = run.leftovers(descendants);
        while !left.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
            left = run.leftovers(descendants);
        }
        for l in left {
            if !self.leftovers.contains(&l) {
                self.leftovers.push(l);
            }
        }
    }

    /// Kills what is left of a run and keeps its noise and stderr.
    fn end_run(&mut self, run: &mut Conversation, descendants: &[Descendant]) {
        run.kill(descendants);
        let (lines, samples) = run.noise();
        self.noise.0 += lines;
        for s in samples {
            if self.noise.1.len() < 3 {
                self.noise.1.push(s.clone());
            }
        }
        let tail = run.stderr_tail(20);
        if !tail.is_empty() {
            self.stderr_tail = tail;
        }
    }

    fn finish_leftovers(&mut self) {
        let check = Check::NoLeftovers;
        let finding = if self.exits_seen == 0 {
            Finding::skipped(
                check,
                "no run got as far as asking the plugin to exit (the checks that end it did not run)",
            )
        } else if self.leftovers.is_empty() {
            Finding::passed(check, "nothing it started outlived it")
        } else {
            Finding::failed(
                check,
                format!(
                    "still running after the plugin exited: {} (killed); a plugin ends or waits for what it starts",
                    self.leftovers.join(", ")
                ),
            )
        };
        self.findings.push(finding);
    }

    fn finish_stdout(&mut self) {
        let check = Check::StdoutClean;
        let (lines, samples) = &self.noise;
        let finding = if *lines == 0 {
            Finding::passed(check, "every line on stdout was a protocol message")
        } else {
            Finding::failed(
                check,
                format!(
                    "wrote {lines} line{} on stdout that {} not protocol messages, the first: '{}'; stdout \
                     carries protocol messages only (point fd 1 at stderr, as the SDKs' serve does; with an SDK, look for \
                     output written before serve is called, at import or in an init function)",
                    plural(*lines),
                    if *lines == 1 { "is" } else { "are" },
                    samples.first().map(String::as_str).unwrap_or("")
                ),
            )
        };
        self.findings.push(finding);
    }

    fn skip_all(&mut self, checks: &[Check], why: &str) {
        for check in checks {
            self.findings.push(Finding::skipped(*check, why));
        }
    }

    /// "it did not answer 'x' within 10.0 s" / "it exited with code 3 before answering 'x': <stderr>".
    fn describe_failure(&self, run: &Conversation, method: &str, answer: &Answer) -> String {
        self.describe_failure_via(run, method, answer, AnswersOn::Stdout)
    }

    /// As [`Self::describe_failure`], for a plugin that answers on `channel`.
    fn describe_failure_via(
        &self,
        run: &Conversation,
        method: &str,
        answer: &Answer,
        channel: AnswersOn,
    ) -> String {
        let (on, closed) = match channel {
            AnswersOn::Stdout => ("", "closed its stdout"),
            AnswersOn::Fd4 => (" on fd 4", "closed fd 4"),
        };
        match answer {
            Answer::TimedOut(t) => format!(
                "it did not answer '{method}'{on} within {:.1} s",
                t.as_secs_f64()
            ),
            Answer::Ended(how) => format!(
                "it {} before answering '{method}'{on}{}",
                how.map(|h| h.describe()).unwrap_or_else(|| closed.into()),
                tail_note(&run.final_stderr_tail(TAIL_LINES))
            ),
            Answer::Result(v) => format!("it answered '{method}' with {}", short(v)),
            Answer::Error(e) => format!(
                "it answered '{method}' with error {} ({})",
                e.code, e.message
            ),
        }
    }
}

/// Where a plugin writes its answers: stdout, or fd 4 in command mode (a CLI command).
#[derive(Clone, Copy)]
enum AnswersOn {
    Stdout,
    Fd4,
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// ` (stderr: a | b)`, or nothing.
fn tail_note(lines: &[String]) -> String {
    if lines.is_empty() {
        String::new()
    } else {
        format!(" (stderr: {})", lines.join(" | "))
    }
}

/// A value, cut to 120 characters.
fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.len() <= 120 {
        return text;
    }
    let mut end = 120;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}
