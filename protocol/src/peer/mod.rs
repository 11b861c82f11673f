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
//! **Where things are.** This file holds the [`Peer`]: sending, calling, the reading role and routing
//! what was read. Beside it: `config` (how a peer is set up), `errors` (why a call failed, how the
//! connection ended), `line_reader` (the stream split into lines under a size limit), `readiness`
//! (waiting for data, a deadline or the connection's own close) and `noise` (what is kept of lines
//! that are not messages).
//!
//! Why not jsonrpsee or tokio: jsonrpsee's client cannot answer a request the child sends back and dies
//! on the first non-JSON stdout line, and both answer later than this peer over the same pipes:
//! `cargo run --release -p agent-env-bench -- runtimes` times all three with the same echo calls (on a
//! 2-core VM, p50 44 µs here against 133 µs for a tokio line loop and 102 µs for jsonrpsee at 64 B).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::codes::ErrorKind;
use crate::message::{DecodeError, Id, Message, RpcError};
use crate::methods::{CANCEL_REQUEST, PROGRESS};

mod config;
mod errors;
mod line_reader;
mod malformed;
mod noise;
mod readiness;

pub use config::{PeerConfig, ReaderMode};
pub use errors::{CallError, CloseReason};
pub use malformed::{classify, number_written_as_text, refusal, Defect, Malformed};
pub use noise::{sample_of, NoiseStats, NOISE_SAMPLES_KEPT, NOISE_SAMPLE_BYTES};

use line_reader::{LineRead, LineReader, KEEP_BUFFER_BYTES};
use noise::{sniff_has_method, sniff_id};
use readiness::wake_pipe;

/// What the other side can ask of this one.
pub trait Handler: Send + Sync + 'static {
    /// Answers one request. It may call back through `ctx.peer()`.
    fn request(&self, ctx: &RequestContext, method: &str, params: Value)
        -> Result<Value, RpcError>;

    /// Receives a notification other than `$/cancelRequest` (which the peer handles itself).
    fn notification(&self, _method: &str, _params: Value) {}

    /// Called once when the connection ends (end of the incoming stream, or [`Peer::abort`]).
    fn closed(&self, _reason: &CloseReason) {}

    /// Called once the answer [`Handler::request`] returned for request `id` has been written (or
    /// could not be), so that a side that waits for its requests before it exits knows their
    /// answers are out.
    fn answered(&self, _id: &Id) {}
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

type Reply = Result<Value, CallError>;

struct State {
    /// Calls of this side waiting for answers; the slot fills when the answer arrives.
    pending: HashMap<Id, Option<Reply>>,
    incoming: HashMap<Id, Arc<AtomicBool>>,
    closed: Option<CloseReason>,
    noise: NoiseStats,
    /// How many calls of this side were waiting for answers when the connection closed.
    waiting_at_close: usize,
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
                    waiting_at_close: 0,
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

