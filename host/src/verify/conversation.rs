//! One run of the plugin under verification, spoken to line by line.
//!
//! The regular host ([`crate::PluginProcess`]) forgives a plugin's mistakes and hides the wire; the
//! kit needs the opposite: to write lines no host would (a cut-off request, a stray
//! `$/cancelRequest`), to see every line that comes back in the order it came, and to notice what
//! the regular host tolerates (an answer to a notification, noise on stdout, an answer sent before a
//! nested call was answered).

use std::io::{BufRead, BufReader, Read, Write};
use std::io::{PipeReader, PipeWriter};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::message::{Id, Message, RpcError};
use agent_env_protocol::methods::{CANCEL_REQUEST, HOST_SETTINGS};
use agent_env_protocol::peer::{
    classify as classify_malformed, number_written_as_text, Defect, Malformed,
};
use agent_env_protocol::version::MAX_MESSAGE_BYTES;
use serde_json::{json, Map, Value};

use crate::config::HostConfig;
use crate::descendants::{self, Descendant};
use crate::exit::{Ended, ExitWatch};
use crate::services::HostServices;
use crate::spawn::{self, ChildIo, LaunchError};
use crate::spec::SpawnSpec;
use crate::stderr::StderrTail;

use super::stdout_lines::StdoutLines;

/// How long the kit waits, after a nested call arrives, for more of them (or for an answer the
/// plugin should not send yet) before it answers them, last first.
const NESTED_WINDOW: Duration = Duration::from_millis(100);

/// How long to wait for the last stderr bytes of a child that ended.
const STDERR_SETTLE: Duration = Duration::from_millis(250);

/// The id the kit cancels that no request ever had.
pub(crate) const NEVER_SENT_ID: &str = "agent-env-verify-never-sent";

/// What the reader thread saw on the plugin's stdout.
enum Incoming {
    Message(Message),
    /// An error answer with a null id: JSON-RPC's answer to a line that could not be read.
    Unattributed(RpcError),
    /// A line not meant as a protocol message (its first bytes).
    Noise(String),
    /// A line meant as a protocol message that is none (its first bytes), and what is wrong with it
    /// and can be read of it.
    Malformed(String, Malformed),
    /// End of file.
    Closed,
}

/// How a call came out.
#[derive(Debug)]
pub(crate) enum Answer {
    Result(Value),
    Error(RpcError),
    /// No answer within the timeout.
    TimedOut(Duration),
    /// The plugin closed its stdout (or ended) before answering; how it ended, if it did.
    Ended(Option<Ended>),
    /// The answer came as a line meant as a message that is none (two messages on one line, no
    /// `"jsonrpc"`...) under the call's id, or with no id that can be read (an id `1.0`): the call
    /// fails at once with the defect rather than waiting out its timeout, as it does in the
    /// regular host.
    Malformed {
        /// Its first bytes (none for a valid message under the request's number written as a
        /// string, `"1"` for `1`).
        line: Option<String>,
        /// What is wrong with it.
        defect: Defect,
    },
}

/// A `host.*` call the plugin made during one of the kit's calls.
#[derive(Debug)]
pub(crate) struct NestedCall {
    pub method: String,
}

/// Everything seen during one call.
#[derive(Debug)]
pub(crate) struct Exchange {
    pub answer: Answer,
    /// The plugin's own calls, in the order they came.
    pub nested: Vec<NestedCall>,
    /// What the plugin did wrong in its own calls (an answer sent before theirs came, an id used
    /// twice at once, a method that is not `host.*`), each as the end of a sentence.
    pub nested_problems: Vec<String>,
    /// What else the plugin did wrong along the way (an answer to no request in flight), each as
    /// the end of a sentence.
    pub problems: Vec<String>,
    /// Error answers with a null id (to a line the plugin could not read, or to a notification).
    pub unattributed: Vec<RpcError>,
}

impl Exchange {
    /// The first thing the plugin did wrong during the call, in its own calls or otherwise.
    pub(crate) fn first_problem(&self) -> Option<&String> {
        self.problems.first().or(self.nested_problems.first())
    }
}

