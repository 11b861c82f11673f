//! A small bidirectional JSON-RPC 2.0 peer over a pair of byte streams, one message per line.
//!
//! Both the host (talking to a child's stdin/stdout) and the plugin SDKs (talking to their own) use it.
//! Either side may call the other at any time, including while one of its own calls is in flight, so
//! incoming requests run on worker threads and the reader thread only routes lines.
//!
//! Why not jsonrpsee or tokio: jsonrpsee's client cannot answer a request the child sends back and dies
//! on the first non-JSON stdout line, and an async runtime costs start-up time and ~50 µs per call on a
//! blocking pipe (see docs/performance.md). Blocking reads on a dedicated thread plus one channel per
//! call measured a few microseconds per round trip.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

use crate::codes::ErrorKind;
use crate::message::{DecodeError, Id, Message, RpcError};
use crate::methods::{CANCEL_REQUEST, PROGRESS};
use crate::version::MAX_MESSAGE_BYTES;

/// How many bytes of a noise line are kept.
pub const NOISE_SAMPLE_BYTES: usize = 200;
/// How many noise lines are kept as samples (all are counted).
pub const NOISE_SAMPLES_KEPT: usize = 5;

/// Settings of one peer.
#[derive(Debug, Clone)]
pub struct PeerConfig {
    /// Used to name threads, e.g. the plugin's package.
    pub name: String,
    pub max_message_bytes: usize,
}

impl Default for PeerConfig {
    fn default() -> Self {
        PeerConfig {
            name: "peer".into(),
            max_message_bytes: MAX_MESSAGE_BYTES,
        }
    }
}

/// What the other side can ask of this one.
pub trait Handler: Send + Sync + 'static {
    /// Answers one request. Runs on a worker thread; it may call back through `ctx.peer()`.
    fn request(&self, ctx: &RequestContext, method: &str, params: Value)
        -> Result<Value, RpcError>;

    /// Receives a notification other than `$/cancelRequest` (which the peer handles itself).
    fn notification(&self, _method: &str, _params: Value) {}

    /// Called once, on the reader thread, when the incoming stream ends.
    fn closed(&self, _reason: &CloseReason) {}

    /// Called for each line that is not a JSON-RPC message.
    fn noise(&self, _sample: &str) {}
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
    TooLarge { size: usize, max: usize },
}

impl CallError {
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
    #[error("end of stream")]
    Eof,
    #[error("read failed: {0}")]
    ReadFailed(String),
    #[error("write failed: {0}")]
    WriteFailed(String),
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
    pending: HashMap<Id, SyncSender<Reply>>,
    incoming: HashMap<Id, Arc<AtomicBool>>,
    closed: Option<CloseReason>,
    noise: NoiseStats,
}

struct Inner {
    config: PeerConfig,
    writer: Mutex<Option<Box<dyn Write + Send>>>,
    state: Mutex<State>,
    closed_cv: Condvar,
    next_id: AtomicI64,
    handler: Arc<dyn Handler>,
    jobs: Mutex<Option<Sender<Job>>>,
    job_rx: Arc<Mutex<Receiver<Job>>>,
    idle_workers: AtomicUsize,
}

