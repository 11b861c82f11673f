//! The explorer started in a world on an ephemeral port (`--port 0`): the URL is read from the line
//! it prints; dropping it sends SIGINT and waits, killing it only if it does not stop.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::http::{request, Response};
use super::world::World;

/// The explorer binary under test.
pub const EXPLORER: &str = env!("CARGO_BIN_EXE_agent-env-explorer");

pub struct Explorer {
    child: Option<Child>,
    pub port: u16,
    out: Arc<Mutex<Vec<String>>>,
    err: Arc<Mutex<Vec<String>>>,
}

/// How the server stopped.
#[derive(Debug)]
pub struct Stopped {
    pub code: Option<i32>,
    pub stdout: String,
    #[allow(dead_code)]
    pub stderr: String,
}

fn collect(stream: impl std::io::Read + Send + 'static, into: Arc<Mutex<Vec<String>>>) {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if let Ok(mut lines) = into.lock() {
                lines.push(line);
            }
        }
    });
}

impl Explorer {
    /// `agent-env-explorer --port 0` in `world`.
    pub fn start(world: &World) -> Explorer {
        Self::start_program(world, Path::new(EXPLORER), &["--port", "0"])
    }

    /// `agent-env-explorer --port 0` in `world`, with `vars` added to its environment.
    pub fn start_with_env(world: &World, vars: &[(&str, &str)]) -> Explorer {
        let mut command = world.command(Path::new(EXPLORER));
        command.args(["--port", "0"]).envs(vars.iter().copied());
        Self::spawn(command)
    }

    /// `command` (made by `world.command`, then changed as a test needs); waits for the line with its
    /// URL.
    pub fn start_command(command: std::process::Command) -> Explorer {
        Self::spawn(command)
    }

    /// `program ARGS` in `world`; waits for the line with its URL (failing with its output when
    /// it exits first).
    pub fn start_program(world: &World, program: &Path, args: &[&str]) -> Explorer {
        let mut command = world.command(program);
        command.args(args);
        Self::spawn(command)
    }

    /// Starts `command` and waits for the line with its URL (failing with its output when it exits
    /// first).
    fn spawn(mut command: std::process::Command) -> Explorer {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the explorer starts");
        let out = Arc::new(Mutex::new(Vec::new()));
        let err = Arc::new(Mutex::new(Vec::new()));
        collect(child.stdout.take().expect("stdout"), out.clone());
        collect(child.stderr.take().expect("stderr"), err.clone());
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let port = out.lock().unwrap().iter().find_map(|l| {
                let rest = l.split("http://127.0.0.1:").nth(1)?;
                rest.split('/').next()?.parse::<u16>().ok()
            });
            if let Some(port) = port {
                return Explorer {
                    child: Some(child),
                    port,
                    out,
                    err,
                };
            }
            if let Ok(Some(status)) = child.try_wait() {
                std::thread::sleep(Duration::from_millis(100));
                panic!(
                    "the explorer exited ({status}) before serving:\n{}\n{}",
                    out.lock().unwrap().join("\n"),
                    err.lock().unwrap().join("\n")
                );
            }
            assert!(Instant::now() < deadline, "the explorer printed no URL");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `METHOD path` with `headers` and `body`, Host `127.0.0.1:<port>` unless a header sets it.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Response {
        request(self.port, method, path, headers, body)
    }

    pub fn get(&self, path: &str) -> Response {
        self.request("GET", path, &[], b"")
    }

    /// The server's resident memory (`VmRSS`), in KiB.
    pub fn resident_kib(&self) -> u64 {
        let pid = self.child.as_ref().expect("the explorer runs").id();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS in /proc/PID/status")
    }

    pub fn post(&self, path: &str, body: &str) -> Response {
        self.request(
            "POST",
            path,
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        )
    }

    /// Polls `GET path` until `done` holds for its JSON (every 50 ms, up to 2 minutes).
    pub fn poll(&self, path: &str, done: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let r = self.get(path);
            let json = r.json();
            if done(&json) {
                return json;
            }
            assert!(
                Instant::now() < deadline,
                "{path} never got there; last: {json}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Sends SIGINT and waits for the exit.
    pub fn stop(mut self) -> Stopped {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> Stopped {
        let Some(mut child) = self.child.take() else {
            return Stopped {
                code: None,
                stdout: String::new(),
                stderr: String::new(),
            };
        };
        // SAFETY: kill(2) on our own child's pid.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGINT);
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Ok(Some(status)) = child.try_wait() {
                break Some(status);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        std::thread::sleep(Duration::from_millis(100));
        Stopped {
            code: status.and_then(|s| s.code()),
            stdout: self.out.lock().unwrap().join("\n"),
            stderr: self.err.lock().unwrap().join("\n"),
        }
    }
}

impl Drop for Explorer {
    fn drop(&mut self) {
        self.stop_inner();
    }
}
