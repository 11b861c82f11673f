//! What went wrong, in the words a finding uses: a call the plugin did not answer (and the limit it
//! had, with what sets it), or answered wrongly; a failure with the stderr the process that failed
//! wrote during the check; and the small pieces of those sentences.

use agent_env_protocol::methods::INITIALIZE;
use serde_json::Value;

use super::conversation::{Answer, Conversation};
use super::{Finding, Status, TAIL_LINES};
use crate::config::{CALL_TIMEOUT_VAR, HANDSHAKE_TIMEOUT_VAR};

/// How many stderr lines a failed finding keeps, for the report's closing excerpt.
const KEPT_LINES: usize = 20;

/// `it did not answer 'x' within 10.0 s (the host's handshake timeout: …)` / `it exited with code
/// 3 before answering 'x'`. The stderr is the finding's to quote ([`quoting_stderr`]).
pub(super) fn describe_failure(method: &str, answer: &Answer) -> String {
    describe_failure_via(method, answer, AnswersOn::Stdout)
}

/// As [`describe_failure`], for a plugin that answers on `channel`.
pub(super) fn describe_failure_via(method: &str, answer: &Answer, channel: AnswersOn) -> String {
    let (on, closed) = match channel {
        AnswersOn::Stdout => ("", "closed its stdout"),
        AnswersOn::Fd4 => (" on fd 4", "closed fd 4"),
    };
    match answer {
        Answer::TimedOut(t) => format!(
            "it did not answer '{method}'{on} within {:.1} s{}",
            t.as_secs_f64(),
            host_limit(method)
        ),
        Answer::Ended(how) => format!(
            "it {} before answering '{method}'{on}",
            how.map(|h| h.describe()).unwrap_or_else(|| closed.into()),
        ),
        Answer::Malformed {
            line: Some(line),
            defect,
        } => {
            format!(
                "it gave a bad answer to '{method}'{on}: '{line}' is no valid message: {defect}"
            )
        }
        Answer::Malformed { line: None, defect } => {
            format!("it gave a bad answer to '{method}'{on}: {defect}")
        }
        Answer::Result(v) => format!("it answered '{method}' with {}", short(v)),
        Answer::Error(e) => format!(
            "it answered '{method}' with error {} ({})",
            e.code, e.message
        ),
    }
}

/// Where the limit of a call to `method` comes from, and how to give a plugin that is just slow
/// longer: ` (the host's handshake timeout: raise AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT if it is just
/// slow)`.
fn host_limit(method: &str) -> String {
    let (limit, var) = if method == INITIALIZE {
        ("handshake timeout", HANDSHAKE_TIMEOUT_VAR)
    } else {
        ("call timeout", CALL_TIMEOUT_VAR)
    };
    format!(" (the host's {limit}: raise {var} if it is just slow)")
}

/// `finding`, judged over `run`: a failure (or a warning: a step that answered with an error) quotes
/// the last lines the process wrote on stderr during the check (` (stderr: a | b)`) and keeps more
/// of them for the report; a pass or a skip is as it is.
pub(super) fn quoting_stderr(run: &Conversation, mut finding: Finding) -> Finding {
    if !matches!(finding.status, Status::Failed | Status::Warned) {
        return finding;
    }
    let lines = run.check_stderr(KEPT_LINES);
    let quoted = &lines[lines.len().saturating_sub(TAIL_LINES)..];
    finding.message.push_str(&tail_note(quoted));
    finding.stderr = lines;
    finding
}

/// Where a plugin writes its answers: stdout, or fd 4 in command mode (a CLI command).
#[derive(Clone, Copy)]
pub(super) enum AnswersOn {
    Stdout,
    Fd4,
}

/// ` (stderr: a | b)`, or nothing.
pub(super) fn tail_note(lines: &[String]) -> String {
    if lines.is_empty() {
        String::new()
    } else {
        format!(" (stderr: {})", lines.join(" | "))
    }
}

/// A value, cut to 120 characters.
pub(super) fn short(value: &Value) -> String {
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
