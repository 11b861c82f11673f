//! A small bidirectional JSON-RPC 2.0 peer over a pair of byte streams, one message per line.
//!
//! Both the host (talking to a child's stdin/stdout) and the plugin SDKs (talking to their own) use it.
//! Either side may call the other at any time, including while one of its own calls is in flight.
//!
//! **Who reads.** Whoever needs the next message reads it, one thread at a time (the *reading role*):
//! - [`ReaderMode::Dedicated`] (a server, the SDKs): pool threads always want messages. A pool thread
//!   that reads a request gives up the reading role (another pool thread takes it, so answers to nested
//!   calls and `$/cancelRequest` still arrive) and runs the request itself: no hand-off to a worker.
//! - [`ReaderMode::Callers`] (the host): a caller waiting for its answer reads the stream itself, so the
//!   answer wakes the caller directly; requests the other side sends during the call run on the caller's
//!   thread. Nothing reads while no call is in flight (messages wait in the pipe).
//!
//! So a round trip costs two thread wake-ups (one per side), the minimum over pipes.
//!
//! Why not jsonrpsee or tokio: jsonrpsee's client cannot answer a request the child sends back and dies
//! on the first non-JSON stdout line, and both answer later than this peer over the same pipes:
//! `cargo run --release -p agent-env-bench -- runtimes` times all three with the same echo calls (on a
//! 2-core VM, p50 44 µs here against 133 µs for a tokio line loop and 102 µs for jsonrpsee at 64 B).

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::codes::ErrorKind;
use crate::message::{DecodeError, Id, Message, RpcError};
use crate::methods::{CANCEL_REQUEST, PROGRESS};
use crate::version::MAX_MESSAGE_BYTES;

/// How many bytes of a noise line are kept.
pub const NOISE_SAMPLE_BYTES: usize = 200;
/// How many noise lines are kept as samples (all are counted).
pub const NOISE_SAMPLES_KEPT: usize = 5;
/// Buffers up to this size are kept between messages (larger ones are freed after use).
const KEEP_BUFFER_BYTES: usize = 32 * 1024 * 1024;
/// Size of each read from the stream: the whole of a widened (1 MiB) pipe, so a large message takes
/// few reads (the buffer's pages are only touched when used).
const READ_CHUNK: usize = 1024 * 1024;

/// Which threads read the incoming stream (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReaderMode {
    /// A pool thread always reads; requests run on the thread that read them.
    #[default]
    Dedicated,
    /// Only callers read, while they wait for their answers.
    Callers,
}

/// Settings of one peer.
#[derive(Debug, Clone)]
pub struct PeerConfig {
    /// Used to name threads, e.g. the plugin's package.
    pub name: String,
    /// The longest line read or written, newline excluded.
    pub max_message_bytes: usize,
    /// Who reads the incoming stream.
    pub mode: ReaderMode,
}

impl Default for PeerConfig {
    fn default() -> Self {
        PeerConfig {
            name: "peer".into(),
            max_message_bytes: MAX_MESSAGE_BYTES,
            mode: ReaderMode::Dedicated,
        }
    }
}

/// What the other side can ask of this one.
pub trait Handler: Send + Sync + 'static {
    /// Answers one request. It may call back through `ctx.peer()`.
    fn request(&self, ctx: &RequestContext, method: &str, params: Value)
        -> Result<Value, RpcError>;

    /// Receives a notification other than `$/cancelRequest` (which the peer handles itself).
    fn notification(&self, _method: &str, _params: Value) {}

    /// Called once when the connection ends (end of the incoming stream, or [`Peer::abort`]).
    fn closed(&self, _reason: &CloseReason) {}
}

/// A handler that answers every request with `method-not-found`.
pub struct NoHandler;

impl Handler for NoHandler {
    fn request(
        &self,
        _ctx: &RequestContext,
        method: &str,
        _params: Value,
    ) -> Result<Value, RpcError> {
        Err(RpcError::new(
            ErrorKind::MethodNotFound,
            format!("no method '{method}' here"),
        ))
    }
}

/// The context of one incoming request.
pub struct RequestContext {
    peer: Peer,
    id: Id,
    cancelled: Arc<AtomicBool>,
}

impl RequestContext {
    /// The peer, to call the other side while this request is handled.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// The connection the request came on, to call back over.
    pub fn id(&self) -> &Id {
        &self.id
    }

