//! A plugin's built executable driven from a test as agent-env drives it: started with the cookie,
//! handshaken, asked to run steps, shut down. Requests the plugin makes to the host (`host.*`) are
//! answered with an error saying this test host has none, so a step that calls one fails rather than
//! hangs, and each call waits for its answer only so long (a limit the test may set), so a plugin that
//! hangs fails the test that drives it rather than the whole suite. Reached as
//! [`crate::testing::PluginProcess`].

use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// A plugin process under test. Each call waits for the plugin's answer at most
/// [`timeout`](Self::timeout) ([`DEFAULT_TIMEOUT`](Self::DEFAULT_TIMEOUT) unless set), so a plugin
/// that hangs fails its test, naming the method and the limit, instead of hanging the test suite.
pub struct PluginProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    /// The plugin's stdout, line by line, read on a thread of its own so a call can stop waiting;
    /// it disconnects at end of file.
    lines: Receiver<io::Result<String>>,
    next_id: u64,
    /// All the plugin has written to its stderr, read on a thread of its own.
    stderr: Arc<Mutex<Vec<u8>>>,
    /// The notifications the plugin sent (`$/log`, `$/progress`), oldest first, until taken.
    notifications: Vec<Value>,
    package: String,
    timeout: Duration,
    /// Why the plugin was stopped, once a call ran out of time: every later call fails with it.
    stopped: Option<String>,
}

impl PluginProcess {
    /// How long a call waits for its answer unless [`set_timeout`](Self::set_timeout) says otherwise.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

    /// Starts `executable` (in a cargo test, `env!("CARGO_BIN_EXE_<name>")`) with the cookie set and
    /// hands it `initialize` for `package`. Returns the process and the plugin's whole answer to
    /// `initialize`, as [`call`](Self::call) does: `{"result": …}` (the handshake is its `result`), or
    /// `{"error": …}` when the plugin refused it. Calls wait at most
    /// [`DEFAULT_TIMEOUT`](Self::DEFAULT_TIMEOUT); see [`start_with_timeout`](Self::start_with_timeout).
    pub fn start(
        executable: impl AsRef<Path>,
        package: &str,
    ) -> io::Result<(PluginProcess, Value)> {
        PluginProcess::start_with_timeout(executable, package, PluginProcess::DEFAULT_TIMEOUT)
    }

