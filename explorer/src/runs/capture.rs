//! The lines a run prints, kept for the Run page: numbered, so a page asks only for what it has not
//! seen yet, and bounded, so a chatty run cannot grow the server without end.

use std::sync::Mutex;

use agent_env::output::Output;
use serde::Serialize;

/// At most this many lines are kept per run; older ones are dropped (their numbers stay taken).
pub const MAX_LINES: usize = 5_000;

/// One line a run printed.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LogLine {
    /// Its number, from 0, across the run.
    pub seq: u64,
    /// `out` for the run's output, `note` for its diagnostics.
    pub stream: &'static str,
    pub text: String,
}

/// An [`Output`] that keeps the last [`MAX_LINES`] lines.
#[derive(Debug, Default)]
pub struct LineLog {
    lines: Mutex<(u64, std::collections::VecDeque<LogLine>)>,
}

impl LineLog {
    fn push(&self, stream: &'static str, text: &str) {
        if let Ok(mut guard) = self.lines.lock() {
            let (next, lines) = &mut *guard;
            lines.push_back(LogLine {
                seq: *next,
                stream,
                text: agent_env::redaction::redact(text).into_owned(),
            });
            *next += 1;
            while lines.len() > MAX_LINES {
                lines.pop_front();
            }
        }
    }

    /// The kept lines numbered `since` or later.
    pub fn since(&self, since: u64) -> Vec<LogLine> {
        self.lines
            .lock()
            .map(|g| g.1.iter().filter(|l| l.seq >= since).cloned().collect())
            .unwrap_or_default()
    }
}

impl Output for LineLog {
    fn line(&self, text: &str) {
        self.push("out", text);
    }

    fn note(&self, text: &str) {
        self.push("note", text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_numbered_and_bounded() {
        let log = LineLog::default();
        log.line("a");
        log.note("b");
        assert_eq!(
            log.since(1),
            vec![LogLine {
                seq: 1,
                stream: "note",
                text: "b".into()
            }]
        );
        for i in 0..MAX_LINES + 10 {
            log.line(&i.to_string());
        }
        let all = log.since(0);
        assert_eq!(all.len(), MAX_LINES);
        assert_eq!(all[0].seq, 12);
    }
}
