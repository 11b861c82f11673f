//! Colour on a terminal: pass and fail words, `Error:` and `Warning:` labels, a plugin's own lines
//! dimmed. `--color auto|always|never` chooses; with `auto`, `NO_COLOR` (set and not empty) turns
//! colour off and a stream that is not a terminal gets none. Apart from colour, the style says whether
//! stderr can redraw a line in place (a progress bar): a terminal can, unless `TERM=dumb` says it
//! cannot, whatever `--color` and `NO_COLOR` say.

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

/// Whether each stream gets colour, and whether stderr can redraw a line in place.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Style {
    stdout: bool,
    stderr: bool,
    redraws: bool,
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

/// What the environment asks of the output, from `NO_COLOR` and `TERM`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EnvAsks {
    /// No colour: `NO_COLOR` set to anything, or `TERM=dumb`.
    pub no_colour: bool,
    /// No line redrawn in place (`\r` and an erase): `TERM=dumb`, a terminal that shows such codes
    /// as text, as editors' shells and CI log viewers that fake a terminal do.
    pub plain_lines: bool,
}

/// What the environment asks of the output: no colour when `NO_COLOR` is set to anything or the
/// terminal says it cannot show colour (`TERM=dumb`, as editors' shells and some CI logs set it);
/// plain lines, no redrawn progress bar, when `TERM=dumb`. `NO_COLOR` is about colour only.
pub fn env_asks(no_color: Option<&str>, term: Option<&str>) -> EnvAsks {
    let dumb = term == Some("dumb");
    EnvAsks {
        no_colour: no_color.is_some_and(|v| !v.is_empty()) || dumb,
        plain_lines: dumb,
    }
}

impl Style {
    /// The style `choice` gives; `auto` is off when the environment asks for no colour
    /// ([`env_asks`]). Lines are redrawn in place on a terminal stderr the environment
    /// does not ask plain lines of, whatever the colour.
    pub fn choose(choice: ColorChoice, asks: EnvAsks) -> Style {
        Style::chosen(choice, asks, std::io::stderr().is_terminal())
    }

    /// The style `choice` gives, `stderr_is_terminal` told.
    fn chosen(choice: ColorChoice, asks: EnvAsks, stderr_is_terminal: bool) -> Style {
        let redraws = stderr_is_terminal && !asks.plain_lines;
        match choice {
            ColorChoice::Always => Style {
                stdout: true,
                stderr: true,
                redraws,
            },
            ColorChoice::Never => Style {
                redraws,
                ..Style::default()
            },
            ColorChoice::Auto if asks.no_colour => Style {
                redraws,
                ..Style::default()
            },
            ColorChoice::Auto => Style {
                stdout: std::io::stdout().is_terminal(),
                stderr: stderr_is_terminal,
                redraws,
            },
        }
    }

    /// Whether stderr can redraw a line in place (a progress bar): it is a terminal, and not one
    /// that says it is dumb.
    pub fn redraws_lines(&self) -> bool {
        self.redraws
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
        let on = Style::choose(ColorChoice::Always, EnvAsks::default());
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
        let off = Style::choose(ColorChoice::Never, EnvAsks::default());
        assert_eq!(off.error_label(), "Error:");
        let no_colour = EnvAsks {
            no_colour: true,
            plain_lines: false,
        };
        assert_eq!(
            Style::chosen(ColorChoice::Auto, no_colour, false),
            Style::default()
        );
        assert!(env_asks(Some("1"), None).no_colour);
        assert!(env_asks(None, Some("dumb")).no_colour);
        assert!(!env_asks(Some(""), Some("xterm-256color")).no_colour);
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

    #[test]
    fn a_dumb_terminal_gets_plain_lines_and_no_color_keeps_the_bar() {
        let asks = |no_color, term| env_asks(no_color, term);
        // NO_COLOR is about colour only: the bar is still drawn on a terminal.
        let no_color = Style::chosen(ColorChoice::Auto, asks(Some("1"), Some("xterm")), true);
        assert!(no_color.redraws_lines());
        assert!(!no_color.colours(Stream::Stderr));
        // TERM=dumb: no colour and no line redrawn, whatever --color says.
        for choice in [ColorChoice::Auto, ColorChoice::Always, ColorChoice::Never] {
            assert!(!Style::chosen(choice, asks(None, Some("dumb")), true).redraws_lines());
            assert!(Style::chosen(choice, asks(None, Some("xterm")), true).redraws_lines());
        }
        // Off a terminal, nothing is redrawn.
        assert!(!Style::chosen(ColorChoice::Always, asks(None, None), false).redraws_lines());
        assert!(asks(None, Some("dumb")).plain_lines);
        assert!(!asks(Some("1"), None).plain_lines);
    }
}
