//! The one writer every command's output goes through.
//!
//! A closed stdout (`agent-env config show | head -c1`) is the reader choosing to stop reading, not a
//! failure of the command: the writer stops writing to that stream, the command runs to its end (a
//! bundle run must not stop half way with its sandboxes up), and agent-env exits with the command's own
//! exit code, printing nothing about the pipe. The same holds for a closed stderr, and for a terminal
//! that hung up (its window closed, its ssh connection dropped): its reader went away too, so a command
//! a hang-up stopped says nothing of the writes the gone terminal refused. Nothing here panics.
//!
//! Any other failure to write stdout (a full disk, an I/O error) loses output a script relies on: it
//! is kept ([`Terminal::stdout_failure`]), and the command's exit says so, never 0. A stdout that was
//! never open (`agent-env … >&-`) is such a failure too, not a reader that went away: the Rust runtime
//! puts `/dev/null` where it finds no stdout, before `main`, so whether one was there is noted earlier
//! still ([`STDOUT_CLOSED_AT_START`]).
//!
//! Every secret value the invocation holds is masked on the way out ([`redaction`]): a plugin's stderr,
//! a store's error or a step's message may quote one, and none of them reaches the screen or a pipe.
//! The control characters such text may hold are shown as escapes ([`for_terminal`]), so it cannot
//! move the cursor or rewrite a line. A stream without colour (`--color never`, `NO_COLOR`, a pipe or
//! a file) gets no escape byte at all, a command's own colour codes included; on a stream with colour,
//! a colour still in effect where a line ends is reset there, so nothing from outside leaves the
//! terminal painted. Only [`Terminal::print_verbatim`] (an object the user asked to print) writes
//! bytes as given.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::OnceLock;

use crate::cli::style::{Stream, Style};
use crate::output::Output;
use crate::printable::for_terminal;
use crate::redaction;

/// Back to the start of the line, and erase it: where a progress line is drawn again.
pub(crate) const ERASE_LINE: &[u8] = b"\r\x1b[2K";

/// Whether this process started without a stdout (fd 1 not open), noted before the Rust runtime
/// opens `/dev/null` there: whatever is written to stdout is then lost.
static STDOUT_CLOSED_AT_START: AtomicBool = AtomicBool::new(false);

/// Runs [`note_stdout_at_start`] as the process starts, before `main` and the Rust runtime.
#[cfg(any(target_os = "linux", target_vendor = "apple"))]
#[used]
#[cfg_attr(target_os = "linux", link_section = ".init_array")]
#[cfg_attr(target_vendor = "apple", link_section = "__DATA,__mod_init_func")]
static NOTE_STDOUT_AT_START: extern "C" fn() = note_stdout_at_start;

extern "C" fn note_stdout_at_start() {
    // SAFETY: F_GETFD only reads fd 1's descriptor flags; it fails with EBADF when fd 1 is not open.
    if unsafe { libc::fcntl(libc::STDOUT_FILENO, libc::F_GETFD) } == -1 {
        STDOUT_CLOSED_AT_START.store(true, Ordering::Relaxed);
    }
}

/// Where this process's last write to stderr through a [`Terminal`] left the cursor, for a notice
/// written from elsewhere (a signal's) to start on a line of its own ([`eprint_notice`]).
static STDERR_TAIL: AtomicU8 = AtomicU8::new(AT_LINE_START);
/// At the start of a line.
const AT_LINE_START: u8 = 0;
/// After a line drawn to be drawn again ([`ERASE_LINE`] first): a progress bar, erased for a notice.
const AFTER_LIVE_LINE: u8 = 1;
/// After text with no newline that is not such a line (a question waiting for its answer): kept.
const AFTER_PARTIAL_LINE: u8 = 2;

/// Notes where a write of `control` then `text` to stderr left the cursor.
fn note_stderr_tail(control: &[u8], text: &str) {
    if let Some(tail) = tail_after(control, text) {
        STDERR_TAIL.store(tail, Ordering::Relaxed);
    }
}

/// Where a write of `control` then `text` leaves the cursor; `None`: where it was.
fn tail_after(control: &[u8], text: &str) -> Option<u8> {
    if text.ends_with('\n') || (text.is_empty() && control == ERASE_LINE) {
        Some(AT_LINE_START)
    } else if text.is_empty() {
        None
    } else if control == ERASE_LINE {
        Some(AFTER_LIVE_LINE)
    } else {
        Some(AFTER_PARTIAL_LINE)
    }
}

