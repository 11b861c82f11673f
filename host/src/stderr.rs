//! The plugin's stderr: read on its own thread into a bounded tail, lines counted.
//!
//! A plugin may write any amount to stderr; the host keeps only the last [`STDERR_TAIL_BYTES`], so a
//! plugin that writes 10 MB neither blocks (the pipe is always drained) nor bloats memory.
//!
//! Lines are read on a thread of their own, so one a plugin wrote just before it answered may be
//! handed over a moment after the answer. Whoever must hear every line written so far (a run about to
//! stop listening, a step whose plugin just answered) asks the reader to
//! [`catch up`](StderrTail::catch_up): it reads what the pipe holds at that moment and hands it over
//! before the call returns. When the pipe is empty and the reader is not handing lines over, a
//! catch-up returns at once, without waking the reader: a plugin that writes nothing costs nothing.

use std::collections::VecDeque;
use std::io::{PipeReader, PipeWriter, Read, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

/// How many bytes of stderr the host keeps.
pub const STDERR_TAIL_BYTES: usize = 64 * 1024;

/// How many lines of the tail a failure message quotes.
pub const MESSAGE_TAIL_LINES: usize = 8;

#[derive(Default)]
struct Tail {
    bytes: VecDeque<u8>,
    total_bytes: u64,
    lines: u64,
    ended: bool,
    /// Catch-ups asked for so far, and the last one the reader answered.
    asked: u64,
    caught_up: u64,
    /// A second descriptor of a pipe's read end (close-on-exec), only ever polled: a catch-up
    /// with nothing to read returns at once. Dropped when the reader ends, so that a writer then
    /// finds no reader, as it did before.
    probe: Option<PipeReader>,
}

#[derive(Default)]
struct Shared {
    tail: Mutex<Tail>,
    /// Told when the reader catches up or the stream ends.
    changed: Condvar,
    /// Wakes a pipe's reader to catch up; none for a stream of another kind.
    wake: Option<PipeWriter>,
    /// Set by the reader before it reads and cleared once it has handed over the lines of what it
    /// read: while set, bytes taken out of the pipe may not have reached the listener yet.
    reading: AtomicBool,
}

/// The captured stderr of one child. Cheap to clone.
#[derive(Clone, Default)]
pub struct StderrTail {
    inner: Arc<Shared>,
}

fn lock(m: &Mutex<Tail>) -> MutexGuard<'_, Tail> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl StderrTail {
    /// Starts a thread that drains `stream` into a new tail until end of file.
    pub fn capture<R: Read + Send + 'static>(stream: R, name: &str) -> StderrTail {
        StderrTail::capture_lines(stream, name, |_| {})
    }

    /// Like [`StderrTail::capture`], and hands each line (without its newline, lossy UTF-8) to
    /// `on_line` as it arrives; a last line with no newline is handed over at end of file.
    pub fn capture_lines<R, F>(stream: R, name: &str, on_line: F) -> StderrTail
    where
        R: Read + Send + 'static,
        F: Fn(&str) + Send + 'static,
    {
        let tail = StderrTail::default();
        let writer = tail.clone();
        let spawned = thread::Builder::new()
            .name(format!("{name}-stderr"))
            .spawn(move || writer.drain(stream, on_line));
        if spawned.is_err() {
            writer_gone(&tail);
        }
        tail
    }

    /// Like [`StderrTail::capture_lines`] for a pipe, whose reader can also be asked to
    /// [`catch up`](StderrTail::catch_up).
    pub fn capture_pipe_lines<F>(stream: PipeReader, name: &str, on_line: F) -> StderrTail
    where
        F: Fn(&str) + Send + 'static,
    {
        let Ok((wake_reader, wake_writer)) = std::io::pipe() else {
            return StderrTail::capture_lines(stream, name, on_line);
        };
        // A wake-up that finds the pipe full is not needed: the reader has one to read already.
        set_nonblocking(&wake_writer);
        let tail = StderrTail {
            inner: Arc::new(Shared {
                tail: Mutex::new(Tail {
                    probe: stream.try_clone().ok(),
                    ..Tail::default()
                }),
                wake: Some(wake_writer),
                ..Shared::default()
            }),
        };
        let writer = tail.clone();
        let spawned = thread::Builder::new()
            .name(format!("{name}-stderr"))
            .spawn(move || writer.drain_pipe(stream, wake_reader, on_line));
        if spawned.is_err() {
            writer_gone(&tail);
        }
        tail
    }

    /// Returns once every line written to the stream before this call is handed over, the stream
    /// has ended, or `within` has passed. Immediate for a stream that is not a pipe, and when the
    /// pipe is empty and the reader has handed over all it read.
    pub fn catch_up(&self, within: Duration) {
        let Some(wake) = &self.inner.wake else { return };
        if !self.pending() {
            return;
        }
        let asked = {
            let mut tail = lock(&self.inner.tail);
            if tail.ended {
                return;
            }
            tail.asked += 1;
            tail.asked
        };
        let _ = (&*wake).write(&[1]);
        let deadline = Instant::now() + within;
        let mut tail = lock(&self.inner.tail);
        while !tail.ended && tail.caught_up < asked {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            tail = match self.inner.changed.wait_timeout(tail, left) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// Whether bytes written before this call may not have reached the listener yet: the pipe holds
    /// some, or the reader is between taking some out and handing their lines over. (Every byte
    /// written before the call is in the pipe or was read; the reader marks itself reading before
    /// each read and clears the mark only once the lines read are handed over.)
    fn pending(&self) -> bool {
        let tail = lock(&self.inner.tail);
        if tail.ended {
            return false;
        }
        let Some(probe) = &tail.probe else {
            return true;
        };
        readable_now(probe) || self.inner.reading.load(Ordering::SeqCst)
    }

    fn drain<R: Read, F: Fn(&str)>(&self, mut stream: R, on_line: F) {
        let mut buf = vec![0u8; 64 * 1024];
        let mut lines = LineSplitter::default();
        while self.read_once(&mut stream, &mut buf, &mut lines, &on_line) {}
        lines.finish(&on_line);
        writer_gone(self);
    }

    /// Reads one chunk and hands its lines over; false at end of file or on an error.
    fn read_once<R: Read, F: Fn(&str)>(
        &self,
        stream: &mut R,
        buf: &mut [u8],
        lines: &mut LineSplitter,
        on_line: &F,
    ) -> bool {
        match stream.read(buf) {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.push(&buf[..n]);
                lines.feed(&buf[..n], on_line);
                true
            }
        }
    }

    /// [`drain`](Self::drain) for a pipe, waiting on the stream and on wake-ups to catch up at once.
    fn drain_pipe<F: Fn(&str)>(&self, mut stream: PipeReader, mut wake: PipeReader, on_line: F) {
        let mut buf = vec![0u8; 64 * 1024];
        let mut lines = LineSplitter::default();
        let reading = &self.inner.reading;
        while let Some((data, woken)) = wait_readable(&stream, &wake) {
            if woken {
                let _ = wake.read(&mut [0u8; 64]);
                // Every catch-up asked for up to now is answered by reading what the pipe holds now.
                let asked = lock(&self.inner.tail).asked;
                reading.store(true, Ordering::SeqCst);
                let mut open = true;
                while open && readable_now(&stream) {
                    open = self.read_once(&mut stream, &mut buf, &mut lines, &on_line);
                }
                reading.store(false, Ordering::SeqCst);
                lock(&self.inner.tail).caught_up = asked;
                self.inner.changed.notify_all();
                if !open {
                    break;
                }
            } else if data {
                reading.store(true, Ordering::SeqCst);
                let open = self.read_once(&mut stream, &mut buf, &mut lines, &on_line);
                reading.store(false, Ordering::SeqCst);
                if !open {
                    break;
                }
            }
        }
        lines.finish(&on_line);
        writer_gone(self);
    }

    /// Appends bytes, dropping the oldest beyond the cap.
    pub fn push(&self, chunk: &[u8]) {
        let mut tail = lock(&self.inner.tail);
        tail.total_bytes += chunk.len() as u64;
        tail.lines += chunk.iter().filter(|b| **b == b'\n').count() as u64;
        let keep = &chunk[chunk.len().saturating_sub(STDERR_TAIL_BYTES)..];
        let overflow = (tail.bytes.len() + keep.len()).saturating_sub(STDERR_TAIL_BYTES);
        tail.bytes.drain(..overflow);
        tail.bytes.extend(keep);
    }

    /// Adds `line`, one that did not come from the stream (a `$/log` line), as a whole line: before
    /// the line the stream has begun but not finished, if any, so that it never lands inside one.
    /// Whole lines stay in the order they arrived.
    pub fn push_whole_line(&self, line: &str) {
        let mut tail = lock(&self.inner.tail);
        let added = line.len() as u64 + 1;
        tail.total_bytes += added;
        tail.lines += 1 + line.bytes().filter(|b| *b == b'\n').count() as u64;
        let unfinished_from = tail
            .bytes
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |newline| newline + 1);
        let unfinished: Vec<u8> = tail.bytes.drain(unfinished_from..).collect();
        tail.bytes.extend(line.as_bytes());
        tail.bytes.push_back(b'\n');
        tail.bytes.extend(unfinished);
        let overflow = tail.bytes.len().saturating_sub(STDERR_TAIL_BYTES);
        tail.bytes.drain(..overflow);
    }

    /// The kept bytes as text (lossy UTF-8).
    pub fn text(&self) -> String {
        let tail = lock(&self.inner.tail);
        let (a, b) = tail.bytes.as_slices();
        let mut all = Vec::with_capacity(a.len() + b.len());
        all.extend_from_slice(a);
        all.extend_from_slice(b);
        String::from_utf8_lossy(&all).into_owned()
    }

    /// The last `n` non-empty lines of the kept text.
    pub fn last_lines(&self, n: usize) -> Vec<String> {
        let text = self.text();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(n)..]
            .iter()
            .map(|l| truncate_line(l, 300))
            .collect()
    }

    /// Lines seen (newlines counted over everything written, not just the kept tail).
    pub fn lines(&self) -> u64 {
        lock(&self.inner.tail).lines
    }

    /// Bytes written in all.
    pub fn total_bytes(&self) -> u64 {
        lock(&self.inner.tail).total_bytes
    }

    /// Whether the stream has ended (every writer closed it).
    pub fn ended(&self) -> bool {
        lock(&self.inner.tail).ended
    }
}

