//! The checks taken while the session is open, each a request or a line the plugin must take in
//! its stride: an unknown method, lines that are not requests, and `$/cancelRequest` for requests
//! that are not running. (The `--step` task step runs in a start of its own: `step`.)
//!
//! Invariant: each check is judged by a request the plugin must answer, sent after whatever the
//! check tests, so a plugin that stopped reading, or answered what gets no answer, fails the check
//! that caused it.

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::message::RpcError;
use agent_env_protocol::methods::CANCEL_REQUEST;
use serde_json::json;

use super::conversation::{self, Answer, Conversation};
use super::wording::{describe_failure, short};
use super::{Check, Finding, Kit, UNKNOWN_METHOD};

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
            other => Finding::failed(check, describe_failure(UNKNOWN_METHOD, other)),
        }
    }

    /// A cut-off request and a JSON value that is not a request, then a request that must be answered.
    pub(super) fn unparsable(&self, run: &mut Conversation) -> Finding {
        let check = Check::UnparsableRequest;
        run.send_raw(CUT_OFF.line);
        run.send_raw(NOT_A_REQUEST.line);
        let exchange = run.call(UNKNOWN_METHOD, json!({}), self.config.call_timeout);
        match &exchange.answer {
            Answer::Result(_) | Answer::Error(_) => match exchange.first_problem() {
                Some(problem) => Finding::failed(
                    check,
                    format!("after a line that is not a request it {problem}"),
                ),
                None => unparsable_answers(check, &exchange.unattributed),
            },
            other => Finding::failed(
                check,
                format!(
                    "after a line that is not a request, {}; {JUNK_RULE}",
                    describe_failure(UNKNOWN_METHOD, other)
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
                match exchange.first_problem() {
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
                    describe_failure(UNKNOWN_METHOD, other)
                ),
            ),
        }
    }
}

/// One of the lines the `unparsable-request` check sends, and the error §8 of the protocol gives it.
struct Junk {
    line: &'static [u8],
    /// What it is, in a finding's words.
    what: &'static str,
    kind: ErrorKind,
}

/// A request cut off mid-line: not JSON.
const CUT_OFF: Junk = Junk {
    line: br#"{"jsonrpc":"2.0","id":99,"method":"execute","params":{"#,
    what: "the cut-off request",
    kind: ErrorKind::ParseError,
};

/// JSON, but no request.
const NOT_A_REQUEST: Junk = Junk {
    line: b"[\"not\", \"a\", \"request\"]",
    what: "the JSON array",
    kind: ErrorKind::InvalidRequest,
};

/// What a plugin does with such lines.
const JUNK_RULE: &str = "a plugin answers a line that is not JSON with error -32700 (parse-error) and JSON \
     that is not a request with error -32600 (invalid-request), each with a null id, or ignores them, and keeps reading";

/// The plugin kept answering: what it answered the two lines, each against the error it gets. An
/// answer carries a null id, so it is matched to its line by its code when that is one of theirs,
/// else by its order. A wrong code is worth a look, not a broken session: a warning.
fn unparsable_answers(check: Check, answers: &[RpcError]) -> Finding {
    const KEPT: &str = "kept answering after a cut-off request and a JSON array";
    let lines = [CUT_OFF, NOT_A_REQUEST];
    if answers.is_empty() {
        return Finding::passed(check, format!("{KEPT} (it answered neither)"));
    }
    if answers.len() > lines.len() {
        let codes: Vec<String> = answers.iter().map(|e| e.code.to_string()).collect();
        return Finding::warned(
            check,
            format!(
                "{KEPT}, but sent {} answers with a null id for its 2 lines (errors {}); {JUNK_RULE}",
                answers.len(),
                codes.join(", ")
            ),
        );
    }
    let attributed = attribute(&lines, answers);
    let mut said = Vec::new();
    let mut wrong = Vec::new();
    for (junk, answer) in lines.iter().zip(&attributed) {
        let Some(error) = answer else {
            said.push(format!("{} got no answer", junk.what));
            continue;
        };
        let wanted = junk.kind.code();
        if error.code == wanted {
            said.push(format!("{} got error {}", junk.what, error.code));
        } else {
            wrong.push(format!(
                "{} got error {} ({}) where it gets {wanted} ({})",
                junk.what,
                error.code,
                error.message,
                junk.kind.as_str()
            ));
        }
    }
    if wrong.is_empty() {
        Finding::passed(check, format!("{KEPT} ({})", said.join(", ")))
    } else {
        Finding::warned(
            check,
            format!("{KEPT}, but {}; {JUNK_RULE}", wrong.join(", and ")),
        )
    }
}

/// Which answer belongs to which line: an answer whose code is a line's own error is that line's;
/// the rest go, in the order they came, to the lines still unanswered.
fn attribute<'a>(lines: &[Junk], answers: &'a [RpcError]) -> Vec<Option<&'a RpcError>> {
    let mut attributed: Vec<Option<&RpcError>> = vec![None; lines.len()];
    let mut rest = Vec::new();
    for answer in answers {
        match lines
            .iter()
            .position(|l| l.kind.code() == answer.code)
            .filter(|&i| attributed[i].is_none())
        {
            Some(i) => attributed[i] = Some(answer),
            None => rest.push(answer),
        }
    }
    let mut rest = rest.into_iter();
    for slot in attributed.iter_mut().filter(|s| s.is_none()) {
        *slot = rest.next();
    }
    attributed
}