/// A started plugin.
pub(crate) struct Conversation {
    package: String,
    settings: Map<String, Value>,
    services: Arc<dyn HostServices>,
    /// Where requests go: its stdin, or its fd 3 in command mode.
    stdin: Option<PipeWriter>,
    /// What its answers come from: its stdout, or its fd 4 in command mode.
    incoming: Receiver<Incoming>,
    /// In command mode, its stdout (the terminal's place, captured): the first line on it that is a
    /// protocol message, once read.
    terminal_stdout: Option<Arc<Mutex<Option<String>>>>,
    exit: Arc<ExitWatch>,
    stderr: StderrTail,
    /// Non-blank lines read from its stderr so far.
    stderr_lines: Arc<AtomicU64>,
    /// How many of them had been read when the check under way began: what the plugin wrote
    /// before belongs to earlier checks (its answers to their deliberate junk, say).
    check_start: u64,
    next_id: i64,
    stdout_closed: bool,
    noise: StdoutLines,
}

impl Conversation {
    /// Starts the plugin of `spec` (the cookie set, its own process group) from `executable`.
    pub(crate) fn start(
        spec: &SpawnSpec,
        executable: &Path,
        config: &HostConfig,
        services: Arc<dyn HostServices>,
    ) -> Result<Conversation, String> {
        let launched =
            spawn::launch(spec, executable, config).map_err(|e| not_started(executable, e))?;
        let ChildIo::Stdio {
            stdin,
            stdout,
            stderr,
        } = launched.io
        else {
            return Err("the plugin was started in command mode".into());
        };
        let streams = Streams {
            requests: stdin,
            answers: stdout,
            stderr,
            terminal_stdout: None,
        };
        let process = (launched.pid, launched.own_group);
        Conversation::over(spec, executable, process, streams, services)
    }

    /// Starts the plugin of `spec` in command mode, as a CLI command starts it but away from the
    /// terminal: requests go to its fd 3 and answers come from its fd 4, its stdin reads
    /// `/dev/null`, its stdout and stderr are captured, and it leads a process group of its own.
    pub(crate) fn start_in_command_mode(
        spec: &SpawnSpec,
        executable: &Path,
        config: &HostConfig,
        services: Arc<dyn HostServices>,
    ) -> Result<Conversation, String> {
        let spec = spec.clone().in_command_mode();
        let (launched, terminal) = spawn::launch_off_terminal(&spec, executable, config)
            .map_err(|e| not_started(executable, e))?;
        let ChildIo::Fds {
            to_child,
            from_child,
        } = launched.io
        else {
            return Err("the plugin was not started in command mode".into());
        };
        let name = format!("{}-verify-command", spec.package);
        let streams = Streams {
            requests: to_child,
            answers: from_child,
            stderr: terminal.stderr,
            terminal_stdout: Some(watch_terminal_stdout(terminal.stdout, &name)),
        };
        let process = (launched.pid, launched.own_group);
        Conversation::over(&spec, executable, process, streams, services)
    }

    /// The conversation with a started plugin: `process` is its pid and whether it leads its own
    /// process group.
    fn over(
        spec: &SpawnSpec,
        executable: &Path,
        (pid, own_group): (u32, bool),
        streams: Streams,
        services: Arc<dyn HostServices>,
    ) -> Result<Conversation, String> {
        let name = format!("{}-verify", spec.package);
        let exit = ExitWatch::start(pid, own_group, &name, |_| {})
            .map_err(|e| format!("cannot watch {}: {e}", executable.display()))?;
        let stderr_lines = Arc::new(AtomicU64::new(0));
        let counted = stderr_lines.clone();
        let stderr = StderrTail::capture_pipe_lines(streams.stderr, &name, move |line| {
            if !line.trim().is_empty() {
                counted.fetch_add(1, Ordering::SeqCst);
            }
        });
        let incoming = read_lines(streams.answers, &name);
        Ok(Conversation {
            package: spec.package.clone(),
            settings: spec.settings.clone(),
            services,
            stdin: Some(streams.requests),
            incoming,
            terminal_stdout: streams.terminal_stdout,
            exit,
            stderr,
            stderr_lines,
            check_start: 0,
            next_id: 0,
            stdout_closed: false,
            noise: StdoutLines::default(),
        })
    }

    /// Writes one raw line (a newline is added).
    pub(crate) fn send_raw(&mut self, line: &[u8]) {
        let Some(stdin) = &mut self.stdin else { return };
        let mut bytes = line.to_vec();
        bytes.push(b'\n');
        if stdin
            .write_all(&bytes)
            .and_then(|()| stdin.flush())
            .is_err()
        {
            // The plugin is gone; the next wait for an answer says how it ended.
            self.stdin = None;
        }
    }