    /// True once the other side sent `$/cancelRequest` for this request.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// Sends a `$/progress` notification about this request.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let _ = self.peer.notify(
            PROGRESS,
            json!({"id": self.id, "progress": progress, "total": total, "message": message}),
        );
    }
}

/// Why a call did not return a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    /// The other side answered with an error.
    #[error("{0}")]
    Rpc(RpcError),
    /// No answer in time; `$/cancelRequest` was sent.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The connection ended before the answer came.
    #[error("the connection closed: {0}")]
    Closed(CloseReason),
    /// The message would exceed the maximum message size, so it was not sent.
    #[error("the message is {size} bytes, over the {max}-byte maximum message size")]
    TooLarge {
        /// The encoded message's size in bytes.
        size: usize,
        /// The maximum, in bytes.
        max: usize,
    },
}

impl CallError {
    /// The kind the failure maps to on the wire, if any.
    pub fn kind(&self) -> Option<ErrorKind> {
        match self {
            CallError::Rpc(e) => e.kind(),
            CallError::Timeout(_) => Some(ErrorKind::Cancelled),
            CallError::Closed(_) => None,
            CallError::TooLarge { .. } => Some(ErrorKind::MessageTooLarge),
        }
    }
}

/// How the incoming stream ended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CloseReason {
    /// The other side closed its end.
    #[error("end of stream")]
    Eof,
    /// Reading failed.
    #[error("read failed: {0}")]
    ReadFailed(String),
    /// Writing failed.
    #[error("write failed: {0}")]
    WriteFailed(String),
    /// This side closed the connection.
    #[error("closed by this side")]
    Local,
    /// Closed on purpose by this side's owner, e.g. the host saw the child exit while a grandchild
    /// still holds the stream open.
    #[error("{0}")]
    Aborted(String),
}

/// Counts of what arrived that was not a message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NoiseStats {
    /// Lines that were not JSON-RPC messages.
    pub lines: u64,
    /// The first bytes of the first few of them.
    pub samples: Vec<String>,
    /// Lines over the maximum message size (discarded; counted in `lines` too).
    pub too_large: u64,
}

type Reply = Result<Value, CallError>;

struct State {
    /// Calls of this side waiting for answers; the slot fills when the answer arrives.
    pending: HashMap<Id, Option<Reply>>,
    incoming: HashMap<Id, Arc<AtomicBool>>,
    closed: Option<CloseReason>,
    noise: NoiseStats,
    /// Some thread holds the reading role.
    reading: bool,
    /// Pool threads waiting for the reading role (dedicated mode).
    idle_pool: usize,
    /// Threads waiting on `changed` (so a notify without waiters is skipped: it is a syscall).
    waiters: usize,
}

struct Writer {
    out: Box<dyn Write + Send>,
    scratch: Vec<u8>,
}

struct Inner {
    config: PeerConfig,
    writer: Mutex<Option<Writer>>,
    reader: Mutex<LineReader>,
    state: Mutex<State>,
    changed: Condvar,
    next_id: AtomicI64,
    handler: Arc<dyn Handler>,
    /// Written once on close, to wake a reader blocked in `poll`.
    wake: (RawFd, RawFd),
}

impl Drop for Inner {
    fn drop(&mut self) {
        // SAFETY: the wake pipe's fds belong to this peer alone.
        unsafe {
            libc::close(self.wake.0);
            libc::close(self.wake.1);
        }
    }
}

/// A request read from the stream, to run.
struct Job {
    id: Id,
    method: String,
    params: Value,
    cancelled: Arc<AtomicBool>,
}

/// What one read step produced.
enum Step {
    Request(Job),
    Routed,
    TimedOut,
    Closed,
}

/// One end of a JSON-RPC connection. Cheap to clone; all clones share the connection.
#[derive(Clone)]
pub struct Peer {
    inner: Arc<Inner>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn wake_pipe() -> (RawFd, RawFd) {
    let mut fds = [-1; 2];
    // SAFETY: pipe2 fills the two-element array.
    let r = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) };
    if r == 0 {
        (fds[0], fds[1])
    } else {
        (-1, -1)
    }
}