/// Marks the stream ended and wakes whoever waits for the reader.
fn writer_gone(tail: &StderrTail) {
    let mut state = lock(&tail.inner.tail);
    state.ended = true;
    state.probe = None;
    drop(state);
    tail.inner.changed.notify_all();
}

fn set_nonblocking(pipe: &PipeWriter) {
    let fd = pipe.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function's caller owns; no memory is passed.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
}

/// Waits until `stream` has bytes (or has ended) or `wake` was written to: (stream ready, woken);
/// `None` when waiting itself failed.
fn wait_readable(stream: &PipeReader, wake: &PipeReader) -> Option<(bool, bool)> {
    let mut fds = [pollfd(stream.as_raw_fd()), pollfd(wake.as_raw_fd())];
    loop {
        // SAFETY: `fds` is a live array of two pollfd structs, as the length says.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if n >= 0 {
            return Some((fds[0].revents != 0, fds[1].revents != 0));
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return None;
        }
    }
}

/// Whether a read of `stream` would not block now (bytes are there, or it has ended).
fn readable_now(stream: &PipeReader) -> bool {
    let mut fds = [pollfd(stream.as_raw_fd())];
    // SAFETY: `fds` is a live array of one pollfd struct.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), 1, 0) };
    n > 0 && fds[0].revents != 0
}

