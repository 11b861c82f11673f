//! CLI commands: `agent-env <command> ...` runs in the plugin with the terminal. A command gets its
//! arguments and the host ([`CliCommand::run`]), or the whole [`Invocation`] ([`CliCommand::invoke`]):
//! the arguments, the folder agent-env was run in, whether a terminal is attached, the settings.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::context::CallContext;
use crate::host::HostHandle;

/// A command added to `agent-env`. Register it with [`crate::Plugin::cli_command`].
///
/// It runs in command mode: stdin, stdout and stderr are the terminal's (print freely), and the
/// protocol runs over fds 3 and 4. Implement one of [`run`](CliCommand::run), for a command that
/// needs only its arguments and the host, or [`invoke`](CliCommand::invoke), for one that also needs
/// the folder it was run in or whether a terminal is attached:
///
/// ```
/// use agent_env_plugin_sdk::{CliCommand, HostHandle, Invocation, Plugin};
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
/// struct Where;
///
/// impl CliCommand for Where {
///     fn name(&self) -> &str { "where" }
///     fn invoke(&self, invocation: &Invocation<'_>) -> i32 {
///         match invocation.cwd() {
///             Some(folder) => println!("run in {}", folder.display()),
///             None => println!("agent-env did not say where it was run"),
///         }
///         if invocation.is_interactive() {
///             println!("(a terminal is attached: a prompt would be answered)");
///         }
///         0
///     }
/// }
///
/// let plugin = Plugin::new("agentenv-hello", "0.1.0").cli_command(Hello).cli_command(Where);
/// let answer = plugin.initialize_result(1);
/// assert_eq!(answer.contributions[0].group, "cli_plugins");
/// assert_eq!(answer.contributions[0].methods, ["run"]);
/// ```
pub trait CliCommand: Send + Sync + 'static {
    /// The command name (`agent-env <name>`); also its name under `[provides.cli_plugins]`.
    fn name(&self) -> &str;

    /// Runs the command with the arguments after its name; returns agent-env's exit code. Implement
    /// this or [`invoke`](CliCommand::invoke); a command that implements neither fails when run, with
    /// an error that says so.
    fn run(&self, _argv: &[String], _host: &HostHandle) -> i32 {
        crate::defaults::mark();
        1
    }

    /// Runs the command with the whole invocation: its arguments, the folder agent-env was run in,
    /// whether a terminal is attached, the host. The default calls [`run`](CliCommand::run) with the
    /// arguments and the host.
    fn invoke(&self, invocation: &Invocation<'_>) -> i32 {
        self.run(invocation.argv(), invocation.host())
    }

    /// A one-line description for `agent-env --help`.
    fn description(&self) -> Option<&str> {
        None
    }
}

/// One run of a command, `agent-env <command> ARGS…`, as [`CliCommand::invoke`] gets it.
pub struct Invocation<'a> {
    argv: &'a [String],
    cwd: Option<PathBuf>,
    interactive: bool,
    ctx: &'a CallContext<'a>,
}

impl<'a> Invocation<'a> {
    pub(crate) fn new(
        argv: &'a [String],
        cwd: Option<&str>,
        interactive: bool,
        ctx: &'a CallContext<'a>,
    ) -> Self {
        Invocation {
            argv,
            cwd: cwd.filter(|c| !c.is_empty()).map(PathBuf::from),
            interactive,
            ctx,
        }
    }

    /// The arguments after the command's name, verbatim (`--help` included).
    pub fn argv(&self) -> &[String] {
        self.argv
    }

    /// The folder `agent-env` was run in, which relative paths among the arguments are relative to;
    /// `None` when agent-env did not say.
    pub fn cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// Whether a terminal is attached, so a prompt can be answered; false when agent-env runs in a
    /// script or a pipe.
    pub fn is_interactive(&self) -> bool {
        self.interactive
    }

    /// The host, to reach the stores the invocation's config selects while the command runs.
    pub fn host(&self) -> &HostHandle {
        self.ctx.host()
    }

    /// The plugin's `[plugins.<package>]` settings, as sent in `initialize`.
    pub fn settings(&self) -> &Map<String, Value> {
        self.ctx.settings()
    }
}
