//! The checks taken while the session is open, each a request or a line the plugin must take in
//! its stride: an unknown method, lines that are not requests, `$/cancelRequest` for requests that
//! are not running, and a task step whose calls back to agent-env are answered out of order.
//!
//! Invariant: each check is judged by a request the plugin must answer, sent after whatever the
//! check tests, so a plugin that stopped reading, or answered what gets no answer, fails the check
//! that caused it.

use std::time::Duration;

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::methods::{CANCEL_REQUEST, EXECUTE};
use serde_json::{json, Value};

use super::conversation::{self, Answer, Conversation, Exchange};
use super::wording::{plural, short};
use super::{Check, Finding, Kit, Status, VerifyOptions, UNKNOWN_METHOD};

impl Kit<'_> {
    pub(super) fn unknown_method(&self, run: &mut Conversation) -> Finding {
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
    pub(super) fn unparsable(&self, run: &mut Conversation) -> Finding {
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
    pub(super) fn cancel(&self, run: &mut Conversation) -> Finding {
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
    pub(super) fn nested(&self, run: &mut Conversation, options: &VerifyOptions) -> Finding {
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
}