impl Peer {
    /// Starts a peer reading `reader` and writing `writer`.
    pub fn start<R, W>(reader: R, writer: W, handler: Arc<dyn Handler>, config: PeerConfig) -> Peer
    where
        R: Read + AsRawFd + Send + 'static,
        W: Write + Send + 'static,
    {
        let fd = reader.as_raw_fd();
        let mode = config.mode;
        let peer = Peer {
            inner: Arc::new(Inner {
                reader: Mutex::new(LineReader::new(
                    Box::new(reader),
                    fd,
                    config.max_message_bytes,
                )),
                config,
                writer: Mutex::new(Some(Writer {
                    out: Box::new(writer),
                    scratch: Vec::with_capacity(4096),
                })),
                state: Mutex::new(State {
                    pending: HashMap::new(),
                    incoming: HashMap::new(),
                    closed: None,
                    noise: NoiseStats::default(),
                    reading: false,
                    idle_pool: 0,
                    waiters: 0,
                }),
                changed: Condvar::new(),
                next_id: AtomicI64::new(1),
                handler,
                wake: wake_pipe(),
            }),
        };
        if mode == ReaderMode::Dedicated {
            peer.spawn_pool_thread();
        }
        peer
    }

    /// Calls `method` on the other side and waits for its answer, at most `timeout` when given.
    pub fn call(
        &self,
        method: &str,
        params: Value,
        timeout: Option<Duration>,
    ) -> Result<Value, CallError> {
        self.call_noting_id(method, params, timeout, |_| {})
    }

