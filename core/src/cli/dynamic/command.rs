//! Running `agent-env <name> …`: the plugin is started in command mode (the terminal's stdin, stdout and
//! stderr are its own; the protocol runs on fds 3 and 4), sent `cli.run` with the arguments after the
//! name, and its `exit_code` becomes agent-env's. While it runs it may call the configured stores.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use agent_env_protocol::methods::{CliRunParams, CliRunResult, CLI_RUN};

use super::services;
use super::tree::PluginCli;
use crate::config::plugins::plugin_settings;
use crate::config::ConfigDocument;
use agent_env_host::{Ended, HostError, PluginHost, SpawnSpec};

/// A command runs as long as the user lets it (Ctrl-C reaches the plugin, which shares the terminal).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30 * 24 * 3600);

/// Runs plugin command `name` with `argv`; returns the exit code.
pub fn run(cli: &PluginCli, name: &str, argv: Vec<String>, verbose: bool) -> i32 {
    let Some(command) = cli.command(name) else {
        return crate::cli::fail(format!("no plugin provides the command '{name}'"));
    };
    let doc = ConfigDocument::shared().clone();
    if let Err(e) = doc.require() {
        return crate::cli::fail(format!("ConfigError: {e}"));
    }
    let config = match crate::host_config::from_env() {
        Ok(c) => c,
        Err(e) => return crate::cli::fail(e),
    };
    let host = PluginHost::new(config, services::for_command(doc.clone()));
    let mut last_error = None;
    for (attempt, &plugin) in command.claimants.iter().enumerate() {
        let manifest = cli.manifest(plugin);
        if let Some(previous) = &last_error {
            eprintln!(
                "Warning: CLI plugin '{name}' from '{}' could not start ({previous}); using '{name}' from '{}'",
                cli.manifest(command.claimants[attempt - 1]).name,
                manifest.name
            );
        }
        let settings = match plugin_settings(&doc, &manifest.name, None) {
            Ok(s) => s,
            Err(e) => return crate::cli::fail(format!("ConfigError: {e}")),
        };
        let spec = SpawnSpec::from_manifest(manifest, settings).in_command_mode();
        let _ = std::io::stdout().flush();
        let process = match host.connect(&spec) {
            Ok(p) => p,
            Err(e) => {
                last_error = Some(e);
                continue;
            }
        };
        let params = CliRunParams {
            command: name.to_string(),
            argv,
            cwd: std::env::current_dir()
                .ok()
                .map(|d| d.display().to_string()),
            interactive: std::io::stdin().is_terminal(),
        };
        let params = match serde_json::to_value(params) {
            Ok(p) => p,
            Err(e) => return crate::cli::fail(e),
        };
        // Ctrl-C goes to the whole foreground group: the plugin decides what it means, and agent-env
        // waits for its answer (the plugin inherited the default handling before this).
        let _interrupts = IgnoreInterrupts::now();
        let answer = process.call_with_timeout(CLI_RUN, params, COMMAND_TIMEOUT);
        return match answer {
            Ok(value) => match serde_json::from_value::<CliRunResult>(value) {
                Ok(result) => result.exit_code,
                Err(e) => crate::cli::fail(format!(
                    "plugin {} answered {CLI_RUN} with a result of the wrong shape ({e}); expected {{\"exit_code\": N}}",
                    manifest.name
                )),
            },
            Err(error) => failed_call(&error, process.ended(), verbose),
        };
    }
    match last_error {
        Some(e) => crate::cli::fail(e),
        None => crate::cli::fail(format!("no plugin provides the command '{name}'")),
    }
}

/// The exit code for a `cli.run` that did not answer: a plugin killed by Ctrl-C exits as a shell
/// reports it (130), quietly; any other end is reported.
fn failed_call(error: &HostError, ended: Option<Ended>, verbose: bool) -> i32 {
    if let (HostError::Crashed { .. }, Some(Ended::Signaled(sig))) = (error, ended) {
        if sig == libc::SIGINT {
            return 128 + sig;
        }
        crate::cli::fail(error);
        return 128 + sig;
    }
    if let (HostError::Crashed { .. }, Some(Ended::Exited(code))) = (error, ended) {
        if verbose {
            crate::cli::fail(error);
        } else {
            eprintln!("Error: {}", first_line(&error.to_string()));
        }
        return if code == 0 { 1 } else { code };
    }
    match error.rpc_error() {
        Some(rpc) => crate::cli::fail(&rpc.message),
        None => crate::cli::fail(error),
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// Ignores SIGINT and SIGQUIT in agent-env until dropped.
struct IgnoreInterrupts {
    previous: [(libc::c_int, libc::sighandler_t); 2],
}

impl IgnoreInterrupts {
    fn now() -> IgnoreInterrupts {
        let mut previous = [
            (libc::SIGINT, libc::SIG_DFL),
            (libc::SIGQUIT, libc::SIG_DFL),
        ];
        for (sig, old) in &mut previous {
            // SAFETY: installing SIG_IGN for a standard signal has no preconditions.
            *old = unsafe { libc::signal(*sig, libc::SIG_IGN) };
        }
        IgnoreInterrupts { previous }
    }
}

impl Drop for IgnoreInterrupts {
    fn drop(&mut self) {
        for (sig, old) in self.previous {
            // SAFETY: restores the handler that was installed before.
            unsafe {
                libc::signal(sig, old);
            }
        }
    }
}