    /// Sends a notification.
    pub(crate) fn notify(&mut self, method: &str, params: Value) {
        let line = Message::notification(method, params).encode();
        self.send_raw(line.strip_suffix(b"\n").unwrap_or(&line));
    }

    /// The id the next request will carry.
    pub(crate) fn next_id(&self) -> i64 {
        self.next_id + 1
    }

    /// Sends a request and waits up to `timeout` for its answer, answering the plugin's own calls
    /// meanwhile.
    pub(crate) fn call(&mut self, method: &str, params: Value, timeout: Duration) -> Exchange {
        self.next_id += 1;
        let id = Id::Number(self.next_id);
        let line = Message::request(id.clone(), method, params).encode();
        self.send_raw(line.strip_suffix(b"\n").unwrap_or(&line));
        let mut exchange = Exchange {
            answer: Answer::TimedOut(timeout),
            nested: Vec::new(),
            nested_problems: Vec::new(),
            problems: Vec::new(),
            unattributed: Vec::new(),
        };
        let deadline = Instant::now() + timeout;
        loop {
            let Some(incoming) = self.next(deadline) else {
                return exchange;
            };
            match incoming {
                Incoming::Closed => {
                    exchange.answer = Answer::Ended(self.wait_exit(Duration::from_secs(1)));
                    return exchange;
                }
                Incoming::Message(Message::Response { id: got, result }) if got == id => {
                    exchange.answer = answer_of(result);
                    return exchange;
                }
                Incoming::Malformed(line, malformed) if answers(&malformed, &id) => {
                    exchange.answer = Answer::Malformed {
                        line: Some(line),
                        defect: malformed.defect,
                    };
                    return exchange;
                }
                Incoming::Message(Message::Response { id: got, result }) => {
                    match id_as_string(&got, &id) {
                        Some(answer) => {
                            exchange.answer = answer;
                            return exchange;
                        }
                        None => self.note_outside_call(
                            Incoming::Message(Message::Response { id: got, result }),
                            &mut exchange,
                        ),
                    }
                }
                Incoming::Message(Message::Request {
                    id: nested_id,
                    method: nested_method,
                    params,
                }) => {
                    let early = self.answer_nested(
                        method,
                        &id,
                        (nested_id, nested_method, params),
                        &mut exchange,
                    );
                    if let Some(answer) = early {
                        exchange.answer = answer;
                        return exchange;
                    }
                }
                other => self.note_outside_call(other, &mut exchange),
            }
        }
    }

    /// Answers a nested call and any that arrive with it, last first, each after a `$/cancelRequest`
    /// for an id never sent (a plugin waiting for its answer must not take that for it). Returns the
    /// answer to the kit's own call if the plugin sent it before its nested calls were answered.
    fn answer_nested(
        &mut self,
        outer_method: &str,
        outer_id: &Id,
        first: (Id, String, Value),
        exchange: &mut Exchange,
    ) -> Option<Answer> {
        let mut batch = vec![first];
        let mut early = None;
        let window_end = Instant::now() + NESTED_WINDOW;
        while let Some(incoming) = self.next(window_end) {
            match incoming {
                Incoming::Message(Message::Request { id, method, params }) => {
                    batch.push((id, method, params))
                }
                Incoming::Message(Message::Response { id, result }) if &id == outer_id => {
                    let pending: Vec<String> = batch
                        .iter()
                        .map(|(id, m, _)| format!("'{m}' (id {id})"))
                        .collect();
                    exchange.nested_problems.push(format!(
                        "answered '{outer_method}' before agent-env answered its own call {}; a plugin \
                         waits for the answer to each host call it makes",
                        pending.join(", ")
                    ));
                    early = Some(answer_of(result));
                    break;
                }
                Incoming::Malformed(line, malformed) if answers(&malformed, outer_id) => {
                    early = Some(Answer::Malformed {
                        line: Some(line),
                        defect: malformed.defect,
                    });
                    break;
                }
                Incoming::Message(Message::Response { id, result }) => {
                    match id_as_string(&id, outer_id) {
                        Some(answer) => {
                            early = Some(answer);
                            break;
                        }
                        None => self.note_outside_call(
                            Incoming::Message(Message::Response { id, result }),
                            exchange,
                        ),
                    }
                }
                Incoming::Closed => {
                    early = Some(Answer::Ended(self.wait_exit(Duration::from_secs(1))));
                    break;
                }
                other => self.note_outside_call(other, exchange),
            }
        }
        for (i, (id, method, _)) in batch.iter().enumerate() {
            if batch[..i].iter().any(|(other, _, _)| other == id) {
                exchange.nested_problems.push(format!(
                    "used id {id} for two host calls at once ('{method}'); each call in flight needs an id of its own"
                ));
            }
        }
        while let Some((id, method, params)) = batch.pop() {
            self.notify(CANCEL_REQUEST, json!({ "id": NEVER_SENT_ID }));
            let result = self.host_answer(&method, params, exchange);
            let line = Message::Response { id, result }.encode();
            self.send_raw(line.strip_suffix(b"\n").unwrap_or(&line));
            exchange.nested.push(NestedCall { method });
        }
        early
    }

