//! Colour on a terminal: pass and fail words, `Error:` and `Warning:` labels, a plugin's own lines
//! dimmed. `--color auto|always|never` chooses; with `auto`, `NO_COLOR` (set and not empty) turns
//! colour off and a stream that is not a terminal gets none.

use std::io::IsTerminal;

/// `--color`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorChoice {
    /// Colour on a terminal, unless NO_COLOR is set or TERM is dumb.
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// The last `--color` of a command line, read before clap parses it (so that even clap's own
    /// errors and the first warnings follow it); `auto` when there is none or its value is not
    /// one of the three (clap then reports it).
    pub fn from_args(args: &[std::ffi::OsString]) -> ColorChoice {
        let mut choice = ColorChoice::Auto;
        let mut words = args.iter().skip(1).map(|a| a.to_string_lossy());
        while let Some(word) = words.next() {
            let value = match word.strip_prefix("--color") {
                _ if word == "--" => break,
                Some("") => words.next().map(|v| v.into_owned()),
                Some(rest) => rest.strip_prefix('=').map(str::to_string),
                None => None,
            };
            choice = match value.as_deref() {
                Some("always") => ColorChoice::Always,
                Some("never") => ColorChoice::Never,
                Some(_) => ColorChoice::Auto,
                None => choice,
            };
        }
        choice
    }
}

/// Which of the two streams a text is written to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Whether each stream gets colour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Style {
    stdout: bool,
    stderr: bool,
}

const RED: &str = "31";
const GREEN: &str = "32";
const YELLOW: &str = "33";
const BOLD_RED: &str = "1;31";
const DIM: &str = "2";

/// Outcome words as the run prints them, and their colour.
const OUTCOMES: [(&str, &str); 6] = [
    ("passed", GREEN),
    ("scored below 1", YELLOW),
    ("unscored", YELLOW),
    ("failed", RED),
    ("cancelled", YELLOW),
    ("didn't start", YELLOW),
];

/// Whether the environment asks for no colour: `NO_COLOR` set to anything, or a terminal that
/// says it cannot show colour (`TERM=dumb`, as editors' shells and some CI logs set it).
pub fn env_asks_no_colour(no_color: Option<&str>, term: Option<&str>) -> bool {
    no_color.is_some_and(|v| !v.is_empty()) || term == Some("dumb")
}

impl Style {
    /// The style `choice` gives; `auto` is off when the environment asks for no colour
    /// ([`env_asks_no_colour`]).
    pub fn choose(choice: ColorChoice, env_asks_no_colour: bool) -> Style {
        match choice {
            ColorChoice::Always => Style {
                stdout: true,
                stderr: true,
            },
            ColorChoice::Never => Style::default(),
            ColorChoice::Auto if env_asks_no_colour => Style::default(),
            ColorChoice::Auto => Style {
                stdout: std::io::stdout().is_terminal(),
                stderr: std::io::stderr().is_terminal(),
            },
        }
    }

    /// Whether `stream` shows colour.
    pub fn colours(&self, stream: Stream) -> bool {
        self.on(stream)
    }

    fn on(&self, stream: Stream) -> bool {
        match stream {
            Stream::Stdout => self.stdout,
            Stream::Stderr => self.stderr,
        }
    }

    fn paint(&self, stream: Stream, code: &str, text: &str) -> String {
        if self.on(stream) {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    /// `Error:`, bold red on a colour stream.
    pub fn error_label(&self) -> String {
        self.paint(Stream::Stderr, BOLD_RED, "Error:")
    }

    /// `Warning:`, yellow on a colour stream.
    pub fn warning_label(&self) -> String {
        self.paint(Stream::Stderr, YELLOW, "Warning:")
    }

    /// A line that is not agent-env's own (a plugin's stderr), dimmed.
    pub fn dim(&self, stream: Stream, text: &str) -> String {
        self.paint(stream, DIM, text)
    }

    /// A run line with its outcome word coloured: `[tasks/a.json] passed in 0.3s`,
    /// `  tasks/a.json v1: failed at step …`, `… done in 0.1s`.
    pub fn outcome_words(&self, stream: Stream, line: &str) -> String {
        if !self.on(stream) {
            return line.to_string();
        }
        for (word, code) in OUTCOMES {
            for lead in ["] ", ": "] {
                let needle = format!("{lead}{word}");
                if let Some(at) = line.find(&needle) {
                    let start = at + lead.len();
                    let end = start + word.len();
                    let rest = &line[end..];
                    if rest.is_empty() || rest.starts_with([' ', ',', '(']) {
                        return format!(
                            "{}{}{}",
                            &line[..start],
                            self.paint(stream, code, word),
                            rest
                        );
                    }
                }
            }
        }
        line.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_colour_painted_is_one_the_terminal_writer_keeps() {
        for code in [RED, GREEN, YELLOW, BOLD_RED, DIM, "0"] {
            assert!(
                crate::printable::OWN_COLOURS.contains(&code),
                "{code} would be shown as an escape"
            );
        }
    }

    #[test]
    fn outcome_words_are_coloured_only_where_colour_is_on() {
        let on = Style::choose(ColorChoice::Always, false);
        assert_eq!(
            on.outcome_words(Stream::Stdout, "[tasks/a.json] passed in 0.3s"),
            "[tasks/a.json] \x1b[32mpassed\x1b[0m in 0.3s"
        );
        assert_eq!(
            on.outcome_words(Stream::Stdout, "  tasks/a.json v1: failed at step 'x'"),
            "  tasks/a.json v1: \x1b[31mfailed\x1b[0m at step 'x'"
        );
        assert_eq!(
            on.outcome_words(Stream::Stdout, "artifacts/passed: v1 (new)"),
            "artifacts/passed: v1 (new)"
        );
        let off = Style::choose(ColorChoice::Never, false);
        assert_eq!(off.error_label(), "Error:");
        assert_eq!(Style::choose(ColorChoice::Auto, true), Style::default());
        assert!(env_asks_no_colour(Some("1"), None));
        assert!(env_asks_no_colour(None, Some("dumb")));
        assert!(!env_asks_no_colour(Some(""), Some("xterm-256color")));
        assert_eq!(on.error_label(), "\x1b[1;31mError:\x1b[0m");
        let args = |l: &[&str]| l.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert_eq!(
            ColorChoice::from_args(&args(&["a", "--color", "never", "run"])),
            ColorChoice::Never
        );
        assert_eq!(
            ColorChoice::from_args(&args(&["a", "run", "--color=always"])),
            ColorChoice::Always
        );
        assert_eq!(
            ColorChoice::from_args(&args(&["a", "x", "--", "--color=always"])),
            ColorChoice::Auto
        );
    }
}