    /// As [`start`](Self::start), with every call, `initialize` included, waiting at most `limit`.
    pub fn start_with_timeout(
        executable: impl AsRef<Path>,
        package: &str,
        limit: Duration,
    ) -> io::Result<(PluginProcess, Value)> {
        let mut child = Command::new(executable.as_ref())
            .env(agent_env_protocol::version::COOKIE_VAR, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take();
        let Some(stdout) = child.stdout.take() else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::other("the plugin's stdout was not piped"));
        };
        let stderr = Arc::new(Mutex::new(Vec::new()));
        if let Some(pipe) = child.stderr.take() {
            keep_all(pipe, stderr.clone());
        }
        let mut process = PluginProcess {
            child,
            stdin,
            lines: read_lines(BufReader::new(stdout)),
            stderr,
            next_id: 0,
            notifications: Vec::new(),
            package: package.to_string(),
            timeout: limit,
            stopped: None,
        };
        let answer = process.call(
            "initialize",
            json!({"host": {"name": "agent-env", "version": "0.0.0-test"},
                   "protocol": {"min": 1, "max": 1}, "package": package, "settings": {}}),
        )?;
        Ok((process, answer))
    }

    /// Takes the notifications the plugin has sent so far (`$/log`, `$/progress`), whole messages,
    /// oldest first: `{"jsonrpc": "2.0", "method": "$/log", "params": {"level": "info", …}}`. They are
    /// read while a call waits for its answer, so those a step sends are here once its call returned.
    pub fn take_notifications(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.notifications)
    }

    /// What the plugin has written to its stderr so far (its panics, its `eprintln!`s, a stray
    /// `println!`, which the SDK sends there), as text.
    pub fn stderr(&self) -> String {
        let bytes = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// How long each call waits for the plugin's answer.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Sets how long each call from now on waits for the plugin's answer (and
    /// [`shutdown`](Self::shutdown) for it to exit).
    pub fn set_timeout(&mut self, limit: Duration) {
        self.timeout = limit;
    }

    /// Sends `method` with `params` and returns the whole answer (`{"result": …}` or `{"error": …}`).
    ///
    /// A plugin that has not answered within [`timeout`](Self::timeout) is stopped and the call fails
    /// with an error of kind [`io::ErrorKind::TimedOut`] naming the method and the limit; every later
    /// call fails at once.
    pub fn call(&mut self, method: &str, params: Value) -> io::Result<Value> {
        self.still_running()?;
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(&request)?;
        let deadline = Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line?,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(self.stop(format!(
                        "{} did not answer {method} within {:?}",
                        self.package, self.timeout
                    )));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("the plugin closed its stdout before it answered {method}"),
                    ));
                }
            };
            let message: Value = serde_json::from_str(&line).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "the plugin wrote a line that is no JSON ({e}): {}",
                        line.trim_end()
                    ),
                )
            })?;
            match (message.get("id"), message.get("method")) {
                // The plugin asks the host for something: this test host has nothing to give.
                (Some(asked), Some(asked_for)) => {
                    let refusal = json!({"jsonrpc": "2.0", "id": asked, "error": {
                        "code": -32601,
                        "message": format!("the test host answers no {asked_for} request"),
                    }});
                    self.send(&refusal)?;
                }
                (Some(answered), None) if answered == &json!(id) => return Ok(message),
                (None, Some(_)) => self.notifications.push(message),
                // A late answer: not this call's.
                _ => {}
            }
        }
    }

    /// Runs a step: `execute` with `step` (its `type` is the step type) and an empty context.
    pub fn execute(&mut self, step: Value) -> io::Result<Value> {
        let type_name = step.get("type").cloned().unwrap_or(Value::Null);
        self.call(
            "execute",
            json!({"type": type_name, "step": step, "context": {"metadata": {}}}),
        )
    }

    /// Sends `shutdown`, closes the plugin's stdin and waits for it to exit; its exit code. Waiting
    /// for the answer and then for the exit each take at most [`timeout`](Self::timeout): a plugin
    /// still running after that is stopped, and the error says so.
    pub fn shutdown(mut self) -> io::Result<Option<i32>> {
        self.call("shutdown", json!({}))?;
        self.stdin = None;
        let deadline = Instant::now() + self.timeout;
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status.code());
            }
            if Instant::now() >= deadline {
                return Err(self.stop(format!(
                    "{} answered shutdown but did not exit within {:?}",
                    self.package, self.timeout
                )));
            }
            thread::sleep(EXIT_POLL);
        }
    }

    /// Stops the plugin for `why`, which every later call then fails with; the error of the call
    /// that stopped it, which names the limit and how to change it.
    fn stop(&mut self, why: String) -> io::Error {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let stderr = self.stderr();
        let tail = match stderr.char_indices().rev().nth(STDERR_TAIL - 1) {
            Some((at, _)) => &stderr[at..],
            None => &stderr,
        };
        let said = if tail.trim().is_empty() {
            String::new()
        } else {
            format!("; its stderr ends with:\n{}", tail.trim_end())
        };
        let error = io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "{why}, so the test stopped it (PluginProcess::set_timeout changes the limit){said}"
            ),
        );
        self.stopped = Some(why);
        error
    }

    fn still_running(&self) -> io::Result<()> {
        match &self.stopped {
            Some(why) => Err(io::Error::other(format!("the plugin is stopped: {why}"))),
            None => Ok(()),
        }
    }

    fn send(&mut self, message: &Value) -> io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| io::Error::other("the plugin's stdin is closed"))?;
        writeln!(stdin, "{message}")?;
        stdin.flush()
    }
}

/// Appends all `pipe` gives to `kept`, on a thread of its own, until end of file.
fn keep_all(mut pipe: impl io::Read + Send + 'static, kept: Arc<Mutex<Vec<u8>>>) {
    thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        while let Ok(n @ 1..) = pipe.read(&mut chunk) {
            kept.lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend_from_slice(&chunk[..n]);
        }
    });
}

/// How many characters of the plugin's stderr a timed-out call's error ends with.
const STDERR_TAIL: usize = 2000;

/// How often [`PluginProcess::shutdown`] looks whether the plugin has exited.
const EXIT_POLL: Duration = Duration::from_millis(10);

/// Reads `stdout` line by line on a thread of its own, until end of file or a read error (sent as the
/// last item); the thread ends then, or when the receiver is dropped and a line has nowhere to go.
fn read_lines(
    mut stdout: BufReader<impl io::Read + Send + 'static>,
) -> Receiver<io::Result<String>> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || loop {
        let mut line = String::new();
        let item = match stdout.read_line(&mut line) {
            Ok(0) => return,
            Ok(_) => Ok(line),
            Err(e) => Err(e),
        };
        let failed = item.is_err();
        if sender.send(item).is_err() || failed {
            return;
        }
    });
    receiver
}

impl Drop for PluginProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
