//! What a person watching `agent-env run` sees: the run's lines, plugin progress as a bar on a
//! terminal (plain lines otherwise, `TERM=dumb` included: it cannot redraw a line), and with
//! `--verbose` each plugin's stderr and `$/log` lines and a failed step's traceback as they arrive.
//!
//! The view is both the run's [`Output`] and a [`RunObserver`], so the progress bar (on stderr) is
//! cleared before any other line is written and drawn again after it: lines and bar never mix.

use std::sync::atomic::Ordering;
use std::sync::Mutex;

use crate::cli::style::{Stream, Style};
use crate::cli::Terminal;
use crate::output::Output;
use crate::run::events::{PluginStream, RunEvent, RunObserver, StepStatus};
use crate::run::run_log::progress_text;

/// How wide the bar's track is, in characters.
const BAR_WIDTH: usize = 24;

/// The terminal view of one run.
pub struct RunView {
    term: Terminal,
    style: Style,
    verbose: bool,
    /// Leave out the lines of step-by-step detail ([`Output::detail`]).
    quiet: bool,
    /// Draw progress as a bar that redraws in place (stderr is a terminal, and not a dumb one).
    live: bool,
    /// The run's lines go to stderr (stdout carries the JSON document).
    lines_to_stderr: bool,
    /// The run has several tasks: a plugin's line then names the task it is about.
    several_tasks: std::sync::atomic::AtomicBool,
    /// Whether it said, once, where a failed step's traceback is (without `-v`).
    traceback_pointed_at: std::sync::atomic::AtomicBool,
    state: Mutex<ViewState>,
}

#[derive(Default)]
struct ViewState {
    /// The bar now on screen, when one is.
    bar: Option<String>,
    /// The last plain progress line, so a repeated one is not printed again.
    last_plain: Option<String>,
}

use super::terminal::ERASE_LINE;

impl RunView {
    /// A view over this process's terminal. `json`: stdout is kept for the JSON document, so the
    /// run's lines go to stderr.
    pub fn new(style: Style, verbose: bool, quiet: bool, json: bool) -> RunView {
        RunView {
            term: Terminal::with_style(style),
            style,
            verbose,
            quiet,
            live: style.redraws_lines(),
            lines_to_stderr: json,
            several_tasks: std::sync::atomic::AtomicBool::new(false),
            traceback_pointed_at: std::sync::atomic::AtomicBool::new(false),
            state: Mutex::new(ViewState::default()),
        }
    }

    /// The writer the view prints through, for what it learned of the streams.
    pub fn terminal(&self) -> &Terminal {
        &self.term
    }

    /// Runs `write` with the bar cleared, then draws the bar again.
    fn around_bar(&self, write: impl FnOnce(&Terminal)) {
        let Ok(state) = self.state.lock() else {
            write(&self.term);
            return;
        };
        if state.bar.is_some() {
            self.term.eprint_after(ERASE_LINE, "");
        }
        write(&self.term);
        if let Some(bar) = &state.bar {
            // The cursor is at a line's start: the erase changes nothing on screen, and marks the
            // line as one drawn to be drawn again.
            self.term.eprint_after(ERASE_LINE, bar);
        }
    }

    fn clear_bar(&self) {
        if let Ok(mut state) = self.state.lock() {
            if state.bar.take().is_some() {
                self.term.eprint_after(ERASE_LINE, "");
            }
        }
    }

    fn show_progress(&self, label: &str, progress: Option<f64>, total: Option<f64>, message: &str) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        if self.live {
            let bar = bar_line(label, progress, total, message, terminal_width());
            self.term.eprint_after(ERASE_LINE, &bar);
            state.bar = Some(bar);
            return;
        }
        let mut line = format!("{label} {}", progress_text(progress, total));
        if !message.is_empty() {
            line.push_str(&format!(" {message}"));
        }
        if state.last_plain.as_deref() == Some(line.as_str()) {
            return;
        }
        if self.lines_to_stderr {
            self.term.eprintln(&line);
        } else {
            self.term.line(&line);
        }
        state.last_plain = Some(line);
    }
}

impl Output for RunView {
    fn line(&self, text: &str) {
        let stream = if self.lines_to_stderr {
            Stream::Stderr
        } else {
            Stream::Stdout
        };
        let text = self.style.outcome_words(stream, text);
        self.around_bar(|t| {
            if self.lines_to_stderr {
                t.eprintln(&text);
            } else {
                t.line(&text);
            }
        });
    }

    fn note(&self, text: &str) {
        self.around_bar(|t| t.eprintln(text));
    }

    fn detail(&self, text: &str) {
        if !self.quiet {
            self.line(text);
        }
    }
}

