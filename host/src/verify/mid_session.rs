//! The checks taken while the session is open, each a request or a line the plugin must take in
//! its stride: an unknown method, lines that are not requests, and `$/cancelRequest` for requests
//! that are not running. (The `--step` task step runs in a start of its own: `step`.)
//!
//! Invariant: each check is judged by a request the plugin must answer, sent after whatever the
//! check tests, so a plugin that stopped reading, or answered what gets no answer, fails the check
//! that caused it.

use agent_env_protocol::codes::ErrorKind;
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
        run.send_raw(br#"{"jsonrpc":"2.0","id":99,"method":"execute","params":{"#);
        run.send_raw(b"[\"not\", \"a\", \"request\"]");
        let exchange = run.call(UNKNOWN_METHOD, json!({}), self.config.call_timeout);
        match &exchange.answer {
            Answer::Result(_) | Answer::Error(_) => match exchange.first_problem() {
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
