//! The step run, with `--step`: a fresh start of the plugin, `initialize`, then the task step sent
//! with `execute` as a run sends it. Two checks come of it: `step-executes` (the step answers with
//! a result: a crash, a hang or an answer of another shape fails it; an error answer, the step
//! failing as the protocol lets it, is a warning, since verify's stores are empty) and
//! `nested-calls` (its calls back to agent-env, answered last first, each after a stray
//! `$/cancelRequest`, are well formed and their answers waited for).
//!
//! Invariant: the step runs in a start of its own, so what it does (a crash, a hang, lines on
//! stderr) is its own findings' alone: the session's checks neither end with it nor lend it the
//! stderr they caused, and its stderr excerpt holds what the plugin wrote while the step ran.

use std::time::Duration;

use agent_env_protocol::message::RpcError;
use agent_env_protocol::methods::EXECUTE;
use serde_json::{json, Map, Value};

use super::conversation::{Answer, Exchange};
use super::plural::plural;
use super::step_timeout::step_timeout;
use super::wording::{describe_failure, quoting_stderr, short, tail_note};
use super::{Check, Finding, Kit, Status, VerifyOptions, TAIL_LINES};
use crate::config::{CALL_TIMEOUT_VAR, STEP_TIMEOUT_GRACE};

/// The checks the step run makes.
const STEP_CHECKS: [Check; 2] = [Check::StepExecutes, Check::NestedCalls];

impl Kit<'_> {
    /// Runs the `--step` step, if one was given, in a start of its own.
    pub(super) fn step_run(&mut self, options: &VerifyOptions) {
        let Some(step) = &options.step else {
            let why = self.no_step_reason();
            self.skip_all(&STEP_CHECKS, why);
            return;
        };
        if self.handshake.is_none() {
            self.skip_all(&STEP_CHECKS, "initialize failed (see initialize)");
            return;
        }
        let type_name = step.get("type").and_then(Value::as_str).unwrap_or("");
        if let Some(why) = self.unknown_step_type(type_name) {
            self.step_did_not_run(why);
            return;
        }
        // A limit no step can be given is the caller's mistake, said before the plugin starts.
        let own = match step_timeout(step) {
            Ok(own) => own,
            Err(e) => {
                self.step_did_not_run(format!("--step's {e}"));
                return;
            }
        };
        let mut run = match self.start() {
            Ok(run) => run,
            Err(why) => {
                self.step_did_not_run(why);
                return;
            }
        };
        if let Err(why) = self.initialize(&mut run) {
            self.skip_all(
                &STEP_CHECKS,
                &format!(
                    "initialize failed on the start that runs the step: {why}{}",
                    tail_note(&run.check_stderr(TAIL_LINES))
                ),
            );
            self.end_run(&mut run, &[]);
            return;
        }
        run.begin_check();
        let (params, limit) = self.execute_params(step, type_name, own);
        let exchange = run.call(EXECUTE, params, limit.wait);
        let executes = step_executes(type_name, &exchange, &limit);
        self.findings.push(quoting_stderr(&run, executes));
        let nested = nested_calls(type_name, &exchange);
        self.findings.push(quoting_stderr(&run, nested));
        self.end_run(&mut run, &[]);
    }

    /// The step could not be run (`why`): step-executes fails, and there were no calls to check.
    fn step_did_not_run(&mut self, why: String) {
        self.findings
            .push(Finding::failed(Check::StepExecutes, why));
        self.findings.push(Finding::skipped(
            Check::NestedCalls,
            "no step ran (see step-executes)",
        ));
    }

    /// Why no step runs without `--step`.
    fn no_step_reason(&self) -> &'static str {
        let offers_steps = self
            .handshake
            .as_ref()
            .is_none_or(|h| h.contributions.iter().any(|c| c.group == "task_steps"));
        if offers_steps {
            "no step to run: give one with --step '{\"id\": \"s\", \"type\": \"<task step>\", …}' to run it and check \
             the calls it makes to agent-env"
        } else {
            "the plugin offers no task step, so there is no step to run"
        }
    }

    /// Why `type_name` is not a task step of the plugin, held to its answer only when that answer
    /// keeps to its manifest (else the manifest check has said what is missing already).
    fn unknown_step_type(&self, type_name: &str) -> Option<String> {
        let answer_kept_manifest = self
            .findings
            .iter()
            .any(|f| f.check == Check::Manifest && f.status == Status::Passed);
        let handshake = self.handshake.as_ref().filter(|_| answer_kept_manifest)?;
        let steps: Vec<&str> = handshake
            .contributions
            .iter()
            .filter(|c| c.group == "task_steps")
            .map(|c| c.type_name.as_str())
            .collect();
        if steps.contains(&type_name) {
            return None;
        }
        let offered = if steps.is_empty() {
            "it offers no task step".to_string()
        } else {
            format!("its task steps: {}", steps.join(", "))
        };
        Some(format!(
            "--step names the type '{type_name}', which is not a task step of this plugin ({offered}); give --step one of them"
        ))
    }

    /// The params of `execute` for `step`, and how long to wait for its answer: the step's own
    /// limit `own` (its `timeout_seconds`), as a run gives it (plus the grace for its own answer), else the host's call timeout;
    /// the step is told it, less the grace, as a run tells it.
    fn execute_params(
        &self,
        step: &Map<String, Value>,
        type_name: &str,
        own: Option<Duration>,
    ) -> (Value, StepLimit) {
        let told = own.unwrap_or(self.config.call_timeout);
        let limit = StepLimit {
            own,
            wait: own.map_or(told, |own| own + STEP_TIMEOUT_GRACE),
        };
        let params = json!({
            "type": type_name,
            "step": step,
            "context": {"instance_id": "agent-env-verify", "metadata": {}},
            "timeout_ms": u64::try_from(told.as_millis()).unwrap_or(u64::MAX),
        });
        (params, limit)
    }
}