impl RunObserver for RunView {
    fn event(&self, event: &RunEvent) {
        match event {
            RunEvent::RunStarted { tasks, .. } => self
                .several_tasks
                .store(tasks.len() > 1, std::sync::atomic::Ordering::Relaxed),
            // A warning about the whole run (a plugin's noise, one that ignored the cancel) is said
            // here; a task's warnings are said with the task's lines, by the task.
            RunEvent::Warning {
                task_path: None,
                message,
            } => self.note(&format!("Warning: {message}")),
            RunEvent::PluginProgress {
                package,
                step,
                progress,
                total,
                message,
            } => {
                let label = match step {
                    Some(s) => format!("[{}] {}", s.task_path, s.step_id),
                    None => format!("[{package}]"),
                };
                self.show_progress(&label, *progress, *total, message.as_deref().unwrap_or(""));
            }
            RunEvent::PluginOutput {
                package,
                step,
                stream,
                line,
            } if self.verbose => {
                // Which step a line is about, as the run's log says it: with its task when the
                // run has several.
                let several = self
                    .several_tasks
                    .load(std::sync::atomic::Ordering::Relaxed);
                let at = match step {
                    Some(s) if several => format!(" [{}] {}", s.task_path, s.step_id),
                    Some(s) => format!(" {}", s.step_id),
                    None => String::new(),
                };
                let text = match stream {
                    PluginStream::Stderr => format!("[{package}]{at} {line}"),
                    PluginStream::Log { level } => format!("[{package}]{at} {level}: {line}"),
                };
                let text = self.style.dim(Stream::Stderr, &text);
                self.around_bar(|t| t.eprintln(&text));
            }
            RunEvent::StepFinished {
                status, failure, ..
            } => {
                self.clear_bar();
                let traceback = match (status, failure) {
                    (StepStatus::Failed, Some(f)) => f.traceback.as_ref(),
                    _ => None,
                };
                match traceback {
                    Some(traceback) if self.verbose => {
                        let text: Vec<String> =
                            traceback.lines().map(|l| format!("    {l}")).collect();
                        self.around_bar(|t| t.eprintln(&text.join("\n")));
                    }
                    // Said once a run: a person who has not met -v learns where it is.
                    Some(_) if !self.traceback_pointed_at.swap(true, Ordering::Relaxed) => {
                        let text = self.style.dim(
                            Stream::Stderr,
                            "    (the failed step's traceback: -v shows it here, and the run's log has it)",
                        );
                        self.around_bar(|t| t.eprintln(&text));
                    }
                    _ => {}
                }
            }
            RunEvent::TaskFinished { .. } | RunEvent::RunFinished { .. } => self.clear_bar(),
            _ => {}
        }
    }
}

impl Drop for RunView {
    fn drop(&mut self) {
        self.clear_bar();
    }
}

/// `[tasks/a.json] grade [#########---------------]  3/8 (38%) reading essays`, cut to `width`.
fn bar_line(
    label: &str,
    progress: Option<f64>,
    total: Option<f64>,
    message: &str,
    width: usize,
) -> String {
    let track = match (progress, total) {
        (Some(p), Some(t)) if t > 0.0 => {
            let filled = ((p / t).clamp(0.0, 1.0) * BAR_WIDTH as f64).round() as usize;
            format!("[{}{}]", "#".repeat(filled), "-".repeat(BAR_WIDTH - filled))
        }
        _ => String::new(),
    };
    let mut line = format!("{label} {track} {}", progress_text(progress, total));
    if !message.is_empty() {
        line.push(' ');
        line.push_str(message);
    }
    // Masked before it is cut to the terminal's width: a secret the cut split would be shown in part.
    crate::redaction::redact(&line)
        .chars()
        .take(width.saturating_sub(1).max(20))
        .collect()
}

/// The width of the terminal on stderr; 80 when it cannot be read.
fn terminal_width() -> usize {
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct we own; fd 2 is only read.
    let rc = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut size) };
    if rc == 0 && size.ws_col > 0 {
        size.ws_col as usize
    } else {
        80
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_fills_in_proportion_and_fits_the_width() {
        let bar = bar_line("[t] s", Some(1.0), Some(4.0), "one of four", 200);
        assert_eq!(
            bar,
            "[t] s [######------------------] 1/4 (25%) one of four"
        );
        assert_eq!(
            bar_line("[t] s", Some(1.0), Some(4.0), "x", 30)
                .chars()
                .count(),
            29
        );
        assert_eq!(bar_line("[p]", Some(7.0), None, "", 80), "[p]  7");
    }
}