fn pollfd(fd: std::os::fd::RawFd) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}

/// Cuts a byte stream into lines; a line longer than [`STDERR_TAIL_BYTES`] is handed over in pieces
/// of that size, so a plugin that never writes a newline cannot grow it without bound.
#[derive(Default)]
struct LineSplitter {
    partial: Vec<u8>,
}

impl LineSplitter {
    fn feed(&mut self, chunk: &[u8], on_line: &impl Fn(&str)) {
        for piece in chunk.split_inclusive(|b| *b == b'\n') {
            match piece.strip_suffix(b"\n") {
                Some(end) => {
                    self.partial.extend_from_slice(end);
                    self.emit(on_line);
                }
                None => {
                    self.partial.extend_from_slice(piece);
                    if self.partial.len() >= STDERR_TAIL_BYTES {
                        self.emit(on_line);
                    }
                }
            }
        }
    }

    fn finish(&mut self, on_line: &impl Fn(&str)) {
        if !self.partial.is_empty() {
            self.emit(on_line);
        }
    }

    fn emit(&mut self, on_line: &impl Fn(&str)) {
        let line = String::from_utf8_lossy(&self.partial);
        on_line(line.strip_suffix('\r').unwrap_or(&line));
        self.partial.clear();
    }
}

/// How the program that hosts plugins masks secrets in text, set once at its start: a line is
/// masked before it is cut short, since a secret cut in two no longer matches its value.
static MASK: std::sync::OnceLock<fn(&str) -> String> = std::sync::OnceLock::new();

/// Sets how [`StderrTail::last_lines`] masks a line before cutting it (the first call wins).
pub fn mask_lines_with(mask: fn(&str) -> String) {
    let _ = MASK.set(mask);
}