/// What a notice writes before itself to start on a line of its own, the cursor being at `tail`.
fn notice_prefix(tail: u8) -> &'static [u8] {
    match tail {
        AFTER_LIVE_LINE => ERASE_LINE,
        AFTER_PARTIAL_LINE => b"\n",
        _ => &[],
    }
}

/// Writes `text` to stderr as a line of its own, from code that holds no [`Terminal`] (a signal's
/// notice): a progress bar left on the cursor's line is erased first (it comes back below with the
/// next progress), other text without its newline is ended first.
pub(crate) fn eprint_notice(text: &str) {
    let before = notice_prefix(STDERR_TAIL.load(Ordering::Relaxed));
    Terminal::new().eprint_after(before, &format!("{text}\n"));
}

/// stdout and stderr of this process, each written whole (one lock per write) and each dropped
/// quietly once the reader has gone.
#[derive(Debug, Default)]
pub struct Terminal {
    stdout_closed: AtomicBool,
    /// Whether anything was written to stdout (a `--json` command that failed before it wrote its
    /// document gets an error document instead).
    stdout_written: AtomicBool,
    stderr_closed: AtomicBool,
    /// The first failure to write stdout that was not its reader going away.
    stdout_failure: OnceLock<String>,
    /// Set once the command line is read (`--color`); no colour until then.
    style: OnceLock<Style>,
}

impl Terminal {
    /// A writer over this process's stdout and stderr.
    pub fn new() -> Terminal {
        Terminal::default()
    }

    /// A writer with `style` already chosen.
    pub fn with_style(style: Style) -> Terminal {
        let term = Terminal::default();
        term.set_style(style);
        term
    }

    /// Chooses colour for the rest of the invocation (the first choice stays).
    pub fn set_style(&self, style: Style) {
        let _ = self.style.set(style);
    }

    /// The colour choice.
    pub fn style(&self) -> Style {
        self.style.get().copied().unwrap_or_default()
    }