/// How long the step is waited for, and where that comes from.
struct StepLimit {
    /// The step's own `timeout_seconds`, when it gives one a run would take.
    own: Option<Duration>,
    /// How long its answer is waited for: its own limit and [`STEP_TIMEOUT_GRACE`], else the host's
    /// call timeout.
    wait: Duration,
}

impl StepLimit {
    /// `it did not answer 'execute' within 3.0 s (…)`: the limit, what set it and how to give a
    /// step that is just slow more time, as a run's own message about a step that ran out says it.
    fn ran_out(&self) -> String {
        let waited = self.wait.as_secs_f64();
        match self.own {
            Some(own) => format!(
                "it did not answer '{EXECUTE}' within {waited:.1} s (its timeout_seconds, {} s, and {} s for its answer); \
                 raise timeout_seconds in --step if it is just slow",
                own.as_secs_f64(),
                STEP_TIMEOUT_GRACE.as_secs_f64()
            ),
            None => format!(
                "it did not answer '{EXECUTE}' within {waited:.1} s (the host's call timeout, {CALL_TIMEOUT_VAR}, which a \
                 step without timeout_seconds gets); give a step that is slow by design a limit of its own with \
                 \"timeout_seconds\" in --step, as a task does, or raise {CALL_TIMEOUT_VAR}"
            ),
        }
    }
}

/// `step-executes`: the step answered with a result of the protocol's shape, within `limit`.
fn step_executes(type_name: &str, exchange: &Exchange, limit: &StepLimit) -> Finding {
    let check = Check::StepExecutes;
    if let Some(problem) = exchange.problems.first() {
        return Finding::failed(
            check,
            format!("while running the step '{type_name}' it {problem}"),
        );
    }
    match &exchange.answer {
        Answer::Result(value) => match result_shape_problem(value) {
            None => Finding::passed(
                check,
                format!("the step '{type_name}' answered execute with a result{}", metadata_note(value)),
            ),
            Some(problem) => Finding::failed(
                check,
                format!(
                    "the step '{type_name}' answered execute with {}, but {problem}; a step answers {{\"metadata\": {{…}}}}",
                    short(value)
                ),
            ),
        },
        Answer::Error(e) => match error_answer_problem(e) {
            Some(problem) => Finding::failed(
                check,
                format!(
                    "the step '{type_name}' answered execute with error {} ({}), but {problem}",
                    e.code, e.message
                ),
            ),
            None => Finding::warned(
                check,
                format!(
                    "the step '{type_name}' answered execute with error {} ({}): in a run its task fails; verify \
                     gives a step fresh, empty stores, so a step that needs stored data fails here, and one that \
                     succeeds passes",
                    e.code, e.message
                ),
            ),
        },
        Answer::TimedOut(_) => Finding::failed(
            check,
            format!("while running the step '{type_name}', {}", limit.ran_out()),
        ),
        other => Finding::failed(
            check,
            format!(
                "while running the step '{type_name}', {}",
                describe_failure(EXECUTE, other)
            ),
        ),
    }
}