fn truncate_line(line: &str, max: usize) -> String {
    let masked;
    let line = match MASK.get() {
        Some(mask) => {
            masked = mask(line);
            masked.as_str()
        }
        None => line,
    };
    if line.len() <= max {
        return line.to_string();
    }
    let mut end = max;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &line[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_masked_before_it_is_cut() {
        mask_lines_with(|l| l.replace("sk-livesecretvalue-123456", "***"));
        let line = format!(
            "{}settings={{\"api_key\": \"sk-livesecretvalue-123456\"}}",
            "x".repeat(262)
        );
        let cut = truncate_line(&line, 300);
        assert!(cut.contains("\"api_key\": \"***\"}"), "{cut}");
        assert!(!cut.contains("sk-live"), "{cut}");
    }

    #[test]
    fn a_catch_up_returns_once_every_line_written_before_it_is_handed_over() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let heard = seen.clone();
        // A slow listener: without the catch-up, the lines would arrive well after the writes.
        let tail = StderrTail::capture_pipe_lines(reader, "slow", move |line| {
            std::thread::sleep(Duration::from_millis(40));
            heard.lock().unwrap().push(line.to_string());
        });
        for n in 0..5 {
            writeln!(writer, "line {n}").unwrap();
        }
        tail.catch_up(Duration::from_secs(10));
        let heard_so_far = seen.lock().unwrap().clone();
        assert_eq!(heard_so_far.len(), 5, "{heard_so_far:?}");
        assert!(!tail.ended());
        drop(writer);
        tail.catch_up(Duration::from_secs(10));
        let deadline = Instant::now() + Duration::from_secs(10);
        while !tail.ended() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(tail.ended());
        // Once the stream has ended, a catch-up has nothing to wait for.
        let started = Instant::now();
        tail.catch_up(Duration::from_secs(10));
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_catch_up_with_nothing_to_read_does_not_wake_the_reader() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let heard = seen.clone();
        let tail = StderrTail::capture_pipe_lines(reader, "quiet", move |line| {
            heard.lock().unwrap().push(line.to_string());
        });
        let asked = || lock(&tail.inner.tail).asked;
        // Nothing written: nothing asked of the reader.
        tail.catch_up(Duration::from_secs(10));
        assert_eq!(asked(), 0);
        // A line written: the catch-up hands it over, asking the reader unless it was quicker.
        writeln!(writer, "one").unwrap();
        tail.catch_up(Duration::from_secs(10));
        assert_eq!(*seen.lock().unwrap(), ["one"]);
        let after_one = asked();
        assert!(after_one <= 1);
        // Handed over and the pipe empty again: nothing more asked.
        tail.catch_up(Duration::from_secs(10));
        assert_eq!(asked(), after_one);
    }

    #[test]
    fn a_catch_up_gives_up_after_its_time() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let (release, stuck) = std::sync::mpsc::channel::<()>();
        let stuck = Mutex::new(stuck);
        let tail = StderrTail::capture_pipe_lines(reader, "stuck", move |_| {
            let _ = stuck.lock().unwrap().recv();
        });
        writeln!(writer, "a line its listener never finishes hearing").unwrap();
        let started = Instant::now();
        tail.catch_up(Duration::from_millis(100));
        assert!(started.elapsed() >= Duration::from_millis(100));
        release.send(()).unwrap();
    }

    #[test]
    fn keeps_only_the_last_64_kib_and_counts_every_line() {
        let tail = StderrTail::default();
        let line = [b'x'; 99];
        for _ in 0..10_000 {
            tail.push(&line);
            tail.push(b"\n");
        }
        tail.push(b"last words\n");
        assert_eq!(tail.lines(), 10_001);
        assert_eq!(tail.total_bytes(), 1_000_011);
        assert!(tail.text().len() <= STDERR_TAIL_BYTES);
        assert_eq!(tail.last_lines(1), vec!["last words".to_string()]);
    }

    #[test]
    fn lines_are_handed_over_whole_across_chunks() {
        let seen = Mutex::new(Vec::new());
        let on_line = |l: &str| seen.lock().unwrap().push(l.to_string());
        let mut splitter = LineSplitter::default();
        splitter.feed(b"first li", &on_line);
        splitter.feed(b"ne\r\nsecond\n\nthi", &on_line);
        splitter.feed(b"rd", &on_line);
        splitter.finish(&on_line);
        assert_eq!(
            *seen.lock().unwrap(),
            ["first line", "second", "", "third"].map(String::from)
        );
    }

    #[test]
    fn a_line_added_between_halves_of_a_stream_line_lands_before_it() {
        let tail = StderrTail::default();
        tail.push(b"earlier\nfirst half ");
        tail.push_whole_line("[info] a log line");
        tail.push(b"second half\n");
        tail.push_whole_line("[warning] after");
        assert_eq!(
            tail.text(),
            "earlier\n[info] a log line\nfirst half second half\n[warning] after\n"
        );
        assert_eq!(tail.lines(), 4);
        // A stream whose kept bytes hold no newline at all: the added line goes first.
        let tail = StderrTail::default();
        tail.push(b"no newline yet");
        tail.push_whole_line("[error] logged");
        assert_eq!(tail.text(), "[error] logged\nno newline yet");
    }

    #[test]
    fn a_huge_single_chunk_keeps_its_end() {
        let tail = StderrTail::default();
        let mut chunk = vec![b'a'; 200_000];
        chunk.extend_from_slice(b"\nend\n");
        tail.push(&chunk);
        assert_eq!(tail.text().len(), STDERR_TAIL_BYTES);
        assert_eq!(tail.last_lines(1), vec!["end".to_string()]);
    }
}
