//! `agent-env up [--port P] [--open]`: the explorer, a web UI and REST API on 127.0.0.1. Its server is
//! the `agent-env-explorer` executable, built and installed beside `agent-env`, so no other command
//! loads a web stack; this command finds it and hands the process over to it (`exec`), so it keeps
//! this terminal, and Ctrl-C reaches it directly.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::cli::{Exit, Failure};
use crate::session::Session;

/// The hidden option `agent-env up` tells the explorer its own build with.
pub const STARTED_BY_BUILD: &str = "--started-by-build";

/// The explorer's executable.
pub const EXPLORER_EXE: &str = "agent-env-explorer";

#[derive(clap::Args)]
pub struct UpArgs {
    /// The port to listen on (else [explorer] port in the config, else 8234); 0 picks a free one.
    #[arg(long, allow_negative_numbers = true, value_parser = port_number)]
    pub port: Option<u16>,
    /// Open the UI in a browser once it is serving.
    #[arg(long)]
    pub open: bool,
    /// Taken for the Python agent-env's command lines: this `up` starts the explorer alone, with no
    /// stack to bootstrap, which is what the flag asked for.
    #[arg(long, hide = true)]
    pub no_bootstrap: bool,
}

/// `--port`'s value: a whole number a port can be, or 0 for a free one.
fn port_number(text: &str) -> Result<u16, String> {
    text.trim().parse().map_err(|_| {
        format!("the port must be a whole number from 1 to 65535 (or 0 to pick a free one), not '{text}'")
    })
}

impl UpArgs {
    /// The explorer's arguments.
    fn to_args(&self) -> Vec<OsString> {
        let mut args = Vec::new();
        if let Some(port) = self.port {
            args.push("--port".into());
            args.push(port.to_string().into());
        }
        if self.open {
            args.push("--open".into());
        }
        args
    }
}

/// Finds the explorer and replaces this process with it; returns only when that fails.
pub fn run(args: UpArgs, session: &Session) -> Exit {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf));
    let explorer = find(beside.as_deref(), session).ok_or_else(|| {
        let place = beside
            .map(|d| format!(" ({})", d.display()))
            .unwrap_or_default();
        Failure::new(format!(
            "agent-env up needs the explorer executable {EXPLORER_EXE} beside agent-env{place} or on PATH, and there is none; build it with `cargo build --release -p agent-env-explorer` (it lands beside agent-env) or install it with `cargo install --path explorer`"
        ))
    })?;
    let mut command = std::process::Command::new(&explorer);
    command.args(args.to_args());
    // The explorer runs tasks with its own copy of the engine: it checks that it is this build.
    command.arg(format!("{STARTED_BY_BUILD}={}", crate::BUILD));
    use std::os::unix::process::CommandExt;
    let error = command.exec();
    Err(Failure::new(format!(
        "can't start the explorer {}: {error}",
        explorer.display()
    )))
}

/// `agent-env-explorer` in `beside` (agent-env's own folder), else on the session's `PATH`.
fn find(beside: Option<&Path>, session: &Session) -> Option<PathBuf> {
    if let Some(candidate) = beside.map(|d| d.join(EXPLORER_EXE)) {
        if candidate.is_file() {
            return Some(candidate);
        }
    }
    let path = session.env().var_os("PATH")?;
    which::which_in(EXPLORER_EXE, Some(path), session.env().cwd()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_flags_given_are_passed_on() {
        let args = UpArgs {
            port: Some(0),
            open: true,
            no_bootstrap: true,
        };
        assert_eq!(args.to_args(), vec!["--port", "0", "--open"]);
        let none = UpArgs {
            port: None,
            open: false,
            no_bootstrap: false,
        };
        assert!(none.to_args().is_empty());
    }
}
