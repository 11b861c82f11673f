//! A plugin's built executable driven from a test as agent-env drives it: started with the cookie,
//! handshaken, asked to run steps, shut down. Requests the plugin makes to the host (`host.*`) are
//! answered with an error saying this test host has none, so a step that calls one fails rather than
//! hangs. Reached as [`crate::testing::PluginProcess`].

use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{json, Value};

/// A plugin process under test.
pub struct PluginProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl PluginProcess {
    /// Starts `executable` (in a cargo test, `env!("CARGO_BIN_EXE_<name>")`) with the cookie set and
    /// hands it `initialize` for `package`. Returns the process and the plugin's whole answer to
    /// `initialize`, as [`call`](Self::call) does: `{"result": …}` (the handshake is its `result`), or
    /// `{"error": …}` when the plugin refused it.
    pub fn start(
        executable: impl AsRef<Path>,
        package: &str,
    ) -> io::Result<(PluginProcess, Value)> {
        let mut child = Command::new(executable.as_ref())
            .env(agent_env_protocol::version::COOKIE_VAR, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .map(BufReader::new)
            .ok_or_else(|| io::Error::other("the plugin's stdout was not piped"))?;
        let mut process = PluginProcess {
            child,
            stdin,
            stdout,
            next_id: 0,
        };
        let answer = process.call(
            "initialize",
            json!({"host": {"name": "agent-env", "version": "0.0.0-test"},
                   "protocol": {"min": 1, "max": 1}, "package": package, "settings": {}}),
        )?;
        Ok((process, answer))
    }

    /// Sends `method` with `params` and returns the whole answer (`{"result": …}` or `{"error": …}`).
    pub fn call(&mut self, method: &str, params: Value) -> io::Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(&request)?;
        loop {
            let mut line = String::new();
            if self.stdout.read_line(&mut line)? == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("the plugin closed its stdout before it answered {method}"),
                ));
            }
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
                // A notification ($/log, $/progress) or a late answer: not this call's.
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

    /// Sends `shutdown`, closes the plugin's stdin and waits for it; its exit code.
    pub fn shutdown(mut self) -> io::Result<Option<i32>> {
        self.call("shutdown", json!({}))?;
        self.stdin = None;
        Ok(self.child.wait()?.code())
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

impl Drop for PluginProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