    /// What agent-env answers a plugin's own call: its settings, or the services' answer.
    fn host_answer(
        &self,
        method: &str,
        params: Value,
        exchange: &mut Exchange,
    ) -> Result<Value, RpcError> {
        if method == HOST_SETTINGS {
            return Ok(Value::Object(self.settings.clone()));
        }
        if !method.starts_with("host.") {
            exchange.nested_problems.push(format!(
                "called '{method}' on agent-env; a plugin calls only host.* methods (and sends $/progress and $/log as notifications)"
            ));
            return Err(RpcError::new(
                ErrorKind::MethodNotFound,
                format!("agent-env answers only host.* methods; '{method}' is not one"),
            ));
        }
        self.services.handle(&self.package, method, params)
    }

    /// Records what arrived that is not part of the exchange under way.
    fn note_outside_call(&mut self, incoming: Incoming, exchange: &mut Exchange) {
        match incoming {
            Incoming::Unattributed(error) => exchange.unattributed.push(error),
            Incoming::Message(Message::Response { id, .. }) => exchange.problems.push(format!(
                "sent an answer with id {id}, which is not the id of any request agent-env has in flight"
            )),
            // `$/progress`, `$/log` and unknown notifications need nothing; requests and the end of
            // the stream are handled by the caller, noise (and a malformed answer's count) by `next`.
            Incoming::Message(Message::Notification { .. } | Message::Request { .. })
            | Incoming::Noise(_)
            | Incoming::Malformed(..)
            | Incoming::Closed => {}
        }
    }

    /// The next message before `deadline`, counting noise lines on the way; `None` at the deadline.
    /// A malformed line is counted too, and one meant as an answer ([`meant_as_answer`]) is passed
    /// on, so that the call it answers fails at once.
    fn next(&mut self, deadline: Instant) -> Option<Incoming> {
        loop {
            if self.stdout_closed {
                return Some(Incoming::Closed);
            }
            let wait = deadline.saturating_duration_since(Instant::now());
            match self.incoming.recv_timeout(wait) {
                Ok(Incoming::Noise(line)) => self.noise.stray(line),
                Ok(Incoming::Malformed(line, malformed)) => {
                    self.noise.malformed(line.clone(), malformed.defect.clone());
                    if meant_as_answer(&malformed) {
                        return Some(Incoming::Malformed(line, malformed));
                    }
                }
                Ok(Incoming::Closed) | Err(RecvTimeoutError::Disconnected) => {
                    self.stdout_closed = true;
                }
                Ok(other) => return Some(other),
                Err(RecvTimeoutError::Timeout) => return None,
            }
        }
    }

    /// Closes the plugin's stdin.
    pub(crate) fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Waits up to `timeout` for the plugin to end.
    pub(crate) fn wait_exit(&self, timeout: Duration) -> Option<Ended> {
        self.exit.wait_timeout(timeout)
    }

    /// The plugin's descendants now (to see later whether any outlived it).
    pub(crate) fn descendants(&self) -> Vec<Descendant> {
        if self.exit.ended().is_some() {
            return Vec::new();
        }
        descendants::snapshot(self.exit.pid())
    }

