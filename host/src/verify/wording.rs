//! What went wrong, in the words a finding uses: a call the plugin did not answer, or answered
//! wrongly, said with the stderr it left; and the small pieces of those sentences.

use serde_json::Value;

use super::conversation::{Answer, Conversation};
use super::{Kit, TAIL_LINES};

impl Kit<'_> {
    /// `it did not answer 'x' within 10.0 s` / `it exited with code 3 before answering 'x' (stderr: …)`.
    pub(super) fn describe_failure(
        &self,
        run: &Conversation,
        method: &str,
        answer: &Answer,
    ) -> String {
        self.describe_failure_via(run, method, answer, AnswersOn::Stdout)
    }

    /// As [`Self::describe_failure`], for a plugin that answers on `channel`.
    pub(super) fn describe_failure_via(
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
pub(super) enum AnswersOn {
    Stdout,
    Fd4,
}

pub(super) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
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