    /// [`Peer::call`], telling `before_send` the request's id before the request goes out, so the
    /// caller can tell the other side's calls back for this request (they name it) from others.
    pub fn call_noting_id(
        &self,
        method: &str,
        params: Value,
        timeout: Option<Duration>,
        before_send: impl FnOnce(&Id),
    ) -> Result<Value, CallError> {
        let id = Id::Number(self.inner.next_id.fetch_add(1, Ordering::Relaxed));
        before_send(&id);
        let may_read = self.inner.config.mode == ReaderMode::Callers;
        {
            let mut state = lock(&self.inner.state);
            if let Some(reason) = state.closed.clone() {
                drop(state);
                if may_read {
                    self.drain_if_free();
                }
                return Err(CallError::Closed(reason));
            }
            state.pending.insert(id.clone(), None);
        }
        let msg = Message::request(id.clone(), method, params);
        if let Err(e) = self.send(&msg) {
            lock(&self.inner.state).pending.remove(&id);
            if may_read && matches!(e, CallError::Closed(_)) {
                // The other side is gone; keep what it wrote before it went (noise, a last word).
                self.drain_if_free();
            }
            return Err(e);
        }
        drop(msg);
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut drained = false;
        let mut state = lock(&self.inner.state);
        loop {
            if let Some(Some(_)) = state.pending.get(&id) {
                if let Some(Some(reply)) = state.pending.remove(&id) {
                    return reply;
                }
            }
            if let Some(reason) = state.closed.clone() {
                if may_read && !drained && !state.reading {
                    // Closed by an abort (the child exited): what it wrote before it ended may still
                    // sit in the pipe, perhaps our answer. Take it in, then look again.
                    drained = true;
                    state.reading = true;
                    drop(state);
                    self.drain_available();
                    self.release_reading();
                    state = lock(&self.inner.state);
                    continue;
                }
                state.pending.remove(&id);
                return Err(CallError::Closed(reason));
            }
            let now = Instant::now();
            if let Some(deadline) = deadline {
                if now >= deadline {
                    state.pending.remove(&id);
                    drop(state);
                    let _ = self.notify(CANCEL_REQUEST, json!({ "id": id }));
                    return Err(CallError::Timeout(timeout.unwrap_or_default()));
                }
            }
            if may_read && !state.reading {
                state.reading = true;
                drop(state);
                let step = self.read_step(deadline);
                self.release_reading();
                if let Step::Request(job) = step {
                    self.run_job(job);
                }
                state = lock(&self.inner.state);
                continue;
            }
            state.waiters += 1;
            state = match deadline {
                Some(deadline) => {
                    self.inner
                        .changed
                        .wait_timeout(state, deadline.saturating_duration_since(now))
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
                None => self
                    .inner
                    .changed
                    .wait(state)
                    .unwrap_or_else(|p| p.into_inner()),
            };
            state.waiters -= 1;
        }
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) -> Result<(), CallError> {
        self.send(&Message::notification(method, params))
    }

    /// Stops writing: the other side sees end of file on its input. Calls in flight still get answers.
    pub fn close_output(&self) {
        if let Some(mut w) = lock(&self.inner.writer).take() {
            let _ = w.out.flush();
        }
    }

    /// Treats the connection as ended now, whether or not the incoming stream has: every call in flight
    /// fails with `CallError::Closed(reason)` and new calls are refused.
    pub fn abort(&self, reason: CloseReason) {
        self.mark_closed(reason);
    }

    /// Why the connection ended, once it has.
    pub fn close_reason(&self) -> Option<CloseReason> {
        lock(&self.inner.state).closed.clone()
    }

    /// Whether the connection has closed.
    pub fn is_closed(&self) -> bool {
        self.close_reason().is_some()
    }

    /// Blocks until the connection ends, or `timeout` passes. Returns whether it ended. (In
    /// [`ReaderMode::Callers`] only a call reads, so this waits for a close seen by a call or an abort.)
    pub fn wait_closed(&self, timeout: Option<Duration>) -> bool {
        let mut state = lock(&self.inner.state);
        state.waiters += 1;
        let mut state = match timeout {
            None => self
                .inner
                .changed
                .wait_while(state, |s| s.closed.is_none())
                .unwrap_or_else(|p| p.into_inner()),
            Some(t) => {
                self.inner
                    .changed
                    .wait_timeout_while(state, t, |s| s.closed.is_none())
                    .unwrap_or_else(|p| p.into_inner())
                    .0
            }
        };
        state.waiters -= 1;
        state.closed.is_some()
    }

    /// What arrived so far that was not a message.
    pub fn noise(&self) -> NoiseStats {
        lock(&self.inner.state).noise.clone()
    }

    fn send(&self, msg: &Message) -> Result<(), CallError> {
        let max = self.inner.config.max_message_bytes;
        let mut guard = lock(&self.inner.writer);
        let Some(w) = guard.as_mut() else {
            return Err(CallError::Closed(CloseReason::Local));
        };
        w.scratch.clear();
        msg.encode_into(&mut w.scratch);
        let size = w.scratch.len() - 1;
        let result = if size > max {
            Err(CallError::TooLarge { size, max })
        } else {
            w.out
                .write_all(&w.scratch)
                .and_then(|_| w.out.flush())
                .map_err(|e| CallError::Closed(CloseReason::WriteFailed(e.to_string())))
        };
        if w.scratch.capacity() > KEEP_BUFFER_BYTES {
            w.scratch = Vec::with_capacity(4096);
        }
        if matches!(result, Err(CallError::Closed(_))) {
            *guard = None;
        }
        result
    }

    fn spawn_pool_thread(&self) {
        let peer = self.clone();
        let name = format!("{}-rpc", self.inner.config.name);
        let spawned = thread::Builder::new()
            .name(name)
            .spawn(move || peer.pool_loop());
        if let Err(e) = spawned {
            self.mark_closed(CloseReason::ReadFailed(format!(
                "cannot start a reader thread: {e}"
            )));
        }
    }

    /// A pool thread: take the reading role, read, run what was read; until the connection ends.
    fn pool_loop(&self) {
        loop {
            {
                let mut state = lock(&self.inner.state);
                loop {
                    if state.closed.is_some() {
                        return;
                    }
                    if !state.reading {
                        state.reading = true;
                        break;
                    }
                    state.idle_pool += 1;
                    state.waiters += 1;
                    state = self
                        .inner
                        .changed
                        .wait(state)
                        .unwrap_or_else(|p| p.into_inner());
                    state.waiters -= 1;
                    state.idle_pool -= 1;
                }
            }
            let step = self.read_step(None);
            let spare_needed = self.release_reading();
            match step {
                Step::Request(job) => {
                    if spare_needed {
                        // Someone must keep reading while this thread runs the request.
                        self.spawn_pool_thread();
                    }
                    self.run_job(job);
                }
                Step::Closed => return,
                Step::Routed | Step::TimedOut => {}
            }
        }
    }

    /// Takes the reading role if nobody holds it and reads what is already in the stream.
    fn drain_if_free(&self) {
        {
            let mut state = lock(&self.inner.state);
            if state.reading {
                return;
            }
            state.reading = true;
        }
        self.drain_available();
        self.release_reading();
    }

    /// Reads what is already in the stream without waiting (the caller holds the reading role).
    fn drain_available(&self) {
        const MAX_LINES: usize = 10_000;
        for _ in 0..MAX_LINES {
            match self.read_step(Some(Instant::now())) {
                Step::Routed => {}
                // Nobody is left to answer it.
                Step::Request(_) => {}
                Step::TimedOut | Step::Closed => return,
            }
        }
    }

    /// Gives up the reading role; returns whether no pool thread is waiting to take it.
    fn release_reading(&self) -> bool {
        let mut state = lock(&self.inner.state);
        state.reading = false;
        let none_waiting = state.idle_pool == 0 && state.closed.is_none();
        let wake = state.waiters > 0;
        drop(state);
        if wake {
            self.inner.changed.notify_all();
        }
        none_waiting
    }

    /// Reads one message (the caller holds the reading role) and routes it; a request is returned to
    /// run.
    fn read_step(&self, deadline: Option<Instant>) -> Step {
        let mut reader = lock(&self.inner.reader);
        loop {
            // Pool threads (dedicated mode) wait for data only; callers need deadlines and aborts.
            let pool = self.inner.config.mode == ReaderMode::Dedicated;
            match reader.next_line(self.inner.wake.0, deadline, pool) {
                LineRead::Line => {
                    let line = reader.line();
                    if line.iter().all(u8::is_ascii_whitespace) {
                        reader.finish_line();
                        continue;
                    }
                    let step = match Message::decode(line) {
                        Ok(msg) => self.route(msg),
                        Err(DecodeError::NotJson(_)) | Err(DecodeError::NotJsonRpc(_)) => {
                            self.record_noise(line, false);
                            Step::Routed
                        }
                    };
                    reader.finish_line();
                    return step;
                }
                LineRead::TooLarge(head) => {
                    drop(reader);
                    self.too_large(&head);
                    return Step::Routed;
                }
                LineRead::TimedOut => return Step::TimedOut,
                LineRead::Woken => return Step::Closed,
                LineRead::Eof => {
                    drop(reader);
                    self.mark_closed(CloseReason::Eof);
                    return Step::Closed;
                }
                LineRead::Failed(e) => {
                    drop(reader);
                    self.mark_closed(CloseReason::ReadFailed(e));
                    return Step::Closed;
                }
            }
        }
    }

    fn route(&self, msg: Message) -> Step {
        match msg {
            Message::Response { id, result } => {
                let mut state = lock(&self.inner.state);
                if let Some(slot) = state.pending.get_mut(&id) {
                    *slot = Some(result.map_err(CallError::Rpc));
                    let wake = state.waiters > 0;
                    drop(state);
                    if wake {
                        self.inner.changed.notify_all();
                    }
                }
                // A late answer to a call that timed out is dropped.
                Step::Routed
            }
            Message::Notification { method, params } => {
                if method == CANCEL_REQUEST {
                    if let Some(id) = params
                        .get("id")
                        .cloned()
                        .and_then(|v| serde_json::from_value::<Id>(v).ok())
                    {
                        if let Some(flag) = lock(&self.inner.state).incoming.get(&id) {
                            flag.store(true, Ordering::Relaxed);
                        }
                    }
                } else {
                    self.inner.handler.notification(&method, params);
                }
                Step::Routed
            }
            Message::Request { id, method, params } => {
                let cancelled = Arc::new(AtomicBool::new(false));
                lock(&self.inner.state)
                    .incoming
                    .insert(id.clone(), cancelled.clone());
                Step::Request(Job {
                    id,
                    method,
                    params,
                    cancelled,
                })
            }
        }
    }

    fn run_job(&self, job: Job) {
        let ctx = RequestContext {
            peer: self.clone(),
            id: job.id.clone(),
            cancelled: job.cancelled,
        };
        let result = self.inner.handler.request(&ctx, &job.method, job.params);
        lock(&self.inner.state).incoming.remove(&job.id);
        let reply = Message::Response {
            id: job.id.clone(),
            result,
        };
        if let Err(CallError::TooLarge { size, max }) = self.send(&reply) {
            let _ = self.send(&Message::Response {
                id: job.id,
                result: Err(RpcError::new(
                    ErrorKind::MessageTooLarge,
                    format!("the answer is {size} bytes, over the {max}-byte maximum message size; pass large data by file path"),
                )),
            });
        }
    }

    fn too_large(&self, head: &[u8]) {
        self.record_noise(head, true);
        let max = self.inner.config.max_message_bytes;
        let Some(id) = sniff_id(head) else { return };
        let message = format!("a message over the {max}-byte maximum message size was discarded; pass large data by file path");
        if sniff_has_method(head) {
            let _ = self.send(&Message::Response {
                id,
                result: Err(RpcError::new(ErrorKind::MessageTooLarge, message)),
            });
            return;
        }
        let mut state = lock(&self.inner.state);
        if let Some(slot) = state.pending.get_mut(&id) {
            *slot = Some(Err(CallError::Rpc(RpcError::new(
                ErrorKind::MessageTooLarge,
                message,
            ))));
            drop(state);
            self.inner.changed.notify_all();
        }
    }

    fn record_noise(&self, line: &[u8], too_large: bool) {
        let mut state = lock(&self.inner.state);
        state.noise.lines += 1;
        if too_large {
            state.noise.too_large += 1;
        }
        if state.noise.samples.len() < NOISE_SAMPLES_KEPT {
            state.noise.samples.push(sample_of(line));
        }
    }

    fn mark_closed(&self, reason: CloseReason) {
        {
            let mut state = lock(&self.inner.state);
            if state.closed.is_some() {
                return;
            }
            state.closed = Some(reason.clone());
        }
        // Wake a reader blocked in poll; callers and idle pool threads see `closed`.
        // SAFETY: writing one byte to our own non-blocking wake pipe.
        unsafe {
            libc::write(self.inner.wake.1, [1u8].as_ptr().cast(), 1);
        }
        self.inner.changed.notify_all();
        self.inner.handler.closed(&reason);
    }
}

/// What [`LineReader::next_line`] produced.
enum LineRead {
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
struct LineReader {
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
    fn new(source: Box<dyn Read + Send>, fd: RawFd, max: usize) -> Self {
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
    fn next_line(
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

    /// The complete line, without its newline (and `\r`).
    fn line(&self) -> &[u8] {
        match self.line.last() {
            Some(b'\r') => &self.line[..self.line.len() - 1],
            _ => &self.line,
        }
    }

    /// Forgets the complete line, keeping the buffer unless it grew huge.
    fn finish_line(&mut self) {
        self.complete = false;
        if self.line.capacity() > KEEP_BUFFER_BYTES {
            self.line = Vec::with_capacity(4096);
        } else {
            self.line.clear();
        }
    }
}

enum Readiness {
    Readable,
    TimedOut,
    Woken,
    Failed(String),
}

/// Waits until `fd` is readable, `wake` fires, or `deadline` passes. Data already waiting wins over
/// the wake pipe, so what was written before a close is still read; a passed deadline still looks once.
fn wait_readable(fd: RawFd, wake: RawFd, deadline: Option<Instant>) -> Readiness {
    loop {
        let timeout_ms = match deadline {
            None => -1,
            Some(d) => d
                .saturating_duration_since(Instant::now())
                .as_micros()
                .div_ceil(1000)
                .min(i32::MAX as u128) as i32,
        };
        let mut fds = [
            libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: wake,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: poll on a live two-element array.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout_ms) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Readiness::Failed(e.to_string());
        }
        if fds[0].revents != 0 {
            // Readable, or hung up / in error: the read says which.
            return Readiness::Readable;
        }
        if fds[1].revents != 0 {
            return Readiness::Woken;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Readiness::TimedOut;
        }
    }
}

/// The first bytes of a line, as text.
pub fn sample_of(line: &[u8]) -> String {
    let mut end = line.len().min(NOISE_SAMPLE_BYTES);
    while end > 0 && std::str::from_utf8(&line[..end]).is_err() && line.len() - end < 4 {
        end -= 1;
    }
    String::from_utf8_lossy(&line[..end]).into_owned()
}

/// Finds `"id":<number or string>` near the start of a (possibly truncated) message.
fn sniff_id(head: &[u8]) -> Option<Id> {
    let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
    let at = text.find("\"id\"")? + 4;
    let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
    if let Some(s) = rest.strip_prefix('"') {
        return Some(Id::Text(s[..s.find('"')?].to_string()));
    }
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits.parse().ok().map(Id::Number)
}

fn sniff_has_method(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
    text.contains("\"method\"")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{PipeReader, PipeWriter};

    struct Echo;

    impl Handler for Echo {
        fn request(
            &self,
            ctx: &RequestContext,
            method: &str,
            params: Value,
        ) -> Result<Value, RpcError> {
            match method {
                "echo" => Ok(params),
                "ask_back" => ctx
                    .peer()
                    .call(
                        "echo",
                        json!({"from": "inside"}),
                        Some(Duration::from_secs(5)),
                    )
                    .map_err(|e| RpcError::new(ErrorKind::InternalError, e.to_string())),
                "sleep" => {
                    for _ in 0..200 {
                        if ctx.is_cancelled() {
                            return Err(RpcError::new(ErrorKind::Cancelled, "cancelled"));
                        }
                        thread::sleep(Duration::from_millis(5));
                    }
                    Ok(Value::Null)
                }
                _ => Err(RpcError::new(ErrorKind::MethodNotFound, method)),
            }
        }
    }

    fn pair(config: PeerConfig) -> (Peer, Peer) {
        let (a_read, b_write): (PipeReader, PipeWriter) = std::io::pipe().unwrap();
        let (b_read, a_write) = std::io::pipe().unwrap();
        let a = Peer::start(a_read, a_write, Arc::new(Echo), config.clone());
        let b = Peer::start(b_read, b_write, Arc::new(Echo), config);
        (a, b)
    }

    #[test]
    fn calls_go_both_ways_and_nest() {
        let (a, b) = pair(PeerConfig::default());
        let t = Some(Duration::from_secs(5));
        assert_eq!(a.call("echo", json!({"x": 1}), t).unwrap(), json!({"x": 1}));
        assert_eq!(b.call("echo", json!({"y": 2}), t).unwrap(), json!({"y": 2}));
        assert_eq!(
            a.call("ask_back", json!({}), t).unwrap(),
            json!({"from": "inside"})
        );
        let err = a.call("nope", json!({}), t).unwrap_err();
        assert_eq!(err.kind(), Some(ErrorKind::MethodNotFound));
    }

    #[test]
    fn a_caller_reads_its_own_answer_and_runs_requests_sent_during_its_call() {
        let (a_read, b_write): (PipeReader, PipeWriter) = std::io::pipe().unwrap();
        let (b_read, a_write) = std::io::pipe().unwrap();
        let callers = PeerConfig {
            mode: ReaderMode::Callers,
            ..PeerConfig::default()
        };
        let a = Peer::start(a_read, a_write, Arc::new(Echo), callers);
        let _b = Peer::start(b_read, b_write, Arc::new(Echo), PeerConfig::default());
        let t = Some(Duration::from_secs(5));
        // `ask_back` makes b call a's `echo` while a's call is in flight: a's caller thread runs it.
        assert_eq!(
            a.call("ask_back", json!({}), t).unwrap(),
            json!({"from": "inside"})
        );
        // Concurrent callers take turns reading and each gets its own answer.
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let a = a.clone();
                thread::spawn(move || a.call("echo", json!({ "i": i }), t).unwrap())
            })
            .collect();
        for (i, h) in handles.into_iter().enumerate() {
            assert_eq!(h.join().unwrap(), json!({ "i": i }));
        }
        let err = a
            .call("sleep", json!({}), Some(Duration::from_millis(50)))
            .unwrap_err();
        assert!(matches!(err, CallError::Timeout(_)));
        assert_eq!(a.call("echo", json!({"k": 2}), t).unwrap(), json!({"k": 2}));
        // An abort ends a call blocked in its read at once.
        let blocked = a.clone();
        let waiter = thread::spawn(move || blocked.call("sleep", json!({}), None));
        thread::sleep(Duration::from_millis(20));
        a.abort(CloseReason::Aborted("gone".into()));
        assert_eq!(
            waiter.join().unwrap().unwrap_err(),
            CallError::Closed(CloseReason::Aborted("gone".into()))
        );
    }