/// What makes an error answer to `execute` break the protocol rather than say the step failed: an
/// error of JSON-RPC itself (-32700 to -32600: a plugin that lists the step cannot be unable to parse,
/// find or take `execute`), or one without `data.kind`, which every error carries.
fn error_answer_problem(error: &RpcError) -> Option<String> {
    if (-32700..=-32600).contains(&error.code) {
        return Some(format!(
            "{} is JSON-RPC's own error (the request was not understood or has no such method), which a plugin that lists the step does not answer to execute; a step that fails answers -32020 (step-failed)",
            error.code
        ));
    }
    let kind = error
        .data
        .as_ref()
        .and_then(|data| data.get("kind"))
        .and_then(Value::as_str);
    kind.is_none().then(|| {
        "its data has no kind, which every error carries (a step that fails answers -32020 with data {\"kind\": \"step-failed\", …})".to_string()
    })
}

/// `nested-calls`: the step's own calls to agent-env were well formed and their answers waited for.
fn nested_calls(type_name: &str, exchange: &Exchange) -> Finding {
    let check = Check::NestedCalls;
    if let Some(problem) = exchange.nested_problems.first() {
        return Finding::failed(
            check,
            format!("while running the step '{type_name}' it {problem}"),
        );
    }
    let answered = matches!(exchange.answer, Answer::Result(_) | Answer::Error(_));
    let methods: Vec<&str> = exchange.nested.iter().map(|n| n.method.as_str()).collect();
    let calls = format!(
        "{} call{} to agent-env ({})",
        methods.len(),
        plural(methods.len()),
        methods.join(", ")
    );
    match (methods.is_empty(), answered) {
        (true, _) => Finding::skipped(
            check,
            format!(
                "the step '{type_name}' made no call to agent-env; give --step a step that calls host.* to check its calls"
            ),
        ),
        (false, false) => Finding::skipped(
            check,
            format!(
                "the step '{type_name}' made {calls} but did not answer execute (see step-executes), so whether it waits \
                 for their answers is not known"
            ),
        ),
        (false, true) => Finding::passed(
            check,
            format!(
                "the step '{type_name}' made {calls} and took each answer by its id before it answered execute"
            ),
        ),
    }
}

/// What is wrong with the shape of an `execute` result, as a run reads it: an object whose
/// `metadata`, if any, is an object.
fn result_shape_problem(value: &Value) -> Option<String> {
    let Value::Object(result) = value else {
        return Some(format!(
            "the result must be an object, and it is {}",
            kind(value)
        ));
    };
    match result.get("metadata") {
        None | Some(Value::Null | Value::Object(_)) => None,
        Some(other) => Some(format!(
            "its 'metadata' (merged into the task's context.metadata) must be an object, and it is {}",
            kind(other)
        )),
    }
}

/// ` (metadata: a, b)`, or nothing.
fn metadata_note(value: &Value) -> String {
    match value.get("metadata") {
        Some(Value::Object(m)) if !m.is_empty() => {
            let keys: Vec<&str> = m.keys().map(String::as_str).collect();
            format!(" (metadata: {})", keys.join(", "))
        }
        _ => String::new(),
    }
}

/// What a JSON value is, for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_is_an_object_whose_metadata_is_one() {
        assert_eq!(result_shape_problem(&json!({})), None);
        assert_eq!(result_shape_problem(&json!({"metadata": {"a": 1}})), None);
        assert_eq!(
            result_shape_problem(&json!([1])).as_deref(),
            Some("the result must be an object, and it is an array")
        );
        assert_eq!(
            result_shape_problem(&json!({"metadata": "x"})).as_deref(),
            Some("its 'metadata' (merged into the task's context.metadata) must be an object, and it is a string")
        );
    }
}
