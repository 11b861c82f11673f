//! The plugin's stderr: read on its own thread into a bounded tail, lines counted.
//!
//! A plugin may write any amount to stderr; the host keeps only the last [`STDERR_TAIL_BYTES`], so a
//! plugin that writes 10 MB neither blocks (the pipe is always drained) nor bloats memory.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;

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
}

/// The captured stderr of one child. Cheap to clone.
#[derive(Clone, Default)]
pub struct StderrTail {
    inner: Arc<Mutex<Tail>>,
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
            lock(&tail.inner).ended = true;
        }
        tail
    }

    fn drain<R: Read, F: Fn(&str)>(&self, mut stream: R, on_line: F) {
        let mut buf = vec![0u8; 64 * 1024];
        let mut lines = LineSplitter::default();
        loop {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    self.push(&buf[..n]);
                    lines.feed(&buf[..n], &on_line);
                }
            }
        }
        lines.finish(&on_line);
        lock(&self.inner).ended = true;
    }

    /// Appends bytes, dropping the oldest beyond the cap.
    pub fn push(&self, chunk: &[u8]) {
        let mut tail = lock(&self.inner);
        tail.total_bytes += chunk.len() as u64;
        tail.lines += chunk.iter().filter(|b| **b == b'\n').count() as u64;
        let keep = &chunk[chunk.len().saturating_sub(STDERR_TAIL_BYTES)..];
        let overflow = (tail.bytes.len() + keep.len()).saturating_sub(STDERR_TAIL_BYTES);
        tail.bytes.drain(..overflow);
        tail.bytes.extend(keep);
    }

    /// The kept bytes as text (lossy UTF-8).
    pub fn text(&self) -> String {
        let tail = lock(&self.inner);
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
        lock(&self.inner).lines
    }

    /// Bytes written in all.
    pub fn total_bytes(&self) -> u64 {
        lock(&self.inner).total_bytes
    }

    /// Whether the stream has ended (every writer closed it).
    pub fn ended(&self) -> bool {
        lock(&self.inner).ended
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
    fn a_huge_single_chunk_keeps_its_end() {
        let tail = StderrTail::default();
        let mut chunk = vec![b'a'; 200_000];
        chunk.extend_from_slice(b"\nend\n");
        tail.push(&chunk);
        assert_eq!(tail.text().len(), STDERR_TAIL_BYTES);
        assert_eq!(tail.last_lines(1), vec!["end".to_string()]);
    }
}