    /// `text` as `stream` shows it: with colour, agent-env's own colours kept and any left on reset at
    /// a line's end; without, every control character shown as an escape.
    fn shown<'a>(&self, stream: Stream, text: &'a str) -> std::borrow::Cow<'a, str> {
        for_terminal(text, self.style().colours(stream))
    }

    /// Writes `text` to stderr (no newline added).
    pub fn eprint(&self, text: &str) {
        self.eprint_after(&[], text);
    }

    /// Writes `control` (terminal control bytes agent-env itself chose, such as the progress bar's
    /// "back to the line's start, erase it"), then `text` as [`Terminal::eprint`] does, in one write.
    pub fn eprint_after(&self, control: &[u8], text: &str) {
        let text = redaction::redact(text);
        let text = self.shown(Stream::Stderr, &text);
        let mut bytes = Vec::with_capacity(control.len() + text.len());
        bytes.extend_from_slice(control);
        bytes.extend_from_slice(text.as_bytes());
        // A failing stderr has nowhere left to be told.
        let _ = write_bytes_to(&mut io::stderr().lock(), &self.stderr_closed, &bytes);
        note_stderr_tail(control, &text);
    }

    /// Writes `Error: <text>` to stderr.
    pub fn error(&self, text: impl std::fmt::Display) {
        self.eprintln(&format!("{} {text}", self.style().error_label()));
    }

    /// Writes `text` to stdout (no newline added).
    pub fn print(&self, text: &str) {
        self.print_verbatim(&self.shown(Stream::Stdout, &redaction::redact(text)));
    }

    /// Writes `text` to stdout exactly as given, secrets and all: for content the user asked to see
    /// (`store get URL` of their own object), never for a message.
    pub fn print_verbatim(&self, text: &str) {
        self.stdout_written.store(true, Ordering::Relaxed);
        if self.stdout_never_open() {
            return;
        }
        if let Some(e) = write_to(&mut io::stdout().lock(), &self.stdout_closed, text) {
            self.note_stdout_failure(&e);
        }
    }

    /// Keeps `e`, a write to stdout that failed, as [`Terminal::stdout_failure`], unless stdout is
    /// a terminal that hung up: a reader gone, as a closed pipe's is.
    fn note_stdout_failure(&self, e: &io::Error) {
        if !terminal_hung_up(libc::STDOUT_FILENO, e) {
            let _ = self.stdout_failure.set(e.to_string());
        }
    }

    /// Whether this process started without a stdout; if so, noted as a failure to write it: what
    /// the runtime put there is /dev/null, and what is written there would be lost without a word.
    fn stdout_never_open(&self) -> bool {
        if !STDOUT_CLOSED_AT_START.load(Ordering::Relaxed) {
            return false;
        }
        let never_open = io::Error::from_raw_os_error(libc::EBADF);
        let _ = self.stdout_failure.set(never_open.to_string());
        self.stdout_closed.store(true, Ordering::Relaxed);
        true
    }

    /// Stdout as a stream of bytes written as given, for content the user asked for that is too big
    /// to hold (`store get URL` of a large object): as [`Terminal::print_verbatim`], a reader that
    /// went away ends it quietly and any other failure is kept ([`Terminal::stdout_failure`]); a
    /// write that fails either way returns an error, so the copy stops there.
    pub fn stdout_stream(&self) -> StdoutStream<'_> {
        StdoutStream {
            term: self,
            stdout: io::stdout().lock(),
        }
    }

    /// Why stdout could not be written, when that was not its reader going away (a full disk, an I/O
    /// error): what the command printed is incomplete.
    pub fn stdout_failure(&self) -> Option<&str> {
        self.stdout_failure.get().map(String::as_str)
    }

    /// The exit code of a command that ended with `code`, once what it wrote to stdout is known: when
    /// stdout failed ([`Terminal::stdout_failure`]), that is said on a line of its own on stderr, and
    /// a command that ended well fails (1); otherwise `code`.
    pub fn exit_code_after_output(&self, code: i32) -> i32 {
        let Some(why) = self.stdout_failure() else {
            return code;
        };
        let said = format!(
            "{} could not write the output to stdout: {why}; what was written is incomplete (the command itself ended with exit code {code})\n",
            self.style().error_label()
        );
        self.eprint_after(notice_prefix(STDERR_TAIL.load(Ordering::Relaxed)), &said);
        match code {
            0 => 1,
            code => code,
        }
    }

    /// Whether anything was written to stdout so far.
    pub fn stdout_written(&self) -> bool {
        self.stdout_written.load(Ordering::Relaxed)
    }

    /// Writes `text` and a newline to stderr.
    pub fn eprintln(&self, text: &str) {
        let mut line = String::with_capacity(text.len() + 1);
        line.push_str(text);
        line.push('\n');
        let _ = write_to(
            &mut io::stderr().lock(),
            &self.stderr_closed,
            &self.shown(Stream::Stderr, &redaction::redact(&line)),
        );
        note_stderr_tail(&[], "\n");
    }

    /// Writes `Warning: <text>` to stderr.
    pub fn warn(&self, text: impl std::fmt::Display) {
        self.eprintln(&format!("{} {text}", self.style().warning_label()));
    }

    /// Whether the reader of stdout has gone.
    pub fn stdout_closed(&self) -> bool {
        self.stdout_closed.load(Ordering::Relaxed)
    }

    /// Takes on what `other`, a second writer over the same streams, learned about them: that
    /// stdout was written, closed or failed, and that stderr was closed.
    pub fn absorb(&self, other: &Terminal) {
        for (mine, theirs) in [
            (&self.stdout_written, &other.stdout_written),
            (&self.stdout_closed, &other.stdout_closed),
            (&self.stderr_closed, &other.stderr_closed),
        ] {
            if theirs.load(Ordering::Relaxed) {
                mine.store(true, Ordering::Relaxed);
            }
        }
        if let Some(why) = other.stdout_failure() {
            let _ = self.stdout_failure.set(why.to_string());
        }
    }
}

/// Stdout as [`Terminal::stdout_stream`] writes it.
pub struct StdoutStream<'a> {
    term: &'a Terminal,
    stdout: io::StdoutLock<'static>,
}

impl StdoutStream<'_> {
    /// What a write that found stdout closed returns: the reader went away, or stdout failed (said
    /// by the terminal), either way nothing more is written.
    fn closed() -> io::Error {
        io::ErrorKind::BrokenPipe.into()
    }

    /// Notes what `result` of a write says of stdout, as [`write_bytes_to`] does.
    fn noted<T>(&self, result: io::Result<T>) -> io::Result<T> {
        if let Err(e) = &result {
            if e.kind() != io::ErrorKind::Interrupted {
                self.term.stdout_closed.store(true, Ordering::Relaxed);
                if e.kind() != io::ErrorKind::BrokenPipe {
                    self.term.note_stdout_failure(e);
                }
            }
        }
        result
    }
}