    #[test]
    fn a_timed_out_call_is_cancelled_on_the_other_side() {
        let (a, _b) = pair(PeerConfig::default());
        let err = a
            .call("sleep", json!({}), Some(Duration::from_millis(50)))
            .unwrap_err();
        assert!(matches!(err, CallError::Timeout(_)));
        // The connection lives on.
        let again = a.call("echo", json!({"k": 1}), Some(Duration::from_secs(5)));
        assert_eq!(again.unwrap(), json!({"k": 1}));
    }

    #[test]
    fn noise_is_counted_and_the_connection_lives() {
        let (host_read, mut child_write) = std::io::pipe().unwrap();
        let (_child_read, host_write) = std::io::pipe().unwrap();
        let host = Peer::start(
            host_read,
            host_write,
            Arc::new(NoHandler),
            PeerConfig::default(),
        );
        child_write
            .write_all(b"DEBUG: hello\n{\"not\":\"rpc\"}\n")
            .unwrap();
        child_write
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"$/log\",\"params\":{}}\n")
            .unwrap();
        drop(child_write);
        assert!(host.wait_closed(Some(Duration::from_secs(5))));
        let noise = host.noise();
        assert_eq!(noise.lines, 2);
        assert_eq!(noise.samples[0], "DEBUG: hello");
        assert_eq!(host.close_reason(), Some(CloseReason::Eof));
    }

