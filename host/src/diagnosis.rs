//! What `agent-env plugin show` prints about a plugin process: how it was started, what it answered,
//! how long that took, what it wrote, how it ended.

use agent_env_protocol::peer::classify;
use serde::Serialize;

/// A failure, as a diagnosis records it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailureSummary {
    /// The stable code, as [`crate::HostError::code`] gives it.
    pub code: String,
    /// The full message.
    pub message: String,
}

/// The state of one plugin process.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnosis {
    /// The package name from the manifest.
    pub package: String,
    /// The manifest it was started from.
    pub manifest_path: String,
    /// The argv it was (or would have been) started with.
    pub argv: Vec<String>,
    /// The file that was (or would have been) executed.
    pub executable: Option<String>,
    /// Whether it ran in command mode (protocol on fds 3 and 4).
    pub command_mode: bool,
    /// Its process id, once started.
    pub pid: Option<u32>,
    /// The negotiated protocol version.
    pub protocol: Option<u32>,
    /// The version the plugin reported in `initialize`.
    pub plugin_version: Option<String>,
    /// Wall-clock time of the spawn, in milliseconds since the Unix epoch.
    pub spawned_at_ms: Option<u64>,
    /// From asking for the process until it ran.
    pub spawn_us: Option<u64>,
    /// From sending `initialize` until its answer.
    pub initialize_us: Option<u64>,
    /// Calls made to it, `initialize` not counted.
    pub calls: u64,
    /// Non-protocol lines on stdout.
    pub noise_lines: u64,
    /// The first bytes of the first few non-protocol lines.
    pub noise_samples: Vec<String>,
    /// False in command mode, where stderr is the terminal's.
    pub stderr_captured: bool,
    /// Lines it wrote to stderr.
    pub stderr_lines: u64,
    /// Bytes it wrote to stderr.
    pub stderr_bytes: u64,
    /// The last 64 KiB of stderr.
    pub stderr_tail: String,
    /// `running`, `exited`, `signaled`, or `not-started`.
    pub state: String,
    /// Its exit code, if it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// Whether agent-env ended it (shutdown) rather than it ending by itself.
    pub stopped_by_host: bool,
    /// The failure that ended it or its start, if any.
    pub failure: Option<FailureSummary>,
}

/// The warning for a plugin that wrote `count` lines to stdout that are not protocol messages, the
/// first being `first`: what every command that started it says once.
pub fn noise_warning(package: &str, count: u64, first: &str) -> String {
    // A message gone wrong (its id null, no "jsonrpc"...) is no log line: told its defect.
    if let Some(malformed) = classify(first.as_bytes()) {
        return format!(
            "plugin {package} wrote {count} line(s) to stdout that are not protocol messages (first: '{first}', meant as one: {}); \
             `agent-env plugin show {package}` lists them",
            malformed.defect
        );
    }
    format!(
        "plugin {package} wrote {count} line(s) to stdout that are not protocol messages (first: '{first}'); \
         stdout is the protocol's, so write logs to stderr; `agent-env plugin show {package}` lists them"
    )
}

/// The warning for a plugin that exited with `code` (not 0) after agent-env shut it down, its
/// stderr's last line being `last_stderr`: its work was done, so nothing failed, but a plugin should
/// end cleanly once its stdin closes (a crash at exit can lose what it meant to flush).
pub fn shutdown_exit_warning(package: &str, code: i32, last_stderr: Option<&str>) -> String {
    let said = match last_stderr {
        Some(line) => format!("; its stderr's last line: '{line}'"),
        None => "; its stderr was empty".to_string(),
    };
    format!(
        "plugin {package} exited with code {code} after agent-env shut it down; a plugin should exit with code 0 once its stdin closes{said}"
    )
}

impl Diagnosis {
    /// [`shutdown_exit_warning`] for this process, when agent-env shut it down and it then exited
    /// with a code other than 0.
    pub fn exit_after_shutdown(&self) -> Option<String> {
        let code = self.exit_code.filter(|c| *c != 0)?;
        if !self.stopped_by_host {
            return None;
        }
        let last = self
            .stderr_tail
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty());
        Some(shutdown_exit_warning(&self.package, code, last))
    }

    /// [`noise_warning`] for this process, when it wrote noise.
    pub fn noise(&self) -> Option<String> {
        (self.noise_lines > 0).then(|| {
            noise_warning(
                &self.package,
                self.noise_lines,
                self.noise_samples.first().map(String::as_str).unwrap_or(""),
            )
        })
    }

    /// Lines for humans, as `plugin show` prints them.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let mut line = |k: &str, v: String| out.push_str(&format!("  {k:<18}{v}\n"));
        line("package", self.package.clone());
        line("manifest", self.manifest_path.clone());
        line("argv", self.argv.join(" "));
        line(
            "executable",
            self.executable
                .clone()
                .unwrap_or_else(|| "(not found)".into()),
        );
        if self.command_mode {
            line("mode", "command (protocol on fds 3 and 4)".into());
        }
        if let Some(pid) = self.pid {
            line("pid", pid.to_string());
        }
        if let Some(p) = self.protocol {
            line("protocol", p.to_string());
        }
        if let Some(v) = &self.plugin_version {
            line("plugin version", v.clone());
        }
        if let Some(us) = self.spawn_us {
            line("spawn", format!("{:.2} ms", us as f64 / 1000.0));
        }
        if let Some(us) = self.initialize_us {
            line("initialize", format!("{:.2} ms", us as f64 / 1000.0));
        }
        line("calls", self.calls.to_string());
        let ended = match (self.exit_code, self.signal) {
            (Some(code), _) => format!("{} (exit code {code})", self.state),
            (_, Some(sig)) => format!(
                "{} (signal {sig}, {})",
                self.state,
                super::exit::signal_name(sig)
            ),
            _ => self.state.clone(),
        };
        line("state", ended);
        if self.noise_lines > 0 {
            line("stdout noise", {
                let first = self.noise_samples.first().cloned().unwrap_or_default();
                let defect = classify(first.as_bytes())
                    .map(|m| format!(" (meant as a message: {})", m.defect))
                    .unwrap_or_default();
                format!(
                    "{} non-protocol line(s); first: '{first}'{defect}",
                    self.noise_lines
                )
            });
        }
        if self.stderr_captured {
            line(
                "stderr",
                format!("{} line(s), {} bytes", self.stderr_lines, self.stderr_bytes),
            );
        } else {
            line("stderr", "not captured (command mode)".into());
        }
        if let Some(f) = &self.failure {
            line("failure", format!("{}: {}", f.code, f.message));
        }
        let tail: Vec<&str> = self.stderr_tail.lines().collect();
        if !tail.is_empty() {
            out.push_str("  stderr tail:\n");
            for l in &tail[tail.len().saturating_sub(20)..] {
                out.push_str(&format!("    | {l}\n"));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_noise_line_meant_as_a_message_is_told_its_defect_not_to_log_to_stderr() {
        let null_id = r#"{"jsonrpc":"2.0","id":null,"result":{}}"#;
        let warning = noise_warning("agentenv-x", 1, null_id);
        assert!(
            warning.contains(&format!(
                "(first: '{null_id}', meant as one: its id is null"
            )),
            "{warning}"
        );
        assert!(!warning.contains("write logs to stderr"), "{warning}");
        let log_line = noise_warning("agentenv-x", 1, "loading the model");
        assert!(log_line.contains("write logs to stderr"), "{log_line}");
    }
}
