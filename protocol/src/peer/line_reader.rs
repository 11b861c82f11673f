//! The incoming stream split into lines: a size limit, deadlines, and partial lines kept for the next
//! reader.

use std::io::{self, Read};
use std::os::fd::RawFd;
use std::time::Instant;

use super::readiness::{wait_readable, Readiness};

/// Buffers up to this size are kept between messages (larger ones are freed after use).
pub(super) const KEEP_BUFFER_BYTES: usize = 32 * 1024 * 1024;
/// Size of each read from the stream: the whole of a widened (1 MiB) pipe, so a large message takes
/// few reads (the buffer's pages are only touched when used).
const READ_CHUNK: usize = 1024 * 1024;

/// What [`LineReader::next_line`] produced.
pub(super) enum LineRead {
    /// A complete line is in [`LineReader::line`].
    Line,
    /// A line over the maximum was discarded; its first bytes.
    TooLarge(Vec<u8>),
    TimedOut,
    /// The wake pipe fired: the connection was closed on this side.
    Woken,
    Eof,
    Failed(String),
}

/// Splits the incoming stream into lines, with a size limit and deadlines. Partial lines survive
/// a timed-out read for the next reader.
pub(super) struct LineReader {
    source: Box<dyn Read + Send>,
    fd: RawFd,
    max: usize,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    line: Vec<u8>,
    /// The first bytes of a line being discarded for its size.
    discarding: Option<Vec<u8>>,
    /// `line` holds a complete line not yet taken.
    complete: bool,
}

impl LineReader {
    pub(super) fn new(source: Box<dyn Read + Send>, fd: RawFd, max: usize) -> Self {
        LineReader {
            source,
            fd,
            max,
            buf: vec![0u8; READ_CHUNK].into_boxed_slice(),
            start: 0,
            end: 0,
            line: Vec::with_capacity(4096),
            discarding: None,
            complete: false,
        }
    }

    /// The next line. With no deadline and `block_without_poll`, it blocks in `read` directly (a
    /// syscall less per message) and only end of file ends the wait.
    pub(super) fn next_line(
        &mut self,
        wake: RawFd,
        deadline: Option<Instant>,
        block_without_poll: bool,
    ) -> LineRead {
        if self.complete {
            self.finish_line();
        }
        loop {
            if self.start < self.end {
                if let Some(done) = self.take_buffered() {
                    return done;
                }
            }
            if deadline.is_some() || !block_without_poll {
                match wait_readable(self.fd, wake, deadline) {
                    Readiness::Readable => {}
                    Readiness::TimedOut => return LineRead::TimedOut,
                    Readiness::Woken => return LineRead::Woken,
                    Readiness::Failed(e) => return LineRead::Failed(e),
                }
            }
            if !self.line.is_empty() && self.discarding.is_none() {
                // In the middle of a (long) line: read straight into it, a copy less per byte.
                match self.read_into_line() {
                    Ok(0) => {
                        self.complete = true;
                        return LineRead::Line;
                    }
                    Ok(n) => {
                        if let Some(done) = self.split_after_direct_read(n) {
                            return done;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return LineRead::Failed(e.to_string()),
                }
                continue;
            }
            match self.source.read(&mut self.buf) {
                Ok(0) => {
                    if let Some(head) = self.discarding.take() {
                        return LineRead::TooLarge(head);
                    }
                    if !self.line.is_empty() {
                        self.complete = true;
                        return LineRead::Line;
                    }
                    return LineRead::Eof;
                }
                Ok(n) => {
                    self.start = 0;
                    self.end = n;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return LineRead::Failed(e.to_string()),
            }
        }
    }

    /// Reads up to one chunk from the fd into the spare capacity of `line`.
    fn read_into_line(&mut self) -> io::Result<usize> {
        self.line.reserve(READ_CHUNK);
        let spare = self.line.spare_capacity_mut();
        let want = spare.len().min(READ_CHUNK);
        // SAFETY: read(2) writes at most `want` bytes into the spare capacity; exactly the `n` bytes it
        // reports are initialised before `set_len` exposes them.
        let n = unsafe { libc::read(self.fd, spare.as_mut_ptr().cast(), want) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = n as usize;
        // SAFETY: see above; `n <= want <= spare capacity`.
        unsafe { self.line.set_len(self.line.len() + n) };
        Ok(n)
    }

    /// After `n` bytes were read straight into `line`: ends the line at a newline among them (the
    /// bytes after it go back to the buffer), or starts discarding a line that grew too large.
    fn split_after_direct_read(&mut self, n: usize) -> Option<LineRead> {
        let fresh = self.line.len() - n;
        let newline = memchr::memchr(b'\n', &self.line[fresh..]).map(|i| fresh + i);
        if let Some(at) = newline {
            let tail = self.line.len() - at - 1;
            self.buf[..tail].copy_from_slice(&self.line[at + 1..]);
            self.start = 0;
            self.end = tail;
            self.line.truncate(at);
        }
        if self.line.len() > self.max {
            let mut head = std::mem::replace(&mut self.line, Vec::with_capacity(4096));
            head.truncate(4096);
            if newline.is_some() {
                return Some(LineRead::TooLarge(head));
            }
            self.discarding = Some(head);
            return None;
        }
        if newline.is_some() {
            self.complete = true;
            return Some(LineRead::Line);
        }
        None
    }

    /// Consumes buffered bytes; returns a finished line, if the buffer held its end.
    fn take_buffered(&mut self) -> Option<LineRead> {
        let chunk = &self.buf[self.start..self.end];
        let (part, complete) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (&chunk[..i], true),
            None => (chunk, false),
        };
        let used = part.len() + usize::from(complete);
        match &mut self.discarding {
            Some(_) => {}
            None if self.line.len() + part.len() > self.max => {
                let mut head = std::mem::take(&mut self.line);
                head.extend_from_slice(&part[..part.len().min(4096)]);
                head.truncate(4096);
                self.discarding = Some(head);
                self.line = Vec::with_capacity(4096);
            }
            None => self.line.extend_from_slice(part),
        }
        self.start += used;
        if !complete {
            return None;
        }
        if let Some(head) = self.discarding.take() {
            return Some(LineRead::TooLarge(head));
        }
        self.complete = true;
        Some(LineRead::Line)
    }

    /// How many bytes of a line not yet ended (no newline after them) were read: what waits for
    /// its newline.
    pub(super) fn unended(&self) -> usize {
        if self.complete || self.discarding.is_some() {
            return 0;
        }
        self.line.len()
    }

    /// The complete line, without its newline (and `\r`).
    pub(super) fn line(&self) -> &[u8] {
        match self.line.last() {
            Some(b'\r') => &self.line[..self.line.len() - 1],
            _ => &self.line,
        }
    }

    /// Forgets the complete line, keeping the buffer unless it grew huge.
    pub(super) fn finish_line(&mut self) {
        self.complete = false;
        if self.line.capacity() > KEEP_BUFFER_BYTES {
            self.line = Vec::with_capacity(4096);
        } else {
            self.line.clear();
        }
    }
}