    #[test]
    fn an_oversized_message_is_refused_both_ways() {
        let config = PeerConfig {
            name: "small".into(),
            max_message_bytes: 1024,
            mode: ReaderMode::Dedicated,
        };
        let (a, _b) = pair(config);
        let big = "x".repeat(2048);
        let err = a
            .call("echo", json!({ "big": big }), Some(Duration::from_secs(5)))
            .unwrap_err();
        assert!(matches!(err, CallError::TooLarge { .. }), "{err:?}");
        assert!(a
            .call("echo", json!({"small": 1}), Some(Duration::from_secs(5)))
            .is_ok());
    }

    #[derive(Default)]
    struct Notes(Mutex<Vec<(String, usize)>>);

    impl Handler for Notes {
        fn request(&self, _: &RequestContext, m: &str, _: Value) -> Result<Value, RpcError> {
            Err(RpcError::new(ErrorKind::MethodNotFound, m))
        }
        fn notification(&self, method: &str, params: Value) {
            let size = params["data"].as_str().map(str::len).unwrap_or(0);
            lock(&self.0).push((method.to_string(), size));
        }
    }

    #[test]
    fn long_lines_split_across_reads_and_oversized_ones_are_skipped() {
        for mode in [ReaderMode::Dedicated, ReaderMode::Callers] {
            let (host_read, mut child_write) = std::io::pipe().unwrap();
            let (_child_read, host_write) = std::io::pipe().unwrap();
            let notes = Arc::new(Notes::default());
            let config = PeerConfig {
                name: "long".into(),
                max_message_bytes: 2 * 1024 * 1024,
                mode,
            };
            let host = Peer::start(host_read, host_write, notes.clone(), config);
            let writer = thread::spawn(move || {
                let note = |n: usize| {
                    let data = "d".repeat(n);
                    format!("{{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{{\"data\":\"{data}\"}}}}\n")
                };
                // Over the limit, then within it, then small ones: all in few writes.
                let mut all = note(3 * 1024 * 1024);
                all.push_str(&note(1_500_000));
                all.push_str(&note(10));
                all.push_str("not json\n");
                all.push_str(&note(20));
                child_write.write_all(all.as_bytes()).unwrap();
            });
            if mode == ReaderMode::Callers {
                // Only a caller reads: one that finds the stream ended.
                let _ = host.call("x", json!({}), Some(Duration::from_secs(5)));
            } else {
                assert!(host.wait_closed(Some(Duration::from_secs(5))));
            }
            writer.join().unwrap();
            let seen = lock(&notes.0).clone();
            assert_eq!(
                seen,
                vec![
                    ("n".to_string(), 1_500_000),
                    ("n".into(), 10),
                    ("n".into(), 20)
                ],
                "{mode:?}"
            );
            let noise = host.noise();
            assert_eq!((noise.lines, noise.too_large), (2, 1), "{mode:?}");
            assert!(noise.samples[0].starts_with("{\"jsonrpc\""), "{mode:?}");
            assert_eq!(noise.samples[1], "not json");
        }
    }

    #[test]
    fn closing_fails_pending_calls() {
        let (host_read, child_write) = std::io::pipe().unwrap();
        let (_child_read, host_write) = std::io::pipe().unwrap();
        let host = Peer::start(
            host_read,
            host_write,
            Arc::new(NoHandler),
            PeerConfig::default(),
        );
        let h = host.clone();
        let waiter =
            thread::spawn(move || h.call("execute", json!({}), Some(Duration::from_secs(10))));
        thread::sleep(Duration::from_millis(50));
        drop(child_write);
        let err = waiter.join().unwrap().unwrap_err();
        assert_eq!(err, CallError::Closed(CloseReason::Eof));
    }
}