    /// Asks the other side to cancel every call of this side still waiting for its answer (a
    /// `$/cancelRequest` for each), then waits up to `wait` for those calls to be answered: before a
    /// shutdown, so that work watching for cancellation ends and says so, rather than being cut off
    /// when the other side exits. Returns whether they were all answered (or the connection closed)
    /// in time: `false` says the other side did not heed the cancel.
    pub fn cancel_pending(&self, wait: Duration) -> bool {
        let waiting: Vec<Id> = lock(&self.inner.state)
            .pending
            .iter()
            .filter(|(_, reply)| reply.is_none())
            .map(|(id, _)| id.clone())
            .collect();
        for id in &waiting {
            let _ = self.notify(CANCEL_REQUEST, json!({ "id": id }));
        }
        let deadline = Instant::now() + wait;
        let mut state = lock(&self.inner.state);
        // A call's slot fills when its answer arrives, and goes once its caller took it.
        while state.closed.is_none()
            && waiting
                .iter()
                .any(|id| matches!(state.pending.get(id), Some(None)))
        {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            state.waiters += 1;
            state = self
                .inner
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            state.waiters -= 1;
        }
        true
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

    /// How many calls of this side were still waiting for their answers when the connection
    /// closed (0 while it is open).
    pub fn calls_waiting_at_close(&self) -> usize {
        lock(&self.inner.state).waiting_at_close
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

    /// Whether a request of this side had `id` (every id it sends is a number counted up from 1).
    fn was_sent(&self, id: &Id) -> bool {
        match id {
            Id::Number(n) => *n >= 1 && *n < self.inner.next_id.load(Ordering::Relaxed),
            _ => false,
        }
    }

    /// The number of a call still waiting whose id `id` writes as a string, exactly as the number is
    /// written (`"1"` for `1`; `" 1"`, `"01"` or `"+1"` is a wrong id like any other).
    fn number_sent_as_text(&self, id: &Id, state: &State) -> Option<i64> {
        let n = number_written_as_text(id)?;
        matches!(state.pending.get(&Id::Number(n)), Some(None)).then_some(n)
    }

    /// How many bytes the other side wrote of a line it has not ended (no newline yet); 0 while
    /// another thread reads.
    pub fn unended_bytes(&self) -> usize {
        match self.inner.reader.try_lock() {
            Ok(reader) => reader.unended(),
            Err(_) => 0,
        }
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
                            match classify(line) {
                                Some(malformed) => self.malformed(line, malformed),
                                None => self.record_noise(line, false),
                            }
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
                if state.pending.contains_key(&id) {
                    self.settle(state, &id, result.map_err(CallError::Rpc));
                } else if let Some(n) = self.number_sent_as_text(&id, &state) {
                    // The request's number echoed as a string: the call it answers is known.
                    if state.noise.unsent_answer_id.is_none() {
                        state.noise.unsent_answer_id = Some(id);
                    }
                    let malformed = CallError::Malformed {
                        defect: Defect::IdAsString(n),
                        line: None,
                    };
                    self.settle(state, &Id::Number(n), Err(malformed));
                } else if !self.was_sent(&id) && state.noise.unsent_answer_id.is_none() {
                    state.noise.unsent_answer_id = Some(id);
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
                id: job.id.clone(),
                result: Err(RpcError::new(
                    ErrorKind::MessageTooLarge,
                    format!("the answer is {size} bytes, over the {max}-byte maximum message size; pass large data by file path"),
                )),
            });
        }
        self.inner.handler.answered(&job.id);
    }

    fn too_large(&self, head: &[u8]) {
        if sniff_id(head).is_some() || sniff_has_method(head) {
            // A protocol message, failed below by its id: no stray output.
            lock(&self.inner.state).noise.too_large += 1;
        } else {
            self.record_noise(head, true);
        }
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

    /// A line meant as a message that is none: kept as noise with its defect; when it is an
    /// answer whose call can be told (by its id, or as the one call waiting), that call fails now
    /// with the defect rather than waiting out its timeout, and when it is a request with a
    /// readable id, it is answered with an invalid-request error naming the defect.
    fn malformed(&self, line: &[u8], malformed: Malformed) {
        self.record_noise(line, false);
        let mut state = lock(&self.inner.state);
        if state.noise.malformed.is_none() {
            state.noise.malformed = Some((malformed.clone(), sample_of(line)));
        }
        if malformed.has_method {
            drop(state);
            // A request with a readable id is refused under it, so its sender need not wait.
            if let Some((id, error)) = refusal(line, &malformed) {
                let _ = self.send(&Message::Response {
                    id,
                    result: Err(error),
                });
            }
            return;
        }
        let waiting: Vec<&Id> = state
            .pending
            .iter()
            .filter(|(_, reply)| reply.is_none())
            .map(|(id, _)| id)
            .collect();
        let target = match &malformed.id {
            Some(id) => waiting.into_iter().find(|w| *w == id).cloned(),
            // With no id to go by, only a line that says it is JSON-RPC (or is shaped as a message
            // gone wrong: a batch, a piece of one) is taken for the one call's answer: a log line
            // of JSON that happens to hold an "error" and an "id" is not.
            None if waiting.len() == 1 && malformed.defect != Defect::NoVersion => {
                waiting.first().map(|w| (*w).clone())
            }
            None => None,
        };
        let Some(id) = target else { return };
        let failed = CallError::Malformed {
            defect: malformed.defect,
            line: Some(sample_of(line)),
        };
        self.settle(state, &id, Err(failed));
    }

    /// Gives the call `id` its `reply` (when it is still waiting) and wakes the callers waiting.
    fn settle(&self, mut state: MutexGuard<'_, State>, id: &Id, reply: Result<Value, CallError>) {
        if let Some(slot) = state.pending.get_mut(id) {
            *slot = Some(reply);
        }
        let wake = state.waiters > 0;
        drop(state);
        if wake {
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
            state.waiting_at_close = state.pending.values().filter(|r| r.is_none()).count();
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

#[cfg(test)]
mod tests;