    /// After the plugin ended: what still runs of its process group and of `snapshot`, each as
    /// `pid (command line)`.
    pub(crate) fn leftovers(&self, snapshot: &[Descendant]) -> Vec<String> {
        let mut pids = descendants::group_members(self.exit.pid());
        for pid in descendants::still_running(snapshot) {
            if !pids.contains(&pid) {
                pids.push(pid);
            }
        }
        pids.sort_unstable();
        pids.into_iter()
            .map(|pid| format!("{pid} ({})", descendants::command_line(pid)))
            .collect()
    }

    /// Ends the plugin and everything it started: SIGKILL to its group and to `snapshot`, reaped.
    pub(crate) fn kill(&mut self, snapshot: &[Descendant]) {
        self.stdin = None;
        if self.exit.ended().is_none() {
            self.exit.signal(libc::SIGKILL);
            self.exit.wait_timeout(Duration::from_secs(30));
        }
        self.exit.kill_leftovers(Duration::from_millis(500));
        descendants::kill_all(snapshot, Duration::from_millis(500));
        self.settle_stderr();
    }

    /// Waits until the plugin's stderr is read to its end, or [`STDERR_SETTLE`] has passed.
    fn settle_stderr(&self) {
        let deadline = Instant::now() + STDERR_SETTLE;
        while !self.stderr.ended() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(1));
        }
    }

    /// In command mode, the start of the first line the plugin wrote to its stdout (the terminal's
    /// place) that is a protocol message: an answer sent where the terminal, not agent-env, reads it.
    pub(crate) fn protocol_line_on_terminal(&self) -> Option<String> {
        let seen = self.terminal_stdout.as_ref()?;
        seen.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Lines seen on stdout that were not protocol messages.
    pub(crate) fn noise(&self) -> &StdoutLines {
        &self.noise
    }

    /// The last `n` lines of the plugin's stderr.
    pub(crate) fn stderr_tail(&self, n: usize) -> Vec<String> {
        self.stderr.last_lines(n)
    }

    /// Begins a check: what the plugin wrote on stderr until now (every line written before this
    /// call, once read) is left out of [`Self::check_stderr`] from here on.
    pub(crate) fn begin_check(&mut self) {
        self.stderr.catch_up(STDERR_SETTLE);
        self.check_start = self.stderr_lines.load(Ordering::SeqCst);
    }

    /// The last `n` lines the plugin wrote on stderr since the check under way began
    /// ([`Self::begin_check`]; since it started, if none did): what it wrote just before it
    /// exited, or while it kept a call waiting, belongs to why. Once it has ended, its last bytes
    /// are read first (or [`STDERR_SETTLE`] passes); while it runs, every line written so far is.
    pub(crate) fn check_stderr(&self, n: usize) -> Vec<String> {
        if self.exit.ended().is_some() {
            self.settle_stderr();
        } else {
            self.stderr.catch_up(STDERR_SETTLE);
        }
        let written = self.stderr_lines.load(Ordering::SeqCst);
        let since = usize::try_from(written.saturating_sub(self.check_start)).unwrap_or(usize::MAX);
        self.stderr.last_lines(n.min(since))
    }
}

impl Drop for Conversation {
    fn drop(&mut self) {
        self.kill(&[]);
    }
}

/// The ends of a started plugin's streams the kit holds.
struct Streams {
    /// Where requests go.
    requests: PipeWriter,
    /// Where answers come from.
    answers: PipeReader,
    /// Its stderr.
    stderr: PipeReader,
    /// In command mode, the first protocol message it wrote to its stdout, once read.
    terminal_stdout: Option<Arc<Mutex<Option<String>>>>,
}

/// Why the plugin did not start, as a finding says it.
fn not_started(executable: &Path, e: LaunchError) -> String {
    match e {
        LaunchError::Io(e) => format!("cannot start {}: {e}", executable.display()),
        LaunchError::Timeout(t) => format!(
            "{} did not start within {:.1} s",
            executable.display(),
            t.as_secs_f64()
        ),
    }
}

