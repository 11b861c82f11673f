//! CLI commands: `agent-env <command> ...` runs in the plugin with the terminal.

use crate::host::HostHandle;

/// A command added to `agent-env`. Register it with [`crate::Plugin::cli_command`].
///
/// It runs in command mode: stdin, stdout and stderr are the terminal's (print freely), and the
/// protocol runs over fds 3 and 4.
pub trait CliCommand: Send + Sync + 'static {
    /// The command name (`agent-env <name>`); also its name under `[provides.cli_plugins]`.
    fn name(&self) -> &str;

    /// Runs the command with the arguments after its name; returns agent-env's exit code.
    fn run(&self, argv: &[String], host: &HostHandle) -> i32;

    /// A one-line description for `agent-env --help`.
    fn description(&self) -> Option<&str> {
        None
    }
}
