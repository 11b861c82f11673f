//! Running `agent-env <name> …`: the plugin is started in command mode (the terminal's stdin, stdout and
//! stderr are its own; the protocol runs on fds 3 and 4), sent `cli.run` with the arguments after the
//! name, and its `exit_code` becomes agent-env's. While it runs it may call the configured stores.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use agent_env_protocol::methods::{CliRunParams, CliRunResult, CLI_RUN};

use super::services;
use super::tree::PluginCli;
use crate::cli::{Exit, Failure, Terminal};
use crate::config::plugins::plugin_settings;
use crate::session::Session;
use agent_env_host::{Ended, HostError, SpawnSpec};
use agent_env_protocol::codes::ErrorKind;

/// A command runs as long as the user lets it (Ctrl-C reaches the plugin, which shares the terminal).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30 * 24 * 3600);

/// Runs plugin command `name` with `argv`; its exit code is the command's.
pub fn run(
    cli: &PluginCli,
    name: &str,
    argv: Vec<String>,
    verbose: bool,
    session: &Session,
    term: &Terminal,
) -> Exit {
    let Some(command) = cli.command(name) else {
        return Err(Failure::new(format!(
            "no plugin provides the command '{name}'"
        )));
    };
    let doc = session.config();
    if let Err(e) = doc.require() {
        return Err(Failure::new(format!("ConfigError: {e}")));
    }
    let host = session.plugin_host(services::for_command(session));
    let mut last_error = None;
    for (attempt, &plugin) in command.claimants.iter().enumerate() {
        let manifest = cli.manifest(plugin);
        if let Some(previous) = &last_error {
            term.warn(format!(
                "CLI plugin '{name}' from '{}' could not start ({previous}); using '{name}' from '{}'",
                cli.manifest(command.claimants[attempt - 1]).name,
                manifest.name
            ));
        }
        let settings = plugin_settings(doc, &manifest.name, None)
            .map_err(|e| Failure::new(format!("ConfigError: {e}")))?;
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
            cwd: Some(session.env().cwd().display().to_string()),
            interactive: std::io::stdin().is_terminal(),
        };
        let params = serde_json::to_value(params).map_err(Failure::new)?;
        // Ctrl-C goes to the whole foreground group: the plugin decides what it means, and agent-env
        // waits for its answer (the plugin inherited the default handling before this).
        let _interrupts = IgnoreInterrupts::now();
        let answer = process.call_with_timeout(CLI_RUN, params, COMMAND_TIMEOUT);
        return match answer {
            Ok(value) => match serde_json::from_value::<CliRunResult>(value) {
                Ok(result) => Ok(result.exit_code),
                Err(e) => Err(Failure::new(format!(
                    "plugin {} answered {CLI_RUN} with a result of the wrong shape ({e}); expected {{\"exit_code\": N}}",
                    manifest.name
                ))),
            },
            Err(error) => failed_call(&error, process.ended(), verbose),
        };
    }
    Err(match last_error {
        Some(e) => Failure::new(e),
        None => Failure::new(format!("no plugin provides the command '{name}'")),
    })
}

/// How a `cli.run` that did not answer ends: a plugin killed by Ctrl-C exits as a shell reports it
/// (130), quietly; one that exited with a code of its own (`std::process::exit(2)`, as clap does
/// for a usage error) gives that code, quietly, as a program run from a shell would; any other end
/// is reported.
fn failed_call(error: &HostError, ended: Option<Ended>, verbose: bool) -> Exit {
    if let (HostError::Crashed { .. }, Some(Ended::Exited(code)), false) = (error, ended, verbose) {
        if code != 0 {
            return Ok(code);
        }
    }
    if let (HostError::Crashed { .. }, Some(Ended::Signaled(sig))) = (error, ended) {
        if sig == libc::SIGINT {
            return Ok(128 + sig);
        }
        return Err(Failure::new(error).with_code(128 + sig));
    }
    if let (HostError::Crashed { .. }, Some(Ended::Exited(code))) = (error, ended) {
        let code = if code == 0 { 1 } else { code };
        return Err(if verbose {
            Failure::new(error)
        } else {
            Failure::new(first_line(&error.to_string()))
        }
        .with_code(code));
    }
    Err(match error.rpc_error() {
        // The plugin's own failure (a panic, an exception it did not expect): a bug in it, so the
        // host's sentence, which names the plugin, rather than its words alone.
        Some(rpc) if rpc.kind() == Some(ErrorKind::InternalError) => Failure::new(error),
        // A refusal is the command's own message to its user.
        Some(rpc) => Failure::new(&rpc.message),
        None => Failure::new(error),
    })
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