struct Job {
    id: Id,
    method: String,
    params: Value,
    cancelled: Arc<AtomicBool>,
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
    /// Starts a peer reading `reader` on its own thread and writing `writer`.
    pub fn start<R, W>(reader: R, writer: W, handler: Arc<dyn Handler>, config: PeerConfig) -> Peer
    where
        R: Read + Send + 'static,
        W: Write + Send + 'static,
    {
        let (tx, rx) = mpsc::channel();
        let peer = Peer {
            inner: Arc::new(Inner {
                config,
                writer: Mutex::new(Some(Box::new(std::io::BufWriter::with_capacity(
                    64 * 1024,
                    writer,
                )))),
                state: Mutex::new(State {
                    pending: HashMap::new(),
                    incoming: HashMap::new(),
                    closed: None,
                    noise: NoiseStats::default(),
                }),
                closed_cv: Condvar::new(),
                next_id: AtomicI64::new(1),
                handler,
                jobs: Mutex::new(Some(tx)),
                job_rx: Arc::new(Mutex::new(rx)),
                idle_workers: AtomicUsize::new(0),
            }),
        };
        let reader_peer = peer.clone();
        let name = format!("{}-reader", peer.inner.config.name);
        let spawned = thread::Builder::new()
            .name(name)
            .spawn(move || reader_peer.read_loop(reader));
        if let Err(e) = spawned {
            peer.mark_closed(CloseReason::ReadFailed(format!(
                "cannot start the reader thread: {e}"
            )));
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
        let id = Id::Number(self.inner.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = mpsc::sync_channel(1);
        {
            let mut state = lock(&self.inner.state);
            if let Some(reason) = &state.closed {
                return Err(CallError::Closed(reason.clone()));
            }
            state.pending.insert(id.clone(), tx);
        }
        let msg = Message::request(id.clone(), method, params);
        if let Err(e) = self.send(&msg) {
            lock(&self.inner.state).pending.remove(&id);
            return Err(e);
        }
        let answer = match timeout {
            Some(t) => rx.recv_timeout(t),
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match answer {
            Ok(reply) => reply,
            Err(RecvTimeoutError::Timeout) => {
                lock(&self.inner.state).pending.remove(&id);
                let _ = self.notify(CANCEL_REQUEST, json!({ "id": id }));
                Err(CallError::Timeout(timeout.unwrap_or_default()))
            }
            Err(RecvTimeoutError::Disconnected) => Err(CallError::Closed(
                self.close_reason().unwrap_or(CloseReason::Eof),
            )),
        }
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) -> Result<(), CallError> {
        self.send(&Message::notification(method, params))
    }

    /// Stops writing: the other side sees end of file on its input. Calls in flight still get answers.
    pub fn close_output(&self) {
        if let Some(mut w) = lock(&self.inner.writer).take() {
            let _ = w.flush();
        }
    }

    /// Treats the connection as ended now, whether or not the incoming stream has: every call in flight
    /// fails with `CallError::Closed(reason)` and new calls are refused. The reader thread ends when the
    /// stream does.
    pub fn abort(&self, reason: CloseReason) {
        self.mark_closed(reason);
    }

    /// Why the incoming stream ended, once it has.
    pub fn close_reason(&self) -> Option<CloseReason> {
        lock(&self.inner.state).closed.clone()
    }

    pub fn is_closed(&self) -> bool {
        self.close_reason().is_some()
    }

    /// Blocks until the incoming stream ends, or `timeout` passes. Returns whether it ended.
    pub fn wait_closed(&self, timeout: Option<Duration>) -> bool {
        let state = lock(&self.inner.state);
        match timeout {
            None => {
                let _state = self
                    .inner
                    .closed_cv
                    .wait_while(state, |s| s.closed.is_none())
                    .unwrap_or_else(|p| p.into_inner());
                true
            }
            Some(t) => {
                let (state, _) = self
                    .inner
                    .closed_cv
                    .wait_timeout_while(state, t, |s| s.closed.is_none())
                    .unwrap_or_else(|p| p.into_inner());
                state.closed.is_some()
            }
        }
    }

    /// What arrived so far that was not a message.
    pub fn noise(&self) -> NoiseStats {
        lock(&self.inner.state).noise.clone()
    }

    /// The methods of requests sent by this side that have no answer yet (their ids).
    pub fn pending_calls(&self) -> usize {
        lock(&self.inner.state).pending.len()
    }

    fn send(&self, msg: &Message) -> Result<(), CallError> {
        let line = msg.encode();
        let max = self.inner.config.max_message_bytes;
        if line.len() - 1 > max {
            return Err(CallError::TooLarge {
                size: line.len() - 1,
                max,
            });
        }
        let mut writer = lock(&self.inner.writer);
        let Some(w) = writer.as_mut() else {
            return Err(CallError::Closed(CloseReason::Local));
        };
        let result = w.write_all(&line).and_then(|_| w.flush());
        if let Err(e) = result {
            *writer = None;
            drop(writer);
            return Err(CallError::Closed(CloseReason::WriteFailed(e.to_string())));
        }
        Ok(())
    }

    fn read_loop<R: Read>(&self, reader: R) {
        let max = self.inner.config.max_message_bytes;
        let mut reader = BufReader::with_capacity(256 * 1024, reader);
        let mut line = Vec::with_capacity(4096);
        let reason = loop {
            line.clear();
            let limit = (max + 1) as u64;
            let n = match (&mut reader).take(limit).read_until(b'\n', &mut line) {
                Ok(n) => n,
                Err(e) => break CloseReason::ReadFailed(e.to_string()),
            };
            if n == 0 {
                break CloseReason::Eof;
            }
            let ended = line.last() == Some(&b'\n');
            if ended {
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
            }
            if line.len() > max {
                // Over the limit: drop the rest of the line, then say so.
                if !ended {
                    if let Err(e) = reader.skip_until(b'\n') {
                        break CloseReason::ReadFailed(e.to_string());
                    }
                }
                self.too_large(&line);
                continue;
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match Message::decode(&line) {
                Ok(msg) => self.route(msg),
                Err(DecodeError::NotJson(_)) | Err(DecodeError::NotJsonRpc(_)) => {
                    self.record_noise(&line, false)
                }
            }
            if line.capacity() > 1024 * 1024 {
                line = Vec::with_capacity(4096);
            }
        };
        self.mark_closed(reason);
    }

    fn route(&self, msg: Message) {
        match msg {
            Message::Response { id, result } => {
                let waiter = lock(&self.inner.state).pending.remove(&id);
                if let Some(tx) = waiter {
                    let _ = tx.send(result.map_err(CallError::Rpc));
                }
                // A late answer to a call that timed out is dropped.
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
            }
            Message::Request { id, method, params } => {
                let cancelled = Arc::new(AtomicBool::new(false));
                lock(&self.inner.state)
                    .incoming
                    .insert(id.clone(), cancelled.clone());
                self.dispatch(Job {
                    id,
                    method,
                    params,
                    cancelled,
                });
            }
        }
    }

    fn dispatch(&self, job: Job) {
        if self.inner.idle_workers.load(Ordering::Acquire) == 0 {
            self.spawn_worker();
        }
        let jobs = lock(&self.inner.jobs);
        if let Some(tx) = jobs.as_ref() {
            let _ = tx.send(job);
        }
    }

    fn spawn_worker(&self) {
        let peer = self.clone();
        let rx = self.inner.job_rx.clone();
        let name = format!("{}-worker", self.inner.config.name);
        let _ = thread::Builder::new().name(name).spawn(move || loop {
            peer.inner.idle_workers.fetch_add(1, Ordering::AcqRel);
            let job = lock(&rx).recv();
            peer.inner.idle_workers.fetch_sub(1, Ordering::AcqRel);
            let Ok(job) = job else { break };
            peer.run_job(job);
        });
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
        let is_request = sniff_has_method(head);
        let message = format!("a message over the {max}-byte maximum message size was discarded; pass large data by file path");
        if is_request {
            let _ = self.send(&Message::Response {
                id,
                result: Err(RpcError::new(ErrorKind::MessageTooLarge, message)),
            });
        } else if let Some(tx) = lock(&self.inner.state).pending.remove(&id) {
            let _ = tx.send(Err(CallError::Rpc(RpcError::new(
                ErrorKind::MessageTooLarge,
                message,
            ))));
        }
    }

    fn record_noise(&self, line: &[u8], too_large: bool) {
        let sample = sample_of(line);
        {
            let mut state = lock(&self.inner.state);
            state.noise.lines += 1;
            if too_large {
                state.noise.too_large += 1;
            }
            if state.noise.samples.len() < NOISE_SAMPLES_KEPT {
                state.noise.samples.push(sample.clone());
            }
        }
        self.inner.handler.noise(&sample);
    }

    fn mark_closed(&self, reason: CloseReason) {
        let pending = {
            let mut state = lock(&self.inner.state);
            if state.closed.is_some() {
                return;
            }
            state.closed = Some(reason.clone());
            std::mem::take(&mut state.pending)
        };
        for (_, tx) in pending {
            let _ = tx.send(Err(CallError::Closed(reason.clone())));
        }
        // Let idle workers end once queued requests are done.
        lock(&self.inner.jobs).take();
        self.inner.closed_cv.notify_all();
        self.inner.handler.closed(&reason);
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
