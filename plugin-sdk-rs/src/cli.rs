//! CLI commands: `agent-env <command> ...` runs in the plugin with the terminal.

use crate::host::HostHandle;

/// A command added to `agent-env`. Register it with [`crate::Plugin::cli_command`].
///
/// It runs in command mode: stdin, stdout and stderr are the terminal's (print freely), and the
/// protocol runs over fds 3 and 4.
///
/// ```
/// use agent_env_plugin_sdk::{CliCommand, HostHandle, Plugin};
///
/// struct Hello;
///
/// impl CliCommand for Hello {
///     fn name(&self) -> &str { "hello" }                   // agent-env hello ...
///     fn description(&self) -> Option<&str> { Some("Say hello") }
///     fn run(&self, argv: &[String], _host: &HostHandle) -> i32 {
///         println!("hello, {}", argv.first().map(String::as_str).unwrap_or("world"));
///         0                                                  // agent-env's exit code
///     }
/// }
///
/// let plugin = Plugin::new("agentenv-hello", "0.1.0").cli_command(Hello);
/// let answer = plugin.initialize_result(1);
/// assert_eq!(answer.contributions[0].group, "cli_plugins");
/// assert_eq!(answer.contributions[0].methods, ["run"]);
/// ```
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