/// Reads a command-mode plugin's stdout to its end on a thread of its own (so that it never blocks
/// on a full pipe), keeping the first line that is a protocol message.
fn watch_terminal_stdout(stdout: PipeReader, name: &str) -> Arc<Mutex<Option<String>>> {
    let seen = Arc::new(Mutex::new(None));
    let found = seen.clone();
    let reader = move || {
        let mut reader = BufReader::new(stdout);
        let mut line = Vec::new();
        loop {
            line.clear();
            match (&mut reader)
                .take((MAX_MESSAGE_BYTES + 1) as u64)
                .read_until(b'\n', &mut line)
            {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            if Message::decode(text).is_ok() {
                let mut found = found.lock().unwrap_or_else(|p| p.into_inner());
                if found.is_none() {
                    *found = Some(sample(text));
                }
            }
        }
    };
    let _ = thread::Builder::new()
        .name(format!("{name}-terminal"))
        .spawn(reader);
    seen
}

/// The answer `got` gives, when its id is the number of `sent` written as a string, exactly as the
/// number is written (`"1"` for `1`): it answers the request under the wrong type of id, which the
/// regular host fails at once too. Any other string (`" 1"`, `"01"`) is a wrong id like any other.
fn id_as_string(got: &Id, sent: &Id) -> Option<Answer> {
    let Id::Number(n) = sent else { return None };
    (number_written_as_text(got) == Some(*n)).then_some(Answer::Malformed {
        line: None,
        defect: Defect::IdAsString(*n),
    })
}

/// Whether a malformed line is taken for an answer, as the regular host's peer takes it: no method,
/// and an id that can be read, or, with none (an id `1.0`, `null`, a piece of a pretty-printed
/// message), a line that says it is JSON-RPC or is shaped as a message gone wrong. A JSON log line
/// with no `"jsonrpc"` and no id to go by (`{"error":"disk full","id":null}`) is not.
fn meant_as_answer(malformed: &Malformed) -> bool {
    !malformed.has_method && (malformed.id.is_some() || malformed.defect != Defect::NoVersion)
}

/// Whether a malformed answer ([`meant_as_answer`]) answers the call `sent`: under its id, or with no
/// id to go by, as the kit makes one call at a time and the regular host takes it for the one call
/// waiting.
fn answers(malformed: &Malformed, sent: &Id) -> bool {
    malformed.id.as_ref().is_none_or(|id| id == sent)
}

fn answer_of(result: Result<Value, RpcError>) -> Answer {
    match result {
        Ok(value) => Answer::Result(value),
        Err(error) => Answer::Error(error),
    }
}

/// Reads the plugin's stdout on a thread of its own, one line at a time.
fn read_lines(stdout: PipeReader, name: &str) -> Receiver<Incoming> {
    let (tx, rx) = mpsc::channel();
    let reader = move || {
        let mut reader = BufReader::with_capacity(64 * 1024, stdout);
        loop {
            let mut line = Vec::new();
            let limit = (MAX_MESSAGE_BYTES + 1) as u64;
            match (&mut reader).take(limit).read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if !line.ends_with(b"\n") && line.len() as u64 == limit {
                // Over the maximum size: skip the rest of the line.
                let mut rest = Vec::new();
                let _ = reader.read_until(b'\n', &mut rest);
                let _ = tx.send(Incoming::Noise(sample(&line)));
                continue;
            }
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if tx.send(classify(text)).is_err() {
                return;
            }
        }
        let _ = tx.send(Incoming::Closed);
    };
    if thread::Builder::new()
        .name(format!("{name}-stdout"))
        .spawn(reader)
        .is_err()
    {
        // No reader: the receiver sees the channel closed, which reads as end of file.
    }
    rx
}

fn classify(line: &[u8]) -> Incoming {
    match Message::decode(line) {
        Ok(message) => Incoming::Message(message),
        Err(_) => match unattributed_error(line) {
            Some(error) => Incoming::Unattributed(error),
            None => match classify_malformed(line) {
                Some(meant) => Incoming::Malformed(sample(line), meant),
                None => Incoming::Noise(sample(line)),
            },
        },
    }
}

/// `{"jsonrpc":"2.0","id":null,"error":{…}}`: an answer to a line that had no usable id.
fn unattributed_error(line: &[u8]) -> Option<RpcError> {
    let value: Value = serde_json::from_slice(line).ok()?;
    let object = value.as_object()?;
    if object.get("jsonrpc")? != "2.0" || !object.get("id").is_none_or(Value::is_null) {
        return None;
    }
    serde_json::from_value(object.get("error")?.clone()).ok()
}

/// The start of a line, for messages.
fn sample(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(&line[..line.len().min(200)]).into_owned();
    if line.len() > 200 {
        format!("{text}…")
    } else {
        text
    }
}
