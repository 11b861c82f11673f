//! Where library code sends the lines a user sees. Library code never writes to stdout or stderr
//! itself: it is handed an [`Output`], and the CLI decides where the lines go (its terminal writer
//! ends quietly on a closed pipe).

use std::sync::Mutex;

/// A sink for lines meant for a person. Implementations must not fail: a line that cannot be shown
/// (a closed pipe) is dropped, so work that prints as it goes (a bundle run) is never stopped by it.
pub trait Output: Send + Sync {
    /// One line of the command's output (stdout in the CLI), without its newline.
    fn line(&self, text: &str);

    /// One line of diagnostics (stderr in the CLI), without its newline.
    fn note(&self, text: &str);

    /// A line of step-by-step detail (a step started or done, an entity reused unchanged), which a
    /// quiet view leaves out; otherwise a [`Output::line`].
    fn detail(&self, text: &str) {
        self.line(text);
    }

    /// A note that the command waits for something (another process's lock), which a person must
    /// see while the wait lasts: an output that collects its lines for later (a `--json` document)
    /// still shows this one at once. Otherwise a [`Output::note`].
    fn waiting(&self, text: &str) {
        self.note(text);
    }

    /// A question on the command's output with no newline after it, shown at once (the answer is
    /// read after it).
    fn prompt(&self, text: &str) {
        self.line(text);
    }
}

/// An [`Output`] that keeps every line, for tests and for callers that show the lines later.
#[derive(Debug, Default)]
pub struct Collected {
    lines: Mutex<Vec<(Stream, String)>>,
}

/// Which of the two streams a collected line was sent to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// [`Output::line`].
    Out,
    /// [`Output::note`].
    Note,
}

impl Collected {
    /// The lines sent to `stream`, in order.
    pub fn lines(&self, stream: Stream) -> Vec<String> {
        self.lines
            .lock()
            .map(|l| {
                l.iter()
                    .filter(|(s, _)| *s == stream)
                    .map(|(_, t)| t.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn push(&self, stream: Stream, text: &str) {
        if let Ok(mut lines) = self.lines.lock() {
            lines.push((stream, text.to_string()));
        }
    }
}

impl Output for Collected {
    fn line(&self, text: &str) {
        self.push(Stream::Out, text);
    }

    fn note(&self, text: &str) {
        self.push(Stream::Note, text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collected_keeps_each_stream_in_order() {
        let out = Collected::default();
        out.line("a");
        out.note("n");
        out.line("b");
        assert_eq!(out.lines(Stream::Out), ["a", "b"]);
        assert_eq!(out.lines(Stream::Note), ["n"]);
    }
}