impl Write for StdoutStream<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.term.stdout_written.store(true, Ordering::Relaxed);
        if self.term.stdout_never_open() || self.term.stdout_closed() {
            return Err(Self::closed());
        }
        let written = self.stdout.write(bytes);
        self.noted(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.term.stdout_closed() {
            return Err(Self::closed());
        }
        let flushed = self.stdout.flush();
        self.noted(flushed)
    }
}

impl Output for Terminal {
    fn line(&self, text: &str) {
        let mut line = String::with_capacity(text.len() + 1);
        line.push_str(text);
        line.push('\n');
        self.print(&line);
    }

    fn note(&self, text: &str) {
        self.eprintln(text);
    }

    fn prompt(&self, text: &str) {
        self.print(text);
    }
}

/// Writes and flushes `text` unless the stream is known to be closed; any write error marks it closed
/// (a terminal or pipe that failed once is not written to again). Returns the error when it was not
/// the reader going away (a broken pipe).
fn write_to(stream: &mut impl Write, closed: &AtomicBool, text: &str) -> Option<io::Error> {
    write_bytes_to(stream, closed, text.as_bytes())
}

fn write_bytes_to(stream: &mut impl Write, closed: &AtomicBool, bytes: &[u8]) -> Option<io::Error> {
    if closed.load(Ordering::Relaxed) {
        return None;
    }
    let e = stream
        .write_all(bytes)
        .and_then(|()| stream.flush())
        .err()?;
    closed.store(true, Ordering::Relaxed);
    (e.kind() != io::ErrorKind::BrokenPipe).then_some(e)
}

/// Whether `e`, a failed write to `fd`, came from a terminal that hung up: the kernel answers every
/// write to it, and every question about its settings, with EIO (a file or pipe is no terminal at
/// all: ENOTTY).
fn terminal_hung_up(fd: libc::c_int, e: &io::Error) -> bool {
    if e.raw_os_error() != Some(libc::EIO) {
        return false;
    }
    let mut settings = std::mem::MaybeUninit::<libc::termios>::uninit();
    // SAFETY: tcgetattr writes at most one termios into `settings`, which lives across the call;
    // its contents are never read.
    let asked = unsafe { libc::tcgetattr(fd, settings.as_mut_ptr()) };
    asked == -1 && io::Error::last_os_error().raw_os_error() == Some(libc::EIO)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A notice after a progress bar erases it; after a question waiting for its answer, it starts
    /// below it; after whole lines, it adds nothing.
    #[test]
    fn a_notice_starts_on_a_line_of_its_own() {
        let bar = tail_after(ERASE_LINE, "[tasks/t.json] nap [##--] 2/4").unwrap();
        assert_eq!(notice_prefix(bar), ERASE_LINE);
        let question = tail_after(&[], "Remove it? [y/N] ").unwrap();
        assert_eq!(notice_prefix(question), b"\n");
        for (control, text) in [(&[][..], "a line\n"), (ERASE_LINE, "")] {
            assert_eq!(notice_prefix(tail_after(control, text).unwrap()), b"");
        }
        // Nothing written leaves the cursor where it was.
        assert_eq!(tail_after(&[], ""), None);
    }

    /// A stream whose reader went away after `room` bytes.
    struct Closing {
        room: usize,
        written: Vec<u8>,
        writes: usize,
    }

    impl Write for Closing {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.writes += 1;
            if self.room == 0 {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            self.written.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_stream_is_written_up_to_the_close_then_left_alone() {
        let closed = AtomicBool::new(false);
        let mut stream = Closing {
            room: 3,
            written: Vec::new(),
            writes: 0,
        };
        assert!(
            write_to(&mut stream, &closed, "hello\n").is_none(),
            "a reader going away is no failure"
        );
        assert!(closed.load(Ordering::Relaxed));
        assert_eq!(stream.written, b"hel");
        let writes = stream.writes;
        let _ = write_to(&mut stream, &closed, "more\n");
        assert_eq!(stream.writes, writes, "nothing is tried after the close");
    }

    /// A stream on a full disk.
    struct Full;

    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from_raw_os_error(libc::ENOSPC))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_write_that_fails_for_another_reason_is_returned() {
        let closed = AtomicBool::new(false);
        let e = write_to(&mut Full, &closed, "x").expect("the failure");
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
        assert!(closed.load(Ordering::Relaxed));
    }
}
